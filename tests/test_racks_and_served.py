"""The aggregated model's two paths found by the scale smoke (issue #40, docs/benchmarks.md,
"Scale smoke"), against the per-device model on tiny clusters:

- network-attached pools seen by a group of nodes (a pool per rack) beside node-local GPUs
  (`aggregated.racks`): the pools are the model's nodes beside the real ones. Where both
  models prove their plans, they place the same weight; the racked model's bound is never
  below the per-device model's proven optimum (it bounds every valid plan, node resources
  that bind included: the model relaxes them); every plan passes the checker (`plan` checks
  its output).
- DRA-served extended resources (`aggregated.served`): a pod asking `example.com/gpu` where
  no node advertises it is a pod with its special claim; the same comparison, and each
  placed pod names its special claim in its extended-resource status.
"""

from __future__ import annotations

from typing import Any

from example_counts import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.scale_smoke import device_class, resource_slice
from dra_solver import Cluster, plan
from dra_solver.planners.policy import AGGREGATED_FIRST, PER_DEVICE_ONLY
from dra_solver.planning.outcome import PlanOutcome

GPU, FPGA = "gpu.example.com", "fpga.example.com"
EXTENDED = "example.com/gpu"


def _node(name: str, rack: int, cpu: int, advertise: int = 0) -> dict[str, Any]:
    alloc = {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}
    if advertise:
        alloc[EXTENDED] = str(advertise)
    labels = {"kubernetes.io/hostname": name, "rack": f"r{rack}"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": alloc},
    }


def _slice(name: str, driver: str, devices: int, **where: Any) -> dict[str, Any]:
    """`devices` devices, each with its pool's name as attribute `rack`."""
    listed = [{"name": f"d{i}", "attributes": {"rack": {"string": name}}} for i in range(devices)]
    return resource_slice(name, driver, listed, **where)


def _rack_pool(rack: int, devices: int) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "rack", "operator": "In", "values": [f"r{rack}"]}]}
    return _slice(f"fpga-r{rack}", FPGA, devices, nodeSelector={"nodeSelectorTerms": [term]})


def _template(name: str, cls: str, count: int) -> dict[str, Any]:
    req = {"name": "dev", "exactly": {"deviceClassName": cls, "count": count}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [req]}}},
    }


def _pod(name: str, template: str | None, priority: int = 0, extended: int = 0) -> dict[str, Any]:
    requests = {"cpu": "2"}
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    if extended:
        requests[EXTENDED] = str(extended)
        container["resources"]["limits"] = {EXTENDED: str(extended)}
    spec: dict[str, Any] = {"containers": [container], "priority": priority}
    if template is not None:
        container["resources"]["claims"] = [{"name": "dev"}]
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@st.composite
def racks(draw: st.DrawFn) -> list[dict[str, Any]]:
    """2-3 racks of 1-3 nodes, each node 0-2 GPUs of its own and 2-8 cpu (pods take 2: node
    resources bind sometimes), each rack a pool of 0-3 FPGAs seen by its nodes; 3-9 pods of
    one GPU, one FPGA or two FPGAs (of one pool: each node sees one), priority 0-1."""
    objs = [device_class("gpu", GPU), device_class("fpga", FPGA), _template("gpu-1", "gpu", 1)]
    objs += [_template("fpga-1", "fpga", 1), _template("fpga-2", "fpga", 2)]
    n = 0
    for r in range(draw(st.integers(2, 3))):
        objs.append(_rack_pool(r, draw(st.integers(0, 3))))
        for _ in range(draw(st.integers(1, 3))):
            name = f"n{n}"
            objs += [
                _node(name, r, draw(st.sampled_from((2, 4, 8)))),
                _slice(name, GPU, draw(st.integers(0, 2)), nodeName=name),
            ]
            n += 1
    shapes = draw(st.lists(st.sampled_from(("gpu-1", "fpga-1", "fpga-2")), min_size=3, max_size=9))
    objs += [_pod(f"p{i}", t, draw(st.integers(0, 1))) for i, t in enumerate(shapes)]
    return objs


@st.composite
def extended(draw: st.DrawFn) -> list[dict[str, Any]]:
    """2-4 nodes of 1-3 GPUs, the GPU class serving `example.com/gpu`; 3-8 pods asking 1-2 of
    it in their containers or a one-GPU claim, priority 0-1."""
    objs = [device_class("gpu", GPU, EXTENDED), _template("gpu-1", "gpu", 1)]
    for i in range(draw(st.integers(2, 4))):
        objs += [_node(f"n{i}", 0, 16), _slice(f"n{i}", GPU, draw(st.integers(1, 3)), nodeName=f"n{i}")]
    for i in range(draw(st.integers(3, 8))):
        asks = draw(st.integers(0, 2))
        objs.append(_pod(f"p{i}", None if asks else "gpu-1", draw(st.integers(0, 1)), extended=asks))
    return objs


def _both(objs: list[dict[str, Any]]) -> tuple[PlanOutcome, PlanOutcome]:
    cluster = Cluster.from_objects(objs)
    agg = plan(cluster, time_limit=5.0, models=AGGREGATED_FIRST)
    exact = plan(cluster, time_limit=5.0, models=PER_DEVICE_ONLY)
    return agg, exact


