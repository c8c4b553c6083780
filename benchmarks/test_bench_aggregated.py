"""Issue 10's CP-SAT side: the aggregated plan model (solver.planners.aggregated.master) on (b), (c) and (f).

What is timed: `Cpsat().improve` — classes, pattern generation, master model, expansion to
devices, the checker — wall clock, started from an empty first-fit plan (first fit itself is
timed by the planner benchmarks; at these sizes today's first fit takes minutes). Each run
records placed pods, the model's status, objective, bound and gap, and the known optimum.
Run: `pytest benchmarks/test_bench_aggregated.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks import verdict_info
from benchmarks.workloads import numa_gpu_nic, shared_gpus, sized_claims
from dra_solver import Options
from dra_solver.api.cluster import Cluster
from dra_solver.planners.policy import Cpsat
from dra_solver.planning.outcome import PlanOutcome, PodPlan
from dra_solver.planning.resolve import make_job, resolve_nodes, resolve_units

GROUP = "aggregated-plan"


def count_optimum(objs: list[dict[str, Any]], gpus: int) -> int:
    """Sizes that divide the node size: the smallest claims first is the count optimum."""
    sizes = sorted(
        o["spec"]["devices"]["requests"][0]["exactly"]["count"]
        for o in objs
        if o["kind"] == "ResourceClaim" and "status" not in o
    )
    used = placed = 0
    for s in sizes:
        if used + s > gpus:
            break
        used, placed = used + s, placed + 1
    return placed


def free_gpus(objs: list[dict[str, Any]], nodes: int) -> int:
    held = sum(
        o["spec"]["devices"]["requests"][0]["exactly"]["count"]
        for o in objs
        if o["kind"] == "ResourceClaim" and "status" in o
    )
    return nodes * 8 - held


CASES: dict[str, tuple[Callable[[], list[dict[str, Any]]], float]] = {
    "a-500x10-5000": (lambda: sized_claims(500, 10, 5000, sizes=(1,)), 10.0),
    "b-250x8-1500": (lambda: sized_claims(250, 8, 1500), 20.0),
    "c-20x4x80Gi-300": (lambda: shared_gpus(20, 4, 300), 5.0),
    "c-200x4x80Gi-3000": (lambda: shared_gpus(200, 4, 3000), 30.0),
    "d-1000x2numa-4000": (lambda: numa_gpu_nic(1000, 4000), 120.0),
    "f-500x8-held-2000": (lambda: sized_claims(500, 8, 2000, held=True), 30.0),
    "f-500x8-scattered-2000": (lambda: sized_claims(500, 8, 2000, held=True, scattered=True), 30.0),
}


def improve(cluster: Cluster, limit: float) -> PlanOutcome:
    units = resolve_units(cluster, None, None)
    job = make_job(cluster, units, resolve_nodes(cluster, None), Options(time_limit=limit))
    empty = PlanOutcome(
        [PodPlan(u.name, None, list(u.claims), "not run", u.priority) for u in units], "reference", {}
    )
    return Cpsat().improve(job, empty)


@pytest.mark.parametrize("case", sorted(CASES))
def test_aggregated_plan(benchmark, case: str) -> None:
    make, limit = CASES[case]
    objs = make()
    cluster = Cluster.from_objects(objs)
    benchmark.group = GROUP
    out = benchmark.pedantic(lambda: improve(cluster, limit), rounds=1, iterations=1)
    keys = ("status", "objective", "bound", "gap", "pod_classes", "node_classes", "columns")
    info: dict[str, Any] = {k: {**out.stats, **verdict_info(out)}.get(k) for k in keys}
    info["placed"] = out.placed
    info["load"] = round(os.getloadavg()[0], 1)
    if case.startswith("b"):
        info["optimum"] = count_optimum(objs, 250 * 8)
    benchmark.extra_info.update(info)
    assert out.stats["aggregated"] == "yes"
