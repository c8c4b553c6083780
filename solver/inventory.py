"""Pools, the devices a node can see, and what existing allocations already use.

Why: upstream's allocator never reads other claims or raw slices during the search; the
scheduler hands it a summary (docs/semantics.md, "Devices already in use") and a set of pools
gathered for the node (docs/semantics.md, "Pools and generations"). This module builds
exactly those two things from a Cluster, so precompute and both allocators share one reading
of "visible", "complete" and "in use".
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .api.models import (
    Device,
    DeviceTaint,
    DeviceTaintRule,
    Node,
    NodeSelector,
    ResourceClaim,
    ResourceSlice,
)
from .errors import InputError
from .gates import FeatureGates
from .reasons import Kind, Reason

DeviceID = tuple[str, str, str]  # (driver, pool, device)
PoolID = tuple[str, str]  # (driver, pool)


# --- node selection ---------------------------------------------------------------------------


def requirement_matches(
    req_key: str, op: str, values: Sequence[str], lookup: Mapping[str, str], where: str
) -> bool:
    """One selector requirement against a map of labels: In, NotIn, Exists, DoesNotExist (the
    label selector's operators, `api.models.LABEL_OPERATORS`) and the node selector's Gt and Lt. An
    unknown operator is an InputError naming `where`, never a silent match. The one matcher
    of requirements: node selectors here, PodDisruptionBudget selectors in `preempt.victims`."""
    present = req_key in lookup
    actual = lookup.get(req_key)
    match op:
        case "In":
            return present and actual in values
        case "NotIn":
            return not present or actual not in values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case "Gt" | "Lt":
            if len(values) != 1 or not re.fullmatch(r"-?\d+", values[0]):
                raise InputError(f"operator {op} needs exactly one integer value", obj=where)
            if not present or actual is None or not re.fullmatch(r"-?\d+", actual):
                return False
            return int(actual) > int(values[0]) if op == "Gt" else int(actual) < int(values[0])
        case _:
            raise InputError(f"unsupported node selector operator {op!r}", obj=where)


def node_selector_matches(selector: NodeSelector, node: NodeView, where: str) -> bool:
    """Standard NodeSelector semantics: terms ORed, requirements ANDed; matchFields only metadata.name."""
    for term in selector.node_selector_terms:
        if not term.match_expressions and not term.match_fields:
            continue  # an empty term matches nothing
        ok = all(
            requirement_matches(r.key, r.operator, r.values, node.labels, where)
            for r in term.match_expressions
        )
        for r in term.match_fields:
            if r.key != "metadata.name":
                raise InputError(f"unsupported matchFields key {r.key!r}", obj=where)
            ok = ok and requirement_matches(r.key, r.operator, r.values, {"metadata.name": node.name}, where)
        if ok:
            return True
    return False


@dataclass(frozen=True)
class NodeView:
    """The node being allocated for: its name and labels (labels come from a Node object if given)."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    declared_features: tuple[str, ...] = ()
    known: bool = False
    """A Node object was given (so labels and declared features are real, not assumed)."""

    @classmethod
    def of(cls, name: str | None, nodes: dict[str, Node]) -> NodeView | None:
        if name is None:
            return None
        node = nodes.get(name)
        if node is None:
            return cls(name=name, labels={"kubernetes.io/hostname": name})
        labels = dict(node.metadata.labels)
        return cls(
            name=name, labels=labels, declared_features=tuple(node.status.declared_features), known=True
        )


def device_matches_node(device: Device, node: NodeView | None, where: str) -> bool:
    """Per-device node selection (partitionable devices)."""
    if device.all_nodes:
        return True
    if node is None:
        return False
    if device.node_name is not None:
        return device.node_name == node.name
    if device.node_selector is not None:
        return node_selector_matches(device.node_selector, node, where)
    return False


def slice_relevant(s: ResourceSlice, node: NodeView | None, gates: FeatureGates) -> bool:
    spec = s.spec
    where = s.ref
    if spec.node_name is not None:
        return node is not None and spec.node_name == node.name
    if spec.all_nodes:
        return True
    if spec.node_selector is not None:
        if node is None:
            return False
        try:
            return node_selector_matches(spec.node_selector, node, where)
        except InputError as exc:
            raise InputError(f"failed to perform node selection for slice: {exc.reason}", obj=where) from None
    if spec.per_device_node_selection:
        return any(device_matches_node(d, node, where) for d in spec.devices)
    if spec.shared_counters and not spec.devices:
        return True  # counter-set slices serve the whole pool
    return False


def selector_reads(slices: Iterable[ResourceSlice]) -> tuple[frozenset[str], bool]:
    """What `slices` read of a node beyond which slices it owns: the label keys their node
    selectors (the slice's or, with per-device node selection, each device's) test, and
    whether they read its name — a `nodeName`, a `matchFields` on metadata.name, or a
    skipNodeOperations slice (its rejection names the node and reads its declared features).
    Nodes that agree on those labels and read no name see the network-attached slices alike
    (`firstfit.engine.World`, `aggregated.pools`)."""
    keys: set[str] = set()
    by_name = False

    def read(selector: NodeSelector | None) -> None:
        nonlocal by_name
        for term in selector.node_selector_terms if selector is not None else ():
            keys.update(r.key for r in term.match_expressions)
            by_name = by_name or bool(term.match_fields)

    for s in slices:
        spec = s.spec
        by_name = by_name or bool(spec.skip_node_operations) or spec.node_name is not None
        read(spec.node_selector)
        if spec.per_device_node_selection:
            for d in spec.devices:
                by_name = by_name or d.node_name is not None
                read(d.node_selector)
    return frozenset(keys), by_name


# --- pools ------------------------------------------------------------------------------------


@dataclass
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice]
    """Node-relevant slices of the newest generation, sorted by slice name."""
    other_slices: list[ResourceSlice] = field(default_factory=list)
    """Slices of the same generation that do not target the node (counter accounting only)."""
    invalid: Reason | None = None
    """Why upstream skips the pool as invalid (`_pool_invalid`, `_left_out`), a fact worded
    by `reasons.words`; None: valid."""
    binding: bool = False
    left_out: bool = False
    """Invalid because `planning.triage` left a slice of it out for a problem (its slices are
    device-free stand-ins, `ResourceSlice.left_out`): its devices are unknown, so whether they
    would serve a claim cannot be told — the pool is named as a possible cause."""

    @property
    def id(self) -> PoolID:
        return (self.driver, self.name)

    def all_slices(self) -> list[ResourceSlice]:
        return self.slices + self.other_slices


