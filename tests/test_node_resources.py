"""Pods' cpu, memory and pod-count requests, and extended resources served by DRA (issue #18).

One test per rule, with both allocators: the scheduler's NodeResourcesFit (a pod's effective
request, what bound pods already take, allocatable.pods) and KEP-5004 (extended resources
served by a DeviceClass on nodes that do not advertise them). Nodes are written as
`kubectl get nodes -o yaml` prints them (status.allocatable), pods as workloads write them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import device, device_class, resource_slice
from example_counts import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dra_solver import Cluster, Options, allocate, plan
from dra_solver.api.models import Pod
from dra_solver.api.validate import validate_object
from dra_solver.check import check_node_resources
from dra_solver.cli.main import app
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.policy import AGGREGATED_FIRST, PER_DEVICE_ONLY, Cpsat
from dra_solver.planning.resolve import make_job, resolve_units, with_nodes
from dra_solver.problem.resources import pod_requests

ALLOCATORS = ("reference", "cpsat")
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
}


def node(name: str, **allocatable: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {k.replace("_", "-"): v for k, v in allocatable.items()}},
    }


def container(name: str = "app", requests: dict[str, Any] | None = None, **res: Any) -> dict[str, Any]:
    resources: dict[str, Any] = dict(res)
    if requests:
        resources["requests"] = requests
    return {"name": name, "resources": resources}


def pod(
    name: str,
    containers: list[dict[str, Any]],
    *,
    gpu: bool = False,
    node_name: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": containers, **spec}
    if gpu:
        body["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    if node_name:
        body["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": body,
    }


def gpus(node_name: str, n: int, driver: str = "gpu.example.com") -> dict[str, Any]:
    return resource_slice(
        f"{node_name}-{driver}", [device(f"gpu-{i}") for i in range(n)], node=node_name, driver=driver
    )


def run(objs: list[dict[str, Any]], allocator: str, **kw: Any):  # noqa: ANN201 - PlanOutcome
    return plan(Cluster.from_objects(objs), allocator=allocator, **kw)


def placed_names(outcome) -> list[str]:  # noqa: ANN001
    return [p.name for p in outcome.pods if p.placed]


# --- NodeResourcesFit -----------------------------------------------------------------------


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_cpu_binds_before_gpus(allocator: str) -> None:
    """8 pods of cpu 2 + 1 GPU on a node with 4 CPUs and 8 GPUs: the scheduler places 2."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    objs += [pod(f"p{i}", [container(requests={"cpu": "2"})], gpu=True) for i in range(8)]
    out = run(objs, allocator)
    assert placed_names(out) == ["default/p0", "default/p1"]  # identical pods: queue order
    unplaced = [p for p in out.pods if not p.placed]
    # each fits alone: the two placed pods take the cpu (solver.planners.crowding)
    assert all(
        (p.reason or "").startswith("fits on n1 alone, but other pods of this plan take the room there")
        and (p.reason or "").endswith("on n1, beside default/p0, default/p1 the node has Insufficient cpu")
        for p in unplaced
    )


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_running_pod_takes_its_requests(allocator: str) -> None:
    """A running pod bound to the node requests 3 of 4 CPUs: one more 1-CPU pod fits."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    objs.append(pod("running", [container(requests={"cpu": "3"})], node_name="n1"))
    objs += [pod(f"p{i}", [container(requests={"cpu": "1"})], gpu=True) for i in range(3)]
    out = run(objs, allocator)
    assert out.placed == 1
    assert "running" not in " ".join(p.name for p in out.pods)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_finished_pods_hold_nothing(allocator: str) -> None:
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    done = pod("done", [container(requests={"cpu": "4"})], node_name="n1")
    done["status"] = {"phase": "Succeeded"}
    objs.append(done)
    objs += [pod(f"p{i}", [container(requests={"cpu": "1"})], gpu=True) for i in range(3)]
    assert run(objs, allocator).placed == 3


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_too_many_pods(allocator: str) -> None:
    """allocatable.pods 3 and one pod running: 2 more fit."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="64", pods="3")]
    objs.append(pod("running", [container()], node_name="n1"))
    objs += [pod(f"p{i}", [container()], gpu=True) for i in range(4)]
    out = run(objs, allocator)
    assert out.placed == 2
    assert all((p.reason or "").endswith("the node has Too many pods") for p in out.pods if not p.placed)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_requests_default_to_limits(allocator: str) -> None:
    """limits cpu 3 and no requests, 2 such pods, 4 CPUs: 1 fits."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    objs += [pod(f"p{i}", [container(limits={"cpu": "3"})], gpu=True) for i in range(2)]
    assert run(objs, allocator).placed == 1


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_init_container_peak_counts(allocator: str) -> None:
    """Init container 3 CPUs, app 1 CPU, 2 such pods on 4 CPUs: the pod needs 3, 1 fits."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    objs += [
        pod(
            f"p{i}",
            [container(requests={"cpu": "1"})],
            gpu=True,
            initContainers=[container("init", requests={"cpu": "3"})],
        )
        for i in range(2)
    ]
    assert run(objs, allocator).placed == 1


