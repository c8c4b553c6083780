"""Issue #40 §2: how far past `--timeout` a run ends (the overshoot ratio: wall seconds of the
whole run over the timeout; the goal is at most 1.1).

Two ways of running, as a user does:
- the CLI: `dra-solver plan FILE --timeout D` in a fresh process, timed from before the process
  starts to its end (interpreter start, imports, reading, the search, the check, writing);
- the library: `plan(cluster, deadline=Deadline.after(D))` on a loaded cluster, timed around
  the call.

Each point also records the CPU seconds (the child's, or the call's), whether the run says it
was cut short, what it placed, and whether `dra-solver check` accepts the cluster after it
(`--output-mode full`: a plan cut short is still a checked plan). Wall seconds on a busy
machine measure the load as much as the code: the CPU seconds say how much was work.

On a busy machine `cli-cpu-clock` runs the CLI with the deadline counting CPU seconds
(`benchmarks.cpu_clock`): what an idle machine's run would do; its `cpu_ratio` is the
overshoot to read there.

Run one point: `python -m benchmarks.overshoot NAME SECONDS [cli|cli-cpu-clock|library]` prints a JSON line;
`benchmarks/test_bench_overshoot.py` runs the set.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks import end_to_end
from benchmarks.netpools import netpools

ROOT = Path(__file__).resolve().parents[1]

WORKLOADS: dict[str, tuple[Callable[[], list[dict[str, Any]]], str | None]] = {
    "netpools-100": (lambda: netpools(100), None),
    **{name: end_to_end.WORKLOADS[name] for name in ("a-pods", "b", "c-big", "d", "e", "f", "cpu")},
}
"""The benchmark suite's end-to-end inputs (`benchmarks.end_to_end`) and the 100-node
network-attached pools of issue #40 (`benchmarks.netpools`)."""


def input_file(name: str) -> Path:
    """The workload written once as a YAML file (a temporary directory, kept between points)."""
    path = Path(tempfile.gettempdir()) / f"dra-solver-overshoot-{name}.yaml"
    if not path.exists():
        make, _ = WORKLOADS[name]
        part = path.with_suffix(".part")
        with part.open("w", encoding="utf-8") as f:
            yaml.safe_dump_all(make(), f, sort_keys=False)
        part.replace(path)
    return path


def _violations(text: str, gates: str | None) -> set[str]:
    """The rule lines (`[rule] ...`) `dra-solver check` prints for a cluster given as YAML text
    (its closing `ok: ...` or count line differs between any two clusters)."""
    done = subprocess.run(
        [sys.executable, "-m", "dra_solver", "check", "-", *(["--feature-gates", gates] if gates else [])],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    return {line for line in done.stdout.splitlines() if line.startswith("[")}


def _checked(input_text: str, full_output: str, gates: str | None) -> bool | None:
    """Whether the cluster a `--output-mode full` run printed breaks no rule that the input did
    not already break (some inputs hold claims allocated without a node: their violations are
    the input's, not the plan's); None: nothing printed."""
    if not full_output.strip():
        return None
    return not (_violations(full_output, gates) - _violations(input_text, gates))


def cli_point(name: str, seconds: float, cpu_clock: bool = False) -> dict[str, Any]:
    """`dra-solver plan FILE --timeout SECONDS --output-mode full` in a fresh process;
    `cpu_clock`: with the deadline counting the process's CPU seconds (`benchmarks.cpu_clock`:
    an idle machine's run, measured on a busy one)."""
    path = input_file(name)
    _, gates = WORKLOADS[name]
    runner = "benchmarks.cpu_clock" if cpu_clock else "dra_solver"
    cmd = [sys.executable, "-m", runner, "plan", str(path), "--timeout", f"{seconds}s"]
    cmd += ["--output-mode", "full", *(["--feature-gates", gates] if gates else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = [line for line in done.stderr.splitlines() if line.startswith("placed ")]
    return {
        "workload": name,
        "how": "cli-cpu-clock" if cpu_clock else "cli",
        "timeout": seconds,
        "wall": round(wall, 2),
        "cpu": round(cpu, 2),
        "ratio": round(wall / seconds, 3),
        "cpu_ratio": round(cpu / seconds, 3),
        "exit": done.returncode,
        "cut_short": "cut short by --timeout" in done.stderr,
        "read_cut_short": "while reading the input" in done.stderr,
        "no_plan": done.returncode == 1 and "no plan" in done.stderr,
        "summary": summary[-1] if summary else None,
        "checked": _checked(path.read_text(encoding="utf-8"), done.stdout, gates)
        if done.returncode in (0, 2)
        else None,
    }


def library_point(name: str, seconds: float) -> dict[str, Any]:
    """`plan(cluster, deadline=Deadline.after(SECONDS))` in this process, on a loaded cluster."""
    from dra_solver import Cluster, CutShort, Deadline, plan
    from dra_solver.check import check_cluster
    from dra_solver.gates import FeatureGates
    from dra_solver.output.objects import cluster_after

    make, gates = WORKLOADS[name]
    cluster = Cluster.from_objects(make())
    cpu0, started = time.process_time(), time.perf_counter()

    def point(**more: Any) -> dict[str, Any]:
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
        head = {"workload": name, "how": "library", "timeout": seconds, "wall": round(wall, 2)}
        return {**head, "cpu": round(cpu, 2), "ratio": round(wall / seconds, 3), **more}

    try:
        out = plan(cluster, deadline=Deadline.after(seconds), **({"feature_gates": gates} if gates else {}))
    except CutShort as exc:  # before the search: no plan (docs/semantics.md, "Limits and determinism")
        return point(cut_short=True, no_plan=str(exc), checked=None)
    done = point()
    after = Cluster.from_objects(cluster_after(cluster, out.pods))
    gates_ = FeatureGates.of(gates)
    before = {v.message for v in check_cluster(cluster, gates_)}
    return {
        **done,
        "cut_short": bool(out.stats.get("cut_short_by_timeout")),
        "placed": out.placed,
        "pods": len(out.pods),
        "status": out.stats.get("status"),
        "checked": not ({v.message for v in check_cluster(after, gates_)} - before),
    }


def run_point(name: str, seconds: float, how: str) -> dict[str, Any]:
    """One point in a fresh process (the library's too: each run pays its own imports)."""
    cmd = [sys.executable, "-m", "benchmarks.overshoot", name, str(seconds), how]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    name, seconds = sys.argv[1], float(sys.argv[2])
    how = sys.argv[3] if len(sys.argv) > 3 else "cli"
    if how == "library":
        point = library_point(name, seconds)
    else:
        point = cli_point(name, seconds, cpu_clock=how == "cli-cpu-clock")
    print(json.dumps(point))


if __name__ == "__main__":
    main()
