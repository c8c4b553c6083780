"""Selectors: the device a result names must be one its class and request select (`selector`).

Why a module: class selectors, request selectors and the capacity names a request asks
for decide whether a device is a candidate at all; the same test also decides the
All-set of a `count` rule. A CEL error met on the way is itself a `selector` violation,
reported once per (selector, device), and counts as a rejection.
"""

from __future__ import annotations

from .amounts import Consumption
from .context import Context
from .keys import Alt, dev_id
from .pools import Dev
from .results import Placed


def selector_ok(
    ctx: Context, expression: str, dev: Dev, where: str, claim: str, request: str | None
) -> bool | None:
    """True/False for a selector on a device; None (and a `selector` violation) on a CEL error."""
    cached = ctx.cel.selector(expression, dev)
    if isinstance(cached, str):
        seen = (where, expression, dev.key)
        if seen not in ctx.reported_cel:
            ctx.reported_cel.add(seen)
            ctx.report(
                claim,
                request,
                "selector",
                f"{where} CEL expression {expression!r} failed on device {dev_id(dev.key)}: {cached}",
            )
        return None
    return cached


def selects(ctx: Context, alt: Alt, dev: Dev, claim: str, request: str) -> list[str] | None:
    """Why the class and request selectors reject `dev` ([] when they accept it; None: a CEL
    error, which counts as a rejection and is reported as a `selector` violation itself)."""
    why: list[str] = []
    cls = ctx.cluster.classes.get(alt.device_class_name)
    if cls is None:
        return [f"device class {alt.device_class_name!r} does not exist"]
    for i, sel in enumerate(cls.spec.selectors):
        if sel.cel is None:
            why.append(f"class {cls.metadata.name} selector #{i} has no CEL expression")
            continue
        ok = selector_ok(
            ctx, sel.cel.expression, dev, f"class {cls.metadata.name} selector #{i}", claim, request
        )
        if ok is None:
            return None
        if not ok:
            why.append(f"class {cls.metadata.name} selector #{i} {sel.cel.expression!r} is false")
            return why
    for i, sel in enumerate(alt.selectors):
        if sel.cel is None:
            why.append(f"request selector #{i} has no CEL expression")
            continue
        ok = selector_ok(ctx, sel.cel.expression, dev, f"request selector #{i}", claim, request)
        if ok is None:
            return None
        if not ok:
            why.append(f"request selector #{i} {sel.cel.expression!r} is false")
            return why
    return why


def check_selectors(ctx: Context, p: Placed, alt: Alt, dev: Dev) -> None:
    """The class and request selectors accept the device."""
    cid, req = p.claim_id, p.result.request
    for reason in selects(ctx, alt, dev, cid, req) or ():  # None: the CEL error is reported
        ctx.report(cid, req, "selector", f"device {dev_id(dev.key)} does not match: {reason}")


def check_capacity_names(ctx: Context, p: Placed, dev: Dev, cons: Consumption | None) -> None:
    """The device has every capacity the request asks for (DRAConsumableCapacity on)."""
    if cons is not None and cons.lacking:
        ctx.report(
            p.claim_id,
            p.result.request,
            "selector",
            f"device {dev_id(dev.key)} has no capacity {', '.join(cons.lacking)} that the request asks for",
        )
