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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ortools.sat.python import cp_model

from dra_solver.encoders import build, nodes, symmetry
from dra_solver.encoders.model import Model
from dra_solver.encoders.objective import Stage, stages
from dra_solver.encoders.solution import decode, hint_values

from . import interrupt
from .deadline import Deadline, passed
from .problem.flat import Assignment, Problem

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

_STATUS = {
    cp_model.OPTIMAL: "OPTIMAL",
    cp_model.FEASIBLE: "FEASIBLE",
    cp_model.INFEASIBLE: "INFEASIBLE",
    cp_model.UNKNOWN: "UNKNOWN",
}


@dataclass(frozen=True)
class CpsatOutcome:
    """What one CP-SAT call found."""

    assignment: Assignment | None
    """claim -> placements in upstream result order; None when no solution was found."""
    status: str
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
    stage_status: dict[str, str] = field(default_factory=dict)
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


def solve(
    problem: Problem,
    *,
    mode: Mode = "all",
    strategy: Strategy = "pack",
    time_limit: float = 10.0,
    seed: int = 0,
    hint: Assignment | None = None,
    group: bool = True,
    break_symmetry: bool = True,
    hint_nodes: dict[int, str] | None = None,
    deadline: Deadline | None = None,
) -> CpsatOutcome:
    """Allocate `problem` optimally.

    mode "all": every claim must be placed (one pod's claims), else INFEASIBLE; mode "free":
    place as much (priority-weighted) as possible. `hint` (e.g. the reference allocator's
    answer) seeds the first stage. `group=False` disables the interchangeable-device
    reduction and `break_symmetry=False` the symmetry constraints (for tests and
    measurements). Multi-node Problems (`Problem.nodes`): `hint_nodes` gives the hinted
    group's node (else one is derived from the hint) and `outcome.nodes` the chosen ones.
    `deadline`: the one wall-clock limit (None: none, the answer depends on `time_limit`'s
    deterministic work only); when it passes the search stops with its best solution and
    `outcome.cut_short` says so."""
    if strategy not in ("pack", "spread"):
        raise ValueError(f"unknown strategy {strategy!r}")
    run = _Stages(problem, mode, strategy, float(time_limit), seed, group, break_symmetry, deadline)
    if hint is not None:
        if break_symmetry:
            hint = symmetry.canonical(run.m, hint)
        for var, val in hint_values(run.m, hint) + nodes.hint_nodes(run.m, hint, hint_nodes):
            run.m.cp.add_hint(var, val)
        run.hinted = True
    return run.solve()


