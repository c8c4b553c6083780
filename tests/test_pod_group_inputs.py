"""PodGroups and Workloads as inputs (issue #19): the Workload kind, group-level claims from
ResourceClaimTemplates (KEP-5729), a topology constraint on a basic PodGroup (KEP-5732) and
the PodGroup cycle's order for basic groups.

Each test is named for the rule it checks; both allocators where the rule is about placing.
What upstream does, and where it says so, is in docs/semantics.md ("Gangs")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner

from dra_solver import Cluster, plan, why
from dra_solver.api.models import PodGroup, Workload
from dra_solver.api.validate import validate_cluster
from dra_solver.check import check, check_gangs
from dra_solver.cli.main import app
from dra_solver.errors import InputError, ValidationErrors

BOTH = ["reference", "cpsat"]
BETA = "scheduling.k8s.io/v1beta1"
ALPHA = "scheduling.k8s.io/v1alpha2"


def pod_group(name: str, min_count: int | None = None, version: str = BETA, **spec: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return {
        "apiVersion": version,
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"schedulingPolicy": policy, **spec},
    }


def workload(name: str, *templates: dict[str, Any], version: str = BETA, **spec: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default"}
    return {
        "apiVersion": version,
        "kind": "Workload",
        "metadata": meta,
        "spec": {"podGroupTemplates": list(templates), **spec},
    }


def template(name: str, min_count: int | None = None, **fields: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {"name": name, "schedulingPolicy": policy, **fields}


def claim_template(name: str, gpus: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request("gpu", count=gpus)]}}},
    }


def pod(name: str, entries: list[dict[str, str]], group: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": entries}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def from_template(entry: str, tpl: str) -> dict[str, str]:
    return {"name": entry, "resourceClaimTemplateName": tpl}


def gpu_nodes(gpus: list[int]) -> list[dict[str, Any]]:
    return [
        resource_slice(f"s{n}", [device(f"gpu-{n}-{i}") for i in range(k)], node=f"node-{n}")
        for n, k in enumerate(gpus)
    ]


def rack_node(name: str, rack: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rack": rack}}}


def placed(out: Any) -> dict[str, str | None]:
    return {p.name.split("/", 1)[1]: p.node for p in out.pods}


def verify(cluster: Cluster, out: Any) -> None:
    """Every placed pod passes the checker, node by node with earlier nodes' claims in use,
    and the PodGroups' minimums and domains hold."""
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    for n in dict.fromkeys(p.node for p in out.pods if p.node is not None):
        mine = list({c.namespaced_name: c for p in out.pods if p.node == n for c in p.claims}.values())
        assert check(current, mine, node=n) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c
    done = [p for p in out.pods if p.placed and p.pod is not None]
    nodes = {(p.pod.metadata.namespace or "default", p.pod.metadata.name): p.node for p in done}
    assert check_gangs(cluster, [p.pod for p in done], nodes) == []


# --- the Workload kind ----------------------------------------------------------------------


def test_workload_is_read_in_v1beta1_and_v1alpha2_as_one_shape() -> None:
    beta = workload("job", template("workers", 4, disruptionMode={"all": {}}))
    alpha = workload("job", template("workers", 4, disruptionMode="PodGroup"), version=ALPHA)
    (a,) = Cluster.from_objects([beta]).workloads.values()
    (b,) = Cluster.from_objects([alpha]).workloads.values()
    assert isinstance(a, Workload) and a.dump() == b.dump()
    assert b.converted_from == ALPHA and b.api_version == BETA
    assert b.spec.pod_group_templates[0].disruption_mode == {"all": {}}


def test_v1alpha2_pod_group_template_ref_is_the_v1beta1_workload_ref() -> None:
    ref = {"workload": {"workloadName": "job", "podGroupTemplateName": "workers"}}
    alpha = pod_group("g", 2, version=ALPHA, podGroupTemplateRef=ref, disruptionMode="Pod")
    (group,) = Cluster.from_objects([alpha]).pod_groups.values()
    assert isinstance(group, PodGroup)
    assert group.spec.workload_ref is not None
    assert (group.spec.workload_ref.workload_name, group.spec.workload_ref.template_name) == (
        "job",
        "workers",
    )
    assert group.spec.disruption_mode == {"single": {}}


