"""Patterns: multisets of pod classes that fit together on one node of a node class.

Why the single-node exact model decides: a pattern is feasible exactly when the per-device
CP-SAT model of the node (`encoders.build` on `build_problem` for those pods' claims, every
claim placed) has a solution; the reference first fit is tried first as a fast yes. Answers
are cached per (node class, pattern). Feasibility is downward closed (a pod left out never
makes the others fail), so the master may use a pattern as an upper bound on what a node of
the class takes.

Pricing (`NodeModel.best`) is the same single-node model in mode "free", with `copies[k]`
identical pods of each class k and the objective max sum_k w[k] * placed_k (w: the LP duals
of `solver.planners.aggregated.master`); copies of one class are ordered (placed[g] >= placed[g+1]: they are
interchangeable), and CP-SAT's proven bound, rescaled, bounds the best pattern's value.
`copies[k]` is the class's *cap* on the node class: how many pods of k alone fit (found by
doubling: a model with n copies that places fewer than n proves the cap), at most demand[k].
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ortools.sat.python.cp_model_helper import CpSolverStatus, LinearExpr  # not cp_model: `encoders.model`

from dra_solver.encoders import build

from ... import interrupt
from ...api.cluster import Cluster
from ...api.models import ResourceClaim
from ...cel import EvalCache
from ...cpsat import cp_solver, found, solve, work_done
from ...deadline import Deadline, passed
from ...errors import SearchAborted
from ...gates import FeatureGates
from ...problem.build import build_problem
from ...problem.demand import demand_total
from ...problem.flat import Assignment, Problem
from ...problem.resources import Amounts, shortfalls
from ...reference import allocate_reference
from .classes import LocalViews, PodClass, UnitsByIndex, claim_key, index_signature

FAST_STEPS = 20_000
"""Step budget of the reference search used as a fast yes (past it the exact model decides)."""
SCALE = 1_000_000
"""Pricing objective: the largest weight becomes this integer coefficient."""

EXPAND_FLOOR = 1.0
"""Least work (deterministic seconds) the exact model gets per node when a plan is expanded to
devices, budget spent or not: the patterns are known to fit, and a pod dropped there for want
of time would make a longer search return a worse plan."""

MAX_COPIES = 512
"""Most pods of one class in a single-node model; a class with more that all fit makes the
plan's bound unproven."""

Pattern = tuple[int, ...]
"""Pods per pod class (indexed like the job's pod classes)."""


@dataclass(frozen=True)
class Pricing:
    pattern: Pattern
    value: float
    """sum_k w[k] * pattern[k] (exact)."""
    bound: float
    """No feasible pattern has a larger value (CP-SAT's proven bound, rescaled)."""
    proven: bool


@dataclass
class ModelMemo:
    """Answers of single-node models kept across runs on one cluster, for a caller that plans
    it and then parts of it again and again (`replan.planner.Planner`: its plan, then the local
    re-solve of the nodes each update reached). Keyed by what decides them, names left out, so
    a node of the same kind — in this run or a later one — finds them.

    A run with a memo makes the same decisions as a run without one: an answer found here is
    charged the CP-SAT work it cost when it was found (`ModelContext.charge`), so the budget
    left — which decides where later searches stop — is what the search itself would have
    left, and only answers that did not depend on the budget are kept (proven, or every pod
    placed). What it saves is CPU time: models built and solved again. Valid while the
    DeviceClasses and feature gates stay (the caller drops it when anything but pods changes).

    `copies`: per (`cap`'s key — the node's view up to names, `classes.twin_key`, with its
    free node resources; the pod class's claims and node-resource demand — and n) how many of
    n copies of the class the node's model placed, and the work it took. `decided`:
    `allocate_node`'s answers (as `ModelContext.decided`, devices as ranks) with their work."""

    copies: dict[Hashable, tuple[int, float]] = field(default_factory=dict)
    decided: dict[Hashable, tuple[Assignment | None, float]] = field(default_factory=dict)