def test_sidecars_add_to_the_pod_and_to_later_init_containers() -> None:
    p = Pod.model_validate(
        pod(
            "p",
            [container(requests={"cpu": "1", "memory": "1Gi"})],
            initContainers=[
                {**container("sidecar", requests={"cpu": "500m"}), "restartPolicy": "Always"},
                container("init", requests={"cpu": "2"}),
            ],
            overhead={"cpu": "100m"},
        )
    )
    # max(app 1 + sidecar 0.5, init 2 + sidecar 0.5) + overhead 0.1
    assert pod_requests(p) == {"cpu": 2600, "memory": 1024**3}


def test_pod_level_resources_replace_the_containers_sum() -> None:
    p = Pod.model_validate(
        pod(
            "p",
            [container(requests={"cpu": "1"}), container("b", requests={"cpu": "1"})],
            resources={"requests": {"cpu": "3"}},
        )
    )
    assert pod_requests(p)["cpu"] == 3000


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_memory_is_checked_across_nodes(allocator: str) -> None:
    """Pods go to the node whose memory is enough: n1 is too small, n2 takes them."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 4), gpus("n2", 4)]
    objs += [node("n1", cpu="8", memory="1Gi", pods="110"), node("n2", cpu="8", memory="16Gi", pods="110")]
    objs += [pod(f"p{i}", [container(requests={"memory": "4Gi"})], gpu=True) for i in range(3)]
    out = run(objs, allocator)
    assert out.placed == 3
    assert {p.node for p in out.pods} == {"n2"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_pods_without_claims_take_node_resources(allocator: str) -> None:
    """A pending pod without claims competes for cpu: the higher-priority one is placed."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="4", pods="110")]
    objs.append(pod("web", [container(requests={"cpu": "3"})], priority=100))
    objs.append(pod("train", [container(requests={"cpu": "2"})], gpu=True))
    out = run(objs, allocator)
    assert placed_names(out) == ["default/web"]
    assert out.pod("default/web").node == "n1"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_node_without_allocatable_is_not_limited(allocator: str) -> None:
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8)]
    objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    objs += [pod(f"p{i}", [container(requests={"cpu": "100"})], gpu=True) for i in range(3)]
    out = run(objs, allocator)
    assert out.placed == 3
    assert out.stats["warnings"] == [
        "node n1 has neither status.allocatable nor status.capacity: its cpu, memory and pod count "
        "are not limited"
    ]


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_allocate_one_pod_says_insufficient_cpu(allocator: str) -> None:
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 8), node("n1", cpu="1", pods="110")]
    objs.append(pod("big", [container(requests={"cpu": "2"})], gpu=True))
    out = allocate(Cluster.from_objects(objs), pod="big", node="n1", allocator=allocator)
    assert not out.allocated
    assert out.reason == "Insufficient cpu"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_cpsat_beats_first_fit_when_cpu_binds(allocator: str) -> None:
    """First fit puts the 3-CPU pod on n1 (4 CPUs) and then neither 2-CPU pod... CP-SAT packs
    the 2-CPU pods on n1 and the 3-CPU pod on n2 (3 CPUs)."""
    objs = [device_class("gpu"), TEMPLATE, gpus("n1", 4), gpus("n2", 4)]
    objs += [node("n1", cpu="4", pods="110"), node("n2", cpu="3", pods="110")]
    objs.append(pod("big", [container(requests={"cpu": "3"})], gpu=True, priority=1))
    objs += [pod(f"small{i}", [container(requests={"cpu": "2"})], gpu=True) for i in range(2)]
    out = run(objs, allocator)
    assert out.placed == (2 if allocator == "reference" else 3)


