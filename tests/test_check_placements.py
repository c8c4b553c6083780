"""The checker's placement rules in detail (issue #27 §2): the node-affinity operators, the
tolerations the scheduler accepts, pods already bound, claims from templates and group-level
claims. Each case is a pod on a node, written as data; the assertion is the exact set of kinds."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.cluster import Cluster
from dra_solver.check import PodPlacement, check_placements
from dra_solver.gates import FeatureGates

Doc = dict[str, Any]

NODE: Doc = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1", "zone": "a", "gen": "5"}},
}


def _pod(spec: Doc | None = None, status: Doc | None = None, name: str = "p") -> Doc:
    doc: Doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "main"}], **(spec or {})},
    }
    if status is not None:
        doc["status"] = status
    return doc


def _kinds(*docs: Doc, node: str = "node-1", new: bool = True, gates: FeatureGates | None = None) -> set[str]:
    cluster = Cluster.from_objects(list(docs))
    pod = next(iter(cluster.pods.values()))
    found = check_placements(cluster, [PodPlacement(pod, node, new=new)], gates=gates, bound=False)
    return {v.kind for v in found}


def _affinity(*requirements: Doc, fields: bool = False) -> Doc:
    term = {"matchFields" if fields else "matchExpressions": list(requirements)}
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    }


@pytest.mark.parametrize(
    ("requirement", "ok"),
    [
        ({"key": "zone", "operator": "In", "values": ["a", "b"]}, True),
        ({"key": "zone", "operator": "In", "values": ["b"]}, False),
        ({"key": "zone", "operator": "NotIn", "values": ["b"]}, True),
        ({"key": "zone", "operator": "NotIn", "values": ["a"]}, False),
        ({"key": "missing", "operator": "NotIn", "values": ["a"]}, True),
        ({"key": "zone", "operator": "Exists"}, True),
        ({"key": "missing", "operator": "Exists"}, False),
        ({"key": "missing", "operator": "DoesNotExist"}, True),
        ({"key": "zone", "operator": "DoesNotExist"}, False),
        ({"key": "gen", "operator": "Gt", "values": ["4"]}, True),
        ({"key": "gen", "operator": "Gt", "values": ["5"]}, False),
        ({"key": "gen", "operator": "Lt", "values": ["6"]}, True),
        ({"key": "zone", "operator": "Lt", "values": ["6"]}, False),  # not an integer
    ],
)
def test_required_node_affinity_operators(requirement: Doc, ok: bool) -> None:
    assert _kinds(NODE, _pod(_affinity(requirement))) == (set() if ok else {"pod-node-affinity"})


def test_match_fields_name_the_node_and_terms_are_ored() -> None:
    assert (
        _kinds(
            NODE,
            _pod(_affinity({"key": "metadata.name", "operator": "In", "values": ["node-1"]}, fields=True)),
        )
        == set()
    )
    wrong = _affinity({"key": "metadata.name", "operator": "In", "values": ["node-2"]}, fields=True)
    assert _kinds(NODE, _pod(wrong)) == {"pod-node-affinity"}
    terms = wrong["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    terms.append({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]})
    assert _kinds(NODE, _pod(wrong)) == set()
    terms[1] = {}  # an empty term matches nothing
    assert _kinds(NODE, _pod(wrong)) == {"pod-node-affinity"}


def test_a_node_without_a_node_object_has_only_its_hostname() -> None:
    assert _kinds(_pod({"nodeSelector": {"kubernetes.io/hostname": "node-9"}}), node="node-9") == set()
    assert _kinds(_pod({"nodeSelector": {"zone": "a"}}), node="node-9") == {"pod-node-selector"}


def _node(**spec: Any) -> Doc:
    return {**NODE, "spec": spec}


@pytest.mark.parametrize(
    ("taint", "tolerations", "ok"),
    [
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, [], False),
        ({"key": "k", "value": "v", "effect": "NoExecute"}, [], False),
        ({"key": "k", "value": "v", "effect": "PreferNoSchedule"}, [], True),
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"key": "k", "operator": "Exists"}], True),
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"key": "k", "value": "v"}], True),
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"key": "k", "value": "w"}], False),
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, [{"operator": "Exists"}], True),
        (
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            [{"key": "k", "operator": "Exists", "effect": "NoExecute"}],
            False,
        ),
    ],
)
def test_node_taints_and_tolerations(taint: Doc, tolerations: list[Doc], ok: bool) -> None:
    assert _kinds(_node(taints=[taint]), _pod({"tolerations": tolerations})) == (
        set() if ok else {"pod-node-taint"}
    )


def test_unschedulable_unless_tolerated() -> None:
    assert _kinds(_node(unschedulable=True), _pod()) == {"pod-node-unschedulable"}
    tolerate = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert _kinds(_node(unschedulable=True), _pod({"tolerations": tolerate})) == set()


def test_a_bound_pod_keeps_its_node_and_only_noexecute_applies() -> None:
    bound = _pod({"nodeName": "node-1", "nodeSelector": {"zone": "b"}})
    tainted = _node(unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}])
    assert _kinds(tainted, bound, new=False) == set()  # bound before: IgnoredDuringExecution
    assert _kinds(tainted, bound, new=True) == {
        "pod-node-selector",
        "pod-node-unschedulable",
        "pod-node-taint",
    }
    evicting = _node(taints=[{"key": "k", "effect": "NoExecute"}])
    assert _kinds(evicting, bound, new=False) == {"pod-node-taint"}
    assert _kinds(NODE, _pod({"nodeName": "node-2"}), new=False) == {"pod-node-name"}


def _claim(name: str, reserved: list[Doc], node: str | None = "node-1") -> Doc:
    allocation: Doc = {"devices": {"results": []}}
    if node is not None:
        allocation["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": []}},
        "status": {"allocation": allocation, "reservedFor": reserved},
    }


TEMPLATE: Doc = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "t", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": []}}},
}


def test_a_template_claim_is_found_through_the_pods_status() -> None:
    spec = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}
    status = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]}
    me = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert _kinds(NODE, TEMPLATE, _claim("p-gpu-x7k2q", me), _pod(spec, status)) == set()
    assert _kinds(NODE, TEMPLATE, _claim("p-gpu", me), _pod(spec, status)) == {"pod-claim-allocated"}
    assert _kinds(NODE, TEMPLATE, _claim("p-gpu", me), _pod(spec)) == set()  # the planner's name


def test_the_uid_must_match_when_both_are_known() -> None:
    spec = {"resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}
    other = [{"resource": "pods", "name": "p", "uid": "uid-of-an-older-p"}]
    assert _kinds(NODE, _claim("c", other), _pod(spec)) == {"pod-claim-reserved"}
    assert _kinds(NODE, _claim("c", [{"resource": "pods", "name": "p"}]), _pod(spec)) == set()


def test_a_network_claim_without_a_node_selector_fits_any_node() -> None:
    spec = {"resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}
    me = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert _kinds(NODE, _claim("c", me, node=None), _pod(spec), node="node-7") == set()
    assert _kinds(NODE, _claim("c", me), _pod(spec), node="node-7") == {"pod-claim-node"}


GROUP: Doc = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "g", "namespace": "default"},
    "spec": {
        "schedulingPolicy": {"basic": {}},
        "resourceClaims": [{"name": "shared", "resourceClaimName": "group-claim"}],
    },
}


def test_a_group_claim_is_reserved_for_the_pod_group() -> None:
    spec = {
        "schedulingGroup": {"podGroupName": "g"},
        "resourceClaims": [{"name": "shared", "resourceClaimName": "group-claim"}],
    }
    for_group = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g"}]
    for_pod = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert _kinds(NODE, GROUP, _claim("group-claim", for_group), _pod(spec)) == set()
    assert _kinds(NODE, GROUP, _claim("group-claim", for_pod), _pod(spec)) == {"pod-claim-reserved"}
    # without DRAWorkloadResourceClaims the entry is the pod's own claim: reserved for the pod
    off = FeatureGates(DRAWorkloadResourceClaims=False)
    assert _kinds(NODE, GROUP, _claim("group-claim", for_pod), _pod(spec), gates=off) == set()
    assert _kinds(NODE, GROUP, _claim("group-claim", for_group), _pod(spec), gates=off) == {
        "pod-claim-reserved"
    }


def test_a_group_claim_from_a_template_is_the_groups_generated_claim() -> None:
    group = {
        **GROUP,
        "spec": {**GROUP["spec"], "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "t"}]},
    }
    group["status"] = {"resourceClaimStatuses": [{"name": "shared", "resourceClaimName": "g-shared-abcde"}]}
    spec = {
        "schedulingGroup": {"podGroupName": "g"},
        "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "t"}],
    }
    for_group = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g"}]
    assert _kinds(NODE, TEMPLATE, group, _claim("g-shared-abcde", for_group), _pod(spec)) == set()
    assert _kinds(NODE, TEMPLATE, group, _claim("g-shared-abcde", for_group), _pod(spec), node="node-2") == {
        "pod-claim-node"
    }


def test_a_pod_on_a_claim_reserved_for_someone_else_breaks_pod_claim_reserved() -> None:
    spec = {"nodeName": "node-1", "resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}
    someone_else = [{"resource": "pods", "name": "other", "uid": "uid-other"}]
    cluster = Cluster.from_objects([NODE, _claim("c", someone_else), _pod(spec)])
    pod = cluster.pods[("default", "p")]
    placed = [PodPlacement(pod, "node-1", new=True)]
    assert {v.kind for v in check_placements(cluster, placed, bound=False)} == {"pod-claim-reserved"}
    elsewhere = [PodPlacement(pod, "node-2", new=True)]  # the node rules too
    kinds = {v.kind for v in check_placements(cluster, elsewhere, bound=False)}
    assert kinds == {"pod-node-name", "pod-claim-node", "pod-claim-reserved"}


def test_a_pod_placed_on_a_held_claim_is_reserved_in_the_output() -> None:
    from dra_solver import check_cluster, plan  # noqa: PLC0415 - the planner, only for this case
    from dra_solver.output.objects import changed_objects, cluster_after  # noqa: PLC0415

    spec = {"resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}
    holder = _pod({"nodeName": "node-1", **spec}, {"phase": "Running"}, name="other")
    cluster = Cluster.from_objects(
        [NODE, _claim("c", [{"resource": "pods", "name": "other", "uid": "uid-other"}]), holder, _pod(spec)]
    )
    out = plan(cluster, pods=["default/p"])
    assert out.placed == 1
    assert check_cluster(Cluster.from_objects(cluster_after(cluster, out.pods))) == []
    (changed,) = [o for o in changed_objects(out.pods) if o["kind"] == "ResourceClaim"]
    assert [r["name"] for r in changed["status"]["reservedFor"]] == ["other", "p"]
    assert cluster.claims[("default", "c")].status.reserved_for[-1].name == "other"  # input untouched
