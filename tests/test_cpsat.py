"""solver.cpsat: determinism, hints, modes, firstAvailable order, strategies, grouping size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cpsat_builders import PB, Sub, devices_of, ints, violations

from dra_solver.cpsat import Hint, Reductions, solve
from dra_solver.problem.flat import Placement, Problem

ROOT = Path(__file__).resolve().parents[1]


def _mixed() -> Problem:
    """A few claims over dedicated, shared and counter devices with constraints."""
    pb = PB()
    ctr = pb.counter(6)
    gpus = [pb.device(counter_use={ctr: 1 + i % 2}) for i in range(8)]
    shared = [
        pb.device(multi=True, capacity={"mem": 8}, in_use={"mem": 2 * i}, shared=i > 0) for i in range(3)
    ]
    for i in range(4):
        c = pb.claim(priority=i % 2)
        a = pb.request(c, Sub(gpus, 2), Sub(gpus, 1))
        pb.constraint(c, "distinct", a, {d: ints(d % 3) for d in gpus})
        pb.exact(c, shared, consumed={d: {"mem": 3} for d in shared})
    return pb.build()


def test_same_seed_same_answer() -> None:
    p = _mixed()
    first = solve(p, mode="free", seed=7)
    second = solve(p, mode="free", seed=7)
    assert first.status == "OPTIMAL"
    assert first.assignment == second.assignment and first.objective == second.objective
    assert violations(p, first.assignment or {}, "free") == []


_SCRIPT = """
import json, sys
sys.path[:0] = [{root!r}, {tests!r}]
from test_cpsat import _mixed
from dra_solver.cpsat import solve
out = solve(_mixed(), mode="free", seed=3)
print(json.dumps({{str(c): [[p.alternative, p.device] for p in pls] for c, pls in out.assignment.items()}}))
"""


def test_answer_does_not_depend_on_string_hashing() -> None:
    """Value sets are frozensets: the model must not follow their (hash-seeded) order."""
    script = _SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests"))
    outs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        res = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outs.add(json.dumps(json.loads(res.stdout), sort_keys=True))
    assert len(outs) == 1


def test_hint_is_used_and_never_hurts() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(6)]
    for _ in range(3):
        pb.exact(pb.claim(), ds, count=2)
    p = pb.build()
    hint = {c: [Placement(c, c, 5 - 2 * c - k) for k in (1, 0)] for c in range(3)}
    hinted = solve(p, hint=Hint(hint), reductions=Reductions(group=False))
    plain = solve(p, reductions=Reductions(group=False))
    assert hinted.status == plain.status == "OPTIMAL"
    assert hinted.objective == plain.objective
    bad = {0: [Placement(0, 0, 0)]}  # not a solution: CP-SAT repairs or ignores it
    assert solve(p, hint=Hint(bad)).objective == plain.objective


def test_infeasible_in_mode_all() -> None:
    pb = PB()
    d = pb.device()
    pb.exact(pb.claim(), [d])
    pb.exact(pb.claim(), [d])
    out = solve(pb.build())
    assert (out.status, out.assignment, out.placed) == ("INFEASIBLE", None, 0)


def test_free_mode_places_the_maximum() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    pb.exact(pb.claim(), ds, count=3)  # placing this one blocks both others
    pb.exact(pb.claim(), ds, count=2)
    pb.exact(pb.claim(), ds, count=2)
    out = solve(pb.build(), mode="free")
    assert out.status == "OPTIMAL" and out.placed == 2 and set(out.assignment or {}) == {1, 2}


def test_first_available_prefers_earlier_subrequests() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    pb.request(c, Sub(ds, 3), Sub(ds, 2), Sub(ds, 1))
    out = solve(pb.build())
    assert [pl.alternative for pl in out.assignment[0]] == [0, 0, 0]  # type: ignore[index]
    pb.exact(pb.claim(), ds, count=2)  # now only 2 are left for the first claim
    out = solve(pb.build())
    assert [pl.alternative for pl in out.assignment[0]] == [1, 1]  # type: ignore[index]
    assert out.objective["first_available"] == 1


def test_result_order() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    pb.exact(c, [ds[3], ds[2]], count=2)
    pb.exact(c, [ds[1], ds[0]], count=1)
    out = solve(pb.build(), reductions=Reductions(group=False))
    assert [(pl.alternative, pl.device) for pl in out.assignment[0]] == [(0, 2), (0, 3), (1, 0)]  # type: ignore[index]


def test_pack_and_spread() -> None:
    pb = PB()
    ds = [pb.device(multi=True, capacity={"mem": 4}) for _ in range(3)]
    for _ in range(3):
        pb.exact(pb.claim(), ds, consumed={d: {"mem": 2} for d in ds})
    p = pb.build()
    pack = solve(p, strategy="pack")
    spread = solve(p, strategy="spread")
    assert sorted({pl.device for pls in (pack.assignment or {}).values() for pl in pls}) == [0, 1]
    assert sorted({pl.device for pls in (spread.assignment or {}).values() for pl in pls}) == [0, 1, 2]
    assert pack.objective["devices"] == 2 and spread.objective["devices"] == 3


def test_pack_prefers_devices_already_open() -> None:
    pb = PB()
    fresh = pb.device(multi=True)
    opened = pb.device(multi=True, shared=True)
    pb.exact(pb.claim(), [fresh, opened])
    assert devices_of(solve(pb.build()).assignment) == [opened]
    assert devices_of(solve(pb.build(), strategy="spread").assignment) == [fresh]


def test_dedicated_devices_earliest_first() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(5)]
    pb.exact(pb.claim(), list(reversed(ds)), count=2)
    assert devices_of(solve(pb.build(), reductions=Reductions(group=False)).assignment) == [0, 1]
    assert devices_of(solve(pb.build()).assignment) == [0, 1]


def test_grouping_shrinks_64_identical_devices() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(64)]
    for _ in range(4):
        pb.request(pb.claim(), Sub(ds, 8), Sub(ds, 4))
    p = pb.build()
    grouped, flat = solve(p), solve(p, reductions=Reductions(group=False))
    assert grouped.objective == flat.objective and grouped.status == flat.status == "OPTIMAL"
    assert flat.model_stats["variables"] == 588 and grouped.model_stats["variables"] == 22
    used = [
        sorted(pl.device for pls in out.assignment.values() for pl in pls)  # type: ignore[union-attr]
        for out in (grouped, flat)
    ]
    assert used[0] == used[1] == list(range(32))  # which claim gets which device may differ


def test_bad_arguments() -> None:
    p = PB().build()
    with pytest.raises(ValueError):
        solve(p, mode="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        solve(p, strategy="random")  # type: ignore[arg-type]
    empty = solve(p)
    assert (empty.status, empty.assignment) == ("OPTIMAL", {})
