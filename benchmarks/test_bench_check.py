"""The checker's cost (issue #27 §5): its time per plan as a fraction of planning time.

Workload `checked_fleet`: 40 nodes (Node objects with zone labels and allocatable cpu/memory)
of 8 GPUs each (attributes model, numa, driverVersion; capacity memory), and 300 Pods that
each get a claim from one of two ResourceClaimTemplates — one GPU of at least 40Gi of model
A100 (a quantity and a string selector), or two GPUs on one NUMA node (matchAttribute) with a
semver selector — half of them with a nodeSelector on the zone, each asking for cpu. A plan
runs the checker on every allocator answer (`check.check_or_raise`, per node) and on the
whole plan (node resources, placements, gangs); the first benchmark plans with first fit and
measures, by wrapping those calls, how much of the planning time is the checker's. The
second audits the cluster after the plan (`check_cluster`, what `dra-solver check` runs).
Run: `pytest benchmarks/test_bench_check.py`; report: `python -m benchmarks.report_check`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dra_solver import Cluster, check_cluster, plan
from dra_solver.output.objects import cluster_after

GROUP = "checker-300-pods-40-nodes"
GPU = "gpu.example.com"


def checked_fleet(nodes: int = 40, gpus: int = 8, pods: int = 300, seed: int = 27) -> list[dict[str, Any]]:
    """The workload of the module docstring."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]},
        }
    ]
    for n in range(nodes):
        name = f"node-{n:03d}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": f"z{n % 4}"}},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
            }
        )
        devices = [
            {
                "name": f"gpu-{i}",
                "attributes": {
                    "model": {"string": "A100-SXM4-80GB" if n % 5 else "A100-PCIE-40GB"},
                    "numa": {"int": i // 4},
                    "driverVersion": {"version": f"550.{n % 3}.0"},
                },
                "capacity": {"memory": {"value": "80Gi" if n % 5 else "40Gi"}},
            }
            for i in range(gpus)
        ]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpu"},
                "spec": {
                    "driver": GPU,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "nodeName": name,
                    "devices": devices,
                },
            }
        )
    one = {
        "name": "gpu",
        "exactly": {
            "deviceClassName": "gpu",
            "selectors": [
                {
                    "cel": {
                        "expression": f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0 '
                        f'&& device.attributes["{GPU}"].model.startsWith("A100")'
                    }
                }
            ],
        },
    }
    two = {
        "name": "gpus",
        "exactly": {
            "deviceClassName": "gpu",
            "count": 2,
            "selectors": [
                {
                    "cel": {
                        "expression": f'device.attributes["{GPU}"].driverVersion'
                        '.isGreaterThan(semver("550.0.0"))'
                    }
                }
            ],
        },
    }
    for tname, request, constraints in (
        ("one-gpu", one, []),
        ("two-gpus", two, [{"matchAttribute": f"{GPU}/numa"}]),
    ):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": tname, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [request], "constraints": constraints}}},
            }
        )
    for p in range(pods):
        spec: dict[str, Any] = {
            "containers": [
                {"name": "main", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "dev"}]}}
            ],
            "resourceClaims": [
                {"name": "dev", "resourceClaimTemplateName": rng.choice(["one-gpu", "two-gpus"])}
            ],
        }
        if p % 2:
            spec["nodeSelector"] = {"zone": f"z{rng.randrange(4)}"}
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:04d}", "namespace": "default", "uid": f"uid-{p:04d}"},
                "spec": spec,
            }
        )
    return objs


CHECK_CALLS = [
    ("dra_solver.planning.ledger", "check_or_raise"),
    ("dra_solver.planners.firstfit.engine", "check"),
    ("dra_solver.planners.firstfit.engine", "check_or_raise"),
    ("dra_solver.planning.finish", "check_placements"),
    ("dra_solver.planning.finish", "check_node_resources"),
    ("dra_solver.planning.finish", "check_gangs"),
]
"""Where a plan calls the checker (module, name): wrapped to time them."""


@contextmanager
def timed_checker(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Every checker call of the plan timed; yields the list the seconds are added to."""
    spent = [0.0]
    for module, name in CHECK_CALLS:
        mod = __import__(module, fromlist=[name])
        original: Callable[..., Any] = getattr(mod, name)

        def wrapper(*args: Any, _f: Callable[..., Any] = original, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        monkeypatch.setattr(mod, name, wrapper)
    yield spent


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return Cluster.from_objects(checked_fleet())


def test_checker_share_of_planning(benchmark: Any, cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark.group = GROUP
    shares: list[tuple[float, float]] = []
    with timed_checker(monkeypatch) as spent:

        def run() -> Any:
            spent[0] = 0.0
            start = time.perf_counter()
            out = plan(cluster, allocator="reference")
            shares.append((spent[0], time.perf_counter() - start))
            return out

        out = benchmark.pedantic(run, rounds=3, iterations=1)
    assert out.placed > 0 and all(checker < total for checker, total in shares)
    (cold_checker, cold_total), warm = shares[0], shares[1:]
    checker, total = sum(c for c, _ in warm) / len(warm), sum(t for _, t in warm) / len(warm)
    benchmark.extra_info.update(
        {
            "what": "plan (first fit)",
            "pods": len(out.pods),
            "placed": out.placed,
            "rounds": [[round(c, 4), round(t, 4)] for c, t in shares],
            "cold_checker_s": round(cold_checker, 4),
            "cold_plan_s": round(cold_total, 4),
            "cold_checker_share": round(cold_checker / cold_total, 4),
            "checker_s": round(checker, 4),
            "plan_s": round(total, 4),
            "checker_share": round(checker / total, 4),
        }
    )


def test_audit_after_the_plan(benchmark: Any, cluster: Cluster) -> None:
    benchmark.group = GROUP
    out = plan(cluster, allocator="reference")
    after = Cluster.from_objects(cluster_after(cluster, out.pods))
    violations = benchmark.pedantic(lambda: check_cluster(after), rounds=3, iterations=1)
    assert violations == []
    benchmark.extra_info.update(
        {"what": "check_cluster after the plan", "pods": len(out.pods), "placed": out.placed}
    )
