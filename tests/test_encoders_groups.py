"""encoders.groups: which devices are interchangeable, and that grouping changes no answer."""

from __future__ import annotations

import pytest
from cpsat_builders import PB, Sub, feasible, ints

from dra_solver.cpsat import Reductions, solve
from dra_solver.encoders import build
from dra_solver.problem.flat import Problem


def test_identical_devices_form_one_group() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(64)]
    pb.exact(pb.claim(), ds, count=8)
    m = build(pb.build())
    assert [g.devices for g in m.groups] == [tuple(ds)]
    assert not m.x and len(m.n) == 1
    assert feasible(pb.build())


def test_too_many_for_the_group_is_infeasible() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(8)]
    pb.exact(pb.claim(), ds, count=5)
    pb.exact(pb.claim(), ds, count=4)
    assert not feasible(pb.build())
    assert not feasible(pb.build(), group=False)


def test_devices_that_differ_are_not_grouped() -> None:
    pb = PB()
    plain = [pb.device(), pb.device()]
    busy = pb.device(busy=True)
    multi = [pb.device(multi=True), pb.device(multi=True)]
    ctr = pb.counter(4)
    counted = [pb.device(counter_use={ctr: 1}), pb.device(counter_use={ctr: 2})]
    numa = [pb.device(), pb.device()]
    c = pb.claim()
    a = pb.exact(c, plain + [busy] + multi + counted + numa, admin=False)
    pb.constraint(c, "match", [a], {d: ints(0 if d not in numa else d) for d in range(9)})
    admin_only = [pb.device(), pb.device()]
    pb.exact(c, admin_only, admin=True)
    m = build(pb.build())
    assert [g.devices for g in m.groups] == [tuple(plain)]


def _cases() -> list[Problem]:
    out = []
    # firstAvailable over identical GPUs, two claims.
    pb = PB()
    ds = [pb.device() for _ in range(6)]
    for _ in range(2):
        pb.request(pb.claim(), Sub(ds, 4), Sub(ds, 2))
    out.append(pb.build())
    # All + ExactCount over a group, plus a counter limiting the group.
    pb = PB()
    ctr = pb.counter(3)
    ds = [pb.device(counter_use={ctr: 1}) for _ in range(4)]
    other = pb.device()
    c = pb.claim()
    pb.request(c, Sub(ds, mode="All"), Sub(ds, 2))
    pb.exact(c, ds + [other], count=1)
    out.append(pb.build())
    # distinct over two groups of two.
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    a = pb.exact(c, ds, count=2)
    pb.constraint(c, "distinct", [a], {d: ints(d // 2) for d in ds})
    pb.exact(pb.claim(), ds, count=2)
    out.append(pb.build())
    return out


@pytest.mark.parametrize("strategy", ["pack", "spread"])
@pytest.mark.parametrize("mode", ["all", "free"])
def test_grouping_changes_no_answer(mode: str, strategy: str) -> None:
    for p in _cases():
        with_groups = solve(p, mode=mode, strategy=strategy)
        without = solve(p, mode=mode, strategy=strategy, reductions=Reductions(group=False))
        assert with_groups.model_stats["groups"] > 0
        assert with_groups.status == without.status
        assert with_groups.objective == without.objective
        assert with_groups.model_stats["variables"] < without.model_stats["variables"]
