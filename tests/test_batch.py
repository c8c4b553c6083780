"""Independent claims on one node (each claim its own pod): first fit vs CP-SAT, never worse."""

from __future__ import annotations

from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, plan


def test_all_mode_on_shared_device_one_by_one_is_kept_when_better() -> None:
    # One by one, c1's All-set leaves out the 40Gi device that c0 filled (its remaining
    # capacity cannot fit); placed together, c1 would need it too. Both claims fit one by one.
    # c2 (three devices of two) fits nowhere, but no node refuses it before the plan, so
    # first fit's plan is not proven complete and the model runs (and places less).
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
    assert ref.placed == 2
    assert best.placed == 2 and best.stats["fallback"] == "first fit"


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
