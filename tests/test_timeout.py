"""Issue #40 §2: one deadline bounds the whole run (`--timeout`, docs/semantics.md, "Limits and
determinism"). When it passes, the best checked plan so far is printed and says it was cut
short (tests/test_timeout_phases.py, with a deadline that passes at a chosen look); without it
(or with one that does not pass) the answer is the one of no timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dra_solver import deadline as deadline_module
from dra_solver.cli.main import app
from dra_solver.deadline import Deadline, parse_duration

ROOT = Path(__file__).resolve().parent.parent
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
runner = CliRunner()


@pytest.mark.parametrize(
    ("text", "seconds"), [("5s", 5.0), ("1m30s", 90.0), ("500ms", 0.5), ("2h", 7200.0), ("10", 10.0)]
)
def test_a_duration_reads_as_kubectl_writes_it(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "-1", "5x", "1m x", ""])
def test_a_bad_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_a_timeout_that_does_not_pass_changes_nothing() -> None:
    plain = runner.invoke(app, ["plan", DUMP])
    timed = runner.invoke(app, ["plan", DUMP, "--timeout", "10m"])
    assert timed.exit_code == plain.exit_code == 2
    assert timed.stdout == plain.stdout
    assert "cut short" not in timed.stderr


def test_the_console_script_counts_the_timeout_from_the_process_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside the console script's run (`process_run`) a `--timeout` deadline starts when the
    process started; outside it (a command run in-process), when it is made."""
    monkeypatch.setattr(deadline_module, "process_started", lambda: 1000.0)
    with deadline_module.process_run():
        inside = Deadline.since_start(5.0)
    assert (inside.at, inside.started, inside.cpu_started) == (1005.0, 1000.0, 0.0)
    outside = Deadline.since_start(5.0)
    assert outside.started is not None and outside.started != 1000.0
    assert outside.at == outside.started + 5.0


def test_a_phase_that_leaves_time_ends_earlier_and_fires_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`leaving(cpu)`: earlier by at least `cpu` (a share of a CPU is at most 1), by `cpu` over
    the share when the run got less, but never more than half the time left (a worst-case
    reserve must not leave the search nothing); firing it fires the run's deadline; nothing
    left, no change."""
    run = Deadline(at=100.0, seconds=10.0, started=90.0)
    monkeypatch.setattr(deadline_module.time, "monotonic", lambda: 90.0)  # 10 s left
    monkeypatch.setattr(Deadline, "cpu_share", lambda self: 0.5)
    search = run.leaving(2.0)
    assert search.at == 96.0 and search.parent is run
    assert run.leaving(4.0).at == 95.0  # 8 s asked, half of the 10 s left kept
    assert run.leaving(0.0).at == 100.0
    search.fire()
    assert run.fired
