"""Run the re-planning benchmark once and report it in docs/benchmarks.md ("Re-planning").

Usage: `python -m benchmarks.report_planner_update` (from the repository root), or
`python -m benchmarks.report_planner_update --json FILE...` to report saved
`--benchmark-json` runs of `benchmarks/test_bench_planner_update.py` (one table each: e.g. a
CP-SAT run at a smaller size with fresh plans, and a first-fit run at the goal's size).
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.report import run_json, write_section

BENCH = "benchmarks/test_bench_planner_update.py"
SECTION = "Re-planning"
GOAL = "1.0%"
CLUSTER_NAMES = {
    "churn": "`churn.heterogeneous`",
    "mixed": "`workloads.mixed_cluster`",
    "skewed": "`workloads.skewed_cluster`",
}
"""How each cluster of `churn.CLUSTERS` is named in the report."""


def by_cluster(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A `--benchmark-json` run split per cluster (`extra_info["shape"]`; runs before the
    clusters were named are `churn`'s), in the order the run met them."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for b in data["benchmarks"]:
        groups.setdefault(b["extra_info"].get("shape", "churn"), []).append(b)
    return [{**data, "benchmarks": bs} for bs in groups.values()]


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def _num(value: Any, fmt: str, unit: str = "") -> str:
    return "—" if value is None else f"{value:{fmt}}{unit}"


def _local(info: dict[str, Any]) -> str:
    """The local re-solve's part of an update: region nodes, weight gained, wall seconds."""
    if info.get("local_nodes") is None:
        return "—"
    seconds = _num(info.get("local_seconds"), ".2f", " s")
    if str(info.get("local_status", "")).startswith("not re-solved: no region node"):
        return f"{info['local_nodes']}, skipped (no gain possible), {seconds}"
    return f"{info['local_nodes']}, +{info.get('local_gain') or 0}, {seconds}"


