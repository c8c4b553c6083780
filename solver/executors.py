"""Executors: where the independent units of a plan run (issue #14).

Why an executor at all: a plan splits into units that do not talk to each other — the
connected components of the aggregated model (`solver.planners.aggregated.master`), the parts of a partitioned
plan (`solver.planners.partition`) and the scenarios of a sweep (`solver.whatif.sweep`). Each unit is a
picklable function of plain data that returns plain data, so it may run in this process, in a
local process pool, or on a Ray cluster; the caller submits every unit, then collects the
results *in submission order* (`run_units`), so the answer never depends on where or in what
order the units ran.

Any `concurrent.futures.Executor` works (`Options.executor` in the Python API). The CLI's
`--executor local` is a process pool (spawned workers: OR-tools threads do not survive a
fork), `--executor ray` a `RayExecutor`: it joins the cluster at `RAY_ADDRESS` when that is
set, else starts Ray on this machine, and shuts Ray down again only when it started it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import InputError

T = TypeVar("T")
R = TypeVar("R")
EXECUTORS: tuple[str, ...] = ("auto", "local", "ray", "inline")
DEFAULT_WORKERS = 2
"""Local pool size when not told: small, since each unit is itself a CP-SAT run."""


def run_units(executor: Executor | None, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`[fn(x) for x in items]`, the units on `executor` (None: in this process, in order).

    Results come back in the order of `items` whatever order they finish in; a unit's
    exception is raised here. One unit runs here too: shipping it elsewhere buys nothing."""
    if executor is None or len(items) <= 1:
        return [fn(x) for x in items]
    futures = [executor.submit(fn, x) for x in items]
    return [f.result() for f in futures]


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What a Ray task runs: the submitted function on its arguments."""
    return fn(*args, **kwargs)


class RayExecutor(Executor):
    """A `concurrent.futures.Executor` over Ray tasks.

    Joins `address` (default: the `RAY_ADDRESS` environment variable) or, without one, starts
    Ray locally with `num_cpus` (default: Ray's own count) and no dashboard. Ray already
    initialised in this process (a caller's `ray.init`) is used as it is. `shutdown` stops Ray
    only if this executor started it."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray
        except ImportError as exc:  # the optional extra
            raise InputError("--executor ray needs Ray: pip install 'dra-solver[ray]'") from exc
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS") or None
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None and num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            ray.init(address=address, **kwargs)
            self._started = True
        self._remote = ray.remote(_call)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        ref = self._remote.remote(fn, args, kwargs)
        return ref.future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


def _ignore_interrupts() -> None:
    """A worker's first act: leave Ctrl-C to the parent. The terminal sends SIGINT to the whole
    process group; a worker killed by it mid-task leaves its pool's semaphores behind
    (multiprocessing's "leaked semaphore objects" warning at exit) while the parent is already
    printing the best plan found so far and shutting the pool down in order."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def local_pool(workers: int = DEFAULT_WORKERS) -> ProcessPoolExecutor:
    """A local process pool of spawned workers (a fork would copy OR-tools' threads' locks) that
    ignore Ctrl-C (`_ignore_interrupts`)."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_ignore_interrupts,
    )


@contextmanager
def open_executor(
    name: str, workers: int | None = None, *, whole_plans: bool = False
) -> Iterator[Executor | None]:
    """The executor the CLI's `--executor NAME` means, shut down on exit. `inline`: None (every
    unit in this process), `local`: a process pool of `workers`, `ray`: `RayExecutor`; `auto`:
    `local` when the units are whole plans (`whole_plans`: partitions, scenarios) or `workers`
    is given, else `inline`.

    Why `auto` keeps a plain plan in this process: its units are the aggregated model's
    components, each a short CP-SAT run, and a spawned worker first imports the solver and
    OR-tools (about a CPU second each), then unpickles its component and compiles its CEL again
    — at 10,000 pods / 2,000 nodes the two workers spent 8.4 CPU s where the same components
    took 3.6 s in this process, so the pool cost 5.7 CPU s and, on two cores, no wall time was
    won either (docs/benchmarks.md, "Scale curve"). A whole plan per unit is worth a worker."""
    if name not in EXECUTORS:
        raise InputError(f"unknown executor {name!r}; use {', '.join(EXECUTORS)}")
    if name == "auto":
        name = "local" if whole_plans or workers is not None else "inline"
    if name == "inline":
        yield None
        return
    executor: Executor = (
        local_pool(workers or DEFAULT_WORKERS) if name == "local" else RayExecutor(num_cpus=workers)
    )
    try:
        yield executor
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


__all__ = ["DEFAULT_WORKERS", "EXECUTORS", "RayExecutor", "local_pool", "open_executor", "run_units"]
