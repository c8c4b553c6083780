"""Run the planner benchmarks once and report them in docs/benchmarks.md ("Planner" and
"First fit at scale" sections).

Usage: `python -m benchmarks.report_planner` (from the repository root).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchmarks.report import run_json, write_section

BENCH = "benchmarks/test_bench_planner.py"
SECTION = "Planner"
SCALE_BENCH = "benchmarks/test_bench_plan_scale.py"
SCALE_SECTION = "First fit at scale"


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


def scale_section(data: dict[str, Any]) -> str:
    """The issue-10 workloads with the reference planner: wall clock of one run each."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SCALE_SECTION}",
        "",
        "The reference planner (incremental first fit, `solver/planners/firstfit/`) on the issue-10 "
        'workloads of `benchmarks/workloads.py`: `dra_solver.plan(cluster, allocator="reference")` on a '
        "loaded Cluster — resolving pods and nodes, first fit, results and the checker on every placement. "
        f"Wall clock of one run of `{SCALE_BENCH}`, {when}, 2 cores (shared with other work: expect "
        "noise). *first fit* is the part spent in `FirstFit.plan`; loading the objects is not included; "
        "peak RSS is the benchmark process's peak so far (the rows run in one process, in this order).",
        "",
        "| workload | pods | placed | plan | pods/s | first fit | load | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b in data["benchmarks"]:
        info = b["extra_info"]
        seconds = b["stats"]["median"]
        placed = f"{info['placed']:,}"
        if info.get("count_optimum") is not None:
            placed += f" (count optimum {info['count_optimum']:,})"
        lines.append(
            f"| {info['workload']} | {info['pods']:,} | {placed} | {seconds:.2f} s | "
            f"{info['pods'] / seconds:,.0f} | {info['first_fit_seconds']:.2f} s | "
            f"{info['load_seconds']:.2f} s | {info['peak_rss_mib']:,} MiB |"
        )
    lines += [
        "",
        "Target (issue 10): the reference planner at >= 200 pods/s on (a), in both forms. "
        "First fit takes pods in input order, so on (b) and (f) it strands GPUs; the aggregated "
        'CP-SAT plan ("Plan at scale", same inputs) proves the optimum on both.',
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    text = section(run_json(BENCH))
    print(text)
    write_section(text, name=SECTION)
    scale = scale_section(run_json(SCALE_BENCH))
    print(scale)
    write_section(scale, name=SCALE_SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
