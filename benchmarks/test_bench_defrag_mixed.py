"""Issue #43, §1 third bullet: the defragmentation of `test_bench_defrag` with the features that
used to send the whole plan to the per-device model (which stops proving around 50 nodes),
now on the counting model (`preempt.counting`, docs/semantics.md, "Preemption", "Which model").

`defrag_cluster(nodes, seed)` (benchmarks/defrag_workloads.py), `even` shape, and one variant:
- `differing`: on 2 % of the nodes the first half of the GPUs are `fast` (an attribute), and
  `fast_pods` pending 4-GPU pods (priority 1000) ask for fast GPUs only — on those nodes their
  request and the 8-GPU pods' may take overlapping but different GPUs (flows per node);
- `served`: the pending 8-GPU pods ask for `example.com/gpu: 8`, which the DeviceClass serves
  (KEP-5004), and 2 % of the nodes advertise 8 of it (a device plugin's) — a pod with its
  special claim on the other nodes, the resource as a node resource on those (several forms);
- `topology`: every gang has a topology constraint on the node label `rack` (racks of 20
  nodes): its pods in one rack;
- `all`: the three at once.

Per variant, as extra_info: the model that answered and why (`model_reason`: None when the
counting model did), the plan's placed pods, moves, evicted pods, status and each stage's,
deterministic, CPU (`time.process_time`) and wall seconds, the 1-minute load.

Run: `pytest benchmarks/test_bench_defrag_mixed.py --benchmark-only --benchmark-json FILE`
(`DEFRAG_MIXED_NODES`, default 1000).
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from benchmarks.defrag_workloads import Defrag, defrag_cluster, docs
from benchmarks.preempt_workloads import _pod, batch_info, gpu_claim, served_as_extended
from dra_solver.api.cluster import Cluster
from dra_solver.planners.run import fewer_collections
from dra_solver.preempt import plan_preempt

NODES = int(os.environ.get("DEFRAG_MIXED_NODES", "1000"))
LIMIT = 60.0
RACK = 20
"""Nodes per rack (`topology`)."""
FAST_NODES = 0.02
"""Share of the nodes whose GPUs differ (`differing`)."""


def differing(d: Defrag, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`differing` (module docstring): one pending 4-GPU fast pod per two differing nodes."""
    names = sorted(d.nodes)
    fast = set(names[:: round(1 / FAST_NODES)])
    for o in objs:
        if o["kind"] == "ResourceSlice":
            node = o["spec"]["nodeName"]
            devices = o["spec"]["devices"]
            for i, dev in enumerate(devices):
                dev["attributes"] = {"fast": {"bool": node in fast and i < len(devices) // 2}}
    for j in range(max(1, len(fast) // 2)):
        name = f"fast-{j:03d}"
        claim = gpu_claim(name, 4, None, [])
        claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {"cel": {"expression": 'device.attributes["gpu.example.com"].fast'}}
        ]
        objs += [claim, _pod(name, 1000, None, "fast", cpu="8")]
    return objs


def served(d: Defrag, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`served` (module docstring): the advertising nodes are every 50th from the second."""
    native = sorted(d.nodes)[1 :: round(1 / FAST_NODES)]
    return served_as_extended(objs, dict.fromkeys(d.pending, 8), dict.fromkeys(native, 8))


def topology(d: Defrag, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`topology` (module docstring)."""
    rank = {n: i for i, n in enumerate(sorted(d.nodes))}
    for o in objs:
        if o["kind"] == "Node":
            o["metadata"]["labels"]["rack"] = f"rack-{rank[o['metadata']['name']] // RACK:03d}"
        if o["kind"] == "PodGroup":
            o["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    return objs


def every(d: Defrag, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`all` (module docstring)."""
    return topology(d, served(d, differing(d, objs)))


VARIANTS = {"differing": differing, "served": served, "topology": topology, "all": every}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_defrag_mixed(benchmark: Any, variant: str) -> None:
    benchmark.group = f"defrag-mixed-{NODES}-nodes"
    d = defrag_cluster(NODES, 0)
    cluster = Cluster.from_objects(VARIANTS[variant](d, docs(d)))
    start = time.process_time()
    wall = time.perf_counter()

    def plan() -> Any:
        with fewer_collections():
            return plan_preempt(cluster, allow_moves=True, time_limit=LIMIT, seed=0)

    out = benchmark.pedantic(plan, rounds=1, iterations=1)
    info = batch_info(out, time.process_time() - start)
    info.update(
        {
            "variant": variant,
            "nodes": NODES,
            "wall_s": round(time.perf_counter() - wall, 2),
            "limit_s": LIMIT,
            "pending": sum(1 for p in out.pods),
            "model_reason": out.stats.get("preempt_model_reason"),
        }
    )
    benchmark.extra_info.update(info)
    assert info["model"] == "counts", info
