"""encoders.objective: stage definitions, ranks and weights."""

from __future__ import annotations

from cpsat_builders import PB, Sub, devices_of

from dra_solver.cpsat import solve
from dra_solver.encoders import build
from dra_solver.encoders.objective import claim_weight, device_ranks, stages


def test_claim_weight() -> None:
    assert [claim_weight(p) for p in (-5, 0, 3)] == [1, 1, 4]


def test_ranks() -> None:
    pb = PB()
    fresh = pb.device(multi=True, capacity={"mem": 10})
    half = pb.device(multi=True, capacity={"mem": 10}, in_use={"mem": 5}, shared=True)
    full = pb.device(multi=True, capacity={"mem": 10}, in_use={"mem": 9}, shared=True)
    plain = pb.device()
    p = pb.build()
    pack = device_ranks(p, "pack")
    assert sorted(pack, key=pack.__getitem__) == [full, half, fresh, plain]
    spread = device_ranks(p, "spread")
    assert sorted(spread, key=spread.__getitem__) == [fresh, plain, half, full]


def test_stages() -> None:
    pb = PB()
    d = pb.device()
    pb.request(pb.claim(), Sub([d]), Sub([d]))
    m = build(pb.build(), mode="all")
    names = [(s.name, s.optimise, s.maximize) for s in stages(m, "pack")]
    assert names == [("placed", False, True), ("first_available", True, False), ("devices", True, False),
                     ("order", True, False)]
    assert solve(pb.build()).objective == {"placed": 1, "first_available": 0, "devices": 1, "order": 1}


def test_priority_decides_what_is_placed() -> None:
    pb = PB()
    d = pb.device()
    pb.exact(pb.claim(priority=0), [d])
    pb.exact(pb.claim(priority=5), [d])
    out = solve(pb.build(), mode="free")
    assert set(out.assignment or {}) == {1} and out.objective["placed"] == 6
    assert solve(pb.build(), mode="all").status == "INFEASIBLE"


def test_pack_prefers_the_fullest_open_device() -> None:
    pb = PB()
    fresh = pb.device(multi=True, capacity={"mem": 10})
    half = pb.device(multi=True, capacity={"mem": 10}, in_use={"mem": 5}, shared=True)
    full = pb.device(multi=True, capacity={"mem": 10}, in_use={"mem": 9}, shared=True)
    c = pb.claim()
    pb.exact(c, [fresh, half, full], consumed={d: {"mem": 2} for d in (fresh, half, full)})
    assert devices_of(solve(pb.build()).assignment) == [half]  # `full` has 1 left: does not fit
    assert devices_of(solve(pb.build(), strategy="spread").assignment) == [fresh]
