"""The loaded objects of one cluster snapshot, indexed by kind, namespace and name.

Why: allocation needs fast lookups (class by name, claim by namespace/name) and the
input order (slices, claims), and callers must be able to hand in objects from files,
from dicts or as models. The Cluster never mutates the objects it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

from ..errors import InputError, ValidationErrors
from .identity import Identity, dedupe, identity
from .load import Reader, Unread, load_paths, load_text
from .models import (
    DeviceClass,
    DeviceTaintRule,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    TypeMeta,
    Workload,
)
from .strict import did_you_mean

T = TypeVar("T")


@dataclass(frozen=True)
class HeldPod:
    """A pod of the input that no plan places, and why (`planning.triage`): a problem in it or
    in an object it depends on (its claim, template, class, PodGroup…), its scheduling gates,
    or bound by `spec.nodeName` with claims never allocated. Plans list it as not placed with
    `reason`, as the scheduler leaves such a pod pending."""

    pod: Pod | None
    """The Pod; None for an unallocated claim of an input without Pods (`held_claims`: every
    claim is then a pod of its own, `planning.resolve`)."""
    reason: str
    stub: bool = False
    """The pod could not be read (`Cluster.unread`): `pod` carries its name only, and is never
    written to an output as if it were the input's."""
    claim: ResourceClaim | None = None

    @property
    def name(self) -> str:
        """`namespace/name` of the pod (or of the claim), as plans name it."""
        if self.pod is not None:
            return self.pod.namespaced_name
        assert self.claim is not None
        return self.claim.namespaced_name


