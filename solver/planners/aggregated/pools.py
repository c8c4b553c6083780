"""Network-attached pools as the aggregated model's nodes (issue #40).

Why: the aggregated model (`master`) needs independent nodes — no device or counter seen from
two of them — and a pool that every node sees by a label `nodeSelector` (or `allNodes`) is
seen from all of them. Per node, such a cluster is one copy of every pool: the per-device
model over pods x nodes x devices, and node classes that precompute every pool once per node.
But a network-attached pool is one resource shared by the nodes that see it, not a copy per
node: where a pod's devices always come from one pool, which pool takes which pods is a
cutting-stock problem over *pools*, exactly the one `master` solves over nodes. So the pools
become the model's nodes ("pool nodes", in a cluster of their own where each pool's slices
carry its pool node's name), and the real nodes only hold the pods (node resources).

When this is exact — the model's plans are the real plans and its bound bounds them
(`pooled` checks each condition and says which one fails):

1. every node the pods may use sees the same network-attached devices, and no pod may use a
   device of a node's own slices (so a pod sees the same pools wherever it runs);
2. every pod is *confined* to one pool: it has one claim, and either that claim asks for one
   device, or a matchAttribute constraint over all its requests on an attribute of which no
   value appears in two pools (so any allocation of the claim lies in one pool — upstream's
   partitionable shape: `matchAttribute: dra.example.com/slice`);
3. node resources never bind: every pod that may be placed fits on the nodes at once (first
   fit over the nodes, the pods in input order), so any subset of them does too, each pod on
   its node of that packing;
4. nothing else ties pods to nodes: no gangs, no extended resources DRA may serve, no pods
   without claims, no per-device node selection, no pool with slices of both kinds.

Then a real plan places, per pool, a set of claims that fits that pool alone (counters are a
pool's; a device is a pool's), which is a pattern of its pool node: the real plans and the
model's plans place the same pods, and `master`'s bound (column generation, its Lagrangian
bound) is a bound of every real plan. A pool node sees its pool as the real nodes do: the
slices no real node selects stay in the pool (they count for its completeness and carry its
counters) under a node name no pool node has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ...api.cluster import Cluster
from ...api.models import ResourceClaim, ResourceSlice
from ...inventory import NodeView, PoolID, gather_pools, selector_reads, visible_devices
from ...planning.job import Job
from ...planning.outcome import PlanOutcome
from ...problem.build import build_problem
from ...problem.demand import NodeBook
from ...problem.flat import Problem, Value
from ...reasons import Kind, Reason
from ...reasons.words import say
from .classes import LocalViews, pod_classes, twin_key
from .master import AggregatedPlan, aggregate, not_aggregated

MAX_KINDS = 64
"""Kinds of node (by the labels the network-attached slices select on) compared one by one."""
NOWHERE = "\x00no pool node"
"""The node name of a pool's slices that no real node selects (kept for completeness)."""
NO_POOLS = "no network-attached pool"
"""`pooled`'s answer where the cluster has no slice without a node name."""


@dataclass(frozen=True)
class PoolPlan:
    """The aggregated plan over pool nodes, and what turns it into a real plan."""

    agg: AggregatedPlan
    """`master`'s plan of the pool job: pool node -> the units placed there."""
    pools: dict[str, PoolID]
    """Pool node -> its pool."""
    node_of: dict[int, str]
    """Unit -> the real node it runs on (condition 3's packing), for every unit that may be placed."""
    slices: dict[PoolID, list[ResourceSlice]]
    """Each modelled pool's real slices: the part of the cluster its allocations are checked on."""


def pool_node(pool: PoolID) -> str:
    """The name of a pool's node in the pool job (no real node name has a space)."""
    return f"pool {pool[0]}/{pool[1]}"


