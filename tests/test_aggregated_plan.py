"""The aggregated plan model (solver.planners.aggregated: classes, patterns, master).

Rules checked: nodes that differ only in names are one class and a held device splits a
class; pods with identical claims and priority are one class, a different priority or
blocked-node set splits it; on generated clusters where both prove optimality the aggregated
plan places the same weight as the per-device model, never less than first fit, and every
placement passes the checker; the plan is deterministic.
"""

from __future__ import annotations

import copy
from typing import Any

from builders import allocated, claim, device, device_class, request, resource_slice, result
from example_counts import examples
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from strategies import GATES, INPUT_ERRORS, scenario

from dra_solver import Options
from dra_solver.api.cluster import Cluster
from dra_solver.cel import EvalCache
from dra_solver.cel.checks import validate_all
from dra_solver.check import check
from dra_solver.gates import FeatureGates
from dra_solver.planners.aggregated.classes import LocalViews, node_classes, pod_classes
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.policy import AGGREGATED_FIRST, TABLES, Cpsat
from dra_solver.planning.job import Unit
from dra_solver.planning.outcome import PlanOutcome
from dra_solver.planning.resolve import make_job, resolve_units

GPU = "gpu.example.com"


def _gpu_nodes(names: list[str], gpus: int = 4) -> list[dict[str, Any]]:
    return [
        resource_slice(f"{n}-gpu", [device(f"gpu-{i}", attrs={"index": i}) for i in range(gpus)], node=n)
        for n in names
    ]


def _classes(objs: list[dict[str, Any]], nodes: list[str]) -> list[tuple[str, ...]]:
    cluster = Cluster.from_objects(objs)
    units = resolve_units(cluster, None, None)
    pods = pod_classes(units, range(len(units)))
    found = node_classes(cluster, units, pods, nodes, FeatureGates(), EvalCache())
    return [c.nodes for c in found.classes]


def test_nodes_that_differ_only_in_their_names_are_one_class() -> None:
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b", "c"]), claim("j", [request("gpu", count=2)])]
    assert _classes(objs, ["c", "a", "b"]) == [("a", "b", "c")]


def test_a_held_device_splits_a_node_class() -> None:
    held = allocated("old", [result("gpu-0", pool="b-gpu")])
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b", "c"]), held, claim("j", [request("gpu", count=2)])]
    assert _classes(objs, ["a", "b", "c"]) == [("a", "c"), ("b",)]


def test_which_identical_device_is_held_does_not_split_a_node_class() -> None:
    held_a = allocated("old-a", [result("gpu-1", pool="a-gpu")])
    held_b = allocated("old-b", [result("gpu-3", pool="b-gpu")])
    two = claim("j", [request("gpu", count=2)])
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b"]), held_a, held_b, two]
    assert _classes(objs, ["a", "b"]) == [("a", "b")]


def test_a_blocked_all_request_does_not_split_nodes_by_device_name() -> None:
    held_a = allocated("old-a", [result("gpu-1", pool="a-gpu")])
    held_b = allocated("old-b", [result("gpu-2", pool="b-gpu")])
    every = claim("j", [request("gpu", allocationMode="All")])
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b"]), held_a, held_b, every]
    assert _classes(objs, ["a", "b"]) == [("a", "b")]


def test_devices_no_claim_can_use_do_not_split_a_node_class() -> None:
    nic = resource_slice("b-nic", [device("eth0")], driver="nic.example.com", node="b")
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b"]), nic, claim("j", [request("gpu")])]
    assert _classes(objs, ["a", "b"]) == [("a", "b")]


def test_a_node_view_holds_its_pools_shared_pools_and_the_claims_using_them() -> None:
    net = resource_slice("net", [device("net-0")], node=None, allNodes=True)
    held_a = allocated("old-a", [result("gpu-0", pool="a-gpu")])
    held_b = allocated("old-b", [result("gpu-0", pool="b-gpu")])
    held_net = allocated("old-net", [result("net-0", pool="net")])
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b"]), net, held_a, held_b, held_net]
    cluster = Cluster.from_objects(objs)
    view = LocalViews(cluster).of(cluster, "a")
    assert [s.metadata.name for s in view.slices] == ["a-gpu", "net"]
    assert sorted(name for _, name in view.claims) == ["old-a", "old-net"]


