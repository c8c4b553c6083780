"""Issue #19's gang benchmark: PodGroups placed all or nothing, CP-SAT vs the reference.

Workload `benchmarks/gang_workloads.py::gangs`: 40 PodGroups of 4-16 pods x 1-8 GPUs (every
fourth gang's pods ask a whole GPU or, as fallback, half of a partitionable one) over 64 nodes
x 8 GPUs, each node partly held by a running claim; plus a smaller instance the per-device
model can prove. `dra_solver.plan` with the reference (upstream's PodGroup cycle: pod-at-a-time
first fit, never revisited) and with CP-SAT (the per-device model: gangs are not aggregated
yet), same input, one round each: the CP-SAT run is bounded by its time limit, so what is worth
recording is the status, the bound and the gap next to the time, not a median.
Run: `pytest benchmarks/test_bench_gangs.py`.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from benchmarks import verdict_info
from benchmarks.gang_workloads import gangs, gangs_placed
from dra_solver import plan
from dra_solver.api.cluster import Cluster

GROUP = "gangs"
TIME_LIMIT = 60.0
"""CP-SAT's budget (seconds): the default 10 s is too short to say anything at 64 nodes."""

CASES: dict[str, dict[str, Any]] = {
    "64x8-40gangs": {},
    "16x8-10gangs-small": {"nodes": 16, "groups": 10, "pods": (2, 6)},
}


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gangs(benchmark, case: str, allocator: str) -> None:
    objs, shapes = gangs(**CASES[case])
    cluster = Cluster.from_objects(objs)
    benchmark.group = f"{GROUP}-{case}"
    out = benchmark.pedantic(
        lambda: plan(cluster, allocator=allocator, time_limit=TIME_LIMIT), rounds=1, iterations=1
    )
    info: dict[str, Any] = {
        k: {**out.stats, **verdict_info(out)}.get(k)
        for k in ("status", "objective", "bound", "gap", "cpsat_status", "aggregated")
    }
    info.update(
        {
            "pods": len(out.pods),
            "placed": out.placed,
            "gangs": len(shapes),
            "gangs_placed": gangs_placed(shapes, {p.name: p.node for p in out.pods}),
            "gpus_asked": sum(s.pods * (s.gpus or 1) for s in shapes),
            "load": round(os.getloadavg()[0], 1),
        }
    )
    benchmark.extra_info.update(info)
