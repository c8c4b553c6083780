"""The CP-SAT allocator: the best allocation of a Problem under the upstream rules.

Why this shape: `encoders.build` turns the flat Problem into a CpModel (one module per rule
family); this module only orchestrates — objective stages, time budget, hints, decoding.

Objective: lexicographic, solved in stages (see `encoders.objective`): placed claims weighted
by priority (mode "free" only) > firstAvailable order > devices opened (pack: fewest, spread:
most distinct) > device-order tie-break. After each stage its value is fixed as a bound and
the solution is hinted to the next stage, so every stage starts from a feasible solution.
Stages whose expression is constant are skipped.

Determinism: one worker (`num_workers = 1`), `random_seed = seed`, and the time limit is a
*deterministic* time budget (`max_deterministic_time`, CP-SAT's work counter, roughly
seconds on a typical machine) shared by the stages, so the same Problem and seed give the same
answer whatever the machine load. A wall-clock guard of 3 x time_limit + 1 s only fires on a
machine so overloaded that determinism is already lost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from ortools.sat.python import cp_model

from encoders import build
from encoders.model import Model
from encoders.objective import Stage, stages
from encoders.solution import decode, hint_values
from solver.problem_types import Assignment, Problem

Mode = Literal["all", "free"]
Strategy = Literal["pack", "spread"]

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
    """Seconds spent, model building included."""
    model_stats: dict[str, int] = field(default_factory=dict)
    """variables, constraints, groups, grouped_devices, stages_solved."""


def solve(
    problem: Problem,
    *,
    mode: Mode = "all",
    strategy: Strategy = "pack",
    time_limit: float = 10.0,
    seed: int = 0,
    hint: Assignment | None = None,
    group: bool = True,
) -> CpsatOutcome:
    """Allocate `problem` optimally.

    mode "all": every claim must be placed (one pod's claims), else INFEASIBLE; mode "free":
    place as much (priority-weighted) as possible. `hint` (e.g. the reference allocator's
    answer) seeds the first stage. `group=False` disables the interchangeable-device
    reduction (for tests and measurements).
    """
    if strategy not in ("pack", "spread"):
        raise ValueError(f"unknown strategy {strategy!r}")
    start = time.perf_counter()
    m = build(problem, mode=mode, group=group)
    levels = stages(m, strategy)
    stats = {
        "variables": len(m.cp.proto.variables),
        "constraints": len(m.cp.proto.constraints),
        "groups": len(m.groups),
        "grouped_devices": len(m.group_of),
    }
    if hint is not None:
        for var, val in hint_values(m, hint):
            m.cp.add_hint(var, val)

    todo: list[Stage | None] = [s for s in levels if s.optimise and not s.constant]
    if not todo:
        todo = [None]  # nothing to optimise: one feasibility solve
    budget = float(time_limit)
    wall_deadline = start + 3 * time_limit + 1
    best: cp_model.CpSolver | None = None
    proven = True
    solved = 0
    for stage in todo:
        left_wall = wall_deadline - time.perf_counter()
        if best is not None and (budget <= 0 or left_wall <= 0):
            proven = False
            break
        m.cp.clear_objective()
        if stage is not None:
            (m.cp.maximize if stage.maximize else m.cp.minimize)(stage.expr)
        solver = _solver(seed, max(budget, 0.0), max(left_wall, 0.01))
        status = solver.solve(m.cp)
        budget -= solver.deterministic_time
        solved += 1
        if status == cp_model.INFEASIBLE and best is None:
            return _outcome(None, "INFEASIBLE", {}, start, stats, solved)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if status == cp_model.MODEL_INVALID:
                raise RuntimeError(f"CP-SAT model invalid: {m.cp.validate()}")
            proven = False
            break
        proven = proven and status == cp_model.OPTIMAL
        best = solver
        if stage is not None:
            value = int(solver.value(stage.expr))
            m.cp.add(stage.expr >= value if stage.maximize else stage.expr <= value)
        _hint_solution(m, solver)
    if best is None:
        return _outcome(None, "UNKNOWN", {}, start, stats, solved)
    objective = {s.name: _value(best, s) for s in levels}
    assignment = decode(m, lambda v: int(best.value(v)))
    return _outcome(assignment, "OPTIMAL" if proven else "FEASIBLE", objective, start, stats, solved)


def _solver(seed: int, det_time: float, wall: float) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = det_time
    solver.parameters.max_time_in_seconds = wall
    return solver


def _hint_solution(m: Model, solver: cp_model.CpSolver) -> None:
    """Replace the hints by the solution just found (complete, feasible for the next stage)."""
    m.cp.clear_hints()
    values = solver.response_proto.solution
    hint = m.cp.proto.solution_hint
    hint.vars.extend(range(len(values)))
    hint.values.extend(values)


def _value(solver: cp_model.CpSolver, stage: Stage) -> int:
    if stage.constant:
        return 0
    return int(solver.value(stage.expr))


def _outcome(
    assignment: Assignment | None, status: str, objective: dict[str, int], start: float,
    stats: dict[str, int], solved: int,
) -> CpsatOutcome:
    return CpsatOutcome(
        assignment=assignment,
        status=status,
        placed=len(assignment) if assignment is not None else 0,
        objective=objective,
        wall_time=time.perf_counter() - start,
        model_stats={**stats, "stages_solved": solved},
    )


__all__ = ["CpsatOutcome", "Mode", "Strategy", "solve"]
