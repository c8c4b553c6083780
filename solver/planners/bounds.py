"""What a plan may claim: the bound valid for upstream's semantics, and the status.

Why one module: OPTIMAL is a promise a user acts on (docs/semantics.md, "What a status proves").
It is said here only, when the realized plan reaches a bound that holds for every valid plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..errors import SearchAborted
from ..gates import FeatureGates
from ..planning.job import Job, Unit
from ..planning.outcome import PlanOutcome, PodPlan, Stats, Status, Verdict
from ..problem.demand import demand_total
from ..problem.resources import shortfalls

HINT_STEPS = 200_000
"""Step budget of the first-fit search that seeds CP-SAT: past it, CP-SAT searches alone."""


COMPLETE = "pods that may be placed (first fit placed every one)"
"""`bound_from` of a plan first fit completed (`complete`)."""


def complete(job: Job, first: PlanOutcome) -> bool:
    """Whether `first` places every unit that may be placed at all: each unit it leaves out is
    refused by every node before the plan — the pod's scheduling constraints (`Unit.blocked`)
    or the node resources it needs there, against what is free before any pod of the plan
    (they only shrink as pods are placed). Such a plan places the weight of every pod that may
    be placed, which bounds every valid plan: it is optimal. A unit left out for any other
    reason (devices taken, a gang short, a search aborted or interrupted) may be placeable,
    so the answer is no. Stops at the first such unit: on a crowded cluster this costs one
    unit's nodes."""
    book = job.book
    for unit, pod in zip(job.units, first.pods, strict=True):
        if pod.placed:
            continue
        for n in job.nodes:
            if n not in unit.blocked and book.refusal(book.variant(unit.needs, n), n) is None:
                return False
    return True


def verdict(
    objective: int,
    bound: int | None,
    bound_from: str,
    *,
    beaten: tuple[int, str] | None = None,
    proven: bool = True,
    capped: bool = False,
    partitioned: bool = False,
    cut_short: bool = False,
) -> Verdict:
    """The one place that says OPTIMAL: when the realized `objective` reaches `bound`, an upper
    bound of every valid plan's objective (from `bound_from`), and whatever else the planner
    must prove holds too (`proven`: what-if's least cost, every preemption stage). With
    `bound` None (none known) only `proven` decides. `capped`: what-if under the user's cap,
    whose optimum is then OPTIMAL within the cap. `partitioned`: parts planned apart prove
    nothing of the whole (PARTITIONED).

    A realized plan above the bound means the bound was not valid (a model stricter than
    upstream that `sequential_units` does not know of): the bound is never raised to meet the
    plan (that would print gap 0 for nothing proven) — it falls back to `beaten`, a bound no
    plan exceeds (the weight of every pod that may be placed) and its source."""
    if bound is not None and objective > bound:
        if beaten is None:
            raise ValueError(f"objective {objective} above the bound {bound} ({bound_from}) with no fallback")
        bound, bound_from = beaten
    optimal = proven and (bound is None or objective == bound)
    if partitioned:
        status = Status.PARTITIONED
    elif not optimal:
        status = Status.FEASIBLE
    else:
        status = Status.OPTIMAL_WITHIN_CAP if capped else Status.OPTIMAL
    gap = None if bound is None else bound - objective
    return Verdict(status, objective, bound, bound_from, gap, cut_short)


def reaches(value: int, bound: int | None) -> bool:
    """Whether a minimised stage's `value` is proven optimal by `bound`, a lower bound of that
    stage valid for every solution at the earlier stages' values (the moves stage's:
    `preempt.clearing`): it meets it. A value below its bound means the bound was none: an
    error, never a claim."""
    if bound is None:
        return False
    if value < bound:
        raise ValueError(f"stage value {value} below its bound {bound}")
    return value == bound


def aggregated_status(objective: int, proven: bool) -> Status:
    """The aggregated model's own status (`aggregated.master.AggregatedPlan.status`): OPTIMAL
    when every component reached its bound (`proven`), before the expansion to devices, whose
    plan gets its own verdict (`judge`)."""
    return verdict(objective, None, "the aggregated model's components", proven=proven).status


