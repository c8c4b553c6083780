"""Pools: the inventory a node sees — devices of complete, valid, current pools.

Why a module: which ResourceSlices count is the subtlest reading of the cluster
(docs/semantics.md, "Pools and generations": generations, completeness, obsolete pools,
invalid pools, the `DRAPartitionableDevices` gate), and every rule that names a device starts
from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from ..api.cluster import Cluster
from ..api.models import Device, ResourceSlice
from ..reasons import Kind
from ..reasons.words import say
from .amounts import frac
from .keys import DeviceKey, PoolKey
from .scopes import Scope, device_scope, scope_matches, slice_scope


@dataclass
class Dev:
    """A device visible from the node, with the slice it came from."""

    key: DeviceKey
    slice: ResourceSlice
    device: Device
    scope: Scope


@dataclass
class Inventory:
    """What the node sees: devices of complete, valid, current pools, plus pool problems."""

    devices: dict[DeviceKey, Dev] = field(default_factory=dict)
    problems: dict[PoolKey, str] = field(default_factory=dict)
    """Relevant pools that cannot be used: incomplete / obsolete / invalid, with why."""
    obsolete: set[PoolKey] = field(default_factory=set)
    """Pools dropped because a newer generation exists: silently gone, not "being updated"."""
    pool_devices: dict[PoolKey, dict[str, Device]] = field(default_factory=dict)
    """Every device of a usable pool (all nodes): counters are pool-wide."""
    pool_counters: dict[PoolKey, dict[str, dict[str, Fraction]]] = field(default_factory=dict)
    """Counter set -> counter -> value, per usable pool."""


@dataclass(frozen=True)
class Readable:
    """The slices the gates let a plan read, with a scope, grouped once for many nodes.

    Why: an audit (`check_cluster`) gathers each node's inventory from the same slices; read
    once, a node's slices are those named for it plus the ones with a selector, all nodes or
    per-device selection — not every slice of the cluster again per node (1,000 nodes and
    2,000 slices: two million scope tests)."""

    all_by_pool: dict[PoolKey, list[ResourceSlice]]
    """Every readable slice, per pool, in input order."""
    named: dict[str, list[tuple[int, ResourceSlice]]]
    """The slices whose scope is one node (`nodeName`), by that node, with their positions."""
    others: list[tuple[int, ResourceSlice]]
    """The rest, with their positions: their relevance depends on the node's labels."""

    def for_node(self, node: str | None) -> list[ResourceSlice]:
        """The slices that may be relevant to `node`, in input order."""
        mine = self.named.get(node, []) if node is not None else []
        return [rs for _, rs in sorted([*mine, *self.others], key=lambda t: t[0])]


def readable(cluster: Cluster, partitionable: bool, compat_groups: bool) -> Readable:
    """The slices the gates let a plan read, with a scope (`Readable`)."""
    all_by_pool: dict[PoolKey, list[ResourceSlice]] = defaultdict(list)
    named: dict[str, list[tuple[int, ResourceSlice]]] = defaultdict(list)
    others: list[tuple[int, ResourceSlice]] = []
    for i, rs in enumerate(cluster.slices):
        # Gate off: per-device node selection is unknown; a counter-set slice still counts
        # for pool completeness, its counters are just not used (upstream test
        # "partitionable-devices-disabled-other-device-do-not-consume-counters").
        if not partitionable and rs.spec.per_device_node_selection:
            continue
        if not compat_groups and rs.uses_compatibility_groups():
            continue
        scope = slice_scope(rs)
        if scope is None:
            continue
        all_by_pool[(rs.spec.driver, rs.spec.pool.name)].append(rs)
        if scope != "per-device" and scope[0] == "node":
            named[scope[1]].append((i, rs))
        else:
            others.append((i, rs))
    return Readable(dict(all_by_pool), dict(named), others)


def _newest_relevant(
    candidates: list[ResourceSlice], relevant: Callable[[ResourceSlice], bool]
) -> dict[PoolKey, list[ResourceSlice]]:
    """Per pool: its relevant slices of the newest generation among them."""
    rel_by_pool: dict[PoolKey, list[ResourceSlice]] = defaultdict(list)
    for rs in candidates:
        if relevant(rs):
            kept = rel_by_pool[(rs.spec.driver, rs.spec.pool.name)]
            if kept and rs.spec.pool.generation > kept[0].spec.pool.generation:
                kept.clear()
            if not kept or rs.spec.pool.generation == kept[0].spec.pool.generation:
                kept.append(rs)
    return rel_by_pool


