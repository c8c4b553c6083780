"""The allocators of a plan: first fit (the scheduler's way) and CP-SAT (the best), one protocol.

Why a protocol: the pipeline (`solver.pipeline`) runs first fit, then hands its plan to the
chosen `Allocator`, which may only improve on it. First fit is the reference allocator pod
after pod; CP-SAT builds one model over every pod and node, hinted with the first-fit plan,
and owns the "never worse than first fit" policy — in one place, for `allocate`, independent
claims and many-pod plans alike.

Results and checks are wired here once (`Ledger`): every placement becomes
`status.allocation` through `solver.results` and passes `solver.check` against the cluster
plus everything placed before it, so a bug in precompute or an allocator surfaces as an
error, never as a wrong allocation.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, Protocol, SupportsInt

from dra_solver import interrupt
from dra_solver.aggregate.classes import claim_key
from dra_solver.aggregate.master import PER_DEVICE_MAX, AggregatedPlan, aggregate
from dra_solver.aggregate.patterns import EXPAND_FLOOR, allocate_node
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Node, Pod, ResourceClaim, ResourceSlice
from dra_solver.api.models import PodExtendedResourceClaimStatus as ExtendedStatus
from dra_solver.cel import EvalCache
from dra_solver.check import check_or_raise
from dra_solver.cpsat import Strategy, solve
from dra_solver.demand import Needs, NodeBook, Variant, demand_total
from dra_solver.errors import DRASolverError, SearchAborted
from dra_solver.gates import FeatureGates
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Assignment, GangInfo, Placement, Problem, claim_weight
from dra_solver.problem.merge import build_multi_node_problem
from dra_solver.problem.resources import shortfalls
from dra_solver.reference import DEFAULT_MAX_STEPS
from dra_solver.results import ShareIDs, assignment_claims, share_ids_in

HINT_STEPS = 200_000
"""Step budget of the first-fit search that seeds CP-SAT: past it, CP-SAT searches alone."""
INTERRUPTED = "not tried: the run was interrupted before this pod's turn"
DROPPED = "the plan model put it on node"
"""How the reason of a pod the aggregated model placed and its node's exact allocation did not
take begins: that reason is kept as it is (`solver.explain.crowding`)."""


@dataclass(frozen=True)
class Member:
    """One pod of a unit: its name, the Pod object (None for a list of claims) and the refs
    (`namespace/name`) of its unallocated claims."""

    name: str
    pod: Pod | None
    claims: tuple[str, ...]
    group: str | None = None
    """The PodGroup the pod names (`namespace/name`, spec.schedulingGroup); a gang when
    `Job.gangs` has it."""
    priority: int = 0
    """The pod's own priority: in a unit of pods sharing a claim (`Unit.members`) each pod
    counts with its own weight (`Unit.weight`), while the unit queues at the highest."""


@dataclass(frozen=True)
class Gang:
    """A PodGroup with `gang.minCount` (KEP-4671): its pods are placed only if at least
    `min_count` of them are — counting `bound`, its pods already on a node — or none are."""

    name: str
    min_count: int
    bound: int = 0
    topology: str | None = None
    """KEP-5732 `spec.schedulingConstraints.topology[0].key`: every placed pod of the gang runs
    on nodes with one value of this node label (None: no topology constraint)."""
    domains: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """With `topology`: (label value, the run's nodes with it, in node order), by value — the
    domains the gang may choose from (only the bound pods' one when pods are bound already)."""
    basic: bool = False
    """A PodGroup with the basic policy and a topology constraint: minCount 1, as upstream's
    placement cycle treats it (`pipeline.resolve_gangs`)."""

    def domain_of(self, node: str | None) -> str | None:
        """The label value of `node` among `domains` (None: the node is in none)."""
        return next((v for v, ns in self.domains if node in ns), None)

    @property
    def goal(self) -> str:
        """What the gang must reach, in words."""
        return "one of its pods (basic policy)" if self.basic else f"its gang minCount {self.min_count}"

    def short(self, placed: int) -> str:
        """Why the gang is not placed, in words."""
        if self.basic:
            return f"PodGroup {self.name} not placed: none of its pods fit"
        return f"PodGroup {self.name} not placed: {placed} of its pods fit, fewer than {self.goal}"


@dataclass(frozen=True)
class Unit:
    """One pod to place: its unallocated claims go to one node together, or not at all."""

    name: str
    claims: tuple[ResourceClaim, ...]
    priority: int = 0
    blocked: Mapping[str | None, str] = field(default_factory=dict)
    """Candidate nodes the pod may not use, with the reason (scheduling constraints)."""
    members: tuple[Member, ...] = ()
    """Pods placed as this unit: more than one when they share an unallocated claim (it is
    allocated once, and its pods go where that allocation is usable: the same node)."""
    needs: tuple[Needs, ...] = ()
    """The member pods' node-resource demands (`solver.demand`); none for plain claims."""

    @property
    def weight(self) -> int:
        """What placing the unit adds to the objective: each member pod with the weight of
        its own priority (`claim_weight`), so that the models, their bounds and the realized
        plan (one PodPlan per pod) count the same unit. One pod, or plain claims: the weight
        of `priority`."""
        if len(self.members) <= 1:
            return claim_weight(self.priority)
        return sum(claim_weight(m.priority) for m in self.members)

    def gang_pods(self, gangs: Mapping[str, Gang]) -> dict[str, int]:
        """Gang -> how many of this unit's pods belong to it (placing the unit places them)."""
        out: dict[str, int] = {}
        for m in self.members:
            if m.group is not None and m.group in gangs:
                out[m.group] = out.get(m.group, 0) + 1
        return out


@dataclass
class PodPlan:
    """One pod of the plan."""

    name: str
    node: str | None
    """Where the pod's claims are allocated (None: not placed, or placed with no node)."""
    claims: list[ResourceClaim]
    """Copies of the pod's unallocated claims; with status.allocation when placed."""
    reason: str | None = None
    """Why the pod is not placed."""
    priority: int = 0
    placed: bool = False
    error: DRASolverError | None = None
    """The per-node error behind `reason` (invalid pools, an aborted search), for callers that
    report it as an error when there was only one node to try."""
    extended: Mapping[str, ExtendedStatus] = field(default_factory=dict)
    """Pod `namespace/name` -> status.extendedResourceClaimStatus, for pods placed with a
    special claim for DRA-served extended resources (its claim is among `claims`)."""
    pod: Pod | None = None
    """The input Pod (None for a pod of plain claims); never modified."""
    node_reasons: Mapping[str | None, str] = field(default_factory=dict)
    """Not placed by first fit: why each candidate node did not take the pod (`reason` is the
    one-line summary)."""
    reserved: list[ResourceClaim] = field(default_factory=list)
    """Claims the input had already allocated that this placed pod also uses (shared with a
    running pod, or its PodGroup's), copied with the pod added to `status.reservedFor` as the
    scheduler's reserve step writes it. The plan changes nothing else of them."""

    @property
    def explain_flags(self) -> str:
        """The `dra-solver explain` flags that name this pod in the input: `--pod NAME` for a
        Pod, `--claim NAME` per claim for a pod of plain claims (a plan without Pod objects),
        where `--pod` would answer "Pod not found"."""
        if self.pod is not None:
            return f"--pod {self.name}"
        names = [c.namespaced_name for c in self.claims] or self.name.split(",")
        return " ".join(f"--claim {n}" for n in names)


def int_stat(stats: Mapping[str, object], key: str, default: int | None = None) -> int:
    """`int(stats[key])` for a number among a plan's stats; `default` when it is absent."""
    value = stats.get(key)
    if value is None:
        if default is None:
            raise KeyError(key)
        return default
    if not isinstance(value, str | SupportsInt):
        raise TypeError(f"stats[{key!r}] is not a number: {value!r}")
    return int(value)


@dataclass
class PlanOutcome:
    pods: list[PodPlan]
    """In input order."""
    allocator: str = "cpsat"
    stats: dict[str, object] = field(default_factory=dict)
    added_nodes: list[Node] = field(default_factory=list)
    """What-if plans (`solver.whatif.model`): the template copies the plan adds, in template order."""
    added_slices: list[ResourceSlice] = field(default_factory=list)
    """The added nodes' ResourceSlices."""

    @property
    def placed(self) -> int:
        return sum(p.placed for p in self.pods)

    @property
    def weight(self) -> int:
        """Priority-weighted number of placed pods (the CP-SAT objective)."""
        return sum(claim_weight(p.priority) for p in self.pods if p.placed)

    def pod(self, name: str) -> PodPlan:
        for p in self.pods:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True)
class Job:
    """Everything an allocator needs for one run (see `solver.pipeline.Options`)."""

    cluster: Cluster
    units: tuple[Unit, ...]
    nodes: tuple[str | None, ...]
    gates: FeatureGates
    cache: EvalCache
    seed: int
    strategy: Strategy
    time_limit: float
    book: NodeBook
    """The nodes' free node resources before the plan (allocators take a `fresh()` copy)."""
    gangs: Mapping[str, Gang] = field(default_factory=dict)
    """PodGroup `namespace/name` -> its gang, for the gangs the units' pods belong to."""
    executor: Executor | None = field(default=None, compare=False)
    """Where independent units (the aggregated model's components) run; None: here."""


class Ledger:
    """The cluster as placements accumulate: what is placed counts as allocated for what follows."""

    def __init__(self, job: Job) -> None:
        self.cluster = replace(job.cluster, claims=dict(job.cluster.claims))
        self.gates = job.gates
        self.share_ids = ShareIDs(job.seed, share_ids_in(job.cluster.claims.values()))  # input's are taken

    def results(
        self, problem: Problem, claims: tuple[ResourceClaim, ...], assignment: Assignment
    ) -> list[ResourceClaim]:
        return assignment_claims(problem, claims, assignment, share_ids=self.share_ids)

    def commit(self, claims: list[ResourceClaim], node: str | None, view: Cluster | None = None) -> None:
        """Verify `claims` (placed together, on `node`) and record them as allocated. `view`:
        the part of the cluster the node depends on (`classes.LocalViews`), checked instead of
        the whole cluster when the nodes are independent."""
        check_or_raise(self.cluster if view is None else view, claims, node=node, gates=self.gates)
        for c in claims:
            self.cluster.claims[c.key] = c


@dataclass(frozen=True)
class PodForm:
    """One pod of the plan (a unit) as the model sees it on some of its nodes: the unit's claims
    plus the special extended-resource claims of that form (`solver.demand.Variant`). A unit
    has one form per distinct variant over its nodes; at most one of them is placed."""

    unit: int
    variant: Variant
    nodes: tuple[str | None, ...]
    claims: tuple[ResourceClaim, ...]


@dataclass(frozen=True)
class PlanModel:
    """What CP-SAT solves: the Problem of the placeable pods' forms (`forms`; `offsets`: each
    one's first claim index) and the first-fit plan as a hint."""

    problem: Problem
    forms: list[PodForm]
    offsets: list[int]
    hint: Assignment
    hint_nodes: dict[int, str]


class Allocator(Protocol):
    """Improves a first-fit plan; never returns less placed weight than it was given."""

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
    plan returned reaches that valid bound (`_summary`)."""

    name: ClassVar[str] = "cpsat"
    first_fit_steps: ClassVar[int] = HINT_STEPS

    def __init__(self, aggregation: Literal["auto", "always", "never"] = "auto") -> None:
        """`aggregation`: the aggregated plan model (`solver.aggregate.master`) where it applies and pays
        ("auto"), wherever it applies ("always", for tests), or never (the per-device model)."""
        self.aggregation = aggregation

    def model(self, job: Job, first: PlanOutcome) -> PlanModel | None:
        """The Problem of every pod that may be placed, with the first-fit plan as its hint
        (None when no pod can go anywhere). Public so benchmarks can time the solve alone."""
        forms = _forms(job)
        if not forms:
            return None
        problem, offsets = _model_problem(job, forms)
        if job.gangs:
            problem = replace(problem, gangs=_gang_infos(job, forms, first))
        problem = replace(problem, ordered_pods=_interchangeable(job, forms))
        hint, hint_nodes = _as_hint(problem, forms, offsets, first)
        return PlanModel(problem, forms, offsets, hint, hint_nodes)

    def improve(self, job: Job, first: PlanOutcome) -> PlanOutcome:
        stats = dict(first.stats)
        if interrupt.requested():
            return PlanOutcome(first.pods, self.name, stats)
        ledger = Ledger(job)
        first_nodes = {i: p.node for i, p in enumerate(first.pods) if p.placed and p.node is not None}
        agg: AggregatedPlan | str = "disabled"
        if (why := not_aggregated(job, gangs=True)) is not None:
            agg = f"{why} (not aggregated yet)"
        elif self.aggregation != "never":
            gang_of = {i: g for i, u in enumerate(job.units) for g in u.gang_pods(job.gangs)}
            agg = aggregate(
                ledger.cluster,
                job.units,
                job.nodes,
                job.gates,
                job.cache,
                job.seed,
                job.time_limit,
                first_nodes,
                force=self.aggregation == "always",
                free=job.book.free,
                executor=job.executor,
                gang_of=gang_of,
                gangs=_gang_needs(job, _claimed(job), first),
            )
        if isinstance(agg, AggregatedPlan):
            out = self._expand(job, first, agg, ledger, stats)
            if not _refine(job, out):
                return out
            # A gap remains: the per-device model, hinted with the aggregated plan, may close it
            # (an aggregated model that did not converge can stay far below it); the better
            # checked plan is kept, and the smaller of the two valid bounds.
            again = dict(out.stats, aggregated="yes, then the per-device model (a gap remained)")
            prior = (int_stat(out.stats, "bound"), str(out.stats["bound_from"]))
            kept = "aggregated model" if not out.stats.get("fallback") else "first fit"
            return self._per_device(job, out, again, kept, prior)
        stats["aggregated"] = f"no: {agg}"
        return self._per_device(job, first, stats, "first fit")

    def _per_device(
        self,
        job: Job,
        start: PlanOutcome,
        stats: dict[str, object],
        start_name: str,
        prior: tuple[int, str] | None = None,
    ) -> PlanOutcome:
        """The per-device model over every pod and node, hinted with `start` (first fit's plan,
        or the aggregated one), `start` kept when it places more weight (`start_name` says
        which, in `stats["fallback"]`). `prior`: a valid bound proven before, and its source."""
        model = self.model(job, start)
        if model is None:
            return PlanOutcome(start.pods, self.name, stats)
        problem = model.problem
        outcome = solve(
            problem,
            mode="free",
            strategy=job.strategy,
            time_limit=job.time_limit,
            seed=job.seed,
            hint=model.hint,
            hint_nodes=model.hint_nodes,
            # no wall_limit: the time limit is CP-SAT work (deterministic), guarded by the
            # wall clock at 3 x time_limit + 1 s — the same input and seed, the same plan
        )
        stats.update(
            {
                "devices": len(problem.devices),
                "alternatives": len(problem.alternatives),
                "cpsat_status": outcome.status,
                "cpsat_wall_time": outcome.wall_time,
                "cpsat_objective": outcome.objective,
            }
        )
        chosen = _chosen_forms(model, outcome.assignment or {}, outcome.nodes)
        stats["cpsat_placed"] = len(chosen)
        weight = sum(job.units[i].weight for i in chosen)
        proven = outcome.stage_status.get("placed") == "OPTIMAL"
        modelled = {f.unit for f in model.forms}
        free = _free_units(job, modelled, start, chosen)
        kept = sum(job.units[i].weight for i in free)
        model_bound = weight if proven else outcome.stage_bound.get("placed")
        bound, source = valid_bound(job, modelled, model_bound)
        bound += kept
        if prior is not None and prior[0] < bound:
            bound, source = prior
        trivial = kept + _total(job, modelled)
        start_weight = placed_weight(job.units, start.pods)
        if outcome.assignment is None or weight + kept < start_weight:
            status = _summary(stats, start_weight, bound, trivial, source)
            stats["fallback"] = start_name
            return PlanOutcome(_proven(start.pods, status, job), self.name, stats)
        stats.pop("fallback", None)
        status = _summary(stats, weight + kept, bound, trivial, source)
        pods = self._decode(job, model, outcome.assignment, outcome.nodes, chosen, start, free)
        return PlanOutcome(_proven(pods, status, job), self.name, stats)

    def _expand(
        self, job: Job, first: PlanOutcome, agg: AggregatedPlan, ledger: Ledger, stats: dict[str, object]
    ) -> PlanOutcome:
        """The aggregated plan's pods on their nodes: devices by the single-node allocator, each
        node's claims checked as one call; first fit when it places more weight."""
        out: dict[int, PodPlan] = {}
        dropped: dict[int, str] = {}  # placed by the model, no devices on its node: unit -> node
        for node, idxs in agg.placements.items():
            claims = [c for i in idxs for c in job.units[i].claims]
            group_of = [g for g, i in enumerate(idxs) for _ in job.units[i].claims]
            problem, assignment = allocate_node(agg.ctx, node, claims, group_of, floor=EXPAND_FLOOR)
            done = ledger.results(problem, tuple(claims), assignment or {})
            placed = [c for ci, c in enumerate(done) if ci in (assignment or {})]
            if placed:
                ledger.commit(placed, node, agg.ctx.local(node))
            at = 0
            for i in idxs:
                unit, n = job.units[i], len(job.units[i].claims)
                if all(ci in (assignment or {}) for ci in range(at, at + n)):
                    out[i] = PodPlan(unit.name, node, done[at : at + n], None, unit.priority, placed=True)
                else:
                    dropped[i] = node
                at += n
        stats.update({"aggregated": "yes", **agg.stats})
        if dropped:  # pods, as the summary counts them (`solver.output.summary`)
            stats["expansion_dropped"] = sum(max(len(job.units[i].members), 1) for i in dropped)
        modelled = _claimed(job)
        free = _free_units(job, modelled, first, out)
        counts = _gang_counts(job, set(out) | set(free))
        short = {g for g, gang in job.gangs.items() if counts[g] < gang.min_count}
        if short:  # a pod the exact node allocation did not take left its gang short: none of it
            out = {i: p for i, p in out.items() if not short & set(job.units[i].gang_pods(job.gangs))}
            free = _free_units(job, modelled, first, out)
        out.update(free)
        pods = []
        for i, unit in enumerate(job.units):
            pod = out.get(i) or self._left_out(unit, first.pods[i], dropped.get(i))
            if not pod.placed and first.pods[i].placed and unit.gang_pods(job.gangs):
                pod.reason = _gang_reason(job, unit, out, ())
            pods.append(pod)
        kept = sum(job.units[i].weight for i in free)  # pods without claims, outside gangs
        stats["model_objective"] = agg.objective + kept
        bound, source = valid_bound(job, modelled, agg.bound if agg.bound_proven else None)
        trivial = kept + _total(job, modelled)
        stats["cpsat_placed"] = sum(p.placed for p in pods)
        realized, first_weight = placed_weight(job.units, pods), placed_weight(job.units, first.pods)
        if realized < first_weight:
            status = _summary(stats, first_weight, kept + bound, trivial, source)
            stats["fallback"] = "first fit"
            return PlanOutcome(_proven(first.pods, status, job), self.name, stats)
        status = _summary(stats, realized, kept + bound, trivial, source)
        return PlanOutcome(_proven(pods, status, job), self.name, stats)

    @staticmethod
    def _left_out(unit: Unit, was: PodPlan, dropped_on: str | None = None) -> PodPlan:
        """The unit not placed: first fit's reason, or — when the aggregated model put it on
        `dropped_on` and the node's exact device allocation did not take it — that."""
        reason = was.reason or "left out so that more (or higher-priority) pods fit"
        if dropped_on is not None:
            reason = (
                f"{DROPPED} {dropped_on}, but the exact device allocation there "
                "found no devices for it beside that node's other pods"
            )
        return PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error)

    def _decode(
        self,
        job: Job,
        model: PlanModel,
        assignment: Assignment,
        nodes: dict[int, str],
        chosen: dict[int, int],
        first: PlanOutcome,
        free: dict[int, PodPlan],
    ) -> list[PodPlan]:
        ledger = Ledger(job)
        problem = model.problem
        plans: list[PodPlan] = []
        on_node: dict[str | None, list[ResourceClaim]] = {}
        modelled = {f.unit for f in model.forms}
        for i, unit in enumerate(job.units):
            f = chosen.get(i)
            if f is None:
                was = first.pods[i]
                if i in free:
                    plans.append(free[i])  # no claims and no node limits where it may go
                    continue
                reason = (was.reason if not was.placed else None) or (
                    "left out so that more (or higher-priority) pods fit"
                )
                if was.placed and i not in modelled:  # a free pod of a gang that is not placed
                    reason = _gang_reason(job, unit, chosen, free)
                plans.append(
                    PodPlan(unit.name, None, list(unit.claims), reason, unit.priority, error=was.error)
                )
                continue
            form = model.forms[f]
            node = nodes.get(f, form.nodes[0]) if problem.nodes else form.nodes[0]
            local = {k: assignment[model.offsets[f] + k] for k in range(len(form.claims))}
            done = ledger.results(replace(problem, node=node), form.claims, local) if form.claims else []
            on_node.setdefault(node, []).extend(done)
            statuses = form.variant.statuses
            plans.append(PodPlan(unit.name, node, done, None, unit.priority, placed=True, extended=statuses))
        for n in job.nodes:  # each node's claims as one call, nodes in order
            if on_node.get(n):
                ledger.commit(on_node[n], n)
        return plans


