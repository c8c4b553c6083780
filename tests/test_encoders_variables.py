"""encoders.variables: which (alternative, device) pairs get a variable, impossible alternatives."""

from __future__ import annotations

from cpsat_builders import PB, Sub, feasible, ints

from dra_solver.encoders import build
from dra_solver.encoders.variables import allowed_candidates


def test_allowed_pairs_and_used_indicator() -> None:
    pb = PB()
    d0, d1 = pb.device(), pb.device()
    c = pb.claim()
    a0 = pb.exact(c, [d0, d1])
    a1 = pb.exact(c, [d1], admin=True)
    m = build(pb.build(), group=False)
    assert set(m.x) == {(a0, d0), (a0, d1), (a1, d1)}
    assert m.used[d0] is m.x[(a0, d0)]  # a device with a single placement variable reuses it
    assert m.used[d1] is not m.x[(a0, d1)]
    assert feasible(pb.build())


def test_error_candidates_are_excluded() -> None:
    pb = PB()
    d0, d1 = pb.device(), pb.device()
    c = pb.claim()
    pb.exact(c, [d0, d1], count=2, errors=[d1])
    p = pb.build()
    allowed, impossible = allowed_candidates(p)
    assert impossible == {0} and allowed[0] == {}
    assert not feasible(p)


def test_static_exclusions() -> None:
    pb = PB()
    busy = pb.device(busy=True)
    ctr = pb.counter(1)
    blocked = pb.device(counter_use={ctr: 1}, counters_blocked=True)
    too_big = pb.device(multi=True, capacity={"mem": 4}, in_use={"mem": 3}, shared=True)
    lacks = pb.device()
    fine = pb.device()
    c = pb.claim()
    a = pb.exact(c, [busy, blocked, too_big, lacks, fine], consumed={too_big: {"mem": 2}})
    values = {busy: ints(1), blocked: ints(1), too_big: ints(1), lacks: None, fine: ints(1)}
    pb.constraint(c, "match", [a], values)
    p = pb.build()
    allowed, impossible = allowed_candidates(p)
    assert list(allowed[a]) == [fine] and not impossible
    assert feasible(p)


def test_blocked_and_empty_all_are_impossible() -> None:
    pb = PB()
    d0 = pb.device()
    c = pb.claim()
    pb.request(c, Sub([d0], mode="All", all_blocked="busy"), Sub([], mode="All"))
    p = pb.build()
    assert allowed_candidates(p)[1] == {0, 1}
    assert not feasible(p)
