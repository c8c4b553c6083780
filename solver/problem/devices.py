"""Precompute, devices: what the node sees, as plain data and as CEL views.

Why a module: every request's candidates are computed over the same device list, in
upstream's search order, with the same CEL `device` views and counter budgets; this module
builds that shared BuildContext once per allocation call.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..api.cluster import Cluster
from ..api.models import (
    Device,
    DeviceAttribute,
    ResourceClaim,
    ResourceSlice,
)
from ..api.quantity import Quantity
from ..cel import AttrValue, DeviceView, EvalCache
from ..cel.semver import Semver
from ..gates import FeatureGates
from ..inventory import (
    InUse,
    NodeView,
    Pool,
    Pools,
    gather_pools,
    in_use_from_claims,
    visible_devices,
)
from .flat import (
    CompatKey,
    CompatState,
    CounterInfo,
    DeviceInfo,
    ValueSet,
    compat_add,
)


@dataclass
class BuildContext:
    """Everything precompute derives from the cluster once per (node, call)."""

    cluster: Cluster
    node: NodeView | None
    gates: FeatureGates
    pools: Pools
    in_use: InUse
    devices: list[DeviceInfo]
    raw: list[tuple[ResourceSlice, Device]]
    views: list[DeviceView]
    counters: list[CounterInfo]
    cache: EvalCache
    compat: dict[CompatKey, CompatState] = field(default_factory=dict)
    """KEP-5963: per counter set, what its allocated devices allow (`Problem.compat_baseline`)."""
    spans: dict[tuple[str, str], tuple[Pool, int, int, int, int]] = field(default_factory=dict)
    """Valid pool's id -> (the pool, its first device, the end of its devices, its first
    counter, the end of its counters): where `refresh_context` finds a pool's part of the lists."""


def attribute_value_set(attr: DeviceAttribute, gates: FeatureGates) -> ValueSet | None:
    """Typed value set of a static attribute; list attributes need DRAListTypeAttributes."""
    if attr.int_ is not None:
        return frozenset({("int", attr.int_)})
    if attr.bool_ is not None:
        return frozenset({("bool", attr.bool_)})
    if attr.string is not None:
        return frozenset({("string", attr.string)})
    if attr.version is not None:
        return frozenset({("version", attr.version)})
    if not gates.DRAListTypeAttributes:
        return None
    for kind, values in (
        ("int", attr.ints),
        ("bool", attr.bools),
        ("string", attr.strings),
        ("version", attr.versions),
    ):
        if values is not None:
            return frozenset((kind, v) for v in values)
    return None


def cel_attr_value(attr: DeviceAttribute) -> AttrValue | None:
    if attr.int_ is not None:
        return attr.int_
    if attr.bool_ is not None:
        return attr.bool_
    if attr.string is not None:
        return attr.string
    if attr.version is not None:
        return _semver(attr.version)
    for values in (attr.ints, attr.bools, attr.strings):
        if values is not None:
            return tuple(values)
    if attr.versions is not None:
        return tuple(_semver(v) for v in attr.versions)
    return None


def skip_operations(value: bool | list[str] | None) -> bool | tuple[str, ...] | None:
    """A slice's KEP-5945 `skipNodeOperations`, hashable: the draft's boolean as it is, the
    merged list as a tuple (results copy it back as a list)."""
    return tuple(value) if isinstance(value, list) else value


def _split_name(name: str, driver: str) -> tuple[str, str]:
    dom, sep, ident = name.rpartition("/")
    return (dom, ident) if sep else (driver, name)


#: ``Semver(text)`` by version string: a fleet repeats a few driver versions on thousands of
#: devices, and a Semver is immutable, so devices can share one (bounded, cleared when full).
_SEMVERS: dict[str, Semver] = {}


def _semver(text: str) -> Semver:
    if type(text) is not str:  # not validated (assigned after parsing): Semver reports it
        return Semver(text)
    v = _SEMVERS.get(text)
    if v is None:
        if len(_SEMVERS) >= 4096:
            _SEMVERS.clear()
        v = _SEMVERS[text] = Semver(text)
    return v


def device_view(driver: str, device: Device, gates: FeatureGates) -> DeviceView:
    """The CEL `device` variable for one device (bare names under the driver's domain)."""
    attrs: dict[str, dict[str, AttrValue | None]] = {}
    for name, attr in device.attributes.items():
        dom, ident = _split_name(name, driver)
        attrs.setdefault(dom, {})[ident] = cel_attr_value(attr)
    caps: dict[str, dict[str, Quantity]] = {}
    for name, cap in device.capacity.items():
        dom, ident = _split_name(name, driver)
        caps.setdefault(dom, {})[ident] = cap.value
    return DeviceView(driver, device.name, attrs, caps, bool(device.allow_multiple_allocations))


def _node_scope(s: ResourceSlice, d: Device) -> tuple[str, object]:
    src = d if s.spec.per_device_node_selection else s.spec
    if src.node_name is not None:
        return ("node", src.node_name)
    if src.node_selector is not None:
        return ("selector", src.node_selector.dump())
    return ("all", None)


