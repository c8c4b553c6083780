"""The allocators of a plan: first fit (the scheduler's way) and CP-SAT (the best), one protocol.

Why a protocol: the pipeline (`solver.pipeline`) runs first fit, then hands its plan to the
chosen `Allocator`, which may only improve on it. First fit is the reference allocator pod
after pod; CP-SAT builds one model over every pod and node, hinted with the first-fit plan,
and owns the "never worse than first fit" policy — in one place, for `allocate`, independent
claims and many-pod plans alike.

Results and checks are wired here once (`Ledger`): every placement becomes
`status.allocation` through `solver.results` and passes `solver.check` against the cluster
plus everything placed before it, so a bug in precompute or an allocator surfaces as an
error, never as a wrong allocation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, Protocol

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Pod, ResourceClaim
from dra_solver.cel import EvalCache
from dra_solver.check import check_or_raise
from dra_solver.cpsat import solve
from dra_solver.errors import DRASolverError, InvalidPools, SearchAborted
from dra_solver.explain import explain_unschedulable
from dra_solver.gates import FeatureGates
from dra_solver.master import AggregatedPlan, aggregate
from dra_solver.patterns import allocate_node
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Assignment, Placement, Problem, claim_weight
from dra_solver.problem.merge import build_multi_node_problem
from dra_solver.reference import DEFAULT_MAX_STEPS, allocate_reference
from dra_solver.results import ShareIDs, assignment_claims

HINT_STEPS = 200_000
"""Step budget of the first-fit search that seeds CP-SAT: past it, CP-SAT searches alone."""


@dataclass(frozen=True)
class Member:
    """One pod of a unit: its name, the Pod object (None for a list of claims) and the refs
    (`namespace/name`) of its unallocated claims."""

    name: str
    pod: Pod | None
    claims: tuple[str, ...]


@dataclass(frozen=True)
class Unit:
    """One pod to place: its unallocated claims go to one node together, or not at all."""

    name: str
    claims: tuple[ResourceClaim, ...]
    priority: int = 0
    blocked: Mapping[str | None, str] = field(default_factory=dict)
    """Candidate nodes the pod may not use, with the reason (scheduling constraints)."""
    members: tuple[Member, ...] = ()
    """Pods placed as this unit: more than one when they share an unallocated claim (it is
    allocated once, and its pods go where that allocation is usable: the same node)."""


@dataclass
class PodPlan:
    """One pod of the plan."""

    name: str
    node: str | None
    """Where the pod's claims are allocated (None: not placed, or placed with no node)."""
    claims: list[ResourceClaim]
    """Copies of the pod's unallocated claims; with status.allocation when placed."""
    reason: str | None = None
    """Why the pod is not placed."""
    priority: int = 0
    placed: bool = False
    error: DRASolverError | None = None
    """The per-node error behind `reason` (invalid pools, an aborted search), for callers that
    report it as an error when there was only one node to try."""


@dataclass
class PlanOutcome:
    pods: list[PodPlan]
    """In input order."""
    allocator: str = "cpsat"
    stats: dict[str, object] = field(default_factory=dict)

    @property
    def placed(self) -> int:
        return sum(p.placed for p in self.pods)

    @property
    def weight(self) -> int:
        """Priority-weighted number of placed pods (the CP-SAT objective)."""
        return sum(claim_weight(p.priority) for p in self.pods if p.placed)

    def pod(self, name: str) -> PodPlan:
        for p in self.pods:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True)
class Job:
    """Everything an allocator needs for one run (see `solver.pipeline.Options`)."""

    cluster: Cluster
    units: tuple[Unit, ...]
    nodes: tuple[str | None, ...]
    gates: FeatureGates
    cache: EvalCache
    seed: int
    strategy: str
    time_limit: float