def _compare(agg: PlanOutcome, exact: PlanOutcome) -> None:
    if exact.verdict is not None and exact.verdict.status == "OPTIMAL":
        assert int(str(agg.verdict.bound)) >= exact.weight, (agg.stats, exact.stats)
        if agg.verdict.status == "OPTIMAL":
            assert agg.weight == exact.weight, (agg.stats, exact.stats)
    event(
        "both proven"
        if agg.verdict.status == getattr(exact.verdict, "status", None) == "OPTIMAL"
        else "not both"
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(racks())
def test_pools_per_rack_plan_as_the_per_device_model_does(objs: list[dict[str, Any]]) -> None:
    cluster = Cluster.from_objects(objs)
    agg = plan(cluster, time_limit=5.0, models=AGGREGATED_FIRST)
    racked = "beside the real ones" in str(agg.stats.get("pooled", ""))
    event(f"racked: {racked}")
    if racked:  # the per-device plan only where it is compared (a fifth of the cases are not racked)
        _compare(agg, plan(cluster, time_limit=5.0, models=PER_DEVICE_ONLY))
        for p in agg.pods:  # a pod using a rack's FPGAs runs on a node of that rack
            for c in p.claims if p.placed else ():
                for r in c.status.allocation.devices.results if c.status and c.status.allocation else ():
                    if r.driver == FPGA:
                        assert p.node is not None and r.pool == f"fpga-r{_rack_of(objs, p.node)}"


def _rack_of(objs: list[dict[str, Any]], node: str) -> str:
    (labels,) = [
        o["metadata"]["labels"] for o in objs if o["kind"] == "Node" and o["metadata"]["name"] == node
    ]
    return str(labels["rack"])[1:]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extended())
def test_dra_served_extended_resources_plan_as_the_per_device_model_does(objs: list[dict[str, Any]]) -> None:
    agg, exact = _both(objs)
    assert agg.stats["aggregated"] == "yes", agg.stats
    asking = {o["metadata"]["name"] for o in objs if o["kind"] == "Pod" and "resourceClaims" not in o["spec"]}
    assert agg.stats.get("extended_as_claims", 0) == len(asking)
    _compare(agg, exact)
    for p in agg.pods:
        if p.name.split("/")[-1] in asking:
            if p.placed:
                assert p.extended and len(p.claims) == 1, p
            else:
                assert not p.claims and not p.extended


def _two_racks(nodes: int, cpu: int) -> list[dict[str, Any]]:
    """Two racks of `nodes` nodes with `cpu` cpu and one GPU each, each rack a pool of two
    FPGAs; the one-GPU and one-FPGA templates."""
    objs = [
        device_class("gpu", GPU),
        device_class("fpga", FPGA),
        _template("gpu-1", "gpu", 1),
        _template("fpga-1", "fpga", 1),
    ]
    for r in range(2):
        objs.append(_rack_pool(r, 2))
        for j in range(nodes):
            name = f"n{nodes * r + j}"
            objs += [_node(name, r, cpu), _slice(name, GPU, 1, nodeName=name)]
    return objs


def test_a_rack_pool_is_one_pool_node_shared_by_its_nodes() -> None:
    """Two racks of two nodes, each node one GPU, each rack two FPGAs: four GPU pods and four
    FPGA pods all fit — two FPGA pods per rack, on any of its nodes — proven."""
    objs = _two_racks(nodes=2, cpu=8)
    objs += [_pod(f"g{i}", "gpu-1") for i in range(4)] + [_pod(f"f{i}", "fpga-1") for i in range(5)]
    agg, exact = _both(objs)
    assert str(agg.stats["pooled"]).startswith("yes: 2 network-attached pools as nodes beside the real ones")
    assert (agg.placed, agg.verdict.status, agg.verdict.bound) == (8, "OPTIMAL", 8)
    assert exact.placed == 8


def test_node_resources_the_model_relaxes_still_bound_the_plan() -> None:
    """One node per rack with room for one pod (cpu 2), one GPU and two FPGAs: the model
    places a GPU pod and an FPGA pod on each rack, but only one pod runs per node; the plan
    drops what does not fit and its bound stays a bound."""
    objs = _two_racks(nodes=1, cpu=2)
    objs += [_pod(f"g{i}", "gpu-1") for i in range(2)] + [_pod(f"f{i}", "fpga-1") for i in range(2)]
    agg, exact = _both(objs)
    assert "beside the real ones" in str(agg.stats["pooled"])
    assert agg.placed == exact.placed == 2
    assert int(str(agg.verdict.bound)) >= 2


def test_a_node_advertising_the_resource_keeps_the_per_device_model() -> None:
    objs = [device_class("gpu", GPU, EXTENDED), _template("gpu-1", "gpu", 1)]
    objs += [_node("n0", 0, 16, advertise=2), _slice("n0", GPU, 2, nodeName="n0")]
    objs += [_node("n1", 0, 16), _slice("n1", GPU, 2, nodeName="n1")]
    objs += [_pod("p0", None, extended=1), _pod("p1", "gpu-1"), _pod("p2", "gpu-1")]
    agg = plan(Cluster.from_objects(objs), time_limit=5.0, models=AGGREGATED_FIRST)
    assert "node n0 advertises example.com/gpu" in str(agg.stats["aggregated"])
    assert agg.placed == 3