@pytest.mark.parametrize(
    ("obj", "field", "text"),
    [
        (
            pod_group("g", 2, version=ALPHA, workloadRef={"workloadName": "job"}),
            "spec.workloadRef",
            "v1alpha2",
        ),
        (
            pod_group("g", 2, workloadRef={"workloadNme": "job"}),
            "spec.workloadRef.workloadNme",
            "workloadName",
        ),
        (workload("job", template("w", 2, preemptionPolicy="Never"), version=ALPHA), "preemptionPolicy", ""),
        (
            workload("job", template("w", 2), podGroupTemplate=[]),
            "spec.podGroupTemplate",
            "podGroupTemplates",
        ),
        (
            workload("job", template("w", 2, disruptionMode="Sometimes"), version=ALPHA),
            "disruptionMode",
            "Pod",
        ),
    ],
)
def test_scheduling_objects_refuse_fields_their_version_lacks_with_did_you_mean(
    obj: dict[str, Any], field: str, text: str
) -> None:
    with pytest.raises(ValidationErrors) as exc:
        Cluster.from_objects([obj])
    (err,) = exc.value.errors
    assert err.field.startswith(field) or err.field.endswith(field), err
    assert text in str(err)


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        ({"podGroupTemplates": []}, "spec.podGroupTemplates", "neither is set"),
        (
            {"podGroupTemplates": [template(f"t{i}", 1) for i in range(9)]},
            "spec.podGroupTemplates",
            "at most 8",
        ),
        (
            {"podGroupTemplates": [template("t", 1), template("t", 2)]},
            "spec.podGroupTemplates[1].name",
            "dup",
        ),
        ({"podGroupTemplates": [template("", 1)]}, "spec.podGroupTemplates[0].name", "required"),
        ({"podGroupTemplates": [template("Big", 1)]}, "spec.podGroupTemplates[0].name", "invalid"),
        (
            {"podGroupTemplates": [template("t", 0)]},
            "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount",
            "1",
        ),
        (
            {"podGroupTemplates": [{"name": "t", "schedulingPolicy": {}}]},
            "spec.podGroupTemplates[0].schedulingPolicy",
            "neither is set",
        ),
        (
            {
                "podGroupTemplates": [
                    template("t", 1, schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]})
                ]
            },
            "spec.podGroupTemplates[0].schedulingConstraints.topology",
            "at most 1",
        ),
        (
            {"podGroupTemplates": [template("t", 1, resourceClaims=[{"name": "c"}])]},
            "spec.podGroupTemplates[0].resourceClaims[0]",
            "exactly one of resourceClaimName, resourceClaimTemplateName",
        ),
        (
            {"podGroupTemplates": [template("t", 1)], "controllerRef": {"kind": "Job"}},
            "spec.controllerRef.name",
            "required",
        ),
    ],
)
def test_validate_workload_templates(spec: dict[str, Any], field: str, text: str) -> None:
    obj = workload("job")
    obj["spec"] = spec
    (err,) = validate_cluster(Cluster.from_objects([obj]))
    assert err.field == field and text in str(err), err


def test_validate_pod_group_naming_a_template_its_workload_lacks_with_did_you_mean() -> None:
    ref = {"workload": {"workloadName": "job", "podGroupTemplateName": "worker"}}
    objs = [
        workload("job", template("workers", 2)),
        pod_group("g", 2, version=ALPHA, podGroupTemplateRef=ref),
    ]
    (err,) = validate_cluster(Cluster.from_objects(objs))
    assert err.field == "spec.podGroupTemplateRef.workload.podGroupTemplateName"  # as written (v1alpha2)
    assert "has no pod group template 'worker'" in str(err) and 'did you mean "workers"?' in str(err)


def test_validate_pod_group_naming_a_missing_workload_only_when_others_are_given() -> None:
    group = pod_group("g", 2, workloadRef={"workloadName": "jbo", "templateName": "workers"})
    assert validate_cluster(Cluster.from_objects([group])) == []  # a dump without Workloads
    (err,) = validate_cluster(Cluster.from_objects([workload("job", template("workers", 2)), group]))
    assert err.field == "spec.workloadRef.workloadName" and 'did you mean "job"?' in str(err)


def test_validate_pod_group_workload_ref_names_both_parts() -> None:
    group = pod_group("g", 2, workloadRef={"workloadName": "job"})
    (err,) = validate_cluster(Cluster.from_objects([group]))
    assert err.field == "spec.workloadRef.templateName" and "required" in str(err)