def model_bound(status: Mapping[str, str], bounds: Mapping[str, int], stage: str, value: int) -> int | None:
    """A proven bound of a CP-SAT stage's optimum (`cpsat.CpsatOutcome`): its `value` when
    the stage was proven optimal, else CP-SAT's bound of it (None: none known)."""
    return value if status.get(stage) == Status.OPTIMAL else bounds.get(stage)


def checked(done: PlanOutcome, before: Verdict | None) -> PlanOutcome:
    """The plan the final check returned (`planning.finish.per_pod`) with a verdict of its own:
    when the check was cut short it returns a plan placing nothing, without the verdict of the
    plan it did not return (`before`); that plan gets one here, on the same bound (the bound
    holds for every plan). A run the deadline cut short (`stats["cut_short_by_timeout"]`)
    says so in its verdict (`Verdict.cut_short`: the same claim, made on a search the machine's
    speed ended)."""
    if before is None:
        return done
    cut = bool(done.stats.get("cut_short_by_timeout")) or before.cut_short
    if done.verdict is None:
        told = verdict(done.weight, before.bound, before.bound_from, cut_short=cut)
        return replace(done, stats={**done.stats, **told.stats()}, verdict=told)
    if cut and not done.verdict.cut_short:
        return replace(done, verdict=replace(done.verdict, cut_short=True))
    return done


def proven_pods(pods: list[PodPlan], status: Status, job: Job) -> list[PodPlan]:
    """First-fit pods whose search was aborted: if CP-SAT proved the plan optimal, they cannot
    be placed (no error); otherwise neither search could tell, which stays an error."""
    out = []
    for p in pods:
        if isinstance(p.error, SearchAborted):
            if status == Status.OPTIMAL:
                p = replace(p, error=None)
            else:
                p = replace(
                    p,
                    error=SearchAborted(
                        f"filter operation aborted: neither the reference search ({HINT_STEPS} steps) nor "
                        f"CP-SAT ({job.time_limit} s) found an allocation; CP-SAT status {status}"
                    ),
                )
        out.append(p)
    return out


def judge(stats: Stats, realized: int, bound: int, trivial: int, source: str) -> Verdict:
    """The plan's verdict (`verdict`), written into `stats`: the realized plan's weight
    (`realized`, the plan returned: the model's, or first fit's when that places more), a bound
    valid for the upstream semantics (`valid_bound`) and the gap; `trivial`, the weight of every
    pod that may be placed, where the model's bound was beaten."""
    beaten = (trivial, f"pods that may be placed (the model's bound, {bound}, was beaten)")
    out = verdict(realized, bound, source, beaten=beaten)
    stats.update(out.stats())
    return out


def total_weight(job: Job, units: Iterable[int]) -> int:
    """The weight of `units` all placed: a bound of any plan of them."""
    return sum(job.units[i].weight for i in units)


def sequential_units(
    cluster: Cluster,
    units: Sequence[Unit],
    gates: FeatureGates,
    resources_bind: Callable[[Unit], bool] = lambda _: True,
) -> set[int]:
    """The units the joint models may judge more strictly than upstream, which schedules pod
    after pod, each claim against what is already allocated (docs/semantics.md):

    - a request in allocationMode All while a multi-allocatable (consumable capacity,
      KEP-5075) device exists: placed together, the pods' shares of a shared device are
      weighed jointly, where upstream judges a later pod's All request against what the
      earlier pods already took (a member without room left fails it, kubernetes#140769);
    - a request with adminAccess: an allocated admin-access placement no longer counts (not
      against capacity, not as busy), while within one call it does;
    - pods joined because they share a claim (`Unit.members`) whose claims or node resources
      differ (or node resources may refuse one: `resources_bind`, `_resources_bind`): the
      models place them all or none, where upstream may schedule one of them and not the
      other.

    So a valid plan may place such pods where no model solution does. Conservative on purpose:
    a unit wrongly listed only weakens the bound (`valid_bound`), a unit missed would make it
    wrong."""
    multi = gates.DRAConsumableCapacity and any(
        d.allow_multiple_allocations for s in cluster.slices for d in s.spec.devices
    )
    out = set()
    for i, u in enumerate(units):
        if any(_admin(c) or (multi and _all_mode(c)) for c in u.claims) or _partial(u, resources_bind):
            out.add(i)
    return out