def pooled(job: Job, first: PlanOutcome | None) -> PoolPlan | str:
    """The aggregated plan of `job` with its network-attached pools as the nodes, or why that
    model is not exact for it (module docstring). `first`: first fit's plan (its pools are the
    first columns and the hint), None when there is none yet."""
    if (why := not_aggregated(job)) is not None:
        return why
    if job.gangs:
        return "the pods have gangs"
    cluster, units = job.cluster, job.units
    attached = network_attached(job)
    if isinstance(attached, str):
        return attached
    names, shared, shared_pools = attached
    if any(not u.claims for u in units):
        return "pods without claims"
    todo = [i for i, u in enumerate(units) if any(n not in u.blocked for n in names)]
    if not todo:
        return "no pod may be placed"
    if any(len(units[i].claims) != 1 for i in todo):
        return "a pod has more than one claim"
    seen = _same_devices(job, names, shared)
    if isinstance(seen, str):
        return seen
    node_of = _packing(job, todo, names)
    if isinstance(node_of, str):
        return node_of
    holders = pool_holders(cluster, shared_pools)
    view = replace(cluster, slices=shared, claims=holders)
    own = {s.spec.node_name for s in cluster.slices if s.spec.node_name is not None}
    rep = next((n for n in names if n not in own), None)
    if rep is None:
        return "every node has slices of its own"
    reps = local_reps(cluster, [s for s in cluster.slices if s.spec.node_name is not None], names)
    used = _pools_used(job, todo, view, rep, reps)
    if isinstance(used, str):
        return used
    if not used:
        return "no pod may use a network-attached device"
    pools = {pool_node(pid): pid for pid in sorted(used)}
    slices = {pid: [s for s in shared if (s.spec.driver, s.spec.pool.name) == pid] for pid in pools.values()}
    pool_job = _pool_job(job, todo, pools, slices, seen, holders)
    agg = aggregate(pool_job, on_pool_nodes(first, pools), force=True)
    if isinstance(agg, str):
        return f"the model over pools does not apply: {agg}"
    agg.stats["pool_nodes"] = len(pools)
    return PoolPlan(agg, pools, node_of, slices)


def _pools_used(job: Job, todo: list[int], view: Cluster, rep: str, reps: LocalReps) -> set[PoolID] | str:
    """The network-attached pools the pods `todo` may take devices from, asked once per pod
    class on `rep` (a node without slices of its own: it sees the network-attached pools
    only, `view`), or why a class breaks the model: its claim may span two pools (condition
    2) or may use a node's own devices too (condition 1)."""
    units = job.units
    used: set[PoolID] = set()
    for k in pod_classes(units, todo):
        claims = units[k.units[0]].claims
        problem = build_problem(view, claims, rep, job.gates, cache=job.cache)
        why = confined(problem, claims[0])
        if why is not None:
            return why
        used |= {
            (problem.devices[c.device].driver, problem.devices[c.device].pool)
            for a in problem.alternatives
            for c in a.candidates
        }
        if uses_local(job, reps, claims):
            return f"claim {claims[0].namespaced_name} may also use devices of a node's own slices"
    return used


def _same_devices(
    job: Job, names: list[str], shared: list[ResourceSlice]
) -> frozenset[tuple[str, str, str]] | str:
    """The network-attached devices every node sees (condition 1), or why they differ."""
    cluster = job.cluster
    keys, by_name = selector_reads(shared)
    if by_name:
        return "a network-attached slice selects nodes by name (or skips node operations)"
    kinds: dict[tuple[tuple[str, str], ...], str] = {}
    for n in names:
        view = NodeView.of(n, cluster.nodes)
        assert view is not None
        kinds.setdefault(tuple(sorted((k, v) for k, v in view.labels.items() if k in keys)), n)
    if len(kinds) > MAX_KINDS:
        return f"more than {MAX_KINDS} kinds of node by the labels network-attached slices select on"
    seen: frozenset[tuple[str, str, str]] | None = None
    for n in kinds.values():
        view = NodeView.of(n, cluster.nodes)
        pools = gather_pools(shared, view, job.gates)
        if pools.invalid():
            return f"network-attached pool {pools.invalid()[0].driver}/{pools.invalid()[0].name} is invalid"
        devices = frozenset(
            (p.driver, p.name, d.name) for p in pools.valid() for _, d in visible_devices(p, view)
        )
        if seen is None:
            seen = devices
        elif devices != seen:
            return "nodes see different network-attached devices"
    assert seen is not None
    return seen


