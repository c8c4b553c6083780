"""Run the allocator benchmarks once and report them: table, plot, docs section.

Usage: `python -m benchmarks.report` (from the repository root) runs
`pytest benchmarks/test_bench_allocators.py --benchmark-json=...` in a subprocess, computes
per workload and level (end-to-end, core) the ratio CP-SAT time / reference time and the
placed claims from that one run, prints a table, writes `docs/benchmarks-allocators.png`
and rewrites the "Allocators" section of `docs/benchmarks.md` (other sections are kept).
`--json FILE` reuses an earlier run's JSON instead of running the benchmarks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = "benchmarks/test_bench_allocators.py"
DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "benchmarks-allocators.png"
SECTION = "Allocators"
LEVELS = ("end-to-end", "core")


@dataclass
class Side:
    median: float
    rounds: int
    info: dict[str, Any]


@dataclass
class Row:
    key: str
    workload: str
    level: str
    sides: dict[str, Side] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.sides["cpsat"].median / self.sides["reference"].median

    def info(self, allocator: str, name: str, default: Any = None) -> Any:
        return self.sides[allocator].info.get(name, default)


def run_json(bench: str) -> dict[str, Any]:
    """Run one benchmark file once (subprocess pytest) and return its --benchmark-json data."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            bench,
            "-q",
            "-p",
            "no:cacheprovider",
            f"--benchmark-json={out}",
        ]
        print("$", " ".join(cmd[2:]), flush=True)
        subprocess.run(cmd, cwd=ROOT, check=True)
        return json.loads(out.read_text())


def rows_of(data: dict[str, Any]) -> list[Row]:
    rows: dict[tuple[str, str], Row] = {}
    for b in data["benchmarks"]:
        info = b["extra_info"]
        row = rows.setdefault((info["key"], info["level"]), Row(info["key"], info["workload"], info["level"]))
        row.sides[info["allocator"]] = Side(b["stats"]["median"], b["stats"]["rounds"], info)
    return [
        rows[k]
        for k in sorted(rows, key=lambda k: (k[0], LEVELS.index(k[1])))
        if set(rows[k].sides) == {"reference", "cpsat"}
    ]


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:,.3f} ms" if ms < 1 else f"{ms:,.1f} ms" if ms < 1000 else f"{seconds:,.2f} s"


def _placed(row: Row) -> str:
    ref, cp = row.info("reference", "placed"), row.info("cpsat", "placed")
    claims = row.info("cpsat", "claims")
    text = f"{ref} / {cp} of {claims}"
    if row.info("cpsat", "capacity_optimum") is not None:
        text += f" (fits by capacity: {row.info('cpsat', 'capacity_optimum')})"
    return text


def _notes(row: Row) -> str:
    notes = []
    if row.info("reference", "status") == "gave up":
        notes.append(f"reference gave up after {row.info('reference', 'steps'):,} steps")
    elif row.info("reference", "steps") is not None:
        notes.append(f"reference {row.info('reference', 'steps'):,} steps")
    notes.append(f"CP-SAT {row.info('cpsat', 'status')}")
    stages = row.info("cpsat", "stage_status")
    if stages and row.info("cpsat", "status") != "OPTIMAL":
        notes.append("proven: " + ", ".join(k for k, v in stages.items() if v == "OPTIMAL"))
    return "; ".join(notes)


def table(rows: list[Row]) -> str:
    head = (
        "| workload | level | reference | CP-SAT | CP-SAT / reference | per claim: ref / CP-SAT | "
        "placed: ref / CP-SAT | notes |\n|---|---|---:|---:|---:|---:|---|---|"
    )
    lines = [head]
    for r in rows:
        ref, cp = r.sides["reference"], r.sides["cpsat"]
        claims = r.info("cpsat", "claims") or 1
        lines.append(
            f"| ({r.key}) {r.workload} | {r.level} | {_ms(ref.median)} | {_ms(cp.median)} | {r.ratio:.2f}x | "
            f"{_ms(ref.median / claims)} / {_ms(cp.median / claims)} | {_placed(r)} | {_notes(r)} |"
        )
    return "\n".join(lines)


def targets(rows: list[Row]) -> list[str]:
    by = {(r.key, r.level): r for r in rows}
    out = []
    if ("a", "end-to-end") in by and ("a", "core") in by:
        parts = []
        for level in LEVELS:
            r = by[("a", level)]
            cp = r.sides["cpsat"].median
            ok = r.ratio <= 20 and cp < 0.05
            parts.append(f"{level}: {r.ratio:.1f}x the reference, {_ms(cp)} — {'met' if ok else 'not met'}")
        out.append(
            "(a) one_big_claim — CP-SAT within 20x the reference's time and under 50 ms: "
            + "; ".join(parts)
            + "."
        )
    if ("b", "end-to-end") in by:
        r = by[("b", "end-to-end")]
        opt, cp = r.info("cpsat", "capacity_optimum"), r.info("cpsat", "placed")
        ref = r.info("reference", "placed")
        verdict = "met" if cp == opt and ref < opt else "not met"
        out.append(
            f"(b) shared_memory — CP-SAT places every claim that fits by capacity ({cp} of the {opt} "
            f"that fit, out of {r.info('cpsat', 'claims')}), where the reference strands capacity "
            f"({ref} placed one by one): {verdict}. Time: {_ms(r.sides['cpsat'].median)} vs "
            f"{_ms(r.sides['reference'].median)} end-to-end."
        )
    if ("d", "end-to-end") in by and ("d", "core") in by:
        parts = []
        for level in LEVELS:
            r = by[("d", level)]
            ref, cp = r.sides["reference"], r.sides["cpsat"]
            how = "giving up after" if r.info("reference", "status") == "gave up" else "taking"
            steps = r.info("reference", "steps")
            parts.append(
                f"{level}: CP-SAT {_ms(cp.median)} ({r.info('cpsat', 'status')}) vs the reference "
                f"{how} {steps:,} steps in {_ms(ref.median)}, {1 / r.ratio:.0f}x faster"
            )
        out.append(
            "(d) hard_list_match (one claim) — CP-SAT far faster per claim than the reference: "
            + "; ".join(parts)
            + "."
        )
    return out