def test_pods_with_identical_claims_and_priority_are_one_class() -> None:
    claims = [claim(f"j{i}", [request("gpu", count=1 + i % 2)]) for i in range(4)]
    cluster = Cluster.from_objects([device_class("gpu"), *_gpu_nodes(["a"]), *claims])
    units = resolve_units(cluster, None, None)
    assert [k.units for k in pod_classes(units, range(4))] == [(0, 2), (1, 3)]


def test_priority_and_blocked_nodes_split_a_pod_class() -> None:
    one = claim("j", [request("gpu")])
    cluster = Cluster.from_objects([device_class("gpu"), *_gpu_nodes(["a"]), one])
    c = cluster.unallocated_claims()[0]
    units = [
        Unit("p0", (c,)),
        Unit("p1", (c,), priority=5),
        Unit("p2", (c,), blocked={"a": "taint"}),
        Unit("p3", (c,)),
    ]
    assert [k.units for k in pod_classes(units, range(4))] == [(0, 3), (1,), (2,)]


def test_shared_devices_keep_the_per_device_model() -> None:
    net = resource_slice("net", [device("net-0")], node=None, allNodes=True)
    jobs = [claim(f"j{i}", [request("gpu")]) for i in range(3)]
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b"]), net, *jobs]
    out, _ = _run(Cluster.from_objects(objs), None, ["a", "b"], "always")
    assert str(out.stats["aggregated"]).startswith("no: nodes are not independent")


def test_a_single_node_keeps_the_per_device_model_and_reports_its_bound() -> None:
    jobs = [claim(f"j{i}", [request("gpu", count=3)]) for i in range(3)]
    objs = [device_class("gpu"), *_gpu_nodes(["a"]), *jobs]
    out, _ = _run(Cluster.from_objects(objs), None, ["a"], "always")
    assert str(out.stats["aggregated"]).startswith("no: fewer than two nodes")
    assert (out.placed, out.verdict.status, out.verdict.bound, out.verdict.gap) == (1, "OPTIMAL", 1, 0)


def _run(
    cluster: Cluster,
    pods: list[list[str]] | None,
    nodes: list[str],
    mode: str,
    prios: list[int] | None = None,
) -> tuple[PlanOutcome, PlanOutcome]:
    """(the CP-SAT plan with aggregation `mode`, the first-fit plan it started from)"""
    opts = Options(feature_gates=FeatureGates.of(GATES), time_limit=5.0, models=TABLES[mode])
    units = resolve_units(cluster, pods, prios)
    job = make_job(cluster, units, nodes, opts)
    first = FirstFit(max_steps=Cpsat.first_fit_steps).plan(job)
    return Cpsat().improve(job, first), first


def test_sized_claims_reach_the_count_optimum() -> None:
    objs = [device_class("gpu"), *_gpu_nodes([f"n{i}" for i in range(6)], gpus=8)]
    sizes = [8, 1, 4, 2, 2, 4, 1, 8, 4, 4, 2, 1, 8, 8, 2, 4, 1, 1, 2, 4, 8, 4]
    objs += [claim(f"j{i:02d}", [request("gpu", count=s)]) for i, s in enumerate(sizes)]
    out, first = _run(Cluster.from_objects(objs), None, [f"n{i}" for i in range(6)], "auto")
    best, used = 0, 0
    for s in sorted(sizes):  # sizes divide 8: smallest first is the count optimum
        if used + s <= 48:
            best, used = best + 1, used + s
    assert out.stats["aggregated"] == "yes"
    assert (out.placed, out.verdict.status, out.verdict.bound) == (best, "OPTIMAL", best)


