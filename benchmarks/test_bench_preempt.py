"""`plan --preempt` against upstream's one-pod-at-a-time preemption on a full cluster (issue #31).

Two workloads. `preempt_workloads.full_cluster`: every GPU held by running pods of priorities
0, 10, 100, 1000 (a PodDisruptionBudget allowing one disruption over a third of them), pending
pods of priorities 500, 2000, 5000 asking for 1-4 GPUs. `preempt_workloads.busy_cluster`: the
issue's shape — 8 GPUs and 8 running pods per node (1-2 GPU pods, then cpu-only pods), ten
budgets over a third of the pods, pending pods of 1-4 GPUs. Per seed, both answers on the same
input, in one run: the placed weight and the victims (count, sum of priorities, highest, PDB
violations) of each, as extra_info; the wall time of each is the benchmark.

`test_preempt_at_scale`: the issue's benchmark, 500 nodes (4,000 running pods), 400 pending,
the batch plan alone with a 30 s deterministic budget — its status, each stage's, which model
answered, the deterministic seconds its solves used and the process CPU seconds. The reference
is not run there: it re-plans each pending pod on every node (`preempt.reference`), hours at
that size; it is compared on `busy_cluster` at 20 nodes.

`test_preempt_two_models`: `preempt_workloads.two_model_cluster` (half the nodes with two GPU
models, pending pods selecting one) at 100-500 nodes, the batch plan alone, the same facts —
which model answered shows whether the counting model's device groups reach that shape.
Run: `pytest benchmarks/test_bench_preempt.py --benchmark-only`; `python -m
benchmarks.report_preempt` writes the "Preemption" section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from benchmarks.preempt_workloads import batch_info, busy_cluster, full_cluster, two_model_cluster
from dra_solver.api.cluster import Cluster
from dra_solver.preempt import plan_preempt
from dra_solver.preempt.reference import ReferenceOutcome, reference_preempt

SIZES = [(8, 6), (12, 10), (20, 20)]
"""(nodes of 8 GPUs, pending pods)."""
SEEDS = range(5)
BUSY = (20, 16)
"""`busy_cluster` (nodes, pending) where the reference is compared."""
SCALE = (500, 400)
SCALE_SEEDS = range(int(os.environ.get("PREEMPT_SCALE_SEEDS", "3")))
TWO_SIZES = [(100, 80), (250, 200), (500, 400)]
"""`two_model_cluster` (nodes, pending)."""
TWO_SEEDS = range(int(os.environ.get("PREEMPT_TWO_SEEDS", "2")))


def _reference_info(ref: ReferenceOutcome) -> dict[str, object]:
    prios = [p for _, _, p in ref.evicted]
    return {
        "weight": ref.weight,
        "placed": len(ref.placed),
        "valid": ref.valid,
        "pdb_violations": ref.pdb_violations,
        "evicted": len(prios),
        "priority_sum": sum(prios),
        "highest": max(prios, default=None),
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("nodes", "pending"), SIZES)
@pytest.mark.parametrize("who", ["batch", "reference"])
def test_preempt(benchmark, who: str, nodes: int, pending: int, seed: int) -> None:
    benchmark.group = f"preempt-{nodes}-nodes-{pending}-pending"
    cluster = Cluster.from_objects(full_cluster(nodes, 8, pending, seed))
    _run(benchmark, who, cluster, seed, 20)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("who", ["batch", "reference"])
def test_preempt_busy(benchmark, who: str, seed: int) -> None:
    benchmark.group = f"preempt-busy-{BUSY[0]}-nodes-{BUSY[1]}-pending"
    cluster = Cluster.from_objects(busy_cluster(*BUSY, seed))
    _run(benchmark, who, cluster, seed, 30)


@pytest.mark.parametrize("seed", SCALE_SEEDS)
def test_preempt_at_scale(benchmark, seed: int) -> None:
    benchmark.group = f"preempt-busy-{SCALE[0]}-nodes-{SCALE[1]}-pending"
    cluster = Cluster.from_objects(busy_cluster(*SCALE, seed))
    _run(benchmark, "batch", cluster, seed, 30)


@pytest.mark.parametrize("seed", TWO_SEEDS)
@pytest.mark.parametrize(("nodes", "pending"), TWO_SIZES)
def test_preempt_two_models(benchmark, nodes: int, pending: int, seed: int) -> None:
    benchmark.group = f"preempt-two-models-{nodes}-nodes-{pending}-pending"
    cluster = Cluster.from_objects(two_model_cluster(nodes, pending, seed))
    _run(benchmark, "batch", cluster, seed, 30)


def _run(benchmark: Any, who: str, cluster: Cluster, seed: int, limit: float) -> None:
    start = time.process_time()
    if who == "batch":
        out = benchmark.pedantic(
            lambda: plan_preempt(cluster, time_limit=limit, seed=seed), rounds=1, iterations=1
        )
        benchmark.extra_info.update(batch_info(out, time.process_time() - start))
    else:
        ref = benchmark.pedantic(lambda: reference_preempt(cluster), rounds=1, iterations=1)
        benchmark.extra_info.update(_reference_info(ref))
        benchmark.extra_info["cpu_s"] = round(time.process_time() - start, 1)
