"""Independent verifier of DRA allocation results.

Why this module exists: dra-solver has two allocators (the upstream-faithful reference
and the CP-SAT optimiser) and both are built on the same precompute. A bug shared by
them would pass every differential test. This checker is a *second reading of the
rules*, written from the KEPs and `UPSTREAM-SEMANTICS.md` (intended semantics, not the
§8 quirks) and deliberately importing nothing from `solver.inventory`, `solver.problem`,
`solver.reference` or `solver.cpsat`. It reads only the raw API objects (slices,
classes, claims), the feature gates, CEL and quantities. Nothing an allocator returns
reaches a user without passing `check_or_raise`.

It reports *every* violation it finds, each naming the claim, the request, the device
and the rule, so a failing differential test says what went wrong rather than only
that something did. It never raises for a CEL problem: a CEL compile or runtime error
met while checking is itself a `selector` violation.

Decisions where the rules leave room (also listed in the docs):

- Pool generations follow upstream §4.2: the newest generation among the slices
  relevant to the node wins; only when those look incomplete is the whole cluster
  re-scanned (a newer generation elsewhere makes the pool obsolete).
- Admin-access results never make a device busy and never consume capacity, but a new
  admin placement does charge shared counters (upstream charges every placement of the
  call; existing admin results are not charged).
- Counters: as upstream, once a pool has any over-committed counter, no newly charged
  counter-consuming device of that pool may be placed.
- Attribute names are compared as fully qualified names: a bare name belongs to the
  device's driver domain (for both the device's attributes and the constraint).
- Derived attributes (KEP-6080) are only consulted with `DRADerivedAttributes` on, by
  exact name; list values use the KEP-5491 set semantics (always: with scalars only this
  is plain equality).
- `DRAPartitionableDevices` off: perDeviceNodeSelection slices are invisible; a
  counter-set slice still counts for pool completeness (upstream test
  "partitionable-devices-disabled-other-device-do-not-consume-counters"); a device that
  consumes counters, or one only visible through per-device selection, is a `gate`
  violation rather than an `unknown-device`.
- Not checked (no rule kind for them): that results copy the request's tolerations and the
  device's bindingConditions, and that the node declares `DraOptionalNodePreparation`
  (a pod/node concern of the planner).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from solver.api.cluster import Cluster
from solver.api.models import (
    CapacityRequestPolicy,
    Device,
    DeviceAttribute,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    NodeSelector,
    NodeSelectorRequirement,
    ResourceClaim,
    ResourceSlice,
)
from solver.api.quantity import Quantity
from solver.cel import DeviceView, Program, Semver, compile_expression
from solver.errors import AllocationError
from solver.gates import FeatureGates

__all__ = ["KINDS", "CheckFailed", "Violation", "check", "check_or_raise"]

MAX_RESULTS = 32
"""AllocationResultsMaxSize: at most 32 device results per claim."""

KINDS: tuple[str, ...] = (
    "unknown-device",
    "request",
    "count",
    "duplicate",
    "selector",
    "busy",
    "capacity",
    "rounding",
    "share",
    "counters",
    "match",
    "distinct",
    "taint",
    "gate",
    "skip-node-operations",
    "node-selector",
    "admin",
    "limit",
)
"""Every violation kind `check` can report."""


@dataclass(frozen=True)
class Violation:
    """One broken rule in one claim's allocation."""

    claim: str
    """`namespace/name` of the allocated claim."""
    request: str | None
    """`req` or `req/sub` the violation is about, None for claim-wide rules."""
    kind: str
    """One of `KINDS`."""
    message: str
    """Human-readable: names the claim, request, device and the rule."""

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


class CheckFailed(AllocationError):
    """An allocation did not pass the checker; `violations` lists every broken rule."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = list(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(f"allocation failed verification ({len(self.violations)} violation(s)):\n{lines}")


def check(
    cluster: Cluster,
    allocated: Sequence[ResourceClaim],
    *,
    node: str | None,
    gates: FeatureGates | None = None,
) -> list[Violation]:
    """Every rule the allocations in `allocated` break, for claims placed on `node`.

    `cluster` is the input snapshot: its claims that already carry `status.allocation`
    (and are not in `allocated`, matched by namespace/name) are the devices in use.
    `node` None means no node: only allNodes and nodeSelector slices are visible.
    Nothing passed in is modified.
    """
    return _Checker(cluster, list(allocated), node, gates or FeatureGates()).run()


def check_or_raise(
    cluster: Cluster,
    allocated: Sequence[ResourceClaim],
    *,
    node: str | None,
    gates: FeatureGates | None = None,
) -> None:
    """Raise `CheckFailed` (an `AllocationError`) listing all violations, if there are any.

    The library calls this on every allocator answer so that nothing unverified is returned.
    """
    violations = check(cluster, allocated, node=node, gates=gates)
    if violations:
        raise CheckFailed(violations)


# ---------------------------------------------------------------------------------------
# small value helpers

DeviceKey = tuple[str, str, str]
"""(driver, pool, device): the identity of a device."""
PoolKey = tuple[str, str]
"""(driver, pool name)."""
Value = tuple[str, object]
"""A typed attribute value, e.g. ("int", 3): different types never compare equal."""

Alt = ExactDeviceRequest | DeviceSubRequest
"""One search unit: a request without firstAvailable, or one of its subrequests."""


def _claim_id(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace or 'default'}/{claim.metadata.name}"


def _dev_id(key: DeviceKey) -> str:
    return "/".join(key)


def _fqn(name: str, driver: str) -> str:
    """A QualifiedName in full form: a bare name belongs to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def _frac(q: Quantity) -> Fraction:
    return q.as_fraction()


def _fmt(x: Fraction) -> str:
    """A quantity value for messages (canonical Kubernetes form)."""
    if x.denominator == 1:
        return str(Quantity(x, "BinarySI")) if x >= 1024 else str(int(x))
    return str(Quantity(x))


def _attr_values(attr: DeviceAttribute) -> frozenset[Value] | None:
    """The attribute as a set (scalars are singletons, KEP-5491 lists their elements)."""
    if attr.int_ is not None:
        return frozenset({("int", attr.int_)})
    if attr.bool_ is not None:
        return frozenset({("bool", attr.bool_)})
    if attr.string is not None:
        return frozenset({("string", attr.string)})
    if attr.version is not None:
        return frozenset({("version", attr.version)})
    for kind, values in (("int", attr.ints), ("bool", attr.bools), ("string", attr.strings)):
        if values is not None:
            return frozenset((kind, v) for v in values)
    if attr.versions is not None:
        return frozenset(("version", v) for v in attr.versions)
    return None


