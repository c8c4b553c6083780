"""Run the checker benchmark once and report it in docs/benchmarks.md ("Checker" section).

Usage: `python -m benchmarks.report_check` (from the repository root) runs
`pytest benchmarks/test_bench_check.py --benchmark-json=...` in a subprocess and rewrites the
section with that run's numbers: the checker's share of a first-fit plan (the fastest
planner, so the largest share), on the first plan of the process (cold: cel-python compiles
each selector and evaluates each kind of device once) and on the next two, and the time of
`check_cluster` on the cluster after the plan.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchmarks.report import write_report

BENCH = "benchmarks/test_bench_check.py"
SECTION = "Checker"


def section(data: dict[str, Any]) -> str:
    rows = {b["name"].split("[")[0]: b for b in data["benchmarks"]}
    share, audit = rows["test_checker_share_of_planning"], rows["test_audit_after_the_plan"]
    info = share["extra_info"]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            f"## {SECTION}",
            "",
            "Workload `benchmarks/test_bench_check.py::checked_fleet`: 40 nodes x 8 GPUs (Node objects "
            "with zone labels, allocatable cpu), 300 Pods with a claim each from one of two templates "
            "(one GPU >= 40Gi of model A100: quantity and string selectors; two GPUs on one NUMA node: "
            "semver selector and matchAttribute), half with a nodeSelector. `dra_solver.plan` with first "
            "fit (the fastest planner, so the checker's largest share) checks every allocator answer "
            "and the whole plan; the checker's calls are timed by wrapping them. The checker evaluates "
            "selectors with cel-python, each (expression, kind of device) once per process. "
            f"One run of `{BENCH}`, 3 rounds, {when}, 2 cores shared with other work.",
            "",
            "| measure | checker | plan | share |",
            "|---|---:|---:|---:|",
            f"| first plan of the process (cold caches) | {info['cold_checker_s'] * 1000:.0f} ms | "
            f"{info['cold_plan_s'] * 1000:.0f} ms | {info['cold_checker_share']:.0%} |",
            f"| the next 2 plans (mean) | {info['checker_s'] * 1000:.0f} ms | "
            f"{info['plan_s'] * 1000:.0f} ms | {info['checker_share']:.0%} |",
            f"| `check_cluster` on the cluster after the plan ({info['placed']} of {info['pods']} pods "
            f"placed), median of 3 | {audit['stats']['median'] * 1000:.0f} ms | | |",
            "",
            "For comparison, measured once on the same workload with the checker of commit 153fcc0 "
            "(selectors on our own CEL compiler, no placement rules): 29-36 ms of 198-263 ms per plan, "
            "14-15%. Evaluating with cel-python costs about 0.6 ms per (expression, device) against "
            "microseconds for our compiler, so the checker caches outcomes per (expression, what CEL "
            "can see of the device): identical devices on many nodes are evaluated once.",
            "",
        ]
    )


def main() -> int:
    return write_report(BENCH, section, SECTION)


if __name__ == "__main__":
    raise SystemExit(main())