ALLOCATORS: dict[str, Allocator] = {"reference": Reference(), "cpsat": Cpsat()}


def _forms(job: Job) -> list[PodForm]:
    """Each unit's forms over the nodes it may use (scheduling constraints, node resources
    before the plan), in unit order then first node; units that fit nowhere are left out. A
    pod without claims is modelled when node limits bind it or its gang chooses among
    topology domains (its node then matters to the gang's other pods)."""
    book = job.book
    forms: list[PodForm] = []
    for i, unit in enumerate(job.units):
        by_key: dict[tuple[object, ...], tuple[Variant, list[str | None]]] = {}
        for n in job.nodes:
            if n in unit.blocked:
                continue
            v = book.variant(unit.needs, n)
            if book.refusal(v, n):
                continue
            by_key.setdefault(v.key, (v, []))[1].append(n)
        chooses = any(len(job.gangs[g].domains) > 1 for g in unit.gang_pods(job.gangs))
        for v, ns in by_key.values():
            claims = (*unit.claims, *v.claims)
            if claims or book_limits(job, ns) or chooses:
                forms.append(PodForm(i, v, tuple(ns), claims))
    return forms


def _always(job: Job, modelled: set[int], first: PlanOutcome) -> set[int]:
    """Units the model leaves out that are placed whenever their gang is (or always, outside
    gangs): no claims and a node without node limits they may use (`_open_node`). First fit
    places such a unit unless its gang failed."""
    return {
        i
        for i, u in enumerate(job.units)
        if i not in modelled and not u.claims and (first.pods[i].placed or _open_node(job, u) is not None)
    }


