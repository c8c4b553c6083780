"""Run the CEL precompute benchmark once and report it in docs/benchmarks.md.

Usage: `python -m benchmarks.report_cel` (from the repository root) runs
`pytest benchmarks/test_bench_cel.py --benchmark-json=...` in a subprocess and rewrites the
"CEL precompute" section of `docs/benchmarks.md` with the ratio naive / cached from that run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchmarks.report import write_report

BENCH = "benchmarks/test_bench_cel.py"
SECTION = "CEL precompute"


INTRO = """Issue 3's fleet (`benchmarks/workloads.py::gpu_fleet`): 1,000 nodes x 8 GPUs
(3 models, 2 memory sizes) + 1,000 NICs, 4 selector expressions (quantity and semver
functions among them) and 2 derived attributes on the candidates. Both variants start from
the same device objects, build each device's CEL view and evaluate; *naive* evaluates every
program on every device, *cached* evaluates each program once per device signature (the
parts of the device it reads)."""

WHY = """The issue's 50x target is **not met**. It assumed cel-python's interpreter as the naive
baseline (the issue measured about 2,300 evaluations/s for a three-clause selector).
dra-solver evaluates CEL with its own compiled evaluator on cel-python's parser; while it was
built it measured about 190,000-265,000 evaluations/s for such a selector on this machine
(cel-python's InterpretedRunner about 1,100/s in the same measurement). The naive path is
therefore already fast, and what remains in both variants is building the devices' CEL
views and looking up signatures; the cache cuts the real evaluations to a handful."""


def section(data: dict[str, Any]) -> str:
    by_name = {b["name"]: b for b in data["benchmarks"]}
    naive, cached = by_name["test_naive_per_device"], by_name["test_cached_per_signature"]
    n_med, c_med = naive["stats"]["median"], cached["stats"]["median"]
    n_info, c_info = naive["extra_info"], cached["extra_info"]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rounds = f"naive {naive['stats']['rounds']} round(s), cached {cached['stats']['rounds']}"
    target = "under" if c_med < 1 else "over"
    return "\n".join(
        [
            f"## {SECTION}",
            "",
            INTRO,
            "",
            f"Measured in one run of `{BENCH}` (median; {rounds}), {when}, 2 cores.",
            "",
            "| variant | median | CEL evaluations | devices | candidates |",
            "|---|---:|---:|---:|---:|",
            f"| naive per device | {n_med * 1000:.1f} ms | {n_info['evaluations']} "
            f"| {n_info['devices']} | {n_info['candidates']} |",
            f"| cached per signature | {c_med * 1000:.1f} ms | {c_info['evaluations']} "
            f"(cache hits: {c_info['hits']}) | {c_info['devices']} | {c_info['candidates']} |",
            "",
            f"Ratio naive / cached: **{n_med / c_med:.1f}x**; cached precompute {c_med * 1000:.0f} ms "
            f"({target} the 1 s target).",
            "",
            WHY,
            "",
        ]
    )


def main() -> int:
    return write_report(BENCH, section, SECTION)


if __name__ == "__main__":
    raise SystemExit(main())
