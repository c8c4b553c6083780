"""The cluster after a change: placements, evictions and moves applied to a Cluster, in layers.

Why one home: output, preemption, re-planning, explain, what-if and fill each need "the
cluster after" some pods are placed, evicted or moved, and each built it by hand — and the
copies drifted (fill's cluster after a plan left the claims a placed pod shares unreserved,
re-planning's reserved them). A `Snapshot` is that one cluster: each change says what
Kubernetes leaves after it (docs/semantics.md, "Allocation results"; "Preemption" for
evictions), and a caller that tries something and takes it back does so with `fork()` /
`revert()` instead of a copy of its own (the idea of cluster-autoscaler's ClusterSnapshot:
Fork starts a layer, Revert drops it, Commit keeps it).

A Pod the snapshot binds or turns away is written as Kubernetes leaves it, condition included
(the binding subresource's `PodScheduled=True`; the scheduler's `PodScheduled=False /
Unschedulable` with its message), so that the output (`output.objects`) writes the snapshot's
Pods as they are, and every other reader sees the same Pod.

Plain data below the planners: it reads and writes the `api` models only through copies. The
input Cluster and every object in it are never modified — a changed Pod or claim is a copy
that replaces the original in the snapshot's own dicts. `cluster` is a live view (a Cluster
sharing everything with the input but its `pods` and `claims`): it changes as changes are
applied, so a ledger can check each placement against the ones before it without a copy per
placement; callers that keep it must not apply further changes they do not want it to show.
A fork copies the two dicts (O(pods + claims)), so that a revert restores them exactly,
objects and order; nothing else is copied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..api.cluster import Cluster
from ..api.models import Pod, PodStatus, ResourceClaim, ResourceClaimStatus
from ..api.models import PodExtendedResourceClaimStatus as ExtendedStatus
from ..gates import FeatureGates
from ..problem.pods import pod_claims
from .outcome import PodPlan

Key = tuple[str, str]


class Snapshot:
    """A Cluster with changes applied on top (`cluster`), undoable in layers."""

    def __init__(self, cluster: Cluster, gates: FeatureGates | None = None) -> None:
        """`gates` decide which claims a pod uses when it is evicted (`problem.pods.pod_claims`)."""
        self.base = cluster
        self.gates = gates
        # `_identities` maps objects to their input identity for `Cluster.add`; the snapshot's
        # objects are not the input's, so its view starts without one (nothing adds to it).
        self.cluster = replace(cluster, pods=dict(cluster.pods), claims=dict(cluster.claims), _identities={})
        self._layers: list[tuple[dict[Key, Pod], dict[Key, ResourceClaim]]] = []

    # --- layers -------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """How many layers are open (forked and neither reverted nor committed)."""
        return len(self._layers)

    def fork(self) -> None:
        """Start a layer: changes from here on can be dropped by `revert`."""
        self._layers.append((dict(self.cluster.pods), dict(self.cluster.claims)))

    def revert(self) -> None:
        """Drop the top layer: pods and claims exactly as at its `fork` (same objects, same order)."""
        if not self._layers:
            raise ValueError("revert without a fork")
        pods, claims = self._layers.pop()
        self._restore(pods, claims)

    def commit(self) -> None:
        """Keep the top layer's changes: they become part of the layer below (or of the base)."""
        if not self._layers:
            raise ValueError("commit without a fork")
        self._layers.pop()

    def _restore(self, pods: dict[Key, Pod], claims: dict[Key, ResourceClaim]) -> None:
        # In place: whoever holds the live view sees the restored state.
        self.cluster.pods.clear()
        self.cluster.pods.update(pods)
        self.cluster.claims.clear()
        self.cluster.claims.update(claims)

    # --- changes ------------------------------------------------------------------------------

    def allocate(self, claims: Iterable[ResourceClaim]) -> None:
        """Claims as a change leaves them (allocated, reserved, or released): each replaces the
        claim of its key, in its place, or is added after the others (a claim the plan creates)."""
        for c in claims:
            self.cluster.claims[c.key] = c

    def remove(self, claims: Iterable[ResourceClaim]) -> None:
        """The claims of the keys of `claims` taken out of the cluster (none there: nothing
        changes). Why not `evict`'s deallocation: this undoes a placement of the plan's own (a
        pod the caller re-plans or drops, `planners.firstfit.engine._Placing.release`), so its
        claims as the plan allocated them are forgotten, and the placement that allocates them
        again (`allocate`) brings them back."""
        for c in claims:
            self.cluster.claims.pop(c.key, None)

    def bind(self, pod: Pod, node: str, extended: ExtendedStatus | None = None) -> Pod:
        """`pod` bound to `node` as the binding subresource leaves it (pods/binding:
        setPodNodeAndMetadata): a copy with `spec.nodeName` and the condition `PodScheduled=True`
        (no reason or message; one from an earlier attempt, `PodScheduled=False /
        Unschedulable`, is replaced), and with `status.extendedResourceClaimStatus` when DRA
        serves its extended resources; in the place of the pod of its key or added. Returns the copy."""
        status = pod.status if pod.status is not None else PodStatus()
        changes: dict[str, object] = {
            "conditions": _with_scheduled(status, {"type": "PodScheduled", "status": "True"})
        }
        if extended is not None:
            changes["extended_resource_claim_status"] = extended
        spec = pod.spec.model_copy(update={"node_name": node})
        bound = pod.model_copy(update={"spec": spec, "status": status.model_copy(update=changes)})
        self.cluster.pods[pod.key] = bound
        return bound

    def turn_away(self, pod: Pod, message: str) -> Pod:
        """`pod` left pending as the scheduler leaves a pod it cannot place: phase `Pending`
        (unless it has one) and the condition `PodScheduled=False`, reason `Unschedulable`, with
        `message` (replacing one from an earlier attempt); in the place of the pod of its key or
        added. Returns the copy."""
        status = pod.status if pod.status is not None else PodStatus()
        unschedulable = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
        }
        changes = {"phase": status.phase or "Pending", "conditions": _with_scheduled(status, unschedulable)}
        left = pod.model_copy(update={"status": status.model_copy(update=changes)})
        self.cluster.pods[pod.key] = left
        return left

    def place(self, plan: PodPlan) -> None:
        """One placed pod of a plan: its claims allocated, the allocated claims it shares
        reserved for it (`PodPlan.reserved`: `status.reservedFor` names it, the checker's
        `pod-claim-reserved`), its Pod bound to its node. A pod not placed changes nothing."""
        if not plan.placed:
            return
        self.allocate((*plan.claims, *plan.reserved))
        if plan.pod is not None and plan.node is not None:
            self.bind(plan.pod, plan.node, plan.extended.get(plan.name))

    def record(self, plan: PodPlan) -> None:
        """A plan's decision for one pod as the cluster shows it: a placed pod `place`d; a pod
        left out turned away (`turn_away`, the plan's reason as the message) with its claims as
        the plan has them (a template's claims exist once its pod does)."""
        if plan.placed:
            self.place(plan)
            return
        self.allocate(plan.claims)
        if plan.pod is not None:
            self.turn_away(plan.pod, plan.reason or "")

    def place_all(self, plans: Iterable[PodPlan]) -> None:
        """`place` each of `plans` (those not placed change nothing)."""
        for p in plans:
            self.place(p)

    def evict(self, gone: set[str]) -> list[ResourceClaim]:
        """The pods named `gone` (`namespace/name`) deleted, and the allocated claims they used
        changed as the resource claim controller leaves them: `reservedFor` without them,
        deallocated when no bound pod and no other consumer remains (docs/semantics.md,
        "Preemption"). Returns the changed claims (copies), in the cluster's order."""
        pods = self.cluster.pods
        users_of: dict[str, set[str]] = {}  # claim -> the bound pods naming it (one pass over the pods)
        for p in pods.values():
            if p.spec.node_name:
                for c in pod_claims(self.cluster, p, self.gates):
                    users_of.setdefault(c.namespaced_name, set()).add(p.namespaced_name)
        changed: list[ResourceClaim] = []
        for claim in self.cluster.claims.values():
            status = claim.status
            if status is None or status.allocation is None:
                continue
            ns = claim.metadata.ns
            users = users_of.get(claim.namespaced_name, set())
            reserved = {f"{ns}/{r.name}" for r in status.reserved_for if r.resource == "pods"}
            if not (users | reserved) & gone:
                continue
            left = [r for r in status.reserved_for if not (r.resource == "pods" and f"{ns}/{r.name}" in gone)]
            stays = bool(left) or bool(users - gone)
            new_status = status.model_copy(update={"reserved_for": left}) if stays else ResourceClaimStatus()
            changed.append(claim.model_copy(update={"status": new_status}))
        for key in [k for k, p in pods.items() if p.namespaced_name in gone]:
            del pods[key]
        self.allocate(changed)
        return changed

    def move(self, name: str, plan: PodPlan) -> list[ResourceClaim]:
        """Pod `name` moved: evicted (as `evict`), and its re-created Pod (`plan.pod`, another
        name: `preempt.moves`) placed as `plan` says. Returns the claims the eviction changed."""
        released = self.evict({name})
        if plan.pod is not None:
            self.create(plan.pod)
        self.place(plan)
        return released

    def create(self, pod: Pod) -> None:
        """`pod` created, pending (a moved pod's replacement, `preempt.moves`); a pod of its key
        already there stays."""
        self.cluster.pods.setdefault(pod.key, pod)


def _with_scheduled(status: PodStatus, condition: dict[str, str]) -> list[dict[str, object]]:
    """The pod's conditions with `condition` as its one PodScheduled condition, after the others."""
    extra = status.model_extra or {}
    others = [c for c in extra.get("conditions") or [] if c.get("type") != "PodScheduled"]
    return [*others, condition]


__all__ = ["Snapshot"]