class Ledger:
    """The cluster as placements accumulate: what is placed counts as allocated for what follows."""

    def __init__(self, job: Job) -> None:
        self.cluster = replace(job.cluster, claims=dict(job.cluster.claims))
        self.gates = job.gates
        self.share_ids = ShareIDs(job.seed)

    def results(
        self, problem: Problem, claims: tuple[ResourceClaim, ...], assignment: Assignment
    ) -> list[ResourceClaim]:
        return assignment_claims(problem, claims, assignment, share_ids=self.share_ids)

    def commit(self, claims: list[ResourceClaim], node: str | None, view: Cluster | None = None) -> None:
        """Verify `claims` (placed together, on `node`) and record them as allocated. `view`:
        the part of the cluster the node depends on (`classes.LocalViews`), checked instead of
        the whole cluster when the nodes are independent."""
        check_or_raise(self.cluster if view is None else view, claims, node=node, gates=self.gates)
        for c in claims:
            self.cluster.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


@dataclass(frozen=True)
class PlanModel:
    """What CP-SAT solves: the Problem of the placeable pods (`groups`: their unit indices;
    `offsets`: each one's first claim index) and the first-fit plan as a hint."""

    problem: Problem
    groups: list[int]
    offsets: list[int]
    hint: Assignment
    hint_nodes: dict[int, str]


class Allocator(Protocol):
    """Improves a first-fit plan; never returns less placed weight than it was given."""

    name: ClassVar[str]
    first_fit_steps: ClassVar[int]
    """Step budget of the first-fit search this allocator starts from."""

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome: ...


