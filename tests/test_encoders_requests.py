"""encoders.requests: one alternative per request, counts, All, modes, the 32-result limit."""

from __future__ import annotations

from cpsat_builders import PB, Sub, feasible


def test_exact_count() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(3)]
    c = pb.claim()
    pb.exact(c, ds, count=3)
    assert feasible(pb.build())
    pb.exact(c, ds, count=1)  # a second request: no device left
    assert not feasible(pb.build())


def test_all_mode_takes_every_member() -> None:
    pb = PB()
    d0, d1, d2 = pb.device(), pb.device(), pb.device()
    c = pb.claim()
    pb.all(c, [d0, d1])
    pb.exact(c, [d1, d2])
    assert feasible(pb.build())  # the ExactCount request must use d2
    pb.exact(c, [d1, d2])
    assert not feasible(pb.build())


def test_all_with_no_members_can_not_be_chosen() -> None:
    pb = PB()
    d0 = pb.device()
    c = pb.claim()
    pb.request(c, Sub([], mode="All"), Sub([d0]))
    assert feasible(pb.build())
    pb2 = PB()
    pb2.claim()
    pb2.all(0, [])
    assert not feasible(pb2.build())


def test_mode_all_needs_every_claim_mode_free_does_not() -> None:
    pb = PB()
    d0 = pb.device()
    for _ in range(2):
        pb.exact(pb.claim(), [d0])
    p = pb.build()
    assert not feasible(p, "all")
    assert feasible(p, "free")


def test_at_most_32_results_per_claim() -> None:
    pb = PB()
    ds = [pb.device(multi=True) for _ in range(20)]
    c = pb.claim()
    pb.exact(c, ds, count=16)
    pb.exact(c, ds, count=16)
    assert feasible(pb.build())
    pb.exact(c, ds, count=1)
    assert not feasible(pb.build())