@pytest.mark.parametrize("allocator", BOTH)
def test_pod_group_policy_is_its_own_copy_not_its_workload_template(allocator: str) -> None:
    # The template says gang minCount 3; the PodGroup (created from it, then scaled) says 2.
    # Upstream's scheduler reads the PodGroup only: 2 of the 3 pods fit, so the gang is placed.
    ref = {"workloadName": "job", "templateName": "workers"}
    objs: list[dict[str, Any]] = [
        device_class("gpu"),
        *gpu_nodes([2]),
        workload("job", template("workers", 3)),
        pod_group("g", 2, workloadRef=ref),
    ]
    for i in range(3):
        objs += [
            claim(f"w{i}-gpu", [request("gpu")]),
            pod(f"w{i}", [{"name": "gpu", "resourceClaimName": f"w{i}-gpu"}], "g"),
        ]
    cluster = Cluster.from_objects(objs)
    out = plan(cluster, allocator=allocator)
    assert sum(p.placed for p in out.pods) == 2
    verify(cluster, out)


def test_pod_group_in_a_composite_hierarchy_is_refused_naming_the_field() -> None:
    objs = [device_class("gpu"), *gpu_nodes([1]), pod_group("g", 1, parentCompositePodGroupName="top")]
    objs.append(pod("p", [], "g"))
    with pytest.raises(InputError, match="CompositePodGroup") as exc:
        plan(Cluster.from_objects(objs), pods=["p"])
    assert exc.value.field == "spec.parentCompositePodGroupName"


# --- group-level claims from a ResourceClaimTemplate (KEP-5729) -------------------------------


def template_claim_cluster(status: dict[str, Any] | None = None) -> Cluster:
    """A gang of two pods sharing the PodGroup's claim `shared` from a template (1 GPU) plus one
    GPU each from another template: node-0 has 2 GPUs, node-1 has 3, so only node-1 holds
    the shared GPU and both pods' own."""
    entries = [from_template("shared", "one-gpu"), from_template("own", "one-gpu")]
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes([2, 3]), claim_template("one-gpu")]
    group = pod_group("train", 2, resourceClaims=[from_template("shared", "one-gpu")])
    if status is not None:
        group["status"] = status
    objs.append(group)
    objs += [pod(f"w{i}", entries, "train") for i in range(2)]
    return Cluster.from_objects(objs)


@pytest.mark.parametrize("allocator", BOTH)
def test_group_claim_from_a_template_is_generated_once_and_reserved_for_the_pod_group(allocator: str) -> None:
    cluster = template_claim_cluster()
    out = plan(cluster, allocator=allocator)
    assert placed(out) == {"w0": "node-1", "w1": "node-1"}
    assert [c.metadata.name for c in out.pod("default/w0").claims] == ["train-shared", "w0-own"]
    assert [c.metadata.name for c in out.pod("default/w1").claims] == ["train-shared", "w1-own"]
    shared = out.pod("default/w0").claims[0]
    assert shared.status is not None and shared.status.allocation is not None
    assert [(r.api_group, r.resource, r.name, r.uid) for r in shared.status.reserved_for] == [
        ("scheduling.k8s.io", "podgroups", "train", "uid-train")
    ]
    (owner,) = shared.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("PodGroup", "train", "uid-train", True)
    assert shared.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "shared"
    own = out.pod("default/w1").claims[1].status
    assert own is not None and [(r.resource, r.name) for r in own.reserved_for] == [("pods", "w1")]
    verify(cluster, out)


def test_group_claim_name_is_the_one_the_pod_group_status_records() -> None:
    status = {"resourceClaimStatuses": [{"name": "shared", "resourceClaimName": "train-shared-x7k2p"}]}
    out = plan(template_claim_cluster(status=status), allocator="reference")
    assert [c.metadata.name for c in out.pod("default/w0").claims] == ["train-shared-x7k2p", "w0-own"]


@pytest.mark.parametrize("allocator", BOTH)
def test_group_claim_from_a_template_with_the_gate_off_is_one_claim_per_pod(allocator: str) -> None:
    out = plan(template_claim_cluster(), allocator=allocator, feature_gates="DRAWorkloadResourceClaims=false")
    assert [c.metadata.name for c in out.pod("default/w0").claims] == ["w0-shared", "w0-own"]
    assert [c.metadata.name for c in out.pod("default/w1").claims] == ["w1-shared", "w1-own"]
    assert sorted(str(n) for n in placed(out).values()) == ["node-0", "node-1"]  # no longer tied


