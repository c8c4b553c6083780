"""`dra-solver ARGS` with the deadline's clock replaced by this process's CPU time: how a run
with `--timeout` ends on an idle machine, measured on a busy one (issue #40 §2).

Why: on a shared machine a process gets a fraction of a core, so a 5 s `--timeout` measured
by the wall clock leaves it half a second of work and says nothing about the code. Here the
deadline (`solver.deadline`: the process's start, `Deadline.left`, the timer of `enforced`)
counts CPU seconds of this process, as if it had a core of its own: the run ends at what
would be its idle wall time, minus what the contention costs in CPU (caches, hyperthreads),
plus the CP-SAT calls' own wall limit, which still counts wall seconds (so they stop earlier
than idle ones: the search here is, if anything, shorter). Only the benchmark uses it;
nothing of the package changes.

Run: `python -m benchmarks.cpu_clock plan FILE --timeout 5s ...`; the last stderr line is
`cpu-clock: N.NN CPU s`.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace


class _CpuTimer:
    """`threading.Timer` counting this process's CPU seconds instead of wall seconds."""

    def __init__(self, interval: float, function: Callable[[], None]) -> None:
        self.at = time.process_time() + interval
        self.function = function
        self.stopped = threading.Event()
        self.daemon = True

    def start(self) -> None:
        def wait() -> None:
            while not self.stopped.wait(0.005):
                if time.process_time() >= self.at:
                    self.function()
                    return

        threading.Thread(target=wait, daemon=True).start()

    def cancel(self) -> None:
        self.stopped.set()


def main() -> None:
    from dra_solver import deadline

    clock = SimpleNamespace(
        monotonic=time.process_time,
        process_time=time.process_time,
        clock_gettime=time.clock_gettime,
        CLOCK_BOOTTIME=getattr(time, "CLOCK_BOOTTIME", 0),
    )
    deadline.time = clock  # type: ignore[assignment]  # the module's clock, read as CPU time
    deadline.threading = SimpleNamespace(Timer=_CpuTimer, Event=threading.Event)  # type: ignore[assignment]  # enforced's timer
    deadline.process_started = lambda: 0.0  # the process's start: CPU second 0
    atexit.register(lambda: print(f"cpu-clock: {time.process_time():.2f} CPU s", file=sys.stderr))
    from dra_solver.cli.main import entry

    sys.argv = ["dra-solver", *sys.argv[1:]]
    entry()


if __name__ == "__main__":
    main()
