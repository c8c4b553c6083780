"""Pods: which pods a check looks at, where each runs, and which claims it uses.

Why a module: every placement rule (`pod_nodes`, `pod_claims`, `extended`) asks the same
questions of the raw Pod objects — is the pod placed by the plan or already bound, on which
node, and which ResourceClaim each `spec.resourceClaims` entry resolves to — and answers
them from the API objects alone, never from the planner's own reading (`problem.pods`),
so a bug there cannot hide here.

A claim entry resolves as the ResourceClaim controller names it: `resourceClaimName`; else
(a template) the PodGroup's generated claim when the entry is one of the pod's PodGroup's
group-level entries (KEP-5729, gates GenericWorkload and DRAWorkloadResourceClaims), else the
name the pod's `status.resourceClaimStatuses` records, else `<pod>-<entry>` (the planner's
name for a claim it generated).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..api.cluster import Cluster
from ..api.models import (
    Pod,
    PodExtendedResourceClaimStatus,
    PodGroup,
    PodResourceClaim,
    ResourceClaim,
)
from ..gates import FeatureGates
from .violations import Violation


@dataclass(frozen=True)
class PodPlacement:
    """A pod on a node, as the plan (or the cluster) has it."""

    pod: Pod
    node: str
    new: bool
    """Placed by the plan (the scheduler's filters apply) rather than already bound."""
    extended: PodExtendedResourceClaimStatus | None = None
    """The pod's KEP-5004 extended-resource claim status (the plan's, else the pod's own)."""


@dataclass(frozen=True)
class ClaimUse:
    """One `spec.resourceClaims` entry of a pod and the claim it resolves to."""

    entry: PodResourceClaim
    ref: str
    """`namespace/name` of the claim."""
    claim: ResourceClaim | None
    """None: no such claim in the plan or the cluster."""
    group: PodGroup | None
    """The PodGroup when the entry is a group-level claim (reserved for the group)."""


def pod_violation(pod: str, kind: str, message: str) -> Violation:
    """A violation of a pod rule, named `namespace/name` (`Pod.namespaced_name`)."""
    return Violation(pod, None, kind, f"pod {pod}: {message}")


def running(pod: Pod) -> bool:
    """Bound to a node and not finished: its node and claims are in use."""
    phase = pod.status.phase if pod.status else None
    return bool(pod.spec.node_name) and phase not in ("Succeeded", "Failed")


def pod_group(cluster: Cluster, pod: Pod, gates: FeatureGates) -> PodGroup | None:
    """The PodGroup whose group-level claims the pod may use (both gates on, group in the input)."""
    ref = pod.spec.scheduling_group
    if ref is None or not (gates.GenericWorkload and gates.DRAWorkloadResourceClaims):
        return None
    return cluster.pod_groups.get((pod.metadata.ns, ref.pod_group_name))


def claim_uses(
    cluster: Cluster, pod: Pod, claims: Mapping[str, ResourceClaim], gates: FeatureGates
) -> list[ClaimUse]:
    """Every claim entry of the pod with the claim it names (`claims`: the plan's, by ref, first)."""
    ns = pod.metadata.ns
    group = pod_group(cluster, pod, gates)
    recorded = {
        s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses if pod.status else [])
    }
    out: list[ClaimUse] = []
    for entry in pod.spec.resource_claims:
        owner = group if group is not None and group.claim_entry(entry) is not None else None
        if entry.resource_claim_name:
            name = entry.resource_claim_name
        elif owner is not None:
            name = owner.generated_claim_name(entry.name)
        else:
            name = recorded.get(entry.name) or f"{pod.metadata.name}-{entry.name}"
        ref = f"{ns}/{name}"
        claim = claims.get(ref) or cluster.claims.get((ns, name))
        out.append(ClaimUse(entry, ref, claim, owner))
    return out


def node_labels(cluster: Cluster, node: str) -> tuple[dict[str, str], bool]:
    """(labels, known): a Node object's labels, else only `kubernetes.io/hostname` (unknown)."""
    obj = cluster.nodes.get(node)
    if obj is None:
        return {"kubernetes.io/hostname": node}, False
    return dict(obj.metadata.labels), True
