"""The allocators of a plan: first fit (the scheduler's way) and CP-SAT (the best), one protocol.

Why a protocol: the pipeline (`solver.pipeline`) runs first fit, then hands its plan to the
chosen `Improver`, which may only improve on it. First fit is the reference allocator pod
after pod; CP-SAT builds one model over every pod and node, hinted with the first-fit plan,
and owns the "never worse than first fit" policy — in one place, for `allocate`, independent
claims and many-pod plans alike.

Results and checks are wired once (`planning.ledger.Ledger`): every placement becomes
`status.allocation` through `solver.results` and passes `solver.check` against the cluster
plus everything placed before it, so a bug in precompute or an allocator surfaces as an
error, never as a wrong allocation. The plan's data (`Job`, `Unit`, `PodPlan`, ...) is
`solver.planning.job`; its gang rules `solver.planning.gangs`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal, Protocol

from . import interrupt
from .aggregate.classes import claim_key
from .aggregate.master import PER_DEVICE_MAX, AggregatedPlan, NodeCosts, aggregate
from .aggregate.patterns import EXPAND_FLOOR, allocate_node
from .aggregate.pools import NO_POOLS, PoolPlan, pooled
from .api.cluster import Cluster
from .api.models import ResourceClaim
from .cpsat import solve
from .demand import Variant, demand_total
from .errors import SearchAborted
from .gates import FeatureGates
from .planning.gangs import (
    claimed_units,
    free_units,
    gang_counts,
    gang_infos,
    gang_reason,
    short_gangs,
)
from .planning.job import (
    DROPPED,
    Job,
    PlanOutcome,
    PodPlan,
    Unit,
    book_limits,
    int_stat,
    placed_weight,
)
from .planning.ledger import Ledger
from .problem.build import build_problem
from .problem.flat import Assignment, Placement, Problem, claim_weight
from .problem.merge import build_multi_node_problem
from .problem.resources import shortfalls
from .reference import DEFAULT_MAX_STEPS

HINT_STEPS = 200_000
"""Step budget of the first-fit search that seeds CP-SAT: past it, CP-SAT searches alone."""


@dataclass(frozen=True)
class PodForm:
    """One pod of the plan (a unit) as the model sees it on some of its nodes: the unit's claims
    plus the special extended-resource claims of that form (`solver.demand.Variant`). A unit
    has one form per distinct variant over its nodes; at most one of them is placed."""

    unit: int
    variant: Variant
    nodes: tuple[str | None, ...]
    claims: tuple[ResourceClaim, ...]


@dataclass(frozen=True)
class PlanModel:
    """What CP-SAT solves: the Problem of the placeable pods' forms (`forms`; `offsets`: each
    one's first claim index) and the first-fit plan as a hint."""

    problem: Problem
    forms: list[PodForm]
    offsets: list[int]
    hint: Assignment
    hint_nodes: dict[int, str]


class Improver(Protocol):
    """Improves a first-fit plan; never returns less placed weight than it was given. (Named
    apart from the CLI's `--allocator` choice, `cli.options.AllocatorChoice`.)"""

    name: ClassVar[str]
    first_fit_steps: ClassVar[int]
    """Step budget of the first-fit search this allocator starts from."""

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome: ...


class Reference:
    """Upstream's answer: the first-fit plan as it is."""

    name: ClassVar[str] = "reference"
    first_fit_steps: ClassVar[int] = DEFAULT_MAX_STEPS

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome:
        return first


