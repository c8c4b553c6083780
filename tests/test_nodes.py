"""Choosing a node: the same claims tried on several candidate nodes."""

from __future__ import annotations

from builders import allocated, claim, device, device_class, request, resource_slice, result

from dra_solver import Cluster, allocate


def test_reference_takes_the_first_node_in_order_that_fits() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        resource_slice("b", [device("gpu-0"), device("gpu-1")], node="node-b"),
        claim("c", [request("gpu", count=2)]),
    ]
    out = allocate(Cluster.from_objects(objs), node=["node-a", "node-b"], allocator="reference")
    assert out.allocated and out.node == "node-b"
    assert out.allocation("c").node_selector.dump()["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        "node-b"
    ]


def test_cpsat_packs_onto_the_node_with_a_device_already_shared() -> None:
    shared = device("gpu-0", multi=True, capacity={"memory": "80Gi"})
    old = allocated(
        "old",
        [
            result(
                "gpu-0",
                pool="b",
                shareID="6f1c1c3e-0000-4000-8000-000000000001",
                consumedCapacity={"memory": "10Gi"},
            )
        ],
    )
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0", multi=True, capacity={"memory": "80Gi"})], node="node-a"),
        resource_slice("b", [shared], node="node-b"),
        old,
        claim("c", [request("gpu", capacity={"requests": {"memory": "10Gi"}})]),
    ]
    cluster = Cluster.from_objects(objs)
    assert allocate(cluster, ["c"], node=["node-a", "node-b"], allocator="reference").node == "node-a"
    assert allocate(cluster, ["c"], node=["node-a", "node-b"], allocator="cpsat").node == "node-b"


def test_no_node_fits_names_every_node() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        resource_slice("b", [device("gpu-0")], node="node-b"),
        claim("c", [request("gpu", count=2)]),
    ]
    out = allocate(Cluster.from_objects(objs), node=["node-a", "node-b"], allocator="cpsat")
    # both nodes refuse it in the same words: one cause, both named (was `node-a: ...; node-b: ...`)
    assert not out.allocated and out.reason.startswith(
        "no node fits the pod: node-a and node-b: claim default/c"
    )


def test_node_with_invalid_pool_is_skipped_not_fatal() -> None:
    bad = resource_slice("a", [device("gpu-0"), device("gpu-0")], node="node-a")  # duplicate device names
    objs = [
        device_class("gpu"),
        bad,
        resource_slice("b", [device("gpu-0")], node="node-b"),
        claim("c", [request("gpu")]),
    ]
    out = allocate(Cluster.from_objects(objs), node=["node-a", "node-b"], allocator="reference")
    assert out.allocated and out.node == "node-b"
