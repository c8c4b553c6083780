"""DRA-served extended resources as claims of the aggregated model (issue #40).

Why: a pod that asks `example.com/gpu: 2` in its container resources, where a DeviceClass
serves that name (KEP-5004, `problem.extended`), gets one special ResourceClaim per pod on a
node that does not advertise the resource — and is counted as a node resource on one that
does. Since the claim depends on the node, the aggregated model refused such pods
(`master.not_aggregated`) and the per-device model planned the whole cluster: at 200 nodes,
150 s of CPU and 6 GiB for a plan no better than first fit (docs/benchmarks.md, "Scale smoke").

But where no node the plan may use advertises any mapped resource a pod asks for, the pod's
special claim is the same on every node: the pod is a pod with one more claim (of the
serving class, `count` per container), and its node resources those of its containers less
the DRA-served ones — exactly what first fit and the per-device model place on each node
(`problem.demand.NodeBook.variant`). `served_job` rewrites the job so; the plan of the
rewritten job is a plan of the real one (the same claims allocated on the same nodes, the
same node resources taken), and every real plan is one of the rewritten job (the special
claim is the pod's on any node), so its bound is a bound. `restored` gives the placed pods
their `status.extendedResourceClaimStatus` and the pods left out their own claims.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ...planning.job import Job, Unit
from ...planning.outcome import PlanOutcome
from ...problem.demand import Needs, Variant


@dataclass(frozen=True)
class Served:
    """The job with DRA-served extended resources as claims, and how to read its plan back."""

    job: Job
    """The rewritten job (`served_job`)."""
    variants: Mapping[int, Variant]
    """Unit index -> its special claims and statuses (the units rewritten)."""
    original: Job
    """The job as given."""


def served_job(job: Job) -> Served | str | None:
    """`job` with each pod's DRA-served extended resources as its special claim (module
    docstring); None when no pod asks for a resource a DeviceClass maps, or why the rewrite
    would not be exact (a node advertises such a resource)."""
    mapping = job.book.mapping
    asks = [i for i, u in enumerate(job.units) if any(r in mapping for n in u.needs for r in n.demand)]
    if not asks:
        return None
    wanted = {r for i in asks for n in job.units[i].needs for r in n.demand if r in mapping}
    for node in job.nodes:
        alloc = job.book.allocatable.get(node)
        both = sorted(r for r in wanted if alloc is not None and alloc.get(r, 0) > 0)
        if both:
            return f"node {node} advertises {both[0]}, which a DeviceClass also serves"
    units = list(job.units)
    variants: dict[int, Variant] = {}
    for i in asks:
        unit = units[i]
        v = job.book.variant(unit.needs, None)  # None: no allocatable, every mapped resource DRA's
        needs = tuple(
            Needs(n.pod, {r: q for r, q in n.demand.items() if r not in mapping}) for n in unit.needs
        )
        units[i] = replace(unit, claims=(*unit.claims, *v.claims), needs=needs)
        variants[i] = v
    return Served(replace(job, units=tuple(units)), variants, job)


def restored(served: Served, out: PlanOutcome) -> PlanOutcome:
    """The rewritten job's plan as the real job's: each placed pod with a special claim gets
    its extended-resource status; a pod left out carries its own claims only."""
    pods = []
    for i, p in enumerate(out.pods):
        v = served.variants.get(i)
        if v is None:
            pods.append(p)
        elif p.placed:
            pods.append(replace(p, extended=dict(v.statuses)))
        else:
            unit: Unit = served.original.units[i]
            pods.append(replace(p, claims=list(unit.claims)) if len(p.claims) != len(unit.claims) else p)
    stats = out.stats.copy()
    stats["extended_as_claims"] = len(served.variants)
    return replace(out, pods=pods, stats=stats)


def on_served(job: Job, run: Callable[[Job], PlanOutcome | str | None]) -> PlanOutcome | str | None:
    """`run` (an aggregated model's plan of a job) on `job` with its DRA-served extended
    resources as claims (`served_job`), its plan read back (`restored`); or why not (or
    what `run` says instead of a plan)."""
    served = served_job(job)
    if served is None:
        return run(job)
    if isinstance(served, str):
        return f"a pod asks for an extended resource DRA may serve, and {served}"
    out = run(served.job)
    return restored(served, out) if isinstance(out, PlanOutcome) else out


__all__ = ["Served", "on_served", "restored", "served_job"]