class _Stages:
    """One solve call: the model, the budget left, the best solution so far."""

    def __init__(
        self,
        problem: Problem,
        mode: str,
        strategy: str,
        time_limit: float,
        seed: int,
        group: bool,
        break_symmetry: bool,
        deadline: Deadline | None,
    ) -> None:
        self.start = time.perf_counter()  # for the statistic `wall_time` only
        self.m = build(problem, mode=mode, group=group, break_symmetry=break_symmetry)
        self.levels = stages(self.m, strategy)
        self.time_limit = time_limit
        self.seed = seed
        self.budget = time_limit
        self.deadline = deadline
        self.best: cp_model.CpSolver | None = None
        self.last: cp_model.CpSolver | None = None
        self.last_status: cp_model.CpSolverStatus = cp_model.UNKNOWN
        self.calls = 0
        self.hinted = False
        self.bounds: dict[str, int] = {}
        self.status = {s.name: "NOT_RUN" if s.optimise and not s.constant else "FIXED" for s in self.levels}
        classes = symmetry.alternative_classes(self.m) if break_symmetry else []
        self.stats = {
            "variables": len(self.m.cp.proto.variables),
            "constraints": len(self.m.cp.proto.constraints),
            "groups": len(self.m.groups),
            "grouped_devices": len(self.m.group_of),
            "symmetry_classes": len(classes),
        }

    def solve(self) -> CpsatOutcome:
        todo = [s for s in self.levels if self.status[s.name] == "NOT_RUN"]
        prefer = [s for s in todo if s.name in PREFERENCES]
        required = [s for s in todo if s.name not in PREFERENCES]
        if not required and prefer and self.hinted:
            # A hint (the reference's answer) is usually a complete solution: the first
            # preference stage starts from it, which spares the feasibility solve. If it is
            # not one, a single short slice is lost and the feasibility solve runs as usual.
            cap = min(self.budget, PREFERENCE_FACTOR * PREFERENCE_MIN)
            self._preference(prefer[0], cap, min(cap, PREFERENCE_MIN))
            if self.best is not None:
                prefer = prefer[1:]
            elif self.last_status == cp_model.INFEASIBLE:  # no bound added yet: the model is
                return self._outcome(None, "INFEASIBLE")
            else:
                self.status[prefer[0].name] = "NOT_RUN"
        runs: list[Stage | None] = [*required] or ([None] if self.best is None else [])
        for stage in runs:
            if self.best is not None and (self.budget <= 0 or passed(self.deadline)):
                break
            status = self._call(stage, self.budget)
            if status == cp_model.INFEASIBLE and self.best is None:
                return self._outcome(None, "INFEASIBLE")
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                break
            self._take()
            if stage is not None:
                self._record_bound(stage)
                self._bound(stage, self._value(stage))
                self.status[stage.name] = _STATUS[status]
        if self.best is None:
            return self._outcome(None, "UNKNOWN")
        if all(self.status[s.name] != "NOT_RUN" for s in required):
            required_work = self.time_limit - self.budget
            share = min(self.budget, PREFERENCE_SHARE * self.time_limit)
            first = max(PREFERENCE_MIN, required_work)
            for stage in prefer:
                share -= self._preference(stage, min(share, PREFERENCE_FACTOR * first), first)
        proven = all(v in ("OPTIMAL", "FIXED") for v in self.status.values())
        best = self.best
        assignment = decode(self.m, lambda v: int(best.value(v)))
        chosen = nodes.decode_nodes(self.m, lambda v: int(best.value(v)))
        return self._outcome(assignment, "OPTIMAL" if proven else "FEASIBLE", chosen)

    def _preference(self, stage: Stage, cap: float, first: float) -> float:
        """Optimise one preference stage within `cap` deterministic seconds, in slices of
        doubling length starting at `first`; stop when a slice proves the bound or ends without
        improving on the value it started from. Without an incumbent yet (hinted start), a
        slice that finds nothing ends the stage. Returns the work spent."""
        used, piece = 0.0, first
        value = self._value(stage) if self.best is not None else None
        while cap - used > 1e-9 and not passed(self.deadline) and not interrupt.requested():
            before = self.budget
            status = self._call(stage, min(piece, cap - used))
            used += before - self.budget
            piece *= 2
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                if self.best is None:
                    break
                continue  # the slice ended before CP-SAT took the hint: a longer one may
            assert self.last is not None
            new = int(self.last.value(stage.expr))
            self._take()
            self._bound(stage, new)
            self.status[stage.name] = _STATUS[status]
            if status == cp_model.OPTIMAL or new == value:
                break
            value = new
        if self.status[stage.name] == "NOT_RUN" and value is not None:
            self._bound(stage, value)  # the incumbent's value: later stages must not lose it
            self.status[stage.name] = "FEASIBLE" if used > 0 else "NOT_RUN"
        return used

    def _call(self, stage: Stage | None, det_time: float) -> cp_model.CpSolverStatus:
        """One CP-SAT call on the current model with `stage` as objective."""
        self.m.cp.clear_objective()
        if stage is not None:
            (self.m.cp.maximize if stage.maximize else self.m.cp.minimize)(stage.expr)
        if interrupt.requested():  # stopped (Ctrl-C): keep the best solution so far
            return cp_model.UNKNOWN
        solver = cp_solver(self.seed, max(det_time, 0.0), self.deadline)
        if stage is not None and stage.name in PREFERENCES:
            # CP-SAT's own symmetry detection costs up to ~0.2 deterministic s per presolve on
            # models with many identical claims: more than a whole preference slice.
            solver.parameters.symmetry_level = 0
        with interrupt.stoppable(solver.stop_search):
            status = solver.solve(self.m.cp)
        passed(self.deadline)  # a call the deadline ended: `fired`
        self.budget -= solver.deterministic_time
        self.calls += 1
        self.last, self.last_status = solver, status
        if status == cp_model.MODEL_INVALID:
            raise RuntimeError(f"CP-SAT model invalid: {self.m.cp.validate()}")
        return status

    def _take(self) -> None:
        """The last call's solution becomes the best and the hint of the next call."""
        assert self.last is not None
        self.best = self.last
        _hint_solution(self.m, self.last)

    def _bound(self, stage: Stage, value: int) -> None:
        """Later calls keep this stage at `value` or better."""
        self.m.cp.add(stage.expr >= value if stage.maximize else stage.expr <= value)

    def _record_bound(self, stage: Stage) -> None:
        """CP-SAT's proven bound of the stage just solved (integer objective: rounded inward)."""
        assert self.last is not None
        raw = self.last.best_objective_bound
        if raw != raw or abs(raw) == float("inf"):
            return
        self.bounds[stage.name] = math.floor(raw + 1e-6) if stage.maximize else math.ceil(raw - 1e-6)

    def _value(self, stage: Stage) -> int:
        assert self.best is not None
        return 0 if stage.constant else int(self.best.value(stage.expr))

    def _outcome(
        self, assignment: Assignment | None, status: str, chosen: dict[int, str] | None = None
    ) -> CpsatOutcome:
        return CpsatOutcome(
            assignment=assignment,
            status=status,
            placed=len(assignment) if assignment is not None else 0,
            objective={s.name: self._value(s) for s in self.levels} if assignment is not None else {},
            wall_time=time.perf_counter() - self.start,
            model_stats={**self.stats, "stages_solved": self.calls},
            stage_status=dict(self.status) if assignment is not None else {},
            deterministic_time=self.time_limit - self.budget,
            nodes=dict(chosen or {}),
            stage_bound=dict(self.bounds) if assignment is not None else {},
            cut_short=self.deadline is not None and self.deadline.fired,
        )


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
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = budget
    if deadline is not None:
        solver.parameters.max_time_in_seconds = max(deadline.left(), DEADLINE_FLOOR)
    solver.parameters.catch_sigint_signal = False  # `interrupt` stops it and knows it did
    return solver


def _hint_solution(m: Model, solver: cp_model.CpSolver) -> None:
    """Replace the hints by the solution just found (complete, feasible for the next stage)."""
    hint_with(m.cp, solver.response_proto.solution)


def hint_with(cp: cp_model.CpModel, values: Sequence[int]) -> None:
    """Replace `cp`'s hints by a complete solution (one value per variable, in order): the
    next solve of a stage, or of a model a feasibility question has just answered, starts
    from it."""
    cp.clear_hints()
    hint = cp.proto.solution_hint
    hint.vars.extend(range(len(values)))
    hint.values.extend(values)


__all__ = ["DEADLINE_FLOOR", "CpsatOutcome", "Mode", "Strategy", "cp_solver", "hint_with", "solve"]
