"""Preemption rules: a plan that evicts running pods, read again from the raw objects
(docs/semantics.md, "Preemption").

Why a second reading: the batch model (`dra_solver.preempt.model`) learns candidates,
priorities and policies from its own resolution; this module judges the finished plan from the
Pod, PriorityClass and ResourceClaim objects alone. Its kinds (`PREEMPTION_KINDS`):

- `preempt-victim`: an evicted pod is a running pod of the input (bound, not finished, not
  already terminating);
- `preempt-unjustified`: an evicted pod has, on its node, a pod the plan places with a strictly
  higher priority whose preemptionPolicy is not Never;
- `preempt-moved`: pods that stay keep their node: a pod the plan places was pending in the
  input (no node), and no evicted pod is placed again;
- `preempt-release`: a claim the plan releases loses exactly the evicted pods from
  `status.reservedFor`, and is deallocated only when no pod using it remains;
- `preempt-freed`: a dedicated device the plan gives a new claim was held in the input only by
  claims the plan deallocates;
- `preempt-move-pod` (`--allow-moves`): a moved pod was a running pod of the input (not
  terminating, not also evicted) with a controlling owner that is not a DaemonSet or a Node
  (those re-create it on the same node), in no PodGroup, whose claims all come
  from its own ResourceClaimTemplates; the plan places it on another node than the one it ran
  on; it is justified there as an eviction would be (`preempt-unjustified`);
- `preempt-move-claims`: a moved pod's claims are new (no claim of the input), and every claim
  it used before is released and deallocated — its old devices are free.
A moved pod is disrupted: `preempt-release` and `preempt-freed` count it as gone from its old
node, and its new placement is checked by `check.placement` like any placed pod's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..gates import FeatureGates
from .pods import claim_uses, running
from .violations import Violation

PREEMPTION_KINDS: tuple[str, ...] = (
    "preempt-victim",
    "preempt-unjustified",
    "preempt-moved",
    "preempt-release",
    "preempt-freed",
    "preempt-move-pod",
    "preempt-move-claims",
)
"""Every violation kind `check_preemption` can report."""


class Placed(Protocol):
    """What the rules read of one pod of the plan (`PodPlan` has it)."""

    @property
    def pod(self) -> Pod | None: ...
    @property
    def node(self) -> str | None: ...
    @property
    def placed(self) -> bool: ...
    @property
    def claims(self) -> list[ResourceClaim]: ...


def priority(cluster: Cluster, pod: Pod) -> int:
    """spec.priority, else its PriorityClass's value, else the global default's (0 without one;
    the lowest of several)."""
    if pod.spec.priority is not None:
        return pod.spec.priority
    name = pod.spec.priority_class_name
    if name and name in cluster.priority_classes:
        return cluster.priority_classes[name].value
    # Two global defaults (refused by the API server, but racing past it): upstream's admission
    # takes the lowest value (scheduling/v1 PriorityClass.globalDefault's documentation).
    return min((pc.value for pc in cluster.priority_classes.values() if pc.global_default), default=0)


def may_preempt(cluster: Cluster, pod: Pod) -> bool:
    """preemptionPolicy (the pod's, else its PriorityClass's, else the global default's: the
    lowest of several, as for `priority`) is not Never."""
    policy = pod.spec.preemption_policy
    name = pod.spec.priority_class_name
    if policy is None and name in cluster.priority_classes:
        policy = cluster.priority_classes[name or ""].preemption_policy
    elif policy is None and not name:
        defaults = [pc for pc in cluster.priority_classes.values() if pc.global_default]
        lowest = min(defaults, key=lambda pc: (pc.value, pc.metadata.name), default=None)
        policy = lowest.preemption_policy if lowest is not None else None
    return policy != "Never"


def _v(pod: str, kind: str, message: str) -> Violation:
    assert kind in PREEMPTION_KINDS, kind
    return Violation(pod, None, kind, f"pod {pod}: {message}")


def check_preemption(
    cluster: Cluster,
    plans: Sequence[Placed],
    evicted: Sequence[str],
    released: Sequence[ResourceClaim],
    gates: FeatureGates,
    moved: Sequence[Placed] = (),
) -> list[Violation]:
    """Every preemption rule the plan breaks. `cluster`: the input; `plans`: the pending pods
    of the plan; `evicted`: `namespace/name` of the pods it evicts; `released`: the claims it
    changes because of them (copies); `moved`: the pods it moves, each as re-created on its new
    node (`--allow-moves`)."""
    out: list[Violation] = []
    pods = {p.namespaced_name: p for p in cluster.pods.values()}
    gone = set(evicted)
    movers = [(p.pod, p.node) for p in moved if p.pod is not None]
    away = gone | {pod.namespaced_name for pod, _ in movers}
    placed = [(p.pod, p.node) for p in plans if p.placed and p.pod is not None]
    for pod, node in placed:
        name = pod.namespaced_name
        if pod.spec.node_name or name in gone:
            out.append(
                _v(
                    name,
                    "preempt-moved",
                    f"was bound to {pod.spec.node_name or 'a node'} (or evicted), placed on {node}",
                )
            )
    out += _moves(cluster, pods, moved, gone, released, gates)
    for name in sorted(away):
        victim = pods.get(name)
        if victim is None or not running(victim) or victim.metadata.deletion_timestamp is not None:
            if name in gone:
                out.append(_v(name, "preempt-victim", "evicted, but it is not a running pod of the input"))
            continue
        prio = priority(cluster, victim)
        by = [
            q
            for q, n in placed
            if n == victim.spec.node_name and priority(cluster, q) > prio and may_preempt(cluster, q)
        ]
        if not by:
            out.append(
                _v(
                    name,
                    "preempt-unjustified",
                    f"{'evicted' if name in gone else 'moved'} from {victim.spec.node_name}, but no pod "
                    f"the plan places there has a priority above {prio} and may preempt",
                )
            )
    out += _releases(cluster, away, released, gates)
    out += _freed(cluster, [*plans, *moved], released)
    return out


def _why_not_movable(p: Placed, before: Pod, evicted: bool) -> list[str]:
    """`preempt-move-pod` of one moved pod (`before`, its running Pod of the input): why it may
    not be moved, or was not moved as a move must be ([] = fine)."""
    out = []
    assert p.pod is not None
    if evicted:
        out.append("both evicted and moved")
    kinds = [r.kind for r in before.metadata.owner_references if r.controller]
    if not kinds or kinds[0] in ("DaemonSet", "Node"):
        out.append("moved, but no controller re-creates it on another node")
    if before.spec.scheduling_group is not None:
        out.append("moved, but it belongs to a PodGroup")
    if not p.placed or p.node is None or p.node == before.spec.node_name:
        out.append(f"moved from {before.spec.node_name}, but placed on {p.node or 'no node'}")
    if p.pod.spec.node_name:
        out.append("the moved pod's new Pod is still bound to its old node")
    for i, entry in enumerate(before.spec.resource_claims):
        if not entry.resource_claim_template_name:
            out.append(f"moved, but spec.resourceClaims[{i}] is not from a template")
    return out


def _moves(
    cluster: Cluster,
    pods: dict[str, Pod],
    moved: Sequence[Placed],
    evicted: set[str],
    released: Sequence[ResourceClaim],
    gates: FeatureGates,
) -> list[Violation]:
    """`preempt-move-pod` and `preempt-move-claims` (module docstring)."""
    out: list[Violation] = []
    deallocated = {c.key for c in released if c.status is None or c.status.allocation is None}
    for p in moved:
        if p.pod is None:
            continue
        name = p.pod.namespaced_name
        before = pods.get(name)
        if before is None or not running(before) or before.metadata.deletion_timestamp is not None:
            out.append(_v(name, "preempt-move-pod", "moved, but it is not a running pod of the input"))
            continue
        out += [_v(name, "preempt-move-pod", why) for why in _why_not_movable(p, before, name in evicted)]
        old = claim_uses(cluster, before, {}, gates)
        for use in old:
            if use.claim is None or use.claim.key not in deallocated:
                out.append(_v(name, "preempt-move-claims", f"moved, but its claim {use.ref} is not released"))
        for claim in p.claims:
            if claim.key in cluster.claims:
                out.append(
                    _v(
                        name,
                        "preempt-move-claims",
                        f"moved with claim {claim.namespaced_name}, a claim of the input (not a new one)",
                    )
                )
    return out


def _users(cluster: Cluster, gates: FeatureGates) -> dict[str, set[str]]:
    """Claim ref -> the running pods of the input that use it."""
    out: dict[str, set[str]] = {}
    for pod in cluster.pods.values():
        if running(pod):
            for use in claim_uses(cluster, pod, {}, gates):
                out.setdefault(use.ref, set()).add(pod.namespaced_name)
    return out


def _releases(
    cluster: Cluster, gone: set[str], released: Sequence[ResourceClaim], gates: FeatureGates
) -> list[Violation]:
    out: list[Violation] = []
    users = _users(cluster, gates)
    for claim in released:
        ref = claim.namespaced_name
        before = cluster.claims.get(claim.key)
        if before is None or before.status is None or before.status.allocation is None:
            out.append(_v(ref, "preempt-release", "released, but the input has no allocation for it"))
            continue
        ns = claim.metadata.ns
        expected = [
            r for r in before.status.reserved_for if not (r.resource == "pods" and f"{ns}/{r.name}" in gone)
        ]
        remain = users.get(ref, set()) - gone
        status = claim.status
        allocated = status is not None and status.allocation is not None
        if allocated and status is not None and status.allocation != before.status.allocation:
            out.append(_v(ref, "preempt-release", "its allocation changed although it stays allocated"))
        if not allocated and (remain or expected):
            left = sorted(remain) or [r.name for r in expected]
            out.append(_v(ref, "preempt-release", f"deallocated, but {', '.join(left)} still use(s) it"))
        if not allocated and status is not None and status.reserved_for:
            out.append(_v(ref, "preempt-release", "deallocated, but status.reservedFor names consumers"))
        if allocated and status is not None and status.reserved_for != expected:
            out.append(
                _v(ref, "preempt-release", "status.reservedFor is not the input's without the evicted pods")
            )
    return out


def _freed(cluster: Cluster, plans: Sequence[Placed], released: Sequence[ResourceClaim]) -> list[Violation]:
    """A dedicated device of a new allocation is held in the input only by claims now deallocated."""
    freed = {c.key for c in released if c.status is None or c.status.allocation is None}
    planned = {c.key for p in plans if p.placed for c in p.claims}
    holder: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for key, claim in cluster.claims.items():
        if key in planned or claim.status is None or claim.status.allocation is None:
            continue
        for r in claim.status.allocation.devices.results:
            if r.share_id is None and not r.admin_access:
                holder.setdefault((r.driver, r.pool, r.device), []).append(key)
    out: list[Violation] = []
    for p in plans:
        if not p.placed:
            continue
        for claim in p.claims:
            alloc = claim.status.allocation if claim.status else None
            if alloc is None:
                continue
            for r in alloc.devices.results:
                if r.share_id is not None or r.admin_access:
                    continue
                held = [k for k in holder.get((r.driver, r.pool, r.device), []) if k not in freed]
                if held:
                    name = p.pod.namespaced_name if p.pod is not None else claim.namespaced_name
                    out.append(
                        _v(
                            name,
                            "preempt-freed",
                            f"claim {claim.namespaced_name} takes device {r.driver}/{r.pool}/{r.device}, "
                            f"still held by {', '.join(f'{ns}/{n}' for ns, n in held)}",
                        )
                    )
    return out


__all__ = ["PREEMPTION_KINDS", "check_preemption", "may_preempt", "priority"]
