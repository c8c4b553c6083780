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

import re
import threading
import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import interrupt

CUT_SHORT = "cut_short_by_timeout"
"""The stats key a run sets when its deadline fired."""


@dataclass
class Deadline:
    """A wall-clock moment after which searches stop with what they have."""

    at: float
    """`time.monotonic()` at which the run ends."""
    seconds: float = 0.0
    """How long the deadline was when set (`after`), for messages."""
    fired: bool = False
    """Set once a search of the run saw the deadline pass: its answer may depend on the
    machine's speed and load."""

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline `seconds` from now."""
        return cls(time.monotonic() + seconds, seconds)

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
        return {"left": max(self.at - time.monotonic(), 0.0), "fired": self.fired, "seconds": self.seconds}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.at = time.monotonic() + state["left"]
        self.fired = state["fired"]
        self.seconds = state.get("seconds", 0.0)


def passed(deadline: Deadline | None) -> bool:
    """Whether `deadline` is given and has passed (None never passes); a deadline seen passed
    is `fired`."""
    return deadline is not None and deadline.passed()


def fired(deadline: Deadline | None) -> bool:
    """Whether `deadline` is given and has fired (ended a search of the run)."""
    return deadline is not None and deadline.fired


def record(stats: MutableMapping[str, object], deadline: Deadline | None) -> None:
    """`stats[CUT_SHORT] = True` when `deadline` fired."""
    if deadline is not None and deadline.fired:
        stats[CUT_SHORT] = True


@contextmanager
def enforced(deadline: Deadline | None) -> Iterator[None]:
    """While inside, `deadline` passing stops the run as Ctrl-C does (`interrupt.request`): every
    loop that can stop early — first fit between pods, CP-SAT during its calls, the reasons of
    the pods left out — stops at once and the plan keeps what it has checked so far. Why through
    the stop flag: those loops already ask it, so one deadline bounds the whole run without a
    parameter in every signature. The deadline is `fired`; the stop request it made is taken
    back on leaving (a later run of the process starts afresh), a Ctrl-C's is not."""
    if deadline is None:
        yield
        return
    ours = threading.Event()

    def expire() -> None:
        deadline.fire()
        ours.set()
        interrupt.request()

    timer = threading.Timer(max(deadline.at - time.monotonic(), 0.0), expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if ours.is_set():
            interrupt.reset()


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds of a duration as kubectl's `--timeout` takes it (`500ms`, `5s`, `1m30s`, `2h`),
    or a plain number of seconds. Raises ValueError for anything else or for zero."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise ValueError(f"not a duration: {text!r} (e.g. 30s, 5m, 1m30s, 500ms)") from None
        seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    if not seconds > 0:
        raise ValueError(f"must be positive, got {text!r}")
    return seconds


__all__ = ["CUT_SHORT", "Deadline", "enforced", "fired", "parse_duration", "passed", "record"]
