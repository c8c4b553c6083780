"""What a pod needs of a node besides its claims: node resources and DRA-served extended resources.

Why one place: first fit, CP-SAT and the checker must agree on which node resources a pod
takes on which node and which extended resources DRA serves there (`problem.resources`,
`problem.extended`). A pod's needs depend on the node: on a node that advertises
`example.com/gpu` the request is a node resource (device plugin); on a node that does not,
and where a DeviceClass maps it, it is a special ResourceClaim allocated with the pod's other
claims. `Variant` is the pod's form on one node; `NodeBook` holds the nodes' free amounts for
one plan and updates them as pods are placed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..api.models import PodExtendedResourceClaimStatus as ExtendedStatus
from ..gates import FeatureGates
from .extended import class_mapping, dra_served, special_claim
from .nodealloc import Footprint, FootprintBook
from .resources import Amounts, allocatable, holds_node, node_free, pod_demand, shortfalls, take


@dataclass(frozen=True)
class Needs:
    """One pod's node-resource demand (with its pod slot and extended resources); empty for a
    pod already bound to its node (its requests already count there)."""

    pod: Pod
    demand: Mapping[str, int]

    @classmethod
    def of(cls, pod: Pod, dra: Footprint | None = None) -> Needs:
        """`dra`: what the pod's devices add to its node resources (KEP-5517)."""
        return cls(pod, {} if holds_node(pod) else pod_demand(pod, dra))


@dataclass(frozen=True)
class Variant:
    """A unit (one or more pods) as it is placed on a particular node."""

    demand: Mapping[str, int]
    """Node resources taken, DRA-served extended resources left out."""
    claims: tuple[ResourceClaim, ...] = ()
    """The special extended-resource claims (one per pod that has DRA-served resources)."""
    statuses: Mapping[str, ExtendedStatus] = field(default_factory=dict)
    """Pod `namespace/name` -> its status.extendedResourceClaimStatus."""

    @property
    def key(self) -> tuple[object, ...]:
        """Equal for the same pods placed the same way (same demand, same special claims)."""
        return (tuple(sorted(self.demand.items())), tuple(id(c) for c in self.claims))


class NodeBook:
    """The candidate nodes' free node resources during one plan (bound pods already taken)."""

    def __init__(self, cluster: Cluster, nodes: Sequence[str | None], gates: FeatureGates) -> None:
        bound: dict[str, list[Pod]] = {}
        for pod in cluster.pods.values():
            if holds_node(pod):
                bound.setdefault(pod.spec.node_name or "", []).append(pod)
        self.allocatable: dict[str | None, Amounts | None] = {}
        self.free: dict[str | None, Amounts | None] = {}
        dra = FootprintBook(cluster, gates)
        for n in nodes:
            obj = cluster.nodes.get(n) if n is not None else None
            self.allocatable[n] = allocatable(obj)
            self.free[n] = node_free(obj, bound.get(n or "", []), dra.bound if dra.on else None)
        self.mapping = class_mapping(cluster.classes) if gates.DRAExtendedResource else {}
        self._variants: dict[tuple[int, str | None], tuple[Sequence[Needs], Variant]] = {}
        self._special: dict[tuple[str, tuple[str, ...]], tuple[ResourceClaim, ExtendedStatus]] = {}
        self.warnings = [
            f"node {n} has neither status.allocatable nor status.capacity: its cpu, memory and pod "
            "count are not limited"
            for n in nodes
            if n is not None and n in cluster.nodes and self.allocatable[n] is None
        ]

    def fresh(self) -> NodeBook:
        """A copy whose free amounts change independently (the caches are shared)."""
        out = copy.copy(self)
        out.free = {n: dict(f) if f is not None else None for n, f in self.free.items()}
        return out

    def variant(self, needs: Sequence[Needs], node: str | None) -> Variant:
        """The pods `needs` as placed together on `node`. Only a pod asking for an extended
        resource a DeviceClass maps differs by node, so the others are cached once per pods,
        not once per (pods, node)."""
        per_node = any(r in self.mapping for n in needs for r in n.demand)
        key = (id(needs), node if per_node else None)
        hit = self._variants.get(key)
        if hit is not None:
            return hit[1]
        demand: Amounts = {}
        claims: list[ResourceClaim] = []
        statuses: dict[str, ExtendedStatus] = {}
        alloc = self.allocatable.get(node)
        for n in needs:
            served = dra_served(n.demand, self.mapping, alloc) if per_node else ()
            for k, v in n.demand.items():
                if k not in served:
                    demand[k] = demand.get(k, 0) + v
            if served:
                claim, status = self._special_claim(n.pod, served)
                claims.append(claim)
                statuses[n.pod.namespaced_name] = status
        got = Variant(demand, tuple(claims), statuses)
        self._variants[key] = (needs, got)  # holding `needs` keeps its id unique
        return got

    def _special_claim(self, pod: Pod, served: tuple[str, ...]) -> tuple[ResourceClaim, ExtendedStatus]:
        key = (pod.namespaced_name, served)
        if key not in self._special:
            self._special[key] = special_claim(pod, served, self.mapping)
        return self._special[key]

    def refusal(self, variant: Variant, node: str | None) -> tuple[str, ...] | None:
        """Why `variant` does not fit `node`'s free resources now, as the resources it is short
        of (`resources.shortfalls`; a reason's fact, worded by `reasons.words.insufficient`),
        or None: it fits."""
        short = shortfalls(variant.demand, self.free.get(node))
        return tuple(short) if short else None

    def take(self, variant: Variant, node: str | None) -> None:
        take(self.free.get(node), variant.demand)

    def give(self, demand: Mapping[str, int], node: str | None) -> None:
        """Undo `take` of `demand` on `node`: a placed pod removed (`dra_solver.replan`)."""
        free = self.free.get(node)
        if free is None:
            return
        for k, v in demand.items():
            if k in free:  # `take` recorded every resource it counts (core ones it has)
                free[k] += v


def demand_total(needs: Iterable[Needs]) -> Amounts:
    out: Amounts = {}
    for n in needs:
        for k, v in n.demand.items():
            out[k] = out.get(k, 0) + v
    return out


__all__ = ["Needs", "NodeBook", "Variant", "demand_total"]