@dataclass(frozen=True)
class FirstFit:
    """The scheduler's way: pod after pod (higher priority first, then input order), each on
    the first node, in the given order, where all its claims fit — each pod seeing what the
    earlier pods took. `max_steps` bounds each search: past it the search is aborted, which is
    an error (upstream's filter timeout) at the full budget and a per-node reason below it."""

    max_steps: int = DEFAULT_MAX_STEPS

    def plan(self, job: Job) -> PlanOutcome:
        ledger = Ledger(job)
        out: list[PodPlan | None] = [None] * len(job.units)
        for i in sorted(range(len(job.units)), key=lambda i: -job.units[i].priority):
            out[i] = self._place(job, ledger, job.units[i])
        stats: dict[str, object] = {"nodes": len(job.nodes), "pods": len(job.units)}
        return PlanOutcome([p for p in out if p is not None], "reference", stats)

    def _place(self, job: Job, ledger: Ledger, unit: Unit) -> PodPlan:
        if not unit.claims:
            return PodPlan(unit.name, None, [], "the pod has no unallocated claims", unit.priority)
        reasons: list[tuple[str | None, str]] = []
        error: DRASolverError | None = None
        for n in job.nodes:
            if n in unit.blocked:
                reasons.append((n, unit.blocked[n]))
                continue
            problem = build_problem(ledger.cluster, unit.claims, n, job.gates, cache=job.cache)
            try:
                assignment = allocate_reference(problem, max_steps=self.max_steps)
            except InvalidPools as exc:
                reasons.append((n, str(exc)))
                error = exc
                continue
            except SearchAborted as exc:
                if self.max_steps >= DEFAULT_MAX_STEPS:
                    raise
                _raise_candidate_errors(problem)  # never turn a CEL error into "no fit"
                reasons.append((n, str(exc)))
                error = exc
                continue
            if assignment is None:
                reasons.append((n, explain_unschedulable(problem)))
                continue
            done = ledger.results(problem, unit.claims, assignment)
            ledger.commit(done, n)
            return PodPlan(unit.name, n, done, None, unit.priority, placed=True)
        return PodPlan(
            unit.name,
            None,
            list(unit.claims),
            _why_not(reasons),
            unit.priority,
            error=error if len(job.nodes) == 1 else None,
        )


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
    first-fit plan is kept."""

    name: ClassVar[str] = "cpsat"
    first_fit_steps: ClassVar[int] = HINT_STEPS

    def __init__(self, aggregation: Literal["auto", "always", "never"] = "auto") -> None:
        """`aggregation`: the aggregated plan model (`solver.master`) where it applies and pays
        ("auto"), wherever it applies ("always", for tests), or never (the per-device model)."""
        self.aggregation = aggregation

    def model(self, job: Job, first: PlanOutcome) -> PlanModel | None:
        """The Problem of every pod that may be placed, with the first-fit plan as its hint
        (None when no pod can go anywhere). Public so benchmarks can time the solve alone."""
        groups = [
            i for i, u in enumerate(job.units) if u.claims and any(n not in u.blocked for n in job.nodes)
        ]
        if not groups:
            return None
        problem, offsets = _model_problem(job, groups)
        hint, hint_nodes = _as_hint(problem, groups, offsets, first)
        return PlanModel(problem, groups, offsets, hint, hint_nodes)

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome:
        start = time.perf_counter()  # job.time_limit caps the wall clock from here
        stats = dict(first.stats)
        ledger = Ledger(job)
        first_nodes = {i: p.node for i, p in enumerate(first.pods) if p.placed and p.node is not None}
        agg: AggregatedPlan | str = "disabled"
        if self.aggregation != "never":
            agg = aggregate(
                ledger.cluster, job.units, job.nodes, job.gates, job.cache, job.seed, job.time_limit,
                first_nodes, force=self.aggregation == "always",
            )
        if isinstance(agg, AggregatedPlan):
            return self._expand(job, first, agg, ledger, stats)
        stats["aggregated"] = f"no: {agg}"
        model = self.model(job, first)
        if model is None:
            return PlanOutcome(first.pods, self.name, stats)
        problem, groups, offsets = model.problem, model.groups, model.offsets
        outcome = solve(
            problem,
            mode="free",
            strategy=job.strategy,  # type: ignore[arg-type]
            time_limit=job.time_limit,
            seed=job.seed,
            hint=model.hint,
            hint_nodes=model.hint_nodes,
            wall_limit=max(job.time_limit - (time.perf_counter() - start), 0.1),
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
        assignment = outcome.assignment or {}
        placed = [g for g in range(len(groups)) if offsets[g] in assignment]
        stats["cpsat_placed"] = len(placed)
        weight = sum(claim_weight(job.units[groups[g]].priority) for g in placed)
        proven = outcome.stage_status.get("placed") == "OPTIMAL"
        bound = weight if proven else sum(claim_weight(job.units[i].priority) for i in groups)
        _summary(stats, "OPTIMAL" if proven else "FEASIBLE", max(weight, first.weight), bound)
        if outcome.assignment is None or weight < first.weight:
            stats["fallback"] = "first fit"
            stats["status"] = "first-fit fallback"
            return PlanOutcome(_proven(first.pods, outcome.status, job), self.name, stats)
        pods = self._decode(job, problem, groups, offsets, assignment, outcome.nodes, first)
        return PlanOutcome(_proven(pods, outcome.status, job), self.name, stats)

    def _expand(
        self, job: Job, first: PlanOutcome, agg: AggregatedPlan, ledger: Ledger, stats: dict[str, object]
    ) -> PlanOutcome:
        """The aggregated plan's pods on their nodes: devices by the single-node allocator, each
        node's claims checked as one call; first fit when it places more weight."""
        out: dict[int, PodPlan] = {}
        for node, idxs in agg.placements.items():
            claims = [c for i in idxs for c in job.units[i].claims]
            group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
            problem, assignment = allocate_node(agg.ctx, node, claims, group_of)
            done = ledger.results(problem, tuple(claims), assignment or {})
            placed = [c for ci, c in enumerate(done) if ci in (assignment or {})]
            if placed:
                ledger.commit(placed, node, agg.ctx.local(node))
            at = 0
            for i in idxs:
                unit, n = job.units[i], len(job.units[i].claims)
                if all(ci in (assignment or {}) for ci in range(at, at + n)):
                    out[i] = PodPlan(unit.name, node, done[at:at + n], None, unit.priority, placed=True)
                at += n
        stats.update({"aggregated": "yes", **agg.stats})
        _summary(stats, agg.status, agg.objective, agg.bound)
        pods = [out.get(i) or self._left_out(unit, first.pods[i]) for i, unit in enumerate(job.units)]
        outcome = PlanOutcome(pods, self.name, stats)
        stats["cpsat_placed"] = outcome.placed
        if outcome.weight < first.weight:
            stats.update({"fallback": "first fit", "status": "first-fit fallback"})
            return PlanOutcome(_proven(first.pods, "FEASIBLE", job), self.name, stats)
        return PlanOutcome(_proven(pods, agg.status, job), self.name, stats)

    @staticmethod
    def _left_out(unit: Unit, was: PodPlan) -> PodPlan:
        reason = was.reason or "left out so that more (or higher-priority) pods fit"
        return PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error)

    def _decode(
        self,
        job: Job,
        problem: Problem,
        groups: list[int],
        offsets: list[int],
        assignment: Assignment,
        chosen: dict[int, str],
        first: PlanOutcome,
    ) -> list[PodPlan]:
        ledger = Ledger(job)
        by_unit = {i: g for g, i in enumerate(groups)}
        plans: list[PodPlan] = []
        on_node: dict[str | None, list[ResourceClaim]] = {}
        for i, unit in enumerate(job.units):
            g = by_unit.get(i)
            if g is None or offsets[g] not in assignment:
                was = first.pods[i]
                reason = was.reason or "left out so that more (or higher-priority) pods fit"
                plans.append(
                    PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error)
                )
                continue
            node = chosen.get(g, job.nodes[0]) if problem.nodes else job.nodes[0]
            local = {k: assignment[offsets[g] + k] for k in range(len(unit.claims))}
            done = ledger.results(replace(problem, node=node), unit.claims, local)
            on_node.setdefault(node, []).extend(done)
            plans.append(PodPlan(unit.name, node, done, None, unit.priority, placed=True))
        for n in job.nodes:  # each node's claims as one call, nodes in order
            if on_node.get(n):
                ledger.commit(on_node[n], n)
        return plans