class Cpsat:
    """The best plan: one CP-SAT model over every pod and node (one node: the single-node
    Problem with pod groups; several: `problem.merge` + `encoders.nodes`), hinted with the
    first-fit plan. If it places less weight than first fit (placing pods together is not
    always the same as one after the other: an earlier pod's share of a device shrinks a later
    All-set; an allocated admin-access placement stops counting against capacity), the
    first-fit plan is kept. For the same reason the model's bound is no bound of such pods:
    `valid_bound` relaxes it (`sequential_units`), and the status is OPTIMAL only when the
    plan returned reaches that valid bound (`_summary`)."""

    name: ClassVar[str] = "cpsat"
    first_fit_steps: ClassVar[int] = HINT_STEPS

    def __init__(self, aggregation: Literal["auto", "always", "never"] = "auto") -> None:
        """`aggregation`: the aggregated plan model (`solver.aggregate.master`) where it applies and pays
        ("auto"), wherever it applies ("always", for tests), or never (the per-device model)."""
        self.aggregation = aggregation

    def model(self, job: Job, first: PlanOutcome) -> PlanModel | None:
        """The Problem of every pod that may be placed, with the first-fit plan as its hint
        (None when no pod can go anywhere). Public so benchmarks can time the solve alone."""
        forms = pod_forms(job)
        if not forms:
            return None
        problem, offsets = model_problem(job, forms)
        if job.gangs:
            problem = replace(problem, gangs=gang_infos(job, [f.unit for f in forms], first))
        problem = replace(problem, ordered_pods=interchangeable(job, forms))
        hint, hint_nodes = as_hint(problem, forms, offsets, first)
        return PlanModel(problem, forms, offsets, hint, hint_nodes)

    def without_first_fit(self, job: Job) -> PlanOutcome | str | None:
        """At scale, the aggregated model before first fit, and only it: its plan when the
        model proves it optimal (then no plan places more weight, first fit's included, so
        first fit need not run); None otherwise, and the run goes on as always (first fit,
        then `improve`, which solves the model again with first fit's patterns) — or, when
        the aggregated model does not apply, why (for `improve(..., not_aggregated=)`: the
        reason does not depend on first fit's plan, and finding it may cost node classes).

        Why: on a cluster of thousands of nodes first fit costs more than the model, grows
        faster (each pod left out asks every node), and an OPTIMAL plan never needs it. Only
        where the per-device model would not run anyway (pods x nodes above
        `PER_DEVICE_MAX`), with `aggregation` "auto", every pod with claims (pods without
        claims follow first fit's plan) and no gang (gangs' needs read first fit's plan).
        The pods left out get no reason here: `explain.crowding.crowded_reasons` words them
        on the returned plan (a pod that fits alone nowhere: every node's reason on the
        input's cluster). `stats` say first fit did not run (no `reference_placed`)."""
        if self.aggregation != "auto" or job.gangs or interrupt.requested():
            return None
        if not _beyond_per_device(job) or not all(u.claims for u in job.units):
            return None
        stats: dict[str, object] = {
            "nodes": len(job.nodes),
            "pods": sum(max(len(u.members), 1) for u in job.units),
        }
        nothing = PlanOutcome(
            [PodPlan(u.name, None, list(u.claims), None, u.priority) for u in job.units], "reference", stats
        )
        pools = plan_pooled(job, nothing, dict(stats))
        if isinstance(pools, PlanOutcome):
            out = pools
        else:
            agg = aggregate(job, None)
            if isinstance(agg, str):
                return agg if pools == NO_POOLS else f"{agg}; over network-attached pools: {pools}"
            out = expand_aggregated(job, nothing, agg, dict(stats))
        placed = any(p.placed for p in out.pods)
        # Ctrl-C during the model: first fit would now place nothing, so the model's plan so
        # far (checked, its status from its own bound) is the best there is.
        interrupted = interrupt.requested() and placed
        if not interrupted and (
            out.stats.get("status") != "OPTIMAL" or out.stats.get("fallback") or not placed
        ):
            return None
        for p in out.pods:  # left out: worded on the plan by `crowded_reasons` (or as interrupted)
            if not p.placed and p.reason == LEFT_OUT:
                p.reason = None
        out.stats["first_fit"] = (
            "not run: interrupted during the aggregated model"
            if interrupted
            else "not run: the aggregated model proved its plan optimal"
        )
        return out

    def improve(self, job: Job, first: PlanOutcome, *, not_aggregated: str | None = None) -> PlanOutcome:
        """`not_aggregated`: why the aggregated model does not apply, when known already
        (`without_first_fit`)."""
        stats = dict(first.stats)
        if interrupt.requested():
            return PlanOutcome(first.pods, self.name, stats)
        if self.aggregation == "auto" and _beyond_per_device(job) and complete(job, first):
            # First fit placed every pod that may be placed: no plan places more weight, so its
            # plan is optimal with that weight as the bound ("What a status proves"), and
            # neither model needs to run. Only at the aggregated model's scale: below it the
            # per-device model also weighs the strategy's device preferences after the weight
            # (pack onto shared devices, subrequest order), which first fit does not.
            weight = placed_weight(job.units, first.pods)
            stats["aggregated"] = "no: first fit placed every pod that may be placed"
            status = _summary(stats, weight, weight, weight, COMPLETE)
            return PlanOutcome(_proven(first.pods, status, job), self.name, stats)
        agg: PlanOutcome | str = "disabled"
        if not_aggregated is not None:
            agg = not_aggregated
        elif self.aggregation != "never":
            agg = plan_aggregated(job, first, force=self.aggregation == "always")
        if isinstance(agg, PlanOutcome):
            out = agg
            if not _refine(job, out):
                return out
            # A gap remains: the per-device model, hinted with the aggregated plan, may close it
            # (an aggregated model that did not converge can stay far below it); the better
            # checked plan is kept, and the smaller of the two valid bounds.
            again = dict(out.stats, aggregated="yes, then the per-device model (a gap remained)")
            prior = (int_stat(out.stats, "bound"), str(out.stats["bound_from"]))
            kept = "aggregated model" if not out.stats.get("fallback") else "first fit"
            return self._per_device(job, out, again, kept, prior)
        stats["aggregated"] = f"no: {agg}"
        return self._per_device(job, first, stats, "first fit")

    def _per_device(
        self,
        job: Job,
        start: PlanOutcome,
        stats: dict[str, object],
        start_name: str,
        prior: tuple[int, str] | None = None,
    ) -> PlanOutcome:
        """The per-device model over every pod and node, hinted with `start` (first fit's plan,
        or the aggregated one), `start` kept when it places more weight (`start_name` says
        which, in `stats["fallback"]`). `prior`: a valid bound proven before, and its source."""
        model = self.model(job, start)
        if model is None:
            return PlanOutcome(start.pods, self.name, stats)
        problem = model.problem
        outcome = solve(
            problem,
            mode="free",
            strategy=job.strategy,
            time_limit=job.time_limit,
            seed=job.seed,
            hint=model.hint,
            hint_nodes=model.hint_nodes,
            # the time limit is CP-SAT work (deterministic): the same input and seed, the same
            # plan; the wall clock only through the caller's explicit deadline
            deadline=job.deadline,
        )
        stats.update(
            {
                "devices": len(problem.devices),
                "alternatives": len(problem.alternatives),
                "cpsat_status": outcome.status,
                "cpsat_wall_time": outcome.wall_time,
                "cpsat_objective": outcome.objective,
            }
        )
        chosen = _chosen_forms(model, outcome.assignment or {}, outcome.nodes)
        stats["cpsat_placed"] = len(chosen)
        weight = sum(job.units[i].weight for i in chosen)
        proven = outcome.stage_status.get("placed") == "OPTIMAL"
        modelled = {f.unit for f in model.forms}
        free = free_units(job, modelled, start, chosen)
        kept = sum(job.units[i].weight for i in free)
        model_bound = weight if proven else outcome.stage_bound.get("placed")
        bound, source = valid_bound(job, modelled, model_bound)
        bound += kept
        if prior is not None and prior[0] < bound:
            bound, source = prior
        trivial = kept + _total(job, modelled)
        start_weight = placed_weight(job.units, start.pods)
        if outcome.assignment is None or weight + kept < start_weight:
            status = _summary(stats, start_weight, bound, trivial, source)
            stats["fallback"] = start_name
            return PlanOutcome(_proven(start.pods, status, job), self.name, stats)
        stats.pop("fallback", None)
        status = _summary(stats, weight + kept, bound, trivial, source)
        pods = self._decode(job, model, outcome.assignment, outcome.nodes, chosen, start, free)
        return PlanOutcome(_proven(pods, status, job), self.name, stats)

    def _decode(
        self,
        job: Job,
        model: PlanModel,
        assignment: Assignment,
        nodes: dict[int, str],
        chosen: dict[int, int],
        first: PlanOutcome,
        free: dict[int, PodPlan],
    ) -> list[PodPlan]:
        ledger = Ledger(job)
        problem = model.problem
        plans: list[PodPlan] = []
        on_node: dict[str | None, list[ResourceClaim]] = {}
        modelled = {f.unit for f in model.forms}
        for i, unit in enumerate(job.units):
            f = chosen.get(i)
            if f is None:
                was = first.pods[i]
                if i in free:
                    plans.append(free[i])  # no claims and no node limits where it may go
                    continue
                reason = (was.reason if not was.placed else None) or (
                    "left out so that more (or higher-priority) pods fit"
                )
                if was.placed and i not in modelled:  # a free pod of a gang that is not placed
                    reason = gang_reason(job, unit, chosen, free)
                plans.append(
                    PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error)
                )
                continue
            form = model.forms[f]
            node = nodes.get(f, form.nodes[0]) if problem.nodes else form.nodes[0]
            local = {k: assignment[model.offsets[f] + k] for k in range(len(form.claims))}
            done = ledger.results(replace(problem, node=node), form.claims, local) if form.claims else []
            on_node.setdefault(node, []).extend(done)
            statuses = form.variant.statuses
            plans.append(PodPlan(unit.name, node, done, None, unit.priority, placed=True, extended=statuses))
        for n in job.nodes:  # each node's claims as one call, nodes in order
            if on_node.get(n):
                ledger.commit(on_node[n], n)
        return plans


