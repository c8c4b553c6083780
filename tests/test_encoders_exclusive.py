"""encoders.exclusive: dedicated devices, busy devices, admin access, multi devices."""

from __future__ import annotations

from cpsat_builders import PB, feasible


def test_dedicated_device_once_over_claims() -> None:
    pb = PB()
    d0, d1 = pb.device(), pb.device()
    pb.exact(pb.claim(), [d0, d1])
    pb.exact(pb.claim(), [d0, d1])
    assert feasible(pb.build())
    pb.exact(pb.claim(), [d0, d1])
    assert not feasible(pb.build())


def test_busy_device_only_for_admin() -> None:
    pb = PB()
    d0 = pb.device(busy=True)
    pb.exact(pb.claim(), [d0], admin=True)
    assert feasible(pb.build())
    pb.exact(pb.claim(), [d0])
    assert not feasible(pb.build())


def test_admin_ignores_other_claims_but_not_its_own() -> None:
    pb = PB()
    d0 = pb.device()
    pb.exact(pb.claim(), [d0])
    c = pb.claim()
    pb.exact(c, [d0], admin=True)  # another claim's non-admin placement does not block admin
    assert feasible(pb.build())
    pb.exact(c, [d0], admin=True)  # two admin requests of one claim can not share
    assert not feasible(pb.build())


def test_admin_and_plain_request_of_one_claim_can_not_share() -> None:
    pb = PB()
    d0 = pb.device()
    c = pb.claim()
    pb.exact(c, [d0])
    pb.exact(c, [d0], admin=True)
    assert not feasible(pb.build())


def test_multi_device_is_shared() -> None:
    pb = PB()
    d0 = pb.device(multi=True)
    c = pb.claim()
    pb.exact(c, [d0])
    pb.exact(c, [d0])
    pb.exact(pb.claim(), [d0])
    assert feasible(pb.build())
    busy = PB()
    b = busy.device(multi=True, busy=True)
    busy.exact(busy.claim(), [b])
    assert not feasible(busy.build())