def network_attached(job: Job) -> tuple[list[str], list[ResourceSlice], set[tuple[str, str]]] | str:
    """What both models over network-attached pools (this one and `aggregated.racks`) start
    from — the job's node names, its network-attached slices and their (driver, pool) — or why
    neither applies (`NO_POOLS`: there is no such slice)."""
    names = [n for n in job.nodes if n is not None]
    if not names or len(names) != len(job.nodes):
        return "no node, or a plan without nodes"
    shared = [s for s in job.cluster.slices if s.spec.node_name is None]
    if not shared:
        return NO_POOLS
    shared_pools = {(s.spec.driver, s.spec.pool.name) for s in shared}
    if any(
        s.spec.node_name is not None and (s.spec.driver, s.spec.pool.name) in shared_pools
        for s in job.cluster.slices
    ):
        return "a pool has both node-local and network-attached slices"
    if any(s.spec.per_device_node_selection for s in shared):
        return "a network-attached slice selects nodes per device"
    return names, shared, shared_pools


def _packing(job: Job, todo: list[int], names: list[str]) -> dict[int, str] | str:
    """Condition 3: every unit of `todo` on a node at once (first fit by node resources, units
    in input order), or why node resources may bind."""
    book = job.book.fresh()
    out: dict[int, str] = {}
    start = 0  # nodes before it are full for every unit of the same demand as the last one
    last: object = None
    for i in todo:
        unit = job.units[i]
        demand = tuple(sorted((k, v) for n in unit.needs for k, v in n.demand.items()))
        at = start if demand == last and not unit.blocked else 0
        for j in range(at, len(names)):
            n = names[j]
            if n in unit.blocked:
                continue
            variant = book.variant(unit.needs, n)
            if book.refusal(variant, n):
                continue
            book.take(variant, n)
            out[i] = n
            if not unit.blocked:
                start, last = j, demand
            break
        else:
            return f"node resources may bind: pod {unit.name} does not fit beside every other pod"
    return out


def pool_holders(cluster: Cluster, pools: set[PoolID]) -> dict[tuple[str, str], ResourceClaim]:
    """The allocated claims holding devices in `pools`."""
    out = {}
    for key, c in cluster.claims.items():
        alloc = c.status.allocation if c.status is not None else None
        if alloc is not None and any((r.driver, r.pool) in pools for r in alloc.devices.results):
            out[key] = c
    return out


def confined(problem: Problem, claim: ResourceClaim) -> str | None:
    """Why an allocation of `claim` (the Problem of it alone) may span two pools (condition
    2), or None."""
    ref = claim.namespaced_name
    if problem.invalid_pools:
        return f"claim {ref}: {say(problem.invalid_pools[0])}"
    alts = problem.alternatives
    if any(c.error is not None for a in alts for c in a.candidates):
        return f"claim {ref}: a candidate has a CEL error"
    if any(a.mode != "ExactCount" or a.admin for a in alts):
        return f"claim {ref}: a request asks for all devices or admin access"
    requests = problem.claims[0].requests
    if len(requests) == 1 and all(alts[a].count == 1 for a in requests[0].alternatives):
        return None  # one device: one pool
    every = {a.index for a in alts}
    for k in problem.constraints:
        if k.kind != "match" or not every <= set(k.alternatives):
            continue
        pool_of: dict[Value, PoolID] = {}
        if all(
            pool_of.setdefault(x, pid) == pid
            for (_, d), v in k.values.items()
            for pid in [(problem.devices[d].driver, problem.devices[d].pool)]
            for x in v or ()
        ):
            return None
    return f"claim {ref}: its devices may come from two pools (no matchAttribute on a value of one pool)"


LocalReps = tuple[Cluster, LocalViews, list[str]]
"""The nodes' own slices as a cluster, its views, one node per kind (`local_reps`)."""


def local_reps(cluster: Cluster, local: list[ResourceSlice], names: list[str]) -> LocalReps:
    """The cluster of the nodes' own slices, its views, and one node per kind of node
    (`classes.twin_key`: the same Problem up to names for any claims) that has slices."""
    own = replace(cluster, slices=local)
    views = LocalViews(own)
    reps: dict[object, str] = {}
    for n in names:
        if n not in views.node_pools:
            continue
        key = twin_key(own, views, n)
        reps.setdefault(key if key is not None else ("node", n), n)
    return own, views, list(reps.values())