LEFT_OUT = "left out so that more (or higher-priority) pods fit"
"""The reason of a pod the model leaves out when first fit gave none."""

COMPLETE = "pods that may be placed (first fit placed every one)"
"""`bound_from` of a plan first fit completed (`complete`)."""


def complete(job: Job, first: PlanOutcome) -> bool:
    """Whether `first` places every unit that may be placed at all: each unit it leaves out is
    refused by every node before the plan — the pod's scheduling constraints (`Unit.blocked`)
    or the node resources it needs there, against what is free before any pod of the plan
    (they only shrink as pods are placed). Such a plan places the weight of every pod that may
    be placed, which bounds every valid plan: it is optimal. A unit left out for any other
    reason (devices taken, a gang short, a search aborted or interrupted) may be placeable,
    so the answer is no. Stops at the first such unit: on a crowded cluster this costs one
    unit's nodes."""
    book = job.book
    for unit, pod in zip(job.units, first.pods, strict=True):
        if pod.placed:
            continue
        for n in job.nodes:
            if n not in unit.blocked and book.refusal(book.variant(unit.needs, n), n) is None:
                return False
    return True


def plan_aggregated(
    job: Job, first: PlanOutcome, cost: NodeCosts | None = None, force: bool = False
) -> PlanOutcome | str:
    """The aggregated model's plan (`aggregate.master.aggregate`: the one model of the plan at
    scale, also what-if's with `cost`), its pods on their nodes and checked
    (`expand_aggregated`); or why the model does not apply. `force`: wherever it applies."""
    if cost is None:
        pools = plan_pooled(job, first, dict(first.stats))
        if isinstance(pools, PlanOutcome):
            return pools
    agg = aggregate(job, first, cost, force=force)
    if isinstance(agg, str):
        return agg
    return expand_aggregated(job, first, agg, dict(first.stats))


