"""Placements: the rules about where pods run, over a whole plan or a whole cluster.

Why a module: the pipeline's final check and `check_cluster` ask the same question — do the
pods the plan places, and the pods already bound, run where the scheduler would let them,
with their claims allocated and reserved for them — and both answer it here, from the raw
objects and the plan's claims, with `pod_nodes`, `pod_claims` and `extended` as the rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..gates import FeatureGates
from .extended import check_extended
from .pod_claims import check_claim_of_pod
from .pod_nodes import check_pod_node
from .pods import PodPlacement, claim_uses, running
from .sharing import check_admin_then_normal
from .violations import Violation


def check_placements(
    cluster: Cluster,
    placed: Sequence[PodPlacement],
    claims: Mapping[str, ResourceClaim] | None = None,
    gates: FeatureGates | None = None,
    *,
    bound: bool = True,
) -> list[Violation]:
    """Every placement rule broken by the pods in `placed` and (`bound`) the cluster's running
    pods not in `placed`. `claims`: the plan's claims by `namespace/name`, which supersede the
    cluster's (the plan allocated them, or reserved claims the cluster had allocated for the
    pods it places). Nothing passed in is modified."""
    gates = gates or FeatureGates()
    overlay = dict(claims or {})
    planned = {p.pod.namespaced_name for p in placed}
    every = list(placed)
    if bound:
        for pod in cluster.pods.values():
            if running(pod) and pod.namespaced_name not in planned:
                status = pod.status.extended_resource_claim_status if pod.status else None
                every.append(PodPlacement(pod, pod.spec.node_name or "", new=False, extended=status))
    out: list[Violation] = []
    for p in every:
        out += check_pod_node(cluster, p)
        for use in claim_uses(cluster, p.pod, overlay, gates):
            what = f"spec.resourceClaims entry {use.entry.name!r}"
            group = use.group.metadata.name if use.group is not None else None
            out += check_claim_of_pod(cluster, p, use.ref, use.claim, group, what)
        if gates.DRAExtendedResource:
            out += check_extended(cluster, p, overlay)
    for call in _calls(cluster, placed, overlay, gates):
        out += check_admin_then_normal(call)
    return out


def _calls(
    cluster: Cluster,
    placed: Sequence[PodPlacement],
    overlay: Mapping[str, ResourceClaim],
    gates: FeatureGates,
) -> list[list[ResourceClaim]]:
    """The allocation calls the plan implies: for each pod it places, in the plan's order, the
    claims the plan allocated (allocated in `overlay`, not in the input) that no earlier pod of
    the plan uses, in the order of the pod's `spec.resourceClaims` — the claims the scheduler
    allocates together when it gets to that pod (docs/semantics.md, "Admin access")."""
    taken: set[str] = set()
    out: list[list[ResourceClaim]] = []
    for p in placed:
        if not p.new:
            continue
        call: list[ResourceClaim] = []
        for use in claim_uses(cluster, p.pod, overlay, gates):
            if use.ref in taken or use.ref not in overlay or _allocated(cluster.claims.get(_key(use.ref))):
                continue
            claim = overlay[use.ref]
            if _allocated(claim):
                taken.add(use.ref)
                call.append(claim)
        if len(call) > 1:
            out.append(call)
    return out


def _key(ref: str) -> tuple[str, str]:
    ns, _, name = ref.partition("/")
    return ns, name


def _allocated(claim: ResourceClaim | None) -> bool:
    return claim is not None and claim.status is not None and claim.status.allocation is not None
