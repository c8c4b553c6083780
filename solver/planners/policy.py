"""Which model plans a job: the allocators (first fit as it is, or CP-SAT) and, under CP-SAT,
the table of model variants tried in order (`MODELS`).

Why a table: "which model plans this input" was a chain of `if`s inside one class, reached by
tests through monkeypatching. As upstream's structured allocator keeps its variants (stable,
incubating, experimental) in a table chosen by the features an input uses, each variant here
says whether it plans a job, and why not (`ModelVariant.applies`), and plans it (`plan`); the
first one that plans wins, and a variant whose plan leaves a gap hands it to the next one
(the aggregated model's plan to the per-device model, which may close it). `Options.models`
replaces the table for a run (tests: `AGGREGATED_FIRST`, `PER_DEVICE_ONLY`).

The pipeline (`solver.pipeline`) runs first fit, then hands its plan to the chosen `Improver`,
which may only improve on it. First fit is the reference allocator pod after pod; CP-SAT
owns the "never worse than first fit" policy — in one place, for `allocate`, independent
claims and many-pod plans alike.

Results and checks are wired once (`planning.ledger.Ledger`): every placement becomes
`status.allocation` through `solver.results` and passes `solver.check` against the cluster
plus everything placed before it, so a bug in precompute or an allocator surfaces as an
error, never as a wrong allocation. The plan's data (`Job`, `Unit`, ...) is
`solver.planning.job`; its gang rules `solver.planning.gangs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol

from .. import interrupt
from ..cpsat import load_cp_model
from ..deadline import fired, passed
from ..planning.job import Job, ModelVariant, placed_weight
from ..planning.outcome import PlanOutcome, PodPlan, Stats, proven
from ..reasons import Kind
from ..reference import DEFAULT_MAX_STEPS
from .aggregated.expansion import expand_aggregated, plan_aggregated, plan_pooled
from .aggregated.master import PER_DEVICE_MAX, aggregate
from .aggregated.pools import NO_POOLS
from .aggregated.served import on_served
from .bounds import COMPLETE, HINT_STEPS, complete, judge, proven_pods
from .perdevice import NAME, per_device


@dataclass(frozen=True)
class Complete:
    """First fit's plan, proven optimal: it placed every pod that may be placed at all
    (`bounds.complete`), so no plan places more weight and no model needs to run. Only at the
    aggregated model's scale: below it the per-device model also weighs the strategy's device
    preferences after the weight (pack onto shared devices, subrequest order), which first fit
    does not."""

    name: ClassVar[str] = "complete"

    def applies(self, job: Job, start: PlanOutcome) -> str | None:
        if not beyond_per_device(job):
            return "below the aggregated model's scale (the per-device model also weighs device preferences)"
        if not complete(job, start):
            return "first fit left out a pod that may be placed"
        return None

    def plan(self, job: Job, start: PlanOutcome, passed: Mapping[str, str]) -> PlanOutcome | str:
        stats = start.stats.copy()
        weight = placed_weight(job.units, start.pods)
        stats["aggregated"] = "no: first fit placed every pod that may be placed"
        told = judge(weight, weight, weight, COMPLETE)
        return PlanOutcome(proven_pods(start.pods, told.status, job), NAME, stats, verdict=told)


@dataclass(frozen=True)
class Aggregated:
    """The aggregated model (`aggregated.master`: pods and nodes by class, patterns, column
    generation), over network-attached pools first where they are the model's nodes
    (`aggregated.pools`); expanded to devices and checked (`aggregated.expansion`). `force`:
    wherever it applies, also where the per-device model would be small enough (tests)."""

    name: ClassVar[str] = "aggregated"
    force: bool = False

    def applies(self, job: Job, start: PlanOutcome) -> str | None:
        """Nothing to read off the job before the classes are built: whether the nodes are
        independent and the classes few is found by building them, so `plan` says it."""
        return None

    def plan(self, job: Job, start: PlanOutcome, passed: Mapping[str, str]) -> PlanOutcome | str:
        out = on_served(job, lambda j: plan_aggregated(j, start, force=self.force))
        assert out is not None  # plan_aggregated plans or says why
        return out


@dataclass(frozen=True)
class PerDevice:
    """The per-device model over every pod and node (`perdevice`), hinted with the plan it
    starts from — first fit's, or an earlier variant's that left a gap (then its bound is
    kept when smaller, and the better checked plan)."""

    name: ClassVar[str] = "per-device"

    def applies(self, job: Job, start: PlanOutcome) -> str | None:
        return None

    def plan(self, job: Job, start: PlanOutcome, passed: Mapping[str, str]) -> PlanOutcome | str:
        if start.allocator == NAME:  # an earlier variant's plan, with a gap left
            stats: Stats = {**start.stats, "aggregated": "yes, then the per-device model (a gap remained)"}
            told = start.verdict
            prior = None if told is None or told.bound is None else (told.bound, told.bound_from)
            kept = "aggregated model" if not start.stats.get("fallback") else "first fit"
            return per_device(job, start, stats, kept, prior)
        stats = start.stats.copy()
        stats["aggregated"] = f"no: {passed.get(Aggregated.name, 'disabled')}"
        return per_device(job, start, stats, "first fit")


MODEL_FIRST_SHARE = 0.5
"""Under `--timeout`, the share of the search's time left that the aggregated model gets before
first fit (`Cpsat.without_first_fit`): at the model's scale first fit costs more than the model,
so the model goes first; but a model cut short before its first solution places nothing, and
first fit after it needs time to place anything (issue #40: 0 of 5,000 pods placed)."""

MODELS: tuple[ModelVariant, ...] = (Complete(), Aggregated(), PerDevice())
"""The variants CP-SAT tries, in order (`Options.models` replaces them for a run)."""

AGGREGATED_FIRST: tuple[ModelVariant, ...] = (Aggregated(force=True), PerDevice())
"""The aggregated model wherever it applies, then the per-device model (tests)."""

PER_DEVICE_ONLY: tuple[ModelVariant, ...] = (PerDevice(),)
"""The per-device model alone (tests, and the aggregated model's own checks)."""

TABLES: dict[str, tuple[ModelVariant, ...]] = {
    "auto": MODELS,
    "always": AGGREGATED_FIRST,
    "never": PER_DEVICE_ONLY,
}
"""The tables by the name tests give the aggregated model's use: where it pays, wherever it
applies, never."""


class Improver(Protocol):
    """Improves a first-fit plan; never returns less placed weight than it was given. (Named
    apart from the CLI's `--allocator` choice, `cli.options.AllocatorChoice`.)"""

    name: ClassVar[str]
    first_fit_steps: ClassVar[int]
    """Step budget of the first-fit search this allocator starts from."""

    def without_first_fit(self, job: Job) -> PlanOutcome | str | None:
        """A plan that makes first fit unnecessary (proven optimal), else None — or why the
        aggregated model does not apply, for `improve(..., not_aggregated=)`."""
        ...

    def improve(self, job: Job, first: PlanOutcome, *, not_aggregated: str | None = None) -> PlanOutcome:
        """The plan, from first fit's: `not_aggregated`, why the aggregated model does not
        apply when known already (`without_first_fit`)."""
        ...


class Reference:
    """Upstream's answer: the first-fit plan as it is."""

    name: ClassVar[str] = "reference"
    first_fit_steps: ClassVar[int] = DEFAULT_MAX_STEPS

    def without_first_fit(self, job: Job) -> PlanOutcome | str | None:
        return None

    def improve(self, job: Job, first: PlanOutcome, *, not_aggregated: str | None = None) -> PlanOutcome:
        return first


class Cpsat:
    """The best plan: the first variant of the job's models (`models`) that plans it. If it
    places less weight than first fit (placing pods together is not always the same as one
    after the other: an earlier pod's share of a device can fail a later All request; an
    allocated admin-access placement stops counting against capacity), the first-fit plan is
    kept. For the same reason the model's bound is no bound of such pods: `valid_bound` relaxes
    it (`sequential_units`), and the status is OPTIMAL only when the plan returned reaches that
    valid bound (`judge`)."""

    name: ClassVar[str] = NAME
    first_fit_steps: ClassVar[int] = HINT_STEPS

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
        `PER_DEVICE_MAX`), with the aggregated model among the job's models where it pays
        (not forced), every pod with claims (pods without claims follow first fit's plan) and
        no gang (gangs' needs read first fit's plan). The pods left out get no reason here:
        `planners.crowding.crowded_reasons` words them on the returned plan (a pod that fits
        alone nowhere: every node's reason on the input's cluster). `stats` say first fit did
        not run (no `reference_placed`)."""
        if Aggregated() not in models(job) or job.gangs or interrupt.requested():
            return None
        if not beyond_per_device(job):
            return None
        return on_served(job, self._before_first_fit)

    def _before_first_fit(self, job: Job) -> PlanOutcome | str | None:
        """`without_first_fit` of a job whose DRA-served extended resources are claims."""
        if not all(u.claims for u in job.units):
            return None
        # --timeout: the model gets a share of the time left, first fit the rest when the
        # model has not proven a plan by then (`MODEL_FIRST_SHARE`); the expansion of its plan
        # stops at the run's deadline only. Without one, nothing changes.
        whole = job
        if job.deadline is not None:
            load_cp_model()  # before the share is cut: the model's time is for the search
            job = replace(job, deadline=job.deadline.share(MODEL_FIRST_SHARE))
            if passed(job.deadline) and not interrupt.requested():
                return None  # its share is over already (the import took it): first fit runs
        stats: Stats = {"nodes": len(job.nodes)}
        nothing = PlanOutcome(
            [PodPlan(u.name, None, list(u.claims), None, u.priority) for u in job.units], "reference", stats
        )
        pools = plan_pooled(job, nothing, stats.copy())
        if isinstance(pools, PlanOutcome):
            out = pools
        else:
            agg = aggregate(job, None)
            if isinstance(agg, str):
                return agg if pools == NO_POOLS else f"{agg}; over network-attached pools: {pools}"
            if job is not whole and fired(job.deadline) and not interrupt.requested():
                return None  # its share is over: not proven, so first fit runs in the rest
            out = expand_aggregated(whole, nothing, agg, stats.copy())
        placed = any(p.placed for p in out.pods)
        # Ctrl-C (or the run's deadline) during the model: first fit would now place nothing,
        # so the model's plan so far (checked, its status from its own bound) is the best there is.
        interrupted = interrupt.requested() and placed
        if not interrupted and (not proven(out) or out.stats.get("fallback") or not placed):
            return None
        for p in out.pods:  # left out: worded on the plan by `crowded_reasons` (or as interrupted)
            if not p.placed and p.is_(Kind.LEFT_OUT):
                p.because(None)
        out.stats["first_fit"] = (
            "not run: interrupted during the aggregated model"
            if interrupted
            else "not run: the aggregated model proved its plan optimal"
        )
        return out

    def improve(self, job: Job, first: PlanOutcome, *, not_aggregated: str | None = None) -> PlanOutcome:
        """The job's models in order: the first whose plan is final, or the last plan with a
        gap; first fit's plan when none plans. `not_aggregated`: why the aggregated model does
        not apply, when known already (`without_first_fit`)."""
        if interrupt.requested():
            return PlanOutcome(first.pods, self.name, first.stats.copy())
        start: PlanOutcome = first
        passed: dict[str, str] = {}
        for model in models(job):
            why = not_aggregated if model.name == Aggregated.name else None
            if why is None:
                why = model.applies(job, start)
            out = model.plan(job, start, passed) if why is None else why
            if isinstance(out, str):
                passed[model.name] = out
                continue
            if not _refine(job, out):
                return out
            start = out  # a gap remains: the next variant may close it from this plan
        if start is first:
            return PlanOutcome(first.pods, self.name, first.stats.copy())
        return start


def models(job: Job) -> Sequence[ModelVariant]:
    """The job's model variants (`Options.models`), else `MODELS`."""
    return MODELS if job.models is None else job.models


ALLOCATORS: dict[str, Improver] = {"reference": Reference(), "cpsat": Cpsat()}


def beyond_per_device(job: Job) -> bool:
    """Whether the job is larger (pods x nodes) than the per-device model is run for
    (`Options.per_device_max`, else `PER_DEVICE_MAX`)."""
    return len(job.units) * len(job.nodes) > per_device_max(job)


def per_device_max(job: Job) -> int:
    """Pods x nodes up to which the per-device model plans `job` (`Options.per_device_max`)."""
    return PER_DEVICE_MAX if job.per_device_max is None else job.per_device_max


def _refine(job: Job, out: PlanOutcome) -> bool:
    """Whether a later variant (the per-device model) should try to close the plan's gap."""
    if proven(out) or interrupt.requested():
        return False
    # Over network-attached pools the per-device model has a copy of every pool per node: it
    # would not close the gap, it would blow up (issue #40).
    return not beyond_per_device(job) and "pooled" not in out.stats


__all__ = [
    "AGGREGATED_FIRST",
    "ALLOCATORS",
    "MODELS",
    "MODEL_FIRST_SHARE",
    "PER_DEVICE_ONLY",
    "TABLES",
    "Aggregated",
    "Complete",
    "Cpsat",
    "Improver",
    "PerDevice",
    "Reference",
    "beyond_per_device",
    "models",
    "per_device_max",
]
