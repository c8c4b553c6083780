"""`Planner.update` against a fresh plan (issue #30 §2, issue #40 §1): 2,000 nodes / 10,000 pods,
churn levels, on three clusters.

Each cluster of `churn.CLUSTERS` — `churn` (this benchmark's own, `churn.heterogeneous`),
`mixed` and `skewed` (the scale curve's generators, `workloads.mixed_cluster` and
`workloads.skewed_cluster`: other proportions, partitionable GPUs with counters, pods from
ResourceClaimTemplates) — is planned once (`Planner.plan`, CP-SAT, the aggregated model), then
updated three times in sequence: 1 % churn (100 pods removed, 100 added: the issue's goal),
then 0.1 %, then 10 %. After each update, a fresh plan of the same changed cluster
(`dra_solver.plan`, same options) runs in the same process, so the ratios are measured on one
machine state: update time vs fresh time, moved pods, weight ratio.
`DRA_BENCH_PLANNER=NODESxPODS` runs another size (e.g. `200x1000` for a quick look);
`DRA_BENCH_PLANNER_SHAPES=mixed,skewed` runs some clusters only (default: all three),
`DRA_BENCH_PLANNER_LEVELS=0.01` some churn levels;
`DRA_BENCH_PLANNER_ALLOCATOR=reference` plans with first fit instead of CP-SAT, and
`DRA_BENCH_PLANNER_FRESH=0` leaves the fresh plans out (the update's own cost only).

Each row records wall time and CPU time (`time.process_time`: this process only) and the
1-minute load average when the update started: on a shared machine wall time is CPU time
plus waiting for a core.

Run: `pytest benchmarks/test_bench_planner_update.py` (about 10-20 minutes per cluster at full
size on 2 idle cores); `python -m benchmarks.report_planner_update` writes docs/benchmarks.md.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any

import pytest

from benchmarks.churn import CLUSTERS, churn, shaped_churn
from dra_solver import Cluster, Planner, plan

SIZE = os.environ.get("DRA_BENCH_PLANNER", "2000x10000")
NODES, PODS = (int(x) for x in SIZE.split("x"))
SHAPES = tuple(os.environ.get("DRA_BENCH_PLANNER_SHAPES", ",".join(CLUSTERS)).split(","))
ALLOCATOR = os.environ.get("DRA_BENCH_PLANNER_ALLOCATOR", "cpsat")
"""The allocator of the first plan and of the fresh plans; `reference` (first fit) gives the
update's cost at a size where CP-SAT plans take longer than a run may."""
FRESH = os.environ.get("DRA_BENCH_PLANNER_FRESH", "1") != "0"
"""`0`: no fresh plan after each update (no speedup or weight ratio; the update alone)."""
OPTIONS: dict[str, Any] = {"seed": 1, "time_limit": 30.0, "allocator": ALLOCATOR}
"""CP-SAT work of 30 deterministic seconds (no wall clock stops it: the same plan at any load)."""
LEVELS = [float(x) for x in os.environ.get("DRA_BENCH_PLANNER_LEVELS", "0.01,0.001,0.1").split(",")]
"""In the order they run: the goal's 1 % first, on the freshly planned cluster
(`DRA_BENCH_PLANNER_LEVELS=0.01`: the goal's level only, where fresh plans take minutes)."""


@pytest.fixture(scope="module", params=SHAPES)
def state(request: pytest.FixtureRequest) -> dict[str, Any]:
    shape = str(request.param)
    objects = CLUSTERS[shape](NODES, PODS)
    started = time.perf_counter()
    cluster = Cluster.from_objects(objects)
    return {
        "shape": shape,
        "objects": objects,
        "cluster": cluster,
        "load_seconds": time.perf_counter() - started,
    }


