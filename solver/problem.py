"""PRECOMPUTE: from objects to the flat Problem (solver.problem_types).

Why here and only here: every CEL evaluation, every requestPolicy rounding and every
static check (gates, taints, capacity against existing use) happens once, per request and
device, before any search. The allocators below see integer indices and exact numbers.

Upstream evaluates CEL lazily in search order (UPSTREAM-SEMANTICS §5.4): an expression
that fails on a device the search never reaches is never reported. We evaluate eagerly but
keep a runtime error on the candidate it belongs to; the reference allocator raises it
only when its search reaches that device, exactly as upstream does. The CP-SAT allocator
runs the reference first and so reports the same errors. Errors that upstream raises while
preparing a request (compile errors, missing class, All-mode enumeration) raise here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from solver.api.cluster import Cluster
from solver.api.models import (
    CapacityRequirements,
    DerivedAttribute,
    Device,
    DeviceAttribute,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from solver.api.quantity import Quantity
from solver.capacity import device_consumption, fits
from solver.cel import AttrValue, DeviceView, EvalCache, Program, compile_expression
from solver.cel.semver import Semver
from solver.errors import AllocationError, CelError, DRASolverError, InputError
from solver.gates import FeatureGates
from solver.inventory import InUse, NodeView, Pool, Pools, gather_pools, in_use_from_claims, visible_devices
from solver.problem_types import (
    MAX_RESULTS_PER_CLAIM,
    Alternative,
    Candidate,
    ClaimInfo,
    ConstraintInfo,
    CounterInfo,
    DeviceInfo,
    Problem,
    RequestInfo,
    Value,
    ValueSet,
)
from solver.taints import tolerated

Programs = list[tuple[str, Program]]
"""(where, program): a selector's place in messages, or a derived attribute's name."""

NODE_FEATURE = "DraOptionalNodePreparation"
"""KEP-5945: nodes whose kubelet can skip node operations declare this in status.declaredFeatures."""


@dataclass
class Context:
    """Everything precompute derives from the cluster once per (node, call)."""

    cluster: Cluster
    node: NodeView | None
    gates: FeatureGates
    pools: Pools
    in_use: InUse
    devices: list[DeviceInfo]
    raw: list[tuple[ResourceSlice, Device]]
    views: list[DeviceView]
    counters: list[CounterInfo]
    cache: EvalCache


# --- devices ----------------------------------------------------------------------------------


def attribute_value_set(attr: DeviceAttribute, gates: FeatureGates) -> ValueSet | None:
    """Typed value set of a static attribute; list attributes need DRAListTypeAttributes."""
    if attr.int_ is not None:
        return frozenset({("int", attr.int_)})
    if attr.bool_ is not None:
        return frozenset({("bool", attr.bool_)})
    if attr.string is not None:
        return frozenset({("string", attr.string)})
    if attr.version is not None:
        return frozenset({("version", attr.version)})
    if not gates.DRAListTypeAttributes:
        return None
    for kind, values in (
        ("int", attr.ints),
        ("bool", attr.bools),
        ("string", attr.strings),
        ("version", attr.versions),
    ):
        if values is not None:
            return frozenset((kind, v) for v in values)
    return None


def _cel_attr(attr: DeviceAttribute) -> AttrValue | None:
    if attr.int_ is not None:
        return attr.int_
    if attr.bool_ is not None:
        return attr.bool_
    if attr.string is not None:
        return attr.string
    if attr.version is not None:
        return Semver(attr.version)
    for values in (attr.ints, attr.bools, attr.strings):
        if values is not None:
            return tuple(values)
    if attr.versions is not None:
        return tuple(Semver(v) for v in attr.versions)
    return None


def _split_name(name: str, driver: str) -> tuple[str, str]:
    dom, sep, ident = name.rpartition("/")
    return (dom, ident) if sep else (driver, name)


#: ``Semver(text)`` by version string: a fleet repeats a few driver versions on thousands of
#: devices, and a Semver is immutable, so devices can share one (bounded, cleared when full).
_SEMVERS: dict[str, Semver] = {}


def _semver(text: str) -> Semver:
    if type(text) is not str:  # not validated (assigned after parsing): Semver reports it
        return Semver(text)
    v = _SEMVERS.get(text)
    if v is None:
        if len(_SEMVERS) >= 4096:
            _SEMVERS.clear()
        v = _SEMVERS[text] = Semver(text)
    return v


def device_view(driver: str, device: Device, gates: FeatureGates) -> DeviceView:
    """The CEL `device` variable for one device (bare names under the driver's domain).

    Built once per device per run (the hot loop of precompute on a large fleet), so
    :func:`_split_name` and :func:`_cel_attr` are inlined for the common cases (same
    results; versions are memoised by string, list forms go through :func:`_cel_attr`).
    """
    attrs: dict[str, dict[str, AttrValue]] = {}
    for name, attr in device.attributes.items():
        if "/" in name:
            dom, _, ident = name.rpartition("/")
        else:
            dom, ident = driver, name
        v: AttrValue
        if attr.int_ is not None:
            v = attr.int_
        elif attr.bool_ is not None:
            v = attr.bool_
        elif attr.string is not None:
            v = attr.string
        elif attr.version is not None:
            v = _semver(attr.version)
        else:
            v = _cel_attr(attr)  # type: ignore[assignment]  # a list, or None (no value)
        m = attrs.get(dom)
        if m is None:
            m = attrs[dom] = {}
        m[ident] = v
    caps: dict[str, dict[str, Quantity]] = {}
    for name, cap in device.capacity.items():
        if "/" in name:
            dom, _, ident = name.rpartition("/")
        else:
            dom, ident = driver, name
        c = caps.get(dom)
        if c is None:
            c = caps[dom] = {}
        c[ident] = cap.value
    return DeviceView(driver, device.name, attrs, caps, bool(device.allow_multiple_allocations))


def _node_scope(s: ResourceSlice, d: Device) -> tuple[str, object]:
    src = d if s.spec.per_device_node_selection else s.spec
    if src.node_name is not None:
        return ("node", src.node_name)
    if src.node_selector is not None:
        return ("selector", src.node_selector.dump())
    return ("all", None)


def build_context(
    cluster: Cluster,
    claims: Sequence[ResourceClaim],
    node_name: str | None,
    gates: FeatureGates,
    cache: EvalCache | None = None,
) -> Context:
    node = NodeView.of(node_name, cluster.nodes)
    pools = gather_pools(cluster.slices, node, gates)
    skip = {(c.metadata.namespace or "default", c.metadata.name) for c in claims}
    existing = [
        c
        for key, c in cluster.claims.items()
        if key not in skip and c.status is not None and c.status.allocation
    ]
    in_use = in_use_from_claims(existing, gates)
    ctx = Context(cluster, node, gates, pools, in_use, [], [], [], [], cache or EvalCache())
    for pool in pools.valid():
        counter_index = _pool_counters(ctx, pool)
        blocked = any(ctx.counters[i].available < 0 for i in counter_index.values())
        for s, d in visible_devices(pool, node):
            _add_device(ctx, pool.driver, s, d, counter_index, blocked)
    return ctx


def _pool_counters(ctx: Context, pool: Pool) -> dict[tuple[str, str], int]:
    if not ctx.gates.DRAPartitionableDevices:
        return {}
    index: dict[tuple[str, str], int] = {}
    budget: dict[tuple[str, str], Fraction] = {}
    for s in pool.all_slices():
        for cs in s.spec.shared_counters:
            for cname, counter in cs.counters.items():
                budget[(cs.name, cname)] = counter.value.as_fraction()
    for s in pool.all_slices():
        for d in s.spec.devices:
            if not ctx.in_use.allocated((pool.driver, pool.name, d.name)):
                continue
            for use in d.consumes_counters:
                for cname, counter in use.counters.items():
                    budget[(use.counter_set, cname)] -= counter.value.as_fraction()
    for (set_name, cname), available in budget.items():
        index[(set_name, cname)] = len(ctx.counters)
        ctx.counters.append(CounterInfo(pool.driver, pool.name, set_name, cname, available))
    return index


def _add_device(
    ctx: Context,
    driver: str,
    s: ResourceSlice,
    d: Device,
    counter_index: dict[tuple[str, str], int],
    blocked: bool,
) -> None:
    gates = ctx.gates
    dev_id = (driver, s.spec.pool.name, d.name)
    multi = bool(d.allow_multiple_allocations) and gates.DRAConsumableCapacity
    counter_use: dict[int, Fraction] = {}
    for use in d.consumes_counters:
        for cname, counter in use.counters.items():
            key = (use.counter_set, cname)
            if key in counter_index:
                i = counter_index[key]
                counter_use[i] = counter_use.get(i, Fraction(0)) + counter.value.as_fraction()
    info = DeviceInfo(
        index=len(ctx.devices),
        driver=driver,
        pool=s.spec.pool.name,
        name=d.name,
        slice_name=s.metadata.name,
        multi=multi,
        busy=dev_id in ctx.in_use.dedicated,
        capacity={k: c.value.as_fraction() for k, c in d.capacity.items()},
        in_use=dict(ctx.in_use.capacity.get(dev_id, {})) if multi else {},
        shared_in_use=multi and (dev_id in ctx.in_use.shared or dev_id in ctx.in_use.capacity),
        counter_use=counter_use,
        counters_blocked=blocked,
        node_scope=_node_scope(s, d),
        binds_to_node=bool(d.binds_to_node),
        skip_node_operations=s.spec.skip_node_operations,
        binding_conditions=tuple(d.binding_conditions),
        binding_failure_conditions=tuple(d.binding_failure_conditions),
    )
    ctx.devices.append(info)
    ctx.raw.append((s, d))
    ctx.views.append(device_view(driver, d, gates))


# --- requests ---------------------------------------------------------------------------------


@dataclass
class _Spec:
    """One search unit before indexing: a request or one of its subrequests."""

    name: str
    position: int
    class_name: str
    selectors: list[DeviceSelector]
    mode: str | None
    count: int | None
    admin: bool
    tolerations: list[DeviceToleration]
    capacity: dict[str, Fraction]
    derived: list[DerivedAttribute]


def _specs(claim: ResourceClaim, gates: FeatureGates) -> list[tuple[str, bool, list[_Spec]]]:
    ref = claim.ref
    out: list[tuple[str, bool, list[_Spec]]] = []
    for ri, req in enumerate(claim.spec.devices.requests):
        field = f"spec.devices.requests[{ri}]"
        if req.first_available:
            if not gates.DRAPrioritizedList:
                raise InputError(
                    f"request {req.name} has subrequests, but the DRAPrioritizedList feature is disabled",
                    obj=ref,
                    field=f"{field}.firstAvailable",
                )
            subs = [
                _Spec(
                    f"{req.name}/{s.name}",
                    i,
                    s.device_class_name,
                    s.selectors,
                    s.allocation_mode,
                    s.count,
                    False,
                    s.tolerations,
                    _caps(s.capacity),
                    s.derived_attributes,
                )
                for i, s in enumerate(req.first_available)
            ]
            out.append((req.name, True, subs))
        elif req.exactly is not None:
            e = req.exactly
            out.append(
                (
                    req.name,
                    False,
                    [
                        _Spec(
                            req.name,
                            0,
                            e.device_class_name,
                            e.selectors,
                            e.allocation_mode,
                            e.count,
                            bool(e.admin_access),
                            e.tolerations,
                            _caps(e.capacity),
                            e.derived_attributes,
                        )
                    ],
                )
            )
        else:
            raise InputError(
                f"request {req.name} has neither exactly nor firstAvailable", obj=ref, field=field
            )
        for sp in out[-1][2]:
            if sp.capacity and not gates.DRAConsumableCapacity:
                raise InputError(
                    f"request {sp.name} has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled",
                    obj=ref,
                    field=f"{field}",
                )
    return out


def _caps(capacity: CapacityRequirements | None) -> dict[str, Fraction]:
    return {k: q.as_fraction() for k, q in capacity.requests.items()} if capacity is not None else {}


def _selector_programs(owner: str, selectors: list[DeviceSelector]) -> Programs:
    programs: Programs = []
    for i, sel in enumerate(selectors):
        if sel.cel is None:
            raise InputError(f"{owner}: selector #{i}: CEL expression empty (unsupported selector type?)")
        try:
            programs.append(
                (f"{owner}: selector #{i}", compile_expression(sel.cel.expression, expect_bool=True))
            )
        except CelError as exc:
            raise InputError(f"{owner}: selector #{i}: CEL compile error: {exc.reason}") from None
    return programs


def _selectable(ctx: Context, programs: Programs, dev: int) -> bool | CelError:
    info = ctx.devices[dev]
    if info.binding_conditions and not ctx.gates.binding_and_status:
        return False
    for where, program in programs:
        try:
            if not ctx.cache.evaluate_bool(program, ctx.views[dev]):
                return False
        except CelError as exc:
            return type(exc)(
                f"CEL runtime error: {exc.reason}", expression=exc.expression, device=info.id, where=where
            )
    return True


def _static_reject(ctx: Context, spec: _Spec, dev: int) -> tuple[str | None, dict[str, Fraction] | None]:
    """Checks upstream makes on a selectable device that do not depend on this call's placements.
    Returns (why rejected or None, consumption for multi devices)."""
    info = ctx.devices[dev]
    s, d = ctx.raw[dev]
    consumed: dict[str, Fraction] | None = None
    if ctx.gates.DRAConsumableCapacity:
        missing = sorted(set(spec.capacity) - set(d.capacity))
        if missing:
            return f"lack capacity {', '.join(missing)}", None
        amounts = device_consumption(d.capacity, spec.capacity)
        if amounts is None:
            return "refuse the capacity request (requestPolicy)", None
        if not fits(info.capacity, info.in_use if info.multi else {}, amounts):
            return "have not enough capacity left", None
        if info.multi:
            consumed = amounts
    if d.consumes_counters and not ctx.gates.DRAPartitionableDevices:
        return "consume counters but DRAPartitionableDevices is disabled", None
    if ctx.gates.DRADeviceTaints and not all(tolerated(t, spec.tolerations) for t in d.taints):
        return "have a taint the request does not tolerate", None
    if s.spec.skip_node_operations:
        if not ctx.gates.DRAOptionalNodePreparation:
            return "come from a skipNodeOperations slice but DRAOptionalNodePreparation is disabled", None
        node = ctx.node
        if node is not None and node.known and NODE_FEATURE not in node.declared_features:
            return (
                f"come from a skipNodeOperations slice; node {node.name} does not declare {NODE_FEATURE}",
                None,
            )
    return None, consumed


def _derived(
    ctx: Context, claim_ref: str, spec: _Spec, programs: Programs, dev: int
) -> dict[str, ValueSet] | CelError:
    out: dict[str, ValueSet] = {}
    for attr, program in programs:
        where = f"claim {claim_ref}: request {spec.name}: derived attribute {attr}"
        try:
            value = ctx.cache.evaluate(program, ctx.views[dev])
            out[attr] = derived_value_set(value)
        except CelError as exc:
            return type(exc)(
                f"CEL runtime error: {exc.reason}",
                expression=exc.expression,
                device=ctx.devices[dev].id,
                where=where,
            )
        except ValueError as exc:
            return CelError(str(exc), expression=program.expression, device=ctx.devices[dev].id, where=where)
    return out


def derived_value_set(value: object) -> ValueSet:
    """KEP-6080 results: a scalar (int, bool, string, semver) or a list of them."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    out: set[Value] = set()
    for v in items:
        if isinstance(v, bool):
            out.add(("bool", v))
        elif isinstance(v, int):
            out.add(("int", int(v)))
        elif isinstance(v, str):
            out.add(("string", str(v)))
        elif type(v).__name__ == "Semver":
            out.add(("version", str(v)))
        else:
            raise ValueError(
                f"derived attribute must be a scalar or a list of scalars, got {type(v).__name__}"
            )
    return frozenset(out)


def build_problem(
    cluster: Cluster,
    claims: Sequence[ResourceClaim],
    node: str | None,
    gates: FeatureGates,
    *,
    cache: EvalCache | None = None,
    priorities: Sequence[int] | None = None,
) -> Problem:
    """Precompute one allocation call: `claims` together, for `node`."""
    ctx = build_context(cluster, claims, node, gates, cache)
    alternatives: list[Alternative] = []
    claim_infos: list[ClaimInfo] = []
    constraints: list[ConstraintInfo] = []
    derived_values: dict[tuple[int, int], dict[str, ValueSet]] = {}
    for ci, claim in enumerate(claims):
        ref = f"{claim.metadata.namespace or 'default'}/{claim.metadata.name}"
        requests: list[RequestInfo] = []
        min_devices = 0
        for req_index, (req_name, has_subs, specs) in enumerate(_specs(claim, gates)):
            alt_ids = []
            for spec in specs:
                alt = _alternative(ctx, len(alternatives), ci, req_index, ref, spec, derived_values)
                alternatives.append(alt)
                alt_ids.append(alt.index)
            requests.append(RequestInfo(req_name, tuple(alt_ids), has_subs))
            min_devices += min(alternatives[a].count for a in alt_ids)
        if min_devices > MAX_RESULTS_PER_CLAIM:
            raise AllocationError(
                f"claim {ref}: number of requested devices {min_devices} exceeds the claim limit of "
                f"{MAX_RESULTS_PER_CLAIM}"
            )
        cons_ids = _constraints(ctx, claim, ci, ref, requests, alternatives, derived_values, constraints)
        prio = priorities[ci] if priorities is not None else 0
        claim_infos.append(
            ClaimInfo(
                ci,
                claim.metadata.namespace or "default",
                claim.metadata.name,
                tuple(requests),
                tuple(cons_ids),
                prio,
            )
        )
    return Problem(
        node=node,
        gates=gates,
        devices=tuple(ctx.devices),
        counters=tuple(ctx.counters),
        alternatives=tuple(alternatives),
        claims=tuple(claim_infos),
        constraints=tuple(constraints),
        invalid_pools=tuple(f"{p.driver}/{p.name}: {p.invalid}" for p in ctx.pools.invalid()),
    )


def _alternative(
    ctx: Context,
    index: int,
    ci: int,
    req_index: int,
    claim_ref: str,
    spec: _Spec,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
) -> Alternative:
    owner = f"claim {claim_ref}: request {spec.name}"
    if spec.admin and not ctx.gates.DRAAdminAccess:
        raise InputError(f"{owner}: admin access is requested, but the feature is disabled")
    if not spec.class_name:
        raise InputError(f"{owner}: missing device class name")
    device_class = ctx.cluster.classes.get(spec.class_name)
    if device_class is None:
        raise InputError(f"{owner}: could not retrieve device class {spec.class_name}")
    programs = _selector_programs(f"class {spec.class_name}", device_class.spec.selectors)
    programs += _selector_programs(f"claim {claim_ref}: request {spec.name}", spec.selectors)
    derived_programs: Programs = []
    if ctx.gates.DRADerivedAttributes:
        for d in spec.derived:
            try:
                derived_programs.append((d.name, compile_expression(d.expression)))
            except CelError as exc:
                raise InputError(
                    f"{owner}: derived attribute {d.name}: CEL compile error: {exc.reason}"
                ) from None
    mode: Literal["ExactCount", "All"]
    blocked: str | None = None
    rejected: Counter[str] = Counter()
    if spec.mode in (None, "ExactCount"):
        mode = "ExactCount"
        count = spec.count if spec.count is not None else 1
        candidates = _exact_candidates(
            ctx, index, claim_ref, spec, programs, derived_programs, derived_values, rejected
        )
    elif spec.mode == "All":
        mode = "All"
        candidates, blocked = _all_set(
            ctx, index, owner, claim_ref, spec, programs, derived_programs, derived_values
        )
        count = len(candidates)
    else:
        raise InputError(f"{owner}: unsupported count mode {spec.mode}")
    return Alternative(
        index,
        ci,
        req_index,
        spec.position,
        spec.name,
        spec.class_name,
        mode,
        count,
        spec.admin,
        tuple(t.dump() for t in spec.tolerations),
        tuple(candidates),
        all_blocked=blocked,
        rejected=tuple(sorted(rejected.items())),
    )


def _exact_candidates(
    ctx: Context,
    index: int,
    claim_ref: str,
    spec: _Spec,
    programs: Programs,
    derived_programs: Programs,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
    rejected: Counter[str],
) -> list[Candidate]:
    """Devices in search order that pass every static check; CEL errors kept on the device.
    Why selectable devices were rejected is counted in `rejected`."""
    candidates: list[Candidate] = []
    for dev in range(len(ctx.devices)):
        ok = _selectable(ctx, programs, dev)
        if ok is False:
            continue
        if isinstance(ok, CelError):
            candidates.append(Candidate(dev, None, ok))
            continue
        why, consumed = _static_reject(ctx, spec, dev)
        if why is not None:
            rejected[why] += 1
            continue
        derived = _derived(ctx, claim_ref, spec, derived_programs, dev)
        if isinstance(derived, DRASolverError):
            candidates.append(Candidate(dev, consumed, derived))
            continue
        derived_values[(index, dev)] = derived
        candidates.append(Candidate(dev, consumed))
    return candidates


def _all_set(
    ctx: Context,
    index: int,
    owner: str,
    claim_ref: str,
    spec: _Spec,
    programs: Programs,
    derived_programs: Programs,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
) -> tuple[list[Candidate], str | None]:
    """allocationMode All: every matching device, fixed before the search (§4.3, §4.7).

    Busy devices stay in the set and block the request; devices without room left after
    existing allocations are left out. CEL errors, incomplete and invalid pools are fatal."""
    if ctx.pools.incomplete:
        pid = ctx.pools.incomplete[0]
        raise AllocationError(
            f"{owner}: asks for all devices, but resource pool {pid[0]}/{pid[1]} is currently being updated"
        )
    if ctx.pools.invalid():
        pool = ctx.pools.invalid()[0]
        raise AllocationError(
            f"{owner}: asks for all devices, but resource pool {pool.driver}/{pool.name} is currently invalid"
        )
    candidates: list[Candidate] = []
    blocked: str | None = None
    for dev in range(len(ctx.devices)):
        ok = _selectable(ctx, programs, dev)
        if isinstance(ok, CelError):
            raise ok
        if not ok:
            continue
        info = ctx.devices[dev]
        _, d = ctx.raw[dev]
        if ctx.gates.DRAConsumableCapacity:
            amounts = device_consumption(d.capacity, spec.capacity)
            if amounts is None or not fits(info.capacity, info.in_use if info.multi else {}, amounts):
                continue  # excluded from the All-set (UPSTREAM-SEMANTICS §4.7)
        why, consumed = _static_reject(ctx, spec, dev)
        if why is not None and blocked is None:
            blocked = f"device {info.id}: {why}"
        if info.busy and not spec.admin and blocked is None:
            blocked = f"device {info.id} is already allocated"
        derived = _derived(ctx, claim_ref, spec, derived_programs, dev)
        if isinstance(derived, DRASolverError):
            raise derived
        derived_values[(index, dev)] = derived
        candidates.append(Candidate(dev, consumed))
    return candidates, blocked


def _constraints(
    ctx: Context,
    claim: ResourceClaim,
    ci: int,
    ref: str,
    requests: list[RequestInfo],
    alternatives: list[Alternative],
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
    out: list[ConstraintInfo],
) -> list[int]:
    ids: list[int] = []
    by_name = {alternatives[a].name: a for r in requests for a in r.alternatives}
    by_request = {r.name: r.alternatives for r in requests}
    for i, c in enumerate(claim.spec.devices.constraints):
        field = f"spec.devices.constraints[{i}]"
        if c.match_attribute:
            kind: Literal["match", "distinct"] = "match"
            attribute = c.match_attribute
        elif c.distinct_attribute:
            kind, attribute = "distinct", c.distinct_attribute
        else:
            raise InputError("empty constraint (unsupported constraint type?)", obj=claim.ref, field=field)
        covered: set[int] = set()
        names = c.requests or [r.name for r in requests]
        for name in names:
            if name in by_request:
                covered.update(by_request[name])
            elif name in by_name:
                covered.add(by_name[name])
            else:
                raise InputError(
                    f"constraint names unknown request {name}", obj=claim.ref, field=f"{field}.requests"
                )
        values: dict[tuple[int, int], ValueSet | None] = {}
        for a in covered:
            for cand in alternatives[a].candidates:
                values[(a, cand.device)] = _lookup(
                    ctx, attribute, derived_values.get((a, cand.device), {}), cand.device
                )
        cons = ConstraintInfo(len(out), ci, kind, attribute, frozenset(covered), values)
        out.append(cons)
        ids.append(cons.index)
    return ids


def _lookup(ctx: Context, attribute: str, derived: dict[str, ValueSet], dev: int) -> ValueSet | None:
    """Derived values shadow static attributes; `dom/id` also finds bare `id` of driver `dom`."""
    if attribute in derived:
        return derived[attribute]
    driver = ctx.devices[dev].driver
    _, d = ctx.raw[dev]
    attr = d.attributes.get(attribute)
    if attr is None:
        dom, _, ident = attribute.rpartition("/")
        if dom == driver:
            attr = d.attributes.get(ident)
    return attribute_value_set(attr, ctx.gates) if attr is not None else None
