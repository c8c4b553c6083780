"""Issue #30's curve under pytest-benchmark: plan time and peak memory of the heterogeneous
cluster (`workloads.mixed_cluster`) at 1k, 5k, 10k, 25k and 50k pods (nodes = pods / 5), for
both allocators and both shapes (`scale_curve.SHAPES`: `mixed_cluster`, `skewed_cluster`), each
point in a fresh process (`scale_curve.run_point`); `SCALE_SHAPES=mixed` runs one shape.

What is timed: the whole point (load, validation, `dra_solver.plan` with resolving, first
fit, the allocator, results, the checker); the phases are in `extra_info`, with the plan's
numbers (placed, status, bound, gap) and the point's peak RSS. A point past its timeout is
recorded as not finished, not failed. Not a test (the suite collects `tests/` only). Run:
`pytest benchmarks/test_bench_scale_curve.py --benchmark-json=curve.json` (about an hour on
2 cores); `SCALE_SIZES=1000,5000` runs fewer points; `python -m benchmarks.report_scale_curve`
turns the JSON into the docs table and plot.

`test_end_to_end`: the issue #40 goal's measure, `dra-solver plan FILE` as a user runs it
(`scale_curve.cli_point`: reading, validating, planning, the checker and writing included) on
both shapes at `SCALE_E2E_SIZES` pods (default 50,000, the goal's 10,000 nodes / 50,000 pods).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from benchmarks.scale_curve import ALLOCATORS, SHAPES, SIZES, cli_point, run_point

GROUP = "scale-curve"
TIMEOUT = float(os.environ.get("SCALE_TIMEOUT", "1800"))
SHAPES_CHOSEN = tuple(os.environ["SCALE_SHAPES"].split(",")) if "SCALE_SHAPES" in os.environ else SHAPES
CHOSEN = tuple(int(s) for s in os.environ["SCALE_SIZES"].split(",")) if "SCALE_SIZES" in os.environ else SIZES
E2E = tuple(int(s) for s in os.environ.get("SCALE_E2E_SIZES", "50000").split(",") if s)


@pytest.mark.parametrize("allocator", ALLOCATORS)
@pytest.mark.parametrize("pods", CHOSEN)
@pytest.mark.parametrize("shape", SHAPES_CHOSEN)
def test_scale_curve(benchmark: Any, shape: str, pods: int, allocator: str) -> None:
    benchmark.group = GROUP
    out = benchmark.pedantic(
        lambda: run_point(pods, allocator, timeout=TIMEOUT, shape=shape), rounds=1, iterations=1
    )
    benchmark.extra_info.update(out)
    assert not out["finished"] or out["placed"] > 0


@pytest.mark.parametrize("pods", E2E)
@pytest.mark.parametrize("shape", SHAPES_CHOSEN)
def test_end_to_end(benchmark: Any, shape: str, pods: int, tmp_path: Any) -> None:
    benchmark.group = GROUP
    out = benchmark.pedantic(
        lambda: cli_point(pods, shape, timeout=TIMEOUT, workdir=tmp_path), rounds=1, iterations=1
    )
    benchmark.extra_info.update(out)
    assert not out["finished"] or (out["placed"] or 0) > 0
