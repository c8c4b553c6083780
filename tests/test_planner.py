"""Batch planning over many nodes (dra_solver.plan): reference first fit vs CP-SAT."""

from __future__ import annotations

import copy

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, plan
from dra_solver.check import check
from dra_solver.errors import InputError


def _pod(name: str, claims: list[str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]},
    }


def _two_models() -> list[dict]:
    return [
        device_class("gpu"),
        resource_slice("sa", [device("ga", attrs={"model": "a"})], node="node-a"),
        resource_slice("sb", [device("gb", attrs={"model": "b"})], node="node-b"),
    ]


A_ONLY = [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a"'}}]


def _only_a() -> dict:
    return claim("picky", [request("gpu", selectors=A_ONLY)])


def _verify(cluster: Cluster, out) -> None:  # noqa: ANN001
    """Every placed pod passes the checker, node by node with earlier nodes' claims in use."""
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    nodes = []
    for p in out.pods:
        if p.node is not None and p.node not in nodes:
            nodes.append(p.node)
    for n in nodes:
        mine = [c for p in out.pods if p.node == n for c in p.claims]
        assert check(current, mine, node=n) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


def test_reference_is_first_fit_over_nodes() -> None:
    objs = [*_two_models(), claim("flex", [request("gpu")]), _only_a()]
    cluster = Cluster.from_objects(objs)
    ref = plan(cluster, nodes=["node-a", "node-b"], allocator="reference")
    assert [(p.name, p.node) for p in ref.pods] == [("default/flex", "node-a"), ("default/picky", None)]
    assert ref.placed == 1 and "no node fits" in (ref.pods[1].reason or "")
    _verify(cluster, ref)


def test_cpsat_places_more_than_first_fit() -> None:
    objs = [*_two_models(), claim("flex", [request("gpu")]), _only_a()]
    cluster = Cluster.from_objects(objs)
    before = copy.deepcopy(cluster)
    best = plan(cluster, nodes=["node-a", "node-b"], allocator="cpsat")
    assert [(p.name, p.node) for p in best.pods] == [("default/flex", "node-b"), ("default/picky", "node-a")]
    assert best.placed == 2 and best.stats["reference_placed"] == 1
    _verify(cluster, best)
    sel = best.pods[0].claims[0].status.allocation.node_selector
    assert sel is not None and sel.node_selector_terms[0].match_fields[0].values == ["node-b"]
    assert cluster == before  # inputs untouched
    assert all(c.status is None for c in cluster.claims.values())


def test_default_nodes_come_from_slices_and_pods_from_claims() -> None:
    objs = [*_two_models(), claim("flex", [request("gpu")]), _only_a()]
    cluster = Cluster.from_objects(objs)
    best = plan(cluster)
    assert best.placed == 2


def test_pod_claims_land_together_on_one_node() -> None:
    objs = [
        device_class("gpu"),
        device_class("nic", "nic.example.com"),
        resource_slice("sa", [device("ga")], node="node-a"),
        resource_slice("sb", [device("gb")], node="node-b"),
        resource_slice("nb", [device("nb")], node="node-b", driver="nic.example.com"),
        claim("g", [request("gpu")]),
        claim("n", [request("nic", "nic")]),
        _pod("p", ["g", "n"]),
    ]
    cluster = Cluster.from_objects(objs)
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, nodes=["node-a", "node-b"], allocator=allocator)
        assert out.pods[0].node == "node-b"
        assert [c.status.allocation.devices.results[0].device for c in out.pods[0].claims] == ["gb", "nb"]
        _verify(cluster, out)


def test_pod_that_fits_no_single_node_is_not_placed() -> None:
    objs = [
        device_class("gpu"),
        device_class("nic", "nic.example.com"),
        resource_slice("sa", [device("ga")], node="node-a"),
        resource_slice("nb", [device("nb")], node="node-b", driver="nic.example.com"),
        claim("g", [request("gpu")]),
        claim("n", [request("nic", "nic")]),
        _pod("p", ["g", "n"]),
    ]
    cluster = Cluster.from_objects(objs)
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, nodes=["node-a", "node-b"], allocator=allocator)
        assert out.placed == 0 and out.pods[0].reason
        assert all(c.status is None for c in out.pods[0].claims)


def test_all_nodes_device_is_never_double_booked() -> None:
    shared = resource_slice("net", [device("n0")], node=None, allNodes=True)
    objs = [device_class("gpu"), shared, claim("c1", [request("gpu")]), claim("c2", [request("gpu")])]
    cluster = Cluster.from_objects(objs)
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, nodes=["node-a", "node-b"], allocator=allocator)
        assert out.placed == 1
        _verify(cluster, out)


