"""Run the planner benchmark once and report it in docs/benchmarks.md ("Planner" section).

Usage: `python -m benchmarks.report_planner` (from the repository root).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchmarks.report import run_json, write_section

BENCH = "benchmarks/test_bench_planner.py"
SECTION = "Planner"


def section(data: dict[str, Any]) -> str:
    rows = {b["params"]["allocator"]: b for b in data["benchmarks"]}
    ref, opt = rows["reference"], rows["cpsat"]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SECTION}",
        "",
        "Workload `benchmarks/workloads.py::pods_over_nodes`: 60 single-claim pods asking for 1-6 GPUs "
        "over 20 nodes with 8 GPUs each (more asked for than exist). `dra_solver.plan` with the "
        "reference (pods in order, each on the first node that fits) and with CP-SAT (one model over "
        f"all pods and nodes, hinted with the reference plan). One run of `{BENCH}`, median of 3, {when}, "
        "2 cores.",
        "",
        "| planner | median | pods placed | GPUs placed (of 160) | CP-SAT status |",
        "|---|---:|---:|---:|---|",
    ]
    for name, b in (("reference (first fit)", ref), ("CP-SAT", opt)):
        info = b["extra_info"]
        lines.append(
            f"| {name} | {b['stats']['median'] * 1000:.0f} ms | {info['placed']} of {info['pods']} | "
            f"{info['gpus_placed']} | {info['status']} |"
        )
    lines += [
        "",
        f"Ratio CP-SAT / reference time: {opt['stats']['median'] / ref['stats']['median']:.1f}x.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    text = section(run_json(BENCH))
    print(text)
    write_section(text, name=SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