def _rss_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _churn(state: dict[str, Any], level: float) -> tuple[list[tuple[str, str, str]], list[dict[str, Any]]]:
    """The update of churn `level` on the state's cluster (seeded by the level)."""
    seed, start = int(level * 10_000) + 7, int(level * 100_000)
    if state["shape"] == "churn":
        return churn(PODS, level, seed=seed, start=start)
    return shaped_churn(state["objects"], level, seed=seed, start=start)


def test_plan(benchmark: Any, state: dict[str, Any]) -> None:
    benchmark.group = f"planner-update-{state['shape']}-{SIZE}"
    planner = Planner(state["cluster"], **OPTIONS)
    cpu = time.process_time()
    out = benchmark.pedantic(planner.plan, rounds=1, iterations=1)
    state["planner"] = planner
    benchmark.extra_info.update(
        {
            "size": SIZE,
            "shape": state["shape"],
            "step": "plan",
            "placed": out.placed,
            "pods": len(out.pods),
            "weight": out.weight,
            "status": out.verdict.status.value,
            "bound": out.verdict.bound,
            "warm_seconds": out.stats.get("warm_seconds"),
            "cpu_seconds": round(time.process_time() - cpu, 2),
            "load_seconds": round(state["load_seconds"], 2),
            "peak_rss_mib": _rss_mib(),
        }
    )


@pytest.mark.parametrize("level", LEVELS)
def test_update(benchmark: Any, state: dict[str, Any], level: float) -> None:
    benchmark.group = f"planner-update-{state['shape']}-{SIZE}"
    planner: Planner = state["planner"]
    previous = planner.outcome
    assert previous is not None
    remove, add = _churn(state, level)
    remove = [
        r for r in remove if (r[1], r[2]) in planner.cluster.pods or (r[1], r[2]) in planner.cluster.claims
    ]
    load = os.getloadavg()[0]
    cpu = time.process_time()
    out = benchmark.pedantic(lambda: planner.update(add=add, remove=remove), rounds=1, iterations=1)
    update_cpu = time.process_time() - cpu
    update_seconds = benchmark.stats.stats.median
    placed_before = sum(p.placed for p in previous.pods)
    benchmark.extra_info.update(
        {
            "size": SIZE,
            "shape": state["shape"],
            "allocator": ALLOCATOR,
            "step": f"update {level:.1%}",
            "removed": sum(1 for r in remove if r[0] == "Pod"),
            "added": sum(1 for o in add if o["kind"] == "Pod"),
            "placed": out.placed,
            "pods": len(out.pods),
            "weight": out.weight,
            "status": out.verdict.status.value,
            "bound": out.verdict.bound,
            "moved": out.stats["moved"],
            "moved_share": out.stats["moved"] / max(1, placed_before),
            "path": out.stats.get("update"),
            "update_cpu_seconds": round(update_cpu, 3),
            "load_1min": round(load, 2),
            "retried": out.stats.get("retried"),
            "local_nodes": out.stats.get("local_nodes"),
            "local_gain": out.stats.get("local_gain"),
            "local_status": out.stats.get("local_status"),
            "local_seconds": out.stats.get("local_seconds"),
            "peak_rss_mib": _rss_mib(),
        }
    )
    if not FRESH:
        return
    started, cpu = time.perf_counter(), time.process_time()
    fresh = plan(planner.cluster, **OPTIONS)
    fresh_seconds = time.perf_counter() - started
    fresh_cpu = time.process_time() - cpu
    benchmark.extra_info.update(
        {
            "fresh_seconds": round(fresh_seconds, 2),
            "fresh_cpu_seconds": round(fresh_cpu, 2),
            "fresh_weight": fresh.weight,
            "fresh_status": None if fresh.verdict is None else fresh.verdict.status.value,
            "fresh_bound": None if fresh.verdict is None else fresh.verdict.bound,
            "weight_ratio": out.weight / max(1, fresh.weight),
            "speedup": fresh_seconds / max(update_seconds, 1e-9),
            "cpu_speedup": fresh_cpu / max(update_cpu, 1e-9),
            "peak_rss_mib": _rss_mib(),
        }
    )
