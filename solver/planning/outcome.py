"""What a plan returns (`PodPlan`, `PlanOutcome`), what it may claim (`Verdict`) and the numbers
it reports (`PlanSummary`), counted on the realized plan (DESIGN "What a status proves").

Why a module: the summary line on stderr, the `-o table` summary, the HTML report and the
`-o yaml|json` annotations say the same thing, and each number must describe what is in the output —
the pods after expansion to devices and after the final check, every pod (also each pod of a
claim several pods share) with its own priority weight (`problem.flat.claim_weight`). What the
plan claims — status, bound, gap — is its `Verdict`, made by `planners.bounds.verdict` only and
read here as it is: nothing on this floor or above judges a status again. The allocators' stats
(`Stats`) are diagnostics only: they speak of their model (units, patterns, the model's
objective before expansion) and never repeat the verdict. Kept on the planning floor, beside
the outcome types, so that the planners and `planning.finish` read it without importing
`output/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import SupportsInt, TypedDict

from ..api.models import Node, Pod, ResourceClaim, ResourceSlice
from ..api.models import PodExtendedResourceClaimStatus as ExtendedStatus
from ..deadline import Deadline, fired
from ..errors import DRASolverError
from ..problem.flat import claim_weight
from ..reasons import Kind, Reason
from ..reasons.words import say

Number = int | float


def _number(value: object) -> Number | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class PlanSummary:
    """One plan's summary: counts and objective from the pods in the output, the status, bound
    and gap from its `Verdict`, first fit's count of pods it placed (from the stats)."""

    allocator: str
    placed: int
    """Pods placed in the output."""
    total: int
    """Pods in the output."""
    objective: int
    """The realized placed weight (`PlanOutcome.weight`: each placed pod with its own priority)."""
    status: Status | None
    """The plan's status, as its `Verdict` says (None: no verdict, first fit's plan)."""
    bound: int | None
    """An upper bound on `objective` over every valid plan, from the verdict (None: none known)."""
    gap: int | None = None
    """`bound - objective`, in the objective's unit, from the verdict (None: no bound)."""
    fallback: str | None = None
    """What the allocator kept instead of its own plan (first fit), if anything."""
    first_fit_placed: int | None = None
    """Pods first fit placed on the same run (None: not run, or this is first fit)."""
    model_objective: object = None
    """The model's own objective, when it differs from the realized one (for the Python API)."""
    dropped: int = 0
    """Pods the plan model placed that its expansion to devices did not (each listed with that
    reason); 0 when the allocator kept first fit's plan instead."""

    @classmethod
    def of(cls, outcome: PlanOutcome) -> PlanSummary:
        """The counts of `outcome`'s pods and what its verdict says (status, bound, gap), read
        as they are: a verdict describes the plan it came with (`Verdict.objective` is the
        realized weight; `planners.bounds.verdict` makes a new one when the plan changes)."""
        pods, allocator, stats, told = outcome.pods, outcome.allocator, outcome.stats, outcome.verdict
        objective = outcome.weight
        if told is not None and told.objective != objective:
            raise ValueError(
                f"the verdict speaks of a plan of weight {told.objective}, this one weighs {objective}"
            )
        model = stats.get("model_objective")
        first = _number(stats.get("reference_placed"))
        dropped = _number(stats.get("expansion_dropped")) if not stats.get("fallback") else None
        return cls(
            allocator=allocator,
            placed=sum(p.placed for p in pods),
            total=len(pods),
            objective=objective,
            status=None if told is None else told.status,
            bound=None if told is None else told.bound,
            gap=None if told is None else told.gap,
            fallback=str(stats["fallback"]) if stats.get("fallback") else None,
            first_fit_placed=int(first) if first is not None and allocator != "reference" else None,
            model_objective=model if model is not None and model != objective else None,
            dropped=int(dropped or 0),
        )

    def text(self, seconds: float, counted: str = "pods") -> str:
        """One line: placed of total, the allocator, status, objective, bound and gap (when the
        allocator has a status), what it kept, first fit's count, and the planning wall clock.
        `counted` says what the total counts (`replicas of ml/trainer`, for `--fill`)."""
        parts = [self.allocator]
        if self.status is not None:
            parts.append(f"status {self.status}")
            parts.append(f"objective {self.objective}")
            if self.bound is not None:
                parts.append(f"bound {number_text(self.bound)}")
                parts.append(f"gap {number_text(self.gap)}")
        if self.dropped:
            parts.append(f"{self.dropped} placed by the model but not by its device allocation")
        if self.fallback:
            parts.append(f"kept {self.fallback}")
        if self.first_fit_placed is not None:
            parts.append(f"first fit placed {self.first_fit_placed}")
        if self.total == 1:  # `placed 0 of 1 pod`, `1 replica of ns/pod`
            first, _, rest = counted.partition(" ")
            counted = " ".join(filter(None, (first.removesuffix("s"), rest)))
        placed = f"placed {self.placed} of {self.total} {counted}"
        return f"{placed} ({', '.join(parts)}), planned in {seconds:.1f} s"


