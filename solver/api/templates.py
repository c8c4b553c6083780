"""Node templates for what-if plans: a Node and its ResourceSlices, copied under new names.

Why copies: "how many nodes of this type must we add?" is answered by planning over the
existing nodes plus candidate copies of each template, then keeping the copies the plan
uses (`solver.planners.whatif`). A copy must look to every layer exactly like a real node of that
type, so it is made of ordinary objects: the template Node renamed `<name>-<i>` (its
`kubernetes.io/hostname` label too, when it names the node) and each of its slices with
`spec.nodeName` and the node-local pool renamed to match — the template node's name replaced
by the copy's name in the pool and slice names, or `-<i>` appended when they do not contain it
(pool names must stay unique per driver across nodes). Such copies can be fed back in as
input (the plan's `-o yaml` output carries them).

A template's cost is its Node's annotation `dra-solver.io/cost` (a non-negative integer,
default 1): the planner minimises the total cost of the copies it adds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from .cluster import Cluster
from .models import Node, ResourceSlice

COST_ANNOTATION = "dra-solver.io/cost"
HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True)
class NodeTemplate:
    """One Node and the ResourceSlices of that node; copies are what a plan may add."""

    node: Node
    slices: tuple[ResourceSlice, ...]
    cost: int

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @classmethod
    def of(cls, node: Node, slices: Iterable[ResourceSlice]) -> NodeTemplate:
        """Check the template: every slice on the template node (node-local), and the cost."""
        name = node.metadata.name
        if not name:
            raise InputError("a node template's Node has no name", obj="Node", field="metadata.name")
        kept = tuple(slices)
        for s in kept:
            if s.spec.node_name != name:
                raise InputError(
                    f"a node template's slices must be node-local on the template node {name}, "
                    f"got nodeName {s.spec.node_name!r}",
                    obj=s.ref,
                    field="spec.nodeName",
                )
        return cls(node, kept, _cost(node))

    @classmethod
    def from_cluster(cls, cluster: Cluster, source: str = "") -> NodeTemplate:
        """The template a loaded file holds: exactly one Node, its slices, nothing else."""
        if len(cluster.nodes) != 1:
            raise InputError(
                f"a node template holds exactly one Node, found {len(cluster.nodes)}", source=source
            )
        others = [
            kind
            for kind, objs in (
                ("DeviceClass", cluster.classes),
                ("ResourceClaim", cluster.claims),
                ("ResourceClaimTemplate", cluster.templates),
                ("Pod", cluster.pods),
                ("DeviceTaintRule", cluster.taint_rules),
                ("PriorityClass", cluster.priority_classes),
            )
            if objs
        ]
        if others:
            raise InputError(
                f"a node template holds one Node and its ResourceSlices only, found {', '.join(others)}",
                source=source,
            )
        try:
            return cls.of(next(iter(cluster.nodes.values())), cluster.slices)
        except InputError as exc:
            raise InputError(exc.reason, obj=exc.obj, field=exc.field, source=source) from None

    @classmethod
    def from_path(cls, path: str | Path) -> NodeTemplate:
        return cls.from_cluster(Cluster.from_paths([path]), source=str(path))

    def copy_name(self, i: int) -> str:
        return f"{self.name}-{i}"

    def copy(self, i: int) -> tuple[Node, list[ResourceSlice]]:
        """Copy number `i` (from 1): the Node and its slices under the copy's name."""
        new = self.copy_name(i)
        node = self.node.dump()
        meta = dict(node.get("metadata") or {})
        meta["name"] = new
        labels = dict(meta.get("labels") or {})
        if labels.get(HOSTNAME_LABEL) == self.name:
            labels[HOSTNAME_LABEL] = new
            meta["labels"] = labels
        node["metadata"] = meta
        slices: list[dict[str, Any]] = []
        for s in self.slices:
            obj = s.dump()
            smeta = dict(obj.get("metadata") or {})
            smeta["name"] = self._renamed(smeta.get("name", ""), new, i)
            smeta.pop("uid", None)
            obj["metadata"] = smeta
            spec = dict(obj["spec"])
            spec["nodeName"] = new
            pool = dict(spec["pool"])
            pool["name"] = self._renamed(pool["name"], new, i)
            spec["pool"] = pool
            obj["spec"] = spec
            slices.append(obj)
        loaded = Cluster.from_objects([node, *slices])
        return loaded.nodes[new], list(loaded.slices)

    def _renamed(self, text: str, new: str, i: int) -> str:
        """`text` with the template node's name (as a whole dash/dot-separated part) replaced
        by the copy's, else with `-<i>` appended."""
        pattern = rf"(?<![A-Za-z0-9]){re.escape(self.name)}(?![A-Za-z0-9])"
        if re.search(pattern, text):
            return re.sub(pattern, new, text)
        return f"{text}-{i}"


def _cost(node: Node) -> int:
    raw = node.metadata.annotations.get(COST_ANNOTATION)
    if raw is None:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0 or str(value) != raw.strip():
        raise InputError(
            f"node template cost must be a non-negative integer, got {raw!r}",
            obj=node.ref,
            field=f"metadata.annotations[{COST_ANNOTATION}]",
        )
    return value


def with_copies(
    cluster: Cluster, templates: Sequence[NodeTemplate], counts: Sequence[int]
) -> tuple[Cluster, list[list[str]]]:
    """`cluster` plus `counts[t]` copies of each template (a new Cluster; the input is not
    modified), and the copies' names per template. A copy whose Node, slice or pool name the
    cluster already has is an error naming it."""
    names = [t.name for t in templates]
    if len(set(names)) != len(names):
        raise InputError(f"node templates must have distinct Node names, got {', '.join(names)}")
    out = replace(
        cluster, slices=list(cluster.slices), nodes=dict(cluster.nodes), warnings=list(cluster.warnings)
    )
    pools = {(s.spec.driver, s.spec.pool.name) for s in cluster.slices}
    slice_names = {s.metadata.name for s in cluster.slices}
    copies: list[list[str]] = []
    for t, n in zip(templates, counts, strict=True):
        mine = []
        for i in range(1, n + 1):
            node, slices = t.copy(i)
            if node.metadata.name in out.nodes:
                raise InputError(
                    f"node template {t.name}: copy {node.metadata.name} is already a node of the input",
                    obj=node.ref,
                    field="metadata.name",
                )
            for s in slices:
                key = (s.spec.driver, s.spec.pool.name)
                if key in pools or s.metadata.name in slice_names:
                    raise InputError(
                        f"node template {t.name}: copy's pool {key[0]}/{key[1]} or slice "
                        f"{s.metadata.name} is already in the input",
                        obj=s.ref,
                        field="spec.pool.name",
                    )
            pools |= {(s.spec.driver, s.spec.pool.name) for s in slices}
            slice_names |= {s.metadata.name for s in slices}
            out.nodes[node.metadata.name] = node
            out.slices.extend(slices)
            mine.append(node.metadata.name)
        copies.append(mine)
    return out, copies


__all__ = ["COST_ANNOTATION", "NodeTemplate", "with_copies"]
