"""Run the aggregated-plan benchmark once and report it in docs/benchmarks.md ("Plan at scale").

Usage: `python -m benchmarks.report_aggregated` (from the repository root).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchmarks.report import write_report

BENCH = "benchmarks/test_bench_aggregated.py"
SECTION = "Plan at scale"
TARGETS = {
    "a-500x10-5000": "plan <= 10 s",
    "b-250x8-1500": "count optimum <= 20 s",
    "c-20x4x80Gi-300": "proven optimum <= 5 s",
    "c-200x4x80Gi-3000": "report",
    "d-1000x2numa-4000": "<= 120 s, gap reported",
    "f-500x8-held-2000": "proven optimum <= 30 s",
    "f-500x8-scattered-2000": "proven optimum <= 30 s",
}


def section(data: dict[str, Any]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SECTION}",
        "",
        "Issue 10's workloads (`benchmarks/workloads.py`: `sized_claims`, `shared_gpus`, `numa_gpu_nic`), "
        "planned by "
        "`Cpsat().improve` with the aggregated model (`solver.planners.aggregated.master`) "
        "from an empty first-fit plan: "
        "classes, pattern generation, master model, expansion to devices and the checker, wall clock. "
        f"One run of `{BENCH}`, {when}, 2 cores (load: the 1-minute load average when the run ended; "
        "other work on the machine slows it). First fit itself is not included.",
        "",
        "| workload | target | time | placed | status | objective | bound | gap | pod/node classes | load |",
        "|---|---|---:|---:|---|---:|---:|---:|---|---:|",
    ]
    for b in sorted(data["benchmarks"], key=lambda b: b["params"]["case"]):
        case, info = b["params"]["case"], b["extra_info"]
        lines.append(
            f"| {case} | {TARGETS.get(case, '')} | {b['stats']['median']:.1f} s | {info['placed']} | "
            f"{info['status']} | {info['objective']} | {info['bound']} | {info['gap']} | "
            f"{info['pod_classes']} / {info['node_classes']} | {info.get('load', '')} |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    return write_report(BENCH, section, SECTION)


if __name__ == "__main__":
    raise SystemExit(main())