@dataclass
class Pools:
    pools: list[Pool]
    """Complete pools (valid and invalid), in upstream search order."""
    incomplete: list[PoolID]
    incomplete_why: dict[PoolID, Reason] = field(default_factory=dict)
    """Incomplete pools: what is published (`Kind.POOL_INCOMPLETE`)."""

    def valid(self) -> list[Pool]:
        return [p for p in self.pools if p.invalid is None]

    def invalid(self) -> list[Pool]:
        return [p for p in self.pools if p.invalid is not None]


def _usable_slice(s: ResourceSlice, gates: FeatureGates) -> bool:
    if not gates.DRAPartitionableDevices and s.spec.per_device_node_selection:
        return False
    if not gates.DRADeviceCompatibilityGroups and s.uses_compatibility_groups():
        # Upstream (KEP-5963) ignores the slice, so its pool is incomplete: docs/semantics.md,
        # "Device compatibility groups (KEP-5963)".
        return False
    # With the gate off, counter-set slices still count towards pool completeness (upstream
    # test partitionable-devices-disabled-other-device-do-not-consume-counters); their
    # counters are simply not used.
    spec = s.spec
    return bool(
        spec.node_name is not None
        or spec.all_nodes
        or spec.node_selector is not None
        or spec.per_device_node_selection
        or spec.shared_counters
    )


def _ignored_for_groups(
    slices: Iterable[ResourceSlice], pid: PoolID, gen: int, gates: FeatureGates
) -> tuple[str, ...]:
    """A pool's slices ignored because they declare compatibility groups (the gate off)."""
    if gates.DRADeviceCompatibilityGroups:
        return ()
    return tuple(
        sorted(
            s.metadata.name
            for s in slices
            if (s.spec.driver, s.spec.pool.name) == pid
            and s.spec.pool.generation == gen
            and s.uses_compatibility_groups()
        )
    )