@pytest.mark.parametrize("allocator", BOTH)
def test_pod_entry_that_differs_from_the_group_entry_gets_its_own_claim(allocator: str) -> None:
    # Same entry name, another template: not the group's claim (KEP-5729: all fields must match).
    objs: list[dict[str, Any]] = [
        device_class("gpu"),
        *gpu_nodes([1, 1]),
        claim_template("a"),
        claim_template("b"),
    ]
    objs.append(pod_group("train", 2, resourceClaims=[from_template("gpu", "a")]))
    objs += [pod("w0", [from_template("gpu", "a")], "train"), pod("w1", [from_template("gpu", "b")], "train")]
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert [c.metadata.name for p in out.pods for c in p.claims] == ["train-gpu", "w1-gpu"]
    assert sorted(str(n) for n in placed(out).values()) == ["node-0", "node-1"]


def test_group_claim_already_generated_and_allocated_is_used_where_its_allocation_is() -> None:
    # A dump: the group's claim exists, allocated on node-1 and reserved for the PodGroup;
    # the group's new pod uses it there (node-0 has a free GPU, but not the claim's).
    held = claim(
        "train-shared",
        [request("gpu")],
        status={
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "s1", "device": "gpu-1-0"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                    ]
                },
            },
            "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train"}],
        },
    )
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes([1, 1]), claim_template("one-gpu"), held]
    objs.append(pod_group("train", 1, resourceClaims=[from_template("shared", "one-gpu")]))
    objs.append(pod("w0", [from_template("shared", "one-gpu")], "train"))
    for allocator in BOTH:
        out = plan(Cluster.from_objects(objs), allocator=allocator)
        assert placed(out) == {"w0": "node-1"}, allocator


def test_plan_output_carries_the_generated_group_claim_once(tmp_path: Path) -> None:
    objs = [device_class("gpu"), *gpu_nodes([2, 3]), claim_template("one-gpu")]
    objs.append(pod_group("train", 2, resourceClaims=[from_template("shared", "one-gpu")]))
    objs += [pod(f"w{i}", [from_template("shared", "one-gpu")], "train") for i in range(3)]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    result = CliRunner().invoke(app, ["plan", str(path), "-o", "yaml"])
    assert result.exit_code == 0, result.stderr
    items = yaml.safe_load(result.stdout)["items"]
    claims = [i["metadata"]["name"] for i in items if i["kind"] == "ResourceClaim"]
    assert claims == ["train-shared"]
    full = CliRunner().invoke(app, ["plan", str(path), "-o", "yaml", "--output-mode", "full"])
    after = Cluster.from_yaml(full.stdout)  # fed back: PodGroups kept, the claim once, allocated
    assert list(after.pod_groups) == [("default", "train")]
    held = after.claims[("default", "train-shared")]
    assert held.status is not None and held.status.allocation is not None


def test_validate_group_claim_template_missing_with_did_you_mean() -> None:
    objs = [device_class("gpu"), claim_template("one-gpu")]
    objs.append(pod_group("train", 1, resourceClaims=[from_template("x", "one-gpus")]))
    (err,) = validate_cluster(Cluster.from_objects(objs))
    assert err.field == "spec.resourceClaims[0].resourceClaimTemplateName"
    assert 'ResourceClaimTemplate default/one-gpus not found in the input; did you mean "one-gpu"?' in str(
        err
    )


def test_validate_claim_shared_as_group_claim_by_many_pods_is_not_limited_by_reserved_for() -> None:
    # 300 pods naming one claim: as their PodGroup's claim it is reserved for the PodGroup once.
    entry = {"name": "net", "resourceClaimName": "fabric"}
    pods = [pod(f"p{i}", [entry], "big") for i in range(300)]
    fabric = [device_class("gpu"), claim("fabric", [request("gpu")])]
    grouped = [*fabric, pod_group("big", 1, resourceClaims=[entry]), *pods]
    assert validate_cluster(Cluster.from_objects(grouped)) == []
    plain = [*fabric, pod_group("big", 1), *pods]
    (err,) = validate_cluster(Cluster.from_objects(plain))
    assert err.field == "status.reservedFor" and "300 consumers" in str(err)


# --- a topology constraint on a basic PodGroup (KEP-5732) ------------------------------------


def racked_basic(racks: list[str], gpus: list[int], pods: int, gpus_per_pod: int) -> Cluster:
    """Nodes node-i (label rack=racks[i], gpus[i] GPUs) and a basic PodGroup `web` with a
    topology constraint on `rack`, of `pods` pods x `gpus_per_pod` GPUs."""
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(gpus)]
    objs += [rack_node(f"node-{i}", r) for i, r in enumerate(racks)]
    objs.append(pod_group("web", None, schedulingConstraints={"topology": [{"key": "rack"}]}))
    for i in range(pods):
        objs += [claim(f"w{i}-gpu", [request("gpu", count=gpus_per_pod)])]
        objs.append(pod(f"w{i}", [{"name": "gpu", "resourceClaimName": f"w{i}-gpu"}], "web"))
    return Cluster.from_objects(objs)


