"""Issue #30's curve: table, growth and plot of plan time and peak memory over 1k-50k pods.

Usage: `python -m benchmarks.report_scale_curve` runs `benchmarks/test_bench_scale_curve.py`
(pytest-benchmark, each point a fresh process) and writes `docs/img/scale-curve.png`, the raw
points to `benchmarks/results/scale_curve.json` and the "Scale curve" section of
`docs/benchmarks.md`. `--json FILE` reuses a --benchmark-json file; `--points FILE` a JSON-lines
file of `scale_curve.run_point` results (points run one by one).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks.report import ROOT, run_json, write_section

BENCH = "benchmarks/test_bench_scale_curve.py"
PLOT = ROOT / "docs" / "img" / "scale-curve.png"
RAW = ROOT / "benchmarks" / "results" / "scale_curve.json"
SECTION = "Scale curve"


def points_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(b["extra_info"]) for b in data["benchmarks"]]


def _cli(point: dict[str, Any]) -> bool:
    """An end-to-end point (`scale_curve.cli_point`: the CLI, reading and writing included)."""
    return point.get("mode") == "cli"


def e2e_table(points: list[dict[str, Any]]) -> str:
    """The end-to-end points: `dra-solver plan FILE`, wall and CPU seconds, the plan's numbers."""
    rows = [
        "| shape | pods / nodes | input / output | `dra-solver plan FILE`: wall (CPU) | placed "
        "| status, objective, bound, gap | peak RSS | load avg |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for p in sorted(points, key=lambda p: (_shape(p), p["pods"])):
        size = f"{_shape(p)} | {p['pods']:,} / {p['nodes']:,}"
        if not p.get("finished"):
            rows.append(f"| {size} | | not finished in {p['timeout_seconds']:.0f} s | | | | |")
            continue
        keys = ("status", "objective", "bound", "gap")
        plan = ", ".join(_fmt(p.get(k)) for k in keys if p.get(k) is not None)
        rows.append(
            f"| {size} | {p['input_mib']:.0f} / {p['output_mib']:.0f} MiB | {p['cli_seconds']:.1f} s "
            f"({p['cli_cpu_seconds']:.1f} s) | {_fmt(p.get('placed'))} | {plan} | {p['peak_rss_mib']:,} MiB "
            f"| {p['load_average']} |"
        )
    return "\n".join(rows)


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.1f}{unit}"
    if isinstance(v, int):
        return f"{v:,}{unit}"
    return str(v)


def _shape(point: dict[str, Any]) -> str:
    """The point's generator (`scale_curve.SHAPES`); points from before the second shape are `mixed`."""
    return str(point.get("shape", "mixed"))


def growth(points: list[dict[str, Any]], allocator: str, key: str, shape: str = "mixed") -> list[str]:
    """Log-log slopes of `key` between consecutive finished points: 1 is linear, 2 quadratic."""
    mine = sorted(
        (
            p
            for p in points
            if p["allocator"] == allocator and p.get("finished") and _shape(p) == shape and not _cli(p)
        ),
        key=lambda p: p["pods"],
    )
    out = []
    for a, b in zip(mine, mine[1:], strict=False):
        if a.get(key) and b.get(key):
            slope = math.log(b[key] / a[key]) / math.log(b["pods"] / a["pods"])
            out.append(f"{a['pods'] // 1000}k→{b['pods'] // 1000}k: {slope:.2f}")
    return out


def table(points: list[dict[str, Any]]) -> str:
    points = [p for p in points if not _cli(p)]
    head = (
        "| shape | pods / nodes | allocator | plan (first fit, classes, aggregated model incl. classes) "
        "| load + validate | placed (first fit) | status, bound, gap | peak RSS | load avg |\n"
        "|---|---|---|---:|---:|---:|---|---:|---:|"
    )
    rows = [head]
    for p in sorted(points, key=lambda p: (_shape(p), p["pods"], p["allocator"] != "reference")):
        size = f"{_shape(p)} | {p['pods']:,} / {p['nodes']:,}"
        if not p.get("finished"):
            rows.append(
                f"| {size} | {p['allocator']} | not finished in {p['timeout_seconds']:.0f} s | | | | | |"
            )
            continue
        ran = p.get("first_fit_seconds") is not None  # None: the model proved its plan first
        parts = [f"{p['first_fit_seconds']:.1f} s" if ran else "first fit not run"]
        if p.get("classes_time") is not None:
            parts += [f"{p['classes_time']:.1f} s", f"{p['model_time']:.1f} s"]
        status = (
            ", ".join(_fmt(p.get(k)) for k in ("status", "bound", "gap")) if p.get("status") else "first fit"
        )
        cpu = f", CPU {p['plan_cpu_seconds']:.1f} s" if p.get("plan_cpu_seconds") is not None else ""
        first = f"{p['reference_placed']:,}" if ran else "not run"
        rows.append(
            f"| {size} | {p['allocator']} | {p['plan_seconds']:.1f} s{cpu} ({', '.join(parts)}) "
            f"| {p['load_seconds'] + p['validate_seconds']:.1f} s "
            f"| {p['placed']:,} ({first}) "
            f"| {status} | {p['peak_rss_mib']:,} MiB | {p['load_average']} |"
        )
    return "\n".join(rows)