def _admin(claim: ResourceClaim) -> bool:
    return any(r.exactly is not None and bool(r.exactly.admin_access) for r in claim.spec.devices.requests)


def _all_mode(claim: ResourceClaim) -> bool:
    for r in claim.spec.devices.requests:
        if r.exactly is not None and r.exactly.allocation_mode == "All":
            return True
        if any(sub.allocation_mode == "All" for sub in r.first_available or ()):
            return True
    return False


def _partial(unit: Unit, resources_bind: Callable[[Unit], bool]) -> bool:
    """Whether upstream could schedule some pods of a joined unit and not the others: their
    claims differ, or they take node resources that may run short (each pod is filtered on
    its own)."""
    if len(unit.members) <= 1:
        return False
    if len({frozenset(m.claims) for m in unit.members}) > 1:
        return True
    return any(n.demand for n in unit.needs) and resources_bind(unit)


def _short_nodes(job: Job) -> set[str | None]:
    """The nodes whose node resources may refuse a pod: every pod that may use the node (and
    fits it alone) together asks for more than is free there. Computed once per job, since it
    does not depend on the unit asking."""
    out: set[str | None] = set()
    for n in job.nodes:
        free = job.book.free.get(n)
        if free is None:
            continue
        total: dict[str, int] = {}
        for u in job.units:
            need = demand_total(u.needs)
            if n not in u.blocked and not shortfalls(need, free):  # else it never runs on n
                for r, v in need.items():
                    total[r] = total.get(r, 0) + v
        if shortfalls(total, free):
            out.add(n)
    return out


def _resources_bind(short: set[str | None], unit: Unit) -> bool:
    """Whether node resources may refuse a pod of `unit`: it may use a node of `short`
    (`_short_nodes`)."""
    return any(n not in unit.blocked for n in short)


def valid_bound(job: Job, modelled: set[int], model_bound: int | None) -> tuple[int, str]:
    """An upper bound of the weight any valid plan (upstream's pod-after-pod semantics) places
    of the `modelled` units, and where it comes from. `model_bound`: a proven bound of the
    joint model's optimum over them (None: none proven).

    Why the model's bound needs a relaxation: the joint models are stricter than upstream for
    the `sequential_units` (All / adminAccess with shared devices). Take any valid plan P and
    drop those pods from it: the other pods' allocations stay valid (an ExactCount request
    without admin access only needs capacity and devices no one else holds, which dropping
    allocations frees) and the models judge them exactly, so they are a model solution, worth
    at most `model_bound`. Hence weight(P) <= model_bound + weight(the sequential units): they
    count as placeable (likewise a joined unit that upstream may place in part). Dropping a
    gang's pod may leave its gang short (then the rest is no model solution): with such a
    unit in a gang only the total weight bounds the plan."""
    total = total_weight(job, modelled)
    if model_bound is None:
        return total, "pods that may be placed (the model proved no bound)"
    short: list[set[str | None]] = []  # `_short_nodes`, computed when a joined unit first asks

    def bind(unit: Unit) -> bool:
        if not short:
            short.append(_short_nodes(job))
        return _resources_bind(short[0], unit)

    loose = sequential_units(job.cluster, job.units, job.gates, bind) & modelled
    if not loose:
        return min(model_bound, total), "model"
    if any(job.units[i].gang_pods(job.gangs) for i in loose):
        return total, "pods that may be placed (a pod the model judges strictly is in a gang)"
    relaxed = model_bound + total_weight(job, loose)
    return min(relaxed, total), "model, with the pods it judges more strictly than upstream as placeable"
