"""Network-attached pools seen by groups of nodes (a pool per rack) in the aggregated model
(issue #40).

Why: `aggregated.pools` models network-attached pools as the model's nodes where every node
sees the same pools and every pod's devices are in one of them. A cluster with a pool per
rack — its slices select the rack's nodes by label — and pods that use node-local GPUs beside
pods that use a rack's pool is neither that nor independent nodes (`master` needs no device
seen from two nodes): the per-device model planned it, with a copy of every pool per node (at
200 nodes, past 30 s of CPU: docs/benchmarks.md, "Scale smoke").

Here each pool is a node of the model ("pool node", as in `aggregated.pools`) *beside* the
real nodes, in one job: the real nodes keep their own slices (and so are independent), the
pods that use network-attached devices (*pool pods*) may use only pool nodes, the other pods
only real nodes. The model (`master.aggregate`) then plans both at once: pods by class, pool
nodes and real nodes by class (the pools of ten racks are one class of pool node).

The model is a relaxation of the real plans, exact where it says so (`racked` checks each
condition and says which one fails):

1. every pool's visible devices are the same from every node that sees any of them (so a pool
   node is the pool as any of its nodes sees it), and nothing selects nodes by name or per
   device;
2. a pool pod has one claim, no candidate among any node's own devices, and is *confined* to
   one pool on every group of nodes that sees the same pools (its candidates there are in
   one pool, or `pools.confined`: one device, or a matchAttribute on a value of one pool);
   the other pods have no candidate among the network-attached devices;
3. nothing else ties pods to nodes that the aggregated model does not already take
   (`master.not_aggregated`).

Then every real plan is a plan of the model — a pool pod's devices are in one pool, which
holds them whatever node it runs on; the other pods' devices are their node's — except that
the model does not count the pool pods' node resources (cpu, memory, pod slots) on the
nodes they run on: it is a relaxation, and its bound bounds every real plan. The expansion
(`expansion.expand_racked`) puts each pool pod on the first node (in the job's order) that
sees its pool, may take it and has the node resources left after the pods placed before it;
a pool pod no such node takes is left out (counted in `expansion_dropped`, the gap says
what it may cost). Where node resources do not bind — the smoke's racks, and most clusters
with network-attached devices — the plan is the model's, and proven when the model proves it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...api.cluster import Cluster
from ...api.models import ResourceSlice
from ...inventory import NodeView, PoolID, gather_pools, selector_reads, visible_devices
from ...planning.job import Job
from ...planning.outcome import PlanOutcome
from ...problem.build import build_problem
from ...reasons import Kind, Reason
from .classes import pod_classes
from .master import AggregatedPlan, aggregate, not_aggregated
from .pools import (
    LocalReps,
    confined,
    local_reps,
    network_attached,
    on_pool_nodes,
    pool_holders,
    pool_node,
    pool_slices,
    uses_local,
)

NETWORK_ONLY = Reason.of(Kind.NETWORK_ONLY)
"""Why a pool pod may not use a real node in the model (it uses a pool node)."""
NODE_ONLY = Reason.of(Kind.NODE_ONLY)
"""Why another pod may not use a pool node."""
UNSEEN = Reason.of(Kind.POOL_UNSEEN)
MAX_KINDS = 2048
"""Kinds of node (by the labels the network-attached slices select on) compared one by one: a
rack each, at 20 nodes a rack up to 40,000 nodes."""


@dataclass(frozen=True)
class RackPlan:
    """The aggregated plan over real nodes and pool nodes, and what turns it into a real plan."""

    agg: AggregatedPlan
    """`master`'s plan of the combined job (`_combined`: real nodes with their own slices, pool
    nodes with their pools): node or pool node -> units placed there."""
    pools: dict[str, PoolID]
    """Pool node -> its pool."""
    seers: dict[str, tuple[str, ...]]
    """Pool node -> the real nodes that see its pool, in the job's order."""
    slices: dict[PoolID, list[ResourceSlice]]
    """Each modelled pool's real slices: the part of the cluster its allocations are checked on."""
    pool_units: frozenset[int]
    """The pool pods (units)."""


def racked(job: Job, first: PlanOutcome | None) -> RackPlan | str:
    """The aggregated plan of `job` with its network-attached pools as nodes beside the real
    ones, or why that model is not exact for it (module docstring). `first`: first fit's plan
    (the hint), None when there is none yet."""
    if (why := not_aggregated(job)) is not None:
        return why
    cluster, units = job.cluster, job.units
    attached = network_attached(job)
    if isinstance(attached, str):
        return attached
    names, shared, _ = attached
    local = [s for s in cluster.slices if s.spec.node_name is not None]
    todo = [i for i, u in enumerate(units) if u.claims and any(n not in u.blocked for n in names)]
    if not todo:
        return "no pod with claims may be placed"
    seen = _seen(job, names, shared)
    if isinstance(seen, str):
        return seen
    devices, seers = seen
    groups: dict[frozenset[PoolID], str] = {}
    for n in names:
        groups.setdefault(frozenset(p for p, ns in seers.items() if n in ns), n)
    found = _pool_units(job, todo, _group_views(cluster, shared, groups), local_reps(cluster, local, names))
    if isinstance(found, str):
        return found
    pool_units, used = found
    if not used:
        return "no pod may use a network-attached device"
    pools = {pool_node(pid): pid for pid in sorted(used)}
    slices = {pid: [s for s in shared if (s.spec.driver, s.spec.pool.name) == pid] for pid in pools.values()}
    order = {n: j for j, n in enumerate(names)}
    by_node = {vn: tuple(sorted(seers.get(pid, ()), key=order.__getitem__)) for vn, pid in pools.items()}
    combined = _combined(job, local, pools, slices, devices, by_node, pool_units)
    agg = aggregate(combined, on_pool_nodes(first, pools, others=True), force=True)
    if isinstance(agg, str):
        return f"the model over nodes and pools does not apply: {agg}"
    agg.stats["pool_nodes"] = len(pools)
    return RackPlan(agg, pools, by_node, slices, frozenset(pool_units))


