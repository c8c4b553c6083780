"""Independent claims on one node (each claim its own pod): first fit vs CP-SAT, never worse."""

from __future__ import annotations

from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, plan


def test_all_mode_on_shared_device_one_by_one_as_together() -> None:
    # c0 fills the 40Gi device d1. One by one, c1's All-set still holds d1 and d1 has no room
    # left, so c1 fails (upstream since kubernetes#140769; before it d1 was left out and c1
    # placed); placed together c1 needs d1 too: first fit and the model agree on one pod.
    # c2 (three devices of two) fits nowhere.
    devs = [device("d0", multi=True), device("d1", multi=True, capacity={"memory": "40Gi"})]
    objs = [
        device_class("gpu"),
        resource_slice("s1", devs),
        claim("c0", [request("gpu", allocationMode="All")]),
        claim("c1", [request("gpu", allocationMode="All")]),
        claim("c2", [request("gpu", count=3)]),
    ]
    cluster = Cluster.from_objects(objs)
    pods = [["c0"], ["c1"], ["c2"]]
    ref = plan(cluster, pods, ["node-1"], allocator="reference")
    best = plan(cluster, pods, ["node-1"], allocator="cpsat")
    assert ref.placed == 1
    assert best.placed == 1 and "fallback" not in best.stats


def test_priorities_decide_which_claim_is_left_out() -> None:
    devs = [device("gpu-0")]
    objs = [
        device_class("gpu"),
        resource_slice("s1", devs),
        claim("low", [request("gpu")]),
        claim("high", [request("gpu")]),
    ]
    cluster = Cluster.from_objects(objs)
    best = plan(cluster, [["low"], ["high"]], ["node-1"], allocator="cpsat", priorities=[0, 5])
    assert [p.placed for p in best.pods] == [False, True] and best.pod("default/low").reason


def test_admin_claims_one_by_one_do_not_count_against_capacity() -> None:
    # Within one call an admin placement uses capacity; once allocated it no longer counts,
    # so one by one both admin claims fit on the 40Gi device.
    dev = device("d0", multi=True, capacity={"memory": "40Gi"})
    objs = [
        device_class("gpu"),
        resource_slice("s1", [dev]),
        claim("a", [request("gpu", adminAccess=True)]),
        claim("b", [request("gpu", adminAccess=True, capacity={"requests": {"memory": "5Gi"}})]),
    ]
    cluster = Cluster.from_objects(objs)
    best = plan(cluster, [["a"], ["b"]], ["node-1"], allocator="cpsat")
    assert best.placed == 2