def gather_pools(slices: Iterable[ResourceSlice], node: NodeView | None, gates: FeatureGates) -> Pools:
    """Upstream GatherPools: newest generation wins; complete pools only; invalid pools flagged."""
    slices = list(slices)
    all_slices = [s for s in slices if _usable_slice(s, gates)]
    relevant: dict[PoolID, list[ResourceSlice]] = defaultdict(list)
    order: list[PoolID] = []
    for s in all_slices:
        if not slice_relevant(s, node, gates):
            continue
        pid = (s.spec.driver, s.spec.pool.name)
        kept = relevant[pid]
        if not kept:
            order.append(pid)
            kept.append(s)
        elif s.spec.pool.generation > kept[0].spec.pool.generation:
            kept[:] = [s]
        elif s.spec.pool.generation == kept[0].spec.pool.generation:
            kept.append(s)

    pools: list[Pool] = []
    incomplete: list[PoolID] = []
    incomplete_why: dict[PoolID, Reason] = {}
    for pid in order:
        kept = relevant[pid]
        gen = kept[0].spec.pool.generation
        count = kept[0].spec.pool.resource_slice_count
        other: list[ResourceSlice] = []
        if len(kept) != count:
            same_pool = [s for s in all_slices if (s.spec.driver, s.spec.pool.name) == pid]
            if any(s.spec.pool.generation > gen for s in same_pool):
                continue  # obsolete: dropped silently
            at_gen = [s for s in same_pool if s.spec.pool.generation == gen]
            if len(at_gen) != count:
                incomplete.append(pid)
                incomplete_why[pid] = Reason.of(
                    Kind.POOL_INCOMPLETE,
                    driver=pid[0],
                    pool=pid[1],
                    generation=gen,
                    published=len(at_gen),
                    count=count,
                    ignored=_ignored_for_groups(slices, pid, gen, gates),
                )
                continue
            other = [s for s in at_gen if not any(s is k for k in kept)]
        pool = Pool(
            driver=pid[0],
            name=pid[1],
            generation=gen,
            slices=sorted(kept, key=lambda s: s.metadata.name),
            other_slices=other,
        )
        pool.invalid = _left_out(pool) or _pool_invalid(pool, node, gates)
        pool.left_out = any(s.left_out is not None for s in pool.all_slices())
        pool.binding = any(d.binding_conditions for _, d in visible_devices(pool, node))
        pools.append(pool)
    pools.sort(key=lambda p: (p.binding, p.driver.encode(), p.name.encode()))
    return Pools(pools=pools, incomplete=incomplete, incomplete_why=incomplete_why)


def visible_devices(pool: Pool, node: NodeView | None) -> list[tuple[ResourceSlice, Device]]:
    """The pool's candidate devices for the node, in search order (slice name, device order)."""
    out: list[tuple[ResourceSlice, Device]] = []
    for s in pool.slices:
        for d in s.spec.devices:
            if s.spec.per_device_node_selection and not device_matches_node(d, node, s.ref):
                continue
            out.append((s, d))
    return out


def _pool_invalid(pool: Pool, node: NodeView | None, gates: FeatureGates) -> Reason | None:
    """Why upstream's GatherPools marks the pool invalid (docs/semantics.md, "Pools and
    generations", step 5), as a fact that names what to fix — the device or counter set and
    the two slices listing it — or None. Every reason that mentions the pool holds this
    (`problem.build`)."""
    seen: dict[str, str] = {}
    for s in pool.slices:
        for d in s.spec.devices:
            if d.name in seen:
                return _twice("device", d.name, seen[d.name], s.metadata.name)
            seen[d.name] = s.metadata.name
    if not gates.DRAPartitionableDevices:
        return None
    sets: dict[str, set[str]] = {}
    where: dict[str, str] = {}
    for s in pool.all_slices():
        for cs in s.spec.shared_counters:
            if cs.name in sets:
                return _twice("counter set", cs.name, where[cs.name], s.metadata.name)
            sets[cs.name] = set(cs.counters)
            where[cs.name] = s.metadata.name
    for s in pool.all_slices():
        for d in s.spec.devices:
            for use in d.consumes_counters:
                if use.counter_set not in sets:
                    return Reason.of(Kind.UNKNOWN_COUNTER_SET, device=d.name, set=use.counter_set)
                missing = set(use.counters) - sets[use.counter_set]
                if missing:
                    first = sorted(missing)[0]
                    return Reason.of(Kind.UNKNOWN_COUNTER, device=d.name, counter=first, set=use.counter_set)
    return None


def _left_out(pool: Pool) -> Reason | None:
    """Why the pool's slices are stand-ins (`planning.leftpools`): the problems of the slices
    left out, or None for a pool of the input's own slices."""
    if not any(s.left_out is not None for s in pool.all_slices()):
        return None
    why = tuple(dict.fromkeys(left_out_problems(pool.all_slices())))
    return Reason.of(Kind.SLICES_LEFT_OUT, problems=why)


