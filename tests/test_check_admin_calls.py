"""Upstream's adminAccess rule across the claims of one call, checked on whole plans (issue #42).

Upstream allocates a pod's unallocated claims in one call, and a dedicated device that call
gives with adminAccess to a claim is in use for the normal requests of the pod's later claims
(docs/semantics.md, "Admin access"). The checker used to apply this only to one allocator
answer (`check(..., one_call=True)`); a CP-SAT plan or a plan of several pods was checked per
node without it, so the model alone enforced it. Here the plan's final check
(`check_placements`) finds the calls itself — each placed pod's claims the plan allocated, in
the pod's order — and a plan mutated to break the rule is refused, while the rule's edges
(the other order, another pod, a claim an earlier pod allocated) stay allowed.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dra_solver import plan
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.check import PodPlacement, check_placements
from dra_solver.gates import FeatureGates

Doc = dict[str, Any]
DRIVER = "gpu.example.com"
GATES = FeatureGates()


def _objects(pods: dict[str, list[str]], admin: set[str]) -> list[Doc]:
    """One node with one GPU; a claim per name (admin-access when in `admin`); pods using them."""
    claims = sorted({c for names in pods.values() for c in names})
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpu"},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "nodeName": "node-1",
                "devices": [{"name": "gpu-0"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}},
        },
        *(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": c, "namespace": "default", "uid": f"uid-{c}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": c in admin}}
                        ]
                    }
                },
            }
            for c in claims
        ),
        *(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": p, "namespace": "default", "uid": f"uid-{p}"},
                "spec": {
                    "containers": [{"name": "main"}],
                    "resourceClaims": [{"name": c, "resourceClaimName": c} for c in names],
                },
            }
            for p, names in pods.items()
        ),
    ]


def _on_gpu(cluster: Cluster, name: str, *, admin: bool, pods: list[str]) -> ResourceClaim:
    """The claim as a plan allocates it: gpu-0 on node-1, reserved for `pods`."""
    doc = cluster.claim(name).model_dump(by_alias=True, exclude_none=True)
    doc["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "r",
                        "driver": DRIVER,
                        "pool": "node-1",
                        "device": "gpu-0",
                        **({"adminAccess": True} if admin else {}),
                    }
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in pods],
    }
    return ResourceClaim.model_validate(doc)


def _busy(cluster: Cluster, placed: list[str], claims: list[ResourceClaim]) -> list[str]:
    placements = [PodPlacement(cluster.pods[("default", p)], "node-1", new=True) for p in placed]
    overlay = {c.namespaced_name: c for c in claims}
    return [
        v.message
        for v in check_placements(cluster, placements, overlay, GATES, bound=False)
        if v.kind == "busy"
    ]


@pytest.mark.parametrize("allocator", ["cpsat", "reference"])
def test_a_plan_follows_the_claim_order_of_the_pod(allocator: str) -> None:
    """The normal claim first: both get the GPU. The admin claim first: the pod does not fit."""
    ok = Cluster.from_objects(_objects({"p": ["normal", "watch"]}, admin={"watch"}))
    assert plan(ok, allocator=allocator).placed == 1
    blocked = Cluster.from_objects(_objects({"p": ["watch", "normal"]}, admin={"watch"}))
    assert plan(blocked, allocator=allocator).placed == 0


def test_a_cpsat_plan_mutated_to_break_the_rule_is_refused() -> None:
    """The CP-SAT plan for the order (normal, watch) is valid; the same allocations for a pod
    that lists the admin claim first are not: its call would have refused the normal claim."""
    cluster = Cluster.from_objects(_objects({"p": ["normal", "watch"]}, admin={"watch"}))
    out = plan(cluster, allocator="cpsat")
    assert out.placed == 1
    (pod_plan,) = out.pods
    claims = list(pod_plan.claims)
    assert {r.device for c in claims for r in c.status.allocation.devices.results} == {"gpu-0"}  # type: ignore[union-attr]  # placed: allocated
    assert _busy(cluster, ["p"], claims) == []

    docs = _objects({"p": ["normal", "watch"]}, admin={"watch"})
    reordered = copy.deepcopy(docs)
    pod = next(d for d in reordered if d["kind"] == "Pod")
    pod["spec"]["resourceClaims"].reverse()
    mutated = Cluster.from_objects(reordered)
    found = _busy(mutated, ["p"], claims)
    assert found == [
        "claim default/normal, request r: dedicated device gpu.example.com/node-1/gpu-0 was given with "
        "adminAccess to the earlier claim default/watch of the same call: it is in use for the later "
        "claims' normal requests"
    ]


def test_separate_calls_do_not_block_each_other() -> None:
    """An admin claim of one pod blocks nobody of another pod: once allocated, admin results
    make no device busy. Nor does an admin claim an earlier pod of the plan allocated."""
    two_pods = Cluster.from_objects(_objects({"a": ["watch"], "b": ["normal"]}, admin={"watch"}))
    claims = [
        _on_gpu(two_pods, "watch", admin=True, pods=["a"]),
        _on_gpu(two_pods, "normal", admin=False, pods=["b"]),
    ]
    assert _busy(two_pods, ["a", "b"], claims) == []

    shared = Cluster.from_objects(_objects({"a": ["watch"], "b": ["watch", "normal"]}, admin={"watch"}))
    claims = [
        _on_gpu(shared, "watch", admin=True, pods=["a", "b"]),
        _on_gpu(shared, "normal", admin=False, pods=["b"]),
    ]
    assert _busy(shared, ["a", "b"], claims) == []  # pod a's call allocated watch
    assert len(_busy(shared, ["b", "a"], claims)) == 1  # pod b's call allocated both


def test_a_claim_the_input_had_allocated_is_no_part_of_the_call() -> None:
    """An admin claim already allocated in the input is an existing admin result: it blocks nobody."""
    docs = _objects({"p": ["watch", "normal"]}, admin={"watch"})
    cluster = Cluster.from_objects(docs)
    held = _on_gpu(cluster, "watch", admin=True, pods=["p"])
    docs = [d for d in docs if d.get("metadata", {}).get("name") != "watch"]
    docs.append(held.model_dump(by_alias=True, exclude_none=True))
    allocated = Cluster.from_objects(docs)
    assert _busy(allocated, ["p"], [held, _on_gpu(allocated, "normal", admin=False, pods=["p"])]) == []


def test_one_allocator_answer_is_checked_as_one_call() -> None:
    """The same rule for one allocator answer (`check(..., one_call=True)`, as first fit checks
    each pod): the answer (watch, normal) both on gpu-0 is refused in that order only."""
    from dra_solver.check import check  # noqa: PLC0415 - the per-call API, only here

    cluster = Cluster.from_objects(_objects({"p": ["watch", "normal"]}, admin={"watch"}))
    watch = _on_gpu(cluster, "watch", admin=True, pods=["p"])
    normal = _on_gpu(cluster, "normal", admin=False, pods=["p"])
    kinds = [v.kind for v in check(cluster, [watch, normal], node="node-1", gates=GATES, one_call=True)]
    assert kinds == ["busy"]
    assert check(cluster, [normal, watch], node="node-1", gates=GATES, one_call=True) == []
    assert check(cluster, [watch, normal], node="node-1", gates=GATES) == []  # several calls
