"""Pod claims: every claim of a placed or bound pod is allocated, reserved for it, and
usable on its node.

Why a second reading: the planner joins pods sharing a claim (`planning.resolve.join_shared`) and
writes `status.reservedFor` (`results.with_reservations`); this module checks the outcome
from the claims themselves, so a pod placed away from its devices or a claim left unreserved
cannot slip through:

- `pod-claim-allocated`: each `spec.resourceClaims` entry resolves (`pods.claim_uses`) to a
  claim that exists and has `status.allocation`.
- `pod-claim-reserved`: the claim's `status.reservedFor` names the pod (resource `pods`, its
  name, and its uid when both are known) — or, for a PodGroup's group-level claim (KEP-5729),
  the PodGroup (resource `podgroups`).
- `pod-claim-node`: the allocation's `nodeSelector`, when set, selects the pod's node. Pods
  sharing a claim (by name, or a group-level claim) each pass this test, so node-local devices
  keep them all on the one node the claim names.
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from .pods import PodPlacement, node_labels, pod_violation
from .scopes import selector_matches
from .violations import Violation


def check_claim_of_pod(
    cluster: Cluster, p: PodPlacement, ref: str, claim: ResourceClaim | None, group: str | None, what: str
) -> list[Violation]:
    """The three rules for one claim of one pod; `group`: the PodGroup name of a group-level
    claim (reserved for the group, not the pod); `what`: how the pod names the claim."""
    pod = p.pod.namespaced_name
    if claim is None:
        return [
            pod_violation(
                pod, "pod-claim-allocated", f"{what} names ResourceClaim {ref}, which does not exist"
            )
        ]
    allocation = claim.status.allocation if claim.status is not None else None
    if allocation is None:
        return [
            pod_violation(
                pod,
                "pod-claim-allocated",
                f"{what}: ResourceClaim {ref} is not allocated (no status.allocation)",
            )
        ]
    out: list[Violation] = []
    reserved = claim.status.reserved_for if claim.status is not None else []
    if group is not None:
        ok = any(c.resource == "podgroups" and c.name == group for c in reserved)
        whom = f"PodGroup {group}"
    else:
        uid = p.pod.metadata.uid or ""
        ok = any(
            c.resource == "pods" and c.name == p.pod.metadata.name and (not uid or not c.uid or c.uid == uid)
            for c in reserved
        )
        whom = "the pod"
    if not ok:
        names = ", ".join(f"{c.resource}/{c.name}" for c in reserved) or "nobody"
        out.append(
            pod_violation(
                pod,
                "pod-claim-reserved",
                f"{what}: ResourceClaim {ref} is not reserved for {whom} (reservedFor: {names})",
            )
        )
    selector = allocation.node_selector
    if selector is not None:
        labels, _ = node_labels(cluster, p.node)
        if not selector_matches(selector, p.node, labels):
            out.append(
                pod_violation(
                    pod,
                    "pod-claim-node",
                    f"{what}: ResourceClaim {ref} is allocated for other nodes: "
                    f"its status.allocation.nodeSelector does not select node {p.node}",
                )
            )
    return out
