"""One lexicographic stage runner (issue #41, step 3): `cpsat.Lexicographic` solves the per-device
model's stages and preemption's; its rules on a small model of its own."""

from __future__ import annotations

from typing import Any

import pytest
from ortools.sat.python import cp_model
from preempt_cases import Pending, Running, build

from benchmarks.workloads import hard_list_match
from dra_solver import Cluster
from dra_solver.cpsat import Level, Lexicographic, StageStatus, proven, solve
from dra_solver.gates import FeatureGates
from dra_solver.preempt import plan_preempt
from dra_solver.problem.build import build_problem


def _runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The stages of every `Lexicographic` made, run after run."""
    seen: list[list[str]] = []
    original = Lexicographic.__init__

    def spy(self: Lexicographic, cp: Any, levels: Any, *args: Any, **kwargs: Any) -> None:
        seen.append([lv.name for lv in levels])
        original(self, cp, levels, *args, **kwargs)

    monkeypatch.setattr(Lexicographic, "__init__", spy)
    return seen


def test_the_per_device_model_and_preemption_run_their_stages_through_the_one_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _runs(monkeypatch)
    c = Cluster.from_objects(hard_list_match())
    problem = build_problem(
        c, c.unallocated_claims(), "node-1", FeatureGates.of("DRAListTypeAttributes=true")
    )
    assert solve(problem, time_limit=10).status == "OPTIMAL"
    assert seen == [["placed", "first_available", "first_available_order", "devices", "order"]]
    out = plan_preempt(build({"n1": 2}, [Running("a", "n1", 1, (0, 1))], [Pending("p", 100, 2)]))
    assert out.pod("default/p").placed and out.stats["stage_status"]
    assert len(seen) > 1 and all(run[:2] == ["placed", "pdb_violations"] for run in seen[1:])


def _model() -> tuple[cp_model.CpModel, list[Level]]:
    """x + y <= 3, x, y in 0..3: maximise x, then y; a constant stage between them."""
    cp = cp_model.CpModel()
    x, y = cp.new_int_var(0, 3, "x"), cp.new_int_var(0, 3, "y")
    cp.add(x + y <= 3)
    return cp, [Level("x", x, True), Level("constant", 7, True, fixed=True), Level("y", y, True)]


def test_each_stage_is_fixed_before_the_next() -> None:
    cp, levels = _model()
    run = Lexicographic(cp, levels, 5.0, 0, None)
    assert run.required(levels) is None
    assert run.values == {"x": 3, "constant": 7, "y": 0}
    assert run.status == {
        "x": StageStatus.OPTIMAL,
        "constant": StageStatus.FIXED,
        "y": StageStatus.OPTIMAL,
    } and proven(run.status)


def test_a_reached_stage_is_fixed_without_a_solve() -> None:
    cp, levels = _model()
    run = Lexicographic(cp, levels, 5.0, 0, None)
    assert run.required(levels, reached={"x": 1}) is None
    assert run.calls == 1 and run.values == {"x": 1, "constant": 7, "y": 2}
    assert run.status == {"x": StageStatus.OPTIMAL, "constant": StageStatus.FIXED, "y": StageStatus.OPTIMAL}


def test_upto_stops_after_its_stage_and_feasible_asks_for_values_only() -> None:
    cp, levels = _model()
    run = Lexicographic(cp, levels, 5.0, 0, None)
    assert run.required(levels, upto="x") is None
    assert run.calls == 1 and run.status["y"] == StageStatus.NOT_RUN and not proven(run.status)
    cp, levels = _model()
    run = Lexicographic(cp, levels, 5.0, 0, None)
    assert run.required(levels, reached={"x": 3, "y": 0}) is None and run.best is None
    assert run.feasible() == cp_model.OPTIMAL and run.solution() is not None  # every stage reached


def test_a_spent_budget_leaves_the_later_stages_not_run() -> None:
    cp, levels = _model()
    run = Lexicographic(cp, levels, 5.0, 0, None, spent=5.0, floor=0.05)
    run.required(levels)  # the first stage still gets a call (`floor`): no solution exists yet
    assert run.best is not None and run.status["y"] == StageStatus.NOT_RUN
    assert not proven(run.status)
    assert not proven({"x": StageStatus.OPTIMAL, "y": StageStatus.FEASIBLE})