def _cel_values(value: Any) -> frozenset[Value] | None:
    """A derived attribute's CEL result as a set; None when the type is not allowed."""

    def one(v: Any) -> Value | None:
        if type(v) is bool:
            return ("bool", v)
        if type(v) is int:
            return ("int", v)
        if type(v) is str:
            return ("string", v)
        if isinstance(v, Semver):
            return ("version", str(v))
        return None

    if isinstance(value, (tuple, list)):
        items = [one(v) for v in value]
        if any(i is None for i in items):
            return None
        return frozenset(i for i in items if i is not None)
    single = one(value)
    return None if single is None else frozenset({single})


def _show_values(values: frozenset[Value]) -> str:
    shown = sorted(repr(v) for _, v in values)
    return shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"


# ---------------------------------------------------------------------------------------
# node selection


def _requirement_matches(req: NodeSelectorRequirement, values: dict[str, str]) -> bool:
    """Standard core/v1 NodeSelectorRequirement semantics."""
    present = req.key in values
    value = values.get(req.key)
    match req.operator:
        case "In":
            return present and value in req.values
        case "NotIn":
            return not present or value not in req.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case "Gt" | "Lt":
            if not present or len(req.values) != 1:
                return False
            try:
                have, bound = int(str(value)), int(req.values[0])
            except ValueError:
                return False
            return have > bound if req.operator == "Gt" else have < bound
    return False


def _selector_matches(selector: NodeSelector, node: str | None, labels: dict[str, str]) -> bool:
    """Terms are ORed, requirements ANDed; an empty term matches nothing.

    Without a node (allocation for "no node") a selector-scoped slice counts as visible.
    """
    if node is None:
        return True
    fields = {"metadata.name": node}
    for term in selector.node_selector_terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(_requirement_matches(r, labels) for r in term.match_expressions) and all(
            _requirement_matches(r, fields) for r in term.match_fields
        ):
            return True
    return False


Scope = tuple[Literal["node", "selector", "all"], Any]


def _scope_matches(scope: Scope | None, node: str | None, labels: dict[str, str]) -> bool:
    if scope is None:
        return False
    kind, arg = scope
    if kind == "node":
        return node is not None and arg == node
    if kind == "selector":
        return _selector_matches(arg, node, labels)
    return True


def _device_scope(device: Device) -> Scope | None:
    if device.node_name:
        return ("node", device.node_name)
    if device.node_selector is not None:
        return ("selector", device.node_selector)
    if device.all_nodes:
        return ("all", None)
    return None


def _slice_scope(rs: ResourceSlice) -> Scope | Literal["per-device"] | None:
    spec = rs.spec
    if spec.node_name:
        return ("node", spec.node_name)
    if spec.node_selector is not None:
        return ("selector", spec.node_selector)
    if spec.all_nodes:
        return ("all", None)
    if spec.per_device_node_selection:
        return "per-device"
    return None


Requirement = tuple[str, str, tuple[str, ...]]
Term = tuple[frozenset[Requirement], frozenset[Requirement]]


def _req_key(r: NodeSelectorRequirement) -> Requirement:
    return (r.key, r.operator, tuple(sorted(r.values)))


def _normal_selector(sel: NodeSelector | None) -> frozenset[Term]:
    """A NodeSelector as a set of terms (order and duplicates do not matter)."""
    if sel is None:
        return frozenset()
    return frozenset(
        (frozenset(map(_req_key, t.match_expressions)), frozenset(map(_req_key, t.match_fields)))
        for t in sel.node_selector_terms
    )


# ---------------------------------------------------------------------------------------
# the visible inventory


@dataclass
class _Dev:
    """A device visible from the node, with the slice it came from."""

    key: DeviceKey
    slice: ResourceSlice
    device: Device
    scope: Scope


@dataclass
class _Inventory:
    """What the node sees: devices of complete, valid, current pools, plus pool problems."""

    devices: dict[DeviceKey, _Dev] = field(default_factory=dict)
    problems: dict[PoolKey, str] = field(default_factory=dict)
    """Relevant pools that cannot be used: incomplete / obsolete / invalid, with why."""
    obsolete: set[PoolKey] = field(default_factory=set)
    """Pools dropped because a newer generation exists: silently gone, not "being updated"."""
    pool_devices: dict[PoolKey, dict[str, Device]] = field(default_factory=dict)
    """Every device of a usable pool (all nodes): counters are pool-wide."""
    pool_counters: dict[PoolKey, dict[str, dict[str, Fraction]]] = field(default_factory=dict)
    """Counter set -> counter -> value, per usable pool."""


def _gather(cluster: Cluster, node: str | None, partitionable: bool) -> _Inventory:
    """Pools and devices visible from `node` (UPSTREAM-SEMANTICS §4.2)."""
    labels = {}
    if node is not None and node in cluster.nodes:
        labels = dict(cluster.nodes[node].metadata.labels)

    usable: list[ResourceSlice] = []
    for rs in cluster.slices:
        # Gate off: per-device node selection is unknown; a counter-set slice still counts
        # for pool completeness, its counters are just not used (upstream test
        # "partitionable-devices-disabled-other-device-do-not-consume-counters").
        if not partitionable and rs.spec.per_device_node_selection:
            continue
        if _slice_scope(rs) is None:
            continue
        usable.append(rs)

    def relevant(rs: ResourceSlice) -> bool:
        scope = _slice_scope(rs)
        if scope == "per-device":
            return any(_scope_matches(_device_scope(d), node, labels) for d in rs.spec.devices)
        return _scope_matches(scope, node, labels)

    all_by_pool: dict[PoolKey, list[ResourceSlice]] = defaultdict(list)
    rel_by_pool: dict[PoolKey, list[ResourceSlice]] = defaultdict(list)
    for rs in usable:
        pk = (rs.spec.driver, rs.spec.pool.name)
        all_by_pool[pk].append(rs)
        if relevant(rs):
            kept = rel_by_pool[pk]
            if kept and rs.spec.pool.generation > kept[0].spec.pool.generation:
                kept.clear()
            if not kept or rs.spec.pool.generation == kept[0].spec.pool.generation:
                kept.append(rs)

    inv = _Inventory()
    for pk, kept in rel_by_pool.items():
        gen = kept[0].spec.pool.generation
        want = kept[0].spec.pool.resource_slice_count
        pool_slices = kept
        if len(kept) != want:
            others = all_by_pool[pk]
            if any(s.spec.pool.generation > gen for s in others):
                inv.problems[pk] = f"pool {pk[0]}/{pk[1]} is obsolete (a newer generation than {gen} exists)"
                inv.obsolete.add(pk)
                continue
            same = [s for s in others if s.spec.pool.generation == gen]
            if len(same) != want:
                inv.problems[pk] = (
                    f"pool {pk[0]}/{pk[1]} is incomplete (generation {gen}: {len(same)} of {want} slices)"
                )
                continue
            pool_slices = same
        relevant_names = {id(s) for s in kept}
        problem = _pool_problem(pk, pool_slices, relevant_names, partitionable)
        if problem:
            inv.problems[pk] = problem
            continue
        counters: dict[str, dict[str, Fraction]] = {}
        if partitionable:
            for rs in pool_slices:
                for cs in rs.spec.shared_counters:
                    counters[cs.name] = {n: _frac(c.value) for n, c in cs.counters.items()}
        inv.pool_counters[pk] = counters
        inv.pool_devices[pk] = {d.name: d for rs in pool_slices for d in rs.spec.devices}
        for rs in kept:
            scope = _slice_scope(rs)
            for d in rs.spec.devices:
                dscope = _device_scope(d) if scope == "per-device" else scope
                if scope == "per-device" and not _scope_matches(dscope, node, labels):
                    continue
                assert dscope is not None and dscope != "per-device"
                key = (pk[0], pk[1], d.name)
                inv.devices[key] = _Dev(key, rs, d, dscope)
    return inv


