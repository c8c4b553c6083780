"""The plan's own data: what a run is given (`Options`, `Job`) and the pods it places (`Unit`,
`Member`, `Gang`); what it returns (`PodPlan`, `PlanOutcome`) is `planning.outcome`.

Why on the ground floor of the planning code: first fit, the CP-SAT planners, the aggregated
model, what-if, partitions and the output all read these values. Kept here, below every one of
them, each reads the data without importing another planner (so no planner needs a protocol
standing in for `Unit`, or a callback standing in for a function it cannot import). This
module imports nothing above `problem/` (`tests/test_architecture.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, Protocol

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..cel import EvalCache
from ..deadline import Deadline
from ..errors import InputError
from ..gates import FeatureGates
from ..problem.demand import Needs, NodeBook
from ..problem.flat import claim_weight
from ..reasons import Kind, Reason
from .outcome import PlanOutcome, PodPlan

AllocatorName = Literal["reference", "cpsat"]
Strategy = Literal["pack", "spread"]
ALLOCATOR_NAMES: tuple[AllocatorName, ...] = ("reference", "cpsat")
"""The allocators `Options.allocator` may name (`policy.ALLOCATORS` holds one of each)."""
Progress = Callable[[int, int], None]
"""Called with (pods decided, pods) as first fit works: the CLI draws a progress bar with it."""


class AllBut(Mapping[str | None, Reason]):
    """`Unit.blocked` of a running pod or its claim: every node of the run but its own, for one
    reason. Why not a dict: one per running pod costs pods x nodes (50,000 pods on 10,000
    nodes: 500 million entries); this answers membership in constant time, and
    `planners.perdevice.pod_forms` reads its one node without visiting the others."""

    def __init__(self, nodes: Sequence[str], everywhere: frozenset[str], node: str, why: Reason) -> None:
        self.nodes, self.everywhere, self.node, self.why = nodes, everywhere, node, why

    def __getitem__(self, key: str | None) -> Reason:
        if key != self.node and key in self.everywhere:
            return self.why
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key != self.node and key in self.everywhere

    def __iter__(self) -> Iterator[str | None]:
        return (n for n in self.nodes if n != self.node)

    def __len__(self) -> int:
        return len(self.everywhere) - (self.node in self.everywhere)


class AlsoBlocked(Mapping[str | None, Reason]):
    """`Unit.blocked` of a pod that may go where `base` allows but for one more node (a moved
    pod's replacement: not on the node it leaves, `preempt.moves`); `base`'s reason wins where
    it blocks that node too. Why not a dict: `base` is shared by every pod of one scheduling
    key (`planning.resolve.all_with_nodes`), and a copy per pod costs pods x blocked nodes;
    `planners.perdevice.pod_forms` works the base's nodes out once and excludes the one node."""

    def __init__(self, base: Mapping[str | None, Reason], node: str, why: Reason) -> None:
        self.base, self.node, self.why = base, node, why

    def __getitem__(self, key: str | None) -> Reason:
        if key in self.base:
            return self.base[key]
        if key == self.node:
            return self.why
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key == self.node or key in self.base

    def __iter__(self) -> Iterator[str | None]:
        yield from self.base
        if self.node not in self.base:
            yield self.node

    def __len__(self) -> int:
        return len(self.base) + (self.node not in self.base)


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
    placement cycle treats it (`planning.gangs.resolve_gangs`)."""
    held: tuple[tuple[str, str], ...] = ()
    """Pending pods of the group no plan places (`planning.triage`: a problem they depend on,
    their scheduling gates), with why: the gang's reason names them, since they count towards
    minCount upstream once fixed and are why the rest may fall short."""
    size: int | None = None
    """How many pods of the input name the group (pending, held or bound; `planning.gangs`):
    fewer than `min_count` and the reason says the group has only that many."""

    def domain_of(self, node: str | None) -> str | None:
        """The label value of `node` among `domains` (None: the node is in none)."""
        return next((v for v, ns in self.domains if node in ns), None)

    @property
    def goal(self) -> str:
        """What the gang must reach, in words."""
        return "one of its pods (basic policy)" if self.basic else f"its gang minCount {self.min_count}"

    def short(self, placed: int) -> Reason:
        """Why the gang is not placed."""
        few = self.size is not None and self.size < self.min_count and not self.basic
        size = {"size": self.size} if few else {}
        if not self.held:
            return Reason.of(
                Kind.GANG_SHORT, self.name, placed=placed, goal=self.goal, basic=int(self.basic), **size
            )
        (pod, why), more = self.held[0], len(self.held) - 1
        return Reason.of(
            Kind.GANG_SHORT,
            self.name,
            placed=placed,
            goal=self.goal,
            basic=int(self.basic),
            held=pod,
            held_why=why,
            held_more=more,
            **size,
        )


@dataclass(frozen=True)
class Unit:
    """One pod to place: its unallocated claims go to one node together, or not at all."""

    name: str
    claims: tuple[ResourceClaim, ...]
    priority: int = 0
    blocked: Mapping[str | None, Reason] = field(default_factory=dict)
    """Candidate nodes the pod may not use, with the reason (scheduling constraints)."""
    members: tuple[Member, ...] = ()
    """Pods placed as this unit: more than one when they share an unallocated claim (it is
    allocated once, and its pods go where that allocation is usable: the same node)."""
    needs: tuple[Needs, ...] = ()
    """The member pods' node-resource demands (`solver.problem.demand`); none for plain claims."""

    @property
    def weight(self) -> int:
        """What placing the unit adds to the objective: each member pod with the weight of
        its own priority (`claim_weight`), so that the models, their bounds and the realized
        plan (one PodPlan per pod) count the same unit. One pod, or plain claims: the weight
        of `priority`."""
        if len(self.members) <= 1:
            return claim_weight(self.priority)
        return sum(claim_weight(m.priority) for m in self.members)

    def slim(self) -> Unit:
        """The unit as a component of the aggregated model ships it to an executor
        (`aggregated.master.ComponentTask`): claims, priority, node-resource demands and weight
        (`weight` reads the members' priorities), without Pod objects or refused nodes."""
        members = tuple(Member(m.name, None, (), priority=m.priority) for m in self.members)
        return Unit(
            self.name,
            self.claims,
            self.priority,
            members=members if len(members) > 1 else (),
            needs=self.needs,
        )

    def gang_pods(self, gangs: Mapping[str, Gang]) -> dict[str, int]:
        """Gang -> how many of this unit's pods belong to it (placing the unit places them)."""
        out: dict[str, int] = {}
        for m in self.members:
            if m.group is not None and m.group in gangs:
                out[m.group] = out.get(m.group, 0) + 1
        return out


class ModelVariant(Protocol):
    """One way the CP-SAT allocator plans a job: an entry of the table it tries in order
    (`planners.policy.MODELS`; `Options.models` replaces it for a run). Declared here, beside
    the options that carry it, so the planning data names it without importing a planner."""

    name: ClassVar[str]

    def applies(self, job: Job, start: PlanOutcome) -> str | None:
        """Why this variant does not plan `job` from `start`, as far as the job tells before any
        model is built; None: it may plan it."""
        ...

    def plan(self, job: Job, start: PlanOutcome, passed: Mapping[str, str]) -> PlanOutcome | str:
        """Its plan from `start` (first fit's, or an earlier variant's that left a gap), never
        placing less weight; or why it does not apply after all, found while building its model.
        `passed`: why each earlier variant did not plan, by name."""
        ...


@dataclass(frozen=True)
class Job:
    """Everything an allocator needs for one run (see `planning.job.Options`)."""

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
    deadline: Deadline | None = field(default=None, compare=False)
    """The one wall-clock limit (`Options.deadline`)."""
    models: tuple[ModelVariant, ...] | None = None
    """The CP-SAT model variants to try in order (`Options.models`); None: `policy.MODELS`."""
    memo: object | None = field(default=None, compare=False)
    """`Options.memo`."""
    per_device_max: int | None = None
    """`Options.per_device_max`."""


@dataclass(frozen=True)
class Options:
    """How to run: one value instead of loose keyword arguments, passed down unchanged.

    `feature_gates` accepts FeatureGates, a mapping or `Name=true,Other=false`. `cache` (a
    CEL EvalCache) may be shared across runs on the same cluster; it never changes results;
    nor does `progress`."""

    allocator: AllocatorName = "cpsat"
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    seed: int = 0
    strategy: Strategy = "pack"
    time_limit: float = 10.0
    cache: EvalCache | None = field(default=None, compare=False, repr=False)
    progress: Progress | None = field(default=None, compare=False, repr=False)
    """Told (pods decided, pods) as first fit works (the CLI's progress bar); never changes results."""
    executor: Executor | None = field(default=None, compare=False, repr=False)
    """Where a plan's independent units run (`solver.executors`: any concurrent.futures
    Executor, e.g. a process pool or `RayExecutor`); None: in this process. Never changes results."""
    partitions: int = 1
    """Split the plan into this many random parts of pods and nodes, each solved alone, then a
    repair pass (`solver.planners.partition`); 1: one plan."""
    repair: AllocatorName = "reference"
    """A partitioned plan's repair pass: first fit (reference) or the CP-SAT plan (cpsat)."""
    ignore_scheduling_gates: bool = False
    """Plan pods that have `spec.schedulingGates` as if their gates were lifted ("what if Kueue
    admitted it"); False: they are held, as the scheduler holds them (`planning.triage`)."""
    deadline: Deadline | None = field(default=None, compare=False, repr=False)
    """The one wall-clock limit of a run (`solver.deadline`; the CLI's `--timeout`): None (the
    default) lets `time_limit`, deterministic work, alone decide, so the same input and seed
    give the same output at any load. Past it every CP-SAT search stops with what it has, and
    the outcome says so (`stats["cut_short_by_timeout"]`)."""
    models: tuple[ModelVariant, ...] | None = None
    """The CP-SAT allocator's model variants, tried in order (`planners.policy`: `Complete`,
    `Aggregated`, `PerDevice`); None: its own table, `MODELS`. Tests give one variant, or the
    aggregated model forced (`AGGREGATED_FIRST`) or left out (`PER_DEVICE_ONLY`)."""
    memo: object | None = field(default=None, compare=False, repr=False)
    """Single-node answers of the aggregated model kept across runs on one cluster (an
    `planners.aggregated.patterns.ModelMemo`; `replan.planner.Planner` keeps one for its plan and its local
    re-solves); None: each run its own. Never changes results: an answer found there is
    charged the work it cost."""
    per_device_max: int | None = None
    """Pods x nodes up to which the per-device model plans a job: above it the job is at the
    aggregated model's scale (`planners.policy.beyond_per_device`: first fit's plan is kept when
    it placed every pod that may be placed, the aggregated model runs before first fit, and no
    per-device model closes its gap). None: `planners.aggregated.master.PER_DEVICE_MAX`. Part of
    the choice of model, so injected here like `models`: tests set 0 to plan a small cluster as
    a large one."""

    def __post_init__(self) -> None:
        if self.allocator not in ALLOCATOR_NAMES:
            raise InputError(f"unknown allocator {self.allocator!r}; use {' or '.join(ALLOCATOR_NAMES)}")
        if self.strategy not in ("pack", "spread"):
            raise InputError(f"unknown strategy {self.strategy!r}; use pack or spread")
        if self.partitions < 1:
            raise InputError(f"partitions must be at least 1, got {self.partitions}")
        if self.repair not in ALLOCATOR_NAMES:
            raise InputError(f"unknown repair {self.repair!r}; use {' or '.join(ALLOCATOR_NAMES)}")
        if not self.time_limit > 0:
            raise InputError(f"time limit must be positive, got {self.time_limit}")
        gates: Any = self.feature_gates
        object.__setattr__(self, "feature_gates", FeatureGates.of(gates))

    @classmethod
    def of(cls, options: Options | None = None, **changes: Any) -> Options:
        """`options` (default: the defaults) with the given fields changed."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        base = options or cls()
        values = {f.name: getattr(base, f.name) for f in fields(cls)}
        values.update(changes)
        return cls(**values)


def placed_weight(units: Sequence[Unit], pods: Sequence[PodPlan]) -> int:
    """The objective of a plan of units (one PodPlan per unit, before the pipeline splits joined
    units into their pods): each placed unit's weight (`Unit.weight`: each of its pods with its
    own). `PlanOutcome.weight` is the same sum once there is one PodPlan per pod."""
    return sum(u.weight for u, p in zip(units, pods, strict=True) if p.placed)


def book_limits(job: Job, nodes: Sequence[str | None]) -> bool:
    """Whether any of `nodes` limits node resources (then pods without claims compete there)."""
    return any(job.book.free.get(n) is not None for n in nodes)
