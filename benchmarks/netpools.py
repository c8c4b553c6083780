"""Issue #40's network-attached partitionable pools: upstream scheduler_perf's
"partitionable devices" shape (`SteadyStateClusterResourceClaimTemplatePartitionable`), scaled
to N nodes / N pools / 3N pods.

The shape, as upstream builds it:

- N Nodes, every one labelled `node-with-dra=true` (so they all look alike);
- N pools of one driver, each published with a label `nodeSelector` on that label — so every
  pool is visible from every node (network-attached, not node-local). A pool has one counter
  set of four counters of 1 each and six partitions: two that consume two counters
  (`counter1+counter2`, `counter3+counter4`) and four that consume one counter each. Since
  Kubernetes 1.34 (resource.k8s.io/v1) the counter set is a slice of its own in the pool, so
  a pool is two slices (`resourceSliceCount: 2`), both with the same nodeSelector;
- 3N pending Pods, each with a claim from one ResourceClaimTemplate: 2 devices of the class,
  `matchAttribute` on the pool's index attribute (both devices from one pool).

What is optimal: a claim uses two partitions of one pool, so at least two of its four
counters; a pool serves at most two claims (the four one-counter partitions, two by two), so
2N pods fit. First fit takes the two big partitions first (device order), which use all
four counters of a pool: N pods. Upstream's config also pre-allocates one big partition per
pool by an init claim; `held=True` adds those (then N pods fit, one per pool).

Deterministic: the same arguments give the same objects. Run one plan:
`python -m benchmarks.netpools NODES [ALLOCATOR [TIME_LIMIT]]` prints a JSON line (wall and
CPU seconds of the plan, its numbers, the peak RSS); `benchmarks/test_bench_netpools.py` runs
the curve, each point in a fresh process (`run_point`).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import verdict_info

ROOT = Path(__file__).resolve().parents[1]
DRIVER = "test-driver.cdi.k8s.io"
LABEL = "node-with-dra"
SLICE_ATTR = "dra.example.com/slice"
COUNTERS = ("counter1", "counter2", "counter3", "counter4")
PARTITIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("device-2-counters-1", ("counter1", "counter2")),
    ("device-2-counters-2", ("counter3", "counter4")),
    ("device-1-counter-1", ("counter1",)),
    ("device-1-counter-2", ("counter2",)),
    ("device-1-counter-3", ("counter3",)),
    ("device-1-counter-4", ("counter4",)),
)
"""A pool's partitions in upstream's order, with the counters each consumes (1 of each)."""


def _selector() -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": LABEL, "operator": "In", "values": ["true"]}]}]
    }


def _pool(index: int, all_nodes: bool = False) -> list[dict[str, Any]]:
    """Pool `index`: its counter slice and its device slice, both network-attached."""
    pool = f"resourceslice-{index}"
    ref = {"name": pool, "generation": 1, "resourceSliceCount": 2}
    where: dict[str, Any] = {"allNodes": True} if all_nodes else {"nodeSelector": _selector()}
    counters = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{pool}-counters"},
        "spec": {
            "driver": DRIVER,
            "pool": dict(ref),
            **where,
            "sharedCounters": [{"name": "counter-set", "counters": {c: {"value": "1"} for c in COUNTERS}}],
        },
    }
    devices = [
        {
            "name": name,
            "attributes": {
                "preallocate": {"bool": name == "device-2-counters-1"},
                SLICE_ATTR: {"int": index},
            },
            "capacity": {"counters": {"value": str(len(uses))}},
            "consumesCounters": [
                {"counterSet": "counter-set", "counters": {c: {"value": "1"} for c in uses}}
            ],
        }
        for name, uses in PARTITIONS
    ]
    dev_slice = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{pool}-devices"},
        "spec": {"driver": DRIVER, "pool": dict(ref), **where, "devices": devices},
    }
    return [counters, dev_slice]


def netpools(
    nodes: int = 100,
    pools: int | None = None,
    pods: int | None = None,
    *,
    held: bool = False,
    all_nodes: bool = False,
) -> list[dict[str, Any]]:
    """`nodes` Nodes, `pools` (default `nodes`) network-attached pools, `pods` (default 3 x
    nodes) pending Pods of one 2-device claim each (module docstring). `held`: one claim per
    pool already holds its `preallocate` partition (upstream's init claims). `all_nodes`: the
    pools say `allNodes: true` instead of the label selector."""
    pools = nodes if pools is None else pools
    pods = 3 * nodes if pods is None else pods
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "test-claim-template", "namespace": "test"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}
                        ],
                        "constraints": [{"requests": ["req-0"], "matchAttribute": SLICE_ATTR}],
                    }
                }
            },
        },
    ]
    for n in range(nodes):
        name = f"scheduler-perf-dra-{n:04d}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {LABEL: "true", "kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
            }
        )
    for p in range(pools):
        objs += _pool(p, all_nodes)
        if held:
            objs.append(_held(p))
    for p in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:05d}", "namespace": "test", "uid": f"uid-{p:05d}"},
                "spec": {
                    "containers": [{"name": "ctr", "resources": {"claims": [{"name": "dev"}]}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "test-claim-template"}],
                },
            }
        )
    return objs


def _held(index: int) -> dict[str, Any]:
    """Upstream's init claim for pool `index`: its `preallocate` partition, allocated."""
    expr = (
        f"device.capacity['{DRIVER}'].counters.compareTo(quantity('2')) >= 0 && "
        f"device.attributes['{DRIVER}'].preallocate"
    )
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"test-claim-with-selector-{index}", "namespace": "init"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "req-0",
                        "exactly": {
                            "deviceClassName": "test-class",
                            "selectors": [{"cel": {"expression": expr}}],
                        },
                    }
                ]
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "req-0",
                            "driver": DRIVER,
                            "pool": f"resourceslice-{index}",
                            "device": "device-2-counters-1",
                        }
                    ]
                }
            }
        },
    }