def plot(points: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [p for p in points if not _cli(p)]
    fig, (t_ax, m_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = {"reference": "#8c8c8c", "cpsat": "#2b6cb0"}
    lines = {"mixed": "o-", "skewed": "s--"}
    for alloc, shape in ((a, s) for s in lines for a in ("reference", "cpsat")):
        mine = sorted(
            (p for p in points if p["allocator"] == alloc and p.get("finished") and _shape(p) == shape),
            key=lambda p: p["pods"],
        )
        if not mine:
            continue
        xs = [p["pods"] for p in mine]
        label = ("reference (first fit)" if alloc == "reference" else "CP-SAT") + f", {shape}"
        t_ax.plot(xs, [p["plan_seconds"] for p in mine], lines[shape], color=colors[alloc], label=label)
        m_ax.plot(xs, [p["peak_rss_mib"] for p in mine], lines[shape], color=colors[alloc], label=label)
        for p in points:
            if p["allocator"] == alloc and _shape(p) == shape and not p.get("finished"):
                t_ax.plot([p["pods"]], [p["timeout_seconds"]], "x", color=colors[alloc], markersize=10)
    t_ax.axhline(60, color="#b00", lw=0.8, ls="--")
    t_ax.annotate("goal 60 s", (1000, 60), color="#b00", fontsize=8, va="bottom")
    m_ax.axhline(4096, color="#b00", lw=0.8, ls="--")
    m_ax.annotate("goal 4 GiB", (1000, 4096), color="#b00", fontsize=8, va="bottom")
    for ax, title, unit in ((t_ax, "plan time (x: not finished)", "s"), (m_ax, "peak RSS", "MiB")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("pending pods (nodes = pods / 5)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Heterogeneous clusters (workloads.py mixed_cluster, skewed_cluster), one process per point")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def section(points: list[dict[str, Any]], note: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SECTION}",
        "",
        "Issue 30's heterogeneous cluster (`benchmarks/workloads.py::mixed_cluster`): nodes of four kinds "
        "(25 % 8-GPU nodes with a NIC per NUMA node, 35 % 4-GPU nodes, 20 % nodes of 4 partitionable "
        "GPUs — whole or two halves, counters — and 20 % nodes with one small accelerator) and 5 pending "
        "Pods per node, each with one claim from a ResourceClaimTemplate of its shape (1/2/4/8 GPUs, "
        "2 GPUs + the NIC of their NUMA node and 4 GPUs on one NUMA node by matchAttribute, half a GPU, "
        "the accelerator) and a PriorityClass of value 0-3; about twice the GPUs that exist are asked "
        "for. A second shape, `skewed_cluster`, has the same device kinds in other proportions and "
        "layouts (10 % 8-GPU nodes with 4 NUMA nodes of 2 GPUs and a NIC, 15 % 4-GPU nodes, 45 % nodes "
        "of 8 partitionable GPUs, 30 % nodes with 2 accelerators; half GPUs and single devices first, "
        "priorities weighted 50/30/15/5), so that no single shape is what the numbers are tuned on. "
        "One `dra_solver.plan` per point, each in a fresh process "
        "(`benchmarks/scale_curve.py`, `benchmarks/test_bench_scale_curve.py`), CP-SAT time limit 60 s; "
        "*plan* is the whole call (resolving, first fit, the allocator, results, the checker), load and "
        "validation apart; peak RSS is the point's process.",
        "",
        f"Run on {when} with `python -m benchmarks.report_scale_curve`; machine: {note}; Python "
        f"{platform.python_version()}, OR-Tools {version('ortools')}. Raw points: "
        "`benchmarks/results/scale_curve.json`.",
        "",
        table(points),
        "",
        "![Plan time and peak memory over 1k-50k pods](img/scale-curve.png)",
        "",
        "Growth (log-log slope of plan time between consecutive points; 1 is linear, 2 quadratic):",
        "",
    ]
    ends = [p for p in points if _cli(p)]
    if ends:
        lines[-3:-3] = [
            "",
            "End to end (issue 40 §1's goal: <= 60 s for 10,000 nodes / 50,000 pods on both shapes, the "
            "CLI with reading and writing): `dra-solver plan FILE` with the default options in a child "
            "process, the input written beforehand, the plan to a file (`scale_curve.cli_point`); CPU is "
            "the child's user + system time, the figure to read on a shared machine:",
            "",
            e2e_table(ends),
        ]
    for shape in sorted({_shape(p) for p in points}):
        for alloc in ("reference", "cpsat"):
            t = growth(points, alloc, "plan_seconds", shape)
            m = growth(points, alloc, "peak_rss_mib", shape)
            lines.append(
                f"- {shape}, {alloc}: time {', '.join(t) or 'n/a'}; peak RSS {', '.join(m) or 'n/a'}"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="a --benchmark-json file of test_bench_scale_curve.py")
    parser.add_argument("--points", type=Path, help="a JSON-lines file of scale_curve.run_point results")
    parser.add_argument(
        "--note", default="2 cores (AMD EPYC), shared with other work", help="the machine, in words"
    )
    parser.add_argument("--extra", default="", help="text added after the generated section")
    args = parser.parse_args(argv)
    if args.points is not None:
        points = [json.loads(line) for line in args.points.read_text().splitlines() if line.strip()]
    else:
        points = points_of(run_json(BENCH) if args.json is None else json.loads(args.json.read_text()))
    RAW.parent.mkdir(parents=True, exist_ok=True)
    RAW.write_text(json.dumps(points, indent=1) + "\n")
    plot(points, PLOT)
    text = section(points, args.note) + (("\n" + args.extra.strip() + "\n") if args.extra else "")
    print(text)
    write_section(text, name=SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
