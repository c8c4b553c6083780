"""The allocators of a plan: first fit (the scheduler's way) and CP-SAT (the best), one protocol.

Why a protocol: the pipeline (`solver.pipeline`) runs first fit, then hands its plan to the
chosen `Improver`, which may only improve on it. First fit is the reference allocator pod
after pod; CP-SAT builds one model over every pod and node, hinted with the first-fit plan,
and owns the "never worse than first fit" policy — in one place, for `allocate`, independent
claims and many-pod plans alike.

Results and checks are wired once (`planning.ledger.Ledger`): every placement becomes
`status.allocation` through `solver.results` and passes `solver.check` against the cluster
plus everything placed before it, so a bug in precompute or an allocator surfaces as an
error, never as a wrong allocation. The plan's data (`Job`, `Unit`, `PodPlan`, ...) is
`solver.planning.job`; its gang rules `solver.planning.gangs`.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol

from .. import interrupt
from ..planning.job import Job, placed_weight
from ..planning.outcome import PlanOutcome, PodPlan, int_stat
from ..reference import DEFAULT_MAX_STEPS
from .aggregated.expansion import LEFT_OUT, expand_aggregated, plan_aggregated, plan_pooled
from .aggregated.master import PER_DEVICE_MAX, aggregate
from .aggregated.pools import NO_POOLS
from .bounds import COMPLETE, HINT_STEPS, complete, judge, proven_pods
from .perdevice import per_device


class Improver(Protocol):
    """Improves a first-fit plan; never returns less placed weight than it was given. (Named
    apart from the CLI's `--allocator` choice, `cli.options.AllocatorChoice`.)"""

    name: ClassVar[str]
    first_fit_steps: ClassVar[int]
    """Step budget of the first-fit search this allocator starts from."""

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome: ...


class Reference:
    """Upstream's answer: the first-fit plan as it is."""

    name: ClassVar[str] = "reference"
    first_fit_steps: ClassVar[int] = DEFAULT_MAX_STEPS

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome:
        return first


class Cpsat:
    """The best plan: one CP-SAT model over every pod and node (one node: the single-node
    Problem with pod groups; several: `problem.merge` + `encoders.nodes`), hinted with the
    first-fit plan. If it places less weight than first fit (placing pods together is not
    always the same as one after the other: an earlier pod's share of a device shrinks a later
    All-set; an allocated admin-access placement stops counting against capacity), the
    first-fit plan is kept. For the same reason the model's bound is no bound of such pods:
    `valid_bound` relaxes it (`sequential_units`), and the status is OPTIMAL only when the
    plan returned reaches that valid bound (`judge`)."""

    name: ClassVar[str] = "cpsat"
    first_fit_steps: ClassVar[int] = HINT_STEPS

    def __init__(self, aggregation: Literal["auto", "always", "never"] = "auto") -> None:
        """`aggregation`: the aggregated plan model (`aggregated.master`) where it applies and pays
        ("auto"), wherever it applies ("always", for tests), or never (the per-device model)."""
        self.aggregation = aggregation

    def without_first_fit(self, job: Job) -> PlanOutcome | str | None:
        """At scale, the aggregated model before first fit, and only it: its plan when the
        model proves it optimal (then no plan places more weight, first fit's included, so
        first fit need not run); None otherwise, and the run goes on as always (first fit,
        then `improve`, which solves the model again with first fit's patterns) — or, when
        the aggregated model does not apply, why (for `improve(..., not_aggregated=)`: the
        reason does not depend on first fit's plan, and finding it may cost node classes).

        Why: on a cluster of thousands of nodes first fit costs more than the model, grows
        faster (each pod left out asks every node), and an OPTIMAL plan never needs it. Only
        where the per-device model would not run anyway (pods x nodes above
        `PER_DEVICE_MAX`), with `aggregation` "auto", every pod with claims (pods without
        claims follow first fit's plan) and no gang (gangs' needs read first fit's plan).
        The pods left out get no reason here: `planners.crowding.crowded_reasons` words them
        on the returned plan (a pod that fits alone nowhere: every node's reason on the
        input's cluster). `stats` say first fit did not run (no `reference_placed`)."""
        if self.aggregation != "auto" or job.gangs or interrupt.requested():
            return None
        if not _beyond_per_device(job) or not all(u.claims for u in job.units):
            return None
        stats: dict[str, object] = {
            "nodes": len(job.nodes),
            "pods": sum(max(len(u.members), 1) for u in job.units),
        }
        nothing = PlanOutcome(
            [PodPlan(u.name, None, list(u.claims), None, u.priority) for u in job.units], "reference", stats
        )
        pools = plan_pooled(job, nothing, dict(stats))
        if isinstance(pools, PlanOutcome):
            out = pools
        else:
            agg = aggregate(job, None)
            if isinstance(agg, str):
                return agg if pools == NO_POOLS else f"{agg}; over network-attached pools: {pools}"
            out = expand_aggregated(job, nothing, agg, dict(stats))
        placed = any(p.placed for p in out.pods)
        # Ctrl-C during the model: first fit would now place nothing, so the model's plan so
        # far (checked, its status from its own bound) is the best there is.
        interrupted = interrupt.requested() and placed
        if not interrupted and (
            out.stats.get("status") != "OPTIMAL" or out.stats.get("fallback") or not placed
        ):
            return None
        for p in out.pods:  # left out: worded on the plan by `crowded_reasons` (or as interrupted)
            if not p.placed and p.reason == LEFT_OUT:
                p.reason = None
        out.stats["first_fit"] = (
            "not run: interrupted during the aggregated model"
            if interrupted
            else "not run: the aggregated model proved its plan optimal"
        )
        return out

    def improve(self, job: Job, first: PlanOutcome, *, not_aggregated: str | None = None) -> PlanOutcome:
        """`not_aggregated`: why the aggregated model does not apply, when known already
        (`without_first_fit`)."""
        stats = dict(first.stats)
        if interrupt.requested():
            return PlanOutcome(first.pods, self.name, stats)
        if self.aggregation == "auto" and _beyond_per_device(job) and complete(job, first):
            # First fit placed every pod that may be placed: no plan places more weight, so its
            # plan is optimal with that weight as the bound ("What a status proves"), and
            # neither model needs to run. Only at the aggregated model's scale: below it the
            # per-device model also weighs the strategy's device preferences after the weight
            # (pack onto shared devices, subrequest order), which first fit does not.
            weight = placed_weight(job.units, first.pods)
            stats["aggregated"] = "no: first fit placed every pod that may be placed"
            status = judge(stats, weight, weight, weight, COMPLETE)
            return PlanOutcome(proven_pods(first.pods, status, job), self.name, stats)
        agg: PlanOutcome | str = "disabled"
        if not_aggregated is not None:
            agg = not_aggregated
        elif self.aggregation != "never":
            agg = plan_aggregated(job, first, force=self.aggregation == "always")
        if isinstance(agg, PlanOutcome):
            out = agg
            if not _refine(job, out):
                return out
            # A gap remains: the per-device model, hinted with the aggregated plan, may close it
            # (an aggregated model that did not converge can stay far below it); the better
            # checked plan is kept, and the smaller of the two valid bounds.
            again = dict(out.stats, aggregated="yes, then the per-device model (a gap remained)")
            prior = (int_stat(out.stats, "bound"), str(out.stats["bound_from"]))
            kept = "aggregated model" if not out.stats.get("fallback") else "first fit"
            return per_device(job, out, again, kept, prior)
        stats["aggregated"] = f"no: {agg}"
        return per_device(job, first, stats, "first fit")


ALLOCATORS: dict[str, Improver] = {"reference": Reference(), "cpsat": Cpsat()}


def _beyond_per_device(job: Job) -> bool:
    """Whether the job is larger (pods x nodes) than the per-device model is run for."""
    return len(job.units) * len(job.nodes) > PER_DEVICE_MAX


def _refine(job: Job, out: PlanOutcome) -> bool:
    """Whether the per-device model should try to close the aggregated plan's gap."""
    if out.stats.get("status") == "OPTIMAL" or interrupt.requested():
        return False
    # Over network-attached pools the per-device model has a copy of every pool per node: it
    # would not close the gap, it would blow up (issue #40).
    return not _beyond_per_device(job) and "pooled" not in out.stats


__all__ = ["ALLOCATORS", "Cpsat", "Improver", "Reference"]