def build_context(
    cluster: Cluster,
    claims: Sequence[ResourceClaim],
    node_name: str | None,
    gates: FeatureGates,
    cache: EvalCache | None = None,
) -> BuildContext:
    node = NodeView.of(node_name, cluster.nodes)
    pools = gather_pools(cluster.slices, node, gates)
    skip = {c.key for c in claims}
    existing = [
        c
        for key, c in cluster.claims.items()
        if key not in skip and c.status is not None and c.status.allocation
    ]
    in_use = in_use_from_claims(existing, gates)
    return context_from(cluster, node, pools, in_use, gates, cache)


@dataclass(frozen=True)
class _Static:
    """The part of a device's DeviceInfo and its CEL view that no allocation changes."""

    device: Device  # held so that the memo's key, id(device), is not reused
    multi: bool
    capacity: dict[str, Fraction]
    capacity_format: dict[str, str]
    node_scope: tuple[str, object]
    view: DeviceView
    compat: tuple[tuple[CompatKey, frozenset[str]], ...] = ()


@dataclass
class DeviceMemo:
    """What `context_from` derives from one node's pools that never changes while they stay
    the same objects: the devices the node sees of each pool, and each device's static
    fields and CEL view. Why: a first-fit run rebuilds a node's context after every placement
    that touches its pools (the in-use part changes), and re-reading every device's
    attributes and capacities each time was its largest cost. One memo per node and feature
    gates (`firstfit.engine.NodeState`); the objects it holds are shared by the contexts built with
    it and never changed (a DeviceView memoises its own evaluations)."""

    visible: dict[int, tuple[Pool, list[tuple[ResourceSlice, Device]]]] = field(default_factory=dict)
    static: dict[int, _Static] = field(default_factory=dict)

    def devices(self, pool: Pool, node: NodeView | None) -> list[tuple[ResourceSlice, Device]]:
        hit = self.visible.get(id(pool))
        if hit is None or hit[0] is not pool:
            hit = self.visible[id(pool)] = (pool, visible_devices(pool, node))
        return hit[1]

    def of(self, driver: str, s: ResourceSlice, d: Device, gates: FeatureGates) -> _Static:
        hit = self.static.get(id(d))
        if hit is None or hit.device is not d:
            hit = self.static[id(d)] = _static(driver, s, d, gates)
        return hit


def context_from(
    cluster: Cluster,
    node: NodeView | None,
    pools: Pools,
    in_use: InUse,
    gates: FeatureGates,
    cache: EvalCache | None = None,
    memo: DeviceMemo | None = None,
) -> BuildContext:
    """The BuildContext of pools already gathered for `node` and an in-use summary already built.

    Why separate from `build_context`: a plan over many pods gathers each node's pools once
    and keeps the in-use summary up to date as pods are placed (`solver.planners.firstfit`), instead
    of re-reading every slice and claim of the cluster for every (pod, node). `memo`: the
    node's `DeviceMemo` (the same node, pools and gates every call), for the static parts."""
    ctx = BuildContext(cluster, node, gates, pools, in_use, [], [], [], [], cache or EvalCache())
    for pool in pools.valid():
        d0, c0 = len(ctx.devices), len(ctx.counters)
        _add_pool(ctx, pool, memo, views=True)
        ctx.spans[pool.id] = (pool, d0, len(ctx.devices), c0, len(ctx.counters))
    return ctx


def _add_pool(ctx: BuildContext, pool: Pool, memo: DeviceMemo | None, *, views: bool) -> None:
    """Append `pool`'s counters and the devices the node sees of it (their CEL views and raw
    objects too when `views`) to `ctx`, counted against `ctx.in_use`."""
    gates, node = ctx.gates, ctx.node
    counter_index = _pool_counters(ctx, pool)
    _pool_compat(ctx, pool)
    blocked = any(ctx.counters[i].available < 0 for i in counter_index.values())
    seen = memo.devices(pool, node) if memo is not None else visible_devices(pool, node)
    for s, d in seen:
        static = memo.of(pool.driver, s, d, gates) if memo is not None else _static(pool.driver, s, d, gates)
        _add_device(ctx, pool.driver, s, d, counter_index, blocked, static)
        if views:
            ctx.raw.append((s, d))
            ctx.views.append(static.view)


def refresh_context(ctx: BuildContext, pools: Collection[tuple[str, str]], memo: DeviceMemo | None) -> None:
    """Count `ctx`'s devices and counters of `pools` again against `ctx.in_use` (which the
    caller changed in those pools only), in place; every other entry stays as it is.

    Why: a first-fit run keeps one context per group of nodes that see the same pools
    (`firstfit.engine.World`), and a placement changes what is in use in one or two pools; with
    pools that every node sees (network-attached), rebuilding every device of every pool
    after each placement made a plan cost pods x devices. The entries are the ones
    `context_from` builds for the same in-use summary: each pool's part of the lists is
    rebuilt by the same code (`_add_pool`) at the same place (`spans`), and no entry reads
    another pool. Devices' raw objects and CEL views do not change with use."""
    for pid in pools:
        span = ctx.spans.get(pid)
        if span is None:  # not a valid pool of the context
            continue
        pool, d0, d1, c0, c1 = span
        part = BuildContext(
            ctx.cluster,
            ctx.node,
            ctx.gates,
            ctx.pools,
            ctx.in_use,
            ctx.devices[:d0],
            [],
            [],
            ctx.counters[:c0],
            ctx.cache,
        )
        _add_pool(part, pool, memo, views=False)
        assert len(part.devices) == d1 and len(part.counters) == c1, "a pool's part changed its size"
        ctx.devices[d0:d1] = part.devices[d0:]
        ctx.counters[c0:c1] = part.counters[c0:]
        for key in [k for k in ctx.compat if k[:2] == pid]:
            del ctx.compat[key]
        ctx.compat.update(part.compat)


