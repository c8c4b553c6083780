"""Issue #14 benchmark: a partitioned plan at scale (one model vs partitions on a local pool
of 2 processes vs Ray on this machine) and a 20-scenario sweep (local pool vs Ray).

Not a test. Run: `.venv/bin/python -m benchmarks.report_scale_out [NODES PODS]` (default
2,000 nodes x 8 GPUs, 10,000 pods of 1/2/4/8 GPUs). Each configuration runs in a fresh
process so that peak memory (ru_maxrss of that process and its children) is its own.
Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.workloads import GPU, sized_claims


def _one(config: str, nodes: int, pods: int, k: int, scen_dir: str) -> dict[str, Any]:
    """One configuration, in this process: its numbers as a dict."""
    from dra_solver import plan
    from dra_solver.api.cluster import Cluster
    from dra_solver.executors import RayExecutor, local_pool
    from dra_solver.planning.job import Options
    from dra_solver.whatif.sweep import sweep

    cluster = Cluster.from_objects(sized_claims(nodes, 8, pods, held=True, seed=14))
    executor: Any = None
    if config.endswith("local"):
        executor = local_pool(2)
    elif config.endswith("ray"):
        executor = RayExecutor(num_cpus=2)
    start = time.perf_counter()
    if config.startswith("sweep"):
        small = Cluster.from_objects(sized_claims(200, 8, 1000, held=True, seed=14))
        paths = sorted(Path(scen_dir).glob("*.yaml"))
        rows = sweep(small, paths, Options.of(time_limit=20, executor=executor), max_new_nodes=20)
        out: dict[str, Any] = {"scenarios": len(rows), "placed": sum(r.placed for r in rows)}
    else:
        parts = 1 if config == "one-model" else k
        o = plan(cluster, time_limit=120, partitions=parts, executor=executor)
        out = {
            "placed": o.placed,
            "objective": o.weight,
            "bound": None if o.verdict is None else o.verdict.bound,
            "gap": None if o.verdict is None else o.verdict.gap,
            "status": None if o.verdict is None else o.verdict.status.value,
        }
    out["seconds"] = round(time.perf_counter() - start, 1)
    if executor is not None:
        executor.shutdown()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["peak_mib_driver"] = round(own / 1024)
    out["peak_mib_worker"] = round(kids / 1024)
    return out


def _scenarios(where: Path, count: int = 20) -> None:
    """20 forecasts: 0..950 more claims of 1/2/4/8 GPUs, every other one with a node type to buy."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "buy-8x"},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }
    slc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "buy-8x-gpu"},
        "spec": {
            "driver": GPU,
            "nodeName": "buy-8x",
            "pool": {"name": "buy-8x-gpu", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(8)],
        },
    }
    for s in range(count):
        items: list[dict[str, Any]] = [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"forecast-{s}-{i}", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {"deviceClassName": "gpu", "count": (1, 2, 4, 8)[i % 4]},
                            }
                        ]
                    }
                },
            }
            for i in range(1 + 50 * s)
        ]
        if s % 2:
            items += [node, slc]
        doc = {"apiVersion": "v1", "kind": "List", "items": items}
        (where / f"s{s:02d}.yaml").write_text(yaml.safe_dump(doc))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        config, scen = sys.argv[2], sys.argv[6]
        print(json.dumps(_one(config, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), scen)))
        return 0
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    pods = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    k = 4
    with tempfile.TemporaryDirectory() as scen:
        _scenarios(Path(scen))
        results = {}
        configs = ("one-model", "partitions-inline", "partitions-local", "partitions-ray")
        configs += ("sweep-local", "sweep-ray")
        for config in configs:
            cmd = [sys.executable, "-m", "benchmarks.report_scale_out", "--one", config]
            cmd += [str(nodes), str(pods), str(k), scen]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
            results[config] = json.loads(line) if line.startswith("{") else {"error": done.stderr[-300:]}
            print(config, results[config], file=sys.stderr, flush=True)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