def _open_node(job: Job, unit: Unit) -> str | None:
    """The first node the unit may use that limits no node resources (None: there is none)."""
    return next((n for n in job.nodes if n not in unit.blocked and not book_limits(job, [n])), None)


def _claimed(job: Job) -> set[int]:
    """The units with claims: those the aggregated model places (others follow their gangs)."""
    return {i for i, u in enumerate(job.units) if u.claims}


def _gang_needs(job: Job, modelled: set[int], first: PlanOutcome) -> dict[str, int]:
    """Gang -> `need`: its minCount less the pods placed whenever it is (bound, or outside the
    model `modelled`: no claims and no node limits, `_always`)."""
    sure = _gang_counts(job, _always(job, modelled, first))
    return {g: gang.min_count - sure[g] for g, gang in job.gangs.items()}


def _gang_counts(job: Job, counted: Iterable[int]) -> dict[str, int]:
    """Gang -> its pods placed by the units `counted`, plus those already bound."""
    out = {g: gang.bound for g, gang in job.gangs.items()}
    for i in counted:
        for g, k in job.units[i].gang_pods(job.gangs).items():
            out[g] += k
    return out


def _free_units(
    job: Job, modelled: set[int], first: PlanOutcome, chosen: Mapping[int, object]
) -> dict[int, PodPlan]:
    """The PodPlans of the units outside the model that the plan places: every such unit
    whose gangs (if any) are placed — a gang is placed when the chosen pods and these reach
    its minCount (`encoders.gangs` guarantees that none of its pods is chosen otherwise)."""
    always = _always(job, modelled, first)
    counts = _gang_counts(job, set(chosen) | always)
    out: dict[int, PodPlan] = {}
    for i in sorted(always):
        unit = job.units[i]
        if any(counts[g] < job.gangs[g].min_count for g in unit.gang_pods(job.gangs)):
            continue
        was = first.pods[i]
        if was.placed:
            out[i] = was
        else:
            out[i] = PodPlan(unit.name, _open_node(job, unit), [], None, unit.priority, placed=True)
    return out