def _pool_problem(
    pk: PoolKey, slices: list[ResourceSlice], relevant: set[int], partitionable: bool
) -> str | None:
    """Why a complete pool is invalid (duplicate names, unknown counters), or None."""
    name = f"pool {pk[0]}/{pk[1]} is invalid"
    seen: set[str] = set()
    for rs in slices:
        if id(rs) not in relevant:
            continue
        for d in rs.spec.devices:
            if d.name in seen:
                return f"{name}: device name {d.name} appears twice"
            seen.add(d.name)
    if not partitionable:
        return None  # counter consumers are rejected one by one (a `gate` violation)
    sets: dict[str, set[str]] = {}
    for rs in slices:
        for cs in rs.spec.shared_counters:
            if cs.name in sets:
                return f"{name}: counter set {cs.name} appears twice"
            sets[cs.name] = set(cs.counters)
    for rs in slices:
        for d in rs.spec.devices:
            for use in d.consumes_counters:
                if use.counter_set not in sets:
                    return f"{name}: device {d.name} consumes from unknown counter set {use.counter_set}"
                unknown = sorted(set(use.counters) - sets[use.counter_set])
                if unknown:
                    return f"{name}: device {d.name} consumes unknown counter(s) {', '.join(unknown)}"
    return None


# ---------------------------------------------------------------------------------------
# consumable capacity (KEP-5075)


def _round_request(req: Fraction, policy: CapacityRequestPolicy | None) -> tuple[Fraction | None, str]:
    """The amount a request consumes under `policy`, or (None, why) when it is not allowed."""
    if policy is None:
        return req, ""
    if policy.valid_values:
        fits = [_frac(v) for v in policy.valid_values if _frac(v) >= req]
        if not fits:
            return None, f"{_fmt(req)} exceeds every valid value"
        return min(fits), ""
    rng = policy.valid_range
    if rng is not None:
        low = _frac(rng.min) if rng.min is not None else Fraction(0)
        if req <= low:
            amount = low
        elif rng.step is not None and _frac(rng.step) > 0:
            step = _frac(rng.step)
            amount = low + math.ceil((req - low) / step) * step
        else:
            amount = req
        if rng.max is not None and amount > _frac(rng.max):
            return None, f"{_fmt(req)} (rounded {_fmt(amount)}) is above the maximum {_fmt(_frac(rng.max))}"
        return amount, ""
    return req, ""


@dataclass
class _Consumption:
    """What one placement of a request on a device consumes, per capacity as published."""

    amounts: dict[str, Fraction]
    lacking: list[str]
    """Requested capacities the device does not have (the device is not a candidate)."""
    refused: dict[str, str]
    """Capacity -> why the policy does not allow the requested amount."""


def _consumption(device: Device, driver: str, requests: dict[str, Quantity]) -> _Consumption:
    by_fqn = {_fqn(k, driver): (k, _frac(v)) for k, v in requests.items()}
    have = {_fqn(k, driver) for k in device.capacity}
    lacking = sorted(orig for f, (orig, _) in by_fqn.items() if f not in have)
    amounts: dict[str, Fraction] = {}
    refused: dict[str, str] = {}
    for name, cap in device.capacity.items():
        requested = by_fqn.get(_fqn(name, driver))
        policy = cap.request_policy
        if requested is None:
            if policy is not None and policy.default is not None:
                amounts[name] = _frac(policy.default)
            else:
                amounts[name] = _frac(cap.value)
            continue
        amount, why = _round_request(requested[1], policy)
        if amount is None:
            refused[name] = why
        else:
            amounts[name] = amount
    return _Consumption(amounts, lacking, refused)


# ---------------------------------------------------------------------------------------
# the checker


def _alt_field(alt: Alt, name: str) -> Any:
    return getattr(alt, name, None)


def _capacity_requests(alt: Alt) -> dict[str, Quantity]:
    return dict(alt.capacity.requests) if alt.capacity is not None else {}


def _tolerates(tol: DeviceToleration, key: str, value: str, effect: str) -> bool:
    """§4.12: effect empty or equal; key empty or equal; Exists, or Equal/empty with equal value."""
    if tol.effect and tol.effect != effect:
        return False
    if tol.key and tol.key != key:
        return False
    operator = tol.operator or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (tol.value or "") == value
    return False


@dataclass
class _Placed:
    """One result of a claim being checked, with what it resolved to."""

    claim_id: str
    claim: ResourceClaim
    result: DeviceRequestAllocationResult
    top: str
    """The top-level request name (before any `/sub`)."""
    alt: Alt | None
    """The request or subrequest the result names; None when it does not exist."""
    dev: _Dev | None
    """The device; None when it is not visible."""

    @property
    def key(self) -> DeviceKey:
        r = self.result
        return (r.driver, r.pool, r.device)

    @property
    def admin(self) -> bool:
        return bool(self.result.admin_access)


