"""The loaded objects of one cluster snapshot, indexed by kind, namespace and name.

Why: allocation needs fast lookups (class by name, claim by namespace/name) and the
input order (slices, claims), and callers must be able to hand in objects from files,
from dicts or as models. The Cluster never mutates the objects it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dra_solver.api.load import load_paths, load_text, parse_object
from dra_solver.api.models import (
    DeviceClass,
    Node,
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    TypeMeta,
)
from dra_solver.errors import InputError

T = TypeVar("T")


@dataclass
class Cluster:
    """Objects by kind, in input order; later duplicates of the same name replace earlier ones."""

    slices: list[ResourceSlice] = field(default_factory=list)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    claims: dict[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    templates: dict[tuple[str, str], ResourceClaimTemplate] = field(default_factory=dict)
    pods: dict[tuple[str, str], Pod] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_objects(cls, objects: Iterable[TypeMeta | dict[str, Any]]) -> Cluster:
        cluster = cls()
        for obj in objects:
            if isinstance(obj, dict):
                parsed = parse_object(obj)
                if parsed is None:
                    cluster.warnings.append(
                        f"skipping object of kind {obj.get('kind')!r}: not used by dra-solver"
                    )
                    continue
                obj = parsed
            cluster.add(obj)
        return cluster

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> Cluster:
        objects, warnings = load_paths(paths)
        cluster = cls.from_objects(objects)
        cluster.warnings.extend(warnings)
        return cluster

    @classmethod
    def from_yaml(cls, text: str) -> Cluster:
        objects, warnings = load_text(text)
        cluster = cls.from_objects(objects)
        cluster.warnings.extend(warnings)
        return cluster

    def add(self, obj: TypeMeta) -> None:
        ns = obj.metadata.namespace or "default"
        match obj:
            case ResourceSlice():
                self.slices.append(obj)
            case DeviceClass():
                self.classes[obj.metadata.name] = obj
            case ResourceClaim():
                self.claims[(ns, obj.metadata.name)] = obj
            case ResourceClaimTemplate():
                self.templates[(ns, obj.metadata.name)] = obj
            case Pod():
                self.pods[(ns, obj.metadata.name)] = obj
            case Node():
                self.nodes[obj.metadata.name] = obj
            case _:
                raise InputError(f"unsupported kind {obj.kind}", obj=obj.ref)

    def claim(self, name: str, namespace: str | None = None) -> ResourceClaim:
        """A claim by `name`, `namespace/name`, or name plus namespace."""
        return _find(self.claims, "ResourceClaim", name, namespace)

    def pod(self, name: str, namespace: str | None = None) -> Pod:
        """A pod by `name`, `namespace/name`, or name plus namespace."""
        return _find(self.pods, "Pod", name, namespace)

    def unallocated_claims(self) -> list[ResourceClaim]:
        return [c for c in self.claims.values() if c.status is None or c.status.allocation is None]

    def allocated_claims(self) -> list[ResourceClaim]:
        return [c for c in self.claims.values() if c.status is not None and c.status.allocation is not None]

    def counts(self) -> dict[str, int]:
        return {
            "slices": len(self.slices),
            "devices": sum(len(s.spec.devices) for s in self.slices),
            "classes": len(self.classes),
            "claims": len(self.claims),
            "templates": len(self.templates),
            "pods": len(self.pods),
            "nodes": len(self.nodes),
        }


def _find(index: dict[tuple[str, str], T], kind: str, name: str, namespace: str | None) -> T:
    """One namespaced object by name; without a namespace the name must be unique."""
    if namespace is None and "/" in name:
        namespace, name = name.split("/", 1)
    if namespace is not None:
        found = index.get((namespace, name))
        if found is None:
            raise InputError(f"{kind} {namespace}/{name} not found in the input")
        return found
    matches = [obj for (_, n), obj in index.items() if n == name]
    if not matches:
        raise InputError(f"{kind} {name} not found in the input")
    if len(matches) > 1:
        raise InputError(f"{kind} name {name} is ambiguous; use namespace/name")
    return matches[0]