Devices = frozenset[tuple[str, str, str]]


def _group_views(
    cluster: Cluster, shared: list[ResourceSlice], groups: dict[frozenset[PoolID], str]
) -> list[tuple[str, Cluster]]:
    """One node of each group of nodes that sees the same pools (none: no group), with the
    part of the cluster those pools are: their slices, the claims holding their devices."""
    by_pool: dict[PoolID, list[ResourceSlice]] = {}
    for s in shared:
        by_pool.setdefault((s.spec.driver, s.spec.pool.name), []).append(s)
    holders = pool_holders(cluster, set(by_pool))
    out = []
    for group, rep in groups.items():
        if not group:
            continue
        mine = pool_holders(replace(cluster, claims=holders), set(group))
        out.append(
            (rep, replace(cluster, slices=[s for p in sorted(group) for s in by_pool[p]], claims=mine))
        )
    return out


def _pool_units(
    job: Job, todo: list[int], reps: list[tuple[str, Cluster]], local: LocalReps
) -> tuple[set[int], set[PoolID]] | str:
    """The pool pods among `todo` and the pools they may use (condition 2: `reps`, one node
    per group that sees the same pools, with their part of the cluster), or why a pod's
    devices may span pools or kinds of device."""
    units = job.units
    pool_units: set[int] = set()
    used: set[PoolID] = set()
    for k in pod_classes(units, todo):
        claims = units[k.units[0]].claims
        net = False
        for rep, view in reps:
            problem = build_problem(view, claims, rep, job.gates, cache=job.cache)
            if not any(a.candidates for a in problem.alternatives):
                continue
            net = True
            if len(claims) != 1:
                return f"pod {units[k.units[0]].name} has two claims and may use a network-attached pool"
            mine = {
                (problem.devices[c.device].driver, problem.devices[c.device].pool)
                for a in problem.alternatives
                for c in a.candidates
            }
            why = confined(problem, claims[0]) if len(mine) > 1 else None
            if why is not None:
                return why
            used |= mine
        if net and uses_local(job, local, claims):
            return f"claim {claims[0].namespaced_name} may use network-attached and node-local devices"
        if net:
            pool_units |= set(k.units)
    return pool_units, used


def _seen(
    job: Job, names: list[str], shared: list[ResourceSlice]
) -> tuple[dict[PoolID, Devices], dict[PoolID, set[str]]] | str:
    """Each network-attached pool's devices as its nodes see them, and the nodes that see
    it (condition 1), or why a pool looks different from two of its nodes."""
    cluster = job.cluster
    keys, by_name = selector_reads(shared)
    if by_name:
        return "a network-attached slice selects nodes by name (or skips node operations)"
    kinds: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for n in names:
        view = NodeView.of(n, cluster.nodes)
        assert view is not None
        kinds.setdefault(tuple(sorted((k, v) for k, v in view.labels.items() if k in keys)), []).append(n)
    if len(kinds) > MAX_KINDS:
        return f"more than {MAX_KINDS} kinds of node by the labels network-attached slices select on"
    devices: dict[PoolID, Devices] = {}
    seers: dict[PoolID, set[str]] = {}
    for ns in kinds.values():
        view = NodeView.of(ns[0], cluster.nodes)
        pools = gather_pools(shared, view, job.gates)
        if pools.invalid():
            return f"network-attached pool {pools.invalid()[0].driver}/{pools.invalid()[0].name} is invalid"
        for p in pools.valid():
            pid = (p.driver, p.name)
            got = frozenset((p.driver, p.name, d.name) for _, d in visible_devices(p, view))
            if not got:
                continue
            if devices.setdefault(pid, got) != got:
                return f"nodes see different devices of network-attached pool {p.driver}/{p.name}"
            seers.setdefault(pid, set()).update(ns)
    return devices, seers


def _combined(
    job: Job,
    local: list[ResourceSlice],
    pools: dict[str, PoolID],
    slices: dict[PoolID, list[ResourceSlice]],
    devices: dict[PoolID, Devices],
    seers: dict[str, tuple[str, ...]],
    pool_units: set[int],
) -> Job:
    """The job over real nodes and pool nodes (module docstring): each pool's slices on its
    pool node (those none of its nodes sees on `NOWHERE`); pool pods only on the pool nodes a
    node they may use sees, without node resources; the others on real nodes only."""
    seen = frozenset(d for pid in pools.values() for d in devices.get(pid, frozenset()))
    cluster = replace(job.cluster, slices=[*local, *pool_slices(pools, slices, seen)])
    real = [n for n in job.nodes if n is not None]
    units = []
    for i, u in enumerate(job.units):
        if i in pool_units:
            blocked: dict[str | None, Reason] = {n: NETWORK_ONLY for n in real}
            blocked.update({vn: UNSEEN for vn, ns in seers.items() if all(n in u.blocked for n in ns)})
            units.append(replace(u, blocked=blocked, needs=()))
        else:
            units.append(replace(u, blocked={**u.blocked, **{vn: NODE_ONLY for vn in pools}}))
    book = job.book.fresh()
    book.allocatable = dict(book.allocatable)
    for vn in pools:
        book.free[vn] = book.allocatable[vn] = None
    return replace(job, cluster=cluster, units=tuple(units), nodes=(*job.nodes, *pools), book=book)


__all__ = ["RackPlan", "racked"]
