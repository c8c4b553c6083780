"""The flat, integer-indexed allocation problem that both allocators and the encoders read.

Why a plain-data layer: CEL, pydantic and YAML stop at precompute (`solver.problem`).
Below it, the reference allocator, the CP-SAT encoders and the decoder see only indices,
exact Fractions and frozensets — cheap to hash, easy to test, impossible to mutate.

Vocabulary:
- a *device* is one device visible from the node, in upstream candidate order
  (pools by (driver, pool) with binding-condition pools last, then slice name, then
  device order in the slice);
- an *alternative* is one search unit: a request without `firstAvailable`, or one of its
  subrequests (named `req/sub`);
- a *candidate* is a device that may serve an alternative as far as static checks go
  (selectors, capacity against already-allocated use, taints, gates); the dynamic checks
  (busy in this call, capacity sums, counters, constraints) are the allocators' job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from ..errors import DRASolverError
from ..gates import FeatureGates
from ..reasons import Reason

# A typed attribute value: ("int", 3), ("bool", True), ("string", "a"), ("version", "1.2.3").
Value = tuple[str, object]
# Attribute values as a set: scalars are singletons, KEP-5491 lists are their elements.
ValueSet = frozenset[Value]
KindName = Literal["match", "distinct"]
"""A claim constraint's kind (`problem.kinds.KINDS`)."""


@dataclass(frozen=True)
class CounterInfo:
    """One counter of one shared counter set; `available` already subtracts existing use."""

    driver: str
    pool: str
    counter_set: str
    name: str
    available: Fraction


@dataclass(frozen=True)
class CompatState:
    """KEP-5963: what the devices placed on one counter set so far allow (docs/semantics.md,
    "Device compatibility groups (KEP-5963)"). No member: anything. Only members without
    groups (`groups` None): only devices without groups. Otherwise `groups` is the
    intersection of the members' groups, and a device must declare one of them.

    Why a state, not pairs: upstream folds every member into one running intersection, so
    {a, b}, {b, c}, {a, c} do not fit together although every two of them would."""

    groups: frozenset[str] | None = None

    def admits(self, groups: frozenset[str]) -> bool:
        if self.groups is None:
            return not groups
        return bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> CompatState:
        return self if self.groups is None else CompatState(self.groups & groups)


CompatKey = tuple[str, str, str]
"""(driver, pool, counter set): where KEP-5963 compares groups (each driver's pool apart)."""


def compat_admits(state: CompatState | None, groups: frozenset[str]) -> bool:
    """Whether a device declaring `groups` may join a counter set in `state` (None: no member)."""
    return state is None or state.admits(groups)


def compat_add(state: CompatState | None, groups: frozenset[str]) -> CompatState:
    """The state after a device declaring `groups` joined (after `compat_admits`)."""
    if state is None:
        return CompatState(groups or None)
    return state.add(groups)


def compat_fits(members: list[frozenset[str]]) -> bool:
    """Whether devices with these groups may share one counter set, in any order."""
    state: CompatState | None = None
    for groups in members:
        if not compat_admits(state, groups):
            return False
        state = compat_add(state, groups)
    return True


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    driver: str
    pool: str
    name: str
    slice_name: str
    multi: bool
    """allowMultipleAllocations with DRAConsumableCapacity on: may be shared by many requests."""
    busy: bool
    """Has an existing dedicated (non-admin) allocation."""
    capacity: dict[str, Fraction] = field(default_factory=dict)
    """Every capacity of the device (value), by capacity name as published."""
    capacity_format: dict[str, str] = field(default_factory=dict)
    """Quantity format of each capacity as published (DecimalSI, BinarySI, DecimalExponent):
    consumedCapacity in results is written in it."""
    in_use: dict[str, Fraction] = field(default_factory=dict)
    """Sum of consumedCapacity of existing shares, by capacity name (multi devices)."""
    shared_in_use: bool = False
    """Has existing shares: its counters are already charged."""
    counter_use: dict[int, Fraction] = field(default_factory=dict)
    """Counter index (into Problem.counters) -> amount consumed when the device is used."""
    counters_blocked: bool = False
    """Its pool has an over-committed counter: upstream then rejects every counter consumer."""
    counters_short: bool = False
    """Its use of some counter alone exceeds what is left of it (`available`): wherever the
    search charges its counters, it is rejected (derived from `counter_use` and the counters;
    lets the reference search pass over it at once, `ReferenceSearch._devices`)."""
    node_scope: tuple[str, object] = ("all", None)
    """("node", name) | ("selector", NodeSelector dict) | ("all", None) | ("binds", None) for results."""
    binds_to_node: bool = False
    skip_node_operations: bool | tuple[str, ...] | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    compat: tuple[tuple[CompatKey, frozenset[str]], ...] = ()
    """KEP-5963, with DRADeviceCompatibilityGroups on: per counter set the device draws from,
    the groups it declares there (empty: none). Empty tuple with the gate off."""
    nodes: frozenset[str] | None = None
    """Multi-node Problems (`Problem.nodes`): the nodes that see the device; None = the
    Problem's single node."""

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"


