"""Issue #40 §2: every phase of a run looks at the one deadline, and wherever it passes the
answer is a checked plan that says it was cut short (or, while reading, no plan and why).

No test here reads the clock: the deadline is a fake that passes at its N-th look
(`CountingDeadline`), whatever the time; `enforced`'s timer would read the real clock, so
the fake asks for the stop itself when it passes, as the timer does."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from dra_solver import Cluster, interrupt, plan
from dra_solver.check import check_cluster
from dra_solver.cli import plan as plan_command
from dra_solver.cli.main import app
from dra_solver.deadline import CUT_SHORT, Deadline
from dra_solver.planning.finish import CHECK_CUT_SHORT

ROOT = Path(__file__).resolve().parent.parent
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
runner = CliRunner()


class CountingDeadline(Deadline):
    """Passes at look number `after` (0: the first; None: never); every look is recorded in
    `looks` (shared with the deadlines cut from it, `leaving`) as the module that looked."""

    def __init__(self, after: int | None, looks: list[str], parent: Deadline | None = None) -> None:
        super().__init__(time.monotonic() + 3600.0, 3600.0, started=time.monotonic(), parent=parent)
        self.after = after
        self.looks = looks

    def left(self, grace: float = 0.0) -> float:
        self.looks.append(_looker())
        if self.after is not None and len(self.looks) > self.after:
            if not self.fired:
                self.fire()
                interrupt.request()  # what `enforced`'s timer does when the deadline passes
            return 0.0
        return 3600.0

    def leaving(self, cpu_seconds: float) -> Deadline:
        return CountingDeadline(self.after, self.looks, parent=self)


_GO_ON = ("dra_solver.deadline", "dra_solver.cli.plan", "contextlib", __name__)
"""Frames that pass a look on: the deadline's helpers, the CLI's reading callback, `with`."""


def _looker() -> str:
    """The module that looked at the deadline (past the frames that only pass it on)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__") in _GO_ON:
        frame = frame.f_back  # type: ignore[assignment]  # None only past the outermost frame
    return str(frame.f_globals.get("__name__")) if frame is not None else "?"


@pytest.fixture(autouse=True)
def _no_stop_left() -> Iterator[None]:
    yield
    interrupt.reset()  # a fake that passed asked for the stop; the next test starts afresh


def _run_cli(monkeypatch: pytest.MonkeyPatch, deadline: CountingDeadline, *args: str) -> Any:
    class Fake:
        @staticmethod
        def since_start(seconds: float) -> Deadline:
            return deadline

    monkeypatch.setattr(plan_command, "Deadline", Fake)
    return runner.invoke(app, ["plan", DUMP, "--timeout", "1h", *args])


@pytest.fixture(scope="module")
def every_look() -> list[str]:
    """The looks of a whole CLI run whose deadline never passes."""
    looks: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        got = _run_cli(mp, CountingDeadline(None, looks))
    assert got.exit_code == 2, got.stderr
    assert "cut short" not in got.stderr
    return looks


def test_every_phase_looks_at_the_deadline(every_look: list[str]) -> None:
    """Reading, the search (its CP-SAT stages, and the run's stop flag, `enforced`) and the
    final check each look at the deadline."""
    seen = set(every_look)
    assert seen & {"dra_solver.api.bounded", "dra_solver.api.load"}, seen  # reading
    assert "dra_solver.planners.run" in seen, seen  # the search, under `enforced`
    assert "dra_solver.cpsat" in seen, seen  # CP-SAT between its stages
    assert "dra_solver.planning.finish" in seen, seen  # the final check
    reading = max(i for i, m in enumerate(every_look) if m.startswith("dra_solver.api"))
    checking = min(i for i, m in enumerate(every_look) if m == "dra_solver.planning.finish")
    assert reading < checking


def _phase(module: str) -> str:
    if module.startswith("dra_solver.api"):
        return "reading"
    return "check" if module == "dra_solver.planning.finish" else "search"


@pytest.mark.parametrize("phase", ["reading", "search", "check"])
@pytest.mark.parametrize("which", ["first", "last"])
def test_wherever_the_deadline_passes_the_output_is_checked_and_says_so(
    monkeypatch: pytest.MonkeyPatch, every_look: list[str], phase: str, which: str
) -> None:
    """The deadline passes at the first or the last look of a phase: while reading, no plan
    (exit 1, and why); later, a plan that passes `dra-solver check` as the whole cluster after
    it, with the cut-short annotation and line."""
    at = [i for i, m in enumerate(every_look) if _phase(m) == phase]
    after = at[0] if which == "first" else at[-1]
    looks: list[str] = []
    got = _run_cli(monkeypatch, CountingDeadline(after, looks), "--output-mode", "full")
    assert _phase(looks[after]) == phase
    if phase == "reading":
        assert got.exit_code == 1
        assert "cut short by --timeout after" in got.stderr
        assert "while reading the input" in got.stderr
        return
    assert got.exit_code in (0, 2), got.stderr
    assert "cut short by --timeout after " in got.stderr
    assert "this answer depends on the machine's speed" in got.stderr
    listed = yaml.safe_load(got.stdout)
    assert listed["metadata"]["annotations"]["dra-solver.io/cut-short-by-timeout"] == "true"
    after_plan = Cluster.from_objects(listed["items"])
    assert check_cluster(after_plan) == []


def test_a_check_cut_short_returns_no_unchecked_placement() -> None:
    """The deadline passes while the final check runs: the library returns a plan that places
    no pod (every pod says why), not the plan the check did not finish; cut short, and no
    OPTIMAL claimed for a plan that places less than the bound."""
    cluster = Cluster.from_paths([DUMP])
    looks: list[str] = []
    plan(cluster, deadline=CountingDeadline(None, looks))
    first_check = looks.index("dra_solver.planning.finish")
    out = plan(cluster, deadline=CountingDeadline(first_check, []))
    assert out.stats[CUT_SHORT] is True
    assert out.placed == 0
    assert {p.reason for p in out.pods} >= {CHECK_CUT_SHORT}
    assert out.stats.get("status") != "OPTIMAL" or out.stats.get("bound") == 0


def test_a_deadline_that_passes_before_reading_gives_no_plan_and_says_why() -> None:
    """`--timeout 1ms`: over before the first object is read (the clock starts with the
    command): exit 1, one line, no traceback, nothing on stdout."""
    got = runner.invoke(app, ["plan", DUMP, "--timeout", "1ms"])
    assert got.exit_code == 1
    assert "cut short by --timeout after" in got.stderr
    assert "no plan" in got.stderr
    assert "Traceback" not in got.stderr
    assert got.stdout == ""
