"""The `dra-solver` command line (typer + rich): the app, its commands, the console script.

Why this shape: every command starts the same way — read files/directories/stdin into a
Cluster, print every input problem as `file: Kind ns/name: field: reason`, exit 1 — so that
plumbing is shared (`cli.inputs`, `cli.console`, the option declarations of `cli.options`,
the help of `cli.help`) and each command is one module that only does its own job
(`cli.validate`, `cli.check`, `cli.allocate`, `cli.plan`, `cli.explain`, `cli.dump`), listed here in the
order `dra-solver --help` lists them. Bad input must never end in a Python traceback: every
`DRASolverError` is printed as a message and mapped to exit code 1.

A command's module is imported only when that command runs or shows its own help (`Commands`):
`--version` and `--help` load typer and rich and nothing of the solver, and each command loads
only what it uses — CP-SAT, plotly, the Kubernetes client and Ray are seconds of imports that
`validate` and `--version` have no use for (issue #40, "A fast start").

Exit codes: 0 success, 1 invalid input or error, 2 (allocate) the claims cannot be allocated
(plan: some pods are not placed), 3 (check) the cluster breaks a rule, 130 interrupted.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from functools import partial
from importlib import import_module
from typing import Annotated, Any, NoReturn

import typer
import typer.core
import typer.main
from rich.text import Text

from .. import interrupt
from ..deadline import Deadline, parse_duration, process_run, timed_run, watch_start
from .console import BUG_HINT, EXIT_ERROR, EXIT_OK, OUT_OF_MEMORY, err, out
from .help import HelpGroup, NoArgsIsHelpError, UsageError, click

# The commands, in the order `dra-solver --help` lists them, each with the line it is listed
# with: the first paragraph of its function's docstring, on one line (the help of the command
# itself is the whole docstring, read when the command is loaded). Kept equal to the docstrings
# by tests/test_fast_start.py, so that listing the commands imports none of them. The command
# `NAME` is the function `NAME` of the module `dra_solver.cli.NAME`.
COMMANDS: dict[str, str] = {
    "validate": (
        "Check the input objects against the API validation rules and everything the allocator "
        "refuses as invalid input (with the given feature gates); print every problem."
    ),
    "allocate": "Allocate claims together on one node (as upstream does for one pod: all or none).",
    "plan": "Place many pods over many nodes: as many (priority-weighted) pods as possible.",
    "explain": (
        "Say why a claim (or a pod's claims) cannot be allocated, per node, nodes with the same "
        "reason grouped; or where it fits — alone on the cluster as the input has it; then what "
        "the plan of the input's pending pods does with it. Exit 0 either way, 1 on invalid input."
    ),
    "check": (
        "Audit a cluster state (a plan's --output-mode full output, or a kubectl dump): every "
        "allocated claim (devices, selectors, counts, capacity, counters, constraints, shareIDs, "
        "adminAccess, taints) and every bound pod (node selection, taints, its claims allocated "
        "and reserved for it on its node, node resources, gangs), with the checker's own reading "
        "of the rules. Prints one line per violation: the object, the rule, the values."
    ),
    "dump": (
        "Write a live cluster's objects — every kind the planner reads, across all namespaces, the "
        "workloads included — to stdout as one kind: List, so that `plan FILE` plans what "
        "`plan --kubeconfig` plans of the same state. Without a flag the cluster is found as with "
        "--live. Read-only: GET requests only."
    ),
}


class _Listed(typer.core.TyperCommand):
    """A command not loaded yet: its name and the line `--help` lists it with, nothing else."""


def load_command(name: str) -> click.Command:
    """The command `name` as typer builds it from its function (`COMMANDS`), its module
    imported now."""
    function = getattr(import_module(f"{__package__}.{name}"), name)
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    single.command(name=name)(function)
    return typer.main.get_command(single)


class Commands(HelpGroup):
    """The app's group: every command of `COMMANDS`, each loaded when it is run or asked for
    its own help (`get_command`); the group's help lists them without loading any."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, line in COMMANDS.items():
            self.commands.setdefault(name, _Listed(name, help=line))
        self._listing = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if isinstance(self.commands.get(cmd_name), _Listed) and not self._listing:
            self.commands[cmd_name] = load_command(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="dra-solver",
    cls=Commands,
    help="Optimal allocation engine for Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """`--version`: eager, so it answers before any command is required."""
    if value:
        out.print(f"dra-solver {import_module('dra_solver').__version__}")  # read on first use
        raise typer.Exit(EXIT_OK)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """dra-solver: validate and allocate DRA ResourceClaims offline, from YAML."""


def _usage_line(exc: UsageError) -> str:
    """A usage error (unknown option, bad value) as one line, as every other error is: the
    command, what is wrong, where the help is."""
    command = exc.ctx.command_path if exc.ctx is not None else "dra-solver"
    message = " ".join(exc.format_message().split())
    return f"{command}: {message} (see '{command} --help')"


def _no_collection_at_exit() -> None:
    """At the interpreter's exit: no cyclic collection over what is left. Why: Python's
    finalization collects the whole heap before it clears the modules, and after a large plan
    that heap is millions of objects (the caches of the models and the CEL programs) — a CPU
    second of a 10,000-pod run, measured with `/usr/bin/time` against the run's own CPU (1.06
    s, 0.04 s frozen), more at 50,000 — spent on a process that is ending. Frozen objects are
    not collected; reference counting still frees the rest."""
    gc.disable()
    gc.freeze()


atexit.register(_no_collection_at_exit)


def run() -> None:
    """Entry point of the `dra-solver` console script and `python -m dra_solver`.

    Why not `app` directly: click reports usage errors (an unknown option, a bad choice)
    with exit code 2, which `allocate` uses for "cannot be allocated". Usage errors are
    invalid input here, so they exit 1. Ctrl-C outside a plan's search exits 130; an
    unexpected exception (a bug) or running out of memory is one line on stderr and exit 1,
    never a traceback."""
    try:
        with process_run():  # --timeout counts from the process's start
            code = app(prog_name="dra-solver", standalone_mode=False)
    except NoArgsIsHelpError as exc:  # `dra-solver` alone: the help
        exc.show()
        code = EXIT_ERROR
    except UsageError as exc:
        err.print(Text(_usage_line(exc), style="red"))
        code = EXIT_ERROR
    except typer.Abort:  # click's name for KeyboardInterrupt (Ctrl-C outside a plan's search)
        err.print(Text("interrupted", style="bold yellow"))
        code = interrupt.EXIT_INTERRUPTED
    except MemoryError:
        err.print(Text(OUT_OF_MEMORY, style="red"))
        code = EXIT_ERROR
    except Exception as exc:  # a bug, not the user's fault: one line, never a traceback
        if os.environ.get("DRA_SOLVER_DEBUG"):
            raise
        err.print(Text(f"internal error: {type(exc).__name__}: {exc} ({BUG_HINT})", style="red"))
        code = EXIT_ERROR
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def entry() -> NoReturn:
    """The console script and `python -m dra_solver`: `run`, and, for a run given `--timeout`
    (`deadline.timed_run`), the end of the process once its output is flushed (`end_now`);
    `plan|explain --timeout`: the watchdog of what runs before the run's first look at its deadline
    (`deadline.watch_start`, `_ended_before_the_search`)."""
    if (seconds := _plan_timeout(sys.argv[1:])) is not None:
        watch_start(seconds, partial(_ended_before_the_search, "plan" if sys.argv[1] == "plan" else "answer"))
    try:
        run()
    except SystemExit as done:
        if timed_run():
            end_now(done.code if isinstance(done.code, int) else EXIT_ERROR)
        raise
    raise AssertionError("run() ends in SystemExit")  # pragma: no cover


def _plan_timeout(args: list[str]) -> float | None:
    """The seconds of `plan|explain ... --timeout D` (or `--timeout=D`), else None (another
    command, no `--timeout`, or one typer will refuse: it says why)."""
    if args[:1] not in (["plan"], ["explain"]):
        return None
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "--timeout" and i + 1 < len(args) else None
        if arg.startswith("--timeout="):
            value = arg.split("=", 1)[1]
        if value is not None:
            try:
                return parse_duration(value)
            except ValueError:
                return None
    return None


def _ended_before_the_search(what: str, deadline: Deadline) -> None:
    """The watchdog's end (`deadline.watch_start`): the deadline passed before the run's
    first look at it could say so — the interpreter's start, the imports, a YAML document
    composed whole — so there is no `what` (plan, answer): one line, exit 1, as a run cut
    short while reading."""
    err.print(
        Text(
            f"cut short by --timeout after {deadline.elapsed():.1f} s before the search began "
            f"(starting, importing, reading or validating the input): no {what} "
            "(a longer --timeout gives one)",
            style="bold yellow",
        )
    )
    end_now(EXIT_ERROR)


def end_now(code: int) -> NoReturn:
    """End the process now: the exit handlers (`atexit`: `_no_collection_at_exit`, a local
    Ray's shutdown, multiprocessing's cleanup), stdout and stderr flushed, then `os._exit`.

    Why: `--timeout` bounds the whole run, and what the interpreter does after the exit
    handlers — destroying every module and object the run made, OR-Tools' C++ teardown — is
    work no deadline looks at: 0.02-0.035 CPU s and 0.07-0.08 s wall of a 5,000-pod plan at
    load 15 (docs/benchmarks.md, "Bounded runs"). Safe here because nothing is left to write
    (the output is flushed below; the files a command writes, `--report`'s, are closed when
    written) and nothing runs after the command but the exit handlers, which run first.
    Only the console script does it (`entry`): a command run in-process returns."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`), or a stream already closed
            code = code or EXIT_ERROR
    os._exit(code)


# Also importable from here, where they were before the commands had modules of their own;
# loaded on first use, as the commands are.
_MOVED = {
    "PLANNING_NOTICE": "plan",
    "POD_LINES": "plan",
    "UNPLACED_LINES": "plan",
    "plan_summary": "plan",
    "SourcedCluster": "inputs",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__package__}.{module}"), name)


__all__ = ["COMMANDS", "Commands", "app", "end_now", "entry", "load_command", "run"]

if __name__ == "__main__":  # pragma: no cover
    entry()
