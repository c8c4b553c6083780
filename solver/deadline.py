"""The one wall clock that may change a result: an explicit deadline (`--timeout`).

Why a rule: the same input and seed give the same output on an idle and on a busy machine
(docs/semantics.md, "Limits and determinism"). Every limit that decides where a search stops
counts work — CP-SAT's deterministic time (`cpsat.cp_solver`), the reference's and first fit's
steps — and nothing that changes a result reads the clock, but for a `Deadline` the caller
passes explicitly (`Options.deadline`, None by default). Where one fires, the run says so
(`planning.outcome.record`: `stats["cut_short_by_timeout"]`), and a status is OPTIMAL only where it is proven
anyway. Timing statistics (seconds reported) read the clock freely: they decide nothing.

A deadline travels to other processes (a process pool, Ray) as the seconds it has left
(`__getstate__`), since clocks of two machines need not agree; whether it fired there comes
back with the worker's result.

Why phases reserve time (`leaving`): the steps after the search — the final check of the plan,
writing the output — cannot stop half way (a check cut short proves nothing; half a YAML list
is no output), so the search ends early enough to leave them the time they need. What they
need is counted, not clocked: objects to write, pods to check, times a CPU cost per unit
measured on a reference machine. Turned into this run's wall seconds (`stretch`) by two
measures of the run itself: its `pace` (`gauge`: the CLI writes a sample of the input's
objects and measures the CPU seconds that took against what the count says, so a run on a
slower CPU, or on one that a busy machine's contention slows, keeps more, and one on a faster
or idle CPU less), over the share of a CPU the run got so far (`cpu_share`: a busy machine
slows the last steps as much as it slowed everything before). CPU seconds, not wall, for the
pace: the share of a CPU already says how much of the wall clock the run gets.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from . import interrupt

CUT_SHORT = "cut_short_by_timeout"
"""The stats key a run sets when its deadline fired."""

MIN_CPU_SHARE = 0.1
"""The least share of a CPU `cpu_share` assumes: below it a reserve would take the whole run."""

RESERVE_SHARE = 0.5
"""The most of the time left that `leaving` keeps for the steps after a search."""

MIN_GAUGED_CPU = 0.005
"""Counted CPU seconds below which a gauge measures nothing (the clock's and the caches'
noise outweigh the work): the pace stays 1."""

MIN_PACE = 0.25
"""The least pace a gauge sets (CPU seconds per counted CPU second): a sample far faster than
its count (objects the count overstates) must not shrink the reserves to nothing, since the
count of the last steps may understate theirs as much."""

MAX_PACE = 4.0
"""The most pace a gauge sets: a sample far slower than its count (objects the count
understates) must not take the run's time from the search for steps it may overstate."""


@dataclass
class Gauge:
    """What `Deadline.gauging` measures: the caller sets `counted`, the CPU seconds its step
    costs on the reference machine (counted from its objects), before the block ends."""

    counted: float = 0.0


_run_started: float | None = None
"""`time.monotonic()` at which this process started, once the console script said it is one
run (`process_run`); None: a library caller, whose deadline counts from its call."""


