"""CPU binds, not GPUs (issue #18): reference first fit vs the CP-SAT planner, one run.

Workload `cpu_bound` (benchmarks/node_resources.py): nodes of 8 GPUs and 32 CPUs, pods of one
GPU and 2/4/6/8 CPUs. Reported per allocator: placed, CPUs used, status, and the CP-SAT bound
when the planner reports one. Run: `pytest benchmarks/test_bench_node_resources.py`.
"""

from __future__ import annotations

import pytest

from benchmarks.node_resources import cpu_bound
from dra_solver import plan
from dra_solver.api.cluster import Cluster
from dra_solver.problem.resources import pod_requests

SIZES = {"50-nodes-400-pods": (50, 400), "200-nodes-1600-pods": (200, 1600)}


@pytest.fixture(scope="module", params=sorted(SIZES))
def case(request: pytest.FixtureRequest) -> tuple[str, Cluster]:
    nodes, pods = SIZES[request.param]
    return request.param, Cluster.from_objects(cpu_bound(nodes, pods))


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_cpu_bound_plan(benchmark, case: tuple[str, Cluster], allocator: str) -> None:
    name, cluster = case
    benchmark.group = f"cpu-bound-{name}"
    out = benchmark.pedantic(lambda: plan(cluster, allocator=allocator), rounds=1, iterations=1)
    first = plan(cluster, allocator="reference") if allocator == "cpsat" else out
    assert out.placed >= first.placed
    cpus = sum(pod_requests(cluster.pod(p.name))["cpu"] for p in out.pods if p.placed) // 1000
    benchmark.extra_info.update(
        {
            "pods": len(out.pods),
            "placed": out.placed,
            "reference_placed": first.placed,
            "cpus_used": cpus,
            "cpus": 32 * len(cluster.nodes),
            "status": out.stats.get("cpsat_status", "first fit"),
            "fallback": out.stats.get("fallback"),
            "bound": None if out.verdict is None else out.verdict.bound,
        }
    )