def plan_pooled(job: Job, first: PlanOutcome, stats: dict[str, object]) -> PlanOutcome | str:
    """The plan of the aggregated model over network-attached pools (`aggregate.pools`), its
    pods on their nodes and checked (`expand_pooled`); or why that model does not apply.
    Tried before the model over nodes: where it applies, that one does not (the nodes share
    the pools) and finding out costs a precompute of every pool per node."""
    plan = pooled(job, first if first.placed else None)
    if isinstance(plan, str):
        return plan
    return expand_pooled(job, first, plan, stats)


def expand_pooled(job: Job, first: PlanOutcome, plan: PoolPlan, stats: dict[str, object]) -> PlanOutcome:
    """The pool model's plan as real placements: each pool's pods get devices by the
    single-node allocator on the pool's node (`allocate_node`, as `expand_aggregated` does per
    node), then, per real node the pods run on (`PoolPlan.node_of`), the same devices in the
    real cluster's Problem of that pool — so the results read the real slices (their node
    selectors) — written and checked on the pool's part of the cluster (its slices and the
    claims holding its devices, those placed before included)."""
    ledger = Ledger(job)
    out: dict[int, PodPlan] = {}
    dropped: dict[int, str] = {}
    order = {n: k for k, n in enumerate(job.nodes)}
    holders: dict[tuple[str, str], dict[tuple[str, str], ResourceClaim]] = {}
    for key, c in job.cluster.claims.items():
        alloc = c.status.allocation if c.status is not None else None
        for r in alloc.devices.results if alloc is not None else ():
            holders.setdefault((r.driver, r.pool), {})[key] = c
    for vn, idxs in plan.agg.placements.items():
        pid = plan.pools[vn]
        claims = [c for i in idxs for c in job.units[i].claims]
        group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
        weights = [job.units[i].weight for i in idxs]
        problem, assignment = allocate_node(
            plan.agg.ctx, vn, claims, group_of, floor=EXPAND_FLOOR, weights=weights
        )
        got = assignment or {}
        on: dict[str, list[tuple[int, list[int]]]] = {}
        at = 0
        for i in idxs:
            cis = list(range(at, at + len(job.units[i].claims)))
            at += len(cis)
            if all(ci in got for ci in cis):
                on.setdefault(plan.node_of[i], []).append((i, cis))
            else:
                dropped[i] = plan.node_of[i]
        mine = holders.setdefault(pid, {})
        for node in sorted(on, key=lambda n: order[n]):
            placed = on[node]
            local = [ci for _, cis in placed for ci in cis]
            here = tuple(claims[ci] for ci in local)
            view = replace(ledger.cluster, slices=plan.slices[pid], claims=dict(mine))
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
    stats["pooled"] = f"yes: {len(plan.pools)} network-attached pools as the model's nodes"
    return _realized(job, first, plan.agg, stats, out, dropped)


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


