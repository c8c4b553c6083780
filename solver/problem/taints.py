"""Taints and tolerations, as upstream matches them: device taints against request tolerations
(DRADeviceTaints) and node taints against pod tolerations (core/v1 ToleratesTaint) — one rule.

Why separate: precompute (`requests`) and pod scheduling (`scheduling`) both need it.
"""

from __future__ import annotations

from ..api.models import DeviceTaint, DeviceToleration, Taint, Toleration

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


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


def tolerated(taint: DeviceTaint | Taint, tolerations: list[DeviceToleration] | list[Toleration]) -> bool:
    """Only NoSchedule/NoExecute taints block; they must be tolerated by some toleration."""
    if taint.effect not in BLOCKING_EFFECTS:
        return True
    return any(toleration_matches(t, taint) for t in tolerations)