def _run(data: dict[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """One benchmark run: its plan line and table, and its 1 % row (for the goals)."""
    rows = {b["extra_info"]["step"]: b for b in data["benchmarks"]}
    first = rows["plan"]
    info0 = first["extra_info"]
    allocator = rows[next(s for s in rows if s != "plan")]["extra_info"].get("allocator", "cpsat")
    how = "CP-SAT, aggregated model" if allocator == "cpsat" else "first fit"
    cpu0 = info0.get("cpu_seconds")
    # A run whose updates record no local re-solve is one of the code before it (first fit
    # only): shown for comparison, never counted against the goals.
    before = allocator == "cpsat" and all(
        "local_nodes" not in b["extra_info"] for s, b in rows.items() if s != "plan"
    )
    shape = info0.get("shape", "churn")
    size = info0["size"].replace("x", " nodes / ")
    title = f"### {CLUSTER_NAMES.get(shape, shape)}: {size} pods, first plan by {how}"
    if before:
        title += ", updates by first fit only (before the local re-solve)"
    lines = [
        title,
        "",
        f"Plan: {first['stats']['median']:.1f} s wall{'' if cpu0 is None else f' ({cpu0:.1f} s CPU)'}, "
        f"of which preparing the first-fit run for updates {info0['warm_seconds']:.1f} s; "
        f"{info0['placed']:,} of {info0['pods']:,} pods placed, weight {info0['weight']:,}, "
        f"{info0['status']} (bound {info0['bound']:,}); loading the objects {info0['load_seconds']:.1f} s; "
        f"peak RSS {info0['peak_rss_mib']:,} MiB.",
        "",
        "| churn | removed / added | update: wall (CPU) | load | fresh plan: wall (CPU) "
        "| speedup: wall (CPU) | moved (share of placed) | weight: update / fresh | ratio "
        "| update status (bound) "
        "| fresh status (bound) | local re-solve: nodes, gain, wall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    goal: dict[str, Any] | None = None
    for step, b in rows.items():
        if step == "plan":
            continue
        i = b["extra_info"]
        seconds = b["stats"]["median"]
        if step.endswith(GOAL):
            goal = {**i, "seconds": seconds, "shape": shape}
        cpu, fresh_cpu = i.get("update_cpu_seconds"), i.get("fresh_cpu_seconds")
        fresh = i.get("fresh_seconds")
        speed = "—"
        if fresh is not None:
            speed = f"{i['speedup']:,.0f}x"
            if cpu is not None and fresh_cpu is not None:
                speed += f" ({fresh_cpu / max(cpu, 1e-9):,.0f}x)"
        fresh_weight = i.get("fresh_weight")
        lines.append(
            f"| {step.removeprefix('update ')} | {i['removed']} / {i['added']} | {seconds:.2f} s "
            f"({_num(cpu, '.2f', ' s')}) | {_num(i.get('load_1min'), '.1f')} | "
            f"{_num(fresh, '.1f', ' s')} ({_num(fresh_cpu, '.1f', ' s')}) | {speed} | "
            f"{i['moved']} ({i['moved_share']:.2%}) | {i['weight']:,} / {_num(fresh_weight, ',')} | "
            f"{_num(i.get('weight_ratio'), '.4%')} | {i['status']} ({i['bound']:,}) | "
            f"{i.get('fresh_status') or '—'} ({_num(i.get('fresh_bound'), '')}) | {_local(i)} |"
        )
    lines.append("")
    if before:
        lines += [
            "A run of the code before the local re-solve (the update is incremental first fit only), "
            "on the same cluster and churn, for comparison; not counted against the goals below.",
            "",
        ]
        return lines, None
    if goal is not None and goal.get("fresh_seconds") is None:
        ratio = first["stats"]["median"] / max(goal["seconds"], 1e-9)
        lines += [
            "No fresh plan after the updates in this run (`DRA_BENCH_PLANNER_FRESH=0`: each would take "
            f"about as long as the first plan). For scale only: the first plan — {how}, of the cluster "
            f"before the updates — took {first['stats']['median']:.1f} s wall, {ratio:,.0f}x the 1 % "
            "update's wall time; that is not the goal's ratio (a fresh plan of the changed cluster, "
            "measured in the same run).",
            "",
        ]
    if info0["status"] != "OPTIMAL" and allocator == "cpsat":
        lines += [
            f"The first plan was not proven ({info0['status']}, weight {info0['weight']:,}, bound "
            f"{info0['bound']:,}); every update started from it, while the fresh plans were planned on "
            "their own: the weight ratio measures the starting plan as much as the update.",
            "",
        ]
    return lines, goal


def section(runs: list[dict[str, Any]]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    lines = [
        f"## {SECTION}",
        "",
        "`dra_solver.Planner` (issue 30 §2, issue 40 §1) on three heterogeneous clusters "
        "(`benchmarks/churn.py`, `CLUSTERS`): its own (8-GPU nodes with NUMA attributes and NICs, "
        "4-GPU nodes, accelerator nodes; pods of 1/2/4/8 GPUs, some with matchAttribute, or one "
        "accelerator; priorities 0-3; more pods than fit) and the scale curve's two generators "
        "(`workloads.mixed_cluster`, `workloads.skewed_cluster`: partitionable GPUs with counters, "
        "NICs matched by NUMA node, pods from ResourceClaimTemplates, in other proportions; an added "
        "pod copies a random pod's template and priority). "
        "`Planner.plan()` once (then the first-fit run is kept and prepared for updates), then three "
        "updates in sequence — 1 %, 0.1 %, 10 % of the pods removed (with their claims) and as many "
        "new pods added — each followed, where the table has one, by a fresh `dra_solver.plan` of the "
        f"same changed cluster in the same process. Runs of `{BENCH}`, report written {when}; 2 cores "
        f"**shared with other work** (1-minute load {load:.1f} when the report was written; the load "
        "column is the load when each update started): wall time is CPU time plus waiting for a core, "
        "so both are given.",
        "",
    ]
    goals: dict[tuple[str, str], dict[str, Any]] = {}
    for data in (part for run in runs for part in by_cluster(run)):
        body, goal = _run(data)
        lines += body
        if goal is not None:
            at = (goal["shape"], goal["size"])
            goals.setdefault(at, goal)
            if goal.get("fresh_seconds") is not None:
                goals[at] = {**goals[at], **{k: goal[k] for k in _FRESH if k in goal}}
    lines += [
        "An update keeps the last plan's placements and places the new pods, and the pods that plan "
        "left out, by first fit on the room that is free. It costs what changed: the pods naming a "
        "changed object come from an index, a pod is tried only on the nodes not known to refuse its "
        "kind and those changed since, the pods left out only where room was released "
        "(`solver/replan/planner.py`, `firstfit.resumable.Resumable`). Then the local re-solve "
        "(`solver/replan/local.py`; the last column) plans the nodes the update reached again with "
        "the aggregated CP-SAT model — at most 32 nodes, their pods and the first pending pods, every "
        "other placement fixed, 0.25 deterministic seconds — and is taken only when it places more "
        "weight; the pods it moves are the *moved* column (only within groups of nodes that gain "
        'weight, `docs/semantics.md`, "Re-planning"). The update\'s bound chains from the last bound '
        "plus the weight of the added pods, so it is loose when added pods find no room: the update's "
        "status is FEASIBLE even where its weight equals the fresh plan's. The local re-solve runs "
        "only where a bound shows the region may hold more weight than it holds "
        "(`local.may_gain`: device counts per node, then over the region with pods free to move; "
        "the last column says *skipped* where it proved no gain possible, which costs milliseconds: "
        "the step forced there "
        "places the same weight — `tests/test_planner_local.py` compares the two plans on generated "
        "churn); where it runs it "
        "costs about the same whether it gains or not (the model's per-class capacities and its "
        "integer master, on the region's pods and the pending pods offered), so on small clusters, "
        "whose fresh plans take seconds, it is most of such an update.",
        "",
    ]
    for shape in dict.fromkeys(sh for sh, _ in goals):
        lines += _goals(shape, {size: g for (sh, size), g in goals.items() if sh == shape})
    return "\n".join(lines)


def _goals(shape: str, goals: dict[str, dict[str, Any]]) -> list[str]:
    """The growth, the ratios against a fresh plan and the goals of one cluster's 1 % rows."""
    name = CLUSTER_NAMES.get(shape, shape)
    lines: list[str] = []
    sized = sorted(
        (int(size.split("x")[1]), g["update_cpu_seconds"])
        for size, g in goals.items()
        if g.get("update_cpu_seconds")
    )
    if len(sized) >= 2:
        (p0, c0), (p1, c1) = sized[0], sized[-1]
        points = ", ".join(f"{c:.3f} s at {p:,} pods" for p, c in sized)
        lines += [
            f"{name}: growth of the 1 % update's CPU time with the cluster: {points} ({c1 / c0:.1f}x "
            f"the time for {p1 / p0:.0f}x the pods and nodes).",
            "",
        ]
    compared = [(size, g) for size, g in goals.items() if g.get("speedup") is not None]
    if compared:
        each = "; ".join(
            f"{size.replace('x', ' nodes / ')} pods: {g['speedup']:,.0f}x faster, weight "
            f"{g['weight_ratio']:.3%} of the fresh plan's ({_verdict(g['weight_ratio'] >= 0.999)} "
            "against 99.9 %)"
            for size, g in compared
        )
        lines += [f"{name}, against a fresh plan in the same run, at 1 % churn: {each}.", ""]
    full = goals.get("2000x10000")
    if full is None:
        lines += [f"{name}: goals at 1 % churn **not measured** at 2,000 nodes / 10,000 pods.", ""]
        return lines
    cpu = full.get("update_cpu_seconds")
    parts = [
        f"update <= 1 s: {full['seconds']:.2f} s wall ({_num(cpu, '.2f', ' s')} CPU, load "
        f"{_num(full.get('load_1min'), '.1f')}) — {_verdict(full['seconds'] <= 1)} by the wall clock, "
        f"{_verdict(cpu is not None and cpu <= 1)} by CPU time",
    ]
    if full.get("speedup") is not None:
        cpu_speed = full.get("cpu_speedup")
        parts.append(
            f">= 10x faster than a fresh plan: {full['speedup']:,.0f}x wall"
            f"{'' if cpu_speed is None else f', {cpu_speed:,.0f}x CPU'} — {_verdict(full['speedup'] >= 10)}"
        )
        parts.append(
            f"weight >= 99.9 % of the fresh plan's: {full['weight_ratio']:.3%} — "
            f"{_verdict(full['weight_ratio'] >= 0.999)}"
        )
    else:
        parts.append(">= 10x faster than a fresh plan, weight >= 99.9 % of it: **not measured** at this size")
    parts.append(
        f"moved <= 1 % of placed pods: {full['moved_share']:.2%} — {_verdict(full['moved_share'] <= 0.01)}"
    )
    lines += [
        f"{name}, goals at 1 % churn on 2,000 nodes / 10,000 pods (issues 30 §2, 40 §1), as measured: "
        f"{'; '.join(parts)}.",
        "",
    ]
    return lines


_FRESH = ("speedup", "cpu_speedup", "weight_ratio", "fresh_seconds", "fresh_weight")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--json", type=Path, nargs="+", help="report these --benchmark-json files instead of running"
    )
    args = parser.parse_args(argv)
    runs = [run_json(BENCH)] if args.json is None else [json.loads(p.read_text()) for p in args.json]
    text = section(runs)
    print(text)
    write_section(text, name=SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
