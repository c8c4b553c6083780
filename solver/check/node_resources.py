"""Node resources: the pods on a node fit in its allocatable cpu, memory, pod slots and
extended resources (the scheduler's NodeResourcesFit), read again from the Pod and Node objects.

Why a second reading: `solver.problem.resources` decides where pods may go; this module checks
the finished plan without it. Per node that reports `status.allocatable`, it sums, per
resource, the requests of the pods bound to the node (not Succeeded/Failed) and of the pods the
plan puts there, and compares with allocatable. A pod's request for a resource is
max(app containers + sidecars, max over the other init containers of their own request + the
sidecars started before them), pod-level cpu/memory where set, plus overhead; a container's
request defaults to its limit. Resources compared: cpu (millicores), memory,
ephemeral-storage, hugepages-*, extended resources, and the pod count. Not compared: a core
resource the node does not report (unknown), and the extended resources a pod got through
its DRA extended-resource claim (`served`); an extended resource the node does not report is
0 there.

KEP-5517 (gate DRANodeAllocatableResources): a pod's claims add, per result, what the allocated
device's `nodeAllocatableResources` say — a mapping's deviceMultiplier (or consumed capacity x
capacityMultiplier), an overhead's perPod, and its perContainer to each container that
references the claim (so an init container's share counts only in its own step). A bound pod's
amounts are read from its `status.nodeAllocatableResourceClaimStatuses` when it has them (what
the scheduler wrote), else from its allocated claims. A claim with a mapped device used by two
pods on the plan is a violation (`node-resources`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from ..api.cluster import Cluster
from ..api.models import Container, Device, Pod, ResourceClaim
from ..api.quantity import Quantity
from ..gates import FeatureGates
from .pods import claim_uses
from .violations import Violation

CORE = {"cpu", "memory", "ephemeral-storage", "pods"}


def _units(name: str, q: Quantity) -> int:
    return q.milli_value() if name == "cpu" else q.value()


def _own(c: Container) -> dict[str, int]:
    if c.resources is None:
        return {}
    return {k: _units(k, q) for k, q in {**c.resources.limits, **c.resources.requests}.items()}


def _compared(name: str) -> bool:
    if name in CORE or name.startswith(("hugepages-", "deviceclass.resource.kubernetes.io/")):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _plus(a: dict[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def requests_of(
    pod: Pod, dra: tuple[dict[str, int], dict[str, dict[str, int]]] | None = None
) -> dict[str, int]:
    """The pod's request per compared resource, pod slot included; `dra`: (for the whole pod,
    per container) what its devices add (KEP-5517)."""
    fixed, per = dra if dra is not None else ({}, {})
    apps = [_plus(_own(c), per.get(c.name, {})) for c in pod.spec.containers]
    inits = [
        (c.restart_policy == "Always", _plus(_own(c), per.get(c.name, {}))) for c in pod.spec.init_containers
    ]
    known = {c.name for c in (*pod.spec.containers, *pod.spec.init_containers)}
    for name, more in per.items():
        if name not in known:
            fixed = _plus(fixed, more)
    names = {k for a in apps for k in a} | {k for _, i in inits for k in i} | set(fixed)
    out: dict[str, int] = {}
    for name in names:
        sidecars = peak = 0
        for always, own in inits:
            if always:
                sidecars += own.get(name, 0)
                peak = max(peak, sidecars)
            else:
                peak = max(peak, own.get(name, 0) + sidecars)
        out[name] = max(sum(a.get(name, 0) for a in apps) + sidecars, peak)
    out = _plus(out, fixed)
    level = pod.spec.resources
    if level is not None:
        for name, q in {**level.limits, **level.requests}.items():
            if name in ("cpu", "memory"):
                out[name] = _units(name, q)
    for name, q in pod.spec.overhead.items():
        out[name] = out.get(name, 0) + _units(name, q)
    out = {k: v for k, v in out.items() if v and _compared(k)}
    out["pods"] = 1
    return out


def _served_by_dra(pod: Pod) -> frozenset[str]:
    """The extended resources a bound pod's special claim serves (its
    status.extendedResourceClaimStatus): they come from devices, not from the node's
    allocatable, as for a pod this plan places (a plan's output fed back as input)."""
    status = pod.status.extended_resource_claim_status if pod.status else None
    return frozenset(m.resource_name for m in status.request_mappings) if status else frozenset()


def _units_of(name: str, x: Fraction) -> int:
    v = x * 1000 if name == "cpu" else x
    return -((-v.numerator) // v.denominator)


def _q(q: Quantity | None) -> Fraction:
    return q.as_fraction() if q is not None else Fraction(0)


def _devices(cluster: Cluster) -> dict[tuple[str, str, str], Device]:
    """Devices of the highest generation of each pool, by (driver, pool, name)."""
    top: dict[tuple[str, str], int] = {}
    for s in cluster.slices:
        k = (s.spec.driver, s.spec.pool.name)
        top[k] = max(top.get(k, s.spec.pool.generation), s.spec.pool.generation)
    return {
        (s.spec.driver, s.spec.pool.name, d.name): d
        for s in cluster.slices
        if s.spec.pool.generation == top[(s.spec.driver, s.spec.pool.name)]
        for d in s.spec.devices
    }


def _claim_amounts(
    claim: ResourceClaim, devices: Mapping[tuple[str, str, str], Device]
) -> tuple[dict[str, int], dict[str, int], bool]:
    """(per pod, per referencing container, has a mapping) of one allocated claim."""
    fixed: dict[str, int] = {}
    per: dict[str, int] = {}
    mapped = False
    alloc = claim.status.allocation if claim.status is not None else None
    for r in alloc.devices.results if alloc is not None and alloc.devices is not None else []:
        d = devices.get((r.driver, r.pool, r.device))
        for name, res in sorted((d.node_allocatable_resources if d is not None else {}).items()):
            m, o = res.mapping, res.overhead
            if m is not None:
                mapped = True
                if m.device_multiplier is not None:
                    fixed[name] = fixed.get(name, 0) + _units_of(name, _q(m.device_multiplier))
                elif (
                    m.capacity_key is not None and (r.consumed_capacity or {}).get(m.capacity_key) is not None
                ):
                    got = _q((r.consumed_capacity or {})[m.capacity_key]) * _q(m.capacity_multiplier)
                    fixed[name] = fixed.get(name, 0) + _units_of(name, got)
            if o is not None:
                fixed[name] = fixed.get(name, 0) + _units_of(name, _q(o.per_pod))
                per[name] = per.get(name, 0) + _units_of(name, _q(o.per_container))
    return fixed, per, mapped


def _from_status(pod: Pod) -> tuple[dict[str, int], dict[str, dict[str, int]]] | None:
    statuses = pod.status.node_allocatable_resource_claim_statuses if pod.status else []
    if not statuses:
        return None
    fixed: dict[str, int] = {}
    per: dict[str, dict[str, int]] = {}
    for st in statuses:
        for m in st.mapping:
            fixed[m.name] = fixed.get(m.name, 0) + _units_of(m.name, _q(m.quantity))
        for o in st.overhead:
            fixed[o.name] = fixed.get(o.name, 0) + _units_of(o.name, _q(o.per_pod))
            for c in st.containers:
                mine = per.setdefault(c, {})
                mine[o.name] = mine.get(o.name, 0) + _units_of(o.name, _q(o.per_container))
    return fixed, per


class _Dra:
    """KEP-5517 amounts of the pods on the plan, and the mapped claims each pod uses."""

    def __init__(self, cluster: Cluster, gates: FeatureGates, claims: Mapping[str, ResourceClaim]) -> None:
        self.cluster, self.gates, self.claims = cluster, gates, claims
        self.devices = _devices(cluster)
        self.mapped_users: dict[str, list[str]] = {}

    def of(self, pod: Pod, bound: bool) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        status = _from_status(pod) if bound else None
        fixed: dict[str, int] = {}
        per: dict[str, dict[str, int]] = {}
        for use in claim_uses(self.cluster, pod, self.claims, self.gates):
            if use.claim is None:
                continue
            f, pc, mapped = _claim_amounts(use.claim, self.devices)
            if mapped:
                self.mapped_users.setdefault(use.ref, []).append(pod.namespaced_name)
            fixed = _plus(fixed, f)
            for c in [*pod.spec.init_containers, *pod.spec.containers]:
                refs = c.resources.claims if c.resources is not None else []
                if pc and any(r.name == use.entry.name for r in refs):
                    per[c.name] = _plus(per.get(c.name, {}), pc)
        return status if status is not None else (fixed, per)


def check_node_resources(
    cluster: Cluster,
    placed: Sequence[tuple[Pod, str, frozenset[str]]],
    gates: FeatureGates | None = None,
    claims: Mapping[str, ResourceClaim] | None = None,
) -> list[Violation]:
    """Every node resource the plan overcommits. `placed`: (pod, its node, the extended
    resources its DRA extended-resource claim serves) for the pods the plan places; `gates`
    and `claims` (the plan's claims by `namespace/name`) for KEP-5517's device amounts."""
    on: dict[str, list[tuple[Pod, frozenset[str]]]] = {}
    planned = {p.key for p, _, _ in placed}
    dra = (
        _Dra(cluster, gates, claims or {})
        if gates is not None and gates.DRANodeAllocatableResources
        else None
    )
    for pod in cluster.pods.values():
        key = pod.key
        phase = pod.status.phase if pod.status else None
        if pod.spec.node_name and phase not in ("Succeeded", "Failed") and key not in planned:
            on.setdefault(pod.spec.node_name, []).append((pod, _served_by_dra(pod)))
    for pod, node, served in placed:
        on.setdefault(node, []).append((pod, served))
    out: list[Violation] = []
    for node, pods in sorted(on.items()):
        obj = cluster.nodes.get(node)
        if obj is None or not obj.status.effective_allocatable:
            continue
        have = {k: _units(k, q) for k, q in obj.status.effective_allocatable.items()}
        used: dict[str, int] = {}
        for pod, served in pods:
            amounts = dra.of(pod, pod.key not in planned) if dra is not None else None
            for k, v in requests_of(pod, amounts).items():
                if k not in served:
                    used[k] = used.get(k, 0) + v
        for k, v in sorted(used.items()):
            limit = have.get(k)
            if limit is None and (k in CORE or k.startswith("hugepages-")):
                continue
            if v > (limit or 0):
                last = pods[-1][0]
                ref = last.namespaced_name
                why = f"node {node} is overcommitted in {k}: its pods request {v}, allocatable {limit or 0}"
                out.append(Violation(ref, None, "node-resources", f"pod {ref}: {why}"))
    for ref, users in sorted((dra.mapped_users if dra is not None else {}).items()):
        if len(set(users)) > 1:
            names = ", ".join(sorted(set(users)))
            why = f"claim {ref} has a device with a nodeAllocatableResources mapping, used by pods {names}"
            out.append(Violation(users[-1], None, "node-resources", f"pod {users[-1]}: {why}"))
    return out
