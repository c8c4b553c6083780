"""CP-SAT against exhaustive enumeration on tiny random Problems.

Why: the brute force (tests/cpsat_builders.py) reads the rules directly and enumerates every
assignment, so agreement on feasibility and on every objective stage checks both the
encoders (no rule missing or too strict) and the staged lexicographic optimisation.
"""

from __future__ import annotations

from fractions import Fraction

from cpsat_builders import PB, Sub, brute_force, violations
from example_counts import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_solver.cpsat import Reductions, solve
from dra_solver.problem.flat import Problem


def _rare(draw: st.DrawFn, n: int) -> bool:
    """True about once in n draws (a middle value: hypothesis favours the bounds)."""
    return draw(st.integers(0, n - 1)) == n // 2


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    """<= 4 devices, <= 3 alternatives, 1-2 claims, every rule family reachable."""
    pb = PB()
    n_counters = draw(st.integers(0, 1))
    for _ in range(n_counters):
        pb.counter(draw(st.integers(0, 3)))
    n_dev = draw(st.integers(1, 4))
    # Twins: device 1 copies device 0 everywhere, so grouping gets exercised.
    twins = n_dev >= 2 and draw(st.booleans())
    for i in range(n_dev):
        if twins and i == 1:
            d0 = pb.devices[0]
            pb.device(
                multi=d0.multi,
                busy=d0.busy,
                capacity=d0.capacity,
                in_use=d0.in_use,
                shared=d0.shared_in_use,
                counter_use=d0.counter_use,
                counters_blocked=d0.counters_blocked,
            )
            continue
        multi = draw(st.booleans()) and not (twins and i == 0)
        cap = {"mem": draw(st.integers(1, 4))} if multi and draw(st.booleans()) else {}
        in_use = {"mem": draw(st.integers(0, cap["mem"]))} if cap and draw(st.booleans()) else {}
        shared = multi and (bool(in_use) or _rare(draw, 4))
        use = {0: draw(st.integers(1, 2))} if n_counters and draw(st.booleans()) else {}
        pb.device(
            multi=multi,
            busy=_rare(draw, 8),
            capacity=cap,
            in_use=in_use,
            shared=shared,
            counter_use=use,
            counters_blocked=bool(use) and _rare(draw, 6),
        )
    n_claims = draw(st.integers(1, 2))
    budget = 3
    for ci in range(n_claims):
        pb.claim(priority=draw(st.integers(0, 2)))
        n_req = draw(st.integers(1, 2)) if budget - (n_claims - ci - 1) >= 2 else 1
        for _ in range(n_req):
            if budget - (n_claims - ci - 1) <= 0:
                break
            n_sub = draw(st.integers(1, min(2, budget - (n_claims - ci - 1))))
            budget -= n_sub
            subs = []
            for _ in range(n_sub):
                devs = draw(st.lists(st.integers(0, n_dev - 1), unique=True, min_size=1, max_size=n_dev))
                if twins:
                    devs = [d for d in devs if d != 1] + ([1] if 0 in devs else [])
                mode = "All" if _rare(draw, 4) else "ExactCount"
                consumed = {
                    d: {"mem": Fraction(draw(st.integers(0, 3)), draw(st.sampled_from([1, 2])))}
                    for d in devs
                    if pb.devices[d].capacity
                }
                if twins and 0 in consumed:
                    consumed[1] = consumed[0]
                subs.append(
                    Sub(
                        devs,
                        count=1 + _rare(draw, 4),
                        mode=mode,
                        admin=_rare(draw, 5),
                        consumed=consumed,
                        errors=[d for d in devs if _rare(draw, 20) and not (twins and d < 2)],
                        all_blocked="busy" if mode == "All" and _rare(draw, 6) else None,
                    )
                )
            pb.request(ci, *subs)
    for ci in range(n_claims):
        alts = [a.index for a in pb.alternatives if a.claim == ci]
        if alts and draw(st.booleans()):
            covered = draw(st.lists(st.sampled_from(alts), unique=True, min_size=1))
            values = {
                d: (
                    None
                    if _rare(draw, 10)
                    else frozenset(
                        ("int", v) for v in draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
                    )
                )
                for d in range(n_dev)
            }
            if twins:
                values[1] = values[0]
            pb.constraint(ci, draw(st.sampled_from(["match", "distinct"])), covered, values)
    return pb.build()


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(["all", "free"]), st.sampled_from(["pack", "spread"]), st.booleans())
def test_cpsat_matches_brute_force(p: Problem, mode: str, strategy: str, group: bool) -> None:
    best, _ = brute_force(p, mode, strategy)
    out = solve(p, mode=mode, strategy=strategy, time_limit=5.0, reductions=Reductions(group=group))
    if best is None:
        assert out.status == "INFEASIBLE" and out.assignment is None
        return
    assert out.status == "OPTIMAL"
    assert out.assignment is not None
    assert violations(p, out.assignment, mode) == []
    assert out.objective == best
