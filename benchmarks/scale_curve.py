"""Issue #30's curve: one plan of the heterogeneous cluster (`workloads.mixed_cluster`) per
size and allocator, each in a fresh process, timed by phase, with its peak memory.

Why a process per point: peak RSS (`ru_maxrss`) only ever grows, so a point measured after a
bigger one in the same process would report the bigger one's memory; and a point that does
not finish must not take the others with it (`run_point` stops it at its timeout).

Two shapes, so that no single one is what the numbers are tuned on (issue #40): `mixed`
(`workloads.mixed_cluster`) and `skewed` (`workloads.skewed_cluster`: the same device kinds in
other proportions and layouts, small low-priority requests first).

Run one point: `python -m benchmarks.scale_curve PODS ALLOCATOR [TIME_LIMIT [SHAPE]]` (nodes =
PODS / 5, SHAPE `mixed` by default) prints one JSON line.

End to end (issue #40 §1: the goal counts the CLI, loading included): `cli_point` writes the
cluster as YAML once, then times `dra-solver plan FILE` in a child process — reading,
validating, triage, planning, the checker and writing the plan (to a file) — by the wall
clock and by the child's CPU time (user + system), with its peak RSS and the summary line's
numbers. `python -m benchmarks.scale_curve cli PODS SHAPE` prints one such point.
`benchmarks/test_bench_scale_curve.py` runs the curve under pytest-benchmark;
`benchmarks/report_scale_curve.py` writes the table and the plot.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import verdict_info

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1_000, 5_000, 10_000, 25_000, 50_000)
"""Pods per point; nodes are a fifth of them (the issue's 50,000 pods / 10,000 nodes)."""
ALLOCATORS = ("reference", "cpsat")
SHAPES = ("mixed", "skewed")
"""Generators of the curve: `workloads.mixed_cluster` and `workloads.skewed_cluster`."""
TIME_LIMIT = 60.0
"""CP-SAT's budget per plan (`Options.time_limit`): the issue's goal is a plan within 60 s."""


def point(pods: int, allocator: str, time_limit: float = TIME_LIMIT, shape: str = "mixed") -> dict[str, Any]:
    """One plan in this process: generate, load, validate, plan; seconds per phase, the plan's
    numbers and the peak RSS."""
    from benchmarks.workloads import mixed_cluster, skewed_cluster
    from dra_solver import Cluster, plan
    from dra_solver.cel.checks import validate_all

    generate = {"mixed": mixed_cluster, "skewed": skewed_cluster}[shape]
    nodes = pods // 5
    t0 = time.perf_counter()
    objs = generate(nodes, pods)
    t1 = time.perf_counter()
    cluster = Cluster.from_objects(objs)
    del objs
    t2 = time.perf_counter()
    errors = validate_all(cluster)
    t3 = time.perf_counter()
    if errors:
        raise SystemExit(f"invalid workload: {errors[:3]}")
    c3 = _cpu()
    out = plan(cluster, allocator=allocator, time_limit=time_limit)
    t4, c4 = time.perf_counter(), _cpu()
    s = {**out.stats, **verdict_info(out)}
    keys = (
        "reference_placed",
        "first_fit_seconds",
        "status",
        "objective",
        "bound",
        "gap",
        "aggregated",
        "pod_classes",
        "node_classes",
        "classes_time",
        "model_time",
        "columns",
        "single_node_solves",
        "fallback",
        "first_fit",
    )
    return {
        "pods": pods,
        "nodes": nodes,
        "shape": shape,
        "allocator": allocator,
        "time_limit": time_limit,
        "generate_seconds": round(t1 - t0, 2),
        "load_seconds": round(t2 - t1, 2),
        "validate_seconds": round(t3 - t2, 2),
        "plan_seconds": round(t4 - t3, 2),
        "total_seconds": round(t4 - t1, 2),
        "plan_cpu_seconds": round(c4 - c3, 2),
        "placed": out.placed,
        "weight": out.weight,
        **{k: s.get(k) for k in keys},
        "cpu_seconds": round(_cpu(), 2),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "load_average": round(os.getloadavg()[0], 1),
    }


def _cpu() -> float:
    """CPU seconds of this process so far (user + system): on a shared machine the wall clock
    counts other work too, this does not."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_point(
    pods: int, allocator: str, time_limit: float = TIME_LIMIT, timeout: float = 1800, shape: str = "mixed"
) -> dict[str, Any]:
    """`point` in a fresh process; past `timeout` seconds it is stopped and reported as such."""
    cmd = [sys.executable, "-m", "benchmarks.scale_curve", str(pods), allocator, str(time_limit), shape]
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {
            "pods": pods,
            "nodes": pods // 5,
            "shape": shape,
            "allocator": allocator,
            "time_limit": time_limit,
            "finished": False,
            "timeout_seconds": timeout,
        }
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["finished"] = True
    out["process_seconds"] = round(time.perf_counter() - started, 2)
    return out


SUMMARY = re.compile(
    r"placed (?P<placed>\d+(?:,\d{3})*) of (?P<pods>\d+(?:,\d{3})*) pods \((?P<allocator>\w+)"
    r"(?:, status (?P<status>\w+))?(?:, objective (?P<objective>\d+(?:,\d{3})*))?"
    r"(?:, bound (?P<bound>[^,)]+))?(?:, gap (?P<gap>[^,)]+))?"
)
"""The CLI's summary line on stderr (`placed N of M pods (cpsat, status S, objective O, bound B, gap G)`)."""


def cli_point(
    pods: int, shape: str = "mixed", timeout: float = 1800, workdir: Path | None = None
) -> dict[str, Any]:
    """`dra-solver plan FILE` end to end on the shape's cluster of `pods` pods (nodes = pods / 5):
    the YAML is written first (not timed), then the command runs in a child process with the
    default options, stdout to a file; wall and CPU seconds (the child's user + system), peak
    RSS, and the summary line's placed / status / objective / bound / gap. Past `timeout` the
    point is recorded as not finished."""
    import tempfile

    import yaml

    from benchmarks.workloads import mixed_cluster, skewed_cluster

    generate = {"mixed": mixed_cluster, "skewed": skewed_cluster}[shape]
    nodes = pods // 5
    where = Path(workdir or tempfile.mkdtemp(prefix="dra-e2e-"))
    source, output = where / f"{shape}-{pods}.yaml", where / f"{shape}-{pods}.out.yaml"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with source.open("w") as f:
        yaml.dump_all(generate(nodes, pods), f, Dumper=dumper, sort_keys=False)
    cmd = [sys.executable, "-m", "dra_solver", "plan", str(source)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    base = {"pods": pods, "nodes": nodes, "shape": shape, "allocator": "cpsat", "mode": "cli"}
    try:
        with output.open("w") as out:
            done = subprocess.run(
                cmd, cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True, timeout=timeout, check=False
            )
    except subprocess.TimeoutExpired:
        return {**base, "finished": False, "timeout_seconds": timeout}
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    found = SUMMARY.search(done.stderr)
    numbers = {} if found is None else found.groupdict()
    return {
        **base,
        "finished": True,
        "input_mib": round(source.stat().st_size / 2**20, 1),
        "output_mib": round(output.stat().st_size / 2**20, 1),
        "cli_seconds": round(wall, 2),
        "cli_cpu_seconds": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "peak_rss_mib": after.ru_maxrss // 1024,
        "placed": int(numbers["placed"].replace(",", "")) if numbers.get("placed") else None,
        "status": numbers.get("status"),
        **{k: _number(numbers.get(k)) for k in ("objective", "bound", "gap")},
        "load_average": round(os.getloadavg()[0], 1),
    }


def _number(text: str | None) -> int | float | str | None:
    """A number of the summary line as printed (`number_text`: an integer, a decimal or other words)."""
    if text is None:
        return None
    plain = text.replace(",", "")
    try:
        return int(plain)
    except ValueError:
        try:
            return float(plain)
        except ValueError:
            return text


def main(argv: list[str]) -> int:
    if argv[0] == "cli":
        print(json.dumps(cli_point(int(argv[1]), argv[2] if len(argv) > 2 else "mixed")))
        return 0
    pods, allocator = int(argv[0]), argv[1]
    limit = float(argv[2]) if len(argv) > 2 else TIME_LIMIT
    shape = argv[3] if len(argv) > 3 else "mixed"
    print(json.dumps(point(pods, allocator, limit, shape)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
