"""Issue #40 §3: the benchmark workloads give byte-identical output with two CPU-bound
processes beside them as without (`benchmarks.load_determinism`).

Per item (`load_determinism.ITEMS`: `plan` on three shapes — one cut by `--time-limit`, one
FEASIBLE —, `--preempt`, `--preempt --allow-moves`, a what-if, a `Planner.update` sequence):
the command in a fresh process as is, then again with two busy loops beside it; `extra_info`
has whether the outputs are identical (stdout byte for byte; stderr with its wall seconds
masked), the wall and CPU seconds of both runs, the burners' CPU seconds and the 1-minute load.
The assertion is the one that does not depend on the machine: identical output (and both runs
ended normally). Wall seconds are recorded, not asserted. Not a test (the suite collects
`tests/` only). Run: `pytest benchmarks/test_bench_load_determinism.py --benchmark-only
--benchmark-json=load.json`; `LOAD_ITEMS=preempt,update` runs fewer.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from benchmarks.load_determinism import ITEMS, compare

CHOSEN = tuple(os.environ["LOAD_ITEMS"].split(",")) if "LOAD_ITEMS" in os.environ else tuple(ITEMS)


@pytest.mark.parametrize("name", CHOSEN)
def test_load_determinism(benchmark: Any, name: str) -> None:
    benchmark.group = "load-determinism"
    row = benchmark.pedantic(lambda: compare(name), rounds=1, iterations=1)
    benchmark.extra_info.update(row)
    assert row["exit"][0] in (0, 2) and row["exit"][1] in (0, 2), row
    assert not row["source_changed"], "the package's source changed during the pair: not comparable"
    assert row["identical"], "\n".join(row.get("diff", []))