# --- the checker ------------------------------------------------------------------------------


def test_checker_rejects_cpu_overcommit() -> None:
    objs = [node("n1", cpu="4", pods="110")]
    objs += [pod(f"p{i}", [container(requests={"cpu": "3"})]) for i in range(2)]
    cluster = Cluster.from_objects(objs)
    pods = list(cluster.pods.values())
    assert check_node_resources(cluster, [(pods[0], "n1", frozenset())]) == []
    violations = check_node_resources(cluster, [(p, "n1", frozenset()) for p in pods])
    assert [v.kind for v in violations] == ["node-resources"]
    assert "node n1 is overcommitted in cpu: its pods request 6000, allocatable 4000" in str(violations[0])


def test_checker_counts_bound_pods() -> None:
    objs = [node("n1", cpu="4", pods="2"), pod("running", [container()], node_name="n1")]
    objs += [pod(f"p{i}", [container()]) for i in range(2)]
    cluster = Cluster.from_objects(objs)
    new = [p for p in cluster.pods.values() if not p.spec.node_name]
    violations = check_node_resources(cluster, [(p, "n1", frozenset()) for p in new])
    assert [v.message.split(": ", 1)[1] for v in violations] == [
        "node n1 is overcommitted in pods: its pods request 3, allocatable 2"
    ]


# --- extended resources served by DRA (KEP-5004) ------------------------------------------------


def gpu_class(
    name: str = "gpu", extended: str | None = "example.com/gpu", created: str | None = None
) -> dict:
    cls = device_class(name)
    if extended:
        cls["spec"]["extendedResourceName"] = extended
    if created:
        cls["metadata"]["creationTimestamp"] = created
    return cls


