"""Same input, same answer, at any load (issue #40 §3; docs/semantics.md, "Limits and determinism").

Why a racing clock: what must not change a result is the wall clock, and a busy machine is
only a slow wall clock as the process sees it. Every clock the package reads (`time.perf_counter`,
`time.monotonic`) is replaced by one that jumps 1,000 s at each reading — every wall-clock
guard, were there one, would have passed at once — and each case must give the same plan,
device for device, with the same statuses and numbers (timing statistics aside). CP-SAT's own
wall clock cannot be mocked: `test_every_search_is_single_worker_and_bounded_by_work_alone`
checks that no search is given one."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ortools.sat.python import cp_model

from benchmarks.churn import churn, heterogeneous
from benchmarks.load_determinism import pod_rows, timeless
from benchmarks.preempt_workloads import busy_cluster
from benchmarks.workloads import mixed_cluster
from dra_solver import Cluster, NodeTemplate, Planner, plan
from dra_solver.deadline import CUT_SHORT, Deadline
from dra_solver.errors import CutShort, SearchAborted
from dra_solver.planning.outcome import PlanOutcome
from dra_solver.preempt import plan_preempt
from dra_solver.replan import planner as planner_module


class RacingClock:
    """A clock that advances 1,000 s at every reading."""

    def __init__(self) -> None:
        self.now = time.perf_counter()
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += 1000.0
        return self.now


@pytest.fixture
def racing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], RacingClock]]:
    """`racing()` makes the clocks race from then on (until the test ends) and returns the clock."""

    def start() -> RacingClock:
        clock = RacingClock()
        monkeypatch.setattr(time, "perf_counter", clock)
        monkeypatch.setattr(time, "monotonic", clock)
        return clock

    yield start


def _signature(out: PlanOutcome) -> list[Any]:
    """The plan, device for device, and its statistics but the wall seconds."""
    return [pod_rows(out), timeless(out.stats)]


def _both(
    run: Callable[[], list[Any]],
    racing: Callable[[], RacingClock],
    reads: bool = True,
    idle: list[Any] | None = None,
) -> None:
    """`run()` on the real clock (or `idle`, its answer there), then on a racing one: the same
    answer. `reads`: the run reads the clock (its timing statistics) — else the case proves
    only that nothing reads it."""
    idle = idle if idle is not None else run()
    clock = racing()
    busy = run()
    assert (clock.readings > 0) == reads
    assert busy == idle


def test_a_plan_is_the_same_on_a_racing_clock(racing: Callable[[], RacingClock]) -> None:
    """The per-device model (stages, preference slices) over a small heterogeneous cluster."""
    cluster = Cluster.from_objects(heterogeneous(4, 24, seed=5))

    def run() -> list[Any]:
        out = plan(cluster, seed=1, time_limit=2.0)
        assert out.stats["aggregated"] != "yes" and "cpsat_status" in out.stats
        return _signature(out)

    _both(run, racing)


@functools.cache
def _aggregated() -> tuple[Cluster, PlanOutcome]:
    """A cluster the aggregated model plans, and its plan on the real clock: the racing clock's
    reference and the full plan a deadline's is compared with (planned once: outcomes are read,
    never changed)."""
    cluster = Cluster.from_objects(mixed_cluster(10, 50, seed=4))
    return cluster, plan(cluster, seed=1, time_limit=5.0)


def test_an_aggregated_plan_is_the_same_on_a_racing_clock(racing: Callable[[], RacingClock]) -> None:
    """The aggregated model (pricing, integer master, expansion to devices)."""
    cluster, idle = _aggregated()

    def run(out: PlanOutcome | None = None) -> list[Any]:
        out = out or plan(cluster, seed=1, time_limit=5.0)
        assert out.stats["aggregated"] == "yes" and out.verdict.status == "OPTIMAL"
        return _signature(out)

    _both(run, racing, idle=run(idle))


def test_a_what_if_plan_is_the_same_on_a_racing_clock(racing: Callable[[], RacingClock]) -> None:
    """The aggregated model with node costs: which copies of a template a plan adds."""
    from builders import claim, device, device_class, request, resource_slice

    def node(name: str, gpus: int) -> list[dict[str, Any]]:
        meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
        gpu = [device(f"gpu-{i}") for i in range(gpus)]
        node = {"apiVersion": "v1", "kind": "Node", "metadata": meta}
        return [node, resource_slice(f"{name}-gpus", gpu, node=name, pool=name)]

    objs = [device_class("gpu"), *node("n0", 8)]
    objs += [claim(f"c{i}", [request("gpu", count=(1, 2, 4)[i % 3])]) for i in range(9)]
    cluster = Cluster.from_objects(objs)
    template = NodeTemplate.from_cluster(Cluster.from_objects(node("gpu-8x", 8)))

    def run() -> list[Any]:
        out = plan(cluster, node_templates=[template], max_new_nodes=4, seed=2, time_limit=3.0)
        assert out.added_nodes
        return [*_signature(out), [n.metadata.name for n in out.added_nodes]]

    _both(run, racing)


def test_a_preemption_plan_is_the_same_on_a_racing_clock(racing: Callable[[], RacingClock]) -> None:
    cluster = Cluster.from_objects(busy_cluster(6, 6, seed=1))

    def run() -> list[Any]:
        out = plan_preempt(cluster, time_limit=5.0)
        assert out.victims
        return [*_signature(out), sorted(v.name for v in out.victims)]

    _both(run, racing, reads=False)


def test_a_planner_update_is_the_same_on_a_racing_clock(
    racing: Callable[[], RacingClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Planner.update` with the local re-solve (the case of issue #40: weight 57, then 56)."""
    monkeypatch.setattr(planner_module, "SMALL", 0)  # the incremental path, not a fresh plan
    cluster = Cluster.from_objects(heterogeneous(6, 36, seed=7))
    remove, add = churn(36, 0.2, seed=8)

    def run() -> list[Any]:
        planner = Planner(cluster, seed=3, time_limit=2.0)
        first = planner.plan()
        out = planner.update(add=add, remove=remove)
        assert out.stats["local_gain"], "the local re-solve changed nothing: pick a case where it does"
        return [_signature(first), _signature(out)]

    _both(run, racing)