@st.composite
def replicated(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[str]], list[str], list[int]]:
    """A scenario's cluster with node n0 copied (same devices, no held ones) and every claim
    copied 1-3 times, so classes have multiplicities."""
    objs, names = draw(scenario(max_claims=3))
    extra = []
    for o in objs:
        if o["kind"] == "ResourceSlice" and o["spec"].get("nodeName") == "n0":
            twin = copy.deepcopy(o)
            twin["metadata"]["name"] = "m0-" + o["metadata"]["name"]
            twin["spec"]["nodeName"] = "m0"
            twin["spec"]["pool"]["name"] = "m0"
            extra.append(twin)
    pods: list[list[str]] = []
    for o in [o for o in objs if o["kind"] == "ResourceClaim" and o["metadata"]["name"] in names]:
        for j in range(draw(st.integers(1, 3))):
            twin = copy.deepcopy(o)
            twin["metadata"]["name"] = f"{o['metadata']['name']}x{j}"
            extra.append(twin)
            pods.append([twin["metadata"]["name"]])
    objs = [o for o in objs if not (o["kind"] == "ResourceClaim" and o["metadata"]["name"] in names)] + extra
    nodes = sorted({o["spec"]["nodeName"] for o in objs if o["kind"] == "ResourceSlice"})
    prios = [draw(st.integers(0, 1)) for _ in pods]
    return objs, pods, nodes, prios


def _verify_nodes(cluster: Cluster, out: PlanOutcome, nodes: list[str], gates: FeatureGates) -> None:
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    for n in nodes:
        mine = [c for p in out.pods if p.node == n for c in p.claims]
        assert all(c.status is not None and c.status.allocation is not None for c in mine)
        assert check(current, mine, node=n, gates=gates) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replicated())
def test_aggregated_plan_places_the_per_device_optimum_and_passes_the_checker(case) -> None:
    objs, pods, nodes, prios = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_all(cluster))
    gates = FeatureGates.of(GATES)
    try:
        agg, first = _run(cluster, pods, nodes, "always", prios)
    except INPUT_ERRORS:  # the generated input's fault; CheckFailed (a wrong answer) propagates
        assume(False)
        return
    event(f"aggregated: {str(agg.stats['aggregated'])[:30]}")
    assume(agg.stats["aggregated"] == "yes")
    exact, _ = _run(cluster, pods, nodes, "never", prios)
    assert agg.weight >= first.weight
    if agg.stats.get("fallback"):
        _verify_sequential(cluster, agg, gates)
    else:
        _verify_nodes(cluster, agg, nodes, gates)
    both = agg.verdict.status == "OPTIMAL" and exact.stats.get("cpsat_status") == "OPTIMAL"
    event("both proven" if both else "not both proven")
    if both:
        assert agg.weight == exact.weight, (agg.stats, exact.stats)
        assert agg.verdict.bound == agg.weight


def _verify_sequential(cluster: Cluster, out: PlanOutcome, gates: FeatureGates) -> None:
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    for i in sorted(range(len(out.pods)), key=lambda i: -out.pods[i].priority):
        p = out.pods[i]
        if p.node is not None:
            assert check(current, p.claims, node=p.node, gates=gates) == []
            for c in p.claims:
                current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


def test_blocked_nodes_split_node_classes_and_are_never_used() -> None:
    objs = [device_class("gpu"), *_gpu_nodes(["a", "b", "c"], gpus=2)]
    objs += [claim(f"j{i}", [request("gpu")]) for i in range(6)]
    cluster = Cluster.from_objects(objs)
    units = [
        Unit(f"p{i}", (c,), blocked={"b": "node selector"} if i < 4 else {})
        for i, c in enumerate(cluster.unallocated_claims())
    ]
    job = make_job(cluster, units, ["a", "b", "c"], Options(time_limit=5.0, models=AGGREGATED_FIRST))
    first = FirstFit().plan(job)
    out = Cpsat().improve(job, first)
    assert out.stats["aggregated"] == "yes" and out.stats["node_classes"] == 2
    assert all(p.node != "b" for p in out.pods[:4])
    assert (out.placed, out.verdict.status) == (6, "OPTIMAL")
    _verify_nodes(cluster, out, ["a", "b", "c"], FeatureGates())


def test_the_aggregated_plan_is_deterministic() -> None:
    objs = [device_class("gpu"), *_gpu_nodes([f"n{i}" for i in range(4)], gpus=4)]
    objs += [claim(f"j{i:02d}", [request("gpu", count=1 + i % 3)]) for i in range(12)]
    cluster = Cluster.from_objects(objs)
    runs = [_run(cluster, None, [f"n{i}" for i in range(4)], "always")[0] for _ in range(2)]
    assert runs[0].stats["aggregated"] == "yes"
    plans = [[(p.name, p.node, [c.model_dump() for c in p.claims]) for p in out.pods] for out in runs]
    assert plans[0] == plans[1]
