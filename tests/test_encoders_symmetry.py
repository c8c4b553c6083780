"""encoders.symmetry: which alternatives are interchangeable, and that ordering them keeps an
optimal solution (brute force on tiny Problems), accepts valid canonical hints, and leaves
feasibility alone."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from cpsat_builders import PB, Sub, brute_force, devices_of, feasible, ints, violations
from example_counts import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from dra_solver.cpsat import Hint, Reductions, solve
from dra_solver.encoders import build
from dra_solver.encoders.solution import hint_values
from dra_solver.encoders.symmetry import alternative_classes, canonical, weights
from dra_solver.problem.flat import Placement, Problem


def _classes(p: Problem) -> list[list[int]]:
    return alternative_classes(build(p))


def test_identical_requests_form_one_class() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    alts = [pb.exact(c, ds) for _ in range(3)]
    assert _classes(pb.build()) == [alts]


def test_differences_split_classes() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    multi = pb.device(multi=True, capacity={"mem": 8})
    c = pb.claim()
    base = [pb.exact(c, ds), pb.exact(c, ds)]
    pb.exact(c, ds, count=2)  # other count
    pb.exact(c, ds, admin=True)  # admin
    pb.exact(c, ds[:3])  # other candidates
    pb.request(c, Sub(ds), Sub(ds))  # firstAvailable: never ordered
    mem = [pb.exact(c, [multi], consumed={multi: {"mem": m}}) for m in (1, 1, 2)]  # consumed amounts
    other = pb.claim()
    pb.exact(other, ds)  # same shape, other claim
    assert _classes(pb.build()) == [base, mem[:2]]


def test_constraint_coverage_and_values_split_classes() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(3)]
    c = pb.claim()
    a, b = pb.exact(c, ds), pb.exact(c, ds)
    pb.exact(c, ds)
    pb.constraint(c, "match", [a, b], {d: ints(1) for d in ds})
    assert _classes(pb.build()) == [[a, b]]  # the third is not covered
    # Same coverage, but a derived attribute gives b other values on one device.
    pb2 = PB()
    ds = [pb2.device() for _ in range(3)]
    c = pb2.claim()
    a, b = pb2.exact(c, ds), pb2.exact(c, ds)
    pb2.constraint(c, "distinct", [a, b], {d: ints(d) for d in ds})
    p = pb2.build()
    k = p.constraints[0]
    values = dict(k.values)
    values[(b, ds[0])] = ints(7)
    p2 = replace(p, constraints=(replace(k, values=values),))
    assert _classes(p) == [[a, b]] and _classes(p2) == []


def test_impossible_and_all_mode_are_not_ordered() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(2)]
    c = pb.claim()
    pb.all(c, ds)
    pb.all(c, ds)
    pb.exact(c, ds, count=3)  # impossible: 2 candidates
    pb.exact(c, ds, count=3)
    assert _classes(pb.build()) == []


def test_feasible_and_infeasible() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(3)]
    c = pb.claim()
    for _ in range(3):
        pb.exact(c, ds)
    assert feasible(pb.build()) and feasible(pb.build(), group=False)
    pb.exact(c, ds)  # 4 one-device requests, 3 devices
    assert not feasible(pb.build()) and not feasible(pb.build(), group=False)


def test_shared_device_may_serve_every_row() -> None:
    """Non-strict order: interchangeable rows may take the same multi device."""
    pb = PB()
    d = pb.device(multi=True, capacity={"mem": 3})
    c = pb.claim()
    for _ in range(3):
        pb.exact(c, [d], consumed={d: {"mem": 1}})
    assert feasible(pb.build())


def test_rows_come_out_in_device_order() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(6)]
    c = pb.claim()
    for _ in range(3):
        pb.exact(c, list(reversed(ds)))
    pb.exact(pb.claim(), [ds[0], ds[2]], count=2)  # the other claim takes 0 and 2
    out = solve(pb.build(), reductions=Reductions(group=False))
    assert out.status == "OPTIMAL"
    assert devices_of(out.assignment, 0) == [1, 3, 4]  # request r0 < r1 < r2


def test_canonical_sorts_rows_and_keeps_validity() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    alts = [pb.exact(c, ds) for _ in range(3)]
    p = pb.build()
    m = build(p, group=False)
    hint = {0: [Placement(0, alts[0], 3), Placement(0, alts[1], 0), Placement(0, alts[2], 2)]}
    out = canonical(m, hint)
    assert [(pl.alternative, pl.device) for pl in out[0]] == [(alts[0], 0), (alts[1], 2), (alts[2], 3)]
    assert violations(p, out) == []
    assert canonical(m, out) == out


def _fixed_feasible(p: Problem, asg: dict, mode: str, group: bool) -> bool:
    """Does the symmetry-broken model accept exactly this (canonical) assignment?"""
    m = build(p, mode=mode, group=group)
    for var, val in hint_values(m, canonical(m, asg)):
        m.cp.add(var == val)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    return solver.solve(m.cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_weights_share_a_column_per_group() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(3)]
    lone = pb.device(multi=True)
    c = pb.claim()
    pb.exact(c, ds + [lone])
    m = build(pb.build())
    w = weights(m)
    assert w[ds[0]] == w[ds[1]] == w[ds[2]] == 1 and w[lone] == 2


# ---------------------------------------------------------------- against the brute force


@st.composite
def twin_problems(draw: st.DrawFn) -> Problem:
    """1-2 claims; the first has 2-3 identical requests (plus maybe one other) over <= 4
    devices of every kind, maybe a constraint covering the twins alike."""
    pb = PB()
    ctr = pb.counter(draw(st.integers(1, 3))) if draw(st.booleans()) else None
    n_dev = draw(st.integers(2, 4))
    for _ in range(n_dev):
        multi = draw(st.booleans())
        cap = {"mem": draw(st.integers(1, 4))} if multi and draw(st.booleans()) else {}
        pb.device(
            multi=multi,
            capacity=cap,
            busy=draw(st.integers(0, 7)) == 3,
            counter_use={ctr: draw(st.integers(1, 2))} if ctr is not None and draw(st.booleans()) else None,
        )
    devs = draw(st.lists(st.integers(0, n_dev - 1), unique=True, min_size=1, max_size=n_dev))
    consumed = {d: {"mem": Fraction(draw(st.integers(0, 2)))} for d in devs if pb.devices[d].capacity}
    count = draw(st.integers(1, 2))
    admin = draw(st.integers(0, 5)) == 2
    c = pb.claim(priority=draw(st.integers(0, 1)))
    twins = [
        pb.exact(c, devs, count=count, admin=admin, consumed=consumed)
        for _ in range(draw(st.integers(2, 3 if count == 1 else 2)))
    ]
    extra = []
    if draw(st.booleans()):
        other = draw(st.lists(st.integers(0, n_dev - 1), unique=True, min_size=1, max_size=n_dev))
        one = {d: {"mem": Fraction(1)} for d in other if pb.devices[d].capacity}
        extra = [pb.exact(c, other, consumed=one)]
    if draw(st.booleans()):
        values = {
            d: frozenset(("int", v) for v in draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
            for d in range(n_dev)
        }
        pb.constraint(c, draw(st.sampled_from(["match", "distinct"])), twins + extra, values)
    if draw(st.booleans()):
        c2 = pb.claim(priority=draw(st.integers(0, 1)))
        pb.exact(
            c2,
            draw(st.lists(st.integers(0, n_dev - 1), unique=True, min_size=1, max_size=n_dev)),
            consumed={d: {"mem": Fraction(1)} for d in range(n_dev) if pb.devices[d].capacity},
        )
    return pb.build()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(twin_problems(), st.sampled_from(["all", "free"]), st.sampled_from(["pack", "spread"]), st.booleans())
def test_symmetry_keeps_an_optimal_solution(p: Problem, mode: str, strategy: str, group: bool) -> None:
    best, best_asg = brute_force(p, mode, strategy)
    out = solve(p, mode=mode, strategy=strategy, time_limit=5.0, reductions=Reductions(group=group))
    if best is None:
        assert out.status == "INFEASIBLE"
        return
    assert out.status == "OPTIMAL" and out.assignment is not None
    assert violations(p, out.assignment, mode) == []
    assert out.objective == best
    # The brute force's optimum, permuted into canonical order, is a solution of the
    # symmetry-broken model: ordering removed no orbit.
    assert best_asg is not None
    assert _fixed_feasible(p, best_asg, mode, group)
    # and hinting it (in any row order) gives the same optimum
    hinted = solve(
        p,
        mode=mode,
        strategy=strategy,
        time_limit=5.0,
        reductions=Reductions(group=group),
        hint=Hint(best_asg),
    )
    assert hinted.objective == best
