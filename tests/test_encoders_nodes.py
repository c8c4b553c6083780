"""encoders.nodes: a pod's claims land together on one node that sees their devices."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cpsat_builders import PB

from dra_solver.cpsat import Hint, Reductions, solve
from dra_solver.problem.flat import Problem

NODES = ("node-a", "node-b")


def multi(p: Problem, where: dict[int, set[str]], groups: list[int], **kw: object) -> Problem:
    """The Problem over NODES: device d seen by where[d] (default: every node)."""
    seen = {d.index: frozenset(where.get(d.index, set(NODES))) for d in p.devices}
    devices = tuple(replace(d, nodes=seen[d.index]) for d in p.devices)
    alts = tuple(
        replace(a, candidates=tuple(replace(c, nodes=seen[c.device]) for c in a.candidates))
        for a in p.alternatives
    )
    claims = tuple(replace(c, group=groups[c.index]) for c in p.claims)
    return replace(p, node=None, devices=devices, alternatives=alts, claims=claims, nodes=NODES, **kw)


def _pod_over_two_nodes(extra_b: bool) -> Problem:
    pb = PB()
    ga = pb.device()  # node-a
    nb = pb.device()  # node-b
    gb = pb.device()  # node-b
    c0, c1 = pb.claim(), pb.claim()
    pb.exact(c0, [ga, gb] if extra_b else [ga])
    pb.exact(c1, [nb])
    return multi(pb.build(), {ga: {"node-a"}, nb: {"node-b"}, gb: {"node-b"}}, [0, 0])


@pytest.mark.parametrize("group", [True, False])
def test_claims_of_a_pod_share_a_node(group: bool) -> None:
    out = solve(_pod_over_two_nodes(extra_b=True), mode="all", reductions=Reductions(group=group))
    assert out.status == "OPTIMAL" and out.nodes == {0: "node-b"}
    assert [pl.device for pl in out.assignment[0]] == [2]
    assert [pl.device for pl in out.assignment[1]] == [1]


def test_infeasible_when_no_single_node_has_everything() -> None:
    p = _pod_over_two_nodes(extra_b=False)
    assert solve(p, mode="all").status == "INFEASIBLE"
    free = solve(p, mode="free")
    assert free.assignment == {} and free.nodes == {}  # all or none: neither claim is placed


def test_device_visible_on_one_node_only() -> None:
    pb = PB()
    d = pb.device()
    c = pb.claim()
    pb.exact(c, [d])
    p = multi(pb.build(), {d: {"node-b"}}, [0])
    assert solve(p, mode="all").nodes == {0: "node-b"}
    assert solve(replace(p, group_nodes={0: ("node-a",)}), mode="all").status == "INFEASIBLE"


def test_shared_device_serves_one_pod_only() -> None:
    pb = PB()
    d = pb.device()
    for _ in range(2):
        pb.exact(pb.claim(), [d])
    p = multi(pb.build(), {}, [0, 1])
    out = solve(p, mode="free")
    assert out.placed == 1 and len(out.nodes) == 1


@pytest.mark.parametrize("group", [True, False])
def test_identical_devices_on_different_nodes_are_not_pooled(group: bool) -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    pb.exact(pb.claim(), ds, count=3)
    where = {ds[0]: {"node-a"}, ds[1]: {"node-a"}, ds[2]: {"node-b"}, ds[3]: {"node-b"}}
    assert (
        solve(multi(pb.build(), where, [0]), mode="all", reductions=Reductions(group=group)).status
        == "INFEASIBLE"
    )
    pb2 = PB()
    ds = [pb2.device() for _ in range(4)]
    pb2.exact(pb2.claim(), ds, count=2)
    pb2.exact(pb2.claim(), ds, count=2)
    out = solve(multi(pb2.build(), where, [0, 1]), mode="all", reductions=Reductions(group=group))
    assert sorted(out.nodes.values()) == ["node-a", "node-b"]
    for g, c in ((0, 0), (1, 1)):
        assert all(where[pl.device] == {out.nodes[g]} for pl in out.assignment[c])


def test_pod_counts_once_in_the_objective() -> None:
    # One pod of two claims vs two single-claim pods on the only two devices: 2 pods win.
    pb = PB()
    d0, d1 = pb.device(), pb.device()
    big0, big1 = pb.claim(), pb.claim()
    pb.exact(big0, [d0])
    pb.exact(big1, [d1])
    s0, s1 = pb.claim(), pb.claim()
    pb.exact(s0, [d0])
    pb.exact(s1, [d1])
    out = solve(multi(pb.build(), {}, [0, 0, 1, 2]), mode="free")
    assert sorted(out.nodes) == [1, 2] and sorted(out.assignment) == [2, 3]


def test_single_node_groups_are_all_or_none() -> None:
    pb = PB()
    d = pb.device()
    c0, c1 = pb.claim(), pb.claim()
    pb.exact(c0, [d])
    pb.exact(c1, [d])  # both need d: the group can not be placed
    p = pb.build()
    p = replace(p, claims=tuple(replace(c, group=0) for c in p.claims))
    out = solve(p, mode="free")
    assert out.assignment == {} and out.nodes == {}


def test_hint_nodes_are_used() -> None:
    from dra_solver.problem.flat import Placement

    p = _pod_over_two_nodes(extra_b=True)
    hint = {0: [Placement(0, 0, 2)], 1: [Placement(1, 1, 1)]}
    out = solve(p, mode="all", hint=Hint(hint, {0: "node-b"}))
    assert out.nodes == {0: "node-b"}


def test_all_mode_takes_the_set_of_the_pods_node() -> None:
    pb = PB()
    a0, a1, b0 = pb.device(), pb.device(), pb.device()
    c = pb.claim()
    pb.all(c, [a0, a1, b0])
    other = pb.claim()
    pb.exact(other, [a0, b0])
    p = multi(pb.build(), {a0: {"node-a"}, a1: {"node-a"}, b0: {"node-b"}}, [0, 1])
    alts = list(p.alternatives)
    alts[0] = replace(alts[0], count=2, all_sets={"node-a": (a0, a1), "node-b": (b0,)})
    p = replace(p, alternatives=tuple(alts))
    for group in (True, False):
        out = solve(p, mode="all", reductions=Reductions(group=group))
        assert out.status == "OPTIMAL"
        where = out.nodes[0]
        want = [a0, a1] if where == "node-a" else [b0]
        assert [pl.device for pl in out.assignment[0]] == want
        assert [pl.device for pl in out.assignment[1]] != want[:1]
    blocked = replace(p, group_nodes={0: ("node-a",)})
    out = solve(blocked, mode="all")
    assert out.nodes == {0: "node-a", 1: "node-b"}
    # node-b's set is blocked: the pod can only use node-a's set
    alts[0] = replace(alts[0], all_sets={"node-a": (a0, a1)}, candidates=alts[0].candidates[:2])
    out = solve(replace(p, alternatives=tuple(alts), group_nodes={0: ("node-b",)}), mode="free")
    assert 0 not in out.nodes
