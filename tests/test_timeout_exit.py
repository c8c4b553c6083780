"""Issue #40 §2: a run given `--timeout` ends its process once its output is flushed
(`cli.main.entry`, `end_now`): the interpreter's teardown is work no deadline looks at; and
what runs before the plan's first look at the deadline is watched (`deadline.watch_start`).
These run the console in a fresh process (the point is the process's end); no test here reads
the wall clock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from console_run import run_cli
from yaml_text import read_yaml

ROOT = Path(__file__).resolve().parents[1]
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")


def test_end_now_runs_the_exit_handlers_and_flushes_before_it_ends() -> None:
    """`end_now` skips only the interpreter's teardown: the exit handlers run, everything
    written (more than a pipe's buffer) arrives, and the exit code is the one given."""
    code = (
        "import atexit, sys\n"
        "from dra_solver.cli.main import end_now\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "sys.stdout.write('x' * 200000 + '\\n')\n"
        "sys.stderr.write('to stderr')\n"
        "end_now(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 3
    assert done.stdout == "x" * 200000 + "\nhandler ran\n"
    assert done.stderr == "to stderr"


def test_a_timed_run_ends_with_the_same_output_and_code_as_an_untimed_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m dra_solver plan FILE --timeout 1h` (which ends through `end_now`) prints what
    the same run without `--timeout` prints, whole, and exits with the plan's code. The run
    without is the console's `run()` in this process (`console_run`): the process's end is the
    timed run's, the other only says what a whole output is."""
    args = ["plan", DUMP, "--output-mode", "full"]
    cmd = [sys.executable, "-m", "dra_solver", *args, "--timeout", "1h"]
    timed = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    monkeypatch.chdir(ROOT)
    untimed = run_cli(capsys, *args)
    assert timed.returncode == untimed.returncode == 2, timed.stderr
    assert timed.stdout == untimed.stdout and read_yaml(timed.stdout)["kind"] == "List"
    assert (
        timed.stderr.splitlines()[-1].split(", planned in")[0]
        == untimed.stderr.splitlines()[-1].split(", planned in")[0]
    )


def test_a_deadline_passed_before_the_plan_looks_at_it_ends_the_process_with_no_plan() -> None:
    """`plan --timeout 1ms`: the deadline passes while the interpreter starts and imports,
    before the run's first look at it; the watchdog ends the process there — one line, no
    plan, exit 1, as a run cut short while reading — instead of after the imports."""
    cmd = [sys.executable, "-m", "dra_solver", "plan", DUMP, "--timeout", "1ms"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 1 and done.stdout == ""
    assert "before the search began" in done.stderr and "no plan" in done.stderr
    assert "Traceback" not in done.stderr


def test_only_plan_s_and_explain_s_timeout_arm_the_watchdog() -> None:
    """The console reads `plan`'s and `explain`'s `--timeout` before typer does (to arm the
    watchdog before the imports); anything else, or a value typer will refuse, arms nothing."""
    from dra_solver.cli.main import _plan_timeout

    assert _plan_timeout(["plan", "f.yaml", "--timeout", "1m30s"]) == 90.0
    assert _plan_timeout(["plan", "--timeout=500ms", "f.yaml"]) == 0.5
    assert _plan_timeout(["plan", "f.yaml"]) is None
    assert _plan_timeout(["plan", "f.yaml", "--timeout", "soon"]) is None
    assert _plan_timeout(["explain", "f.yaml", "--pod", "p", "--timeout", "5s"]) == 5.0
    assert _plan_timeout(["validate", "f.yaml", "--timeout", "5s"]) is None
    assert _plan_timeout(["plan", "f.yaml", "--timeout"]) is None
