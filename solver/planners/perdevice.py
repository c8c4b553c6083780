"""The per-device plan model: every pod and node in one CP-SAT model, device by device.

Why: below the aggregated model's scale, and for what it cannot model, the exact model over
devices (`problem.merge` + `encoders.nodes`) finds the best plan, hinted with first fit's.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace

from ..api.models import ResourceClaim
from ..cpsat import solve
from ..planning.gangs import free_units, gang_infos, gang_reason
from ..planning.job import Job, book_limits, placed_weight
from ..planning.ledger import Ledger
from ..planning.outcome import PlanOutcome, PodPlan, Stats
from ..problem.build import build_problem
from ..problem.demand import Variant, demand_total
from ..problem.flat import Assignment, Placement, Problem, claim_weight
from ..problem.merge import build_multi_node_problem
from ..reasons import Kind, Reason
from .aggregated.classes import claim_key
from .bounds import judge, model_bound, proven_pods, total_weight, valid_bound

NAME = "cpsat"
"""The allocator name a per-device plan carries (`PlanOutcome.allocator`)."""


@dataclass(frozen=True)
class PodForm:
    """One pod of the plan (a unit) as the model sees it on some of its nodes: the unit's claims
    plus the special extended-resource claims of that form (`solver.problem.demand.Variant`). A unit
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
        forms += unit_forms(job, i, by_key)
    return forms


def unit_forms(
    job: Job, i: int, by_key: dict[tuple[object, ...], tuple[Variant, list[str | None]]]
) -> list[PodForm]:
    """Unit `i`'s forms, one per distinct variant with the nodes that take it (`by_key`): the
    ones the model needs (claims, binding node limits, or a gang choosing among domains)."""
    unit = job.units[i]
    chooses = any(len(job.gangs[g].domains) > 1 for g in unit.gang_pods(job.gangs))
    forms: list[PodForm] = []
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


def plan_model(job: Job, first: PlanOutcome) -> PlanModel | None:
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


def per_device(
    job: Job,
    start: PlanOutcome,
    stats: Stats,
    start_name: str,
    prior: tuple[int, str] | None = None,
) -> PlanOutcome:
    """The per-device model over every pod and node, hinted with `start` (first fit's plan,
    or the aggregated one), `start` kept when it places more weight (`start_name` says
    which, in `stats["fallback"]`). `prior`: a valid bound proven before, and its source."""
    model = plan_model(job, start)
    if model is None:
        return PlanOutcome(start.pods, NAME, stats, verdict=start.verdict)
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
    modelled = {f.unit for f in model.forms}
    free = free_units(job, modelled, start, chosen)
    kept = sum(job.units[i].weight for i in free)
    proved = model_bound(outcome.stage_status, outcome.stage_bound, "placed", weight)
    bound, source = valid_bound(job, modelled, proved)
    bound += kept
    if prior is not None and prior[0] < bound:
        bound, source = prior
    trivial = kept + total_weight(job, modelled)
    start_weight = placed_weight(job.units, start.pods)
    if outcome.assignment is None or weight + kept < start_weight:
        told = judge(stats, start_weight, bound, trivial, source)
        stats["fallback"] = start_name
        return PlanOutcome(proven_pods(start.pods, told.status, job), NAME, stats, verdict=told)
    stats.pop("fallback", None)
    told = judge(stats, weight + kept, bound, trivial, source)
    pods = _decode(job, model, outcome.assignment, outcome.nodes, chosen, start, free)
    return PlanOutcome(proven_pods(pods, told.status, job), NAME, stats, verdict=told)


def _decode(
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
            why, reason = (
                (was.why, was.reason) if not was.placed and was.reason else (Reason.of(Kind.LEFT_OUT), None)
            )
            if was.placed and i not in modelled:  # a free pod of a gang that is not placed
                why, reason = gang_reason(job, unit, chosen, free), None
            plans.append(
                PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error, why=why)
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