def _gang_reason(job: Job, unit: Unit, chosen: Iterable[int], free: Iterable[int]) -> str:
    """Why a pod of a gang the plan does not place is left out."""
    counts = _gang_counts(job, set(chosen) | set(free))
    short = [g for g in sorted(unit.gang_pods(job.gangs)) if counts[g] < job.gangs[g].min_count]
    if short:
        return job.gangs[short[0]].short(counts[short[0]])
    return "left out so that more (or higher-priority) pods fit"


def _gang_infos(job: Job, forms: list[PodForm], first: PlanOutcome) -> tuple[GangInfo, ...]:
    """`Problem.gangs`: per gang with a modelled pod, its forms and how many pods each
    places; `need` is minCount less the pods placed whenever the gang is (bound, or outside
    the model: no claims and no node limits)."""
    need = _gang_needs(job, {f.unit for f in forms}, first)
    groups: dict[str, list[tuple[int, int]]] = {}
    for g, f in enumerate(forms):
        for name, k in job.units[f.unit].gang_pods(job.gangs).items():
            groups.setdefault(name, []).append((g, k))
    return tuple(
        GangInfo(
            name,
            need[name],
            tuple(gs),
            tuple(frozenset(ns) for _, ns in job.gangs[name].domains) if job.gangs[name].topology else (),
            counted=not job.gangs[name].basic,
        )
        for name, gs in sorted(groups.items())
    )


