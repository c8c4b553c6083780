"""The CP-SAT allocator: the best allocation of a Problem under the upstream rules.

Why this shape: `encoders.build` turns the flat Problem into a CpModel (one module per rule
family); this module only orchestrates — objective stages, time budget, hints, decoding.

Objective: lexicographic, solved in stages (see `encoders.objective`): placed claims weighted
by priority (mode "free" only) > firstAvailable positions (their sum, then upstream's search
order among equal sums) > devices opened (pack: fewest, spread:
most distinct) > device-order tie-break. After each stage its value is fixed as a bound and
the solution is hinted to the next stage, so every stage starts from a feasible solution.
Stages whose expression is constant are skipped. Interchangeable alternatives of a claim are
ordered (`encoders.symmetry`; the hint is permuted into that order first).

Budget: "placed" and the "first_available" stages (the sum and the "first_available_order"
chunks) are requirements (upstream's semantics and the planner's goal) and share the whole
budget; without either, one feasibility solve takes
their place (skipped when a hint is given and the first preference slice finds a solution
from it). "devices" and "order" are preferences: together they get at most
PREFERENCE_SHARE of the budget; with w = max(PREFERENCE_MIN, work of the required stages),
each runs in slices of doubling length starting at w, at most PREFERENCE_FACTOR x w in all,
and stops as soon as a slice proves its bound (OPTIMAL) or ends without improving on the
value it started from; its best value is then fixed like any other stage's. So a solution
found in 0.01 s is not followed by 10 s of tie-breaking; an unproven preference stage makes
the status FEASIBLE (`stage_status` tells which). Preference slices run without CP-SAT's
own symmetry detection, whose presolve cost alone can exceed a slice.

Determinism: every CP-SAT search of the package is set up by `cp_solver` (one rule for
clocks and determinism, see there): one worker, `random_seed = seed`, and the time limit a
*deterministic* time budget shared here by the stages and slices, so the same Problem and
seed give the same answer whatever the machine load. No wall clock bounds a search, but an
explicit `deadline` (`solver.deadline`; docs/semantics.md, "Limits and determinism").

Interrupts: a stop request (`solver.interrupt`: Ctrl-C, SIGTERM) stops the running call
(`CpSolver.stop_search`, which keeps its best solution) and skips every later one; the best
solution so far is returned as FEASIBLE, like a spent budget.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

# The statuses come from the solver's extension; `cp_model` (which imports pandas: half a
# CPU second) loads when a model or a solver is made (`new_cp_model`, `cp_solver`): issue
# #40, "A fast start".
from ortools.sat.python.cp_model_helper import CpSolverStatus

from dra_solver.encoders import build, nodes, symmetry
from dra_solver.encoders.model import new_cp_model
from dra_solver.encoders.objective import stages
from dra_solver.encoders.solution import decode, hint_values

from . import interrupt
from .deadline import Deadline, affords, passed
from .problem.flat import Assignment, Problem

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

Mode = Literal["all", "free"]
Strategy = Literal["pack", "spread"]

PREFERENCES = ("devices", "order")
"""Tie-break stages: optimised within a bounded share of the budget."""
PREFERENCE_SHARE = 0.2
"""Share of `time_limit` (deterministic) all preference stages together may use."""
PREFERENCE_MIN = 0.05
"""Shortest first slice of a preference stage, in deterministic seconds."""
PREFERENCE_FACTOR = 4.0
"""A preference stage may use this multiple of its first slice."""


class StageStatus(StrEnum):
    """A stage's status (`Lexicographic.status`, `CpsatOutcome.stage_status`). A stage's, not a
    plan's: what a plan may claim is said by `planners.bounds.verdict` only (`planning.outcome.
    Status`, a floor above). An enum so that no module compares a stage's status as text."""

    OPTIMAL = "OPTIMAL"
    """Proven optimal (or reached: the caller proved its optimum)."""
    FEASIBLE = "FEASIBLE"
    """The best value found; its bound not proven."""
    FIXED = "FIXED"
    """Nothing to optimise: a constant, or set by the model's mode."""
    NOT_RUN = "NOT_RUN"
    """The budget (or the deadline, or a stop request) came first."""


class SearchStatus(StrEnum):
    """A CP-SAT search's status (`CpsatOutcome.status`): every stage proven (OPTIMAL), a
    solution with some stage not proven or not run (FEASIBLE), proven without an allocation
    (INFEASIBLE), or no solution within the budget (UNKNOWN). Not a plan's status either."""

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class CpsatOutcome:
    """What one CP-SAT call found."""

    assignment: Assignment | None
    """claim -> placements in upstream result order; None when no solution was found."""
    status: SearchStatus
    """OPTIMAL (every stage proven), FEASIBLE (a solution, some stage not proven or not run),
    INFEASIBLE (proven: no allocation), UNKNOWN (no solution within the budget)."""
    placed: int
    """Number of claims placed."""
    objective: dict[str, int] = field(default_factory=dict)
    """Stage name -> value of the returned solution, in lexicographic order."""
    wall_time: float = 0.0
    """Seconds spent, model building included (a statistic: no decision reads it)."""
    model_stats: dict[str, int] = field(default_factory=dict)
    """variables, constraints, groups, grouped_devices, symmetry_classes, stages_solved
    (CP-SAT calls, slices included)."""
    stage_status: dict[str, StageStatus] = field(default_factory=dict)
    """Stage name -> OPTIMAL (proven), FEASIBLE (best found, bound not proven), FIXED (set by
    the mode or constant: nothing to optimise) or NOT_RUN (budget spent first)."""
    deterministic_time: float = 0.0
    """CP-SAT work spent, in deterministic seconds (what `time_limit` bounds)."""
    nodes: dict[int, str] = field(default_factory=dict)
    """Multi-node Problems: group (pod) -> the node chosen for it, placed groups only."""
    stage_bound: dict[str, int] = field(default_factory=dict)
    """Required stages that were solved -> CP-SAT's proven bound of the stage's value (for a
    maximised stage no solution of this model is worth more): a FEASIBLE "placed" stage still
    bounds the model's optimum."""
    cut_short: bool = False
    """The explicit deadline passed before the search was done: the answer depends on the
    machine's speed (a status is still OPTIMAL only where proven)."""

    def proven_bound(self, stage: str, value: int) -> int | None:
        """A proven bound of `stage`'s optimum: its `value` (of the solution returned) when the
        stage was proven optimal, else CP-SAT's bound of it (None: none known)."""
        return value if self.stage_status.get(stage) == StageStatus.OPTIMAL else self.stage_bound.get(stage)


@dataclass(frozen=True)
class Hint:
    """A solution to start the search from: `assignment` (e.g. the reference allocator's
    answer) and, for a multi-node Problem (`Problem.nodes`), `nodes`: each hinted group's
    node (None: derived from the assignment). Why one value: the nodes are the assignment's."""

    assignment: Assignment
    nodes: dict[int, str] | None = None


@dataclass(frozen=True)
class Reductions:
    """Which reductions the model keeps: `group`, the interchangeable-device groups;
    `break_symmetry`, the symmetry constraints. Both on but in tests and measurements, which
    turn one off to compare (`solve`)."""

    group: bool = True
    break_symmetry: bool = True


_ALL_REDUCTIONS = Reductions()
"""The default: every reduction on."""


def solve(
    problem: Problem,
    *,
    mode: Mode = "all",
    strategy: Strategy = "pack",
    time_limit: float = 10.0,
    seed: int = 0,
    hint: Hint | None = None,
    reductions: Reductions = _ALL_REDUCTIONS,
    deadline: Deadline | None = None,
) -> CpsatOutcome:
    """Allocate `problem` optimally.

    mode "all": every claim must be placed (one pod's claims), else INFEASIBLE; mode "free":
    place as much (priority-weighted) as possible. `hint` seeds the first stage (`Hint`).
    `reductions`: the model's reductions (`Reductions`: all on but in tests and measurements).
    Multi-node Problems (`Problem.nodes`): `outcome.nodes` gives the chosen nodes.
    `deadline`: the one wall-clock limit (None: none, the answer depends on `time_limit`'s
    deterministic work only); when it passes the search stops with its best solution and
    `outcome.cut_short` says so."""
    if strategy not in ("pack", "spread"):
        raise ValueError(f"unknown strategy {strategy!r}")
    start = time.perf_counter()  # for the statistic `wall_time` only
    break_symmetry = reductions.break_symmetry
    m = build(problem, mode=mode, group=reductions.group, break_symmetry=break_symmetry)
    levels = [
        Level(st.name, 0 if st.constant else st.expr, st.maximize, fixed=not st.optimise or st.constant)
        for st in stages(m, strategy)
    ]
    run = Lexicographic(m.cp, levels, float(time_limit), seed, deadline)
    classes = symmetry.alternative_classes(m) if break_symmetry else []
    model_stats = {
        "variables": len(m.cp.proto.variables),
        "constraints": len(m.cp.proto.constraints),
        "groups": len(m.groups),
        "grouped_devices": len(m.group_of),
        "symmetry_classes": len(classes),
    }
    if hint is not None:
        hinted = symmetry.canonical(m, hint.assignment) if break_symmetry else hint.assignment
        for var, val in hint_values(m, hinted) + nodes.hint_nodes(m, hinted, hint.nodes):
            m.cp.add_hint(var, val)
    status = _staged(run, levels, hinted=hint is not None)
    best = run.best if status in (SearchStatus.OPTIMAL, SearchStatus.FEASIBLE) else None
    assignment = None if best is None else decode(m, lambda v: int(best.value(v)))
    chosen = {} if best is None else nodes.decode_nodes(m, lambda v: int(best.value(v)))
    return CpsatOutcome(
        assignment=assignment,
        status=status,
        placed=len(assignment) if assignment is not None else 0,
        objective={lv.name: run.value(lv) for lv in levels} if assignment is not None else {},
        wall_time=time.perf_counter() - start,
        model_stats={**model_stats, "stages_solved": run.calls},
        stage_status=dict(run.status) if assignment is not None else {},
        deterministic_time=run.spent,
        nodes=dict(chosen),
        stage_bound=dict(run.bounds) if assignment is not None else {},
        cut_short=deadline is not None and deadline.fired,
    )


def _staged(run: Lexicographic, levels: Sequence[Level], hinted: bool) -> SearchStatus:
    """The per-device model's stages (module docstring): the required ones in order, then the
    preferences in bounded slices. Returns the call's status: OPTIMAL (every stage proven),
    FEASIBLE, INFEASIBLE or UNKNOWN (no solution)."""
    todo = [lv for lv in levels if not lv.fixed]
    prefer = [lv for lv in todo if lv.name in PREFERENCES]
    required = [lv for lv in todo if lv.name not in PREFERENCES]
    if not required and prefer and hinted:
        # A hint (the reference's answer) is usually a complete solution: the first
        # preference stage starts from it, which spares the feasibility solve. If it is
        # not one, a single short slice is lost and the feasibility solve runs as usual.
        cap = min(run.budget, PREFERENCE_FACTOR * PREFERENCE_MIN)
        run.preference(prefer[0], cap, min(cap, PREFERENCE_MIN))
        if run.best is not None:
            prefer = prefer[1:]
        elif run.last_status == CpSolverStatus.INFEASIBLE:  # no bound added yet: the model is
            return SearchStatus.INFEASIBLE
        else:
            run.status[prefer[0].name] = StageStatus.NOT_RUN
    failed = run.required(required) if required else run.feasible()
    if run.best is None:
        return SearchStatus.INFEASIBLE if failed == CpSolverStatus.INFEASIBLE else SearchStatus.UNKNOWN
    if all(run.status[lv.name] != StageStatus.NOT_RUN for lv in required):
        required_work = run.time_limit - run.budget
        share = min(run.budget, PREFERENCE_SHARE * run.time_limit)
        first = max(PREFERENCE_MIN, required_work)
        for lv in prefer:
            share -= run.preference(lv, min(share, PREFERENCE_FACTOR * first), first)
    return SearchStatus.OPTIMAL if proven(run.status) else SearchStatus.FEASIBLE


def proven(status: Mapping[str, StageStatus]) -> bool:
    """Whether every stage of a lexicographic search is proven (OPTIMAL or FIXED)."""
    return all(v in (StageStatus.OPTIMAL, StageStatus.FIXED) for v in status.values())


def found(status: CpSolverStatus) -> bool:
    """Whether one CP-SAT call returned a solution (proven optimal or not): the one reading
    of a call's status every model shares, so none spells the pair again."""
    return status in (CpSolverStatus.OPTIMAL, CpSolverStatus.FEASIBLE)


@dataclass(frozen=True)
class Level:
    """One stage of a lexicographic objective: its name, expression (an int: a constant) and
    direction; `fixed`: nothing to optimise (a constant, or set by the model's mode)."""

    name: str
    expr: cp_model.LinearExprT
    maximize: bool
    fixed: bool = False


class Lexicographic:
    """The one lexicographic stage runner, shared by the per-device model (`solve`) and
    preemption (`solver.preempt.model`): stages solved in order on one CpModel, each stage's
    value then fixed as a bound and its solution hinted to the next, so every stage starts
    from a feasible solution; one deterministic budget shared by every call (`time_limit`,
    less `spent` already used), every call set up by `cp_solver` under the one `deadline`.

    A stop request (`solver.interrupt`) skips every later call (the running one stops and
    keeps its best solution); a spent budget or a passed deadline leaves the stages not yet
    solved NOT_RUN once a solution exists. Tie-break stages run in bounded slices
    (`preference`); a stage the caller proved is fixed without a solve (`required`'s
    `reached`)."""

    def __init__(
        self,
        cp: cp_model.CpModel,
        levels: Sequence[Level],
        time_limit: float,
        seed: int,
        deadline: Deadline | None,
        spent: float = 0.0,
        floor: float = 0.0,
    ) -> None:
        self.cp = cp
        self.time_limit = time_limit
        self.seed = seed
        self.deadline = deadline
        self.budget = time_limit - spent
        self.floor = floor
        """Least deterministic seconds one call gets, budget left or not."""
        self.best: cp_model.CpSolver | None = None
        self.last: cp_model.CpSolver | None = None
        self.last_status: cp_model.CpSolverStatus = CpSolverStatus.UNKNOWN
        self.calls = 0
        self.bounds: dict[str, int] = {}
        self.status = {lv.name: StageStatus.FIXED if lv.fixed else StageStatus.NOT_RUN for lv in levels}
        self.values = {lv.name: lv.expr for lv in levels if isinstance(lv.expr, int)}
        """Stage -> its value when it was solved (or reached, or its constant)."""

    @property
    def spent(self) -> float:
        """Deterministic seconds of `time_limit` used (the calls before this runner's included)."""
        return self.time_limit - self.budget

    def required(
        self, levels: Sequence[Level], reached: Mapping[str, int] | None = None, upto: str | None = None
    ) -> cp_model.CpSolverStatus | None:
        """Optimise `levels` in order, each with what is left of the budget; fixed levels are
        skipped, `reached` ones (the caller proved their optimum) fixed at that value without
        a solve, OPTIMAL. Stops after `upto` when given, or at the first call without a
        solution (its stage NOT_RUN). Returns that call's status when no solution was found at
        all (`best` None), else None."""
        reached = reached or {}
        for lv in levels:
            if lv.fixed:
                continue
            if lv.name in reached:
                self.status[lv.name], self.values[lv.name] = StageStatus.OPTIMAL, reached[lv.name]
                self.fix(lv, reached[lv.name])
                continue
            if interrupt.requested() or self.budget <= 0 or passed(self.deadline):
                self.status[lv.name] = StageStatus.NOT_RUN
                if self.best is not None:
                    continue
            status = self.call(lv, self.budget)
            if not found(status):
                if self.best is None:
                    return status
                self.status[lv.name] = StageStatus.NOT_RUN
                break
            self.take()
            self._record_bound(lv)
            self.values[lv.name] = self.value(lv)
            self.fix(lv, self.values[lv.name])
            self.status[lv.name] = (
                StageStatus.OPTIMAL if status == CpSolverStatus.OPTIMAL else StageStatus.FEASIBLE
            )
            if lv.name == upto:
                break
        return None

    def feasible(self, hint: bool = True) -> cp_model.CpSolverStatus | None:
        """One call without an objective, for a solution when no stage was solved (every stage
        fixed or reached); None when one exists already. `hint`: its solution becomes the
        hint of later calls on the model (preemption asks the values only)."""
        if self.best is not None:
            return None
        status = self.call(None, self.budget)
        if found(status):
            if hint:
                self.take()
            else:
                self.best = self.last
        return status

    def preference(self, lv: Level, cap: float, first: float) -> float:
        """Optimise one tie-break stage within `cap` deterministic seconds, in slices of
        doubling length starting at `first`; stop when a slice proves the bound or ends without
        improving on the value it started from. Without an incumbent yet (hinted start), a
        slice that finds nothing ends the stage. Returns the work spent."""
        used, piece = 0.0, first
        value = self.value(lv) if self.best is not None else None
        while cap - used > 1e-9 and not passed(self.deadline) and not interrupt.requested():
            before = self.budget
            status = self.call(lv, min(piece, cap - used), tie_break=True)
            used += before - self.budget
            piece *= 2
            if not found(status):
                if self.best is None:
                    break
                continue  # the slice ended before CP-SAT took the hint: a longer one may
            assert self.last is not None
            new = int(self.last.value(lv.expr))
            self.take()
            self.values[lv.name] = new
            self.fix(lv, new)
            self.status[lv.name] = (
                StageStatus.OPTIMAL if status == CpSolverStatus.OPTIMAL else StageStatus.FEASIBLE
            )
            if status == CpSolverStatus.OPTIMAL or new == value:
                break
            value = new
        if self.status[lv.name] == StageStatus.NOT_RUN and value is not None:
            self.fix(lv, value)  # the incumbent's value: later stages must not lose it
            self.status[lv.name] = StageStatus.FEASIBLE if used > 0 else StageStatus.NOT_RUN
        return used

    def call(self, lv: Level | None, det_time: float, tie_break: bool = False) -> cp_model.CpSolverStatus:
        """One CP-SAT call on the model with `lv` as objective (None: none). `tie_break`: without
        CP-SAT's own symmetry detection, which costs up to ~0.2 deterministic s per presolve on
        models with many identical claims: more than a whole preference slice."""
        self.cp.clear_objective()
        if lv is not None:
            (self.cp.maximize if lv.maximize else self.cp.minimize)(lv.expr)
        if interrupt.requested():  # stopped (Ctrl-C): keep the best solution so far
            return CpSolverStatus.UNKNOWN
        solver = cp_solver(self.seed, max(det_time, self.floor), self.deadline)
        if tie_break:
            solver.parameters.symmetry_level = 0
        with interrupt.stoppable(solver.stop_search):
            status = solver.solve(self.cp)
        passed(self.deadline)  # a call the deadline ended: `fired`
        self.budget -= work_done(solver)
        self.calls += 1
        self.last, self.last_status = solver, status
        if status == CpSolverStatus.MODEL_INVALID:
            raise RuntimeError(f"CP-SAT model invalid: {self.cp.validate()}")
        return status

    def spend(self, seconds: float) -> None:
        """Deterministic seconds a solve outside the runner used (a relaxation, a check of a
        hint): they count against the one budget."""
        self.budget -= seconds

    def adopt(self, lv: Level, solver: cp_model.CpSolver, value: int, proven: bool) -> None:
        """A solution found outside the runner (a hint checked with its values fixed) becomes
        the best, with `lv`'s value in it; `proven`: that value is the stage's optimum (the
        caller met a bound valid for every solution: `planners.bounds.reaches`)."""
        self.best = self.last = solver
        self.values[lv.name] = value
        self.status[lv.name] = StageStatus.OPTIMAL if proven else StageStatus.FEASIBLE

    def take(self) -> None:
        """The last call's solution becomes the best and the hint of the next call."""
        assert self.last is not None
        self.best = self.last
        hint_with(self.cp, self.last.response_proto.solution)

    def fix(self, lv: Level, value: int) -> None:
        """Later calls keep this stage at `value` or better."""
        self.cp.add(lv.expr >= value if lv.maximize else lv.expr <= value)

    def _record_bound(self, lv: Level) -> None:
        """CP-SAT's proven bound of the stage just solved (integer objective: rounded inward)."""
        assert self.last is not None
        raw = self.last.best_objective_bound
        if raw != raw or abs(raw) == float("inf"):
            return
        self.bounds[lv.name] = math.floor(raw + 1e-6) if lv.maximize else math.ceil(raw - 1e-6)

    def value(self, lv: Level) -> int:
        """The best solution's value of `lv` (a constant's own)."""
        if isinstance(lv.expr, int):
            return lv.expr
        assert self.best is not None
        return int(self.best.value(lv.expr))

    def solution(self) -> list[int] | None:
        """The best solution, one value per variable (None: none found)."""
        return None if self.best is None else list(self.best.response_proto.solution)


DEADLINE_FLOOR = 0.01
"""Least wall-clock seconds a search started under a `Deadline` gets, passed or not (it still
reads its hint and the solution the hint gives at once)."""


def cp_solver(seed: int, budget: float, deadline: Deadline | None = None) -> cp_model.CpSolver:
    """A CP-SAT solver set up by the package's one rule for clocks and determinism (every
    `CpSolver` of dra-solver comes from here: this module's stages, the aggregated model's
    pricing and integer master, the blocking set of `explain`):

    - one worker (`num_workers = 1`) and `random_seed = seed`: the same model and seed search
      the same way;
    - the budget is *deterministic* time (`max_deterministic_time = budget`: CP-SAT's work
      counter, roughly seconds on a typical machine), so where a search stops depends on the
      work done, never on the machine's load — the same input and seed give the same answer;
      it is also what bounds a runaway search: no wall clock guards it;
    - the wall clock stops a search only where the caller passed a `deadline`
      (`max_time_in_seconds` = its seconds left, at least DEADLINE_FLOOR): the `--timeout`
      escape hatch, whose firing the run records (`solver.deadline`);
    - CP-SAT does not catch SIGINT: a stop request (`solver.interrupt`) stops a running search
      through `interrupt.stoppable(solver.stop_search)`, which keeps its best solution.

    Callers add what their model needs (linearization level, symmetry detection)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = budget
    if deadline is not None:
        solver.parameters.max_time_in_seconds = max(deadline.left(), DEADLINE_FLOOR)
    solver.parameters.catch_sigint_signal = False  # `interrupt` stops it and knows it did
    return solver


WORK_DIGITS = 9
"""Decimal places of a search's deterministic seconds that budgets are charged with (`work_done`)."""


def work_done(solver: cp_model.CpSolver) -> float:
    """The deterministic seconds a finished search used, to `WORK_DIGITS` places: what every
    budget of the package is charged with.

    Why: CP-SAT's reported work once differed in its last bit between two processes running
    the same model, seed and search (0.0001840063000000001 and 0.00018400630000000012: same
    status, solution and branches; two copies of the test suite at once). Charged raw, that
    bit would pass into every later search's `max_deterministic_time` of the run; rounded, the
    same search charges the same amount (docs/semantics.md, "Limits and determinism")."""
    return round(solver.deterministic_time, WORK_DIGITS)


CP_MODEL_IMPORT_CPU = 0.45
"""CPU seconds importing CP-SAT's Python layer takes (`cp_model`, with pandas and numpy) on
the reference machine: 0.40-0.41 measured after `cli.plan`'s own imports (2 shared cores,
load 7), rounded up."""


def cp_model_loaded() -> bool:
    """Whether CP-SAT's Python layer is imported already (then using it costs no import)."""
    return "ortools.sat.python.cp_model" in sys.modules


def load_cp_model(deadline: Deadline | None = None) -> bool:
    """Import CP-SAT's Python layer now (`cp_model`: half a CPU second with pandas, loaded on
    first use otherwise) and say so (True), so that a step timed by a share of a deadline
    (`Deadline.share`) does not spend its share importing — unless `deadline` leaves less
    than the import takes (`CP_MODEL_IMPORT_CPU`, `Deadline.affords`, which then fires it):
    False, nothing imported, and the caller builds no model. Why: the import cannot look at
    the deadline, so begun just before it, it ends past it by half a CPU second or more
    (docs/semantics.md, "Limits and determinism"). Loaded already: True, at no cost."""
    if not cp_model_loaded() and not affords(deadline, CP_MODEL_IMPORT_CPU):
        return False
    from ortools.sat.python import cp_model  # noqa: F401  # the import is the point

    return True


def hint_with(cp: cp_model.CpModel, values: Sequence[int]) -> None:
    """Replace `cp`'s hints by a complete solution (one value per variable, in order): the
    next solve of a stage, or of a model a feasibility question has just answered, starts
    from it."""
    cp.clear_hints()
    hint = cp.proto.solution_hint
    hint.vars.extend(range(len(values)))
    hint.values.extend(values)


__all__ = [
    "CP_MODEL_IMPORT_CPU",
    "DEADLINE_FLOOR",
    "CpsatOutcome",
    "Hint",
    "Lexicographic",
    "Level",
    "Mode",
    "Reductions",
    "Strategy",
    "cp_model_loaded",
    "cp_solver",
    "hint_with",
    "load_cp_model",
    "new_cp_model",
    "proven",
    "solve",
]