def optimum(nodes: int, pools: int | None = None, pods: int | None = None, *, held: bool = False) -> int:
    """The most pods that fit: two per free pool (one if `held`), at most the pods."""
    pools = nodes if pools is None else pools
    pods = 3 * nodes if pods is None else pods
    return min(pods, (1 if held else 2) * pools)


def point(nodes: int, allocator: str = "cpsat", time_limit: float = 60.0) -> dict[str, Any]:
    """One plan in this process: load, plan; wall and CPU seconds and the plan's numbers."""
    from dra_solver import Cluster, plan

    t0 = time.perf_counter()
    cluster = Cluster.from_objects(netpools(nodes))
    t1, c1 = time.perf_counter(), _cpu()
    out = plan(cluster, allocator=allocator, time_limit=time_limit)
    t2, c2 = time.perf_counter(), _cpu()
    s = out.stats
    return {
        "nodes": nodes,
        "pods": 3 * nodes,
        "allocator": allocator,
        "time_limit": time_limit,
        "optimum": optimum(nodes),
        "placed": out.placed,
        "load_seconds": round(t1 - t0, 2),
        "plan_seconds": round(t2 - t1, 2),
        "plan_cpu_seconds": round(c2 - c1, 2),
        **{k: v for k, v in verdict_info(out).items() if k != "bound_from"},
        **{k: s.get(k) for k in ("aggregated", "reference_placed")},
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


def run_point(nodes: int, allocator: str, time_limit: float = 60.0, timeout: float = 900) -> dict[str, Any]:
    """`point` in a fresh process (peak memory per point, a stuck point cannot take the others
    with it); past `timeout` seconds it is stopped and reported as not finished."""
    cmd = [sys.executable, "-m", "benchmarks.netpools", str(nodes), allocator, str(time_limit)]
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"nodes": nodes, "allocator": allocator, "finished": False, "timeout_seconds": timeout}
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["finished"] = True
    out["process_seconds"] = round(time.perf_counter() - started, 2)
    return out


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    nodes = int(argv[0])
    allocator = argv[1] if len(argv) > 1 else "cpsat"
    limit = float(argv[2]) if len(argv) > 2 else 60.0
    print(json.dumps(point(nodes, allocator, limit)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
