"""Pod scheduling constraints in plans and allocations (issue #9): what the scheduler's filters
decide for a pod and a node, with both allocators. Inputs are written in the shapes of public
manifests (NVIDIA GPU nodes tainted nvidia.com/gpu:NoSchedule, pods selecting a node pool)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, allocate, plan
from dra_solver.errors import InputError

ALLOCATORS = ("reference", "cpsat")
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "single-gpu", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
}


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
    }


def pod(name: str, claim_name: str | None = None, **spec: Any) -> dict[str, Any]:
    entry = (
        {"name": "gpu", "resourceClaimName": claim_name}
        if claim_name
        else {"name": "gpu", "resourceClaimTemplateName": "single-gpu"}
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [entry],
            **spec,
        },
    }


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


def cluster(*objs: dict[str, Any], nodes: list[dict[str, Any]] | None = None) -> Cluster:
    """Two nodes with one GPU each (node-a first), the template, and `objs`."""
    nodes = nodes if nodes is not None else [node("node-a"), node("node-b")]
    names = [n["metadata"]["name"] for n in nodes]
    slices = [resource_slice(f"s-{n}", [device("gpu-0")], node=n) for n in names]
    return Cluster.from_objects([device_class("gpu"), *slices, TEMPLATE, *nodes, *objs])


def placements(c: Cluster, allocator: str) -> dict[str, str | None]:
    return {p.name.split("/")[1]: p.node for p in plan(c, allocator=allocator).pods}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_node_selector_restricts_the_nodes(allocator: str) -> None:
    nodes = [node("node-a", {"pool": "cpu"}), node("node-b", {"pool": "gpu"})]
    c = cluster(pod("p", nodeSelector={"pool": "gpu"}), nodes=nodes)
    assert placements(c, allocator) == {"p": "node-b"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_node_selector_that_no_node_matches_leaves_the_pod_unplaced(allocator: str) -> None:
    c = cluster(pod("p", nodeSelector={"pool": "tpu"}))
    out = plan(c, allocator=allocator)
    assert out.placed == 0 and "nodeSelector pool=tpu" in (out.pods[0].reason or "")


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_required_node_affinity_operators(allocator: str) -> None:
    nodes = [node("node-a", {"gen": "3"}), node("node-b", {"gen": "5"})]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}
                ]
            }
        }
    }
    c = cluster(pod("p", affinity=affinity), nodes=nodes)
    assert placements(c, allocator) == {"p": "node-b"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_node_taint_needs_a_toleration(allocator: str) -> None:
    taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    nodes = [node("node-a", taints=taint), node("node-b")]
    tolerating = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    c = cluster(pod("plain"), pod("tolerant", tolerations=tolerating), nodes=nodes)
    got = placements(c, allocator)
    assert got["plain"] == "node-b" and got["tolerant"] == "node-a"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_prefer_no_schedule_taint_does_not_block(allocator: str) -> None:
    nodes = [node("node-a", taints=[{"key": "spot", "effect": "PreferNoSchedule"}])]
    assert placements(cluster(pod("p"), nodes=nodes), allocator) == {"p": "node-a"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_unschedulable_node_is_skipped(allocator: str) -> None:
    nodes = [node("node-a", unschedulable=True), node("node-b")]
    assert placements(cluster(pod("p"), nodes=nodes), allocator) == {"p": "node-b"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_a_pod_bound_by_node_name_without_allocated_claims_is_never_placed(allocator: str) -> None:
    """The pod bypassed the scheduler (spec.nodeName at creation): upstream never allocates its
    claims and the kubelet will not start it (docs/semantics.md, "Messy clusters")."""
    c = cluster(pod("p", nodeName="node-b"))
    assert placements(c, allocator) == {"p": None}
    (only,) = plan(c, allocator=allocator).pods
    assert "bound by nodeName to node-b without allocated claims" in (only.reason or "")
    out = allocate(c, pod="p", allocator=allocator)
    assert not out.allocated and "the kubelet will not start it" in (out.reason or "")


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_pod_selecting_labels_of_a_node_without_node_object_is_not_placed(allocator: str) -> None:
    c = Cluster.from_objects(
        [
            device_class("gpu"),
            resource_slice("s", [device("gpu-0")], node="node-a"),
            TEMPLATE,
            pod("p", nodeSelector={"pool": "gpu"}),
        ]
    )
    out = plan(c, allocator=allocator)
    assert out.placed == 0 and "labels are unknown" in (out.pods[0].reason or "")


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_shared_claim_is_allocated_once_and_reserved_for_both_pods(allocator: str) -> None:
    shared = claim("shared-gpu", [request("gpu")])
    c = cluster(shared, pod("p1", "shared-gpu"), pod("p2", "shared-gpu"))
    out = plan(c, allocator=allocator)
    assert out.placed == 2
    p1, p2 = out.pods
    assert p1.node == p2.node
    alloc = p1.claims[0].status
    assert alloc.allocation is not None
    assert [r.name for r in alloc.reserved_for] == ["p1", "p2"]
    assert [r.uid for r in alloc.reserved_for] == ["uid-p1", "uid-p2"]
    assert p2.claims[0].dump() == p1.claims[0].dump()


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_priority_class_decides_which_pod_gets_the_last_gpu(allocator: str) -> None:
    nodes = [node("node-a")]
    urgent = pod("urgent", priorityClassName="high")
    c = cluster(priority_class("high", 1000), pod("low"), urgent, nodes=nodes)
    got = placements(c, allocator)
    assert got == {"low": None, "urgent": "node-a"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_global_default_priority_class_applies_to_pods_without_one(allocator: str) -> None:
    nodes = [node("node-a")]
    base = priority_class("base", 10, globalDefault=True)
    c = cluster(base, pod("default-prio"), pod("explicit", priority=5), nodes=nodes)
    assert placements(c, allocator) == {"default-prio": "node-a", "explicit": None}


def test_unknown_priority_class_is_an_input_error() -> None:
    c = cluster(pod("p", priorityClassName="nope"))
    with pytest.raises(InputError, match="PriorityClass nope"):
        plan(c)


def test_unknown_node_is_named_with_a_did_you_mean() -> None:
    c = cluster(claim("c", [request("gpu")]))
    with pytest.raises(InputError, match="unknown node node-c.*did you mean node-[ab]"):
        allocate(c, ["c"], node="node-c")
    with pytest.raises(InputError, match="unknown node nod-b"):
        plan(c, nodes=["nod-b"])


def test_allocate_on_template_pods_without_a_pod_says_what_to_do() -> None:
    c = cluster(pod("p"))
    with pytest.raises(InputError, match="--pod NAME"):
        allocate(c, node="node-a")
