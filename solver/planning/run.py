"""One run of the planners: first fit, then the chosen allocator, then the reasons of the pods
left out (`run`).

Why its own module, above the planners and below what runs many plans: `pipeline.plan` and
`allocate` make one run, a partition (`aggregate.partition`) one per part and a repair pass;
each calls this function rather than receiving it as a callback.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..allocators import ALLOCATORS
from ..api.cluster import Cluster
from ..explain.crowding import crowded_reasons
from ..firstfit import FirstFit
from .job import Options, PlanOutcome, Unit
from .resolve import make_job


def run(
    cluster: Cluster, units: Sequence[Unit], nodes: Sequence[str | None], options: Options
) -> PlanOutcome:
    """The one run every entry point goes through: first fit, then the chosen allocator."""
    allocator = ALLOCATORS[options.allocator]
    job = make_job(cluster, units, nodes, options)
    first = FirstFit(max_steps=allocator.first_fit_steps, progress=options.progress).plan(job)
    outcome = crowded_reasons(job, allocator.improve(job, first))
    if job.book.warnings:
        outcome.stats["warnings"] = list(job.book.warnings)
    return outcome


__all__ = ["run"]