def process_started() -> float:
    """`time.monotonic()` at the moment this process started (Linux: `/proc/self/stat`'s start
    time against the boot clock), so that `--timeout` counts the interpreter's start and the
    imports too; elsewhere, now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age < 3600.0 else now


_timed_run = False
"""Whether the run inside `process_run` made its deadline (`Deadline.since_start`: the command
was given `--timeout`), for `timed_run`."""


def timed_run() -> bool:
    """Whether the last `process_run` made a deadline (`--timeout`): the console script then
    ends the process as soon as its output is flushed (`cli.main.entry`)."""
    return _timed_run


@contextmanager
def process_run() -> Iterator[None]:
    """The console script's run (`cli.main.run`): inside, a deadline made with
    `Deadline.since_start` counts from the process's start. Outside (a command invoked
    in-process, a test), from the command's own start."""
    global _run_started, _timed_run
    _run_started = process_started()
    _timed_run = False
    try:
        yield
    finally:
        _run_started = None


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
    started: float | None = None
    """`time.monotonic()` when the run began (None: `at - seconds`), for messages and `cpu_share`."""
    cpu_started: float = 0.0
    """`time.process_time()` when the run began (0.0: the process's start)."""
    parent: Deadline | None = field(default=None, repr=False, compare=False)
    """The run's deadline this one was cut from (`leaving`): it fires with this one."""
    pace: float | None = None
    """CPU seconds this run takes per counted CPU second (`gauge`); None: not gauged (1). Read
    from the run's deadline (the root) by every deadline cut from it."""
    reserves: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    """On the run's deadline: the seconds each `leaving` kept, by what they are kept for
    (`writing 11,002 objects`), in the order they were kept, for the messages (`kept_for`)."""

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline `seconds` from now."""
        now = time.monotonic()
        return cls(now + seconds, seconds, started=now, cpu_started=time.process_time())

    @classmethod
    def since_start(cls, seconds: float) -> Deadline:
        """The deadline `seconds` after the run began: the process's start inside the console
        script's `process_run`, else now (a command run in-process)."""
        global _timed_run
        if _run_started is None:
            return cls.after(seconds)
        _timed_run = True
        return cls(_run_started + seconds, seconds, started=_run_started, cpu_started=0.0)

    def elapsed(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - (self.at - self.seconds if self.started is None else self.started)

    def left(self, grace: float = 0.0) -> float:
        """Seconds left, `grace` times the deadline's length past it included; 0.0 once passed
        (and then `fired`). Every look at the deadline goes through here (tests count them)."""
        left = self.at + grace * self.seconds - time.monotonic()
        if left > 0:
            return left
        self.fire()
        return 0.0

    def passed(self, grace: float = 0.0) -> bool:
        return self.left(grace) <= 0.0

    def affords(self, cpu_seconds: float) -> bool:
        """Whether the time left covers a step counted at `cpu_seconds` (on the reference
        machine, turned into this run's seconds by `stretch`) that cannot look at the deadline
        while it runs — an import, one C call; when it does not, the deadline `fire`s and the
        caller does not start the step (the run's answer, without it, depends on the machine's
        speed). Why: begun just before the deadline, such a step ends past it by its whole
        length (issue #40: CP-SAT's import at a third of a CPU, over a second past a 3 s
        `--timeout`). Steps that do look at it (between units of work) need no such test."""
        if self.left() > cpu_seconds * self.stretch():
            return True
        self.fire()
        return False

    def fire(self) -> None:
        """Record that the deadline ended a search elsewhere (a worker's result says so); the
        run's deadline it was cut from fires too."""
        self.fired = True
        if self.parent is not None:
            self.parent.fire()

    def cpu_share(self) -> float:
        """The share of one CPU this process got since the run began (CPU seconds over wall
        seconds), at least `MIN_CPU_SHARE`, at most 1: how much a busy machine stretches work."""
        wall = self.elapsed()
        if wall < 0.05:
            return 1.0
        cpu = time.process_time() - self.cpu_started
        return min(max(cpu / wall, MIN_CPU_SHARE), 1.0)

    def root(self) -> Deadline:
        """The run's deadline: the first one, which `leaving` and `share` cut this one from."""
        root = self
        while root.parent is not None:
            root = root.parent
        return root

    @contextmanager
    def gauging(self) -> Iterator[Gauge]:
        """Measure the CPU seconds the block takes against the CPU seconds it counts
        (`Gauge.counted`, set inside) and `gauge` the run with them; a block that raises
        gauges nothing."""
        gauge = Gauge()
        started = time.process_time()
        yield gauge
        self.gauge(time.process_time() - started, gauge.counted)

    def gauge(self, cpu: float, counted: float) -> None:
        """Set the run's pace: a step counted at `counted` CPU seconds (its objects times the
        costs measured on the reference machine) took `cpu` CPU seconds here. From then on every
        reserve (`leaving`) is its count times this pace, over `cpu_share`. Why: the costs were
        measured on one machine at one load; this run's own counted step says how much slower or
        faster a CPU second does that work here — its CPU, the contention of a busy machine
        (which `cpu_share` does not see) — so that an idle machine keeps less and a busy one
        more. Bounded by `MIN_PACE` and `MAX_PACE`; a step counted below `MIN_GAUGED_CPU` sets
        none."""
        if counted >= MIN_GAUGED_CPU:
            self.root().pace = min(max(cpu / counted, MIN_PACE), MAX_PACE)

    def stretch(self) -> float:
        """Wall seconds a counted CPU second takes in this run: its `pace` (1 if not gauged)
        over its `cpu_share`."""
        pace = self.root().pace
        return (1.0 if pace is None else pace) / self.cpu_share()

    def leaving(self, cpu_seconds: float, *, exact: bool = False, what: str = "") -> Deadline:
        """A deadline early enough to leave `cpu_seconds` of work (counted: units times a cost
        per unit) to the steps after it, stretched by this run's pace (`stretch`). It fires this
        one when it passes. Why: the final check and the output cannot stop half way. `what`:
        what the time is kept for, as the messages say it (`checking 5,000 pods`); the run's
        deadline records it (`reserves`, `kept_for`).

        The reserve is at most `RESERVE_SHARE` of the time left: counted per unit it is a
        worst case (every pending pod placed and written), and one larger than the time left
        would leave the search nothing — not even first fit — so the answer would place no pod
        although the check and output of a small plan take little. Past that share the run
        may end late rather than empty (docs/semantics.md, "Limits and determinism").

        `exact`: `cpu_seconds` is what the step will take whatever the plan (writing the whole
        cluster, `--output-mode full`), not a worst case: no cap — when it exceeds the time
        left, the search gets none, and a plan placing nothing is no plan (`cli.plan`), so
        the run ends at its deadline instead of seconds past it."""
        reserve = cpu_seconds * self.stretch() if cpu_seconds > 0 else 0.0
        if not exact:
            reserve = min(reserve, RESERVE_SHARE * max(self.at - time.monotonic(), 0.0))
        if what:  # by its step (the first word): a step counted again replaces its reserve
            reserves = self.root().reserves
            for known in [k for k in reserves if k.split()[0] == what.split()[0]]:
                del reserves[known]
            reserves[what] = reserve
        return Deadline(
            self.at - reserve,
            self.seconds,
            self.fired,
            started=self.started if self.started is not None else self.at - self.seconds,
            cpu_started=self.cpu_started,
            parent=self,
        )

    def kept(self) -> float:
        """Seconds between this deadline and the run's (the first one, which `leaving` and
        `share` cut this one from): what the run keeps after it for its last steps."""
        return max(self.root().at - self.at, 0.0)

    def kept_for(self) -> str:
        """What the run keeps its last seconds for, as a message says it: `its last 0.92 s are
        kept for writing 11,002 objects (0.70 s) and checking 5,000 pods (0.22 s), as counted at
        this run's writing of a sample and share of a CPU` — every reserve made so far
        (`leaving`), with the seconds each kept and how they were turned into seconds; "" when
        none kept 0.05 s or more."""
        reserves = self.root().reserves
        total = sum(reserves.values())
        if total < 0.05:
            return ""
        parts = [f"{what} ({seconds:.2f} s)" for what, seconds in reserves.items() if seconds >= 0.005]
        how = (
            "this run's writing of a sample and share of a CPU" if self.root().pace else "its share of a CPU"
        )
        return f"its last {total:.2f} s are kept for {' and '.join(parts)}, as counted at {how}"

    def share(self, fraction: float) -> Deadline:
        """A deadline `fraction` of the time left from now: one step's part of the run (the
        aggregated model before first fit, `planners.policy.Cpsat.without_first_fit`), so
        that the steps after it still have the rest. It fires this one when it passes: the
        run's answer then depends on the machine's speed. Why: a step that may end with
        nothing (a model without a solution yet) must not take all the time that a step
        sure to place something (first fit) needs."""
        now = time.monotonic()
        return Deadline(
            now + fraction * max(self.at - now, 0.0),
            self.seconds,
            False,  # `fired`: this share passed (the run's own says whether the run was cut)
            started=self.started if self.started is not None else self.at - self.seconds,
            cpu_started=self.cpu_started,
            parent=self,
        )

    def __getstate__(self) -> dict[str, Any]:
        # The parent stays here: a worker's firing comes back with its result (`fire`).
        left = max(self.at - time.monotonic(), 0.0)
        return {"left": left, "fired": self.fired, "seconds": self.seconds, "pace": self.root().pace}

    def __setstate__(self, state: dict[str, Any]) -> None:
        now = time.monotonic()
        self.at = now + state["left"]
        self.fired = state["fired"]
        self.seconds = state.get("seconds", 0.0)
        self.started = now
        self.cpu_started = time.process_time()
        self.parent = None
        self.pace = state.get("pace")
        self.reserves = {}


def passed(deadline: Deadline | None) -> bool:
    """Whether `deadline` is given and has passed (None never passes); a deadline seen passed
    is `fired`."""
    return deadline is not None and deadline.passed()


def affords(deadline: Deadline | None, cpu_seconds: float) -> bool:
    """`Deadline.affords` of `deadline`; True without one."""
    return deadline is None or deadline.affords(cpu_seconds)


def stopping(deadline: Deadline | None) -> bool:
    """Whether a step that looks at the deadline between its units of work should stop there:
    `deadline` has passed (it may be a share of the run's, `Deadline.share`, which no timer
    watches), or a stop was requested (Ctrl-C, or the run's deadline under `enforced`)."""
    return interrupt.requested() or passed(deadline)


def fired(deadline: Deadline | None) -> bool:
    """Whether `deadline` is given and has fired (ended a search of the run)."""
    return deadline is not None and deadline.fired


_enforcing: set[int] = set()
"""The deadlines (`id`) an `enforced` block watches now."""


@contextmanager
def enforced(deadline: Deadline | None) -> Iterator[None]:
    """While inside, `deadline` passing stops the run as Ctrl-C does (`interrupt.request`): every
    loop that can stop early — first fit between pods, CP-SAT during its calls, the reasons of
    the pods left out — stops at once and the plan keeps what it has checked so far. Why through
    the stop flag: those loops already ask it, so one deadline bounds the whole run without a
    parameter in every signature. The deadline is `fired`; the stop request it made is taken
    back on leaving (a later run of the process starts afresh), a Ctrl-C's is not."""
    if deadline is None or id(deadline) in _enforcing:  # nested: the outer one acts
        yield
        return
    _enforcing.add(id(deadline))
    ours = threading.Event()

    def expire() -> None:
        deadline.fire()
        ours.set()
        interrupt.request()

    timer = threading.Timer(deadline.left(), expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _enforcing.discard(id(deadline))
        if ours.is_set():
            interrupt.reset()


WATCH_GRACE = 0.05
"""How far past the run's deadline (a share of its length) `watch_start` ends the process:
later than the reading's own looks, so that where one of them sees the deadline its message
(what was read) is the one printed."""

_watch_lock = threading.Lock()
_watch_off = False


def watch_start(seconds: float, end: Callable[[Deadline], None]) -> None:
    """Arm the process's watchdog for a run given `--timeout SECONDS`: `WATCH_GRACE` past the
    deadline (from the process's start), unless `watch_off` was called by then, `end` runs on
    the watchdog's thread (it says so and ends the process). Why: what a run does before its
    first look at the deadline — the interpreter's start, the imports (1.4-2 CPU s), one YAML
    document composed whole — looks at nothing, and on a busy machine (a tenth of a CPU) it
    took 1.4-4.3x a 3-5 s timeout; before the search there is no plan to keep, so the honest
    answer at the deadline is the one a run cut short while reading gives (no plan, exit 1).
    The search and the writing are not watched: they look at the deadline themselves and
    keep what they checked."""
    global _watch_off
    _watch_off = False
    started = process_started()

    def fire() -> None:
        with _watch_lock:  # `watch_off` waits: the process ends here
            if not _watch_off:
                run = Deadline(started + seconds, seconds, started=started, cpu_started=0.0)
                run.fire()
                end(run)

    timer = threading.Timer(max(started + seconds * (1 + WATCH_GRACE) - time.monotonic(), 0.0), fire)
    timer.daemon = True
    timer.start()


def watch_off() -> None:
    """Disarm the watchdog (`watch_start`): the run's own looks at the deadline bound it from
    here (the search, the check, the writing's reserve). When the watchdog has fired already,
    this waits while it ends the process."""
    global _watch_off
    with _watch_lock:
        _watch_off = True


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


__all__ = [
    "CUT_SHORT",
    "Deadline",
    "Gauge",
    "affords",
    "enforced",
    "fired",
    "parse_duration",
    "passed",
    "process_run",
    "process_started",
    "stopping",
    "timed_run",
    "watch_off",
    "watch_start",
]
