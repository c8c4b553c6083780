"""solver.cpsat budget: preference stages ("devices", "order") get a bounded share of the
deterministic budget, required stages keep it all, and slicing stays deterministic."""

from __future__ import annotations

import pytest
from cpsat_builders import PB, violations

from benchmarks.workloads import hard_list_match
from dra_solver import Cluster
from dra_solver.cpsat import PREFERENCE_MIN, Hint, Reductions, solve
from dra_solver.gates import FeatureGates
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Placement, Problem


@pytest.fixture(scope="module")
def hard() -> Problem:
    c = Cluster.from_objects(hard_list_match())
    return build_problem(c, c.unallocated_claims(), "node-1", FeatureGates.of("DRAListTypeAttributes=true"))


def test_hard_list_match_is_proven_fast(hard: Problem) -> None:
    out = solve(hard, time_limit=10)
    assert out.status == "OPTIMAL"
    assert out.objective == {
        "placed": 1,
        "first_available": 0,
        "first_available_order": 0,
        "devices": 32,
        "order": 1520,
    }
    assert out.deterministic_time < 0.5  # was the whole 10 s budget before symmetry breaking
    devices = [pl.device for pl in out.assignment[0]]  # type: ignore[index]
    assert devices == list(range(31, 63))  # r0 < r1 < ... : first fit's order
    assert violations(hard, out.assignment or {}) == []


def test_preferences_are_bounded_without_symmetry_breaking(hard: Problem) -> None:
    """Without the symmetry constraints "order" cannot be proven: it stops within its share."""
    out = solve(hard, time_limit=10, reductions=Reductions(break_symmetry=False))
    assert out.status == "FEASIBLE" and out.stage_status["order"] == "FEASIBLE"
    assert out.stage_status["devices"] == "OPTIMAL"
    assert out.deterministic_time < 2.0  # <= required work + 2 x 4 x max(0.05, required work)
    assert violations(hard, out.assignment or {}) == []
    again = solve(hard, time_limit=10, reductions=Reductions(break_symmetry=False))
    assert again.assignment == out.assignment and again.objective == out.objective


def test_small_budget_is_respected(hard: Problem) -> None:
    out = solve(hard, time_limit=0.1, reductions=Reductions(break_symmetry=False))
    assert out.assignment is not None
    assert out.deterministic_time <= 0.1 + PREFERENCE_MIN  # CP-SAT overshoots by little


def test_required_stage_keeps_the_whole_budget() -> None:
    pb = PB()
    ds = [pb.device(multi=True, capacity={"mem": 8}) for _ in range(4)]
    for size in (3, 3, 3, 5, 5, 2, 2, 6, 4, 4, 1):
        pb.exact(pb.claim(), ds, consumed={d: {"mem": size} for d in ds})
    out = solve(pb.build(), mode="free")
    # 38 mem asked, 32 free: dropping the 6 leaves {3,5} {3,5} {3,4,1} {2,2,4}
    assert out.stage_status["placed"] == "OPTIMAL" and out.placed == 10 and 7 not in (out.assignment or {})
    assert out.stage_status["first_available"] == "FIXED"
    assert out.stage_status["first_available_order"] == "FIXED"
    assert set(out.stage_status) == {"placed", "first_available", "first_available_order", "devices", "order"}


def test_nothing_to_optimise_is_one_feasibility_solve() -> None:
    pb = PB()
    d = pb.device()
    pb.exact(pb.claim(), [d])
    out = solve(pb.build())
    assert out.status == "OPTIMAL" and out.stage_status["devices"] == "OPTIMAL"
    assert out.model_stats["stages_solved"] == 3  # feasibility, devices, order


def test_a_hint_spares_the_feasibility_solve() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(3)]
    pb.exact(pb.claim(), ds, count=2)
    p = pb.build()
    good = {0: [Placement(0, 0, 1), Placement(0, 0, 2)]}
    hinted = solve(p, hint=Hint(good))
    assert hinted.model_stats["stages_solved"] == 2  # devices (from the hint), order
    assert hinted.status == "OPTIMAL" and [pl.device for pl in hinted.assignment[0]] == [0, 1]  # type: ignore[index]
    bad = {0: [Placement(0, 0, 1)]}  # one device short: CP-SAT repairs it or falls back
    out = solve(p, hint=Hint(bad))
    assert out.status == "OPTIMAL" and out.objective == hinted.objective


def test_hinted_infeasible_problem() -> None:
    pb = PB()
    d = pb.device()
    pb.exact(pb.claim(), [d])
    pb.exact(pb.claim(), [d])
    hint = {0: [Placement(0, 0, d)], 1: [Placement(1, 1, d)]}
    out = solve(pb.build(), hint=Hint(hint))
    assert (out.status, out.assignment) == ("INFEASIBLE", None)
