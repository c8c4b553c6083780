"""CEL precompute on a fleet: naive per-device evaluation vs the per-signature cache.

Issue 3's workload: 1,000 nodes x 8 GPUs (3 models, 2 memory sizes) + 1,000 NICs, 4
selector expressions (a device is a candidate when all hold, evaluated in order, stopping at
the first false — as precompute does) and 2 derived attributes evaluated on candidates.
Both variants do the same work from the same device objects — build the CEL view of each
device, then evaluate — and the cached one evaluates each program once per distinct device
signature. Run: `pytest benchmarks/test_bench_cel.py`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from benchmarks.workloads import FLEET_DERIVED, FLEET_SELECTORS, gpu_fleet
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Device
from dra_solver.cel import DeviceView, EvalCache, Program, compile_expression
from dra_solver.gates import FeatureGates
from dra_solver.problem.devices import device_view

GROUP = "cel-precompute-1000-nodes"


Devices = list[tuple[str, Device]]


@pytest.fixture(scope="module")
def fleet() -> tuple[Devices, list[Program], list[Program]]:
    cluster = Cluster.from_objects(gpu_fleet())
    devices = [(s.spec.driver, d) for s in cluster.slices for d in s.spec.devices]
    selectors = [compile_expression(e, expect_bool=True) for e in FLEET_SELECTORS]
    derived = [compile_expression(e) for _, e in FLEET_DERIVED]
    return devices, selectors, derived


def precompute(
    devices: Devices,
    selectors: list[Program],
    derived: list[Program],
    evaluate_bool: Callable[[Program, DeviceView], bool],
    evaluate: Callable[[Program, DeviceView], object],
) -> int:
    """Candidates and their derived values; returns the number of candidates."""
    gates = FeatureGates()
    candidates = 0
    for driver, device in devices:
        view = device_view(driver, device, gates)
        if view.driver != "gpu.example.com":
            continue  # the class selector, a plain string compare in both variants
        if all(evaluate_bool(p, view) for p in selectors):
            candidates += 1
            for p in derived:
                evaluate(p, view)
    return candidates


def test_naive_per_device(benchmark, fleet) -> None:
    devices, selectors, derived = fleet
    calls = [0]

    def evaluate_bool(p: Program, view: DeviceView) -> bool:
        calls[0] += 1
        return p.evaluate_bool(view)

    def evaluate(p: Program, view: DeviceView) -> object:
        calls[0] += 1
        return p.evaluate(view)

    benchmark.group = GROUP
    n = benchmark.pedantic(precompute, args=(devices, selectors, derived, evaluate_bool, evaluate), rounds=5)
    benchmark.extra_info.update({"devices": len(devices), "candidates": n, "evaluations": calls[0] // 5})


def test_cached_per_signature(benchmark, fleet) -> None:
    devices, selectors, derived = fleet

    def run() -> int:
        cache = EvalCache()  # a fresh cache every round: the cost of a cold precompute
        out = precompute(devices, selectors, derived, cache.evaluate_bool, cache.evaluate)
        benchmark.extra_info.update({"evaluations": cache.stats.misses, "hits": cache.stats.hits})
        return out

    benchmark.group = GROUP
    n = benchmark.pedantic(run, rounds=5, iterations=1)
    benchmark.extra_info.update({"devices": len(devices), "candidates": n})