def uses_local(job: Job, reps: LocalReps, claims: tuple[ResourceClaim, ...]) -> bool:
    """Whether `claims` have a candidate among some node's own devices (condition 1 here,
    condition 2 of `aggregated.racks`)."""
    own, views, nodes = reps
    for n in nodes:
        problem = build_problem(views.of(own, n), claims, n, job.gates, cache=job.cache)
        if any(a.candidates for a in problem.alternatives):
            return True
    return False


def _pool_job(
    job: Job,
    todo: list[int],
    pools: Mapping[str, PoolID],
    slices: Mapping[PoolID, list[ResourceSlice]],
    seen: frozenset[tuple[str, str, str]],
    holders: dict[tuple[str, str], ResourceClaim],
) -> Job:
    """The job over pool nodes: each pool's slices on its pool node (those no real node
    selects on `NOWHERE`), the claims holding their devices, the units without node resources
    or refused nodes (those that may not be placed refused by every pool node)."""
    out = pool_slices(pools, slices, seen)
    mine = {pid for pid in pools.values()}
    claims = {
        k: c
        for k, c in holders.items()
        if c.status
        and c.status.allocation
        and any((r.driver, r.pool) in mine for r in c.status.allocation.devices.results)
    }
    cluster = replace(job.cluster, slices=out, claims=claims, pods={}, nodes={})
    nodes = tuple(pools)
    may = set(todo)
    nowhere: dict[str | None, Reason] = {vn: Reason.of(Kind.POOL_OTHERS) for vn in nodes}
    anywhere: dict[str | None, Reason] = {}
    units = tuple(
        replace(u, blocked=anywhere if i in may else nowhere, needs=()) for i, u in enumerate(job.units)
    )
    return replace(
        job, cluster=cluster, units=units, nodes=nodes, book=NodeBook(cluster, nodes, job.gates), gangs={}
    )


def on_pool_nodes(
    first: PlanOutcome | None, pools: Mapping[str, PoolID], others: bool = False
) -> PlanOutcome | None:
    """First fit's plan with each placed pod whose devices are all in one modelled pool on
    that pool's node; a pod with devices of two pools, or of one not modelled, counts as not
    placed — `others`: a pod with no device of a modelled pool stays where it is (the real
    nodes are in the model too, `aggregated.racks`)."""
    if first is None:
        return None
    node = {pid: vn for vn, pid in pools.items()}
    out = []
    for p in first.pods:
        got = {
            (r.driver, r.pool)
            for c in p.claims
            if c.status and c.status.allocation
            for r in c.status.allocation.devices.results
        }
        if others and (not p.placed or not got & node.keys()):
            out.append(p)
            continue
        vn = node.get(next(iter(got))) if p.placed and len(got) == 1 else None
        out.append(replace(p, node=vn, placed=vn is not None))
    return PlanOutcome(out, first.allocator, first.stats.copy())


def pool_slices(
    pools: Mapping[str, PoolID],
    slices: Mapping[PoolID, list[ResourceSlice]],
    seen: frozenset[tuple[str, str, str]],
) -> list[ResourceSlice]:
    """Each pool's slices on its pool node: those with a device in `seen` (the devices the
    real nodes see of it) or none (counter sets), the others on `NOWHERE` (kept for the
    pool's completeness)."""
    out: list[ResourceSlice] = []
    for vn, pid in pools.items():
        for s in slices[pid]:
            shown = any((pid[0], pid[1], d.name) in seen for d in s.spec.devices)
            where = vn if shown or not s.spec.devices else NOWHERE
            spec = s.spec.model_copy(update={"node_name": where, "node_selector": None, "all_nodes": None})
            out.append(s.model_copy(update={"spec": spec}))
    return out


__all__ = [
    "NO_POOLS",
    "NOWHERE",
    "PoolPlan",
    "on_pool_nodes",
    "pool_node",
    "pool_slices",
    "pooled",
    "uses_local",
    "local_reps",
    "LocalReps",
]