def not_aggregated(job: Job, gangs: bool = False) -> str | None:
    """Why the class/pattern models (`solver.aggregate.master`, `solver.whatif.model`) do not take this job
    yet, or None: gangs (unless `gangs`: the plan's master takes those without a topology
    constraint whose pods each have claims of their own — it counts placed units as the
    gang's pods, and its objective has no term for pods that follow their gang),
    a pod asking for an extended resource a DeviceClass maps (DRA may serve it, so its claims
    depend on the node), pods without claims under node limits."""
    if job.gangs and not gangs:
        return "pods belong to gangs (PodGroups with minCount, or with a topology constraint)"
    if any(g.topology for g in job.gangs.values()):
        return "a gang has a topology constraint"
    if any(u.gang_pods(job.gangs) and (len(u.members) > 1 or not u.claims) for u in job.units):
        return "pods of a gang share a claim or have none"
    mapping = job.book.mapping
    if any(r in mapping for u in job.units for n in u.needs for r in n.demand):
        return "a pod asks for an extended resource DRA may serve"
    if book_limits(job, job.nodes) and any(not u.claims for u in job.units):
        return "pods without claims take node resources"
    return None


def book_limits(job: Job, nodes: list[str | None] | tuple[str | None, ...]) -> bool:
    """Whether any of `nodes` limits node resources (then pods without claims compete there)."""
    return any(job.book.free.get(n) is not None for n in nodes)


