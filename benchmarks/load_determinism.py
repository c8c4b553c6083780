"""Issue #40 §3, the benchmark's half: the same input and seed give byte-identical output on a
machine with two CPU-bound processes beside the run as without them.

Each item runs twice, each time in a fresh process: once as it is ("as is": whatever else the
machine runs), once with two burners started beside it (`python -c "while True: pass"`) and
the run at niceness +5 (`LOADED_NICE`), the burners at 0: on 2 cores two busy loops alone would
leave the run a third of the machine; below them in priority it gets less still, so it takes longer
by the wall clock — what a wall-clock guard would see. The two runs' stdout must be equal
byte for byte, and their stderr too once the lines that report wall seconds (`planned in 2.3 s`)
lose those seconds — nothing else. Why fresh processes: a run's imports, caches and hash seeds
are its own, as a user's are; an answer that moves with any of those is a bug too.

The items (each a few CPU seconds; `ITEMS`):
- `plan` on four shapes: the scale curve's heterogeneous `workloads.mixed_cluster` (the
  aggregated model, OPTIMAL) and issue #40's network-attached pools `netpools.netpools` (the
  pooled model, OPTIMAL) with default options; issue #19's gangs (`gang_workloads.gangs`) with
  `--time-limit 0.3`, where the search is cut by its budget (deterministic work, not the wall
  clock) and the plan is FEASIBLE; the scale smoke's nine features (`scale_smoke`), FEASIBLE
  because its bound is not reached;
- `plan --preempt` on issue #31's full cluster (`preempt_workloads.busy_cluster`);
- `plan --preempt --allow-moves` on issue #43's fragmented cluster
  (`defrag_workloads.defrag_cluster`);
- a what-if: `plan --node-template` x 2 on issue #11's pending pods (`test_bench_whatif`'s
  shape, smaller);
- `Planner.update`: a plan, then three updates of `churn.churn` (1 %, 10 %, 1 %) on
  `churn.heterogeneous`, in one process (`python -m benchmarks.load_determinism update`),
  printing a canonical dump of each plan (every pod's node, reason and allocations, the
  verdict, the statistics without their wall seconds) as sorted JSON.

Each row has: identical (yes/no), and per run the wall seconds (from before the process starts
to its end) and the CPU seconds of the run's process (user + system, `os.wait4`), the burners'
CPU seconds (proof that they ran) and the 1-minute load before the run; and whether the Python
source the runs import changed while the pair ran (`source_changed`: then the pair is void).

Run: `python -m benchmarks.load_determinism [ITEM ...]` prints a JSON line per item (and the
differing lines where the outputs differ); `benchmarks/test_bench_load_determinism.py` runs the
set under pytest-benchmark.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BURNERS = 2
BURN = "while True: pass"
LOADED_NICE = 5
"""The loaded run's niceness (the burners keep the default 0): below the burners, it gets less
than a third of a core's share from them, so it is slower by the wall clock still."""


@dataclass(frozen=True)
class Item:
    """One comparison: `objects()` written as the input file, run as `dra-solver plan FILE
    *args` (`templates`: extra files for `--node-template`, written beside it), or, for `update`,
    this module's `update` sequence."""

    objects: Callable[[], list[dict[str, Any]]] | None
    args: tuple[str, ...] = ()
    templates: tuple[Callable[[], list[dict[str, Any]]], ...] = ()
    about: str = ""


def _mixed() -> list[dict[str, Any]]:
    from benchmarks.workloads import mixed_cluster

    return mixed_cluster(200, 1000, seed=30)


def _gangs() -> list[dict[str, Any]]:
    from benchmarks.gang_workloads import gangs

    return split_counters(gangs(nodes=20, groups=12)[0])