RACK = {"node-0": "a", "node-1": "b", "node-2": "b"}


@pytest.mark.parametrize("allocator", BOTH)
def test_basic_policy_with_topology_places_its_pods_in_the_domain_that_fits_most(allocator: str) -> None:
    # rack a (node-0) holds one pod, rack b (node-1, node-2) two: the group takes rack b and
    # its third pod stays out rather than spill to rack a.
    cluster = racked_basic(["a", "b", "b"], [2, 2, 2], 3, 2)
    out = plan(cluster, allocator=allocator)
    nodes = [n for n in placed(out).values() if n is not None]
    assert len(nodes) == 2 and {RACK[n] for n in nodes} == {"b"}
    verify(cluster, out)
    free = plan(cluster, allocator=allocator, feature_gates="TopologyAwareWorkloadScheduling=false")
    assert sum(p.placed for p in free.pods) == 3


@pytest.mark.parametrize("allocator", BOTH)
def test_basic_policy_with_topology_keeps_the_pods_that_fit_without_all_or_nothing(allocator: str) -> None:
    # One pod fits in either rack; a gang would need more, a basic group keeps that one.
    cluster = racked_basic(["a", "b"], [2, 2], 3, 2)
    out = plan(cluster, allocator=allocator)
    assert sum(p.placed for p in out.pods) == 1
    verify(cluster, out)


@pytest.mark.parametrize("allocator", BOTH)
def test_basic_policy_with_topology_where_no_domain_fits_a_pod_says_why(allocator: str) -> None:
    cluster = racked_basic(["a", "b"], [1, 1], 2, 2)
    out = plan(cluster, allocator=allocator)
    assert not any(p.placed for p in out.pods)
    if allocator == "reference":
        reason = out.pod("default/w0").reason or ""
        assert "PodGroup default/web" in reason and "fits one of its pods (basic policy)" in reason, reason


def test_checker_rejects_a_basic_group_across_domains() -> None:
    cluster = racked_basic(["a", "b"], [2, 2], 2, 2)
    pods = [cluster.pod("w0"), cluster.pod("w1")]
    nodes = {("default", "w0"): "node-0", ("default", "w1"): "node-1"}
    (v,) = check_gangs(cluster, pods, nodes)
    assert v.kind == "gang-topology" and "PodGroup default/web" in v.message


# --- the PodGroup cycle's order for basic groups ---------------------------------------------


def test_reference_places_a_basic_groups_pods_together_where_the_queue_reaches_the_first() -> None:
    # Queue: g0, lone, g1 (input order, one priority), room for two. Upstream's PodGroup cycle
    # takes g0 and g1 together when it reaches g0, so lone comes last and is left out.
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes([2]), pod_group("web")]
    for name, group in (("g0", "web"), ("lone", None), ("g1", "web")):
        objs += [
            claim(f"{name}-gpu", [request("gpu")]),
            pod(name, [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}], group),
        ]
    cluster = Cluster.from_objects(objs)
    out = plan(cluster, allocator="reference")
    assert placed(out) == {"g0": "node-0", "lone": None, "g1": "node-0"}
    assert [p.name for p in out.pods] == ["default/g0", "default/lone", "default/g1"]  # input order kept
    off = plan(cluster, allocator="reference", feature_gates="GenericWorkload=false")
    assert placed(off) == {"g0": "node-0", "lone": "node-0", "g1": None}


@pytest.mark.parametrize(
    ("gates", "shared"), [(None, "train-shared"), ("DRAWorkloadResourceClaims=false", "w0-shared")]
)
def test_explain_sees_the_claims_the_gates_give_the_pod(gates: str | None, shared: str) -> None:
    entries = [from_template("shared", "one-gpu"), from_template("own", "one-gpu")]
    group = pod_group("train", 2, resourceClaims=[from_template("shared", "one-gpu")])
    objs = [device_class("gpu"), *gpu_nodes([1]), claim_template("one-gpu"), group]
    objs += [pod(f"w{i}", entries, "train") for i in range(2)]
    text = why(Cluster.from_objects(objs), pod="w0", feature_gates=gates).text()
    assert f"claims default/{shared}, default/w0-own can each be allocated alone but not together" in text
