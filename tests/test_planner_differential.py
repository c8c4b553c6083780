"""Differential test of the planner: pods over 2-3 nodes, CP-SAT plan vs reference first fit.

The CP-SAT plan must place at least the reference plan's priority-weighted number of pods,
and every placed claim must pass the independent checker node by node (claims placed on
earlier nodes counted as in use), so devices shared between nodes are never double-booked.
"""

from __future__ import annotations

from typing import Any

import pytest
from example_counts import examples
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from strategies import DRIVER, GATES, INPUT_ERRORS, scenario

from dra_solver import Options, PlanOutcome, plan
from dra_solver.api.cluster import Cluster
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.check import check
from dra_solver.gates import FeatureGates


@st.composite
def planning(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[str]], list[str], list[int]]:
    objs, names = draw(scenario(max_claims=5))
    if draw(st.booleans()):  # network-attached devices every node sees
        devs = []
        for i in range(draw(st.integers(1, 2))):
            attrs = {"numa": {"int": 0}, "model": {"string": "a"}}
            cap = {"memory": {"value": "80Gi"}}  # every selector can read it: no CEL error
            dev: dict[str, Any] = {"name": f"net-{i}", "attributes": attrs, "capacity": cap}
            if draw(st.booleans()):
                dev["allowMultipleAllocations"] = True
            devs.append(dev)
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "net"},
                "spec": {
                    "driver": DRIVER,
                    "allNodes": True,
                    "pool": {"name": "net", "generation": 1, "resourceSliceCount": 1},
                    "devices": devs,
                },
            }
        )
    slices = [o["spec"] for o in objs if o["kind"] == "ResourceSlice"]
    nodes = sorted({s["nodeName"] for s in slices if "nodeName" in s})
    if len(nodes) < 2:
        nodes.append("n9")  # a node without local devices
    owner = [draw(st.integers(0, len(names) - 1)) for _ in names]
    pods = [[n for n, o in zip(names, owner, strict=True) if o == p] for p in range(len(names))]
    pods = [p for p in pods if p]
    prios = [draw(st.integers(0, 2)) for _ in pods]
    return objs, pods, nodes, prios


def _verify(cluster: Cluster, out: PlanOutcome, nodes: list[str], gates: FeatureGates) -> None:
    """A CP-SAT plan is checked node by node (all claims of a node at once); the reference
    plan (or the CP-SAT fallback to it) pod by pod in its order — an admin-access placement
    stops counting against capacity once it is allocated, so the two readings differ."""
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    if out.allocator == "reference" or out.stats.get("fallback"):
        order = sorted(range(len(out.pods)), key=lambda i: -out.pods[i].priority)
        steps = [(out.pods[i].node, out.pods[i].claims) for i in order if out.pods[i].node is not None]
    else:
        steps = [(n, [c for p in out.pods if p.node == n for c in p.claims]) for n in nodes]
    for n, mine in steps:
        assert all(c.status is not None and c.status.allocation is not None for c in mine)
        assert check(current, mine, node=n, gates=gates) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c
    for p in out.pods:
        if p.node is None:
            assert all(c.status is None or c.status.allocation is None for c in p.claims)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning())
def test_cpsat_plan_is_never_worse_than_first_fit(case) -> None:
    objs, pods, nodes, prios = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    gates = FeatureGates.of(GATES)
    cpsat = Options(allocator="cpsat", feature_gates=gates, time_limit=2.0)
    try:
        ref = plan(cluster, pods, nodes, allocator="reference", feature_gates=gates, priorities=prios)
    except INPUT_ERRORS as exc:  # upstream's fatal errors (CEL): the CP-SAT planner raises them too
        with pytest.raises(type(exc)):
            plan(cluster, pods, nodes, cpsat, priorities=prios)
        assume(False)
        return
    best = plan(cluster, pods, nodes, cpsat, priorities=prios)
    assert best.weight >= ref.weight, (best.stats, ref.stats)
    better = best.weight > ref.weight
    event("cpsat better" if better else "fallback" if best.stats.get("fallback") else "equal")
    for out in (ref, best):
        _verify(cluster, out, nodes, gates)