def split_counters(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`objects` with every ResourceSlice that holds both devices and sharedCounters (the
    layout of Kubernetes 1.33, which `gang_workloads` writes) split into the layout of 1.34:
    the counter sets in a slice of their own, same driver and pool. Why: the CLI validates its
    input, and a pool of 1.33 slices is invalid there — no pod would get its GPUs — while
    `plan()` on the objects (what the gang benchmark measures) does not validate them."""
    out: list[dict[str, Any]] = []
    for o in objects:
        spec = o.get("spec", {})
        if o["kind"] != "ResourceSlice" or not (spec.get("devices") and spec.get("sharedCounters")):
            out.append(o)
            continue
        pool = {**spec["pool"], "resourceSliceCount": 2}
        counters = {k: v for k, v in spec.items() if k != "devices"}
        devices = {k: v for k, v in spec.items() if k != "sharedCounters"}
        name = o["metadata"]["name"]
        out.append({**o, "metadata": {"name": f"{name}-counters"}, "spec": {**counters, "pool": pool}})
        out.append({**o, "spec": {**devices, "pool": pool}})
    return out


def _smoke() -> list[dict[str, Any]]:
    from benchmarks.scale_smoke import FEATURES, smoke_cluster

    return smoke_cluster(set(FEATURES), 40, seed=0)


def _netpools() -> list[dict[str, Any]]:
    from benchmarks.netpools import netpools

    return netpools(40)


def _preempt() -> list[dict[str, Any]]:
    from benchmarks.preempt_workloads import busy_cluster

    return busy_cluster(100, 60, seed=1)


def _defrag() -> list[dict[str, Any]]:
    from benchmarks.defrag_workloads import defrag_cluster, docs

    return docs(defrag_cluster(100, seed=0))


def _whatif() -> list[dict[str, Any]]:
    from benchmarks.test_bench_whatif import whatif_pods

    return whatif_pods(seed=11)


def _template(name: str, gpus: int, cost: int) -> Callable[[], list[dict[str, Any]]]:
    def make() -> list[dict[str, Any]]:
        from benchmarks.workloads import GPU, _node, _slice

        node = _node(name)
        node["metadata"]["annotations"] = {"dra-solver.io/cost": str(cost)}
        return [node, _slice(f"{name}-gpu", GPU, name, [{"name": f"gpu-{i}"} for i in range(gpus)])]

    return make


ITEMS: dict[str, Item] = {
    "plan-mixed": Item(_mixed, about="plan: mixed_cluster 200 nodes / 1,000 pods (aggregated model)"),
    "plan-gangs": Item(
        _gangs,
        ("--time-limit", "0.3"),
        about="plan --time-limit 0.3: gangs 20 nodes / 12 PodGroups (the search cut by its budget: FEASIBLE)",
    ),
    "plan-smoke": Item(
        _smoke,
        about="plan: scale_smoke's nine features, 40 nodes / 80 pods (FEASIBLE: the bound is not reached)",
    ),
    "plan-netpools": Item(_netpools, about="plan: netpools 40 nodes / 120 pods (network-attached pools)"),
    "preempt": Item(_preempt, ("--preempt",), about="plan --preempt: busy_cluster 100 nodes, 60 pending"),
    "moves": Item(
        _defrag,
        ("--preempt", "--allow-moves"),
        about="plan --preempt --allow-moves: defrag_cluster 100 nodes",
    ),
    "whatif": Item(
        _whatif,
        templates=(_template("gpu-8x", 8, 10), _template("gpu-4x", 4, 6)),
        about="plan --node-template x 2: whatif_pods 50 nodes / 1,000 pods",
    ),
    "update": Item(None, about="Planner.update: heterogeneous 200 nodes / 1,000 pods, churn 1 %, 10 %, 1 %"),
}

UPDATE_SIZE = (200, 1000)
UPDATE_LEVELS = (0.01, 0.1, 0.01)
UPDATE_OPTIONS: dict[str, Any] = {"seed": 1, "time_limit": 10.0}


def update_dump() -> str:
    """The `update` item's output: `Planner.plan` on `churn.heterogeneous`, then the updates of
    `UPDATE_LEVELS` in sequence, each plan's canonical dump a JSON line."""
    from benchmarks.churn import churn, heterogeneous
    from dra_solver import Cluster, Planner

    nodes, pods = UPDATE_SIZE
    planner = Planner(Cluster.from_objects(heterogeneous(nodes, pods, seed=30)), **UPDATE_OPTIONS)
    lines = [_canonical("plan", planner.plan())]
    for step, level in enumerate(UPDATE_LEVELS):
        remove, add = churn(pods, level, seed=31 + step, start=10_000 * (step + 1))
        present = planner.cluster.pods.keys() | planner.cluster.claims.keys()
        remove = [r for r in remove if (r[1], r[2]) in present]
        lines.append(_canonical(f"update {level:.0%}", planner.update(add=add, remove=remove)))
    return "".join(lines)


def _canonical(step: str, out: Any) -> str:
    """A plan as one sorted JSON line: every pod's node, reason and claims' allocations, the
    verdict, and the statistics that are not wall seconds (those may differ: `timeless`)."""
    verdict = (
        None if out.verdict is None else {"status": out.verdict.status.value, "bound": out.verdict.bound}
    )
    body = {
        "step": step,
        "weight": out.weight,
        "verdict": verdict,
        "pods": pod_rows(out),
        "stats": timeless(out.stats),
    }
    return json.dumps(body, sort_keys=True, default=str) + "\n"


def pod_rows(out: Any) -> list[list[Any]]:
    """A plan's pods as plain data: name, node, reason, each claim's allocation (dumped)."""
    return [
        [
            p.name,
            p.node,
            p.reason,
            [c.status.allocation.dump() if c.status and c.status.allocation else None for c in p.claims],
        ]
        for p in out.pods
    ]


def timeless(stats: dict[str, Any]) -> dict[str, Any]:
    """The statistics without the seconds measured on the wall clock (CP-SAT's deterministic
    time stays: it must be equal)."""
    return {
        k: v
        for k, v in stats.items()
        if k.startswith("deterministic") or not (k.endswith(("_time", "_seconds")) or k == "time")
    }


WALL = re.compile(r"\b(in|after|took) \d+(\.\d+)? ?(s|ms)\b")
"""Wall seconds in a stderr line (`planned in 2.3 s`, `cut short by --timeout after 5.0 s`)."""


def timeless_stderr(text: str) -> str:
    """stderr with its wall seconds replaced by `<wall>` (everything else must be equal)."""
    return WALL.sub(r"\1 <wall>", text)


def _write(path: Path, objects: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        yaml.safe_dump_all(objects, f, sort_keys=False)
    return path


def command(name: str, workdir: Path) -> list[str]:
    """The item's command line (its input files written into `workdir`)."""
    item = ITEMS[name]
    if item.objects is None:
        return [sys.executable, "-m", "benchmarks.load_determinism", "update"]
    cmd = [sys.executable, "-m", "dra_solver", "plan", str(_write(workdir / f"{name}.yaml", item.objects()))]
    for i, make in enumerate(item.templates):
        cmd += ["--node-template", str(_write(workdir / f"{name}-template-{i}.yaml", make()))]
    return [*cmd, *item.args]


@dataclass
class Run:
    stdout: bytes
    stderr: bytes
    exit: int
    wall: float
    cpu: float
    burners_cpu: float
    load: float


def run_once(cmd: list[str], burners: int, nice: int = 0) -> Run:
    """`cmd` in a fresh process (`nice`: its niceness added), with `burners` busy loops beside
    it for its whole life; its output, exit code, wall seconds (from before it starts) and CPU
    seconds (its own, with its children's, from `os.wait4`)."""
    load = os.getloadavg()[0]
    burning = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(burners)]
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, preexec_fn=lambda: os.nice(nice))
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
    finally:
        burned = 0.0
        for b in burning:
            b.kill()
            _, _, b_usage = os.wait4(b.pid, 0)
            b.returncode = -9
            burned += b_usage.ru_utime + b_usage.ru_stime
    cpu = usage.ru_utime + usage.ru_stime
    return Run(stdout, stderr, proc.returncode, wall, cpu, burned, load)


