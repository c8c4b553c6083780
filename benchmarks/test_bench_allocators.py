"""Reference vs CP-SAT allocator on the issue's four workloads, in one run, same input.

Two levels per workload (one pytest-benchmark group per workload, so they show side by side):
- end-to-end: `dra_solver.allocate(...)` (precompute, allocator, results, independent check;
  for cpsat the bounded reference runs first as the hint) — or, for (b), `dra_solver.plan` with
  each claim its own pod on the one node, where the reference places them one by one (first fit);
- core: `allocate_reference(problem)` (here `ReferenceSearch(problem).run()`, the same search,
  to read its step count) vs `solve(problem, hint=...)` on a prebuilt Problem with a warm CEL
  cache; for (b) the reference's core is the first-fit loop (`firstfit.batch.FirstFit`, which must
  rebuild each claim's Problem since each sees the previous placements) and CP-SAT's is the
  solve of `perdevice.plan_model` (the plan's Problem with the first-fit hint).

Workloads: (a) `one_big_claim()`, (b) `shared_memory()` (with the capacity-bound optimum
computed independently by exact bin packing), (c) `numa_alignment()` with
DRADerivedAttributes, (d) `hard_list_match()` with DRAListTypeAttributes (the reference gives
up at its step bound: the error, steps and seconds are recorded).

Run: `pytest benchmarks/test_bench_allocators.py` (not part of the test suite);
`python -m benchmarks.report` runs it with --benchmark-json and writes docs/benchmarks.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest

from benchmarks.workloads import hard_list_match, numa_alignment, one_big_claim, shared_memory
from dra_solver import Cluster, Options, allocate, plan, reference
from dra_solver.cel import EvalCache
from dra_solver.cpsat import Hint, solve
from dra_solver.errors import AllocationError
from dra_solver.gates import FeatureGates
from dra_solver.planners.bounds import HINT_STEPS
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.perdevice import plan_model
from dra_solver.planning.resolve import make_job, resolve_units
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Problem
from dra_solver.reference import DEFAULT_MAX_STEPS, ReferenceSearch

NODE = "node-1"


@dataclass(frozen=True)
class Workload:
    key: str
    """Short id used in test ids and the report: a, b, c, d."""
    name: str
    objects: Callable[[], list[dict[str, Any]]]
    gates: str
    rounds: int
    """Benchmark rounds for the fast runs (slow runs use fewer, see `_rounds`)."""

    @property
    def group(self) -> str:
        return f"{self.key}-{self.name}"


WORKLOADS = {
    "a": Workload("a", "one_big_claim", one_big_claim, "", 30),
    "b": Workload("b", "shared_memory", shared_memory, "DRAConsumableCapacity=true", 3),
    "c": Workload("c", "numa_alignment", numa_alignment, "DRADerivedAttributes=true", 30),
    "d": Workload("d", "hard_list_match", hard_list_match, "DRAListTypeAttributes=true", 5),
}


@dataclass
class Prepared:
    w: Workload
    cluster: Cluster
    gates: FeatureGates
    problem: Problem
    cache: EvalCache


@pytest.fixture(scope="module")
def prepared() -> dict[str, Prepared]:
    out = {}
    for key, w in WORKLOADS.items():
        cluster = Cluster.from_objects(w.objects())
        gates = FeatureGates.of(w.gates or None)
        cache = EvalCache()
        problem = build_problem(cluster, cluster.unallocated_claims(), NODE, gates, cache=cache)
        out[key] = Prepared(w, cluster, gates, problem, cache)
    return out


def _info(benchmark, w: Workload, allocator: str, level: str, **extra: object) -> None:
    benchmark.group = w.group
    benchmark.extra_info.update(
        {"workload": w.name, "key": w.key, "allocator": allocator, "level": level, **extra}
    )


def _run(benchmark, w: Workload, fn: Callable[[], Any], rounds: int) -> Any:
    benchmark.group = w.group  # before the run: pytest-benchmark groups the table by it
    # Each round searches as a first call does: the process's memo of long reference searches
    # (`reference.MEMO`) would give later rounds the first round's hint search for free.
    return benchmark.pedantic(
        fn, setup=reference.MEMO.clear, rounds=rounds, iterations=1, warmup_rounds=1 if rounds > 1 else 0
    )


# ---------------------------------------------------------------- (a), (c): one pod's claims


@pytest.mark.parametrize("key", ["a", "c"])
@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_end_to_end(benchmark, prepared, key: str, allocator: str) -> None:
    pr = prepared[key]
    out = _run(
        benchmark,
        pr.w,
        lambda: allocate(pr.cluster, node=NODE, allocator=allocator, feature_gates=pr.gates),
        pr.w.rounds,
    )
    assert out.allocated, out.reason
    devices = sum(len(c.status.allocation.devices.results) for c in out.claims)
    _info(
        benchmark,
        pr.w,
        allocator,
        "end-to-end",
        placed=len(out.claims),
        claims=len(out.claims),
        devices=devices,
        status=str(out.stats.get("cpsat_status", "first fit")),
    )


@pytest.mark.parametrize("key", ["a", "c"])
@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_core(benchmark, prepared, key: str, allocator: str) -> None:
    pr = prepared[key]
    hint = ReferenceSearch(pr.problem).run()
    assert hint is not None
    if allocator == "reference":
        last: list[ReferenceSearch] = []

        def run() -> object:
            last[:] = [ReferenceSearch(pr.problem)]
            return last[0].run()

        out = _run(benchmark, pr.w, run, pr.w.rounds)
        _info(
            benchmark,
            pr.w,
            allocator,
            "core",
            placed=len(out),
            claims=len(pr.problem.claims),
            steps=last[0].steps,
            status="first fit",
        )
    else:
        out = _run(benchmark, pr.w, lambda: solve(pr.problem, hint=Hint(hint)), pr.w.rounds)
        assert out.status == "OPTIMAL"
        _info(
            benchmark,
            pr.w,
            allocator,
            "core",
            placed=out.placed,
            claims=len(pr.problem.claims),
            status=out.status,
            objective=out.objective,
            deterministic_time=out.deterministic_time,
            model=out.model_stats,
        )


# ---------------------------------------------------------------- (b): independent claims


def _pods(pr: Prepared) -> list[list]:
    """Independent claims: each its own pod."""
    return [[c] for c in pr.cluster.unallocated_claims()]


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_shared_end_to_end(benchmark, prepared, allocator: str) -> None:
    pr = prepared["b"]
    out = _run(
        benchmark,
        pr.w,
        lambda: plan(pr.cluster, _pods(pr), [NODE], allocator=allocator, feature_gates=pr.gates),
        pr.w.rounds,
    )
    _info(
        benchmark,
        pr.w,
        allocator,
        "end-to-end",
        placed=out.placed,
        claims=len(out.pods),
        capacity_optimum=capacity_optimum(pr.problem),
        status=str(out.stats.get("cpsat_status", "first fit")),
    )


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_shared_core(benchmark, prepared, allocator: str) -> None:
    pr = prepared["b"]
    units = resolve_units(pr.cluster, _pods(pr), None)
    job = make_job(pr.cluster, units, [NODE], Options(feature_gates=pr.gates, cache=pr.cache))
    first = FirstFit().plan(job)
    ref_placed = first.placed
    if allocator == "reference":
        out = _run(benchmark, pr.w, lambda: FirstFit().plan(job), pr.w.rounds)
        placed, status, extra = out.placed, "first fit", {}
    else:
        model = plan_model(job, first)
        assert model is not None
        out = _run(
            benchmark, pr.w, lambda: solve(model.problem, mode="free", hint=Hint(model.hint)), pr.w.rounds
        )
        placed, status = out.placed, out.status
        extra = {
            "stage_status": out.stage_status,
            "objective": out.objective,
            "deterministic_time": out.deterministic_time,
            "model": out.model_stats,
        }
    optimum = capacity_optimum(pr.problem)
    assert ref_placed <= optimum and placed <= optimum
    _info(
        benchmark,
        pr.w,
        allocator,
        "core",
        placed=placed,
        claims=len(units),
        capacity_optimum=optimum,
        reference_placed=ref_placed,
        status=status,
        **extra,
    )


def capacity_optimum(problem: Problem) -> int:
    """Most claims that fit by capacity alone: each claim of `shared_memory` takes one share of
    one identical device, so this is bin packing (bins = devices, sizes = rounded consumption,
    read from the Problem's candidates). Exact: the k smallest items are the easiest k to
    pack, so the answer is the largest k whose k smallest items pack into the bins."""
    caps, sizes = set(), []
    for dev in problem.devices:
        assert dev.multi and len(dev.capacity) == 1 and not any(dev.in_use.values())
        caps.add(next(iter(dev.capacity.values())))
    assert len(caps) == 1
    for c in problem.claims:
        (r,) = c.requests
        (a,) = r.alternatives
        alt = problem.alternatives[a]
        assert alt.count == 1
        amounts = {next(iter((cand.consumed or {}).values()), Fraction(0)) for cand in alt.candidates}
        assert len(amounts) == 1 and len(alt.candidates) == len(problem.devices)
        sizes.append(amounts.pop())
    unit = Fraction(0)
    for v in [*caps, *sizes]:
        unit = Fraction(_gcd_frac(unit, v))
    cap = int(caps.pop() / unit)
    items = sorted(int(s / unit) for s in sizes)
    total, k = 0, 0
    for s in items:  # capacity bound: total of the k smallest fits
        if total + s > cap * len(problem.devices):
            break
        total, k = total + s, k + 1
    while k > 0 and not _packs(items[:k], len(problem.devices), cap):
        k -= 1
    return k


def _gcd_frac(a: Fraction, b: Fraction) -> Fraction:
    if a == 0:
        return b
    den = math.lcm(a.denominator, b.denominator)
    return Fraction(math.gcd(int(a * den), int(b * den)), den)


def _packs(items: list[int], bins: int, cap: int) -> bool:
    """Exact: do `items` fit in `bins` bins of size `cap`? Largest first, loads as a sorted
    tuple (bins are interchangeable), memoised."""
    items = sorted(items, reverse=True)
    seen: set[tuple[int, tuple[int, ...]]] = set()

    def go(i: int, loads: tuple[int, ...]) -> bool:
        if i == len(items):
            return True
        if (i, loads) in seen:
            return False
        seen.add((i, loads))
        if sum(items[i:]) > sum(cap - x for x in loads):
            return False
        tried = set()
        for j, load in enumerate(loads):
            if load + items[i] <= cap and load not in tried:
                tried.add(load)
                nxt = tuple(sorted(loads[:j] + (load + items[i],) + loads[j + 1 :]))
                if go(i + 1, nxt):
                    return True
        return False

    return go(0, (0,) * bins)


# ---------------------------------------------------------------- (d): exponential first fit


def _reference_gives_up(fn: Callable[[], object]) -> dict[str, object]:
    start = time.perf_counter()
    try:
        fn()
    except AllocationError as exc:
        return {"gave_up": True, "error": str(exc), "seconds": time.perf_counter() - start}
    return {"gave_up": False, "seconds": time.perf_counter() - start}


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_hard_end_to_end(benchmark, prepared, allocator: str) -> None:
    pr = prepared["d"]

    def run() -> Any:
        return allocate(pr.cluster, node=NODE, allocator=allocator, feature_gates=pr.gates)

    if allocator == "reference":
        out = _run(benchmark, pr.w, lambda: _reference_gives_up(run), 1)
        assert out["gave_up"], out
        _info(
            benchmark,
            pr.w,
            allocator,
            "end-to-end",
            placed=0,
            claims=1,
            steps=DEFAULT_MAX_STEPS + 1,
            status="gave up",
            error=out["error"],
        )
    else:
        out = _run(benchmark, pr.w, run, pr.w.rounds)
        assert out.allocated
        _info(
            benchmark,
            pr.w,
            allocator,
            "end-to-end",
            placed=1,
            claims=1,
            status=out.stats["cpsat_status"],
            hint_steps=HINT_STEPS,
            hint="the bounded reference gave up first: no hint",
        )


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_hard_core(benchmark, prepared, allocator: str) -> None:
    pr = prepared["d"]
    if allocator == "reference":
        last: list[ReferenceSearch] = []

        def run() -> dict[str, object]:
            last[:] = [ReferenceSearch(pr.problem)]  # the default bound, as allocate_reference(problem)
            return _reference_gives_up(last[0].run)

        out = _run(benchmark, pr.w, run, 1)
        assert out["gave_up"], out
        _info(
            benchmark,
            pr.w,
            allocator,
            "core",
            placed=0,
            claims=1,
            steps=last[0].steps,
            status="gave up",
            error=out["error"],
        )
    else:
        out = _run(benchmark, pr.w, lambda: solve(pr.problem, hint=None), pr.w.rounds)
        assert out.status == "OPTIMAL"
        _info(
            benchmark,
            pr.w,
            allocator,
            "core",
            placed=out.placed,
            claims=1,
            status=out.status,
            objective=out.objective,
            deterministic_time=out.deterministic_time,
            model=out.model_stats,
            stage_status=out.stage_status,
        )
