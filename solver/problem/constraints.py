"""Precompute, constraints: matchAttribute / distinctAttribute values per placement.

Why a module: a constraint's value for a device depends on the request that places it
(KEP-6080 derived attributes shadow static ones), so values are tabulated per
(alternative, device) for every covered alternative, once, for both allocators.
"""

from __future__ import annotations

from ..api.models import (
    ResourceClaim,
)
from ..errors import InputError
from .devices import BuildContext, attribute_value_set
from .flat import (
    Alternative,
    ConstraintInfo,
    RequestInfo,
    ValueSet,
)
from .kinds import KINDS


def build_constraints(
    ctx: BuildContext,
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
        chosen = [(k.name, getattr(c, k.api_field)) for k in KINDS.values() if getattr(c, k.api_field)]
        if not chosen:
            raise InputError("empty constraint (unsupported constraint type?)", obj=claim.ref, field=field)
        kind, attribute = chosen[0]
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
        static: dict[int, ValueSet | None] = {}  # a device's own value: one per device, not per request
        for a in covered:
            for cand in alternatives[a].candidates:
                derived = derived_values.get((a, cand.device), {})
                if attribute in derived:
                    values[(a, cand.device)] = derived[attribute]
                    continue
                if cand.device not in static:
                    static[cand.device] = _lookup(ctx, attribute, {}, cand.device)
                values[(a, cand.device)] = static[cand.device]
        cons = ConstraintInfo(len(out), ci, kind, attribute, frozenset(covered), values)
        out.append(cons)
        ids.append(cons.index)
    return ids


def _lookup(ctx: BuildContext, attribute: str, derived: dict[str, ValueSet], dev: int) -> ValueSet | None:
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
