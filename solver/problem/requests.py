"""Precompute, requests: candidate devices per request and subrequest.

Why a module: this is where each request meets each device — selectors (class first, then
request, stopping at the first false), the static checks (capacity against existing use,
gates, taints, KEP-5945), consumption after requestPolicy rounding, derived attributes —
and where upstream's preparation errors are raised. CEL runtime errors stay on the
candidate they belong to (lazy, as upstream).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from ..api.models import (
    CapacityRequirements,
    DerivedAttribute,
    DeviceSelector,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
)
from ..cel import Program, compile_expression
from ..errors import CelError, DRASolverError, FailedOnNode, InputError, InputRefused
from ..gates import FeatureGates
from ..inventory import rule_taints
from ..reasons import Kind, Reason
from ..reasons.words import in_order, say
from .capacity import FatalCapacityRequest, device_consumption, too_small
from .devices import BuildContext
from .flat import (
    Alternative,
    Candidate,
    Value,
    ValueSet,
    fits,
)
from .taints import DEVICE_HARMLESS, tolerated

Programs = list[tuple[str, Program]]
"""(where, program): a selector's place in messages, or a derived attribute's name."""


NODE_FEATURE = "DraOptionalNodePreparation"
NODE_FEATURES = frozenset({NODE_FEATURE, "DRAOptionalNodeOperations"})
"""The node declared feature KEP-5945 needs: the draft's name, or the one merged in 1.37
(docs/semantics.md, "KEP-5945 as merged upstream")."""
"""KEP-5945: nodes whose kubelet can skip node operations declare this in status.declaredFeatures."""


@dataclass
class RequestSpec:
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


def request_specs(claim: ResourceClaim, gates: FeatureGates) -> list[tuple[str, bool, list[RequestSpec]]]:
    ref = claim.ref
    out: list[tuple[str, bool, list[RequestSpec]]] = []
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
                RequestSpec(
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
                        RequestSpec(
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
            raise InputError(f"{owner}: selector #{i}: CEL compile error: {exc.reason_and_hint}") from None
    return programs


def _selectable(ctx: BuildContext, programs: Programs, dev: int, claim_ref: str, own: int) -> bool | CelError:
    """Whether the device passes every selector, or the CEL runtime error one met: the claim's
    own selectors (`programs[own:]`, after its class's) name the claim (`CelError.claim`)."""
    info = ctx.devices[dev]
    if info.binding_conditions and not ctx.gates.binding_and_status:
        return False
    for i, (where, program) in enumerate(programs):
        try:
            if not ctx.cache.evaluate_bool(program, ctx.views[dev]):
                return False
        except CelError as exc:
            return type(exc)(
                f"CEL runtime error: {exc.reason}",
                expression=exc.expression,
                device=info.id,
                where=where,
                claim=claim_ref if i >= own else "",
            )
    return True


_REFUSES_CAPACITY = Reason.of(Kind.REFUSES_CAPACITY)
_NO_CAPACITY_LEFT = Reason.of(Kind.NO_CAPACITY_LEFT)
_COUNTERS_OFF = Reason.of(Kind.COUNTERS_OFF)
_SKIP_OFF = Reason.of(Kind.SKIP_OFF)
"""Rejections without names: one value each (counted per request, `Alternative.rejected`)."""


@lru_cache(maxsize=1 << 10)
def _taint_fact(key: str, value: str | None, effect: str, rule: str | None) -> Reason:
    """`Kind.DEVICE_TAINT`, one value per taint (a request's rejections count it per device:
    made and hashed once)."""
    return Reason.of(Kind.DEVICE_TAINT, key=key, value=value, effect=effect, rule=rule)


@lru_cache(maxsize=1 << 10)
def _lacking(names: tuple[str, ...]) -> Reason:
    """`Kind.LACKS_CAPACITY`, one value per set of capacities (as `_taint_fact`)."""
    return Reason.of(Kind.LACKS_CAPACITY, names=names)


def _untolerated(ctx: BuildContext, spec: RequestSpec, dev: int) -> Reason | None:
    """Why the device's taints refuse the request: the first taint it does not tolerate, by key
    and effect, and the DeviceTaintRule that puts it there (None: every taint tolerated)."""
    info = ctx.devices[dev]
    _, d = ctx.raw[dev]
    rules = list(ctx.cluster.taint_rules.values()) if ctx.gates.DRADeviceTaintRules else []
    found: list[tuple[DeviceTaint, str | None]] = [(t, None) for t in d.taints]
    for rule in rules:
        found += [(t, rule.metadata.name) for t in rule_taints([rule], info.driver, info.pool, info.name)]
    for taint, rule_name in found:
        if not tolerated(taint, spec.tolerations, DEVICE_HARMLESS):
            return _taint_fact(taint.key, taint.value or None, taint.effect, rule_name)
    return None


def _static_reject(
    ctx: BuildContext, spec: RequestSpec, dev: int, *, existing: bool = True
) -> tuple[Reason | None, dict[str, Fraction] | None, bool]:
    """Checks upstream makes on a selectable device that do not depend on this call's placements.
    Returns (why rejected or None, consumption for multi devices, whether the refusal is one
    upstream makes after the counters: a taint). `existing=False` (an All member) checks the
    capacity against the device's whole value only: the room the existing allocations left is
    checked when the search reaches the member, after its constraints."""
    info = ctx.devices[dev]
    s, d = ctx.raw[dev]
    consumed: dict[str, Fraction] | None = None
    if ctx.gates.DRAConsumableCapacity:
        missing = sorted(set(spec.capacity) - set(d.capacity))
        if missing:
            return _lacking(tuple(missing)), None, False
        amounts = device_consumption(
            d.capacity, spec.capacity, fractional=ctx.gates.DRAFractionalCapacityRange
        )
        if amounts is None:
            return _REFUSES_CAPACITY, None, False
        if not fits(info.capacity, info.in_use if info.multi and existing else {}, amounts):
            small = too_small(info.capacity, info.capacity_format, spec.capacity, amounts)
            return small or _NO_CAPACITY_LEFT, None, False
        if info.multi:
            consumed = amounts
    if d.consumes_counters and not ctx.gates.DRAPartitionableDevices:
        return _COUNTERS_OFF, None, False
    if ctx.gates.DRADeviceTaints:
        untolerated = _untolerated(ctx, spec, dev)
        if untolerated is not None:
            return untolerated, None, True
    if s.spec.skip_node_operations:
        if not ctx.gates.DRAOptionalNodePreparation:
            return _SKIP_OFF, None, False
        node = ctx.node
        if node is not None and node.known and not NODE_FEATURES & set(node.declared_features):
            return Reason.of(Kind.SKIP_UNDECLARED, node=node.name, feature=NODE_FEATURE), None, False
    return None, consumed, False


def _unrepresentable(
    claim_ref: str, spec: RequestSpec, ctx: BuildContext, dev: int, exc: FatalCapacityRequest
) -> InputRefused:
    """The call's error for a capacity request upstream cannot read (docs/semantics.md,
    "Consumable capacity")."""
    return InputRefused(f"claim {claim_ref}, request {spec.name}: device {ctx.devices[dev].id}: {exc}")


def _derived(
    ctx: BuildContext, claim_ref: str, spec: RequestSpec, programs: Programs, dev: int
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
                claim=claim_ref,
            )
        except ValueError as exc:
            device = ctx.devices[dev].id
            return CelError(
                str(exc), expression=program.expression, device=device, where=where, claim=claim_ref
            )
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


Seen = dict[Hashable, tuple[tuple[Candidate, ...], tuple[tuple[Reason, int], ...]]]
"""`build_alternative`'s memo within one Problem: a request's static checks -> its candidates
and why the others were rejected."""


def build_alternative(
    ctx: BuildContext,
    index: int,
    ci: int,
    req_index: int,
    claim_ref: str,
    spec: RequestSpec,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
    seen: Seen | None = None,
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
    own = len(programs)  # the claim's own selectors follow its class's (`_selectable`)
    programs += _selector_programs(f"claim {claim_ref}: request {spec.name}", spec.selectors)
    derived_programs: Programs = []
    if ctx.gates.DRADerivedAttributes:
        for d in spec.derived:
            try:
                derived_programs.append((d.name, compile_expression(d.expression)))
            except CelError as exc:
                raise InputError(
                    f"{owner}: derived attribute {d.name}: CEL compile error: {exc.reason_and_hint}"
                ) from None
    mode: Literal["ExactCount", "All"]
    blocked: Reason | None = None
    fatal: Reason | None = None
    rejected: Counter[Reason] = Counter()
    if spec.mode in (None, "ExactCount"):
        mode = "ExactCount"
        count = spec.count if spec.count is not None else 1
        key = _static_key(spec, programs) if seen is not None and not derived_programs else None
        known = seen.get(key) if seen is not None and key is not None else None
        if known is not None:
            candidates = list(known[0])
            rejected.update(dict(known[1]))
        else:
            candidates = _exact_candidates(
                ctx, index, claim_ref, spec, (programs, own), derived_programs, derived_values, rejected
            )
            if seen is not None and key is not None and all(c.error is None for c in candidates):
                seen[key] = (tuple(candidates), tuple(rejected.items()))
    elif spec.mode == "All":
        mode = "All"
        try:
            candidates, blocked = _all_set(
                ctx, index, owner, claim_ref, spec, (programs, own), derived_programs, derived_values
            )
        except PoolNotReady as exc:  # a per-node failure: this node only (kubernetes#141898)
            candidates, blocked = [], exc.why
            fatal = Reason.of(Kind.NOT_READY, claim_ref, request=spec.name, why=exc.why)
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
        tuple(dict(cfg) for cfg in device_class.spec.config),
        tuple(candidates),
        all_blocked=blocked,
        fatal=fatal,
        rejected=in_order(rejected),
    )


def _static_key(spec: RequestSpec, programs: Programs) -> Hashable:
    """Everything `_exact_candidates` reads of a request without derived attributes, its name
    left out: the selectors (class, then request) as expressions, the capacity asked, the
    tolerations. Why: a claim of many equal requests (32 one-device requests over 64 devices,
    docs/benchmarks.md workload (e)) checked every device once per request. Requests with equal
    keys get equal candidates and rejections; a CEL error names its request, so a list
    holding one is never shared (`build_alternative`)."""
    return (
        spec.class_name,
        tuple(program.expression for _, program in programs),
        tuple(sorted(spec.capacity.items())),
        repr([t.dump() for t in spec.tolerations]),
    )


def _exact_candidates(
    ctx: BuildContext,
    index: int,
    claim_ref: str,
    spec: RequestSpec,
    selectors: tuple[Programs, int],
    derived_programs: Programs,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
    rejected: Counter[Reason],
) -> list[Candidate]:
    """Devices in search order that pass every static check; CEL errors kept on the device.
    Why selectable devices were rejected is counted in `rejected`."""
    programs, own = selectors
    candidates: list[Candidate] = []
    for dev in range(len(ctx.devices)):
        ok = _selectable(ctx, programs, dev, claim_ref, own)
        if ok is False:
            continue
        if isinstance(ok, CelError):
            candidates.append(Candidate(dev, None, ok))
            continue
        try:
            why, consumed, _ = _static_reject(ctx, spec, dev)
        except FatalCapacityRequest as exc:  # aborts the call where the search meets the device
            candidates.append(Candidate(dev, None, _unrepresentable(claim_ref, spec, ctx, dev, exc)))
            continue
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


class PoolNotReady(FailedOnNode):
    """All mode on a node whose pool is incomplete or invalid (docs/semantics.md, "allocationMode
    All"): caught where the alternative is built, which records it as `Alternative.fatal`."""

    def __init__(self, owner: str, why: Reason) -> None:
        super().__init__(f"{owner}: asks for all devices, but {say(why)}")
        self.why = why


def _all_set(
    ctx: BuildContext,
    index: int,
    owner: str,
    claim_ref: str,
    spec: RequestSpec,
    selectors: tuple[Programs, int],
    derived_programs: Programs,
    derived_values: dict[tuple[int, int], dict[str, ValueSet]],
) -> tuple[list[Candidate], Reason | None]:
    """allocationMode All: every matching device, fixed before the search (docs/semantics.md,
    "allocationMode All").

    Busy devices stay in the set and block the request, and so do devices whose room the
    existing allocations took (upstream since kubernetes#140769); a device that could not serve
    the request even unused is left out. CEL errors, incomplete and invalid pools are fatal."""
    programs, own = selectors
    if ctx.pools.incomplete:
        pid = ctx.pools.incomplete[0]
        raise PoolNotReady(owner, Reason.of(Kind.POOL_UPDATING, driver=pid[0], pool=pid[1]))
    if ctx.pools.invalid():
        pool = ctx.pools.invalid()[0]
        raise PoolNotReady(owner, Reason.of(Kind.POOL_NOT_VALID, driver=pool.driver, pool=pool.name))
    candidates: list[Candidate] = []
    blocked: Reason | None = None
    for dev in range(len(ctx.devices)):
        ok = _selectable(ctx, programs, dev, claim_ref, own)
        if isinstance(ok, CelError):
            raise ok
        if not ok:
            continue
        info = ctx.devices[dev]
        _, d = ctx.raw[dev]
        if ctx.gates.DRAConsumableCapacity:
            try:
                amounts = device_consumption(
                    d.capacity, spec.capacity, fractional=ctx.gates.DRAFractionalCapacityRange
                )
            except FatalCapacityRequest as exc:  # upstream's All pre-scan aborts too
                raise _unrepresentable(claim_ref, spec, ctx, dev, exc) from None
            if amounts is None or not fits(info.capacity, {}, amounts):
                continue  # excluded from the All-set (docs/semantics.md, "allocationMode All")
            if info.multi and not fits(info.capacity, info.in_use, amounts) and blocked is None:
                blocked = Reason.of(Kind.DEVICE_FULL, driver=info.driver, pool=info.pool, device=info.name)
        why, consumed, after_counters = _static_reject(ctx, spec, dev, existing=False)
        if why is not None and blocked is None:
            blocked = Reason.of(
                Kind.DEVICE_REFUSED, driver=info.driver, pool=info.pool, device=info.name, why=why
            )
        if info.busy and not spec.admin and blocked is None:
            blocked = Reason.of(Kind.DEVICE_BUSY, driver=info.driver, pool=info.pool, device=info.name)
        derived = _derived(ctx, claim_ref, spec, derived_programs, dev)
        if isinstance(derived, DRASolverError):
            raise derived
        derived_values[(index, dev)] = derived
        # A refused member fails the request only when the search reaches it, at the step of
        # upstream's allocateDevice that refuses it: a gate before the counters, a taint after
        # them — so an earlier member that breaks a claim constraint is an error first.
        candidates.append(Candidate(dev, consumed, refused=why, refused_after_counters=after_counters))
    return candidates, blocked