@dataclass
class ModelContext:
    """What every single-node model of one run needs."""

    cluster: Cluster
    units: UnitsByIndex
    pods: Sequence[PodClass]
    gates: FeatureGates
    cache: EvalCache
    seed: int
    budget: float
    """CP-SAT work this run may spend, in deterministic seconds (`spent` counts it): every
    decision that depends on the time left depends on work done, not on the machine's load,
    so the same input and seed give the same plan."""
    deadline: Deadline | None = None
    """The one wall-clock limit (`solver.deadline`): None, or the caller's explicit deadline,
    past which nothing is left and every search stops."""
    solves: int = 0
    views: LocalViews | None = None
    """Set when the nodes are independent: single-node models read the node's view."""
    free: Mapping[str | None, Amounts | None] = field(default_factory=dict)
    """Node -> free node resources (missing or None: not limited)."""
    slow: set[tuple[object, ...]] = field(default_factory=set)
    """Pod shapes whose reference search aborted on some node: the exact model decides them."""
    fixed_views: Mapping[str, Cluster] | None = None
    """Node -> its view, already cut (a component shipped to a worker: `master.ComponentTask`)."""
    spent: float = 0.0
    memo: ModelMemo | None = None
    """Single-node answers kept across runs (`ModelMemo`): read and filled where given."""
    decided: dict[Hashable, Assignment | None] = field(default_factory=dict)
    """`allocate_node`'s answers by (claims' shape, mode, `classes.index_signature`), devices
    as ranks: nodes of one class given the same pattern are the same Problem up to names, so
    the expansion of a plan over 10,000 nodes searches once per (node class, pattern)."""

    def demand(self, k: int) -> Amounts:
        """What one pod of class k takes of a node's resources."""
        return demand_total(self.units[self.pods[k].units[0]].needs)

    def resources_fit(self, node: str, counts: Mapping[int, int]) -> bool:
        """Do `counts[k]` pods of each class k fit the node's free resources?"""
        free = self.free.get(node)
        if free is None:
            return True
        total: Amounts = {}
        for k, n in counts.items():
            for r, v in self.demand(k).items():
                total[r] = total.get(r, 0) + n * v
        return not shortfalls(total, free)

    def local(self, node: str) -> Cluster:
        """The cluster as one node's allocations see it (the whole cluster without views)."""
        if self.fixed_views is not None:
            return self.fixed_views[node]
        return self.cluster if self.views is None else self.views.of(self.cluster, node)

    def left(self) -> float:
        """Deterministic seconds left of the budget (none after a stop request, Ctrl-C, or
        once the explicit deadline has passed)."""
        if interrupt.requested() or passed(self.deadline):
            return 0.0
        return max(self.budget - self.spent, 0.0)

    def charge(self, deterministic_time: float) -> None:
        """Count the work of one CP-SAT call against `budget`."""
        self.spent += deterministic_time

    def claims(
        self, counts: dict[int, int], pods: Sequence[PodClass] | None = None
    ) -> tuple[list[ResourceClaim], list[int], list[int]]:
        """Claims of the first counts[k] units of each class k; each claim's group; each
        group's class. `pods`: the classes to read instead of the run's (a kind's classes
        merged into its first: `master.kind_pods`)."""
        pods = self.pods if pods is None else pods
        claims: list[ResourceClaim] = []
        group_of: list[int] = []
        group_class: list[int] = []
        for k in sorted(counts):
            for i in range(counts[k]):
                for c in self.units[pods[k].units[i]].claims:
                    claims.append(c)
                    group_of.append(len(group_class))
                group_class.append(k)
        return claims, group_of, group_class


