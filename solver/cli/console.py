"""Where the command line's words go: stdout for the answer, stderr for everything said about
it — errors, warnings, progress — and the exit codes.

Why one place: every command reports bad input the same way (`file: Kind ns/name: field:
reason`, every problem, then a count when there are several, exit 1), so a user fixes them all
in one pass and a script reads one shape. Bad input must never end in a Python traceback: `fail` turns every
`DRASolverError` into those lines and exit code 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NoReturn

import typer
from rich.console import Console
from rich.text import Text

from ..errors import DRASolverError, InputError

EXIT_OK = 0
EXIT_ERROR = 1
"""Invalid input (including usage errors, which click would exit 2 with) or an error."""
EXIT_UNSCHEDULABLE = 2
"""`allocate`: the claims cannot be allocated; `plan`: some pods are not placed."""
EXIT_VIOLATIONS = 3
"""`check`: the cluster breaks a rule."""

OUT_OF_MEMORY = (
    "out of memory: the input, or the plan it asks for, is too large for this machine "
    "(give fewer files, pods or nodes)"
)
BUG_HINT = "a bug in dra-solver; DRA_SOLVER_DEBUG=1 shows the traceback"

# Consoles resolve sys.stdout/sys.stderr at print time, so test runners can capture them.
out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def print_error(error: InputError | DRASolverError) -> None:
    """One line: `file: Kind ns/name: field: reason` (parts that are unknown are left out)."""
    line = Text()
    if isinstance(error, InputError):
        for part, style in ((error.source, "dim"), (error.obj, "bold"), (error.field, "cyan")):
            if part:
                line.append(part, style=style)
                line.append(": ")
        line.append(error.reason, style="red")
    else:
        line.append(str(error), style="red")
    err.print(line)


def print_errors(errors: Sequence[InputError | DRASolverError]) -> None:
    """Every error, then — when there are several — a count, so a user can fix them all in one
    pass. One error is its one line, as kubectl prints one (a count of 1 says nothing more)."""
    for error in errors:
        print_error(error)
    if len(errors) > 1:
        err.print(Text(f"{len(errors)} errors", style="bold red"))


def print_warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        err.print(Text(f"warning: {warning}", style="yellow"))


def fail(errors: Sequence[InputError | DRASolverError]) -> NoReturn:
    """Print every error (and a count, when there are several), then exit 1."""
    print_errors(errors)
    raise typer.Exit(EXIT_ERROR)


__all__ = [
    "BUG_HINT",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_UNSCHEDULABLE",
    "EXIT_VIOLATIONS",
    "OUT_OF_MEMORY",
    "err",
    "fail",
    "out",
    "print_error",
    "print_errors",
    "print_warnings",
]