def expand_aggregated(
    job: Job, first: PlanOutcome, agg: AggregatedPlan, stats: dict[str, object]
) -> PlanOutcome:
    """The aggregated plan's pods on their nodes: devices by the single-node allocator, each
    node's claims checked as one call (`planning.ledger.Ledger`); first fit when it places
    more weight. `stats`: the run's so far (first fit's), completed with the model's and the
    realized plan's summary (`_summary`)."""
    ledger = Ledger(job)
    out: dict[int, PodPlan] = {}
    dropped: dict[int, str] = {}  # placed by the model, no devices on its node: unit -> node
    for node, idxs in agg.placements.items():
        claims = [c for i in idxs for c in job.units[i].claims]
        group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
        weights = [job.units[i].weight for i in idxs]  # the plan's objective, also where pods drop
        problem, assignment = allocate_node(
            agg.ctx, node, claims, group_of, floor=EXPAND_FLOOR, weights=weights
        )
        done = ledger.results(problem, tuple(claims), assignment or {})
        placed = [c for ci, c in enumerate(done) if ci in (assignment or {})]
        if placed:
            ledger.commit(placed, node, agg.ctx.local(node))
        at = 0
        for i in idxs:
            unit, n = job.units[i], len(job.units[i].claims)
            if all(ci in (assignment or {}) for ci in range(at, at + n)):
                out[i] = PodPlan(unit.name, node, done[at : at + n], None, unit.priority, placed=True)
            else:
                dropped[i] = node
            at += n
    return _realized(job, first, agg, stats, out, dropped)


def _realized(
    job: Job,
    first: PlanOutcome,
    agg: AggregatedPlan,
    stats: dict[str, object],
    out: dict[int, PodPlan],
    dropped: dict[int, str],
) -> PlanOutcome:
    """An aggregated model's plan once its pods are on nodes (`out`; `dropped`: placed by the
    model, no devices there: unit -> node): the pods outside the model, gangs, the reasons of
    the pods left out, the model's stats, the valid bound and status, first fit when it places
    more weight."""
    stats.update({"aggregated": "yes", **agg.stats})
    if dropped:  # pods, as the summary counts them (`solver.output.summary`)
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
            pod.reason = gang_reason(job, unit, out, ())
        pods.append(pod)
    kept = sum(job.units[i].weight for i in free)  # pods without claims, outside gangs
    stats["model_objective"] = agg.objective + kept
    bound, source = valid_bound(job, modelled, agg.bound if agg.bound_proven else None)
    trivial = kept + _total(job, modelled)
    stats["cpsat_placed"] = sum(p.placed for p in pods)
    realized, first_weight = placed_weight(job.units, pods), placed_weight(job.units, first.pods)
    if realized < first_weight:
        status = _summary(stats, first_weight, kept + bound, trivial, source)
        stats["fallback"] = "first fit"
        return PlanOutcome(_proven(first.pods, status, job), Cpsat.name, stats)
    status = _summary(stats, realized, kept + bound, trivial, source)
    return PlanOutcome(_proven(pods, status, job), Cpsat.name, stats)


def _left_out(unit: Unit, was: PodPlan, dropped_on: str | None = None) -> PodPlan:
    """The unit not placed: first fit's reason, or — when the aggregated model put it on
    `dropped_on` and the node's exact device allocation did not take it — that."""
    reason = was.reason or LEFT_OUT
    if dropped_on is not None:
        reason = (
            f"{DROPPED} {dropped_on}, but the exact device allocation there "
            "found no devices for it beside that node's other pods"
        )
    texts = was.node_reasons if dropped_on is None else {}  # first fit's words per node, with its line
    return PodPlan(
        unit.name, None, list(unit.claims), reason, unit.priority, error=was.error, node_reasons=texts
    )


ALLOCATORS: dict[str, Improver] = {"reference": Reference(), "cpsat": Cpsat()}


def pod_forms(job: Job) -> list[PodForm]:
    """Each unit's forms over the nodes it may use (scheduling constraints, node resources
    before the plan), in unit order then first node; units that fit nowhere are left out. A
    pod without claims is modelled when node limits bind it or its gang chooses among
    topology domains (its node then matters to the gang's other pods)."""
    book = job.book
    forms: list[PodForm] = []
    for i, unit in enumerate(job.units):
        by_key: dict[tuple[object, ...], tuple[Variant, list[str | None]]] = {}
        for n in job.nodes:
            if n in unit.blocked:
                continue
            v = book.variant(unit.needs, n)
            if book.refusal(v, n):
                continue
            by_key.setdefault(v.key, (v, []))[1].append(n)
        chooses = any(len(job.gangs[g].domains) > 1 for g in unit.gang_pods(job.gangs))
        for v, ns in by_key.values():
            claims = (*unit.claims, *v.claims)
            if claims or book_limits(job, ns) or chooses:
                forms.append(PodForm(i, v, tuple(ns), claims))
    return forms