ALLOCATORS: dict[str, Allocator] = {"reference": Reference(), "cpsat": Cpsat()}


def _model_problem(job: Job, groups: list[int]) -> tuple[Problem, list[int]]:
    """The Problem of every pod that may be placed, and each pod's first claim index."""
    units = [job.units[i] for i in groups]
    offsets, at = [], 0
    for u in units:
        offsets.append(at)
        at += len(u.claims)
    if len(job.nodes) == 1:
        claims = [c for u in units for c in u.claims]
        group_of = [g for g, u in enumerate(units) for _ in u.claims]
        problem = build_problem(
            job.cluster,
            claims,
            job.nodes[0],
            job.gates,
            cache=job.cache,
            priorities=[units[g].priority for g in group_of],
            groups=group_of,
        )
        return problem, offsets
    group_nodes = {
        g: tuple(n for n in job.nodes if n is not None and n not in u.blocked)
        for g, u in enumerate(units)
        if u.blocked
    }
    problem = build_multi_node_problem(
        job.cluster,
        [list(u.claims) for u in units],
        [n for n in job.nodes if n is not None],
        job.gates,
        job.cache,
        priorities=[u.priority for u in units],
        group_nodes=group_nodes,
    )
    return problem, offsets


def _as_hint(
    problem: Problem, groups: list[int], offsets: list[int], first: PlanOutcome
) -> tuple[Assignment, dict[int, str]]:
    """The first-fit plan in the model's indices, and its node per group."""
    devices = {(d.driver, d.pool, d.name): d.index for d in problem.devices}
    alts = {(a.claim, a.name): a.index for a in problem.alternatives}
    hint: Assignment = {}
    hint_nodes: dict[int, str] = {}
    for g, i in enumerate(groups):
        pod = first.pods[i]
        if not pod.placed:
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


def _summary(stats: dict[str, object], status: str, objective: int, bound: int) -> None:
    """The plan's honest summary: status (OPTIMAL / FEASIBLE / first-fit fallback), the
    placed weight, a proven upper bound on it (the weight of every placeable pod when the
    solver proved nothing better) and the gap."""
    bound = max(bound, objective)  # first fit (one pod after another) may beat the joint model
    stats.update({"status": status, "objective": objective, "bound": bound, "gap": bound - objective})


def _raise_candidate_errors(problem: Problem) -> None:
    for alt in problem.alternatives:
        for cand in alt.candidates:
            if cand.error is not None:
                raise cand.error from None


def _why_not(reasons: list[tuple[str | None, str]]) -> str:
    if len(reasons) == 1:
        return reasons[0][1]
    return "no node fits the pod: " + "; ".join(f"{n}: {r}" for n, r in reasons)


__all__ = [
    "ALLOCATORS",
    "Allocator",
    "Cpsat",
    "FirstFit",
    "Job",
    "Member",
    "PlanModel",
    "PlanOutcome",
    "PodPlan",
    "Reference",
    "Unit",
]
