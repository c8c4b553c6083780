"""encoders.counters: shared counters of partitionable devices."""

from __future__ import annotations

from fractions import Fraction

from cpsat_builders import PB, feasible


def _partitions(available: int | Fraction, uses: list[int | Fraction], take: int) -> bool:
    pb = PB()
    ctr = pb.counter(available)
    ds = [pb.device(counter_use={ctr: u}) for u in uses]
    pb.exact(pb.claim(), ds, count=take)
    return feasible(pb.build())


def test_counter_sum() -> None:
    assert _partitions(4, [2, 2, 2], 2)
    assert not _partitions(4, [2, 2, 2], 3)
    assert _partitions(Fraction(1, 2), [Fraction(1, 4)] * 3, 2)
    assert not _partitions(Fraction(1, 2), [Fraction(1, 4)] * 3, 3)


def test_multi_device_charged_once() -> None:
    pb = PB()
    ctr = pb.counter(2)
    d = pb.device(multi=True, counter_use={ctr: 2})
    for _ in range(3):
        pb.exact(pb.claim(), [d])
    assert feasible(pb.build())


def test_already_shared_device_not_charged_again() -> None:
    pb = PB()
    ctr = pb.counter(1)
    shared = pb.device(multi=True, shared=True, counter_use={ctr: 2})
    pb.exact(pb.claim(), [shared])
    assert feasible(pb.build())
    fresh = PB()
    c2 = fresh.counter(1)
    d = fresh.device(multi=True, counter_use={c2: 2})
    fresh.exact(fresh.claim(), [d])
    assert not feasible(fresh.build())


def test_blocked_pool() -> None:
    pb = PB()
    ctr = pb.counter(5)
    blocked = pb.device(counter_use={ctr: 1}, counters_blocked=True)
    pb.exact(pb.claim(), [blocked])
    assert not feasible(pb.build())
    ok = PB()
    shared = ok.device(multi=True, shared=True, counter_use={ok.counter(5): 1}, counters_blocked=True)
    ok.exact(ok.claim(), [shared])  # already charged: not rejected on counters
    assert feasible(ok.build())


def test_admin_placement_charges() -> None:
    pb = PB()
    ctr = pb.counter(1)
    d0, d1 = pb.device(counter_use={ctr: 1}), pb.device(counter_use={ctr: 1})
    pb.exact(pb.claim(), [d0])
    pb.exact(pb.claim(), [d1], admin=True)
    assert not feasible(pb.build())
