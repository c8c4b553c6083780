"""encoders.objective: stage definitions, ranks and weights."""

from __future__ import annotations

from cpsat_builders import PB, Sub, devices_of

from dra_solver.cpsat import solve
from dra_solver.encoders import build
from dra_solver.encoders.objective import ORDER_WEIGHT_LIMIT, device_ranks, request_order_weights, stages
from dra_solver.problem.flat import claim_weight


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
    assert names == [
        ("placed", False, True),
        ("first_available", True, False),
        ("first_available_order", True, False),
        ("devices", True, False),
        ("order", True, False),
    ]
    assert solve(pb.build()).objective == {
        "placed": 1,
        "first_available": 0,
        "first_available_order": 0,
        "devices": 1,
        "order": 1,
    }


def test_equal_fallback_totals_prefer_the_earlier_requests_first_subrequest() -> None:
    """Upstream's search order (shared case up-distinct-with-subrequests): r0 and r1 both want
    d0 first, d1 second; (r0 -> d0, r1 -> d1) and (r0 -> d1, r1 -> d0) both fall back once and
    use the same devices, and upstream's DFS keeps r0's first subrequest."""
    for later_claim in (False, True):
        pb = PB()
        d0, d1 = pb.device(), pb.device()
        c = pb.claim()
        if later_claim:  # the same across claims: the earlier claim wins
            pb.request(c, Sub([d0]), Sub([d1]))
            c = pb.claim()
            pb.request(c, Sub([d0]), Sub([d1]))
        else:
            pb.request(c, Sub([d0]), Sub([d1]))
            pb.request(c, Sub([d0]), Sub([d1]))
        out = solve(pb.build())
        picks = sorted(
            (pl.claim, pl.alternative, pl.device) for pls in (out.assignment or {}).values() for pl in pls
        )
        assert [(a, d) for _, a, d in picks] == [(0, d0), (3, d1)]
        assert out.objective["first_available"] == 1 and out.objective["first_available_order"] == 1


def test_order_weights_make_an_earlier_request_dominate() -> None:
    """w_i > sum_{j>i} w_j * (b_j - 1): one step earlier outweighs every later fallback."""
    pb = PB()
    d = pb.device(multi=True)
    c = pb.claim()
    radices = (3, 1, 2, 8, 4)
    for b in radices:
        pb.request(c, *(Sub([d]) for _ in range(b)))
    p = pb.build()
    (weights,) = request_order_weights(p)
    per_request = [weights.get(r.alternatives[0]) for r in p.claims[0].requests]
    assert per_request == [64, None, 32, 4, 1]  # one-subrequest requests have no weight
    for i, w in enumerate(per_request):
        rest = sum(wj * (bj - 1) for wj, bj in zip(per_request[i + 1 :], radices[i + 1 :], strict=True) if wj)
        assert w is None or rest < w


def test_order_stages_are_cut_below_the_coefficient_limit() -> None:
    """32 requests of 8 subrequests: 8^32 = 2^96 does not fit int64; chunks of 13 (8^13 = 2^39)
    keep every stage below 2^40, and the last chunk still sees the last request's fallback."""
    pb = PB()
    c = pb.claim()
    for r in range(32):
        subs = [Sub([pb.device()]) for _ in range(8)]
        if r == 31:
            subs = [Sub([]) for _ in range(7)] + subs[7:]  # only its last subrequest can be placed
        pb.request(c, *subs)
    p = pb.build()
    chunks = request_order_weights(p)
    assert [len({w for w in ch.values()}) for ch in chunks] == [13, 13, 6]
    assert all(max(ch.values()) * 8 <= ORDER_WEIGHT_LIMIT for ch in chunks)
    out = solve(p)
    assert out.status == "OPTIMAL"
    assert out.objective["first_available"] == 7
    assert [
        out.objective[n]
        for n in ("first_available_order", "first_available_order.2", "first_available_order.3")
    ] == [0, 0, 7]


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