@dataclass
class Cluster:
    """Objects by kind, in input order; each (kind, namespace, name) once (see `add`)."""

    slices: list[ResourceSlice] = field(default_factory=list)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    claims: dict[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    templates: dict[tuple[str, str], ResourceClaimTemplate] = field(default_factory=dict)
    pods: dict[tuple[str, str], Pod] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    taint_rules: dict[str, DeviceTaintRule] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    pod_groups: dict[tuple[str, str], PodGroup] = field(default_factory=dict)
    workloads: dict[tuple[str, str], Workload] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    """Namespace objects, when the input has them (the admin-access rule reads their labels)."""
    pdbs: dict[tuple[str, str], PodDisruptionBudget] = field(default_factory=dict)
    """policy/v1 PodDisruptionBudgets (`plan --preempt` counts their violations)."""
    warnings: list[str] = field(default_factory=list)
    held: dict[tuple[str, str], HeldPod] = field(default_factory=dict)
    """Pods no plan places, with the reason (`planning.triage`); a pending one is not among
    `pods`, a bound one (nodeName, claims never allocated) is, for the node resources it holds."""
    held_claims: dict[tuple[str, str], HeldPod] = field(default_factory=dict)
    """Unallocated claims `planning.triage` left out for a problem: where the input has no Pods
    (each claim a pod of its own) a plan lists them as not placed, with the problem."""
    unread: list[Unread] = field(default_factory=list)
    """Objects of the input that could not be read (lenient loading, `load.load_lenient`);
    `planning.triage` holds the pods that depend on them."""
    left_out: list[TypeMeta] = field(default_factory=list)
    """Objects `planning.triage` took out of the plan for a problem (a pending pod it holds is in
    `held` instead): `--output-mode full` writes them back as they were
    (`output.objects.cluster_after`)."""
    triaged: bool = False
    """Whether `held` was worked out (`planning.triage`); plans triage a cluster that was not."""
    _identities: dict[Identity, TypeMeta] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_objects(cls, objects: Iterable[TypeMeta | dict[str, Any]]) -> Self:
        """Models as given, dicts read like file contents (converted to v1, workloads
        expanded, generated names). Every problem is raised at once (ValidationErrors);
        the source of an object in messages is its position, `object #3`."""
        reader = Reader()
        pairs: list[tuple[TypeMeta, str]] = []
        for i, obj in enumerate(objects):
            source = f"object #{i}"
            if isinstance(obj, dict):
                pairs.extend((parsed, source) for parsed in reader.read(obj))
            else:
                pairs.append((obj, source))
        pairs.extend((parsed, source) for parsed, source, _ in reader.finish())  # a dump's workloads
        kept, warnings, errors = dedupe(pairs)
        if reader.errors or errors:
            raise ValidationErrors(reader.errors + errors)
        cluster = cls()
        cluster.warnings.extend(reader.warnings + warnings)
        for obj, _ in kept:
            cluster.add(obj)
        return cluster

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> Self:
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
        """Add one object. The same (kind, namespace, name) twice is an error when the two
        differ and ignored when they are identical (never a silent replacement)."""
        key = identity(obj)
        if key[2]:
            earlier = self._identities.get(key)
            if earlier is not None:
                if earlier.dump() == obj.dump():
                    return
                raise InputError("defined twice with different content", obj=obj.ref)
            self._identities[key] = obj
        self._file(obj)

    def _file(self, obj: TypeMeta) -> None:
        """Put `obj` in the dict (or list) of its kind, after the identity check of `add`: one
        case per kind, so that a new kind is one line here."""
        ns = obj.metadata.ns
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
            case DeviceTaintRule():
                self.taint_rules[obj.metadata.name] = obj
            case PriorityClass():
                self.priority_classes[obj.metadata.name] = obj
            case PodGroup():
                self.pod_groups[(ns, obj.metadata.name)] = obj
            case Workload():
                self.workloads[(ns, obj.metadata.name)] = obj
            case Namespace():
                self.namespaces[obj.metadata.name] = obj
            case PodDisruptionBudget():
                self.pdbs[(ns, obj.metadata.name)] = obj
            case _:
                raise InputError(f"unsupported kind {obj.kind}", obj=obj.ref)

    def claim(self, name: str, namespace: str | None = None) -> ResourceClaim:
        """A claim by `name`, `namespace/name`, or name plus namespace."""
        return _find(self.claims, "ResourceClaim", name, namespace)

    def pod(self, name: str, namespace: str | None = None) -> Pod:
        """A pod by `name`, `namespace/name`, or name plus namespace; a held pod too."""
        try:
            return _find(self.pods, "Pod", name, namespace)
        except InputError:
            held = {k: h.pod for k, h in self.held.items() if h.pod is not None}
            if not held:
                raise
            return _find({**held, **self.pods}, "Pod", name, namespace)

    def held_claim(self, name: str) -> HeldPod | None:
        """The claim `name` (or `namespace/name`) left out for a problem, if it is one."""
        ns, _, short = name.rpartition("/")
        return self.held_claims.get((ns or "default", short))

    def objects(self) -> list[TypeMeta]:
        """Every object the cluster holds, kind by kind: DeviceClasses, ResourceSlices,
        ResourceClaims, templates, Pods, Nodes, DeviceTaintRules, PriorityClasses, PodGroups,
        Workloads, Namespaces, PodDisruptionBudgets (the order validation reports in)."""
        return [
            *self.classes.values(),
            *self.slices,
            *self.claims.values(),
            *self.templates.values(),
            *self.pods.values(),
            *self.nodes.values(),
            *self.taint_rules.values(),
            *self.priority_classes.values(),
            *self.pod_groups.values(),
            *self.workloads.values(),
            *self.namespaces.values(),
            *self.pdbs.values(),
        ]

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
            "taint_rules": len(self.taint_rules),
            "priority_classes": len(self.priority_classes),
            "pod_groups": len(self.pod_groups),
            "workloads": len(self.workloads),
            "namespaces": len(self.namespaces),
        }


def _find(index: dict[tuple[str, str], T], kind: str, name: str, namespace: str | None) -> T:
    """One namespaced object by name; without a namespace the name must be unique."""
    if namespace is None and "/" in name:
        namespace, name = name.split("/", 1)
    if namespace is not None:
        found = index.get((namespace, name))
        if found is None:
            hint = did_you_mean(f"{namespace}/{name}", [f"{ns}/{n}" for ns, n in index])
            raise InputError(f"{kind} {namespace}/{name} not found in the input{hint}")
        return found
    matches = [obj for (_, n), obj in index.items() if n == name]
    if not matches:
        raise InputError(f"{kind} {name} not found in the input{did_you_mean(name, [n for _, n in index])}")
    if len(matches) > 1:
        raise InputError(f"{kind} name {name} is ambiguous; use namespace/name")
    return matches[0]
