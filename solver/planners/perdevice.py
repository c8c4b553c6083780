"""The per-device plan model: every pod and node in one CP-SAT model, device by device.

Why: below the aggregated model's scale, and for what it cannot model, the exact model over
devices (`problem.merge` + `encoders.nodes`) finds the best plan, hinted with first fit's.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import overload

from ..api.models import ResourceClaim
from ..cpsat import Hint, solve
from ..planning.gangs import free_units, gang_infos, gang_reason
from ..planning.job import AllBut, AlsoBlocked, Job, book_limits, placed_weight
from ..planning.ledger import Ledger
from ..planning.outcome import PlanOutcome, PodPlan, Stats
from ..problem.build import build_problem
from ..problem.demand import Variant, demand_total
from ..problem.flat import Assignment, Placement, Problem, claim_weight
from ..problem.merge import build_multi_node_problem
from ..reasons import Kind, Reason
from .aggregated.classes import claim_key
from .bounds import judge, proven_pods, total_weight, valid_bound

NAME = "cpsat"
"""The allocator name a per-device plan carries (`PlanOutcome.allocator`)."""


@dataclass(frozen=True)
class PodForm:
    """One pod of the plan (a unit) as the model sees it on some of its nodes: the unit's claims
    plus the special extended-resource claims of that form (`solver.problem.demand.Variant`). A unit
    has one form per distinct variant over its nodes; at most one of them is placed."""

    unit: int
    variant: Variant
    nodes: Sequence[str | None]
    """A tuple, or a `Without` (a replacement's nodes, sharing its key's tuple)."""
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
    topology domains (its node then matters to the gang's other pods).

    Why not each unit on each node: only a pod asking for an extended resource a DeviceClass
    serves differs by node (`NodeBook.variant`); any other unit has one variant, whose fitting
    nodes are worked out once per variant, and the unit's forms are those nodes less its
    blocked ones. A running pod (`AllBut`: its own node only) and a moved pod's replacement
    (`AlsoBlocked`: its scheduling key's nodes less the one it leaves, as a `Without` sharing
    the key's node tuple) cost no visit of the nodes at all — with `--allow-moves` every
    movable running pod is such a unit (46,000 on issue #43's 10,000 nodes), and asking each
    node of each one, or copying its node list, grew as pods x nodes."""
    book = job.book
    where = {n: i for i, n in enumerate(job.nodes)}
    fitting: dict[tuple[object, ...], tuple[tuple[str | None, ...], frozenset[str | None]]] = {}
    """Variant key -> the nodes whose free resources take it (node order, and as a set)."""
    allowed: dict[tuple[tuple[object, ...], int], tuple[tuple[str | None, ...], frozenset[str | None]]] = {}
    """(variant key, id of a shared `AlsoBlocked.base`) -> the fitting nodes it does not block."""
    bases: list[Mapping[str | None, Reason]] = []  # held so that the ids in `allowed` stay unique
    forms: list[PodForm] = []
    for i, unit in enumerate(job.units):
        by_key: dict[tuple[object, ...], tuple[Variant, Sequence[str | None]]] = {}
        if any(r in book.mapping for n in unit.needs for r in n.demand):  # differs by node
            per_node: dict[tuple[object, ...], tuple[Variant, list[str | None]]] = {}
            for n in job.nodes:
                if n in unit.blocked:
                    continue
                v = book.variant(unit.needs, n)
                if book.refusal(v, n) is None:
                    per_node.setdefault(v.key, (v, []))[1].append(n)
            by_key.update({k: (v, tuple(ns)) for k, (v, ns) in per_node.items()})  # hashed by _form_key
        else:
            v = book.variant(unit.needs, None)
            if v.key not in fitting:
                fit = tuple(n for n in job.nodes if book.refusal(v, n) is None)
                fitting[v.key] = (fit, frozenset(fit))
            fit, fit_set = fitting[v.key]
            blocked = unit.blocked
            ns: Sequence[str | None]
            if isinstance(blocked, AllBut):
                ns = (blocked.node,) if blocked.node in fit_set else ()
            elif isinstance(blocked, AlsoBlocked):
                key = (v.key, id(blocked.base))
                if key not in allowed:
                    bases.append(blocked.base)
                    base = tuple(n for n in fit if n not in blocked.base)
                    allowed[key] = (base, frozenset(base))
                base, base_set = allowed[key]
                ns = Without(base, base_set, blocked.node, where) if blocked.node in base_set else base
            elif blocked:
                ns = tuple(n for n in fit if n not in blocked)
            else:
                ns = fit
            if ns:
                by_key[v.key] = (v, ns)
        forms += unit_forms(job, i, by_key)
    return forms