def _pool_counters(ctx: BuildContext, pool: Pool) -> dict[tuple[str, str], int]:
    if not ctx.gates.DRAPartitionableDevices:
        return {}
    index: dict[tuple[str, str], int] = {}
    budget: dict[tuple[str, str], Fraction] = {}
    for s in pool.all_slices():
        for cs in s.spec.shared_counters:
            for cname, counter in cs.counters.items():
                budget[(cs.name, cname)] = counter.value.as_fraction()
    for s in pool.all_slices():
        for d in s.spec.devices:
            if not ctx.in_use.allocated((pool.driver, pool.name, d.name)):
                continue
            for use in d.consumes_counters:
                for cname, counter in use.counters.items():
                    budget[(use.counter_set, cname)] -= counter.value.as_fraction()
    for (set_name, cname), available in budget.items():
        index[(set_name, cname)] = len(ctx.counters)
        ctx.counters.append(CounterInfo(pool.driver, pool.name, set_name, cname, available))
    return index


def compat_groups(
    driver: str, pool: str, d: Device, gates: FeatureGates
) -> tuple[tuple[CompatKey, frozenset[str]], ...]:
    """KEP-5963: the device's groups per counter set it draws from (`DeviceInfo.compat`);
    nothing with DRADeviceCompatibilityGroups (or DRAPartitionableDevices) off."""
    if not (gates.DRADeviceCompatibilityGroups and gates.DRAPartitionableDevices):
        return ()
    return tuple(
        ((driver, pool, use.counter_set), frozenset(use.compatibility_groups or ()))
        for use in d.consumes_counters
    )


def _pool_compat(ctx: BuildContext, pool: Pool) -> None:
    """Fold the groups of the pool's allocated devices into `ctx.compat` (docs/semantics.md,
    "Device compatibility groups (KEP-5963)"): upstream reads them from the slices, as it does
    their counters."""
    for s in pool.all_slices():
        for d in s.spec.devices:
            if not d.consumes_counters or not ctx.in_use.allocated((pool.driver, pool.name, d.name)):
                continue
            for key, groups in compat_groups(pool.driver, pool.name, d, ctx.gates):
                ctx.compat[key] = compat_add(ctx.compat.get(key), groups)


def _static(driver: str, s: ResourceSlice, d: Device, gates: FeatureGates) -> _Static:
    return _Static(
        device=d,
        multi=bool(d.allow_multiple_allocations) and gates.DRAConsumableCapacity,
        capacity={k: c.value.as_fraction() for k, c in d.capacity.items()},
        capacity_format={k: c.value.format for k, c in d.capacity.items()},
        node_scope=_node_scope(s, d),
        view=device_view(driver, d, gates),
        compat=compat_groups(driver, s.spec.pool.name, d, gates),
    )


def _add_device(
    ctx: BuildContext,
    driver: str,
    s: ResourceSlice,
    d: Device,
    counter_index: dict[tuple[str, str], int],
    blocked: bool,
    static: _Static,
) -> None:
    dev_id = (driver, s.spec.pool.name, d.name)
    multi = static.multi
    counter_use: dict[int, Fraction] = {}
    for use in d.consumes_counters:
        for cname, counter in use.counters.items():
            key = (use.counter_set, cname)
            if key in counter_index:
                i = counter_index[key]
                counter_use[i] = counter_use.get(i, Fraction(0)) + counter.value.as_fraction()
    info = DeviceInfo(
        index=len(ctx.devices),
        driver=driver,
        pool=s.spec.pool.name,
        name=d.name,
        slice_name=s.metadata.name,
        multi=multi,
        busy=dev_id in ctx.in_use.dedicated,
        capacity=static.capacity,
        capacity_format=static.capacity_format,
        in_use=dict(ctx.in_use.capacity.get(dev_id, {})) if multi else {},
        shared_in_use=multi and (dev_id in ctx.in_use.shared or dev_id in ctx.in_use.capacity),
        counter_use=counter_use,
        counters_blocked=blocked,
        counters_short=any(amount > ctx.counters[i].available for i, amount in counter_use.items()),
        node_scope=static.node_scope,
        binds_to_node=bool(d.binds_to_node),
        skip_node_operations=skip_operations(s.spec.skip_node_operations),
        binding_conditions=tuple(d.binding_conditions),
        binding_failure_conditions=tuple(d.binding_failure_conditions),
        compat=static.compat,
    )
    ctx.devices.append(info)
