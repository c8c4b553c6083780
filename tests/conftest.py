"""Hypothesis profiles: `ci` (the default) and `long` (`DRA_TEST_PROFILE=long`, or
`--hypothesis-profile=long`); the workers of pytest-xdist; one local process pool per test
process, shared (`_SharedPools`).

`ci` is what the README's test command and CI run: small example counts, derandomized (the same
cases on every run, so a failure is reproducible and the suite's time is known). `long` is for a
thorough run: random cases, 5,000 per test, or `LONG_FACTOR` times its own count where a test
sets one, written `examples(n)` (tests/example_counts.py)."""

from __future__ import annotations

import compileall
import functools
import gc
import os
import sys
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_for
from pathlib import Path
from typing import Any

import pytest


def _hypothesis_imported_as_it_is() -> None:
    """Leave Hypothesis out of pytest's assertion rewriting.

    Why: pytest rewrites the asserts of every module of a distribution that registers a pytest
    plugin, and Hypothesis does (its 70-odd modules, about 1 CPU s in every test process: the
    controlling one and each xdist worker); with `PYTHONDONTWRITEBYTECODE=1` (the machines CI
    runs on) nothing is kept, so each process did it again. Hypothesis' own asserts are its
    internal checks, not the tests': nothing a test shows is lost. The tests' modules are still
    rewritten. Must run before Hypothesis is first imported (below); a pytest whose hook has
    another shape is left as it is."""
    for hook in sys.meta_path:
        marked = getattr(hook, "_must_rewrite", None)
        if type(hook).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.discard("hypothesis")


_hypothesis_imported_as_it_is()

from example_counts import CI_EXAMPLES, LONG_EXAMPLES  # noqa: E402  (after the call above)
from hypothesis import HealthCheck, settings  # noqa: E402

import dra_solver.executors  # noqa: E402


def _compile_the_package() -> None:
    """Byte-compile the package once, in the controlling process, before the workers start.

    Why: with `PYTHONDONTWRITEBYTECODE=1` (set on the machines CI runs on) no interpreter writes
    `__pycache__`, so every xdist worker and every test that starts `dra-solver` in a fresh
    process compiled the whole package again from source (about 0.5 CPU s per process; the
    installed dependencies, which the install leaves uncompiled, are compiled by the first
    process that imports them: `_keep_bytecode`). Compiled files are still read under that
    setting, and `compileall` checks each one against its source's timestamp, so an edit is
    never run stale. A checkout that cannot be written to is left as it is."""
    root = Path(__file__).resolve().parent.parent
    for folder in ("solver", "encoders"):
        try:
            compileall.compile_dir(root / folder, quiet=2)
        except OSError:
            return