class Without(Sequence[str | None]):
    """`nodes` less one of them (`node`), in order, without copying: a moved pod's replacement
    may go on every node its scheduling key allows but the one it leaves (`pod_forms`), and
    thousands of replacements share one tuple of 10,000 nodes. `where`: node -> its index in
    the run's nodes, whose order `nodes` keeps; `nodes_set`: `nodes` as a set (both shared)."""

    def __init__(
        self,
        nodes: tuple[str | None, ...],
        nodes_set: frozenset[str | None],
        node: str | None,
        where: Mapping[str | None, int],
    ) -> None:
        self.nodes, self.nodes_set, self.node = nodes, nodes_set, node
        self.at = bisect.bisect_left(nodes, where[node], key=lambda n: where[n])

    @overload
    def __getitem__(self, i: int) -> str | None: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str | None]: ...

    def __getitem__(self, i: int | slice) -> str | None | Sequence[str | None]:
        if isinstance(i, slice):
            return tuple(self)[i]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.nodes[i + 1 if i >= self.at else i]

    def __len__(self) -> int:
        return len(self.nodes) - 1

    def __contains__(self, n: object) -> bool:
        return n != self.node and n in self.nodes_set

    def __iter__(self) -> Iterator[str | None]:
        return (n for n in self.nodes if n != self.node)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Without):
            return self.node == other.node and self.nodes == other.nodes
        return isinstance(other, tuple) and tuple(self) == other

    def __hash__(self) -> int:
        return hash(tuple(self))


def unit_forms(
    job: Job, i: int, by_key: Mapping[tuple[object, ...], tuple[Variant, Sequence[str | None]]]
) -> list[PodForm]:
    """Unit `i`'s forms, one per distinct variant with the nodes that take it (`by_key`): the
    ones the model needs (claims, binding node limits, or a gang choosing among domains)."""
    unit = job.units[i]
    chooses = any(len(job.gangs[g].domains) > 1 for g in unit.gang_pods(job.gangs))
    forms: list[PodForm] = []
    for v, ns in by_key.values():
        claims = (*unit.claims, *v.claims)
        if claims or book_limits(job, ns) or chooses:
            forms.append(PodForm(i, v, ns, claims))
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
        hint=Hint(model.hint, model.hint_nodes),
        # the time limit is CP-SAT work (deterministic): the same input and seed, the same
        # plan; the wall clock only through the caller's explicit deadline
        deadline=job.deadline,
    )
    stats.update(
        {
            "devices": len(problem.devices),
            "alternatives": len(problem.alternatives),
            "cpsat_status": outcome.status.value,
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
    proved = outcome.proven_bound("placed", weight)
    bound, source = valid_bound(job, modelled, proved)
    bound += kept
    if prior is not None and prior[0] < bound:
        bound, source = prior
    trivial = kept + total_weight(job, modelled)
    start_weight = placed_weight(job.units, start.pods)
    if outcome.assignment is None or weight + kept < start_weight:
        told = judge(start_weight, bound, trivial, source)
        stats["fallback"] = start_name
        return PlanOutcome(proven_pods(start.pods, told.status, job), NAME, stats, verdict=told)
    stats.pop("fallback", None)
    told = judge(weight + kept, bound, trivial, source)
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
