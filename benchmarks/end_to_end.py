"""Whole `plan()` runs on the issue-10 and issue-18 workloads, as a user runs them: load the
objects, first fit, the chosen planner, results and the checker, timed by the wall clock.

Run: `python -m benchmarks.end_to_end NAME [allocator]` (NAME: a-claims, a-pods, b, c, c-big,
d, e, f, cpu). One process per workload, so peak RSS is the workload's own.
"""

from __future__ import annotations

import copy
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks import verdict_info
from benchmarks import workloads as w
from benchmarks.node_resources import cpu_bound
from dra_solver import Cluster, plan


def list_match_fleet(nodes: int = 50, pods: int = 50) -> list[dict[str, Any]]:
    """(e): `hard_list_match` on every node (64 devices, the trap first) and `pods` copies of its
    32-request claim."""
    cls, sl, claim = w.hard_list_match()
    objs = [cls]
    for n in range(nodes):
        s = copy.deepcopy(sl)
        s["metadata"]["name"] = f"node-{n}-gpu"
        s["spec"]["nodeName"] = f"node-{n}"
        s["spec"]["pool"]["name"] = f"node-{n}-gpu"
        objs.append(s)
    for p in range(pods):
        c = copy.deepcopy(claim)
        c["metadata"]["name"] = f"wide-{p}"
        objs.append(c)
    return objs


WORKLOADS: dict[str, tuple[Callable[[], list[dict[str, Any]]], str | None]] = {
    "a-claims": (w.upstream_5000, None),
    "a-pods": (lambda: w.upstream_5000(template=True), None),
    "b": (w.sized_claims, None),
    "c": (w.shared_gpus, None),
    "c-big": (lambda: w.shared_gpus(nodes=200, claims=3000), None),
    "d": (w.numa_gpu_nic, None),
    "e": (list_match_fleet, "DRAListTypeAttributes=true"),
    "f": (lambda: w.sized_claims(claims=2000, nodes=500, held=True), None),
    "cpu": (lambda: cpu_bound(200, 1600), None),
}


def main() -> None:
    name = sys.argv[1]
    allocator = sys.argv[2] if len(sys.argv) > 2 else "cpsat"
    make, gates = WORKLOADS[name]
    t0 = time.perf_counter()
    cluster = Cluster.from_objects(make())
    t1, c1 = time.perf_counter(), time.process_time()
    out = plan(cluster, allocator=allocator, **({"feature_gates": gates} if gates else {}))
    t2, c2 = time.perf_counter(), time.process_time()
    s = {**out.stats, **verdict_info(out)}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"{name} {allocator}: load {t1 - t0:.1f} s, plan {t2 - t1:.1f} s (cpu {c2 - c1:.1f} s) "
        f"(first fit {s.get('first_fit_seconds')} s), placed {out.placed}/{len(out.pods)}, "
        f"first fit {s.get('reference_placed')}, status {s.get('status')}, bound {s.get('bound')}, "
        f"gap {s.get('gap')}, aggregated {str(s.get('aggregated'))[:60]}, peak RSS {rss} MiB"
    )


if __name__ == "__main__":
    main()
