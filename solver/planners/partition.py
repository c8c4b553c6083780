"""Partitioned plans (`--partitions K`): for plans too big for one model (issue #14).

Why POP-style partitioning (Narayanan et al., "Solving Large-Scale Granular Resource
Allocation Problems Efficiently with POP", SOSP 2021): when pods and nodes are many and
interchangeable, splitting both at random into K parts and solving each part alone loses
little — every part looks like the whole, scaled down — while each model is K times smaller
and the parts run in parallel on an executor (`solver.executors`). What a part could not
place gets a second chance in a repair pass over every node, with what the parts placed
counted as in use.

Determinism: the split is a `random.Random(seed)` shuffle of the pods (a gang's pods move
together: its minCount is decided in one part) and of the nodes, dealt round robin; each part
is a pure function of its data (`solve_part`), and the parts are combined in part order, so
the plan is the same on every executor.

Soundness: parts must not share devices. Partitioning is refused when a ResourceSlice has no
`spec.nodeName` (network-attached or selector-scoped devices: two parts could take the same
device). Each part's placements pass the checker inside its run (`planning.ledger.Ledger`) on the
part's cluster (its nodes' slices, every claim and pod); the repair pass runs on the cluster
after the parts, so its checks see every part's allocations; `pipeline.plan` then verifies
node resources and gangs over the whole plan.

Bound and gap: the unpartitioned optimum is at most the aggregated model's column-generation
bound (with pods asking All / adminAccess over shared devices counted as placeable:
`bounds.valid_bound`), else the weight of every pod that may use some node at all;
the verdict's `bound` is that, its `gap` the weight between it and the plan. A plan above
the bound means it was none: the weight of every pod is reported instead, never the plan's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..api.cluster import Cluster
from ..errors import InputError
from ..executors import run_units
from ..planning.job import Options, Unit, placed_weight
from ..planning.outcome import PlanOutcome, PodPlan, Stats, record
from ..planning.resolve import make_job
from ..planning.snapshot import Snapshot
from .aggregated.master import AggregatedPlan, aggregate
from .bounds import sequential_units, verdict
from .run import run


@dataclass(frozen=True)
class PartTask:
    """One part as plain data: the cluster with only the part's nodes' slices, its pods and
    nodes, and the run's options (without an executor: a part runs where it is sent)."""

    index: int
    cluster: Cluster
    units: tuple[Unit, ...]
    nodes: tuple[str, ...]
    options: Options


def solve_part(task: PartTask) -> PlanOutcome:
    """The plan of one part: first fit, then the chosen allocator, every placement checked
    (`planners.run.run`). A pure function of `task`, so it may run on any executor."""
    if not task.units or not task.nodes:
        return PlanOutcome([_unplaced(u, "no node in this part") for u in task.units], task.options.allocator)
    return run(task.cluster, task.units, task.nodes, task.options)


def split(
    units: Sequence[Unit], nodes: Sequence[str], k: int, seed: int
) -> tuple[list[list[int]], list[list[str]]]:
    """Unit indices and nodes of each of `k` parts: seeded shuffles dealt round robin. A gang's
    units (pods naming one PodGroup) are dealt as one."""
    rng = random.Random(seed)
    atoms: dict[object, list[int]] = {}
    for i, u in enumerate(units):
        group = next((m.group for m in u.members if m.group is not None), None)
        atoms.setdefault(("gang", group) if group is not None else ("unit", i), []).append(i)
    order = list(atoms.values())
    rng.shuffle(order)
    parts_units: list[list[int]] = [[] for _ in range(k)]
    for j, atom in enumerate(order):
        parts_units[j % k].extend(atom)
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    pos = {n: i for i, n in enumerate(nodes)}
    parts_nodes = [sorted(shuffled[j::k], key=pos.__getitem__) for j in range(k)]
    return [sorted(p) for p in parts_units], parts_nodes


