"""Issue #40 §2: one deadline bounds the whole run (`--timeout`, docs/semantics.md, "Limits and
determinism"). When it passes, the best checked plan so far is printed and says it was cut
short (tests/test_timeout_phases.py, with a deadline that passes at a chosen look); without it
(or with one that does not pass) the answer is the one of no timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dra_solver.cli.main import app
from dra_solver.deadline import parse_duration

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
