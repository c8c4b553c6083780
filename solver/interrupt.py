"""Stop requests: Ctrl-C (SIGINT) or SIGTERM stops the search and keeps the plan found so far.

Why a module-level flag: the loops that can stop early — first fit between pods
(`firstfit.batch.FirstFit`), CP-SAT between and during its calls (`cpsat`) — live in different
modules, and a plan that ran for minutes is worth keeping when the user runs out of
patience. Threading a "cancel" parameter through every layer would touch every signature;
instead the loops ask `requested()` and a running CP-SAT call registers its
`CpSolver.stop_search` with `stoppable`, which keeps the best solution found so far.

Why a watcher thread: while CP-SAT runs, the main thread is inside C++ and Python's signal
handlers only run when it returns, which may be the whole time limit later. CPython writes
every caught signal's number to a "wakeup fd"; a daemon thread reading it reacts at once:
the first signal requests the stop, a second one exits the process immediately (code 130,
as a shell reports an interrupted command).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["EXIT_INTERRUPTED", "request", "requested", "reset", "signals_stop", "stoppable"]

EXIT_INTERRUPTED = 130
"""128 + SIGINT: what a shell reports for a command ended by Ctrl-C."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_stop = threading.Event()
_lock = threading.Lock()
_hooks: list[Callable[[], None]] = []


def requested() -> bool:
    """True once a stop was requested (and until `reset`)."""
    return _stop.is_set()


def request() -> None:
    """Ask every running search to stop: the flag, then every registered hook."""
    _stop.set()
    with _lock:
        hooks = list(_hooks)
    for hook in hooks:
        hook()


def reset() -> None:
    """Forget an earlier stop request (a new run starts)."""
    _stop.clear()


@contextmanager
def stoppable(stop: Callable[[], None]) -> Iterator[None]:
    """While inside, a stop request calls `stop` (e.g. `CpSolver.stop_search`)."""
    with _lock:
        _hooks.append(stop)
    try:
        yield
    finally:
        with _lock:
            _hooks.remove(stop)


@contextmanager
def signals_stop(notice: str = "") -> Iterator[None]:
    """SIGINT and SIGTERM request a stop instead of ending the process; a second signal
    exits at once with code 130. `notice` is written to stderr on the first signal.
    Outside the main thread (where signals cannot be handled) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reset()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    for s in _SIGNALS:
        signal.signal(s, _ignore)  # the watcher acts; Python must not raise KeyboardInterrupt
    old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(reader, notice), name="dra-solver-signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_fd)
        for s, handler in previous.items():
            signal.signal(s, handler)
        writer.close()  # the watcher reads end-of-file and returns
        watcher.join(timeout=1.0)
        reader.close()
        reset()  # read `requested()` inside the block; later runs in this process start afresh


def _ignore(signum: int, frame: FrameType | None) -> None:
    """Python-level handler: nothing to do, the watcher thread has already reacted."""


def _watch(reader: socket.socket, notice: str) -> None:
    seen = 0
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        for _ in data:
            seen += 1
            if seen == 1:
                if notice:
                    os.write(2, notice.encode() + b"\n")
                request()
            else:
                os.write(2, b"interrupted again: exiting now, nothing written\n")
                os._exit(EXIT_INTERRUPTED)