def number_text(value: object) -> str:
    """A number as short text: floats to 4 digits; `-` for none."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


__all__ = ["PlanSummary", "number_text"]


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
    why: Reason | None = None
    """`reason` as a value, where the reason is one (`solver.reasons`): what code decides on
    (never `reason`'s text). Given without `reason`, `reason` is its words."""
    unread: bool = False
    """A Pod of the input that could not be read (`HeldPod.stub`): `pod` is None, as it is never
    written out, yet it is a pod (`explain --pod` names it)."""

    def __post_init__(self) -> None:
        if self.why is not None and self.reason is None:
            self.reason = say(self.why)

    def because(self, why: Reason | None, words: str | None = None) -> None:
        """Set why the pod is not placed: the value and its words (`words`, when the line says
        more than the value: first fit's per-node words)."""
        self.why, self.reason = why, words if words is not None or why is None else say(why)

    def is_(self, *kinds: Kind) -> bool:
        """Whether the pod's reason is of one of `kinds`."""
        return self.why is not None and self.why.kind in kinds

    @property
    def explain_flags(self) -> str:
        """The `dra-solver explain` flags that name this pod in the input: `--pod NAME` for a
        Pod, `--claim NAME` per claim for a pod of plain claims (a plan without Pod objects),
        where `--pod` would answer "Pod not found"."""
        if self.pod is not None or self.unread:
            return f"--pod {self.name}"
        names = [c.namespaced_name for c in self.claims] or self.name.split(",")
        return " ".join(f"--claim {n}" for n in names)


def record(stats: Stats, deadline: Deadline | None) -> None:
    """`stats["cut_short_by_timeout"] = True` (`deadline.CUT_SHORT`) when `deadline` fired."""
    if fired(deadline):
        stats["cut_short_by_timeout"] = True


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


class Status(StrEnum):
    """What a plan's objective is proven to be (docs/semantics.md, "What a status proves").
    Said by one function, `planners.bounds.verdict`; everything else reads it."""

    OPTIMAL = "OPTIMAL"
    """The realized plan reaches a bound that holds for every valid plan."""
    OPTIMAL_WITHIN_CAP = "OPTIMAL within the cap"
    """What-if: optimal among the plans that add at most the user's cap of each template."""
    FEASIBLE = "FEASIBLE"
    """A valid plan; a better one may exist (the bound says how much better at most)."""
    PARTITIONED = "PARTITIONED"
    """`--partitions`: parts planned apart, then a repair pass; the bound is the whole's."""


def proven(outcome: PlanOutcome) -> bool:
    """Whether `outcome`'s verdict says OPTIMAL: the one reading of the status
    `planners.bounds.verdict` decided, for the code that acts on a proven plan (stop refining,
    keep an update, word a reason). A plan without a verdict (first fit's) proves nothing."""
    return outcome.verdict is not None and outcome.verdict.status == Status.OPTIMAL


@dataclass(frozen=True)
class Verdict:
    """What a plan may claim: its status, the realized objective, a bound valid for every plan
    (None: none known) and where it comes from, the gap, and whether the wall-clock deadline
    cut the search short. Made by `planners.bounds.verdict` only."""

    status: Status
    objective: int
    bound: int | None
    bound_from: str
    gap: int | None
    cut_short: bool = False


class Stats(TypedDict, total=False):
    """`PlanOutcome.stats`: what a run says of itself beside its plan, by the module that
    writes it — diagnostics only (what ran, how long, the models' sizes and own objectives).
    What the plan claims (status, objective, bound, gap) is its `verdict`, and its counts are
    `PlanOutcome.placed`, `.weight` and `.pods`: none of them is repeated here, so there is one
    place to read each (issue #41)."""

    # the aggregated model (`aggregated.expansion`)
    model_objective: object
    """The model's own objective where it differs from the realized one (the aggregated model's)."""
    # first fit (`planners.firstfit.batch`, `planners.policy`)
    nodes: int
    reference_placed: int
    first_fit_seconds: float
    first_fit: str
    # the CP-SAT planners (`planners.policy`, `perdevice`, `aggregated/`)
    fallback: str
    aggregated: str
    models: str
    """Why no model ran after first fit (`policy.NOT_STARTED`: --timeout left too little)."""
    pooled: str
    pool_nodes: int
    extended_as_claims: int
    """Pods whose DRA-served extended resources the aggregated model planned as claims
    (`aggregated.served`)."""
    aggregated_cut: str
    """The run's deadline passed before the aggregated model had a plan (`aggregated.master`)."""
    expansion_dropped: int
    cpsat_placed: int
    devices: int
    alternatives: int
    cpsat_status: str
    """The per-device search's own status (`cpsat.CpsatOutcome.status`), not the plan's."""
    cpsat_wall_time: float
    cpsat_objective: dict[str, int]
    pod_classes: int
    node_classes: int
    components: int
    columns: int
    rounds: int
    single_node_solves: int
    classes_time: float
    model_time: float
    # what-if (`planners.whatif`, `aggregated.master`)
    whatif_model: str
    whatif_patterns: str
    whatif_integer: str
    whatif_cap: str
    whatif_caps: dict[str, int]
    whatif_caps_source: str
    cost_bound: int
    added: str
    added_cost: int
    # any run (`planners.run`, `deadline.record`)
    warnings: list[str]
    cut_short_by_timeout: bool
    # `--partitions` (`planners.partition`)
    partitions: int
    placed_by_parts: int
    placed_by_repair: int
    repair: str
    part_placed: list[int]
    part_status: list[str | None]
    parts_time: float
    time: float
    # preemption (`preempt.model`)
    stage_status: dict[str, str]
    preempt_model: str
    preempt_model_reason: str
    kinds_merged: bool
    deterministic_s: float
    candidates: int
    evicted: int
    pdb_violations: int
    evicted_priority_sum: int
    highest_evicted_priority: int | None
    moved: int
    """Preemption: pods moved; re-planning: pods placed in both plans on other nodes."""
    moves_bound: int
    """Preemption with moves: a lower bound of every plan's moves at the earlier stages' values
    (`preempt.clearing`, or CP-SAT's), when one is known."""
    moves_gap: int
    """Preemption with moves: the plan's moves less `moves_bound` (0: proven fewest)."""
    # re-planning (`replan.planner`)
    update: str
    update_seconds: float
    replanned: int
    retried: int
    warm_shapes: int
    warm_seconds: float
    local_nodes: int
    local_seconds: float
    local_gain: int
    local_status: str
    local_changed: int


@dataclass
class PlanOutcome:
    pods: list[PodPlan]
    """In input order."""
    allocator: str = "cpsat"
    stats: Stats = field(default_factory=lambda: Stats())
    added_nodes: list[Node] = field(default_factory=list)
    """What-if plans (`solver.planners.whatif`): the template copies the plan adds, in template order."""
    added_slices: list[ResourceSlice] = field(default_factory=list)
    """The added nodes' ResourceSlices."""
    verdict: Verdict | None = None
    """What the planner that made the plan proved of it (`planners.bounds.verdict`); None for
    first fit's plan, which proves nothing."""

    @property
    def placed(self) -> int:
        return sum(p.placed for p in self.pods)

    @property
    def weight(self) -> int:
        """Priority-weighted number of placed pods (the CP-SAT objective)."""
        return sum(claim_weight(p.priority) for p in self.pods if p.placed)

    def placed_nodes(self) -> dict[int, str]:
        """Index -> node of each placed pod (or unit) that has a node: the plan as the models'
        hints and first columns read it."""
        return {i: p.node for i, p in enumerate(self.pods) if p.placed and p.node is not None}

    def pod(self, name: str) -> PodPlan:
        for p in self.pods:
            if p.name == name:
                return p
        raise KeyError(name)