def plot(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"({r.key}) {r.workload}\n{r.level}" for r in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(11, 4.8))
    width = 0.38
    ref = [r.sides["reference"].median * 1000 for r in rows]
    cp = [r.sides["cpsat"].median * 1000 for r in rows]
    ax.bar([x - width / 2 for x in xs], ref, width, label="reference (first fit)", color="#8c8c8c")
    bars = ax.bar([x + width / 2 for x in xs], cp, width, label="CP-SAT", color="#2b6cb0")
    for bar, r in zip(bars, rows, strict=True):
        ax.annotate(
            f"{r.ratio:.2g}x",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    for x, r in zip(xs, rows, strict=True):
        if r.info("reference", "status") == "gave up":
            ax.annotate(
                "gave up", (x - width / 2, ref[x]), ha="center", va="bottom", fontsize=8, color="#b00"
            )
    ax.set_yscale("log")
    ax.set_ylabel("median time (ms, log scale)")
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_title("Reference vs CP-SAT allocator (label: CP-SAT time / reference time)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def section(rows: list[Row], data: dict[str, Any]) -> str:
    mi = data.get("machine_info", {})
    cpu = mi.get("cpu", {})
    when = datetime.fromisoformat(data["datetime"]).strftime("%Y-%m-%d %H:%M UTC")
    rounds: dict[str, set[str]] = {}
    for r in rows:
        ref, cp = r.sides["reference"].rounds, r.sides["cpsat"].rounds
        text = f"{ref}" if ref == cp else f"{ref} (reference) / {cp} (CP-SAT)"
        rounds.setdefault(f"({r.key})", set()).add(text)
    rounds_text = ", ".join(f"{k} {' and '.join(sorted(v))}" for k, v in sorted(rounds.items()))
    lines = [
        f"## {SECTION}",
        "",
        "Reference allocator (upstream's first fit) vs the CP-SAT allocator on the workloads of "
        "`benchmarks/workloads.py`, same input, measured in one run of "
        f"`{BENCH}` (pytest-benchmark: median time; rounds — {rounds_text}). For (d) the reference's "
        "time is the time until it gives up, CP-SAT's the time to a proven optimal allocation.",
        "",
        f"Run on {when} with `python -m benchmarks.report`; machine: {cpu.get('count', '?')} cores "
        f"({cpu.get('brand_raw', mi.get('processor', '?'))}), Python {mi.get('python_version', '?')}, "
        f"OR-Tools {version('ortools')}, CP-SAT with one worker and a deterministic 10 s budget.",
        "",
        "- *end-to-end*: `dra_solver.allocate(...)` — precompute, allocator, results, independent check; for "
        "CP-SAT the bounded reference runs first as the hint. For (b) `dra_solver.plan` with each "
        "claim its own pod: the reference places the 100 claims one by one (first fit), CP-SAT "
        "maximises the placed claims hinted with that answer.",
        "- *core*: the search alone on a prebuilt Problem — `allocate_reference(problem)` vs "
        "`solve(problem, hint=reference answer)`; for (b) the reference's core is the one-by-one loop "
        "(each claim's Problem is rebuilt, as it sees the earlier placements; warm CEL cache).",
        '- (b) "fits by capacity" is an exact bin-packing optimum computed in the benchmark, '
        "independently of both allocators.",
        "",
        table(rows),
        "",
        "![Reference vs CP-SAT](benchmarks-allocators.png)",
        "",
        "Issue targets, as measured:",
        "",
        *[f"- {t}" for t in targets(rows)],
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, path: Path = DOC, name: str = SECTION) -> None:
    """Replace the section `## name` (heading to the next `## ` heading) or add it."""
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: text.rstrip("\n") + "\n\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    path.write_text(doc.rstrip("\n") + "\n")


def write_report(bench: str, section: Callable[[dict[str, Any]], str], name: str) -> int:
    """Run one benchmark file, render its section and write it into docs/benchmarks.md: the
    whole `main` of a one-section report script (`report_cel`, `report_aggregated`, ...)."""
    text = section(run_json(bench))
    print(text)
    write_section(text, name=name)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="reuse this --benchmark-json file instead of running")
    parser.add_argument("--no-docs", action="store_true", help="print only; write neither plot nor docs")
    args = parser.parse_args(argv)
    data = run_json(BENCH) if args.json is None else json.loads(args.json.read_text())
    rows = rows_of(data)
    print(table(rows))
    print()
    for t in targets(rows):
        print("-", t)
    if not args.no_docs:
        plot(rows, PLOT)
        write_section(section(rows, data))
        print(f"\nwrote {PLOT.relative_to(ROOT)} and the {SECTION!r} section of {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