class NodeModel:
    """The single-node exact model of one node class with `copies[k]` pods of class k, for
    pricing: best pattern under given weights. `pods`: the classes whose units the copies are
    (`ModelContext.claims`; None: the run's)."""

    def __init__(
        self, ctx: ModelContext, node: str, copies: dict[int, int], pods: Sequence[PodClass] | None = None
    ) -> None:
        self.ctx = ctx
        self.k = len(ctx.pods)
        claims, group_of, self.group_class = ctx.claims({k: n for k, n in copies.items() if n > 0}, pods)
        problem = build_problem(ctx.local(node), claims, node, ctx.gates, cache=ctx.cache, groups=group_of)
        self.m = build(problem, mode="free")
        first: dict[int, int] = {}
        for ci, g in enumerate(group_of):
            first.setdefault(g, ci)
        self.placed = [self.m.placed[first[g]] for g in range(len(self.group_class))]
        self.by_class: dict[int, list[int]] = {}
        for g, k in enumerate(self.group_class):
            self.by_class.setdefault(k, []).append(g)
        for g in range(1, len(self.group_class)):
            if self.group_class[g] == self.group_class[g - 1]:
                self.m.cp.add(self.placed[g - 1] >= self.placed[g])
        self._node_resources(node)

    def _node_resources(self, node: str) -> None:
        """sum_g demand[class(g), r] * placed[g] <= free[node, r] for each resource r."""
        free = self.ctx.free.get(node)
        if free is None:
            return
        pairs = list(zip(self.group_class, self.placed, strict=True))
        for r, limit in sorted(free.items()):
            terms = [(self.ctx.demand(k).get(r, 0), v) for k, v in pairs]
            terms = [(c, v) for c, v in terms if c > 0]
            if sum(c for c, _ in terms) > limit:
                expr = LinearExpr.weighted_sum([v for _, v in terms], [c for c, _ in terms])
                self.m.cp.add(expr <= limit)

    def forbid(self, pattern: Pattern) -> None:
        """Later solutions differ from `pattern`: copies are ordered, so count[k] = n exactly
        when copy n-1 is placed and copy n is not; the clause negates that conjunction."""
        lits = []
        for k, n in enumerate(pattern):
            gs = self.by_class.get(k, [])
            if n > len(gs):
                return  # more than the model's copies: it cannot produce this pattern anyway
            if n > 0:
                lits.append(self.placed[gs[n - 1]].Not())
            if n < len(gs):
                lits.append(self.placed[gs[n]])
        self.m.cp.add_bool_or(lits)

    def best(self, weights: Sequence[float], seconds: float) -> Pricing:
        top = max((weights[k] for k in set(self.group_class)), default=0.0)
        if top <= 1e-9 or not self.placed:
            return Pricing((0,) * self.k, 0.0, 0.0, True)
        scale = SCALE / top
        coef = [round(max(weights[k], 0.0) * scale) for k in self.group_class]
        cp = self.m.cp
        cp.clear_objective()
        cp.clear_hints()
        cp.maximize(LinearExpr.weighted_sum(self.placed, coef))
        solver = cp_solver(self.ctx.seed, max(seconds, 0.01), self.ctx.deadline)
        # The LP of every linear row: sums over counters and capacities prove "no more copies fit"
        # at once, where level 1 left a pigeonhole search (a cap of 14 whole-or-half pods on 6
        # partitionable GPUs: 59 s unproven, 0.02 s proven; benchmarks/test_bench_gangs.py).
        solver.parameters.linearization_level = 2
        with interrupt.stoppable(solver.stop_search):
            status = solver.solve(cp)
        passed(self.ctx.deadline)  # a call the deadline ended: `fired`
        self.ctx.solves += 1
        self.ctx.charge(work_done(solver))
        counts = [0] * self.k
        if found(status):
            for g, v in enumerate(self.placed):
                if solver.value(v):
                    counts[self.group_class[g]] += 1
            bound_int = solver.best_objective_bound
        elif status == CpSolverStatus.INFEASIBLE:  # not in mode "free": nothing placed is a solution
            bound_int = 0.0
        else:
            bound_int = float(sum(coef))
        value = sum(weights[k] * counts[k] for k in range(self.k))
        # Rounding of the coefficients: |coef[g] - scale * w[g]| <= 0.5, so any pattern's
        # value is at most (its integer objective + 0.5 * len(coef)) / scale <= this bound.
        bound = (bound_int + 0.5 * len(coef)) / scale
        return Pricing(tuple(counts), value, bound, status == CpSolverStatus.OPTIMAL)


