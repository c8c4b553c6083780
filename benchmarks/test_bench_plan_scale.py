"""Plans at cluster scale (issue 10): the reference planner (incremental first fit) end to end.

Workloads (`benchmarks/workloads.py`; (b) and (f) are the inputs of the aggregated CP-SAT
benchmark, `test_bench_aggregated.py`): (a) upstream's `5000pods_500nodes` shape — 500 nodes x 10
devices, 5,000 one-device claims, once as plain claims (each its own pod) and once as 5,000
Pods from one ResourceClaimTemplate; (b) 250 nodes x 8 GPUs, 1,500 claims of 1/2/4/8 GPUs;
(f) 500 nodes x 8 GPUs each partly held by a running claim (0-8 GPUs), 2,000 pending claims of
1/2/4/8 GPUs; (g) (a)'s shape at 10,000 nodes and 50,000 claims.

Timed: `dra_solver.plan(cluster, allocator="reference")` on a loaded Cluster (resolving pods and
nodes, first fit, results, the checker), one round each — wall clock on whatever machine runs
them. Run: `pytest benchmarks/test_bench_plan_scale.py`.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.workloads import sized_claims, upstream_5000
from dra_solver import plan
from dra_solver.api.cluster import Cluster

GROUP = "plan-at-scale"

WORKLOADS: dict[str, tuple[str, Callable[[], list[dict[str, Any]]]]] = {
    "a-claims": ("(a) 500 nodes x 10 devices, 5,000 one-device claims", upstream_5000),
    "a-template": (
        "(a) 500 nodes x 10 devices, 5,000 Pods from one ResourceClaimTemplate",
        lambda: upstream_5000(template=True),
    ),
    "b": ("(b) 250 nodes x 8 GPUs, 1,500 claims of 1/2/4/8 GPUs", lambda: sized_claims(250, 8, 1500)),
    "f": (
        "(f) 500 nodes x 8 GPUs partly held (0-8), 2,000 claims of 1/2/4/8 GPUs",
        lambda: sized_claims(500, 8, 2000, held=True),
    ),
    "g": (
        "(g) 10,000 nodes x 10 devices, 50,000 one-device claims",
        lambda: upstream_5000(10_000, 10, 50_000),
    ),
}


def count_optimum(sizes: list[int], capacity: int) -> int:
    """Most claims that fit in workload (b): sizes 1/2/4/8 into nodes of 8 GPUs. With sizes that
    divide each other and the node, first fit decreasing leaves no gap while a node has room,
    so any set of claims whose total is at most `capacity` fits; the optimum keeps the
    smallest claims."""
    placed = total = 0
    for s in sorted(sizes):
        if total + s > capacity:
            break
        total += s
        placed += 1
    return placed


@pytest.mark.parametrize("key", list(WORKLOADS))
def test_reference_plan(benchmark, key: str) -> None:
    benchmark.group = GROUP
    title, make = WORKLOADS[key]
    started = time.perf_counter()
    cluster = Cluster.from_objects(make())
    loaded = time.perf_counter() - started
    out = benchmark.pedantic(lambda: plan(cluster, allocator="reference"), rounds=1, iterations=1)
    info: dict[str, Any] = {
        "key": key,
        "workload": title,
        "pods": len(out.pods),
        "nodes": out.stats["nodes"],
        "placed": out.placed,
        "first_fit_seconds": out.stats.get("first_fit_seconds"),
        "load_seconds": round(loaded, 3),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }
    if key == "b":
        sizes = [c.spec.devices.requests[0].exactly.count for c in cluster.claims.values()]
        info["count_optimum"] = count_optimum(sizes, 8 * int(out.stats["nodes"]))
    benchmark.extra_info.update(info)
    assert out.placed > 0
