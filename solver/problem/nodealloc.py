"""KEP-5517, DRA node allocatable resources: node cpu/memory/hugepages a pod takes through its devices.

Why a module: with the gate `DRANodeAllocatableResources` on, a device may publish
`nodeAllocatableResources` (the 1.37 shape): per node resource either a `mapping` (the device
*is* node resource: a CPU driver's cores — `deviceMultiplier` per allocated device, or
`capacityMultiplier` times the consumed capacity `capacityKey`) or an `overhead` (what the
device costs the node besides itself: `perPod` once per pod that uses the claim, `perContainer`
once per container of the pod that references the claim), or both. The scheduler's
DynamicResources filter adds a pod's claims' amounts to its requests (`PodRequests` with the
pod's `nodeAllocatableResourceClaimStatuses`: mapped amounts and `perPod` for the pod's whole
life, `perContainer` to each referencing container, so an init container's share only counts
in its own step) and compares cpu, memory, ephemeral-storage and hugepages with what the node
has left. A claim with a mapped device may not be shared by two pods.

What this module decides, for a pod still to place, is its `Footprint` before any device is
chosen — node-independent, so every planner (first fit, CP-SAT, the aggregated model) sees it as
part of the pod's demand (`resources.pod_demand`). That is exact only when the footprint does not
depend on which devices the allocator picks; the subset modelled here:

- an allocated claim: its footprint from its allocation (exact);
- a claim to allocate: per request, every candidate device on every node (after selectors and
  static checks, as `build.build_problem` finds them) has the same `nodeAllocatableResources`, and the
  request takes a fixed number of devices (ExactCount; firstAvailable subrequests all with the
  same count and footprint): footprint = count x the device's.

Refused with an InputError naming the claim (never a plan that ignores them): candidates whose
`nodeAllocatableResources` differ, allocationMode All over such devices, a `capacityKey`
mapping on a claim to allocate, a claim with a mapped device that several pods use, the 1.36
field `nodeAllocatableResourceMappings`, and pod-level requests smaller than the pod's
containers plus its DRA amounts (upstream: unschedulable everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..api.cluster import Cluster
from ..api.models import Device, Pod, ResourceClaim, ResourceSlice
from ..api.quantity import Quantity
from ..cel import EvalCache
from ..errors import InputError
from ..gates import FeatureGates
from ..inventory import InUse, NodeView, gather_pools, in_use_from_claims
from .build import problem_from_context
from .devices import context_from
from .pods import pod_claims

Amounts = dict[str, int]
GATE = "DRANodeAllocatableResources"
FIELD = "nodeAllocatableResources"


def is_node_allocatable(name: str) -> bool:
    """The node resources a device may add to (the scheduler's DRA fit compares only these)."""
    return name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-")


def _units(name: str, value: Fraction) -> int:
    """cpu in millicores, the rest in units; rounded up, as upstream's MilliValue/Value."""
    scaled = value * 1000 if name == "cpu" else value
    return -((-scaled.numerator) // scaled.denominator)


def _frac(q: Quantity | None) -> Fraction:
    return q.as_fraction() if q is not None else Fraction(0)


@dataclass(frozen=True)
class DeviceAmounts:
    """One device's `nodeAllocatableResources`, in node-resource units (cpu millicores)."""

    mapped: tuple[tuple[str, int], ...] = ()
    """deviceMultiplier per resource: what one allocation of the device takes."""
    per_pod: tuple[tuple[str, int], ...] = ()
    per_container: tuple[tuple[str, int], ...] = ()
    capacity_keys: tuple[tuple[str, str, Fraction], ...] = ()
    """(resource, capacityKey, capacityMultiplier): mapped from consumed capacity."""

    @property
    def empty(self) -> bool:
        return not (self.mapped or self.per_pod or self.per_container or self.capacity_keys)

    @property
    def has_mapping(self) -> bool:
        return bool(self.mapped or self.capacity_keys)


def device_amounts(device: Device, where: str) -> DeviceAmounts:
    """A device's `nodeAllocatableResources` read and checked (`where` names it in errors)."""
    mapped: list[tuple[str, int]] = []
    per_pod: list[tuple[str, int]] = []
    per_container: list[tuple[str, int]] = []
    keys: list[tuple[str, str, Fraction]] = []
    if device.node_allocatable_resource_mappings:
        raise InputError(
            "nodeAllocatableResourceMappings is KEP-5517's 1.36 alpha shape, which Kubernetes 1.37 "
            "replaced by nodeAllocatableResources (mapping/overhead); only the 1.37 shape is modelled",
            obj=where,
            field="nodeAllocatableResourceMappings",
        )
    for name, res in sorted(device.node_allocatable_resources.items()):
        fld = f"{FIELD}[{name}]"
        if not is_node_allocatable(name):
            raise InputError(
                f"{name!r} is not a node-allocatable resource (cpu, memory, ephemeral-storage, hugepages-*)",
                obj=where,
                field=fld,
            )
        if res.mapping is None and res.overhead is None:
            raise InputError("one of mapping and overhead is required", obj=where, field=fld)
        m = res.mapping
        if m is not None:
            if (m.capacity_key is None) == (m.device_multiplier is None):
                raise InputError(
                    "exactly one of capacityKey and deviceMultiplier is required",
                    obj=where,
                    field=f"{fld}.mapping",
                )
            if m.capacity_key is not None:
                if m.capacity_multiplier is None:
                    raise InputError(
                        "capacityMultiplier is required with capacityKey", obj=where, field=f"{fld}.mapping"
                    )
                keys.append((name, m.capacity_key, _frac(m.capacity_multiplier)))
            else:
                mapped.append((name, _units(name, _frac(m.device_multiplier))))
        o = res.overhead
        if o is not None:
            if o.per_pod is not None:
                per_pod.append((name, _units(name, _frac(o.per_pod))))
            if o.per_container is not None:
                per_container.append((name, _units(name, _frac(o.per_container))))
    return DeviceAmounts(tuple(mapped), tuple(per_pod), tuple(per_container), tuple(keys))


@dataclass(frozen=True)
class ClaimAmounts:
    """What one claim adds to each pod that uses it (the upstream claim status, summed)."""

    fixed: Amounts = field(default_factory=dict)
    """Mapped amounts and perPod overheads."""
    per_container: Amounts = field(default_factory=dict)
    mapped: bool = False
    """Some device of it is a mapping: the claim may not be shared by pods."""


@dataclass(frozen=True)
class Footprint:
    """What a pod's claims add to its node resources."""

    fixed: Amounts = field(default_factory=dict)
    """For the pod's whole life: added after the containers' peak."""
    per_container: dict[str, Amounts] = field(default_factory=dict)
    """Container name -> perContainer overheads of the claims it references."""

    @property
    def empty(self) -> bool:
        return not self.fixed and not self.per_container


def _add(total: Amounts, name: str, v: int) -> None:
    if v:
        total[name] = total.get(name, 0) + v


def _scaled(pairs: Sequence[tuple[str, int]], times: int, into: Amounts) -> None:
    for name, v in pairs:
        _add(into, name, v * times)


class Devices:
    """The devices of the cluster's slices by (driver, pool, name), highest pool generation."""

    def __init__(self, cluster: Cluster) -> None:
        gen: dict[tuple[str, str], int] = {}
        for s in cluster.slices:
            key = (s.spec.driver, s.spec.pool.name)
            gen[key] = max(gen.get(key, s.spec.pool.generation), s.spec.pool.generation)
        self.by_key: dict[tuple[str, str, str], tuple[Device, str]] = {}
        for s in cluster.slices:
            if s.spec.pool.generation != gen[(s.spec.driver, s.spec.pool.name)]:
                continue
            for d in s.spec.devices:
                where = f"ResourceSlice {s.metadata.name}, device {d.name}"
                self.by_key[(s.spec.driver, s.spec.pool.name, d.name)] = (d, where)
        self.any = any(
            d.node_allocatable_resources or d.node_allocatable_resource_mappings
            for d, _ in self.by_key.values()
        )
        self._amounts: dict[tuple[str, str, str], DeviceAmounts] = {}

    @classmethod
    def none(cls) -> Devices:
        """No devices (nothing read): for a plan with the gate off."""
        return cls(Cluster())

    def amounts(self, key: tuple[str, str, str]) -> DeviceAmounts:
        hit = self._amounts.get(key)
        if hit is None:
            got = self.by_key.get(key)
            hit = device_amounts(got[0], got[1]) if got is not None else DeviceAmounts()
            self._amounts[key] = hit
        return hit


def allocated_amounts(claim: ResourceClaim, devices: Devices) -> ClaimAmounts:
    """An allocated claim's amounts from its results, as the scheduler sums them: per result,
    deviceMultiplier, consumedCapacity[capacityKey] x capacityMultiplier (when consumed),
    perPod and perContainer."""
    alloc = claim.status.allocation if claim.status is not None else None
    fixed: Amounts = {}
    per_container: Amounts = {}
    mapped = False
    for r in alloc.devices.results if alloc is not None and alloc.devices is not None else []:
        a = devices.amounts((r.driver, r.pool, r.device))
        _scaled(a.mapped, 1, fixed)
        _scaled(a.per_pod, 1, fixed)
        _scaled(a.per_container, 1, per_container)
        for name, key, mult in a.capacity_keys:
            consumed = (r.consumed_capacity or {}).get(key)
            if consumed is not None:
                _add(fixed, name, _units(name, _frac(consumed) * mult))
        mapped = mapped or a.has_mapping
    return ClaimAmounts(fixed, per_container, mapped)


class FootprintBook:
    """Pods' footprints for one plan; claims to allocate analysed once per claim spec."""

    def __init__(self, cluster: Cluster, gates: FeatureGates, cache: EvalCache | None = None) -> None:
        self.cluster = cluster
        self.gates = gates
        # Read the slices only with the gate on: off (the default), this costs nothing.
        self.devices = Devices(cluster) if gates.DRANodeAllocatableResources else Devices.none()
        self.on = self.devices.any
        self.cache = cache or EvalCache()
        self._pending: dict[str, ClaimAmounts] = {}
        self._users: dict[tuple[str, str], set[str]] | None = None
        self._slices: dict[str | None, list[ResourceSlice]] | None = None
        self._in_use: InUse | None = None

    def footprint(self, pod: Pod) -> Footprint:
        """The pod's footprint (empty with the gate off or no device publishing the field)."""
        if not self.on:
            return Footprint()
        claims = pod_claims(self.cluster, pod, self.gates)
        out = Footprint()
        for entry, claim in zip(pod.spec.resource_claims, claims, strict=True):
            allocated = claim.status is not None and claim.status.allocation is not None
            got = allocated_amounts(claim, self.devices) if allocated else self._to_allocate(claim)
            if got.mapped and (got.fixed or got.per_container):
                self._not_shared(claim, pod)
            _attribute(pod, entry.name, got, out)
        return out

    def bound(self, pod: Pod) -> Footprint | None:
        """A bound pod's footprint, as its node counts it: its
        `status.nodeAllocatableResourceClaimStatuses` (what the scheduler wrote), else what its
        allocated claims' devices say (a plan's own output has no such status). None: nothing."""
        if not self.on:
            return None
        statuses = pod.status.node_allocatable_resource_claim_statuses if pod.status is not None else []
        if statuses:
            return status_footprint(pod)
        out = Footprint()
        for entry, claim in zip(
            pod.spec.resource_claims, pod_claims(self.cluster, pod, self.gates), strict=True
        ):
            if claim.status is not None and claim.status.allocation is not None:
                _attribute(pod, entry.name, allocated_amounts(claim, self.devices), out)
        return None if out.empty else out

    def _not_shared(self, claim: ResourceClaim, pod: Pod) -> None:
        if self._users is None:
            self._users = {}
            for p in self.cluster.pods.values():
                for e in p.spec.resource_claims:
                    if e.resource_claim_name:
                        self._users.setdefault((p.metadata.ns, e.resource_claim_name), set()).add(
                            p.namespaced_name
                        )
        users = set(self._users.get(claim.key, set())) | {pod.namespaced_name}
        reserved = claim.status.reserved_for if claim.status is not None else []
        users |= {f"{claim.metadata.ns}/{r.name}" for r in reserved or [] if r.resource == "pods"}
        if len(users) > 1:
            raise InputError(
                f"the claim has a device with a nodeAllocatableResources mapping and is used by pods "
                f"{', '.join(sorted(users))}: upstream allows one pod per such claim (KEP-5517); "
                "dra-solver does not plan the others as unschedulable",
                obj=claim.ref,
            )

    def _to_allocate(self, claim: ResourceClaim) -> ClaimAmounts:
        key = claim.model_dump_json(include={"spec"})
        hit = self._pending.get(key)
        if hit is None:
            hit = self._analyse(claim)
            self._pending[key] = hit
        return hit

    def _node_slices(self) -> dict[str | None, list[ResourceSlice]]:
        """Per node, the slices `build_problem` would gather for it, read once: every slice of a
        pool with a slice on that node or a slice without a node name (selector, all nodes, per
        device). Why: gathering from all slices for every node is quadratic in the nodes."""
        by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        local: dict[str, set[tuple[str, str]]] = {}
        shared: set[tuple[str, str]] = set()
        for sl in self.cluster.slices:
            pid = (sl.spec.driver, sl.spec.pool.name)
            by_pool.setdefault(pid, []).append(sl)
            if sl.spec.node_name:
                local.setdefault(sl.spec.node_name, set()).add(pid)
            else:
                shared.add(pid)
        nodes: list[str | None] = list(sorted(self.cluster.nodes)) or [None]
        return {
            n: [sl for pid in sorted(local.get(n or "", set()) | shared) for sl in by_pool[pid]]
            for n in nodes
        }

    def _analyse(self, claim: ResourceClaim) -> ClaimAmounts:
        """Per request: the one (count, device amounts) every candidate on every node gives."""
        seen: dict[int, set[tuple[int, DeviceAmounts]]] = {}
        names: dict[int, str] = {}
        if self._slices is None or self._in_use is None:
            self._slices = self._node_slices()
            allocated = [
                c for c in self.cluster.claims.values() if c.status is not None and c.status.allocation
            ]
            self._in_use = in_use_from_claims(allocated, self.gates)
        in_use = self._in_use
        for node, slices in self._slices.items():
            view = NodeView.of(node, self.cluster.nodes)
            pools = gather_pools(slices, view, self.gates)
            ctx = context_from(self.cluster, view, pools, in_use, self.gates, self.cache)
            prob = problem_from_context(ctx, [claim])
            for ri, req in enumerate(prob.claims[0].requests):
                names[ri] = req.name
                for ai in req.alternatives:
                    alt = prob.alternatives[ai]
                    for cand in alt.candidates:
                        info = prob.devices[cand.device]
                        amounts = self.devices.amounts((info.driver, info.pool, info.name))
                        if alt.mode == "All" and not amounts.empty:
                            raise self._refuse(claim, alt.name, "allocationMode All over devices with it")
                        seen.setdefault(ri, set()).add((alt.count, amounts))
        fixed: Amounts = {}
        per_container: Amounts = {}
        mapped = False
        for ri, kinds in sorted(seen.items()):
            if all(a.empty for _, a in kinds):
                continue
            if len(kinds) > 1:
                raise self._refuse(
                    claim, names[ri], "its candidate devices differ in it (or in how many the request takes)"
                )
            ((count, dev),) = kinds
            if dev.capacity_keys:
                raise self._refuse(claim, names[ri], "a capacityKey mapping on a claim still to allocate")
            _scaled(dev.mapped, count, fixed)
            _scaled(dev.per_pod, count, fixed)
            _scaled(dev.per_container, count, per_container)
            mapped = mapped or dev.has_mapping
        return ClaimAmounts(fixed, per_container, mapped)

    def _refuse(self, claim: ResourceClaim, request: str, why: str) -> InputError:
        return InputError(
            f"request {request!r}: {FIELD} (KEP-5517) not modelled here: {why}; "
            "dra-solver models it when every candidate device has the same amounts and the "
            f"request takes a fixed number of devices (or turn {GATE} off)",
            obj=claim.ref,
        )


def _attribute(pod: Pod, entry: str, got: ClaimAmounts, out: Footprint) -> None:
    """Add one claim's amounts to the pod's footprint (in place): the fixed ones to the pod,
    perContainer to each container that references the pod's claim entry `entry`."""
    for name, v in got.fixed.items():
        _add(out.fixed, name, v)
    if got.per_container:
        for c in [*pod.spec.init_containers, *pod.spec.containers]:
            refs = c.resources.claims if c.resources is not None else []
            if any(r.name == entry for r in refs):
                mine = out.per_container.setdefault(c.name, {})
                for name, v in got.per_container.items():
                    _add(mine, name, v)


def status_footprint(pod: Pod) -> Footprint:
    """A bound pod's footprint from its `status.nodeAllocatableResourceClaimStatuses` (what the
    scheduler's NodeInfo counts)."""
    statuses = pod.status.node_allocatable_resource_claim_statuses if pod.status is not None else []
    fixed: Amounts = {}
    per_container: dict[str, Amounts] = {}
    for st in statuses:
        for m in st.mapping:
            _add(fixed, m.name, _units(m.name, _frac(m.quantity)))
        for o in st.overhead:
            _add(fixed, o.name, _units(o.name, _frac(o.per_pod)))
            if o.per_container is not None:
                for c in st.containers:
                    _add(per_container.setdefault(c, {}), o.name, _units(o.name, _frac(o.per_container)))
    return Footprint(fixed, per_container)


def merged(a: Mapping[str, int], b: Mapping[str, int]) -> Amounts:
    out = dict(a)
    for k, v in b.items():
        _add(out, k, v)
    return out


__all__ = [
    "ClaimAmounts",
    "DeviceAmounts",
    "Devices",
    "Footprint",
    "FootprintBook",
    "allocated_amounts",
    "device_amounts",
    "is_node_allocatable",
    "status_footprint",
]
