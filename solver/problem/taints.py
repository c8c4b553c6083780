"""Taints and tolerations, as upstream matches them: device taints against request tolerations
(DRADeviceTaints) and node taints against pod tolerations (core/v1 ToleratesTaint) — one rule.

Why separate: precompute (`requests`) and pod scheduling (`scheduling`) both need it.
"""

from __future__ import annotations

from ..api.models import DeviceTaint, DeviceToleration, Taint, Toleration

NODE_HARMLESS = ("PreferNoSchedule",)
"""The node taint effect that blocks nothing (it only scores)."""
DEVICE_HARMLESS = ("None",)
"""The device taint effect that blocks nothing (informational, DRADeviceTaints)."""


def toleration_matches(tol: DeviceToleration | Toleration, taint: DeviceTaint | Taint) -> bool:
    """Effect empty or equal; key empty or equal; Exists, or Equal/empty with equal value."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (tol.value or "") == (taint.value or "")


def tolerated(
    taint: DeviceTaint | Taint,
    tolerations: list[DeviceToleration] | list[Toleration],
    harmless: tuple[str, ...] = NODE_HARMLESS,
) -> bool:
    """Every effect but the `harmless` ones blocks (NoSchedule, NoExecute, and an effect the API
    server refuses — a newer version's, a typo: counted as blocking, so what does not tolerate
    it is kept off rather than the taint ignored or its object left out; docs/semantics.md,
    "Messy clusters: what one bad object costs (issue #39)"); it must be tolerated by some
    toleration."""
    if taint.effect in harmless:
        return True
    return any(toleration_matches(t, taint) for t in tolerations)