def gather(
    cluster: Cluster,
    node: str | None,
    partitionable: bool,
    compat_groups: bool = True,
    read: Readable | None = None,
) -> Inventory:
    """Pools and devices visible from `node` (docs/semantics.md, "Pools and generations").
    `compat_groups`: DRADeviceCompatibilityGroups; off, a slice declaring compatibility groups
    is not read (its pool is then incomplete: "Device compatibility groups (KEP-5963)").
    `read`: `readable(cluster, partitionable, compat_groups)`, when the caller has it."""
    labels = {}
    if node is not None and node in cluster.nodes:
        labels = dict(cluster.nodes[node].metadata.labels)

    if read is None:
        read = readable(cluster, partitionable, compat_groups)

    def relevant(rs: ResourceSlice) -> bool:
        scope = slice_scope(rs)
        if scope == "per-device":
            return any(scope_matches(device_scope(d), node, labels) for d in rs.spec.devices)
        return scope_matches(scope, node, labels)

    all_by_pool = read.all_by_pool
    rel_by_pool = _newest_relevant(read.for_node(node), relevant)

    inv = Inventory()
    for pk, kept in rel_by_pool.items():
        gen = kept[0].spec.pool.generation
        want = kept[0].spec.pool.resource_slice_count
        pool_slices = kept
        if len(kept) != want:
            others = all_by_pool[pk]
            if any(s.spec.pool.generation > gen for s in others):
                inv.problems[pk] = f"pool {pk[0]}/{pk[1]} is obsolete (a newer generation than {gen} exists)"
                inv.obsolete.add(pk)
                continue
            same = [s for s in others if s.spec.pool.generation == gen]
            if len(same) != want:
                inv.problems[pk] = (
                    f"pool {pk[0]}/{pk[1]} is incomplete (generation {gen}: {len(same)} of {want} slices)"
                )
                continue
            pool_slices = same
        relevant_names = {id(s) for s in kept}
        problem = _left_out(pk, pool_slices) or pool_problem(pk, pool_slices, relevant_names, partitionable)
        if problem:
            inv.problems[pk] = problem
            continue
        inv.pool_counters[pk] = _counters(pool_slices) if partitionable else {}
        inv.pool_devices[pk] = {d.name: d for rs in pool_slices for d in rs.spec.devices}
        for rs in kept:
            scope = slice_scope(rs)
            for d in rs.spec.devices:
                dscope = device_scope(d) if scope == "per-device" else scope
                if scope == "per-device" and not scope_matches(dscope, node, labels):
                    continue
                assert dscope is not None
                key = (pk[0], pk[1], d.name)
                inv.devices[key] = Dev(key, rs, d, dscope)
    return inv


def _counters(slices: list[ResourceSlice]) -> dict[str, dict[str, Fraction]]:
    """A pool's counter sets: counter set -> counter -> value (a later slice's set of a name wins)."""
    counters: dict[str, dict[str, Fraction]] = {}
    for rs in slices:
        for cs in rs.spec.shared_counters:
            counters[cs.name] = {n: frac(c.value) for n, c in cs.counters.items()}
    return counters


def pool_problem(
    pk: PoolKey, slices: list[ResourceSlice], relevant: set[int], partitionable: bool
) -> str | None:
    """Why a complete pool is invalid (duplicate names, unknown counters), or None."""
    name = f"pool {pk[0]}/{pk[1]} is invalid"
    seen: set[str] = set()
    for rs in slices:
        if id(rs) not in relevant:
            continue
        for d in rs.spec.devices:
            if d.name in seen:
                return f"{name}: device name {d.name} appears twice"
            seen.add(d.name)
    if not partitionable:
        return None  # counter consumers are rejected one by one (a `gate` violation)
    sets: dict[str, set[str]] = {}
    for rs in slices:
        for cs in rs.spec.shared_counters:
            if cs.name in sets:
                return f"{name}: counter set {cs.name} appears twice"
            sets[cs.name] = set(cs.counters)
    for rs in slices:
        for d in rs.spec.devices:
            for use in d.consumes_counters:
                if use.counter_set not in sets:
                    return f"{name}: device {d.name} consumes from unknown counter set {use.counter_set}"
                unknown = sorted(set(use.counters) - sets[use.counter_set])
                if unknown:
                    return f"{name}: device {d.name} consumes unknown counter(s) {', '.join(unknown)}"
    return None


def _left_out(pk: PoolKey, slices: list[ResourceSlice]) -> str | None:
    """Why the pool is invalid when its slices are stand-ins of slices left out for a problem
    (`planning.leftpools`: the plan reads such a pool as invalid, so does the checker), or None."""
    if all(rs.left_out is None for rs in slices):
        return None
    problems = [r for rs in slices if (r := rs.left_out) is not None and not r.is_(Kind.SLICE_WITH_POOL)]
    why = "; ".join(dict.fromkeys(map(say, problems))) or "a slice of it was left out"
    return f"pool {pk[0]}/{pk[1]} is invalid: {why}"