def test_a_deadline_that_fires_is_recorded_and_proves_nothing() -> None:
    """An explicit deadline already passed: the run stops at once — before the search, with
    no plan (`CutShort`, which says so), or with a checked plan (first fit's at worst) whose
    status is not OPTIMAL unless proven anyway, and which says it was cut short."""
    cluster, full = _aggregated()
    assert CUT_SHORT not in full.stats
    try:
        out = plan(cluster, seed=1, time_limit=5.0, deadline=Deadline.after(0.0))
    except CutShort as e:
        assert "before the search: no plan" in str(e)
    else:
        assert out.stats[CUT_SHORT] is True
        assert out.weight <= full.weight
        # no verdict when the deadline stopped first fit at once
        if out.verdict is not None and out.verdict.status == "OPTIMAL":
            assert out.weight == full.weight
    # A preemption plan: the model's plan, cut short, or no plan at all — never one that
    # blames the input.
    deadline = Deadline.after(0.0)
    busy = Cluster.from_objects(busy_cluster(6, 6, seed=1))
    try:
        pre = plan_preempt(busy, time_limit=5.0, deadline=deadline)
    except SearchAborted as e:
        assert "deadline" in str(e)
    else:
        assert pre.stats[CUT_SHORT] is True
    assert deadline.fired


def test_a_deadline_far_away_changes_nothing() -> None:
    """A deadline that does not fire leaves the plan as it is without one."""
    cluster = Cluster.from_objects(heterogeneous(4, 24, seed=5))
    without = _signature(plan(cluster, seed=1, time_limit=2.0))
    with_one = _signature(plan(cluster, seed=1, time_limit=2.0, deadline=Deadline.after(3600.0)))
    assert with_one == without


def test_every_search_is_single_worker_and_bounded_by_work_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every CP-SAT search a run makes — a plan with either model, a preemption plan with moves
    (its clearing bound too), and an update's local re-solve and its fewest-moves stage — is
    deterministic: one worker (CP-SAT's parallel portfolio finishes in an order set by thread
    timing, so its answer moves with the load), no wall-clock limit without a deadline, a
    deterministic-time budget. Spied on CP-SAT's own class, so a search built anywhere counts,
    whichever module builds it (a spy on `cp_solver` in the modules that build searches, with
    the same plans and a preemption plan without moves, was a test of its own: this one sees
    every search that one saw)."""
    from benchmarks.defrag_workloads import defrag_cluster, docs

    made: list[cp_model.CpSolver] = []
    real = cp_model.CpSolver

    class Spy(real):  # type: ignore[misc,valid-type]  # a subclass of CP-SAT's class, only recorded
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(cp_model, "CpSolver", Spy)
    monkeypatch.setattr(planner_module, "SMALL", 0)  # the incremental path, not a fresh plan
    plan(Cluster.from_objects(heterogeneous(4, 24, seed=5)), time_limit=1.0)
    plan(Cluster.from_objects(mixed_cluster(10, 50, seed=4)), time_limit=1.0)
    plan_preempt(Cluster.from_objects(busy_cluster(6, 6, seed=1)), time_limit=1.0)
    moved = plan_preempt(
        Cluster.from_objects(docs(defrag_cluster(12, seed=0))), time_limit=1.0, allow_moves=True
    )
    assert moved.stats.get("moved"), "no pod moved: pick a case whose plan moves one"
    planner = Planner(Cluster.from_objects(heterogeneous(6, 36, seed=7)), seed=3, time_limit=2.0)
    planner.plan()
    remove, add = churn(36, 0.2, seed=8)
    before = len(made)
    out = planner.update(add=add, remove=remove)
    assert out.stats["local_gain"] and len(made) > before, "the update ran no search of its own"
    unbounded = real().parameters
    for solver in made:
        p = solver.parameters
        assert p.num_workers == 1 and not p.interleave_search
        assert p.max_time_in_seconds == unbounded.max_time_in_seconds == float("inf")
        assert 0 < p.max_deterministic_time < unbounded.max_deterministic_time


_FRESH_RUN = r"""
import hashlib, json, os, random, sys