def model_problem(job: Job, forms: list[PodForm]) -> tuple[Problem, list[int]]:
    """The Problem of the forms, and each one's first claim index. One node without node
    limits: the single-node Problem with pod groups; otherwise the merged multi-node Problem
    with node resources (`encoders.resources`)."""
    offsets, at = [], 0
    for f in forms:
        offsets.append(at)
        at += len(f.claims)
    priorities = [job.units[f.unit].priority for f in forms]
    if len(job.nodes) == 1 and not book_limits(job, job.nodes):
        claims = [c for f in forms for c in f.claims]
        group_of = [g for g, f in enumerate(forms) for _ in f.claims]
        problem = build_problem(
            job.cluster,
            claims,
            job.nodes[0],
            job.gates,
            cache=job.cache,
            priorities=[priorities[g] for g in group_of],
            groups=group_of,
        )
        return replace(problem, group_weight=_group_weights(job, forms)), offsets
    real = [n for n in job.nodes if n is not None]
    group_nodes = {
        g: tuple(n for n in f.nodes if n is not None) for g, f in enumerate(forms) if len(f.nodes) < len(real)
    }
    problem = build_multi_node_problem(
        job.cluster,
        [list(f.claims) for f in forms],
        real,
        job.gates,
        job.cache,
        priorities=priorities,
        group_nodes=group_nodes,
    )
    by_unit: dict[int, list[int]] = {}
    for g, f in enumerate(forms):
        by_unit.setdefault(f.unit, []).append(g)
    # Forms are only allowed where they fit the free amounts alone, so a resource a node does
    # not report never binds there: the free amounts are the limits.
    limits = {n: dict(free) for n in real if (free := job.book.free.get(n)) is not None}
    problem = replace(
        problem,
        group_demand={g: dict(f.variant.demand) for g, f in enumerate(forms) if f.variant.demand},
        node_limits={n: lim for n, lim in limits.items() if lim},
        bare_groups={g: priorities[g] for g, f in enumerate(forms) if not f.claims},
        exclusive_groups=tuple(tuple(gs) for gs in by_unit.values() if len(gs) > 1),
        group_weight=_group_weights(job, forms),
    )
    return problem, offsets


def _group_weights(job: Job, forms: list[PodForm]) -> dict[int, int]:
    """`Problem.group_weight`: the forms of units whose weight is not their priority's (pods
    sharing a claim: each pod counts with its own weight)."""
    out = {}
    for g, f in enumerate(forms):
        unit = job.units[f.unit]
        if unit.weight != claim_weight(unit.priority):
            out[g] = unit.weight
    return out


