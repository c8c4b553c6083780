"""Issue #11's what-if benchmark: how many template nodes to add so that 1,000 pending pods fit.

Workload `whatif_pods`: 50 existing nodes x 8 GPUs, 1,000 pending Pods each asking 1, 2 or 4
GPUs through a ResourceClaimTemplate, and two node templates, `gpu-8x` (8 GPUs, cost 10) and
`gpu-4x` (4 GPUs, cost 6). Far more is asked for than exists, so the plan must add nodes.
`dra_solver.plan(..., node_templates=...)` with CP-SAT (the template master model), one round:
what matters is the time against the issue's 30 s, whether every pod is placed, and the cost
against the known minimum.

Why the minimum is known: every size divides both node sizes, so any set of nodes whose GPUs
cover the demand holds every pod (first-fit-decreasing fills each node), and the cheapest
cover is a small integer problem over the two counts (`min_cost`), computed here
independently of the solver. Run: `pytest benchmarks/test_bench_whatif.py`.
"""

from __future__ import annotations

import os
import random
from typing import Any

from benchmarks import verdict_info
from benchmarks.workloads import GPU, _class, _gpus, _node, _slice
from dra_solver import NodeTemplate, plan
from dra_solver.api.cluster import Cluster

EXISTING, GPUS, PODS = 50, 8, 1000
SIZES = (1, 2, 4)
TEMPLATES = (("gpu-8x", 8, 10), ("gpu-4x", 4, 6))
TIME_LIMIT = 30.0


def whatif_pods(seed: int = 11) -> list[dict[str, Any]]:
    """The existing cluster and the pending pods (see the module docstring)."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(EXISTING):
        node = f"node-{n:02d}"
        objs += [_node(node), _slice(f"{node}-gpu", GPU, node, [{"name": f"gpu-{i}"} for i in range(GPUS)])]
    for s in SIZES:
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpus-{s}", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": _gpus(s)}}},
            }
        )
    for p in range(PODS):
        s = rng.choice(SIZES)
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:04d}", "namespace": "default", "uid": f"uid-{p:04d}"},
                "spec": {
                    "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": f"gpus-{s}"}],
                },
            }
        )
    return objs


def template(name: str, gpus: int, cost: int) -> NodeTemplate:
    """A template: one Node (cost annotation, 110 pod slots) and its GPU slice."""
    node = _node(name)
    node["metadata"]["annotations"] = {"dra-solver.io/cost": str(cost)}
    gpu_slice = _slice(f"{name}-gpu", GPU, name, [{"name": f"gpu-{i}"} for i in range(gpus)])
    return NodeTemplate.from_cluster(Cluster.from_objects([node, gpu_slice]))


def asked(objs: list[dict[str, Any]]) -> int:
    """GPUs the pending pods ask for."""
    return sum(
        int(o["spec"]["resourceClaims"][0]["resourceClaimTemplateName"].split("-")[1])
        for o in objs
        if o["kind"] == "Pod"
    )


def min_cost(deficit: int) -> int:
    """The cheapest mix of the templates whose GPUs cover `deficit` (exact: every count of the
    bigger template, the rest with the smaller)."""
    (_, big, big_cost), (_, small, small_cost) = TEMPLATES
    return min(
        a * big_cost + -(-max(0, deficit - a * big) // small) * small_cost
        for a in range(-(-deficit // big) + 1)
    )


def test_whatif(benchmark) -> None:
    objs = whatif_pods()
    cluster = Cluster.from_objects(objs)
    templates = [template(*t) for t in TEMPLATES]
    benchmark.group = "whatif"
    out = benchmark.pedantic(
        lambda: plan(cluster, node_templates=templates, time_limit=TIME_LIMIT),
        rounds=1,
        iterations=1,
    )
    deficit = asked(objs) - EXISTING * GPUS
    keys = (
        "status",
        "objective",
        "bound",
        "gap",
        "added",
        "added_cost",
        "cost_bound",
        "whatif_model",
        "whatif_patterns",
        "whatif_integer",
        "aggregated",
        "reference_placed",
    )
    info: dict[str, Any] = {k: {**out.stats, **verdict_info(out)}.get(k) for k in keys}
    info.update(
        {
            "pods": len(out.pods),
            "placed": out.placed,
            "gpus_asked": asked(objs),
            "known_min_cost": min_cost(deficit),
            "load": round(os.getloadavg()[0], 1),
        }
    )
    benchmark.extra_info.update(info)