# A heap laid out otherwise: objects of random sizes, kept alive, before anything is imported.
r = random.Random(int(os.environ["JUNK"]))
junk = [bytearray(r.randrange(1, 4096)) for _ in range(r.randrange(0, 20000))]
junk += [object() for _ in range(r.randrange(0, 5000))]

from ortools.sat.python import cp_model
from benchmarks.load_determinism import pod_rows, timeless
from benchmarks.workloads import mixed_cluster
from dra_solver import Cluster, plan

searches = []
real = cp_model.CpSolver.solve

def solve(self, model, *args, **kwargs):
    status = real(self, model, *args, **kwargs)
    r = self.response_proto
    searches.append([
        hashlib.md5(str(model.proto).encode()).hexdigest(),
        # CP-SAT's work measure to 12 digits: it once differed in its last bit (0.0001840063000000001
        # and 0.00018400630000000012, same model, solution and branches) with two suites running
        str(status), list(r.solution), r.num_branches, f"{r.deterministic_time:.12g}",
    ])
    return status

cp_model.CpSolver.solve = solve
out = plan(Cluster.from_objects(mixed_cluster(8, 40, seed=6)), seed=1, time_limit=5.0)
assert out.stats["aggregated"] == "yes", out.stats.get("aggregated")
print(json.dumps([searches, pod_rows(out), timeless(out.stats)], default=str))
"""


def test_an_aggregated_plan_is_the_same_in_fresh_processes() -> None:
    """The aggregated model's plan (pricing, integer master, expansion, the reasons of the pods
    left out) in fresh processes whose string hashes (`PYTHONHASHSEED`) and heap layouts (objects
    of random sizes allocated first) differ: the same CP-SAT searches — each model, its solution,
    its branches and work (to 12 digits: CP-SAT's deterministic time once differed in its last
    bit between two such processes, all else equal) — and the same plan. Why: a set or dict
    iterated in the order of string hashes or of addresses (objects that hash by identity)
    changes a plan only between processes, never within one, so the racing-clock tests above
    cannot see it (docs/benchmarks.md, "Same answer at any load")."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    runs = []
    for hash_seed, junk in (("0", "0"), ("1", "7919"), ("2", "40503")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "JUNK": junk}
        runs.append(
            subprocess.Popen(
                [sys.executable, "-c", _FRESH_RUN], cwd=root, env=env, stdout=subprocess.PIPE, text=True
            )
        )
    outputs = [run.communicate()[0] for run in runs]
    assert all(run.returncode == 0 for run in runs)
    first = json.loads(outputs[0])
    assert first[0], "no CP-SAT search was seen"
    for other in outputs[1:]:
        assert json.loads(other) == first


def test_the_load_benchmark_sees_a_source_edited_during_a_pair(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`load_determinism.source_digest` changes when a file the runs import is edited (the
    plan-mixed difference: `solver/cpsat.py` was written in the middle of the loaded run), and
    only then."""
    from benchmarks import load_determinism

    (tmp_path / "solver").mkdir()
    module = tmp_path / "solver" / "cpsat.py"
    module.write_text("WORKERS = 1\n")
    (tmp_path / "solver" / "notes.txt").write_text("not imported")
    monkeypatch.setattr(load_determinism, "ROOT", tmp_path)
    before = load_determinism.source_digest()
    (tmp_path / "solver" / "notes.txt").write_text("still not imported")
    assert load_determinism.source_digest() == before
    module.write_text("WORKERS = 8\n")
    assert load_determinism.source_digest() != before