def ext_pod(name: str, count: int = 4, resource: str = "example.com/gpu", **spec: Any) -> dict[str, Any]:
    return pod(
        name, [container(requests={resource: str(count), "cpu": "1"}, limits={resource: str(count)})], **spec
    )


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_by_explicit_name(allocator: str) -> None:
    objs = [gpu_class(), gpus("n1", 8), node("n1", cpu="8", pods="110")]
    objs += [ext_pod("a"), ext_pod("b"), ext_pod("c")]
    out = run(objs, allocator)
    assert out.placed == 2
    a = next(p for p in out.pods if p.placed)
    name = a.name.split("/")[1]
    (special,) = a.claims
    assert special.metadata.name == f"{name}-extended-resources"
    assert special.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] == "true"
    assert special.metadata.owner_references[0].name == name
    (req,) = special.spec.devices.requests
    assert (req.name, req.exactly.device_class_name, req.exactly.count) == ("container-0-request-1", "gpu", 4)
    assert len(special.status.allocation.devices.results) == 4
    assert [r.name for r in special.status.reserved_for] == [name]
    status = a.extended[a.name]
    assert status.resource_claim_name == f"{name}-extended-resources"
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("app", "example.com/gpu", "container-0-request-1")
    ]
    left = next(p for p in out.pods if not p.placed)
    assert left.claims == [] and left.extended == {}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_by_implicit_class_name(allocator: str) -> None:
    objs = [gpu_class(extended=None), gpus("n1", 8), node("n1", cpu="8", pods="110")]
    objs.append(ext_pod("a", 2, resource="deviceclass.resource.kubernetes.io/gpu"))
    out = run(objs, allocator)
    assert out.placed == 1
    assert out.pod("default/a").claims[0].spec.devices.requests[0].exactly.device_class_name == "gpu"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_newest_class_wins(allocator: str) -> None:
    """Two classes name example.com/gpu: the newer one serves it (its driver's devices)."""
    old = gpu_class("old-gpu", created="2026-01-01T00:00:00Z")
    new = gpu_class("new-gpu", created="2026-06-01T00:00:00Z")
    new["spec"]["selectors"] = [{"cel": {"expression": 'device.driver == "other.example.com"'}}]
    objs = [
        old,
        new,
        gpus("n1", 4),
        gpus("n1", 4, driver="other.example.com"),
        node("n1", cpu="8", pods="110"),
    ]
    objs.append(ext_pod("a", 4))
    out = run(objs, allocator)
    special = out.pod("default/a").claims[0]
    assert special.spec.devices.requests[0].exactly.device_class_name == "new-gpu"
    assert {r.driver for r in special.status.allocation.devices.results} == {"other.example.com"}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_device_plugin_node_counts_allocatable(allocator: str) -> None:
    """A node that advertises example.com/gpu serves it by device plugin: no claim, the count
    applies (8 advertised: two pods of 4)."""
    objs = [gpu_class(), node("n1", cpu="8", pods="110", **{"example.com/gpu": "8"})]
    objs += [ext_pod(p) for p in ("a", "b", "c")]
    out = run(objs, allocator)
    assert out.placed == 2
    assert all(p.claims == [] and p.extended == {} for p in out.pods)
    if allocator == "reference":
        assert (out.pod("default/c").reason or "").endswith(
            "on n1, beside default/a, default/b the node has Insufficient example.com/gpu"
        )


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_mixed_cluster(allocator: str) -> None:
    """Device-plugin node n1 (4 advertised) and DRA node n2 (8 devices): 3 pods of 4 all fit,
    each in the form of its node."""
    objs = [gpu_class(), gpus("n2", 8)]
    objs += [node("n1", cpu="8", pods="110", **{"example.com/gpu": "4"}), node("n2", cpu="8", pods="110")]
    objs += [ext_pod(p) for p in ("a", "b", "c")]
    out = run(objs, allocator)
    assert out.placed == 3
    on_n1 = [p for p in out.pods if p.node == "n1"]
    on_n2 = [p for p in out.pods if p.node == "n2"]
    assert len(on_n1) == 1 and on_n1[0].claims == []
    assert len(on_n2) == 2 and all(len(p.claims) == 1 for p in on_n2)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_unknown_extended_resource_does_not_fit(allocator: str) -> None:
    objs = [gpu_class(), gpus("n1", 8), node("n1", cpu="8", pods="110")]
    objs.append(ext_pod("a", 1, resource="example.com/fpga"))
    out = run(objs, allocator)
    assert out.placed == 0
    assert out.pod("default/a").reason == "Insufficient example.com/fpga"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_extended_resource_with_a_claim_of_its_own(allocator: str) -> None:
    """A pod with a claim and an extended resource: both allocated together on the node."""
    objs = [gpu_class(), TEMPLATE, gpus("n1", 3), node("n1", cpu="8", pods="110")]
    objs.append(ext_pod("a", 2, resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]))
    objs.append(ext_pod("b", 1))
    objs[-2]["spec"]["priority"] = 10  # a first
    out = run(objs, allocator)
    a = out.pod("default/a")
    assert a.placed and [c.metadata.name for c in a.claims] == ["a-gpu", "a-extended-resources"]
    devices = {r.device for c in a.claims for r in c.status.allocation.devices.results}
    assert len(devices) == 3
    assert not out.pod("default/b").placed


def test_extended_resource_gate_off_leaves_it_to_allocatable() -> None:
    objs = [gpu_class(), gpus("n1", 8), node("n1", cpu="8", pods="110"), ext_pod("a", 1)]
    out = run(objs, "reference", feature_gates="DRAExtendedResource=false")
    assert out.pod("default/a").reason == "Insufficient example.com/gpu"


def test_extended_resource_from_init_and_app_containers() -> None:
    """One request per container that asks, indexed over init then app containers; names by
    the resource's position among the container's sorted request names."""
    objs = [gpu_class(), gpus("n1", 8), node("n1", cpu="8", pods="110")]
    objs.append(
        pod(
            "a",
            [container(requests={"example.com/gpu": "2", "cpu": "1", "memory": "1Gi"})],
            initContainers=[container("init", requests={"example.com/gpu": "1"})],
        )
    )
    out = run(objs, "reference")
    special = out.pod("default/a").claims[0]
    assert [(r.name, r.exactly.count) for r in special.spec.devices.requests] == [
        ("container-0-request-0", 1),
        ("container-1-request-1", 2),
    ]


# --- the command line -----------------------------------------------------------------------