def _keep_bytecode() -> None:
    """Let this run's processes write the bytecode of what they import where
    `PYTHONDONTWRITEBYTECODE` forbids it: this process, and (the variable taken out of the
    environment) the xdist workers and every process a test starts.

    Why: CI installs with uv, which like `pip --no-compile` compiles nothing (.ci/run: pip
    compiled every module of every dependency, about 30 s of its install), and runs with
    `PYTHONDONTWRITEBYTECODE=1`, so no dependency had a compiled file, ever: each worker,
    each `python -m dra_solver` of a test, each spawned pool worker compiled pydantic,
    CP-SAT's Python layer, typer, rich, ... from source again — 3.6 CPU s instead of 0.9 to
    import the solver and CP-SAT, a worker's collection 15.6 instead of 10.8 (one process
    each, measured in a clean clone, busy). Now
    the first process that imports a module writes its `__pycache__` file (atomically: two
    runs at once are safe) and the others read it. A directory that cannot be written to is
    skipped by Python itself; the tree's own files were compiled before (above), and nothing
    else changes what runs."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


if not os.environ.get("PYTEST_XDIST_WORKER"):
    _compile_the_package()
    _keep_bytecode()


def pytest_configure(config: pytest.Config) -> None:
    _rewrite_a_share_of_the_test_modules(config)


SLOWEST_FIRST = (
    "test_scale_out.py",  # a local Ray: its start is mostly waiting, best overlapped early
    "test_planner_update.py",
    "test_firstfit.py",
    "test_hostile_input.py",
    "test_style.py",  # mypy, cold in a fresh clone
    "test_planner_local.py",
    "test_determinism.py",
    "test_whatif.py",
    "test_scale.py",
    "test_preempt_counting_mixed.py",
    "test_docs_commands.py",
    "test_racks_and_served.py",
    "test_preempt_moves_exhaustive.py",
    "test_messy_clusters.py",
    "test_fast_start.py",
    "test_watch.py",
    "test_search_memo.py",
    "test_differential.py",
    "test_architecture.py",
    "test_conformance_cli.py",
    "test_report_browser.py",  # a browser to start
    "test_emit.py",
    "test_aggregated_plan.py",
    "test_timeout_phases.py",
    "test_explain_hints.py",
    "test_load.py",
    "test_crowded_reasons_shared.py",
    "test_encoders_symmetry.py",
    "test_reasons_as_values.py",
)
"""The test files that take longest, slowest first (a file's CPU seconds, its module fixtures
and child processes included, from a clean-clone run with two workers, 2026-11-29 10:00, busy;
the files changed since weighed by their own measurements). xdist hands out whole files (`--dist
loadfile`) in the order the workers collected them (`--no-loadscope-reorder` in
pyproject.toml); the others follow, those with more tests first (xdist's own order otherwise).

Why: xdist's own order (by test count) handed out the files with few but slow tests (a watch
that waits for its batches, a local Ray, mypy over the package) last, and the worker that got
the last one ran alone while the other idled. Largest first leaves small files for the end.
A stale list costs only balance: every file runs either way."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """In an xdist worker: the files in `SLOWEST_FIRST` order, then by their test counts; the
    tests of a file keep their order (a stable sort). A run without workers is left as it is."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    counts: dict[Path, int] = {}
    for item in items:
        counts[item.path] = counts.get(item.path, 0) + 1
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), -counts[item.path]))


def _rewrite_a_share_of_the_test_modules(config: pytest.Config) -> None:
    """In an xdist worker, rewrite this worker's share of the test modules (every N-th of the
    sorted files, N workers) and keep each in pytest's own cache (`__pycache__/*-pytest-*.pyc`)
    before collection, which then reads the other workers' shares from that cache.

    Why: every worker collects, so imports, every test module, and pytest rewrites each
    module's asserts on import (4.7 of the 5.4 CPU s it takes to load the 150-odd files);
    with `PYTHONDONTWRITEBYTECODE=1` (the machines CI runs on) it keeps nothing, so each
    worker did all of it again, and a warm cache is never there in a fresh clone. Split, each
    worker does 1/N. The cache is pytest's: a pyc is keyed by its source's hash, written
    atomically, and a module whose pyc is missing (a share not done yet) or stale is rewritten
    at import as before, so what runs is what pytest would run. Uses pytest's private
    rewrite helpers; a pytest without them, `--assert=plain`, a single worker or a tree that
    cannot be written to is left as it is; only the modules this run collects are done."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if not worker.startswith("gw") or count < 2 or config.getoption("assertmode") != "rewrite":
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        tail, cache_dir, make = rewrite.PYC_TAIL, rewrite.get_cache_dir, rewrite.try_makedirs
        read, rewrite_test, write = rewrite._read_pyc, rewrite._rewrite_test, rewrite._write_pyc
    except (ImportError, AttributeError, KeyError):
        return
    modules = [m for m in sorted(Path(__file__).resolve().parent.glob("test_*.py")) if _collected(config, m)]
    for source in modules[int(worker[2:]) % count :: count]:
        pyc = cache_dir(source) / (source.name[:-3] + tail)
        if read(source, pyc) is not None:
            continue
        if not make(pyc.parent):
            return
        source_hash, code = rewrite_test(source, config)
        write(state, code, source_hash, pyc)


def _collected(config: pytest.Config, module: Path) -> bool:
    """Whether `module` is under one of the paths the run was given (or `testpaths`): a run of
    one file rewrites that file only, as before."""
    for arg in config.args:
        given = arg.split("::")[0]
        for base in (config.invocation_params.dir, config.rootpath):
            path = (base / given).resolve()
            if path == module or path in module.parents:
                return True
    return False


if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist starts its workers with COLUMNS=80; rich fixes a console's width from COLUMNS
    # when it is created (on import of dra_solver.cli), where the tests set COLUMNS per call
    # (CliRunner's env) as in a run without workers.
    os.environ.pop("COLUMNS", None)


def pytest_collection_finish(session: pytest.Session) -> None:
    _commands_built_once()


def _commands_built_once() -> None:
    """In a test process, `cli.main.load_command` builds each command once (`functools.cache`).

    Why: `CliRunner.invoke(app)` builds the app's group again for each call, and the group
    loads the command it runs (`Commands.get_command`): typer built the command from its
    function's signature every time, about a fifth of an in-process CLI test
    (tests/test_conformance_cli.py, profiled busy). A command is its function and its
    parameters, the same for every call; each call still makes its own context, parses its own
    arguments and looks up what the command calls (where the tests patch it). A process the
    tests start loads its command as before. Done once the tests are collected (their modules
    import the CLI); the group's listing of commands (`--help`) is left as it is."""
    main = sys.modules.get("dra_solver.cli.main")
    load = getattr(main, "load_command", None)
    if main is not None and load is not None and not hasattr(load, "cache_info"):
        main.load_command = functools.cache(load)


