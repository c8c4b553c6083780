"""allocationMode All on a node whose pool is incomplete or invalid (docs/semantics.md,
"allocationMode All"): upstream's per-node failure since kubernetes#141898 — the call fails on
that node with upstream's message, and the pod goes on to other nodes (before the fix the
error stopped the pod's scheduling attempt).

Why a test of its own: the failure is found while the Problem is built, before any search,
and every planner must take it as "this node only": first fit (`allocate_reference`), the
CP-SAT model over several nodes (`problem.merge` keeps the pod off the node), even when
another request of the pod could be served there.
"""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver import Cluster, allocate, plan
from dra_solver.errors import FailedOnNode


def _slice(name: str, node: str, count: int, device: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "d.example.com",
            "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
            "nodeName": node,
            "devices": [{"name": device}],
        },
    }


def _objects(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """node-1's pool publishes 1 of its 2 slices (incomplete); node-2's is complete."""
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "c"},
            "spec": {"selectors": [{"cel": {"expression": "true"}}]},
        },
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}},
        _slice("n1", "node-1", 2, "dev-0"),
        _slice("n1-other", "node-1-other", 1, "dev-0")
        | {
            "spec": {
                **_slice("x", "node-1", 1, "dev-1")["spec"],
                "pool": {"name": "other", "generation": 1, "resourceSliceCount": 1},
            }
        },
        _slice("n2", "node-2", 1, "dev-0"),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": requests}}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}],
            },
        },
    ]


ALL = [{"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "All"}}]
ALL_OR_ONE = [
    {
        "name": "r",
        "firstAvailable": [
            {"name": "all", "deviceClassName": "c", "allocationMode": "All"},
            {"name": "one", "deviceClassName": "c"},
        ],
    }
]


@pytest.mark.parametrize("requests", [ALL, ALL_OR_ONE], ids=["all", "all-or-one"])
@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_the_pod_goes_to_another_node(requests: list[dict[str, Any]], allocator: str) -> None:
    """The pool not ready fails node-1 for the whole pod — even where its second subrequest
    could take node-1's other pool's device — and the plan places it on node-2."""
    cluster = Cluster.from_objects(_objects(requests))
    outcome = plan(cluster, allocator=allocator)
    assert [p.node for p in outcome.pods] == ["node-2"], [p.reason for p in outcome.pods]


@pytest.mark.parametrize("requests", [ALL, ALL_OR_ONE], ids=["all", "all-or-one"])
def test_on_that_node_alone_the_call_fails_with_upstreams_message(requests: list[dict[str, Any]]) -> None:
    cluster = Cluster.from_objects(_objects(requests))
    with pytest.raises(
        FailedOnNode,
        match="asks for all devices, but resource pool d.example.com/node-1 is currently being updated",
    ):
        allocate(cluster, pod="default/p", node="node-1")