def _model_problem(job: Job, forms: list[PodForm]) -> tuple[Problem, list[int]]:
    """The Problem of the forms, and each one's first claim index. One node without node
    limits: the single-node Problem with pod groups; otherwise the merged multi-node Problem
    with node resources (`encoders.resources`)."""
    offsets, at = [], 0
    for f in forms:
        offsets.append(at)
        at += len(f.claims)
    priorities = [job.units[f.unit].priority for f in forms]
    if len(job.nodes) == 1 and not book_limits(job, job.nodes):
        claims = [c for f in forms for c in f.claims]
        group_of = [g for g, f in enumerate(forms) for _ in f.claims]
        problem = build_problem(
            job.cluster,
            claims,
            job.nodes[0],
            job.gates,
            cache=job.cache,
            priorities=[priorities[g] for g in group_of],
            groups=group_of,
        )
        return replace(problem, group_weight=_group_weights(job, forms)), offsets
    real = [n for n in job.nodes if n is not None]
    group_nodes = {
        g: tuple(n for n in f.nodes if n is not None) for g, f in enumerate(forms) if len(f.nodes) < len(real)
    }
    problem = build_multi_node_problem(
        job.cluster,
        [list(f.claims) for f in forms],
        real,
        job.gates,
        job.cache,
        priorities=priorities,
        group_nodes=group_nodes,
    )
    by_unit: dict[int, list[int]] = {}
    for g, f in enumerate(forms):
        by_unit.setdefault(f.unit, []).append(g)
    # Forms are only allowed where they fit the free amounts alone, so a resource a node does
    # not report never binds there: the free amounts are the limits.
    limits = {n: dict(free) for n in real if (free := job.book.free.get(n)) is not None}
    problem = replace(
        problem,
        group_demand={g: dict(f.variant.demand) for g, f in enumerate(forms) if f.variant.demand},
        node_limits={n: lim for n, lim in limits.items() if lim},
        bare_groups={g: priorities[g] for g, f in enumerate(forms) if not f.claims},
        exclusive_groups=tuple(tuple(gs) for gs in by_unit.values() if len(gs) > 1),
        group_weight=_group_weights(job, forms),
    )
    return problem, offsets