def cap(
    ctx: ModelContext, node: str, k: int, key: Hashable = None, memo: ModelMemo | None = None
) -> tuple[int, bool]:
    """How many pods of class k alone fit on `node` (at most its demand and MAX_COPIES), and
    whether that is proven: n copies, doubling from 1, until a model places fewer than n.
    `key`: what decides the answer, names left out (`master._caps`), for `memo` (None:
    `ctx.memo`); None: not kept."""
    demand = ctx.pods[k].demand
    n, proven = 1, True
    while True:
        if interrupt.requested() or passed(ctx.deadline):
            # stopped: the demand is an upper bound, unproven; no more than a single-node
            # model holds (MAX_COPIES: the components carry that many pods of a class)
            return min(demand, MAX_COPIES), False
        placed, exact = _copies(ctx, node, k, n, key, memo)
        if placed < n:
            if exact:
                return placed, proven
            return n, False  # somewhere in [placed, n]: n copies keep pricing exact
        if n >= demand:
            return n, proven
        if n >= MAX_COPIES:  # pods that take nothing exclusive (admin access): patterns stop here
            return n, False
        n = min(2 * n, demand, MAX_COPIES)


def _copies(
    ctx: ModelContext, node: str, k: int, n: int, key: Hashable, memo: ModelMemo | None
) -> tuple[int, bool]:
    """How many of n copies of class k the node's model places, and whether that is proven:
    from `memo` (None: `ctx.memo`) when an earlier search of the same key proved it (its work
    charged again), else searched (and kept there when proven or all placed)."""
    memo = (ctx.memo if memo is None else memo) if key is not None else None
    if memo is not None and (known := memo.copies.get((key, n))) is not None and known[1] <= ctx.left():
        ctx.charge(known[1])
        return known[0], True
    spent = ctx.spent
    weights = [1.0 if j == k else 0.0 for j in range(len(ctx.pods))]
    got = NodeModel(ctx, node, {k: n}).best(weights, ctx.left())
    placed = got.pattern[k]
    if memo is not None and (got.proven or placed == n):
        memo.copies[(key, n)] = (placed, ctx.spent - spent)
    return placed, got.proven or placed == n


@dataclass
class Feasibility:
    """Cache of pattern feasibility per (node class, pattern)."""

    ctx: ModelContext
    known: dict[tuple[int, Pattern], bool] = field(default_factory=dict)

    def record(self, c: int, pattern: Pattern, ok: bool) -> None:
        """A known answer: a pattern the pricing model placed fits by construction."""
        self.known[(c, pattern)] = ok

    def fits(self, c: int, node: str, pattern: Pattern) -> bool:
        """Do the pods of `pattern` fit together on `node` (a node of class c)?"""
        key = (c, pattern)
        if key not in self.known:
            counts = {k: n for k, n in enumerate(pattern) if n}
            if not self.ctx.resources_fit(node, counts):
                self.known[key] = False
                return False
            claims, group_of, _ = self.ctx.claims(counts)
            self.known[key] = allocate_node(self.ctx, node, claims, group_of, require_all=True)[1] is not None
        return self.known[key]


def allocate_node(
    ctx: ModelContext,
    node: str,
    claims: Sequence[ResourceClaim],
    group_of: Sequence[int],
    *,
    require_all: bool = False,
    floor: float = 0.1,
    weights: Sequence[int] | None = None,
) -> tuple[Problem, Assignment | None]:
    """Devices for `claims` (pods: `group_of`) on `node`, on the cluster of `ctx`: every pod
    (reference first fit, else the exact model in mode "all"); unless `require_all`, when
    that is impossible, as much pod weight as the exact model places in mode "free" —
    `weights[g]` for pod g (`planning.job.Unit.weight`, the plan's objective; None: one each).
    `floor`: the least work (deterministic seconds) each exact solve gets, budget spent or not
    (the expansion of a plan whose patterns are known to fit gives more: `EXPAND_FLOOR`)."""
    problem = build_problem(ctx.local(node), claims, node, ctx.gates, cache=ctx.cache, groups=group_of)
    if weights is not None:
        problem = replace(problem, group_weight=dict(enumerate(weights)))
    shape = (tuple(claim_key(c) for c in claims), tuple(group_of))
    signature, used = index_signature(problem)
    # The weights decide which pods a node takes when not all fit (mode "free"): part of the key.
    key = (shape, require_all, signature, None if weights is None or require_all else tuple(weights))
    if key in ctx.decided:  # the same Problem up to names was decided on another node
        return problem, _unranked(ctx.decided[key], used)
    memo = ctx.memo
    if memo is not None and (known := memo.decided.get(key)) is not None and known[1] <= ctx.left():
        ctx.charge(known[1])  # decided in an earlier run: charged as searched (`ModelMemo`)
        ctx.decided[key] = known[0]
        return problem, _unranked(known[0], used)
    spent = ctx.spent
    found = _decide(ctx, problem, shape, require_all, floor)
    ctx.decided[key] = _ranked(found, used)
    if memo is not None and (found is not None or ctx.left() > 0):  # a "no" the budget cut is not kept
        memo.decided[key] = (ctx.decided[key], ctx.spent - spent)
    return problem, found


