"""The console script's `run()` called in the test's own process: its exit code and what it
wrote, for tests about the text and the code rather than the process.

Why: a fresh interpreter per case (`python -m dra_solver`) imports the solver again, a second or
two of CPU each; what `run()` adds over `app` (usage errors exit 1 on one line, no traceback)
runs the same here. The process itself (signals, memory limits, imports at start) stays with
the tests that are about it (test_hostile_input's signal cases, test_fast_start,
`python -m dra_solver` in test_cli_validate and test_package)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from dra_solver.cli.main import run


def run_cli(
    capsys: pytest.CaptureFixture[str], *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`dra-solver ARGS` as `run()` runs it, stdin given; the result as `subprocess.run` gives it."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["dra-solver", *args])
        patch.setattr(sys, "stdin", io.StringIO(stdin))
        with pytest.raises(SystemExit) as exit_:
            run()
    out, err = capsys.readouterr()
    code = exit_.value.code
    return subprocess.CompletedProcess(list(args), code if isinstance(code, int) else 0, out, err)