def test_shared_multi_device_capacity_across_nodes() -> None:
    dev = device("m0", multi=True, capacity={"memory": "100Gi"})
    shared = resource_slice("net", [dev], node=None, allNodes=True)
    cap = {"requests": {"memory": "60Gi"}}
    objs = [
        device_class("gpu"),
        shared,
        claim("c1", [request("gpu", capacity=cap)]),
        claim("c2", [request("gpu", capacity=cap)]),
        claim("c3", [request("gpu", capacity={"requests": {"memory": "30Gi"}})]),
    ]
    cluster = Cluster.from_objects(objs)
    gates = "DRAConsumableCapacity=true"
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, nodes=["node-a", "node-b"], allocator=allocator, feature_gates=gates)
        assert out.placed == 2
        _verify(cluster, out)
        placed = [c for p in out.pods if p.node for c in p.claims]
        ids = [r.share_id for c in placed for r in c.status.allocation.devices.results]
        assert len(set(ids)) == len(ids)


def test_priorities_pick_the_pod() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("sa", [device("ga")], node="node-a"),
        claim("low", [request("gpu")]),
        claim("high", [request("gpu")]),
    ]
    cluster = Cluster.from_objects(objs)
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, nodes=["node-a"], allocator=allocator, priorities=[0, 5])
        assert [p.node for p in out.pods] == [None, "node-a"]


def test_deterministic_with_seed() -> None:
    dev = device("m0", multi=True, capacity={"memory": "100Gi"})
    objs = [
        device_class("gpu"),
        resource_slice("net", [dev], node=None, allNodes=True),
        *[claim(f"c{i}", [request("gpu", capacity={"requests": {"memory": "10Gi"}})]) for i in range(4)],
    ]
    cluster = Cluster.from_objects(objs)
    gates = "DRAConsumableCapacity=true"
    a = plan(cluster, nodes=["node-a", "node-b"], feature_gates=gates, seed=3)
    b = plan(cluster, nodes=["node-a", "node-b"], feature_gates=gates, seed=3)
    assert [(p.node, [c.dump() for c in p.claims]) for p in a.pods] == [
        (p.node, [c.dump() for c in p.claims]) for p in b.pods
    ]


def test_all_mode_takes_the_set_of_the_chosen_node() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("sa", [device(n, attrs={"model": "a"}) for n in ("a0", "a1")], node="node-a"),
        resource_slice("sb", [device("b0", attrs={"model": "b"})], node="node-b"),
        claim("one", [request("gpu")]),
        claim("all", [request("gpu", allocationMode="All", selectors=A_ONLY)]),
    ]
    cluster = Cluster.from_objects(objs)
    ref = plan(cluster, nodes=["node-a", "node-b"], allocator="reference")
    assert [p.node for p in ref.pods] == ["node-a", None]  # node-a's All-set is half taken
    best = plan(cluster, nodes=["node-a", "node-b"], allocator="cpsat")
    assert [p.node for p in best.pods] == ["node-b", "node-a"]
    devs = [r.device for r in best.pods[1].claims[0].status.allocation.devices.results]
    assert devs == ["a0", "a1"]
    _verify(cluster, best)


def test_no_nodes_is_an_input_error() -> None:
    cluster = Cluster.from_objects([device_class("gpu"), claim("c", [request("gpu")])])
    with pytest.raises(InputError):
        plan(cluster)


def test_a_claim_in_two_pods_is_allocated_once_for_both() -> None:
    cluster = Cluster.from_objects([*_two_models(), claim("c", [request("gpu")])])
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, pods=[["c"], ["c"]], nodes=["node-a"], allocator=allocator)
        assert out.placed == 2 and out.pods[0].claims[0].dump() == out.pods[1].claims[0].dump()


def test_pods_from_pod_objects_with_a_template() -> None:
    tmpl = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request("gpu")]}}},
    }
    pods = []
    for name in ("p1", "p2", "p3"):
        p = _pod(name, [])
        p["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "t"}]
        pods.append(p)
    cluster = Cluster.from_objects([*_two_models(), tmpl, *pods])
    for allocator in ("reference", "cpsat"):
        out = plan(cluster, allocator=allocator)
        assert [p.name for p in out.pods] == ["default/p1", "default/p2", "default/p3"]
        assert out.placed == 2 and sorted(p.node for p in out.pods if p.node) == ["node-a", "node-b"]
        assert out.pods[0].claims[0].metadata.name == "p1-g"
        _verify(cluster, out)


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_identical_pods_are_placed_in_queue_order(allocator: str) -> None:
    """Five identical one-GPU claims for three GPUs on two nodes: both planners place the first
    three (CP-SAT keeps the scheduler's queue order among interchangeable pods)."""
    objs = [
        device_class("gpu"),
        resource_slice("sa", [device("g0"), device("g1")], node="node-a"),
        resource_slice("sb", [device("g0")], node="node-b"),
    ]
    objs += [claim(f"c{i}", [request("gpu")]) for i in range(5)]
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert [p.name for p in out.pods if p.placed] == ["default/c0", "default/c1", "default/c2"]