@dataclass(frozen=True)
class Candidate:
    device: int
    consumed: dict[str, Fraction] | None = None
    """Multi devices: amount consumed per capacity name after requestPolicy rounding
    (every capacity of the device, zeros included). None for dedicated devices."""
    error: DRASolverError | None = None
    """A CEL runtime error on this device (selector or derived attribute). Upstream evaluates
    lazily: the error aborts the allocation only when the search reaches this device."""
    nodes: frozenset[str] | None = None
    """Multi-node Problems: the nodes on which the device is a candidate for the alternative
    (a subset of the device's nodes); None = the Problem's single node."""
    refused: Reason | None = None
    """All mode: why a static check refuses this member of the All-set (a gate, an untolerated
    taint); None when none does. The request fails when the search reaches the member, at the
    step upstream makes that check (docs/semantics.md, "allocationMode All")."""
    refused_after_counters: bool = False
    """Whether that check comes after the counters (a taint) rather than before (a gate)."""


@dataclass(frozen=True)
class Alternative:
    index: int
    claim: int
    request: int
    """Index of the request within its claim."""
    position: int
    """Position among the request's subrequests (0 without firstAvailable)."""
    name: str
    """Result name: `req` or `req/sub`."""
    class_name: str
    mode: Literal["ExactCount", "All"]
    count: int
    """Devices to take; for All the size of the All-set."""
    admin: bool
    tolerations: tuple[dict, ...] = ()
    class_config: tuple[dict, ...] = ()
    """The DeviceClass's spec.config entries (wire form): results copy them (FromClass)."""
    candidates: tuple[Candidate, ...] = ()
    """ExactCount: candidates in device order. All: the fixed All-set in device order."""
    all_blocked: Reason | None = None
    """All mode: why a member can never be placed (busy, taint, gate; a fact worded by
    `reasons.words`; merged over nodes, `Kind.MEMBER` of the first node's) — the request fails
    (the reference search meets the members in order and may stop earlier, on a constraint
    error; the CP-SAT model and explanations read this)."""
    fatal: Reason | None = None
    """All mode on a node whose pool is incomplete or invalid (`Kind.NOT_READY`): upstream's per-node error
    (kubernetes#141898), raised before any search (`reference.allocate_reference`); the
    alternative is also `all_blocked`, so a model over several nodes keeps the pod off this
    node only (docs/semantics.md, "allocationMode All")."""
    rejected: tuple[tuple[Reason, int], ...] = ()
    """Devices that match the selectors but fail a static check: (why, how many), for
    explanations (`Kind.LACKS_CAPACITY`, `Kind.DEVICE_TAINT`, ...; in `reasons.words.in_order`)."""
    all_sets: dict[str, tuple[int, ...]] | None = None
    """Multi-node Problems, All mode: node -> the All-set on that node (device order); nodes
    where the request is blocked or has no member are absent. None: single-node Problem."""


@dataclass(frozen=True)
class RequestInfo:
    name: str
    alternatives: tuple[int, ...]
    first_available: bool


@dataclass(frozen=True)
class ConstraintInfo:
    index: int
    claim: int
    kind: KindName
    attribute: str
    alternatives: frozenset[int]
    values: dict[tuple[int, int], ValueSet | None]
    """(alternative, device) -> the attribute's value set for that placement (derived values
    shadow static ones for their request); None when the device lacks the attribute.
    Present for every candidate of every covered alternative."""