def left_out_problems(slices: Iterable[ResourceSlice]) -> list[Reason]:
    """The problems of the slices left out among `slices` (`planning.leftpools`), but those
    left out only with their pool (`Kind.SLICE_WITH_POOL`)."""
    return [r for s in slices if (r := s.left_out) is not None and not r.is_(Kind.SLICE_WITH_POOL)]


def _twice(what: str, name: str, first: str, second: str) -> Reason:
    """`what` `name` listed by the slices `first` and `second` (one slice twice: equal)."""
    return Reason.of(Kind.LISTED_TWICE, what=what, name=name, first=first, second=second)


# --- allocated state --------------------------------------------------------------------------


NAME_ALIAS = "\x00node"
"""What stands for a node's name in its facts up to names (`node_up_to_name`;
`slices_up_to_names` leaves the name out)."""
HOSTNAME = "kubernetes.io/hostname"


def slices_up_to_names(
    slices: Iterable[ResourceSlice], node: str, aliases: dict[str, str]
) -> list[str] | None:
    """The slices' specs as JSON text with the node's name and their pools' names taken out
    (each pool its alias in `aliases`, added in order of first appearance, put before the
    spec), or None when a slice is not the node's own. Two nodes whose slices give equal texts
    see the same devices up to names: how nodes equal up to names are recognised
    (`planners.aggregated.classes.twin_key`, `planners.firstfit.twins`). Each spec is dumped
    whole by pydantic, not sorted: equal specs whose maps list their keys in another order
    give other texts, which can only miss a twin (searched again, the same answer), never join
    two nodes that differ. Why text: a dict per slice, sorted and dumped again by the caller,
    was most of the 10,000 twin keys of a plan at scale."""
    out = []
    for s in slices:
        if s.spec.node_name != node:
            return None
        alias = aliases.setdefault(s.spec.pool.name, f"\x00pool{len(aliases)}")
        out.append(alias + s.spec.model_dump_json(by_alias=True, exclude_none=True, exclude=_NAMES))
    return out


_NAMES: Any = {"node_name": True, "pool": {"name"}}
"""What `slices_up_to_names` leaves out of a slice's spec (pydantic's `exclude`)."""


def node_up_to_name(view: NodeView) -> tuple[dict[str, str], list[str], bool]:
    """What precompute reads of a node besides its slices, its name taken out: its labels (the
    hostname label as `NAME_ALIAS` when it is the node's name), declared features, and
    whether a Node object was given."""
    labels = dict(view.labels)
    if labels.get(HOSTNAME) == view.name:
        labels[HOSTNAME] = NAME_ALIAS
    return labels, list(view.declared_features), view.known


@dataclass
class InUse:
    """Upstream's allocated state, built from claims that already carry status.allocation."""

    dedicated: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def allocated(self, dev: DeviceID) -> bool:
        """Counts for counters: dedicated, shared, or with consumed capacity."""
        return dev in self.dedicated or dev in self.shared or dev in self.capacity


def in_use_from_claims(claims: Iterable[ResourceClaim], gates: FeatureGates) -> InUse:
    state = InUse()
    for claim in claims:
        alloc = claim.status.allocation if claim.status else None
        if alloc is None:
            continue
        for r in alloc.devices.results:
            if r.admin_access:
                continue  # admin access never makes a device busy
            dev = (r.driver, r.pool, r.device)
            if r.share_id is None or not gates.DRAConsumableCapacity:
                state.dedicated.add(dev)
                continue
            state.shared.add(dev)
            sums = state.capacity.setdefault(dev, {})
            for name, q in (r.consumed_capacity or {}).items():
                sums[name] = sums.get(name, Fraction(0)) + q.as_fraction()
    return state


def rule_taints(rules: Iterable[DeviceTaintRule], driver: str, pool: str, device: str) -> list[DeviceTaint]:
    """Taints that DeviceTaintRules put on one device: a rule applies when each of its
    selector's driver, pool and device is unset or equal (KEP-5055). The v1alpha3-only
    selector fields (deviceClassName, CEL selectors) are refused rather than ignored: ignoring
    them would taint devices the rule does not select."""
    out = []
    for rule in rules:
        sel = rule.spec.device_selector
        if sel is not None and (sel.device_class_name or sel.selectors):
            raise InputError(
                "deviceClassName and CEL selectors of a v1alpha3 DeviceTaintRule are not supported; "
                "select devices by driver, pool and device",
                obj=rule.ref,
                field="spec.deviceSelector",
            )
        if sel is None or (
            (not sel.driver or sel.driver == driver)
            and (not sel.pool or sel.pool == pool)
            and (not sel.device or sel.device == device)
        ):
            out.append(rule.spec.taint)
    return out