def interchangeable(job: Job, forms: list[PodForm]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Classes of interchangeable pods (`Problem.ordered_pods`): units whose claims, priority,
    blocked nodes, node-resource demand, gangs and forms (nodes, special claims) are the same,
    each unit as its form groups, in queue order (the units' order: equal priorities)."""
    groups: dict[int, list[int]] = {}
    for g, f in enumerate(forms):
        groups.setdefault(f.unit, []).append(g)
    classes: dict[Hashable, list[tuple[int, ...]]] = {}
    for i, gs in groups.items():
        u = job.units[i]
        key = (
            tuple(claim_key(c) for c in u.claims),
            u.priority,
            frozenset(n for n in u.blocked),
            tuple(sorted(demand_total(u.needs).items())),
            tuple(sorted(u.gang_pods(job.gangs).items())),
            tuple(_form_key(forms[g]) for g in gs),
        )
        classes.setdefault(key, []).append(tuple(gs))
    return tuple(tuple(units) for units in classes.values() if len(units) > 1)


def _form_key(form: PodForm) -> Hashable:
    variant = form.variant
    return (form.nodes, tuple(claim_key(c) for c in variant.claims), tuple(sorted(variant.demand.items())))


def _chosen_forms(model: PlanModel, assignment: Assignment, nodes: dict[int, str]) -> dict[int, int]:
    """unit -> the form the solution places (a form with claims is placed when its first
    claim is; a bare form when it has a node)."""
    out: dict[int, int] = {}
    for g, f in enumerate(model.forms):
        placed = model.offsets[g] in assignment if f.claims else g in nodes
        if placed:
            out[f.unit] = g
    return out


def as_hint(
    problem: Problem, forms: list[PodForm], offsets: list[int], first: PlanOutcome
) -> tuple[Assignment, dict[int, str]]:
    """The first-fit plan in the model's indices, and its node per group (the form of each
    placed pod is the one for the node first fit chose)."""
    devices = {(d.driver, d.pool, d.name): d.index for d in problem.devices}
    alts = {(a.claim, a.name): a.index for a in problem.alternatives}
    hint: Assignment = {}
    hint_nodes: dict[int, str] = {}
    for g, form in enumerate(forms):
        pod = first.pods[form.unit]
        if not pod.placed or pod.node not in form.nodes:
            continue
        if pod.node is not None:
            hint_nodes[g] = pod.node
        for k, claim in enumerate(pod.claims):
            ci = offsets[g] + k
            alloc = claim.status.allocation if claim.status else None
            if alloc is None:
                continue
            hint[ci] = [
                Placement(ci, alts[(ci, r.request)], devices[(r.driver, r.pool, r.device)])
                for r in alloc.devices.results
                if (r.driver, r.pool, r.device) in devices and (ci, r.request) in alts
            ]
    return hint, hint_nodes


def _proven(pods: list[PodPlan], status: str, job: Job) -> list[PodPlan]:
    """First-fit pods whose search was aborted: if CP-SAT proved the plan optimal, they cannot
    be placed (no error); otherwise neither search could tell, which stays an error."""
    out = []
    for p in pods:
        if isinstance(p.error, SearchAborted):
            if status == "OPTIMAL":
                p = replace(p, error=None)
            else:
                p = replace(
                    p,
                    error=SearchAborted(
                        f"filter operation aborted: neither the reference search ({HINT_STEPS} steps) nor "
                        f"CP-SAT ({job.time_limit} s) found an allocation; CP-SAT status {status}"
                    ),
                )
        out.append(p)
    return out


def _summary(stats: dict[str, object], realized: int, bound: int, trivial: int, source: str) -> str:
    """The plan's honest summary, and its status: the realized plan's weight (`realized`, the
    plan returned: the model's, or first fit's when that places more), a bound valid for the
    upstream semantics (`valid_bound`) and the gap. OPTIMAL only when the realized weight
    reaches the bound; FEASIBLE otherwise.

    A realized plan above the bound means the bound was not valid (a model stricter than
    upstream that `sequential_units` does not know of): the bound is never raised to meet the
    plan (that would print gap 0 for nothing proven) — it falls back to `trivial`, the weight
    of every pod that may be placed, which no plan exceeds."""
    if realized > bound:
        bound, source = trivial, f"pods that may be placed (the model's bound, {bound}, was beaten)"
    status = "OPTIMAL" if realized == bound else "FEASIBLE"
    stats.update(
        {
            "status": status,
            "objective": realized,
            "bound": bound,
            "gap": bound - realized,
            "bound_from": source,
        }
    )
    return status


def _beyond_per_device(job: Job) -> bool:
    """Whether the job is larger (pods x nodes) than the per-device model is run for."""
    return len(job.units) * len(job.nodes) > PER_DEVICE_MAX


def _refine(job: Job, out: PlanOutcome) -> bool:
    """Whether the per-device model should try to close the aggregated plan's gap."""
    if out.stats.get("status") == "OPTIMAL" or interrupt.requested():
        return False
    # Over network-attached pools the per-device model has a copy of every pool per node: it
    # would not close the gap, it would blow up (issue #40).
    return not _beyond_per_device(job) and "pooled" not in out.stats


def _total(job: Job, units: Iterable[int]) -> int:
    """The weight of `units` all placed: a bound of any plan of them."""
    return sum(job.units[i].weight for i in units)


def sequential_units(
    cluster: Cluster,
    units: Sequence[Unit],
    gates: FeatureGates,
    resources_bind: Callable[[Unit], bool] = lambda _: True,
) -> set[int]:
    """The units the joint models may judge more strictly than upstream, which schedules pod
    after pod, each claim against what is already allocated (docs/semantics.md):

    - a request in allocationMode All while a multi-allocatable (consumable capacity,
      KEP-5075) device exists: placed together, an earlier pod's share of a shared device
      stays in a later All-set, where upstream leaves a device whose remaining capacity no
      longer fits the request out of it;
    - a request with adminAccess: an allocated admin-access placement no longer counts (not
      against capacity, not as busy), while within one call it does;
    - pods joined because they share a claim (`Unit.members`) whose claims or node resources
      differ (or node resources may refuse one: `resources_bind`, `_resources_bind`): the
      models place them all or none, where upstream may schedule one of them and not the
      other.

    So a valid plan may place such pods where no model solution does. Conservative on purpose:
    a unit wrongly listed only weakens the bound (`valid_bound`), a unit missed would make it
    wrong."""
    multi = gates.DRAConsumableCapacity and any(
        d.allow_multiple_allocations for s in cluster.slices for d in s.spec.devices
    )
    out = set()
    for i, u in enumerate(units):
        if any(_admin(c) or (multi and _all_mode(c)) for c in u.claims) or _partial(u, resources_bind):
            out.add(i)
    return out


def _admin(claim: ResourceClaim) -> bool:
    return any(r.exactly is not None and bool(r.exactly.admin_access) for r in claim.spec.devices.requests)


def _all_mode(claim: ResourceClaim) -> bool:
    for r in claim.spec.devices.requests:
        if r.exactly is not None and r.exactly.allocation_mode == "All":
            return True
        if any(sub.allocation_mode == "All" for sub in r.first_available or ()):
            return True
    return False


def _partial(unit: Unit, resources_bind: Callable[[Unit], bool]) -> bool:
    """Whether upstream could schedule some pods of a joined unit and not the others: their
    claims differ, or they take node resources that may run short (each pod is filtered on
    its own)."""
    if len(unit.members) <= 1:
        return False
    if len({frozenset(m.claims) for m in unit.members}) > 1:
        return True
    return any(n.demand for n in unit.needs) and resources_bind(unit)


def _short_nodes(job: Job) -> set[str | None]:
    """The nodes whose node resources may refuse a pod: every pod that may use the node (and
    fits it alone) together asks for more than is free there. Computed once per job, since it
    does not depend on the unit asking."""
    out: set[str | None] = set()
    for n in job.nodes:
        free = job.book.free.get(n)
        if free is None:
            continue
        total: dict[str, int] = {}
        for u in job.units:
            need = demand_total(u.needs)
            if n not in u.blocked and not shortfalls(need, free):  # else it never runs on n
                for r, v in need.items():
                    total[r] = total.get(r, 0) + v
        if shortfalls(total, free):
            out.add(n)
    return out


def _resources_bind(short: set[str | None], unit: Unit) -> bool:
    """Whether node resources may refuse a pod of `unit`: it may use a node of `short`
    (`_short_nodes`)."""
    return any(n not in unit.blocked for n in short)


def valid_bound(job: Job, modelled: set[int], model_bound: int | None) -> tuple[int, str]:
    """An upper bound of the weight any valid plan (upstream's pod-after-pod semantics) places
    of the `modelled` units, and where it comes from. `model_bound`: a proven bound of the
    joint model's optimum over them (None: none proven).

    Why the model's bound needs a relaxation: the joint models are stricter than upstream for
    the `sequential_units` (All / adminAccess with shared devices). Take any valid plan P and
    drop those pods from it: the other pods' allocations stay valid (an ExactCount request
    without admin access only needs capacity and devices no one else holds, which dropping
    allocations frees) and the models judge them exactly, so they are a model solution, worth
    at most `model_bound`. Hence weight(P) <= model_bound + weight(the sequential units): they
    count as placeable (likewise a joined unit that upstream may place in part). Dropping a
    gang's pod may leave its gang short (then the rest is no model solution): with such a
    unit in a gang only the total weight bounds the plan."""
    total = _total(job, modelled)
    if model_bound is None:
        return total, "pods that may be placed (the model proved no bound)"
    short: list[set[str | None]] = []  # `_short_nodes`, computed when a joined unit first asks

    def bind(unit: Unit) -> bool:
        if not short:
            short.append(_short_nodes(job))
        return _resources_bind(short[0], unit)

    loose = sequential_units(job.cluster, job.units, job.gates, bind) & modelled
    if not loose:
        return min(model_bound, total), "model"
    if any(job.units[i].gang_pods(job.gangs) for i in loose):
        return total, "pods that may be placed (a pod the model judges strictly is in a gang)"
    relaxed = model_bound + _total(job, loose)
    return min(relaxed, total), "model, with the pods it judges more strictly than upstream as placeable"


__all__ = [
    "ALLOCATORS",
    "Improver",
    "COMPLETE",
    "LEFT_OUT",
    "Cpsat",
    "PlanModel",
    "PodForm",
    "Reference",
    "complete",
    "expand_aggregated",
    "plan_aggregated",
    "sequential_units",
    "valid_bound",
]