class _Checker:
    """Holds the inventory, the in-use state and the caches for one `check` call."""

    def __init__(
        self, cluster: Cluster, allocated: list[ResourceClaim], node: str | None, gates: FeatureGates
    ):
        self.cluster = cluster
        self.allocated = allocated
        self.node = node
        self.gates = gates
        self.out: list[Violation] = []
        self.inv = _gather(cluster, node, gates.DRAPartitionableDevices)
        self._gate_on_inv: _Inventory | None = None
        new_ids = {_claim_id(c) for c in allocated}
        self.existing: list[tuple[str, DeviceRequestAllocationResult]] = [
            (_claim_id(c), r)
            for c in cluster.allocated_claims()
            if _claim_id(c) not in new_ids and c.status is not None and c.status.allocation is not None
            for r in c.status.allocation.devices.results
        ]
        self.existing_by_dev: dict[DeviceKey, list[tuple[str, DeviceRequestAllocationResult]]] = defaultdict(
            list
        )
        for c, r in self.existing:
            self.existing_by_dev[(r.driver, r.pool, r.device)].append((c, r))
        self._programs: dict[tuple[str, bool], Program] = {}
        self._views: dict[DeviceKey, DeviceView] = {}
        self._selector_cache: dict[tuple[str, DeviceKey], bool | str] = {}
        self._reported_cel: set[tuple[str, str, DeviceKey]] = set()

    # -- reporting -------------------------------------------------------------------

    def report(self, claim: str, request: str | None, kind: str, message: str) -> None:
        assert kind in KINDS, kind
        where = f"claim {claim}"
        if request:
            where += f", request {request}"
        self.out.append(Violation(claim, request, kind, f"{where}: {message}"))

    # -- helpers ---------------------------------------------------------------------

    def multi(self, device: Device) -> bool:
        """Multi-allocatable: allowMultipleAllocations with DRAConsumableCapacity on."""
        return bool(device.allow_multiple_allocations) and self.gates.DRAConsumableCapacity

    def gate_on_inventory(self) -> _Inventory:
        if self._gate_on_inv is None:
            self._gate_on_inv = _gather(self.cluster, self.node, True)
        return self._gate_on_inv

    def view(self, dev: _Dev) -> DeviceView:
        """The CEL `device` variable of a device (bare attribute names under the driver)."""
        found = self._views.get(dev.key)
        if found is not None:
            return found
        driver = dev.key[0]
        attrs: dict[str, dict[str, Any]] = defaultdict(dict)
        for name, attr in dev.device.attributes.items():
            domain, _, ident = _fqn(name, driver).rpartition("/")
            value: Any = None
            if attr.int_ is not None:
                value = attr.int_
            elif attr.bool_ is not None:
                value = attr.bool_
            elif attr.string is not None:
                value = attr.string
            elif attr.version is not None:
                value = Semver(attr.version)
            elif attr.ints is not None:
                value = tuple(attr.ints)
            elif attr.bools is not None:
                value = tuple(attr.bools)
            elif attr.strings is not None:
                value = tuple(attr.strings)
            elif attr.versions is not None:
                value = tuple(Semver(v) for v in attr.versions)
            attrs[domain][ident] = value
        caps: dict[str, dict[str, Quantity]] = defaultdict(dict)
        for name, cap in dev.device.capacity.items():
            domain, _, ident = _fqn(name, driver).rpartition("/")
            caps[domain][ident] = cap.value
        view = DeviceView(
            driver=driver,
            name=dev.device.name,
            attributes={k: dict(v) for k, v in attrs.items()},
            capacity={k: dict(v) for k, v in caps.items()},
            allow_multiple_allocations=bool(dev.device.allow_multiple_allocations),
        )
        self._views[dev.key] = view
        return view

    def evaluate(self, expression: str, dev: _Dev, *, selector: bool) -> tuple[bool, Any, str]:
        """(ok, value, error) of a CEL expression on a device; never raises.

        Selectors must yield a bool (checked at compile time where the type is static and
        at run time otherwise); derived attributes may yield any value, checked by the caller.
        """
        try:
            program = self._programs.get((expression, selector))
            if program is None:
                program = compile_expression(expression, expect_bool=selector)
                self._programs[(expression, selector)] = program
            view = self.view(dev)
            value = program.evaluate_bool(view) if selector else program.evaluate(view)
            return True, value, ""
        except Exception as exc:  # noqa: BLE001 - any CEL failure is a reported violation
            return False, None, getattr(exc, "reason", None) or str(exc) or type(exc).__name__

    def selector_ok(
        self, expression: str, dev: _Dev, where: str, claim: str, request: str | None
    ) -> bool | None:
        """True/False for a selector on a device; None (and a `selector` violation) on a CEL error."""
        cache_key = (expression, dev.key)
        cached = self._selector_cache.get(cache_key)
        if cached is None:
            ok, value, error = self.evaluate(expression, dev, selector=True)
            cached = bool(value) if ok else error
            self._selector_cache[cache_key] = cached
        if isinstance(cached, str):
            seen = (where, expression, dev.key)
            if seen not in self._reported_cel:
                self._reported_cel.add(seen)
                self.report(
                    claim,
                    request,
                    "selector",
                    f"{where} CEL expression {expression!r} failed on device {_dev_id(dev.key)}: {cached}",
                )
            return None
        return cached

    def selects(self, alt: Alt, dev: _Dev, claim: str, request: str) -> list[str]:
        """Why the class and request selectors reject `dev` ([] when they accept it).

        A CEL error counts as a rejection and is reported as a `selector` violation itself.
        """
        why: list[str] = []
        cls = self.cluster.classes.get(alt.device_class_name)
        if cls is None:
            return [f"device class {alt.device_class_name!r} does not exist"]
        for i, sel in enumerate(cls.spec.selectors):
            if sel.cel is None:
                why.append(f"class {cls.metadata.name} selector #{i} has no CEL expression")
                continue
            ok = self.selector_ok(
                sel.cel.expression, dev, f"class {cls.metadata.name} selector #{i}", claim, request
            )
            if ok is None:
                return ["CEL error"]
            if not ok:
                why.append(f"class {cls.metadata.name} selector #{i} {sel.cel.expression!r} is false")
                return why
        for i, sel in enumerate(alt.selectors):
            if sel.cel is None:
                why.append(f"request selector #{i} has no CEL expression")
                continue
            ok = self.selector_ok(sel.cel.expression, dev, f"request selector #{i}", claim, request)
            if ok is None:
                return ["CEL error"]
            if not ok:
                why.append(f"request selector #{i} {sel.cel.expression!r} is false")
                return why
        return why

    def existing_on(self, key: DeviceKey) -> list[tuple[str, DeviceRequestAllocationResult]]:
        return self.existing_by_dev.get(key, [])

    def existing_use(self, key: DeviceKey, driver: str) -> dict[str, Fraction]:
        """Capacity (full name) consumed on a device by existing non-admin results."""
        used: dict[str, Fraction] = defaultdict(Fraction)
        for _, r in self.existing_on(key):
            if r.admin_access:
                continue
            for name, q in (r.consumed_capacity or {}).items():
                used[_fqn(name, driver)] += _frac(q)
        return used

    # -- the run ---------------------------------------------------------------------

    def run(self) -> list[Violation]:
        placed: list[_Placed] = []
        per_claim: list[tuple[ResourceClaim, list[_Placed]]] = []
        for claim in self.allocated:
            mine = self.check_results(claim)
            per_claim.append((claim, mine))
            placed.extend(mine)
        for claim, mine in per_claim:
            self.check_counts(claim, mine)
            self.check_duplicates(claim, mine)
            self.check_constraints(claim, mine)
            self.check_node_selector(claim, mine)
        self.check_busy(placed)
        self.check_capacity(placed)
        self.check_share_ids(placed)
        self.check_counters(placed)
        return self.out

    # -- per result --------------------------------------------------------------------

    def resolve(self, claim: ResourceClaim, cid: str, name: str) -> tuple[str, Alt | None]:
        """(top-level name, the request or subrequest), reporting a `request` violation if absent."""
        top, slash, sub = name.partition("/")
        request: DeviceRequest | None = next((r for r in claim.spec.devices.requests if r.name == top), None)
        if request is None:
            self.report(cid, name, "request", f"the claim has no request named {top!r}")
            return top, None
        if request.first_available is not None:
            if not slash:
                self.report(
                    cid,
                    name,
                    "request",
                    f"request {top!r} has subrequests; the result must name one as {top}/<sub>",
                )
                return top, None
            found = next((s for s in request.first_available if s.name == sub), None)
            if found is None:
                self.report(cid, name, "request", f"request {top!r} has no subrequest named {sub!r}")
            return top, found
        if slash:
            self.report(
                cid, name, "request", f"request {top!r} has no subrequests, the result names {name!r}"
            )
            return top, None
        if request.exactly is None:
            self.report(cid, name, "request", f"request {top!r} has neither exactly nor firstAvailable")
        return top, request.exactly

    def check_results(self, claim: ResourceClaim) -> list[_Placed]:
        cid = _claim_id(claim)
        allocation = claim.status.allocation if claim.status is not None else None
        if allocation is None:
            self.report(cid, None, "count", "the claim has no status.allocation")
            return []
        results = allocation.devices.results
        if len(results) > MAX_RESULTS:
            self.report(
                cid, None, "limit", f"{len(results)} device results exceed the limit of {MAX_RESULTS}"
            )
        mine: list[_Placed] = []
        subs_used: dict[str, set[str]] = defaultdict(set)
        for r in results:
            top, alt = self.resolve(claim, cid, r.request)
            if alt is not None and "/" in r.request:
                subs_used[top].add(r.request)
            dev = self.lookup(cid, r)
            p = _Placed(cid, claim, r, top, alt, dev)
            mine.append(p)
            if alt is not None:
                self.check_result(p, alt)
        for top, subs in subs_used.items():
            if len(subs) > 1:
                self.report(
                    cid,
                    top,
                    "request",
                    f"results use more than one subrequest of {top!r}: {', '.join(sorted(subs))}",
                )
        return mine

    def lookup(self, cid: str, r: DeviceRequestAllocationResult) -> _Dev | None:
        """The visible device a result names; reports `unknown-device` or `gate` when there is none."""
        key = (r.driver, r.pool, r.device)
        dev = self.inv.devices.get(key)
        if dev is not None:
            return dev
        if not self.gates.DRAPartitionableDevices and key in self.gate_on_inventory().devices:
            self.report(
                cid,
                r.request,
                "gate",
                f"device {_dev_id(key)} is only usable with partitionable devices "
                "(perDeviceNodeSelection / shared counters), but DRAPartitionableDevices is off",
            )
            return None
        problem = self.inv.problems.get((r.driver, r.pool))
        if problem is not None:
            why = problem
        elif any(
            rs.spec.driver == r.driver
            and rs.spec.pool.name == r.pool
            and any(d.name == r.device for d in rs.spec.devices)
            for rs in self.cluster.slices
        ):
            why = (
                f"it is not visible from node {self.node}"
                if self.node
                else "it is not visible without a node"
            )
        else:
            why = "no ResourceSlice publishes it"
        self.report(cid, r.request, "unknown-device", f"device {_dev_id(key)}: {why}")
        return None

    def check_result(self, p: _Placed, alt: Alt) -> None:
        """Rules that concern one result alone: gates, admin, selectors, taints, share, rounding."""
        g = self.gates
        r = p.result
        cid, req = p.claim_id, r.request
        is_sub = isinstance(alt, DeviceSubRequest)
        requests = _capacity_requests(alt)
        if is_sub and not g.DRAPrioritizedList:
            self.report(
                cid, req, "gate", f"firstAvailable subrequest {req!r} used, but DRAPrioritizedList is off"
            )
        if requests and not g.DRAConsumableCapacity:
            self.report(
                cid, req, "gate", "the request has capacity requests, but DRAConsumableCapacity is off"
            )
        wants_admin = bool(_alt_field(alt, "admin_access"))
        if (wants_admin or p.admin) and not g.DRAAdminAccess:
            self.report(cid, req, "gate", "admin access is used, but DRAAdminAccess is off")
        if wants_admin != p.admin:
            self.report(
                cid,
                req,
                "admin",
                f"result adminAccess={p.admin} on device {_dev_id(p.key)}, "
                f"but the request {'asks for' if wants_admin else 'does not ask for'} admin access",
            )
        dev = p.dev
        if dev is None:
            return
        d = dev.device
        did = _dev_id(dev.key)
        if d.consumes_counters and not g.DRAPartitionableDevices:
            self.report(
                cid, req, "gate", f"device {did} consumes shared counters, but DRAPartitionableDevices is off"
            )
        if d.binding_conditions and not g.binding_and_status:
            self.report(
                cid,
                req,
                "gate",
                f"device {did} has bindingConditions, but DRADeviceBindingConditions/"
                "DRAResourceClaimDeviceStatus is off",
            )
        slice_skip = bool(dev.slice.spec.skip_node_operations)
        if g.DRAOptionalNodePreparation:
            if bool(r.skip_node_operations) != slice_skip:
                self.report(
                    cid,
                    req,
                    "skip-node-operations",
                    f"device {did}: result skipNodeOperations={bool(r.skip_node_operations)}, "
                    f"but ResourceSlice {dev.slice.metadata.name} has skipNodeOperations={slice_skip}",
                )
        elif slice_skip or r.skip_node_operations:
            what = (
                f"comes from ResourceSlice {dev.slice.metadata.name} with skipNodeOperations: true"
                if slice_skip
                else "has a result with skipNodeOperations: true"
            )
            self.report(cid, req, "gate", f"device {did} {what}, but DRAOptionalNodePreparation is off")
        # selectors (class, request, capacity names)
        why = self.selects(alt, dev, cid, req)
        for reason in why:
            if reason != "CEL error":
                self.report(cid, req, "selector", f"device {did} does not match: {reason}")
        cons = _consumption(d, dev.key[0], requests) if g.DRAConsumableCapacity else None
        if cons is not None and cons.lacking:
            self.report(
                cid,
                req,
                "selector",
                f"device {did} has no capacity {', '.join(cons.lacking)} that the request asks for",
            )
        # taints
        if g.DRADeviceTaints:
            for taint in d.taints:
                if taint.effect not in ("NoSchedule", "NoExecute"):
                    continue
                if not any(
                    _tolerates(t, taint.key, taint.value or "", taint.effect) for t in alt.tolerations
                ):
                    self.report(
                        cid,
                        req,
                        "taint",
                        f"device {did} has taint {taint.key}={taint.value or ''}:{taint.effect} "
                        "that the request does not tolerate",
                    )
        # share / rounding / dedicated capacity
        multi = self.multi(d)
        has_caps = bool(d.capacity)
        if multi:
            if not r.share_id:
                self.report(cid, req, "share", f"multi-allocatable device {did}: the result has no shareID")
            if has_caps and r.consumed_capacity is None:
                self.report(
                    cid, req, "share", f"multi-allocatable device {did}: the result has no consumedCapacity"
                )
            if cons is not None and r.consumed_capacity is not None:
                self.check_rounding(p, dev, cons)
        else:
            if r.share_id or r.consumed_capacity:
                self.report(
                    cid,
                    req,
                    "share",
                    f"dedicated device {did}: the result must not carry shareID/consumedCapacity",
                )
            if cons is not None:
                for name, amount in cons.amounts.items():
                    if _fqn(name, dev.key[0]) in {_fqn(k, dev.key[0]) for k in requests}:
                        value = _frac(d.capacity[name].value)
                        if amount > value:
                            self.report(
                                cid,
                                req,
                                "capacity",
                                f"dedicated device {did}: capacity {name} is {_fmt(value)}, "
                                f"the request needs {_fmt(amount)}",
                            )
                for name, refusal in cons.refused.items():
                    self.report(cid, req, "capacity", f"dedicated device {did}: capacity {name}: {refusal}")

    def check_rounding(self, p: _Placed, dev: _Dev, cons: _Consumption) -> None:
        """consumedCapacity must be exactly the requestPolicy rounding, for every capacity."""
        r = p.result
        did = _dev_id(dev.key)
        driver = dev.key[0]
        recorded = {_fqn(k, driver): (k, _frac(v)) for k, v in (r.consumed_capacity or {}).items()}
        names = {_fqn(k, driver): k for k in dev.device.capacity}
        for full, (orig, _) in sorted(recorded.items()):
            if full not in names:
                self.report(
                    p.claim_id, r.request, "rounding", f"device {did} has no capacity {orig} to consume"
                )
        for full, name in sorted(names.items()):
            if name in cons.refused:
                self.report(
                    p.claim_id,
                    r.request,
                    "rounding",
                    f"device {did}: capacity {name}: the request is not allowed by the requestPolicy: "
                    f"{cons.refused[name]}",
                )
                continue
            expected = cons.amounts[name]
            got = recorded.get(full)
            if got is None:
                self.report(
                    p.claim_id,
                    r.request,
                    "rounding",
                    f"device {did}: consumedCapacity lacks {name} (expected {_fmt(expected)}; every capacity "
                    "must be listed, zeros included)",
                )
            elif got[1] != expected:
                self.report(
                    p.claim_id,
                    r.request,
                    "rounding",
                    f"device {did}: consumedCapacity {name} is {_fmt(got[1])}, the requestPolicy gives "
                    f"{_fmt(expected)}",
                )

    # -- per claim -------------------------------------------------------------------------

    def check_counts(self, claim: ResourceClaim, mine: list[_Placed]) -> None:
        """ExactCount: exactly `count` devices; All: exactly the All-set (§4.7)."""
        cid = _claim_id(claim)
        for request in claim.spec.devices.requests:
            got = [p for p in mine if p.top == request.name]
            if not got:
                self.report(cid, request.name, "count", "the request has no device results")
                continue
            alts = {id(p.alt): p for p in got if p.alt is not None}
            if len(alts) != 1 or len(got) != sum(1 for p in got if p.alt is not None):
                continue  # reported as a `request` violation
            alt = got[0].alt
            assert alt is not None
            label = got[0].result.request
            mode = alt.allocation_mode or "ExactCount"
            if mode == "ExactCount":
                want = alt.count if alt.count is not None else 1
                if len(got) != want:
                    self.report(
                        cid,
                        label,
                        "count",
                        f"ExactCount asks for {want} device(s), the result has {len(got)}",
                    )
            elif mode == "All":
                self.check_all(cid, label, alt, got)
            else:
                self.report(cid, label, "count", f"unsupported allocation mode {mode!r}")

    def all_set(self, cid: str, label: str, alt: Alt) -> set[DeviceKey]:
        """Every visible device that matches the request and has room after existing claims."""
        out: set[DeviceKey] = set()
        requests = _capacity_requests(alt)
        for key, dev in self.inv.devices.items():
            d = dev.device
            if d.binding_conditions and not self.gates.binding_and_status:
                continue
            if self.selects(alt, dev, cid, label):
                continue
            if self.gates.DRAConsumableCapacity:
                cons = _consumption(d, key[0], requests)
                if cons.lacking or cons.refused:
                    continue
                if self.multi(d):
                    used = self.existing_use(key, key[0])
                    if any(
                        used.get(_fqn(n, key[0]), Fraction(0)) + a > _frac(d.capacity[n].value)
                        for n, a in cons.amounts.items()
                    ):
                        continue
                else:
                    req_full = {_fqn(k, key[0]) for k in requests}
                    if any(
                        a > _frac(d.capacity[n].value)
                        for n, a in cons.amounts.items()
                        if _fqn(n, key[0]) in req_full
                    ):
                        continue
            out.add(key)
        return out

    def check_all(self, cid: str, label: str, alt: Alt, got: list[_Placed]) -> None:
        for pk, problem in sorted(self.inv.problems.items()):
            if pk not in self.inv.obsolete:
                self.report(cid, label, "count", f"allocation mode All cannot be satisfied: {problem}")
        want = self.all_set(cid, label, alt)
        have = {p.key for p in got}
        missing = sorted(want - have)
        extra = sorted(k for k in have - want if k in self.inv.devices)
        if not want:
            self.report(cid, label, "count", "allocation mode All: no device matches the request")
        if missing:
            self.report(
                cid,
                label,
                "count",
                "allocation mode All must allocate every matching device; missing "
                + ", ".join(map(_dev_id, missing)),
            )
        if extra:
            self.report(
                cid,
                label,
                "count",
                "allocation mode All: device(s) "
                f"{', '.join(map(_dev_id, extra))} do not belong to the All-set (no match or no room)",
            )

    def check_duplicates(self, claim: ResourceClaim, mine: list[_Placed]) -> None:
        """One request never gets the same device twice (not even a multi-allocatable one)."""
        seen: dict[tuple[str, DeviceKey], int] = defaultdict(int)
        for p in mine:
            seen[(p.top, p.key)] += 1
        for (top, key), n in seen.items():
            if n > 1:
                self.report(
                    _claim_id(claim),
                    top,
                    "duplicate",
                    f"device {_dev_id(key)} appears {n} times in one request",
                )

    def attribute(self, p: _Placed, name: str) -> frozenset[Value] | None | Literal["error"]:
        """The constraint value of a placed device: derived attribute first, then static."""
        assert p.dev is not None
        driver = p.dev.key[0]
        if self.gates.DRADerivedAttributes and p.alt is not None:
            for da in p.alt.derived_attributes:
                if da.name != name:
                    continue
                ok, value, error = self.evaluate(da.expression, p.dev, selector=False)
                values = _cel_values(value) if ok else None
                if values is None:
                    error = error or f"result {value!r} is not a scalar or a list of scalars"
                    self.report(
                        p.claim_id,
                        p.result.request,
                        "selector",
                        f"derived attribute {name} CEL expression {da.expression!r} failed on device "
                        f"{_dev_id(p.dev.key)}: {error}",
                    )
                    return "error"
                return values
        want = _fqn(name, driver)
        for attr_name, attr in p.dev.device.attributes.items():
            if _fqn(attr_name, driver) == want:
                return _attr_values(attr)
        return None

    def check_constraints(self, claim: ResourceClaim, mine: list[_Placed]) -> None:
        """matchAttribute: non-empty common intersection; distinctAttribute: pairwise disjoint."""
        cid = _claim_id(claim)
        for i, con in enumerate(claim.spec.devices.constraints):
            name = con.match_attribute or con.distinct_attribute
            if name is None:
                continue
            kind = "match" if con.match_attribute else "distinct"
            rule = f"constraint #{i} ({'matchAttribute' if kind == 'match' else 'distinctAttribute'} {name})"
            scope = set(con.requests)
            covered = [
                p
                for p in mine
                if p.dev is not None and (not scope or p.top in scope or p.result.request in scope)
            ]
            values: list[tuple[_Placed, frozenset[Value]]] = []
            for p in covered:
                v = self.attribute(p, name)
                if v == "error":
                    continue
                if v is None:
                    self.report(
                        cid,
                        p.result.request,
                        kind,
                        f"{rule}: device {_dev_id(p.key)} does not have the attribute",
                    )
                    continue
                values.append((p, v))
            if kind == "match":
                common: frozenset[Value] | None = None
                for p, v in values:
                    common = v if common is None else common & v
                    if not common:
                        shown = ", ".join(f"{_dev_id(q.key)}={_show_values(w)}" for q, w in values)
                        self.report(
                            cid, p.result.request, kind, f"{rule}: values have no common value: {shown}"
                        )
                        break
            else:
                for a in range(len(values)):
                    for b in range(a + 1, len(values)):
                        (pa, va), (pb, vb) = values[a], values[b]
                        if va & vb:
                            self.report(
                                cid,
                                pb.result.request,
                                kind,
                                f"{rule}: devices {_dev_id(pa.key)} ({pa.result.request}) and "
                                f"{_dev_id(pb.key)} ({pb.result.request}) share the value "
                                f"{_show_values(va & vb)}",
                            )

    def check_node_selector(self, claim: ResourceClaim, mine: list[_Placed]) -> None:
        """§4.15: node-local → exactly the node; selectors → one term, their union; allNodes → none."""
        if not mine or any(p.dev is None for p in mine):
            return
        cid = _claim_id(claim)
        assert claim.status is not None and claim.status.allocation is not None
        actual = _normal_selector(claim.status.allocation.node_selector)
        node_local = [
            p for p in mine if p.dev is not None and (p.dev.scope[0] == "node" or p.dev.device.binds_to_node)
        ]
        if node_local:
            if self.node is None:
                self.report(cid, None, "node-selector", "node-local devices were allocated without a node")
                return
            expected = frozenset({(frozenset(), frozenset({("metadata.name", "In", (self.node,))}))})
            why = f"device {_dev_id(node_local[0].key)} is local to node {self.node}"
        else:
            selectors = []
            for p in mine:
                assert p.dev is not None
                if p.dev.scope[0] == "selector" and p.dev.scope[1] not in selectors:
                    selectors.append(p.dev.scope[1])
            if not selectors:
                expected = frozenset()
                why = "every device is available on all nodes"
            elif all(len(s.node_selector_terms) == 1 for s in selectors):
                exprs = frozenset(
                    _req_key(r) for s in selectors for r in s.node_selector_terms[0].match_expressions
                )
                flds = frozenset(
                    _req_key(r) for s in selectors for r in s.node_selector_terms[0].match_fields
                )
                expected = frozenset({(exprs, flds)})
                why = "the devices' node selectors are combined into one term"
            elif len({_normal_selector(s) for s in selectors}) == 1:
                expected = _normal_selector(selectors[0])
                why = "all devices share one node selector"
            else:
                self.report(
                    cid,
                    None,
                    "node-selector",
                    "devices with different multi-term node selectors cannot be combined into one allocation",
                )
                return
        if actual != expected:
            self.report(
                cid,
                None,
                "node-selector",
                f"allocation.nodeSelector is {_show_selector(actual)}, "
                f"expected {_show_selector(expected)} ({why})",
            )

    # -- across claims -----------------------------------------------------------------------

    def check_busy(self, placed: list[_Placed]) -> None:
        """A dedicated device serves one non-admin request; a shared device has no dedicated user."""
        by_dev: dict[DeviceKey, list[_Placed]] = defaultdict(list)
        for p in placed:
            if p.dev is not None:
                by_dev[p.key].append(p)
        for key, users in by_dev.items():
            dev = users[0].dev
            assert dev is not None
            existing = self.existing_on(key)
            did = _dev_id(key)
            if self.multi(dev.device):
                dedicated = sorted({c for c, r in existing if not r.admin_access and not r.share_id})
                if dedicated:
                    for p in users:
                        if not p.admin:
                            self.report(
                                p.claim_id,
                                p.result.request,
                                "busy",
                                f"multi-allocatable device {did} has a dedicated allocation in claim(s) "
                                f"{', '.join(dedicated)}",
                            )
                continue
            holders = sorted({c for c, r in existing if not r.admin_access})
            groups: dict[tuple[str, str], _Placed] = {}
            for p in users:
                groups.setdefault((p.claim_id, p.top), p)
            non_admin = [g for g in groups if not groups[g].admin]
            per_claim: dict[str, list[str]] = defaultdict(list)
            for c, top in groups:
                per_claim[c].append(top)
            names = [f"claim {c} (existing)" for c in holders] + [
                f"claim {c} request {t}" for c, t in non_admin
            ]
            if non_admin and len(holders) + len(non_admin) > 1:
                first = groups[non_admin[0]]
                self.report(
                    first.claim_id,
                    first.result.request,
                    "busy",
                    f"dedicated device {did} is allocated more than once: {', '.join(names)}",
                )
                continue
            for c, tops in per_claim.items():
                if len(tops) > 1:
                    p = groups[(c, tops[1])]
                    self.report(
                        c,
                        p.result.request,
                        "busy",
                        f"dedicated device {did} is used by requests {', '.join(tops)} of the same claim",
                    )

    def check_capacity(self, placed: list[_Placed]) -> None:
        """Multi-allocatable devices: existing + new consumption <= value, per capacity."""
        by_dev: dict[DeviceKey, list[_Placed]] = defaultdict(list)
        for p in placed:
            if p.dev is not None and not p.admin and self.multi(p.dev.device) and p.dev.device.capacity:
                by_dev[p.key].append(p)
        for key, users in by_dev.items():
            dev = users[0].dev
            assert dev is not None
            driver = key[0]
            used = self.existing_use(key, driver)
            new: dict[str, Fraction] = defaultdict(Fraction)
            for p in users:
                amounts: dict[str, Fraction]
                if p.result.consumed_capacity is not None:
                    amounts = {_fqn(k, driver): _frac(v) for k, v in p.result.consumed_capacity.items()}
                elif p.alt is not None:
                    cons = _consumption(dev.device, driver, _capacity_requests(p.alt))
                    amounts = {_fqn(k, driver): v for k, v in cons.amounts.items()}
                else:
                    continue
                for k, v in amounts.items():
                    new[k] += v
            for name, cap in dev.device.capacity.items():
                full = _fqn(name, driver)
                value = _frac(cap.value)
                before = used.get(full, Fraction(0))
                total = before + new.get(full, Fraction(0))
                if total > value:
                    p = users[-1]
                    self.report(
                        p.claim_id,
                        p.result.request,
                        "capacity",
                        f"device {_dev_id(key)} capacity {name}: {_fmt(before)} already in use + "
                        f"{_fmt(new.get(full, Fraction(0)))} new > {_fmt(value)} "
                        f"(new shares: {', '.join(sorted({q.claim_id for q in users}))})",
                    )

    def check_share_ids(self, placed: list[_Placed]) -> None:
        """A shareID identifies one share of one device: no two results of a device share one."""
        seen: dict[tuple[DeviceKey, str], str] = {}
        for c, r in self.existing:
            if r.share_id:
                seen.setdefault(((r.driver, r.pool, r.device), r.share_id), f"claim {c} (existing)")
        for p in placed:
            sid = p.result.share_id
            if not sid:
                continue
            other = seen.get((p.key, sid))
            if other is not None:
                self.report(
                    p.claim_id,
                    p.result.request,
                    "share",
                    f"device {_dev_id(p.key)}: shareID {sid} is already used by {other}",
                )
            else:
                seen[(p.key, sid)] = f"claim {p.claim_id} request {p.result.request}"

    def check_counters(self, placed: list[_Placed]) -> None:
        """Per pool: consumption of every allocated device (each once) <= each counter's value."""
        if not self.gates.DRAPartitionableDevices:
            return
        existing_devs: dict[PoolKey, set[str]] = defaultdict(set)
        for _, r in self.existing:
            if not r.admin_access:
                existing_devs[(r.driver, r.pool)].add(r.device)
        new_by_pool: dict[PoolKey, list[_Placed]] = defaultdict(list)
        for p in placed:
            if p.dev is not None and p.dev.device.consumes_counters:
                new_by_pool[(p.key[0], p.key[1])].append(p)
        for pk, users in new_by_pool.items():
            charged_now = [p for p in users if p.key[2] not in existing_devs[pk]]
            if not charged_now:
                continue  # only devices already charged: nothing new is consumed
            devices = self.inv.pool_devices.get(pk, {})
            in_use = existing_devs[pk] | {p.key[2] for p in users}
            total: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
            for name in in_use:
                d = devices.get(name)
                if d is None:
                    continue
                for use in d.consumes_counters:
                    for cname, c in use.counters.items():
                        total[(use.counter_set, cname)] += _frac(c.value)
            for set_name, counters in sorted(self.inv.pool_counters.get(pk, {}).items()):
                for cname, value in sorted(counters.items()):
                    amount = total.get((set_name, cname), Fraction(0))
                    if amount > value:
                        p = charged_now[-1]
                        self.report(
                            p.claim_id,
                            p.result.request,
                            "counters",
                            f"pool {pk[0]}/{pk[1]} counter {set_name}/{cname}: allocated devices consume "
                            f"{_fmt(amount)} > {_fmt(value)} (placing "
                            f"{', '.join(sorted({_dev_id(q.key) for q in charged_now}))})",
                        )


def _show_selector(terms: frozenset[Term]) -> str:
    if not terms:
        return "none"
    parts = []
    for exprs, flds in sorted(terms, key=repr):
        reqs = [f"{k} {op} {list(v)}" for k, op, v in sorted(exprs)] + [
            f"field {k} {op} {list(v)}" for k, op, v in sorted(flds)
        ]
        parts.append("{" + "; ".join(reqs) + "}")
    return " OR ".join(parts)
