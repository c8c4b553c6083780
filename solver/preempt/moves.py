"""`plan --preempt --allow-moves`: which running pods may be re-placed on another node instead
of evicted, and the pod their controller would create for them (docs/semantics.md,
"Preemption", "Moves").

Why a module of its own: the batch model (`preempt.model`) and the checker's move rules
(`check.preemption`) must agree on what a move is, and the rule is one of the input alone:

- a pod is *movable* when it is a candidate victim, has an ownerReference with
  `controller: true` (a ReplicaSet, Job, StatefulSet, ... re-creates it once it is gone; not a
  DaemonSet or a Node, which re-create it on the same node), is
  in no PodGroup (a gang member moved alone could break its gang's placement), and every claim
  it uses comes from one of its ResourceClaimTemplates and is used by no other pod — so the
  re-created pod gets new claims from the same templates, allocated on its new node, while the
  old ones are released with the pod. A pod naming a ResourceClaim directly (standalone or
  shared) is not movable: its devices stay where the claim is, and the claim cannot follow it.
- the *replacement* is the pod as its controller re-creates it: the same name, labels, owner
  and spec without `spec.nodeName`, and a status naming the new claims (`<pod>-<entry>-moved`,
  with a number added when that name is taken), which `problem.pods.pod_claims` then generates
  from the templates. The same name, not a random one: the plan's reader sees which pod moved,
  as a StatefulSet would re-create it.
"""

from __future__ import annotations

from collections.abc import Collection

from ..api.cluster import Cluster
from ..api.models import Pod
from ..reasons import Kind, Reason

SUFFIX = "moved"
FROM_HERE = Reason.of(Kind.MOVES_FROM)
"""Why a replacement may not go on the node its pod leaves (`Unit.blocked`); a node blocked
for another reason keeps that reason, so the counting model can tell the two apart (by kind)."""


def controller_of(pod: Pod) -> str | None:
    """`Kind/name` of the pod's controlling owner (an ownerReference with controller: true)."""
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return f"{ref.kind}/{ref.name}"
    return None


NODE_BOUND = ("DaemonSet", "Node")
"""Controllers that re-create a pod on the same node, never elsewhere: a DaemonSet's pod per
node, and a static pod's mirror (owned by its Node)."""


def not_movable(pod: Pod, releasable: Collection[str], claims: Collection[str]) -> str | None:
    """Why the running `pod` may not be moved, or None when it may. `claims`: the refs
    (`namespace/name`) of the claims it uses; `releasable`: the claims its eviction alone
    releases (no other consumer)."""
    owner = controller_of(pod)
    if owner is None:
        return "it has no controlling owner (ownerReference with controller: true) to re-create it"
    if owner.split("/", 1)[0] in NODE_BOUND:
        return f"its controller {owner} re-creates it on the same node, not elsewhere"
    if pod.spec.scheduling_group is not None:
        return "it belongs to a PodGroup (moving one member alone could break the gang)"
    for i, entry in enumerate(pod.spec.resource_claims):
        if not entry.resource_claim_template_name:
            return (
                f"spec.resourceClaims[{i}] names ResourceClaim {entry.resource_claim_name}: a claim that "
                "is not its own cannot move with it"
            )
    shared = [c for c in claims if c not in releasable]
    if shared:
        return (
            f"its claim {shared[0]} has another consumer too (it stays, and the pod cannot move without it)"
        )
    return None


def replacement(cluster: Cluster, pod: Pod) -> Pod:
    """The pod as its controller re-creates it (module docstring): not bound, each template
    entry naming a new claim that no object of the input has."""
    doc = pod.dump()
    spec = dict(doc.get("spec") or {})
    spec.pop("nodeName", None)
    doc["spec"] = spec
    ns = pod.metadata.ns
    statuses = []
    for entry in pod.spec.resource_claims:
        base = f"{pod.metadata.name}-{entry.name}-{SUFFIX}"
        name, n = base, 1
        while (ns, name) in cluster.claims:
            n += 1
            name = f"{base}-{n}"
        statuses.append({"name": entry.name, "resourceClaimName": name})
    doc["status"] = {"resourceClaimStatuses": statuses} if statuses else {}
    return Pod.model_validate(doc)


__all__ = ["FROM_HERE", "NODE_BOUND", "SUFFIX", "controller_of", "not_movable", "replacement"]