def test_cli_plan_prints_bound_pods_and_the_extended_resource_claim(tmp_path: Path) -> None:
    objs = [gpu_class(), gpus("n1", 4), node("n1", cpu="8", pods="110"), ext_pod("a", 4), ext_pod("b", 4)]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    result = CliRunner().invoke(app, ["plan", str(path), "--allocator", "reference"])
    assert result.exit_code == 2, result.stderr
    items = yaml.safe_load(result.stdout)["items"]
    by_name = {(i["kind"], i["metadata"]["name"]): i for i in items}
    a = by_name[("Pod", "a")]
    assert a["spec"]["nodeName"] == "n1"
    assert a["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == "a-extended-resources"
    claim = by_name[("ResourceClaim", "a-extended-resources")]
    assert len(claim["status"]["allocation"]["devices"]["results"]) == 4
    b = by_name[("Pod", "b")]
    assert "nodeName" not in b["spec"]
    (cond,) = b["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert cond["message"]


# --- validation ---------------------------------------------------------------------------------


RES = "spec.containers[0].resources"


@pytest.mark.parametrize(
    ("resources", "field", "words"),
    [
        (
            {"requests": {"cpu": "-1"}},
            "spec.containers[0].resources.requests[cpu]",
            "greater than or equal to 0",
        ),
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            "spec.containers[0].resources.requests[cpu]",
            "less",
        ),
        (
            {"limits": {"example.com/gpu": "500m"}},
            "spec.containers[0].resources.limits[example.com/gpu]",
            "integer",
        ),
        (
            {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}},
            "spec.containers[0].resources.requests[example.com/gpu]",
            "equal to the limit",
        ),
        (  # KEP-5004's implicit name is in the kubernetes.io domain, yet an extended resource
            {"limits": {"deviceclass.resource.kubernetes.io/gpu": "500m"}},
            "spec.containers[0].resources.limits[deviceclass.resource.kubernetes.io/gpu]",
            "integer",
        ),
    ],
)
def test_validate_rejects_resources_the_api_server_rejects(resources: dict, field: str, words: str) -> None:
    errors = validate_object(Pod.model_validate(pod("p", [{"name": "app", "resources": resources}])))
    assert [e.field for e in errors] == [field]
    assert words in str(errors[0])


# --- the two CP-SAT models agree -------------------------------------------------------------


@st.composite
def cpu_clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    """2-4 nodes of 2-4 GPUs and 2-8 CPUs (some with a running pod), 3-9 pods of one GPU and
    1-4 CPUs, some of higher priority."""
    objs: list[dict[str, Any]] = [device_class("gpu"), TEMPLATE]
    for n in range(draw(st.integers(2, 4))):
        name = f"n{n}"
        objs += [
            gpus(name, draw(st.integers(2, 4))),
            node(name, cpu=str(draw(st.integers(2, 8))), pods="110"),
        ]
        if draw(st.booleans()):
            objs.append(pod(f"run{n}", [container(requests={"cpu": "1"})], node_name=name))
    for p in range(draw(st.integers(3, 9))):
        cpu = draw(st.integers(1, 4))
        objs.append(
            pod(
                f"p{p}",
                [container(requests={"cpu": str(cpu)})],
                gpu=True,
                priority=draw(st.sampled_from([0, 0, 5])),
            )
        )
    return objs


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cpu_clusters())
def test_aggregated_and_per_device_models_place_the_same_weight_under_cpu_limits(
    objs: list[dict[str, Any]],
) -> None:
    cluster = Cluster.from_objects(objs)
    units = resolve_units(cluster, None, None)
    nodes = list(cluster.nodes)
    job = make_job(cluster, [with_nodes(cluster, u, nodes) for u in units], nodes, Options(time_limit=5.0))
    first = FirstFit(max_steps=Cpsat.first_fit_steps).plan(job)
    agg = Cpsat().improve(replace(job, models=AGGREGATED_FIRST), first)
    exact = Cpsat().improve(replace(job, models=PER_DEVICE_ONLY), first)
    assert agg.weight >= first.weight and exact.weight >= first.weight
    event(f"aggregated: {str(agg.stats.get('aggregated'))[:20]}")
    if getattr(agg.verdict, "status", None) == getattr(exact.verdict, "status", None) == "OPTIMAL":
        assert agg.weight == exact.weight
    for out in (agg, exact):
        placed = [(cluster.pod(p.name), p.node, frozenset()) for p in out.pods if p.placed and p.node]
        assert check_node_resources(cluster, placed) == []