def allocate_beside(
    ctx: ModelContext,
    node: str,
    held: Sequence[ResourceClaim],
    claims: Sequence[ResourceClaim],
    group_of: Sequence[int],
) -> tuple[Problem, Assignment | None, Cluster]:
    """Devices for `claims` (pods: `group_of`) on `node` beside `held` — allocated claims that
    keep their devices there — by the reference's fast yes only (`FAST_STEPS`); None when it
    finds none, and the caller searches the node whole (`allocate_node`). With the Problem
    and the node's view with `held` in use (what the placement is checked against). Why: a
    re-plan that keeps a node's pods and adds a few searches the few on the devices left,
    where a search of the whole node — partitionable devices with counters — costs an exact
    model."""
    view = ctx.local(node)
    view = replace(view, claims={**view.claims, **{c.key: c for c in held}}, _identities={})
    problem = build_problem(view, claims, node, ctx.gates, cache=ctx.cache, groups=group_of)
    try:
        found = allocate_reference(problem, max_steps=FAST_STEPS)
    except SearchAborted:
        found = None
    return problem, found, view


def _ranked(assignment: Assignment | None, used: Sequence[int]) -> Assignment | None:
    """`assignment` with each device given as its rank among `used` (`_unranked` undoes it)."""
    if assignment is None:
        return None
    rank = {d: r for r, d in enumerate(used)}
    return {ci: [replace(p, device=rank[p.device]) for p in ps] for ci, ps in assignment.items()}


def _unranked(assignment: Assignment | None, used: Sequence[int]) -> Assignment | None:
    if assignment is None:
        return None
    return {ci: [replace(p, device=used[p.device]) for p in ps] for ci, ps in assignment.items()}


def _decide(
    ctx: ModelContext,
    problem: Problem,
    shape: tuple[object, ...],
    require_all: bool,
    floor: float,
) -> Assignment | None:
    """`allocate_node`'s search on its Problem: the reference first, then the exact model."""
    found = None
    if shape not in ctx.slow:  # the reference is only a fast yes: skip it where it aborted before
        try:
            found = allocate_reference(problem, max_steps=FAST_STEPS)
        except SearchAborted:
            ctx.slow.add(shape)
    if found is not None:
        return found
    ctx.solves += 1
    budget = _exact_budget(ctx, floor)
    out = solve(problem, mode="all", time_limit=budget, seed=ctx.seed, deadline=ctx.deadline)
    ctx.charge(out.deterministic_time)
    if out.assignment is not None:
        return out.assignment
    if require_all:
        return None
    ctx.solves += 1
    budget = _exact_budget(ctx, floor)
    out = solve(problem, mode="free", time_limit=budget, seed=ctx.seed, deadline=ctx.deadline)
    ctx.charge(out.deterministic_time)
    return out.assignment


def _exact_budget(ctx: ModelContext, floor: float) -> float:
    """Deterministic seconds of one exact single-node solve: what is left, at least `floor`,
    unless a stop was requested (an explicit deadline, when one passes, stops it anyway)."""
    if interrupt.requested():
        return 0.01
    return max(ctx.left(), floor)


__all__ = [
    "EXPAND_FLOOR",
    "ModelContext",
    "ModelMemo",
    "Feasibility",
    "NodeModel",
    "Pattern",
    "Pricing",
    "allocate_beside",
    "allocate_node",
    "cap",
]
