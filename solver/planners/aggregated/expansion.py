"""The aggregated model's plan as placements: pods on nodes, devices by the single-node allocator.

Why: the model decides counts per (pod class, node class, pattern); the output needs each pod
on a node with devices, written and checked (`planning.ledger.Ledger`), and the valid bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ...api.models import ResourceClaim, ResourceSlice
from ...deadline import passed
from ...inventory import PoolID
from ...planning.gangs import claimed_units, free_units, gang_counts, gang_reason, short_gangs
from ...planning.job import Job, Unit, placed_weight
from ...planning.ledger import Ledger
from ...planning.outcome import PlanOutcome, PodPlan, Stats
from ...problem.build import build_problem
from ...problem.flat import Assignment, Placement, Problem
from ...reasons import Kind, Reason
from ..bounds import judge, proven_pods, total_weight, valid_bound
from .master import AggregatedPlan, NodeCosts, aggregate
from .patterns import EXPAND_FLOOR, allocate_node
from .pools import NO_POOLS, PoolPlan, pooled
from .racks import RackPlan, racked
from .twins import Twins


def plan_aggregated(
    job: Job, first: PlanOutcome, cost: NodeCosts | None = None, force: bool = False
) -> PlanOutcome | str:
    """The aggregated model's plan (`aggregated.master.aggregate`: the one model of the plan at
    scale, also what-if's with `cost`), its pods on their nodes and checked
    (`expand_aggregated`); or why the model does not apply. `force`: wherever it applies."""
    if cost is None:
        pools = plan_pooled(job, first, first.stats.copy())
        if isinstance(pools, PlanOutcome):
            return pools
    agg = aggregate(job, first, cost, force=force)
    if isinstance(agg, str):
        return (
            agg if cost is not None or pools == NO_POOLS else f"{agg}; over network-attached pools: {pools}"
        )
    return expand_aggregated(job, first, agg, first.stats.copy())


def plan_pooled(job: Job, first: PlanOutcome, stats: Stats) -> PlanOutcome | str:
    """The plan of the aggregated model over network-attached pools (`aggregated.pools`), its
    pods on their nodes and checked (`expand_pooled`), else over those pools as nodes beside
    the real ones (`aggregated.racks`, `expand_racked`); or why neither model applies.
    Tried before the model over nodes: where it applies, that one does not (the nodes share
    the pools) and finding out costs a precompute of every pool per node."""
    hint = first if first.placed else None
    plan = pooled(job, hint)
    if not isinstance(plan, str):
        return expand_pooled(job, first, plan, stats)
    if plan == NO_POOLS:
        return plan
    rack = racked(job, hint)  # pools seen by some nodes, or beside pods of node-local devices
    if isinstance(rack, str):
        return f"{plan}; as nodes beside the real ones: {rack}"
    return expand_racked(job, first, rack, stats)


def expand_pooled(job: Job, first: PlanOutcome, plan: PoolPlan, stats: Stats) -> PlanOutcome:
    """The pool model's plan as real placements (`_place_pools`), each pod on its node of
    the packing (`PoolPlan.node_of`)."""
    ledger = Ledger(job)
    out, dropped = _place_pools(
        job, plan.agg, plan.agg.placements, plan.pools, plan.slices, lambda i, vn: plan.node_of[i], ledger
    )
    stats["pooled"] = f"yes: {len(plan.pools)} network-attached pools as the model's nodes"
    return _realized(job, first, plan.agg, stats, out, dropped)


def expand_racked(job: Job, first: PlanOutcome, plan: RackPlan, stats: Stats) -> PlanOutcome:
    """The plan over real nodes and pool nodes (`aggregated.racks`) as real placements: the
    real nodes' pods as `expand_aggregated` places them, then each pool's pods
    (`_place_pools`) on the first node that sees the pool, may take the pod and has the node
    resources left (a pool pod no such node takes is dropped: the model did not count pool
    pods' node resources)."""
    ledger = Ledger(job)
    on_nodes = {n: idxs for n, idxs in plan.agg.placements.items() if n not in plan.pools}
    on_pools = {n: idxs for n, idxs in plan.agg.placements.items() if n in plan.pools}
    out, dropped = _place_nodes(job, plan.agg, on_nodes, ledger)
    book = job.book.fresh()
    for i, p in out.items():
        book.take(book.variant(job.units[i].needs, p.node), p.node)

    def where(i: int, vn: str) -> str | None:
        unit = job.units[i]
        for n in plan.seers[vn]:
            if n in unit.blocked:
                continue
            variant = book.variant(unit.needs, n)
            if book.refusal(variant, n) is None:
                book.take(variant, n)
                return n
        return None

    more, gone = _place_pools(job, plan.agg, on_pools, plan.pools, plan.slices, where, ledger)
    out.update(more)
    dropped.update(gone)
    stats["pooled"] = (
        f"yes: {len(plan.pools)} network-attached pools as nodes beside the real ones "
        f"({len(plan.pool_units)} pods may use them)"
    )
    return _realized(job, first, plan.agg, stats, out, dropped)


def _place_pools(
    job: Job,
    agg: AggregatedPlan,
    placements: Mapping[str, list[int]],
    pools: Mapping[str, PoolID],
    slices: Mapping[PoolID, list[ResourceSlice]],
    where: Callable[[int, str], str | None],
    ledger: Ledger,
) -> tuple[dict[int, PodPlan], dict[int, str]]:
    """Pool nodes' pods as real placements: each pool's pods get devices by the single-node
    allocator on the pool's node (`allocate_node`, as `expand_aggregated` does per node), then,
    per real node the pods run on (`where`: unit, pool node -> that node, None: none), the
    same devices in the real cluster's Problem of that pool — so the results read the real
    slices (their node selectors) — written and checked on the pool's part of the cluster (its
    slices and the claims holding its devices, those placed before included). The placed
    pods, and the dropped ones (unit -> the node named in its reason)."""
    out: dict[int, PodPlan] = {}
    dropped: dict[int, str] = {}
    order = {n: k for k, n in enumerate(job.nodes)}
    holders: dict[tuple[str, str], dict[tuple[str, str], ResourceClaim]] = {}
    for key, c in job.cluster.claims.items():
        alloc = c.status.allocation if c.status is not None else None
        for r in alloc.devices.results if alloc is not None else ():
            holders.setdefault((r.driver, r.pool), {})[key] = c
    for vn, idxs in placements.items():
        pid = pools[vn]
        claims = [c for i in idxs for c in job.units[i].claims]
        group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
        weights = [job.units[i].weight for i in idxs]
        problem, assignment = allocate_node(
            agg.ctx, vn, claims, group_of, floor=EXPAND_FLOOR, weights=weights
        )
        got = assignment or {}
        on: dict[str, list[tuple[int, list[int]]]] = {}
        at = 0
        for i in idxs:
            cis = list(range(at, at + len(job.units[i].claims)))
            at += len(cis)
            node = where(i, vn) if all(ci in got for ci in cis) else None
            if node is not None:
                on.setdefault(node, []).append((i, cis))
            else:
                dropped[i] = vn
        mine = holders.setdefault(pid, {})
        for node in sorted(on, key=lambda n: order[n]):
            placed = on[node]
            local = [ci for _, cis in placed for ci in cis]
            here = tuple(claims[ci] for ci in local)
            view = replace(ledger.cluster, slices=slices[pid], claims=dict(mine))
            real = build_problem(view, here, node, job.gates, cache=job.cache)
            done = ledger.results(real, here, _moved(problem, real, local, got))
            ledger.commit(done, node, view)
            for c in done:
                mine[c.key] = c
            k = 0
            for i, cis in placed:
                unit = job.units[i]
                out[i] = PodPlan(unit.name, node, done[k : k + len(cis)], None, unit.priority, placed=True)
                k += len(cis)
    return out, dropped


def _moved(source: Problem, target: Problem, claims: list[int], assignment: Assignment) -> Assignment:
    """The placements of `source`'s claims `claims` (in that order) in `target`, a Problem of
    those claims alone: the same alternatives (by claim and name) and devices (by id)."""
    alts = {(a.claim, a.name): a.index for a in target.alternatives}
    devices = {(d.driver, d.pool, d.name): d.index for d in target.devices}
    out: Assignment = {}
    for j, ci in enumerate(claims):
        out[j] = []
        for p in assignment[ci]:
            d = source.devices[p.device]
            out[j].append(
                Placement(
                    j, alts[(j, source.alternatives[p.alternative].name)], devices[(d.driver, d.pool, d.name)]
                )
            )
    return out


def expand_aggregated(job: Job, first: PlanOutcome, agg: AggregatedPlan, stats: Stats) -> PlanOutcome:
    """The aggregated plan's pods on their nodes: devices by the single-node allocator, each
    node's claims checked as one call (`planning.ledger.Ledger`); first fit when it places
    more weight. `stats`: the run's so far (first fit's), completed with the model's and the
    realized plan's summary (`judge`). Past `job.deadline` (`--timeout`) no further node is
    expanded: its pods are left out, the plan so far is kept (each node's devices are a
    search of their own, thousands of them at scale)."""
    out, dropped = _place_nodes(job, agg, agg.placements, Ledger(job))
    return _realized(job, first, agg, stats, out, dropped)


def _place_nodes(
    job: Job, agg: AggregatedPlan, placements: Mapping[str, list[int]], ledger: Ledger
) -> tuple[dict[int, PodPlan], dict[int, str]]:
    """Each node's pods with devices by the single-node allocator, the node's claims checked
    as one call: the placed pods, and the dropped ones (placed by the model, no devices on
    its node: unit -> node). Past `job.deadline` no further node is placed. A node equal up
    to names to one placed before, with pods of the same classes, reads that node's Problem
    and devices renamed instead of building its own (`aggregated.twins`: the same plan); its
    results are written and checked on its own view all the same."""
    out: dict[int, PodPlan] = {}
    dropped: dict[int, str] = {}
    twins = Twins(agg.ctx)
    for node, idxs in placements.items():
        if passed(job.deadline):
            break
        claims = [c for i in idxs for c in job.units[i].claims]
        view = agg.ctx.local(node)
        key = twins.key(node, view, idxs, claims)
        known = twins.known(key, node, view, claims)
        if known is not None:  # a twin's Problem and devices, renamed (`aggregated.twins`)
            problem, assignment = known
        else:
            group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
            weights = [job.units[i].weight for i in idxs]  # the plan's objective, also where pods drop
            problem, assignment = allocate_node(
                agg.ctx, node, claims, group_of, floor=EXPAND_FLOOR, weights=weights
            )
            twins.keep(key, view, problem, assignment)
        done = ledger.results(problem, tuple(claims), assignment or {})
        placed = [c for ci, c in enumerate(done) if ci in (assignment or {})]
        if placed:
            ledger.commit(placed, node, view)  # every node's claims checked, twins too
        at = 0
        for i in idxs:
            unit, n = job.units[i], len(job.units[i].claims)
            if all(ci in (assignment or {}) for ci in range(at, at + n)):
                out[i] = PodPlan(unit.name, node, done[at : at + n], None, unit.priority, placed=True)
            else:
                dropped[i] = node
            at += n
    return out, dropped


def _realized(
    job: Job,
    first: PlanOutcome,
    agg: AggregatedPlan,
    stats: Stats,
    out: dict[int, PodPlan],
    dropped: dict[int, str],
) -> PlanOutcome:
    """An aggregated model's plan once its pods are on nodes (`out`; `dropped`: placed by the
    model, no devices there: unit -> node): the pods outside the model, gangs, the reasons of
    the pods left out, the model's stats, the valid bound and status, first fit when it places
    more weight."""
    stats.update({"aggregated": "yes", **agg.stats})
    if dropped:  # pods, as the summary counts them (`solver.planning.outcome`)
        stats["expansion_dropped"] = sum(max(len(job.units[i].members), 1) for i in dropped)
    modelled = claimed_units(job)
    free = free_units(job, modelled, first, out)
    counts = gang_counts(job, set(out) | set(free))
    short = set(short_gangs(job, counts))
    if short:  # a pod the exact node allocation did not take left its gang short: none of it
        out = {i: p for i, p in out.items() if not short & set(job.units[i].gang_pods(job.gangs))}
        free = free_units(job, modelled, first, out)
    out.update(free)
    pods = []
    for i, unit in enumerate(job.units):
        pod = out.get(i) or _left_out(unit, first.pods[i], dropped.get(i))
        if not pod.placed and first.pods[i].placed and unit.gang_pods(job.gangs):
            pod.because(gang_reason(job, unit, out, ()))
        pods.append(pod)
    kept = sum(job.units[i].weight for i in free)  # pods without claims, outside gangs
    stats["model_objective"] = agg.objective + kept
    bound, source = valid_bound(job, modelled, agg.bound if agg.bound_proven else None)
    trivial = kept + total_weight(job, modelled)
    stats["cpsat_placed"] = sum(p.placed for p in pods)
    realized, first_weight = placed_weight(job.units, pods), placed_weight(job.units, first.pods)
    if realized < first_weight:
        told = judge(first_weight, kept + bound, trivial, source)
        stats["fallback"] = "first fit"
        return PlanOutcome(proven_pods(first.pods, told.status, job), "cpsat", stats, verdict=told)
    told = judge(realized, kept + bound, trivial, source)
    return PlanOutcome(proven_pods(pods, told.status, job), "cpsat", stats, verdict=told)


def _left_out(unit: Unit, was: PodPlan, dropped_on: str | None = None) -> PodPlan:
    """The unit not placed: first fit's reason, or — when the aggregated model put it on
    `dropped_on` and the node's exact device allocation did not take it — that."""
    why, reason = (was.why, was.reason) if was.reason else (Reason.of(Kind.LEFT_OUT), None)
    if dropped_on is not None:
        why, reason = Reason.of(Kind.DROPPED, unit.name, node=dropped_on), None
    texts = was.node_reasons if dropped_on is None else {}  # first fit's words per node, with its line
    return PodPlan(
        unit.name,
        None,
        list(unit.claims),
        reason,
        unit.priority,
        error=was.error,
        node_reasons=texts,
        why=why,
    )
