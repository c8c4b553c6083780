"""The `dra-solver` command line (typer + rich): the app, its commands, the console script.

Why this shape: every command starts the same way — read files/directories/stdin into a
Cluster, print every input problem as `file: Kind ns/name: field: reason`, exit 1 — so that
plumbing is shared (`cli.inputs`, `cli.console`, the option declarations of `cli.options`,
the help of `cli.help`) and each command is one module that only does its own job
(`cli.validate`, `cli.check`, `cli.allocate`, `cli.plan`, `cli.explain`, `cli.dump`), registered here in the
order `dra-solver --help` lists them. Bad input must never end in a Python traceback: every
`DRASolverError` is printed as a message and mapped to exit code 1.

Exit codes: 0 success, 1 invalid input or error, 2 (allocate) the claims cannot be allocated
(plan: some pods are not placed), 3 (check) the cluster breaks a rule, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from rich.text import Text

from .. import __version__, interrupt
from .allocate import allocate
from .check import check
from .console import BUG_HINT, EXIT_ERROR, EXIT_OK, OUT_OF_MEMORY, err, out
from .dump import dump
from .explain import explain
from .help import HelpGroup, NoArgsIsHelpError, UsageError
from .inputs import SourcedCluster
from .plan import PLANNING_NOTICE, POD_LINES, UNPLACED_LINES, plan, plan_summary
from .validate import validate

app = typer.Typer(
    name="dra-solver",
    cls=HelpGroup,
    help="Optimal allocation engine for Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """`--version`: eager, so it answers before any command is required."""
    if value:
        out.print(f"dra-solver {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """dra-solver: validate and allocate DRA ResourceClaims offline, from YAML."""


for _command in (validate, allocate, plan, explain, check, dump):
    app.command()(_command)


def _usage_line(exc: UsageError) -> str:
    """A usage error (unknown option, bad value) as one line, as every other error is: the
    command, what is wrong, where the help is."""
    command = exc.ctx.command_path if exc.ctx is not None else "dra-solver"
    message = " ".join(exc.format_message().split())
    return f"{command}: {message} (see '{command} --help')"


def run() -> None:
    """Entry point of the `dra-solver` console script and `python -m dra_solver`.

    Why not `app` directly: click reports usage errors (an unknown option, a bad choice)
    with exit code 2, which `allocate` uses for "cannot be allocated". Usage errors are
    invalid input here, so they exit 1. Ctrl-C outside a plan's search exits 130; an
    unexpected exception (a bug) or running out of memory is one line on stderr and exit 1,
    never a traceback."""
    try:
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


# Also importable from here, where they were before the commands had modules of their own.
__all__ = [
    "PLANNING_NOTICE",
    "POD_LINES",
    "UNPLACED_LINES",
    "SourcedCluster",
    "app",
    "plan_summary",
    "run",
]

if __name__ == "__main__":  # pragma: no cover
    run()
