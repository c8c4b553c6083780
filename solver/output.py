"""What a plan prints: the Pods as the scheduler leaves them, next to their claims.

Why: the pod -> node mapping of a plan belongs in the output, in the form Kubernetes writes
it, so the output reads (and can be applied) like the cluster after scheduling: a placed pod
gets `spec.nodeName` (as a binding sets it) and, when DRA serves its extended resources,
`status.extendedResourceClaimStatus`; a pod left out gets the `PodScheduled=False` condition
with reason `Unschedulable` and the message, as the scheduler writes it. Input objects are
never modified: each Pod is copied from its dump.
"""

from __future__ import annotations

from typing import Any

from dra_solver.allocators import PodPlan


def pod_after(plan: PodPlan) -> dict[str, Any] | None:
    """The plan's Pod as the scheduler would leave it (None for a pod of plain claims)."""
    if plan.pod is None:
        return None
    obj = plan.pod.dump()
    status: dict[str, Any] = dict(obj.get("status") or {})
    if plan.placed:
        if plan.node is not None:
            obj["spec"] = {**obj.get("spec", {}), "nodeName": plan.node}
        ext = plan.extended.get(plan.name)
        if ext is not None:
            status["extendedResourceClaimStatus"] = ext.dump()
    else:
        others = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        status["phase"] = status.get("phase") or "Pending"
        status["conditions"] = [
            *others,
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": plan.reason or "",
            },
        ]
    if status:
        obj["status"] = status
    return obj


__all__ = ["pod_after"]