_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=_QUIET,
)
settings.register_profile(
    "long",
    max_examples=LONG_EXAMPLES,
    deadline=None,
    suppress_health_check=_QUIET,
)
# The environment picks the profile before the test modules are imported (their `examples(n)`
# read it then); `--hypothesis-profile` on the command line does the same.
settings.load_profile(os.environ.get("DRA_TEST_PROFILE") or "ci")


class _Lease(Executor):
    """One user's view of a shared process pool (`_SharedPools`): its `shutdown` waits for, or
    cancels, this user's own tasks, as a pool of its own would, and leaves the spawned workers
    running for the next test."""

    def __init__(self, pool: Callable[[], ProcessPoolExecutor]) -> None:
        self._pool = pool
        self._futures: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = self._pool().submit(fn, *args, **kwargs)
        self._futures.append(future)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            for future in self._futures:
                future.cancel()
        if wait:
            wait_for(self._futures)
        self._futures = []


class _SharedPools:
    """`executors.local_pool` for the tests: one pool of spawned workers per size, made on first
    use and kept for the whole session (a broken one is replaced). Why: the CLI's default
    `--executor local` spawns a pool per plan, and each spawned worker imports the solver and
    OR-tools again — seconds per CLI test that plans components, paid once instead. What a
    test sees is the same: tasks pickled to other processes and back, in submission order."""

    def __init__(self, make: Callable[[int], ProcessPoolExecutor]) -> None:
        self.make = make
        self.pools: dict[int, ProcessPoolExecutor] = {}

    def pool(self, workers: int) -> ProcessPoolExecutor:
        pool = self.pools.get(workers)
        if pool is None or getattr(pool, "_broken", False):
            pool = self.pools[workers] = self.make(workers)
        return pool

    def __call__(self, workers: int = dra_solver.executors.DEFAULT_WORKERS) -> Executor:
        return _Lease(lambda: self.pool(workers))

    def close(self) -> None:
        for pool in self.pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self.pools.clear()


_shared = _SharedPools(dra_solver.executors.local_pool)
dra_solver.executors.local_pool = _shared  # type: ignore[assignment]  # same signature, shared workers


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _shared.close()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _quick_exit()


def _quick_exit() -> None:
    """Collect the garbage once more, then freeze what is alive: the worker's last steps, after
    it has reported its results, traverse no more than what they make themselves.

    Why: an xdist worker reports "finished" after this hook; pytest's unconfigure then runs a
    full collection (`unraisableexception.gc_collect_harder`) over everything the session made,
    seconds on a busy machine, and execnet gives the rest of the run 5 seconds before it sends
    the worker a SIGINT of its own (`gateway_base._terminate_execution`). That SIGINT landed
    inside the collection, in Hypothesis' gc callback, and came out as a
    `PytestUnraisableExceptionWarning` (a KeyboardInterrupt) at the end of the run. Collected
    here, before the report, a cycle's finalizer that fails is still reported as before."""
    gc.collect()
    gc.freeze()