SOURCES = ("solver", "encoders", "benchmarks")
"""The directories (of `ROOT`) whose Python files a run imports: the package, and the
benchmark's own generators and `update` sequence."""


def source_digest() -> str:
    """A digest of every Python file under `SOURCES`, names and contents. Why: the runs import
    the worktree's code (an editable install), each run when it starts and each module when it
    is first used — a run slowed 30-fold by the load imports `cpsat` a minute after it began.
    A file edited while the pair runs (a test's temporary break and its revert) gives the two
    runs different code, and their outputs differ for no reason of the code: the row says so
    (`source_changed`), and such a pair proves nothing either way."""
    digest = hashlib.sha256()
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _summary(stderr: bytes) -> str | None:
    """The plan's summary line on stderr (`placed ... OPTIMAL ...`), or the update's statuses."""
    lines = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.startswith("placed ")]
    return lines[-1] if lines else None


def _update_summary(stdout: bytes) -> str | None:
    try:
        rows = [json.loads(line) for line in stdout.decode().splitlines()]
    except ValueError:
        return None
    return "; ".join(
        f"{r['step']}: weight {r['weight']}, {r['verdict']['status'] if r['verdict'] else 'no verdict'}"
        for r in rows
    )


def compare(name: str) -> dict[str, Any]:
    """Item `name` as is, then with `BURNERS` burners beside it: a row of the table (and the
    first differing lines, where the outputs differ)."""
    with tempfile.TemporaryDirectory(prefix="dra-load-") as tmp:
        cmd = command(name, Path(tmp))
        before = source_digest()
        idle = run_once(cmd, 0)
        loaded = run_once(cmd, BURNERS, LOADED_NICE)
        after = source_digest()
    same_out = idle.stdout == loaded.stdout
    same_err = timeless_stderr(idle.stderr.decode(errors="replace")) == timeless_stderr(
        loaded.stderr.decode(errors="replace")
    )
    row: dict[str, Any] = {
        "item": name,
        "about": ITEMS[name].about,
        "identical": same_out and same_err and idle.exit == loaded.exit,
        "stdout_identical": same_out,
        "stderr_identical": same_err,
        "stdout_bytes": len(idle.stdout),
        "exit": [idle.exit, loaded.exit],
        "wall": [round(idle.wall, 2), round(loaded.wall, 2)],
        "cpu": [round(idle.cpu, 2), round(loaded.cpu, 2)],
        "burners_cpu": round(loaded.burners_cpu, 2),
        "loaded_nice": LOADED_NICE,
        "load": [round(idle.load, 2), round(loaded.load, 2)],
        "summary": _update_summary(idle.stdout) if ITEMS[name].objects is None else _summary(idle.stderr),
        "source_changed": before != after,
    }
    if not row["identical"]:
        row["diff"] = _diff(idle, loaded)
        row["kept"] = str(_keep(name, idle, loaded))
    return row


