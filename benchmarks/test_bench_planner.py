"""Batch planning: reference (scheduler-like first fit over nodes) vs the CP-SAT planner.

Workload `pods_over_nodes`: 60 single-claim pods asking for 1-6 GPUs over 20 nodes with 8
GPUs each (more GPUs asked for than exist). Same input for both, measured in one run.
Run: `pytest benchmarks/test_bench_planner.py`.
"""

from __future__ import annotations

import pytest

from benchmarks.workloads import pods_over_nodes
from dra_solver import plan
from dra_solver.api.cluster import Cluster

GROUP = "planner-60-pods-20-nodes"


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return Cluster.from_objects(pods_over_nodes())


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_plan(benchmark, cluster: Cluster, allocator: str) -> None:
    benchmark.group = GROUP
    out = benchmark.pedantic(lambda: plan(cluster, allocator=allocator), rounds=3, iterations=1)
    asked = sum(c.spec.devices.requests[0].exactly.count for c in cluster.claims.values())
    benchmark.extra_info.update(
        {
            "pods": len(out.pods),
            "placed": out.placed,
            "gpus_asked": asked,
            "gpus": 160,
            "gpus_placed": sum(
                len(c.status.allocation.devices.results) for p in out.pods if p.node for c in p.claims
            ),
            "status": "first fit" if out.verdict is None else out.verdict.status.value,
        }
    )
