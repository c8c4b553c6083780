"""Tolerations: a request must tolerate every scheduling taint of its device (`taint`).

Why a module: device taints are a rule of their own, with the toleration matching of
docs/semantics.md, "Device taints and tolerations", and only apply with DRADeviceTaints on.
"""

from __future__ import annotations

from ..api.models import DeviceTaint, DeviceToleration, Toleration
from .context import Context
from .keys import Alt, dev_id
from .pools import Dev
from .results import Placed


def tolerates(tol: DeviceToleration | Toleration, key: str, value: str, effect: str) -> bool:
    """docs/semantics.md, "Device taints and tolerations" (and core/v1 ToleratesTaint for
    node taints, the same rule): effect empty or equal; key empty or equal; Exists, or
    Equal/empty with equal value."""
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


def check_taints(ctx: Context, p: Placed, alt: Alt, dev: Dev) -> None:
    """Every NoSchedule / NoExecute taint of the device is tolerated by the request."""
    if not ctx.gates.DRADeviceTaints:
        return
    for taint in [*dev.device.taints, *_from_rules(ctx, dev)]:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint.key, taint.value or "", taint.effect) for t in alt.tolerations):
            ctx.report(
                p.claim_id,
                p.result.request,
                "taint",
                f"device {dev_id(dev.key)} has taint {taint.key}={taint.value or ''}:{taint.effect} "
                "that the request does not tolerate",
            )


def _from_rules(ctx: Context, dev: Dev) -> list[DeviceTaint]:
    """DeviceTaintRules whose driver / pool / device (each when set) name this device."""
    driver, pool, name = dev.key
    out: list[DeviceTaint] = []
    if not ctx.gates.DRADeviceTaintRules:
        return out
    for rule in ctx.cluster.taint_rules.values():
        sel = rule.spec.device_selector
        fields = (sel.driver, sel.pool, sel.device) if sel is not None else (None, None, None)
        if all(want in (None, "", have) for want, have in zip(fields, (driver, pool, name), strict=True)):
            out.append(rule.spec.taint)
    return out
