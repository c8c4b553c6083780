"""One run of the planners: first fit, then the chosen allocator, then the reasons of the pods
left out (`run`).

Why its own module, above the planners and below what runs many plans: `pipeline.plan` and
`allocate` make one run, a partition (`planners.partition`) one per part and a repair pass;
each calls this function rather than receiving it as a callback.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..api.cluster import Cluster
from ..deadline import enforced
from ..planning.job import Options, Unit
from ..planning.outcome import PlanOutcome, record
from ..planning.resolve import make_job
from .crowding import crowded_reasons
from .firstfit.batch import FirstFit
from .policy import ALLOCATORS

GC_THRESHOLD = (100_000, 50, 100)
"""The garbage collector's thresholds while a plan runs (Python's default: 700, 10, 10)."""


class _Collector:
    """How many plans run now, and the thresholds from before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.saved: tuple[int, ...] = gc.get_threshold()
        self.freezing = False
        """Whether the plans freeze (`fewer_collections`): nothing was frozen when the first began."""


_collector = _Collector()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the garbage collector's thresholds raised (`GC_THRESHOLD`) and what
    is alive at its start frozen (`gc.freeze`), then put both back. Why: a plan allocates
    millions of small objects that it keeps (claims, device views, cached answers), and at the
    default thresholds the cyclic collector traverses the growing heap again and again without
    finding garbage — a quarter to a third of a 5,000-pod plan's CPU time (docs/benchmarks.md,
    "End to end"). With the thresholds raised, a collection of the middle generation still
    traversed everything the run had not yet seen twice — at the first one after reading a
    50,000-pod cluster, the whole input, 3 s, and again at the next one — though what lives
    when a plan starts (its input) outlives it. Frozen, a collection traverses only what came
    after; each nested entry (the CLI's run, then the plan, then the planners) freezes what
    came before it, and the last exit unfreezes all of it (into the oldest generation, as
    before). A process that froze objects itself (before forking workers, say) keeps its
    freeze: then nothing is frozen or unfrozen here. Reference counting still frees everything
    outside cycles at once; cycles wait longer (frozen ones until the end). Nested and
    concurrent plans share one raise: the thresholds go back when the last of them ends.
    Changes no result."""
    with _collector.lock:
        if _collector.running == 0:
            _collector.saved = gc.get_threshold()
            gc.set_threshold(*GC_THRESHOLD)
            _collector.freezing = gc.get_freeze_count() == 0  # else the process froze: left as it is
        _collector.running += 1
        if _collector.freezing:
            gc.freeze()
    try:
        yield
    finally:
        with _collector.lock:
            _collector.running -= 1
            if _collector.running == 0:
                gc.set_threshold(*_collector.saved)
                if _collector.freezing:
                    gc.unfreeze()


def run(
    cluster: Cluster, units: Sequence[Unit], nodes: Sequence[str | None], options: Options
) -> PlanOutcome:
    """The one run every entry point goes through: first fit, then the chosen allocator — or,
    at scale, the aggregated model alone when it proves its plan optimal
    (`policy.Cpsat.without_first_fit`) — then the reasons of the pods left out."""
    with fewer_collections(), enforced(options.deadline):  # past it, the loops stop early
        allocator = ALLOCATORS[options.allocator]
        job = make_job(cluster, units, nodes, options)
        alone = allocator.without_first_fit(job)
        if isinstance(alone, PlanOutcome):
            model = alone
        else:
            first = FirstFit(max_steps=allocator.first_fit_steps, progress=options.progress).plan(job)
            model = allocator.improve(job, first, not_aggregated=alone)
        with fewer_collections():  # freezes what the plan built: the reasons only read it
            outcome = crowded_reasons(job, model)
    if job.book.warnings:
        outcome.stats["warnings"] = list(job.book.warnings)
    record(outcome.stats, options.deadline)  # stats["cut_short_by_timeout"]: it fired
    return outcome


__all__ = ["GC_THRESHOLD", "fewer_collections", "run"]