@dataclass(frozen=True)
class ClaimInfo:
    index: int
    namespace: str
    name: str
    requests: tuple[RequestInfo, ...]
    constraints: tuple[int, ...]
    priority: int = 0
    group: int | None = None
    """Pod index: claims of one group are placed together (all or none) on one node."""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class GangInfo:
    """A gang (PodGroup with `gang.minCount`, KEP-4671) as the model sees it: its pods are
    placed only if enough of them are (`encoders.gangs`)."""

    name: str
    """The PodGroup, `namespace/name` (messages)."""
    need: int
    """How many of the gang's pods in `groups` must be placed for it to be placed: minCount
    less the pods that are placed whenever the gang is (bound already, or no claims and no
    node limits); <= 0: any number."""
    groups: tuple[tuple[int, int], ...]
    """(group, pods): the groups (pod forms) of the gang's pods, and how many of the gang's
    pods each places (more than one when pods sharing a claim were joined)."""
    domains: tuple[frozenset[str], ...] = ()
    """KEP-5732 topology: the node sets (one per label value) of which the gang's placed pods
    use exactly one; empty: no topology constraint."""
    counted: bool = True
    """Whether placing it counts in the "gangs" objective level (`encoders.objective`); False
    for a basic-policy PodGroup with a topology constraint, whose flag only picks a domain."""


@dataclass(frozen=True)
class Problem:
    node: str | None
    gates: FeatureGates
    devices: tuple[DeviceInfo, ...]
    counters: tuple[CounterInfo, ...]
    alternatives: tuple[Alternative, ...]
    claims: tuple[ClaimInfo, ...]
    constraints: tuple[ConstraintInfo, ...]
    invalid_pools: tuple[Reason, ...] = ()
    """Pools skipped as invalid (`Kind.POOL_INVALID`); with no solution the call fails with
    upstream's per-node error."""
    left_out_pools: tuple[Reason, ...] = ()
    """Those of `invalid_pools` that `planning.triage` left out for a problem (`Pool.left_out`):
    their devices are unknown, so for placing they are as absent; only reasons name them."""
    compat_baseline: dict[CompatKey, CompatState] = field(default_factory=dict)
    """KEP-5963: per counter set, the state its already-allocated devices leave (missing: no
    allocated device draws from it)."""
    incomplete_pools: tuple[Reason, ...] = ()
    """Pools skipped as incomplete (`Kind.POOL_INCOMPLETE`): upstream says only
    "unschedulable"; reasons name them."""
    nodes: tuple[str, ...] = ()
    """Multi-node Problems (`solver.problem.merge`): the candidate nodes; each group of claims
    goes to one of them (`encoders.nodes`). Empty: the single node `node`."""
    group_nodes: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """Multi-node Problems: group -> the only nodes it may use (missing: all of `nodes`)."""
    group_demand: dict[int, dict[str, int]] = field(default_factory=dict)
    """Multi-node Problems: group -> the node resources the pod takes (`problem.resources`:
    cpu in millicores, memory in bytes, `pods`: 1, ...)."""
    node_limits: dict[str, dict[str, int]] = field(default_factory=dict)
    """Multi-node Problems: node -> resource -> amount free (a resource missing: not limited)."""
    bare_groups: dict[int, int] = field(default_factory=dict)
    """Multi-node Problems: groups (pods) without claims -> priority; they take only node
    resources."""
    exclusive_groups: tuple[tuple[int, ...], ...] = ()
    """Sets of groups of which at most one is placed: one pod in its forms for different
    nodes (a DRA-served extended resource is a claim on some nodes, a node resource on others)."""
    gangs: tuple[GangInfo, ...] = ()
    """All-or-nothing sets of groups (`encoders.gangs`)."""
    group_weight: dict[int, int] = field(default_factory=dict)
    """Group -> its weight in the "placed" objective, when it is not `claim_weight` of its
    priority: a group that places several pods (pods sharing a claim, `planning.job.Unit`)
    counts each pod with its own weight."""
    ordered_pods: tuple[tuple[tuple[int, ...], ...], ...] = ()
    """Classes of interchangeable pods, each a tuple of pods in queue order, each pod the
    tuple of its groups (forms): an earlier pod of a class is placed whenever a later one is
    (`encoders.resources`) — identical pods are interchangeable, so no solution is lost, and
    among them the plan keeps the scheduler's queue order."""


@dataclass(frozen=True)
class Placement:
    """One device given to one alternative of one claim."""

    claim: int
    alternative: int
    device: int


# Claim index -> its placements in result order. A claim missing from the map is not placed.
Assignment = dict[int, list[Placement]]

MAX_RESULTS_PER_CLAIM = 32


def claim_weight(priority: int) -> int:
    """Weight of one placed claim (or pod) in the objective: a negative priority counts as 0,
    so placing a claim never lowers the score."""
    return max(priority, 0) + 1


def fits(value: dict[str, Fraction], used: dict[str, Fraction], extra: dict[str, Fraction]) -> bool:
    """Every capacity: already used + this placement <= value."""
    return all(used.get(k, Fraction(0)) + extra.get(k, Fraction(0)) <= v for k, v in value.items())