def _group_weights(job: Job, forms: list[PodForm]) -> dict[int, int]:
    """`Problem.group_weight`: the forms of units whose weight is not their priority's (pods
    sharing a claim: each pod counts with its own weight)."""
    out = {}
    for g, f in enumerate(forms):
        unit = job.units[f.unit]
        if unit.weight != claim_weight(unit.priority):
            out[g] = unit.weight
    return out


def _interchangeable(job: Job, forms: list[PodForm]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Classes of interchangeable pods (`Problem.ordered_pods`): units whose claims, priority,
    blocked nodes, node-resource demand, gangs and forms (nodes, special claims) are the same,
    each unit as its form groups, in queue order (the units' order: equal priorities)."""
    groups: dict[int, list[int]] = {}
    for g, f in enumerate(forms):
        groups.setdefault(f.unit, []).append(g)
    classes: dict[Hashable, list[tuple[int, ...]]] = {}
    for i, gs in groups.items():
        u = job.units[i]
        key = (
            tuple(claim_key(c) for c in u.claims),
            u.priority,
            frozenset(n for n in u.blocked),
            tuple(sorted(demand_total(u.needs).items())),
            tuple(sorted(u.gang_pods(job.gangs).items())),
            tuple(_form_key(forms[g]) for g in gs),
        )
        classes.setdefault(key, []).append(tuple(gs))
    return tuple(tuple(units) for units in classes.values() if len(units) > 1)


def _form_key(form: PodForm) -> Hashable:
    variant = form.variant
    return (form.nodes, tuple(claim_key(c) for c in variant.claims), tuple(sorted(variant.demand.items())))


def _chosen_forms(model: PlanModel, assignment: Assignment, nodes: dict[int, str]) -> dict[int, int]:
    """unit -> the form the solution places (a form with claims is placed when its first
    claim is; a bare form when it has a node)."""
    out: dict[int, int] = {}
    for g, f in enumerate(model.forms):
        placed = model.offsets[g] in assignment if f.claims else g in nodes
        if placed:
            out[f.unit] = g
    return out


def _as_hint(
    problem: Problem, forms: list[PodForm], offsets: list[int], first: PlanOutcome
) -> tuple[Assignment, dict[int, str]]:
    """The first-fit plan in the model's indices, and its node per group (the form of each
    placed pod is the one for the node first fit chose)."""
    devices = {(d.driver, d.pool, d.name): d.index for d in problem.devices}
    alts = {(a.claim, a.name): a.index for a in problem.alternatives}
    hint: Assignment = {}
    hint_nodes: dict[int, str] = {}
    for g, form in enumerate(forms):
        pod = first.pods[form.unit]
        if not pod.placed or pod.node not in form.nodes:
            continue
        if pod.node is not None:
            hint_nodes[g] = pod.node
        for k, claim in enumerate(pod.claims):
            ci = offsets[g] + k
            alloc = claim.status.allocation if claim.status else None
            if alloc is None:
                continue
            hint[ci] = [
                Placement(ci, alts[(ci, r.request)], devices[(r.driver, r.pool, r.device)])
                for r in alloc.devices.results
                if (r.driver, r.pool, r.device) in devices and (ci, r.request) in alts
            ]
    return hint, hint_nodes


def _proven(pods: list[PodPlan], status: str, job: Job) -> list[PodPlan]:
    """First-fit pods whose search was aborted: if CP-SAT proved the plan optimal, they cannot
    be placed (no error); otherwise neither search could tell, which stays an error."""
    out = []
    for p in pods:
        if isinstance(p.error, SearchAborted):
            if status == "OPTIMAL":
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


def _summary(stats: dict[str, object], realized: int, bound: int, trivial: int, source: str) -> str:
    """The plan's honest summary, and its status: the realized plan's weight (`realized`, the
    plan returned: the model's, or first fit's when that places more), a bound valid for the
    upstream semantics (`valid_bound`) and the gap. OPTIMAL only when the realized weight
    reaches the bound; FEASIBLE otherwise.

    A realized plan above the bound means the bound was not valid (a model stricter than
    upstream that `sequential_units` does not know of): the bound is never raised to meet the
    plan (that would print gap 0 for nothing proven) — it falls back to `trivial`, the weight
    of every pod that may be placed, which no plan exceeds."""
    if realized > bound:
        bound, source = trivial, f"pods that may be placed (the model's bound, {bound}, was beaten)"
    status = "OPTIMAL" if realized == bound else "FEASIBLE"
    stats.update(
        {
            "status": status,
            "objective": realized,
            "bound": bound,
            "gap": bound - realized,
            "bound_from": source,
        }
    )
    return status


def _refine(job: Job, out: PlanOutcome) -> bool:
    """Whether the per-device model should try to close the aggregated plan's gap."""
    if out.stats.get("status") == "OPTIMAL" or interrupt.requested():
        return False
    return len(job.units) * len(job.nodes) <= PER_DEVICE_MAX


def placed_weight(units: Sequence[Unit], pods: Sequence[PodPlan]) -> int:
    """The objective of a plan of units (one PodPlan per unit, before the pipeline splits joined
    units into their pods): each placed unit's weight (`Unit.weight`: each of its pods with its
    own). `PlanOutcome.weight` is the same sum once there is one PodPlan per pod."""
    return sum(u.weight for u, p in zip(units, pods, strict=True) if p.placed)


def _total(job: Job, units: Iterable[int]) -> int:
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
      KEP-5075) device exists: placed together, an earlier pod's share of a shared device
      stays in a later All-set, where upstream leaves a device whose remaining capacity no
      longer fits the request out of it;
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
    total = _total(job, modelled)
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
    relaxed = model_bound + _total(job, loose)
    return min(relaxed, total), "model, with the pods it judges more strictly than upstream as placeable"


__all__ = [
    "ALLOCATORS",
    "Allocator",
    "Cpsat",
    "Gang",
    "Job",
    "Member",
    "PlanModel",
    "PlanOutcome",
    "PodForm",
    "not_aggregated",
    "placed_weight",
    "PodPlan",
    "Reference",
    "Unit",
]
