"""`plan --preempt --allow-moves` against `plan --preempt` on a fragmented cluster (issue #31,
"move these 2 pods and the 8-GPU job fits").

`fragmented(nodes, pending, seed)`: nodes of 8 GPUs, each about half full — 1- and 2-GPU
pods of one ReplicaSet per node (priorities 0/10/100, claims from a ResourceClaimTemplate, so
movable), one pod in four not controller-owned (only evictable) — and `pending` jobs of
priority 500 asking for 8 GPUs (a whole node) or 4. Per seed, both answers on the same input,
in one run: placed weight, evicted pods (count, priority sum), moves, status and each stage's,
process CPU seconds and the 1-minute load, as extra_info; the wall time of each is the
benchmark. The gain is the ratio of evicted pods with moves to evicted pods without, at equal
placed weight (moves never place less: every plan without moves is one with moves).
Run: `pytest benchmarks/test_bench_preempt_moves.py --benchmark-only`.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

import pytest

from benchmarks.preempt_workloads import batch_info, gpu_claim, gpu_template, owned
from benchmarks.workloads import GPU, _class, _slice
from dra_solver.api.cluster import Cluster
from dra_solver.preempt import plan_preempt

SIZES = [(6, 3), (12, 4), (24, 6)]
"""(nodes of 8 GPUs, pending jobs)."""
SEEDS = range(int(os.environ.get("PREEMPT_MOVES_SEEDS", "3")))


def fragmented(nodes: int, pending: int, seed: int) -> list[dict[str, Any]]:
    """The cluster of the module docstring, as plain dicts."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [_class("gpu", GPU)]
    docs += [gpu_template(size) for size in (1, 2)]
    k = 0
    for i in range(nodes):
        n = f"node-{i:03d}"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
            }
        )
        docs.append(_slice(f"{n}-gpus", GPU, n, [{"name": f"gpu-{g}"} for g in range(8)], pool=n))
        at, fill = 0, rng.randint(2, 5)
        while at < fill:
            take = min(rng.randint(1, 2), 8 - at)
            docs += _running(f"run-{k:05d}", n, list(range(at, at + take)), rng, f"rs-{i:03d}")
            k += 1
            at += take
    for j in range(pending):
        name = f"job-{j:04d}"
        docs.append(gpu_claim(name, rng.choice([8, 8, 4]), None, []))
        docs.append(_pod(name, 500, None, {}))
    return docs


def _running(name: str, node: str, gpus: list[int], rng: random.Random, owner: str) -> list[dict[str, Any]]:
    pod = _pod(name, rng.choice([0, 10, 100]), node, {"app": owner})
    claim = gpu_claim(name, len(gpus), node, gpus)
    if rng.random() < 0.75:
        owned(pod, owner, len(gpus))
    return [claim, pod]


def _pod(name: str, priority: int, node: str | None, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priority": priority,
        "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}],
        "containers": [
            {"name": "main", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}
        ],
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("nodes", "pending"), SIZES)
@pytest.mark.parametrize("moves", [False, True], ids=["evict-only", "allow-moves"])
def test_preempt_moves(benchmark: Any, moves: bool, nodes: int, pending: int, seed: int) -> None:
    benchmark.group = f"preempt-moves-{nodes}-nodes-{pending}-pending"
    cluster = Cluster.from_objects(fragmented(nodes, pending, seed))
    start = time.process_time()
    out = benchmark.pedantic(
        lambda: plan_preempt(cluster, allow_moves=moves, time_limit=30, seed=seed), rounds=1, iterations=1
    )
    benchmark.extra_info.update(batch_info(out, time.process_time() - start))