def _keep(name: str, idle: Run, loaded: Run) -> Path:
    """Both runs' output, kept in a new temporary directory (whose path the row gives) to
    find where they part."""
    kept = Path(tempfile.mkdtemp(prefix=f"dra-load-{name}-"))
    for how, run in (("as-is", idle), ("loaded", loaded)):
        (kept / f"{how}.stdout").write_bytes(run.stdout)
        (kept / f"{how}.stderr").write_bytes(run.stderr)
    return kept


def _diff(a: Run, b: Run, lines: int = 40) -> list[str]:
    out: list[str] = []
    for what, x, y in (
        ("stdout", a.stdout.decode(errors="replace"), b.stdout.decode(errors="replace")),
        (
            "stderr",
            timeless_stderr(a.stderr.decode(errors="replace")),
            timeless_stderr(b.stderr.decode(errors="replace")),
        ),
    ):
        out += list(
            difflib.unified_diff(
                x.splitlines(), y.splitlines(), f"{what} as is", f"{what} loaded", lineterm=""
            )
        )
    return out[:lines]


def main(argv: list[str]) -> int:
    if argv[:1] == ["update"]:
        sys.stdout.write(update_dump())
        return 0
    names = argv or list(ITEMS)
    differ = 0
    for name in names:
        row = compare(name)
        differ += not row["identical"]
        print(json.dumps(row), flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
