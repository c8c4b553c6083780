"""The reasons of the pods a plan leaves out (`planners.crowding.crowded_reasons`), shared or
each pod's worded on its own (`share=False`, the cost before they were shared under first
fit), timed apart from the rest of the plan: wall and CPU seconds, the load average.

Run: `python -m benchmarks.crowded_reasons churn|mixed NODES PODS reference|cpsat 1|0 [OUT.json]`
(1: shared) prints one JSON line; OUT.json gets every pod's node, reason and node reasons, so
two runs can be compared byte for byte (docs/benchmarks.md, "Scale curve").
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from benchmarks import churn, workloads


def run(
    kind: str, nodes: int, pods: int, allocator: str, share: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One plan: its times (the reasons apart) and every pod's words."""
    from dra_solver.api.cluster import Cluster
    from dra_solver.pipeline import plan
    from dra_solver.planners import crowding
    from dra_solver.planners import run as planning_run

    objs = churn.heterogeneous(nodes, pods) if kind == "churn" else workloads.mixed_cluster(nodes, pods)
    cluster = Cluster.from_objects(objs)
    del objs
    spent = {"wall": 0.0, "cpu": 0.0}

    def timed(job: Any, outcome: Any) -> Any:  # noqa: ANN401 - the patched function's own types
        wall, cpu = time.perf_counter(), time.process_time()
        out = crowding.crowded_reasons(job, outcome, share=share)
        spent["wall"] += time.perf_counter() - wall
        spent["cpu"] += time.process_time() - cpu
        return out

    original = planning_run.crowded_reasons
    planning_run.crowded_reasons = timed
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        out = plan(cluster, allocator=allocator, time_limit=60)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        planning_run.crowded_reasons = original
    times = {
        "kind": kind,
        "nodes": nodes,
        "pods": pods,
        "allocator": allocator,
        "share": share,
        "plan_wall": round(wall, 1),
        "plan_cpu": round(cpu, 1),
        "reasons_wall": round(spent["wall"], 1),
        "reasons_cpu": round(spent["cpu"], 1),
        "placed": out.placed,
        "status": None if out.verdict is None else out.verdict.status.value,
        "load1": round(os.getloadavg()[0], 1),
    }
    words = {p.name: [p.node, p.reason, dict(p.node_reasons)] for p in out.pods}
    return times, words


def main(argv: list[str]) -> int:
    kind, nodes, pods, allocator, share = argv[0], int(argv[1]), int(argv[2]), argv[3], argv[4] == "1"
    times, words = run(kind, nodes, pods, allocator, share)
    if len(argv) > 5:
        with open(argv[5], "w") as f:
            json.dump(words, f, sort_keys=True)
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