def plan_partitioned(
    cluster: Cluster,
    units: Sequence[Unit],
    nodes: Sequence[str],
    options: Options,
) -> PlanOutcome:
    """The plan of `units` over `nodes` in `options.partitions` parts plus a repair pass with
    `options.repair` (reference: first fit; cpsat: the per-device or aggregated model), one
    PodPlan per unit in input order."""

    k = options.partitions
    if k < 1:
        raise InputError(f"partitions must be at least 1, got {k}")
    shared = [s.metadata.name for s in cluster.slices if not s.spec.node_name]
    if shared:
        raise InputError(
            f"--partitions needs node-local devices only; ResourceSlice {shared[0]} has no "
            "spec.nodeName (two parts could take the same device)"
        )
    start = time.perf_counter()
    part_units, part_nodes = split(units, nodes, k, options.seed)
    inner = replace(options, executor=None, partitions=1, progress=None, cache=None)
    by_node: dict[str, list[int]] = {}
    for i, s in enumerate(cluster.slices):
        by_node.setdefault(s.spec.node_name or "", []).append(i)
    tasks = []
    for j in range(k):
        keep = sorted(i for n in part_nodes[j] for i in by_node.get(n, ()))
        view = replace(cluster, slices=[cluster.slices[i] for i in keep])
        mine = tuple(units[i] for i in part_units[j])
        tasks.append(PartTask(j, view, mine, tuple(part_nodes[j]), inner))
    outcomes = run_units(options.executor, solve_part, tasks)
    t_parts = time.perf_counter() - start
    pods: list[PodPlan | None] = [None] * len(units)
    for j, out in enumerate(outcomes):
        for i, p in zip(part_units[j], out.pods, strict=True):
            pods[i] = p
    placed_parts = sum(1 for p in pods if p is not None and p.placed)
    left = [i for i, p in enumerate(pods) if p is None or not p.placed]
    if left:
        placed = _members([p for p in pods if p is not None and p.placed], units)
        after = Snapshot(cluster, options.feature_gates)
        after.place_all(placed)
        fixed = replace(inner, allocator=options.repair)
        again = run(after.cluster, [units[i] for i in left], list(nodes), fixed)
        for i, p in zip(left, again.pods, strict=True):
            pods[i] = p
    done = [p for p in pods if p is not None]
    objective = placed_weight(units, done)
    bound, bound_kind = _bound(cluster, units, nodes, options)
    beaten = None
    if objective > bound:  # then it was no bound: never raised to meet the plan
        beaten = (_trivial(units, nodes), f"pods that may use some node (a bound of {bound} was beaten)")
    told = verdict(objective, bound, bound_kind, beaten=beaten, partitioned=True)
    stats: Stats = {
        "partitions": k,
        "placed_by_parts": placed_parts,
        "placed_by_repair": sum(1 for p in done if p.placed) - placed_parts,
        "repair": options.repair,
        "part_placed": [o.placed for o in outcomes],
        "part_status": [None if o.verdict is None else o.verdict.status.value for o in outcomes],
        "parts_time": round(t_parts, 3),
        "time": round(time.perf_counter() - start, 3),
    }
    if options.deadline is not None and any(o.stats.get("cut_short_by_timeout") for o in outcomes):
        options.deadline.fire()  # a part on a worker saw it pass
    record(stats, options.deadline)
    return PlanOutcome(done, options.allocator, stats, verdict=told)


def _bound(
    cluster: Cluster, units: Sequence[Unit], nodes: Sequence[str], options: Options
) -> tuple[int, str]:
    """An upper bound on the unpartitioned plan's weight, and where it comes from: the
    aggregated model's column-generation bound (`master.aggregate(bound_only=True)`: classes
    and an LP, no integer model) plus every claimless pod, where that model applies; else
    the weight of every pod that may use some node."""
    trivial = _trivial(units, nodes)
    if not all(u.claims for u in units) or any(m.group for u in units for m in u.members):
        return trivial, "pods that may use some node"
    job = make_job(cluster, units, nodes, replace(options, partitions=1))
    agg = aggregate(job, None, bound_only=True)
    if not isinstance(agg, AggregatedPlan) or not agg.bound_proven:
        return trivial, "pods that may use some node"
    loose = sequential_units(cluster, units, job.gates)  # see bounds.valid_bound
    relaxed = agg.bound + sum(units[i].weight for i in loose)
    kind = "aggregated model (column generation)"
    return min(relaxed, trivial), kind + (
        ", All / adminAccess pods over shared devices as placeable" if loose else ""
    )


def _trivial(units: Sequence[Unit], nodes: Sequence[str]) -> int:
    """The weight of every pod that may use some node: no plan places more."""
    return sum(u.weight for u in units if any(n not in u.blocked for n in nodes))


def _members(placed: list[PodPlan], units: Sequence[Unit]) -> list[PodPlan]:
    """Placed unit plans as one plan per member Pod (what `Snapshot.place` binds), so the
    repair pass counts their node resources as used."""
    by_name = {u.name: u for u in units}
    out = []
    for p in placed:
        unit = by_name.get(p.name)
        members = unit.members if unit is not None else ()
        if not members:
            out.append(p)
        out.extend(replace(p, name=m.name, pod=m.pod) for m in members)
    return out


def _unplaced(unit: Unit, reason: str) -> PodPlan:
    return PodPlan(unit.name, None, list(unit.claims), reason, unit.priority)


__all__ = ["PartTask", "plan_partitioned", "solve_part", "split"]
