"""The one wall clock that may change a result: an explicit deadline (`--timeout`).

Why a rule: the same input and seed give the same output on an idle and on a busy machine
(docs/semantics.md, "Limits and determinism"). Every limit that decides where a search stops
counts work — CP-SAT's deterministic time (`cpsat.cp_solver`), the reference's and first fit's
steps — and nothing that changes a result reads the clock, but for a `Deadline` the caller
passes explicitly (`Options.deadline`, None by default). Where one fires, the run says so
(`record`: `stats["cut_short_by_timeout"]`), and a status is OPTIMAL only where it is proven
anyway. Timing statistics (seconds reported) read the clock freely: they decide nothing.

A deadline travels to other processes (a process pool, Ray) as the seconds it has left
(`__getstate__`), since clocks of two machines need not agree; whether it fired there comes
back with the worker's result.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

CUT_SHORT = "cut_short_by_timeout"
"""The stats key a run sets when its deadline fired."""


@dataclass
class Deadline:
    """A wall-clock moment after which searches stop with what they have."""

    at: float
    """`time.monotonic()` at which the run ends."""
    fired: bool = False
    """Set once a search of the run saw the deadline pass: its answer may depend on the
    machine's speed and load."""

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline `seconds` from now."""
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        """Seconds left; 0.0 once passed (and then `fired`)."""
        left = self.at - time.monotonic()
        if left > 0:
            return left
        self.fired = True
        return 0.0

    def passed(self) -> bool:
        return self.left() <= 0.0

    def fire(self) -> None:
        """Record that the deadline ended a search elsewhere (a worker's result says so)."""
        self.fired = True

    def __getstate__(self) -> dict[str, Any]:
        return {"left": max(self.at - time.monotonic(), 0.0), "fired": self.fired}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.at = time.monotonic() + state["left"]
        self.fired = state["fired"]


def passed(deadline: Deadline | None) -> bool:
    """Whether `deadline` is given and has passed (None never passes); a deadline seen passed
    is `fired`."""
    return deadline is not None and deadline.passed()


def record(stats: MutableMapping[str, object], deadline: Deadline | None) -> None:
    """`stats[CUT_SHORT] = True` when `deadline` fired."""
    if deadline is not None and deadline.fired:
        stats[CUT_SHORT] = True


__all__ = ["CUT_SHORT", "Deadline", "passed", "record"]
