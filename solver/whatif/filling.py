"""`fill`: how many more replicas of a pod fit, once the pending pods are placed.

Why its own module: it is a plan about a plan — the pending pods are planned and their plan
applied first (as if the `plan -o yaml` output were fed back in), so replicas never displace
them; then replicas of the pod are planned on what is left. It uses the pipeline, so it sits
above it (like the CLI).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..api.cluster import Cluster
from ..api.models import Pod
from ..errors import InputError
from ..pipeline import plan
from ..planning.job import Options
from ..planning.outcome import PlanOutcome
from ..planning.resolve import resolve_units
from ..planning.snapshot import Snapshot

MAX_FILL = 1024
"""`fill` tries at most this many replicas."""


@dataclass
class Fill:
    """How many more replicas of a pod fit: `count` of `tried` placed (`outcome`: their plan)."""

    pod: str
    count: int
    tried: int
    outcome: PlanOutcome

    @property
    def at_limit(self) -> bool:
        """Every replica tried was placed at the largest try: more may fit."""
        return self.count == self.tried

    def summary(self) -> str:
        """`fill: 3 more replicas of ns/pod fit`, `1 more replica ... fits`, `no more ... fit`."""
        more = f" (at least: every one of the {self.tried} tried was placed)" if self.at_limit else ""
        if self.count == 1:
            return f"fill: 1 more replica of {self.pod} fits{more}"
        count = "no" if self.count == 0 else str(self.count)
        return f"fill: {count} more replicas of {self.pod} fit{more}"


def fill(
    cluster: Cluster,
    pod: str | Pod,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    *,
    limit: int = MAX_FILL,
    **changes: Any,
) -> Fill:
    """How many more replicas of `pod` fit once the pending pods are placed.

    The pending pods are planned first and their plan applied (`applied`: as if fed back in),
    so replicas never displace them; then `n` replicas (`<pod>-fill-<i>`) are planned, n
    doubling from 8 up to `limit` until fewer than n are placed. With CP-SAT the count is the
    most that fit (its plan's status says whether that is proven); with the reference, how
    many the scheduler's first fit places."""
    opts = Options.of(options, **changes)
    obj = cluster.pod(pod) if isinstance(pod, str) else pod
    base = cluster
    if resolve_units(cluster, None, None):
        base = applied(cluster, plan(cluster, None, nodes, opts))
    name = obj.namespaced_name
    n = min(8, limit)
    while True:
        reps = replicas(base, obj, n)
        outcome = plan(with_pending(base, reps), reps, nodes, opts)
        if outcome.placed < n or n >= limit:
            return Fill(name, outcome.placed, n, outcome)
        n = min(2 * n, limit)


def replicas(cluster: Cluster, pod: Pod, count: int) -> list[Pod]:
    """`count` copies of `pod`, named `<pod>-fill-<i>`, pending (no nodeName, no status). A
    pod that names a ResourceClaim directly cannot be replicated (the copies would share
    it): an error naming the field."""
    for i, entry in enumerate(pod.spec.resource_claims):
        if entry.resource_claim_name:
            raise InputError(
                "--fill needs a pod whose claims come from ResourceClaimTemplates: its replicas would "
                f"share ResourceClaim {entry.resource_claim_name}",
                obj=pod.ref,
                field=f"spec.resourceClaims[{i}].resourceClaimName",
            )
    base = pod.dump()
    out = []
    for i in range(1, count + 1):
        obj = dict(base)
        meta = dict(obj.get("metadata") or {})
        meta["name"] = f"{pod.metadata.name}-fill-{i}"
        for key in ("uid", "resourceVersion", "ownerReferences"):
            meta.pop(key, None)
        obj["metadata"] = meta
        spec = dict(obj.get("spec") or {})
        spec.pop("nodeName", None)
        obj["spec"] = spec
        obj.pop("status", None)
        out.append(Cluster.from_objects([obj]).pods[(meta.get("namespace") or "default", meta["name"])])
    return out


def with_pending(cluster: Cluster, pods: Sequence[Pod]) -> Cluster:
    """`cluster` with `pods` created, pending, after its own (`Snapshot.create`; a pod of a key
    already there stays): one try's replicas, on a cluster of its own per try, so that the plan
    of a try (`Fill.outcome`) never sees the next try's replicas."""
    after = Snapshot(cluster)
    for p in pods:
        after.create(p)
    return after.cluster


def applied(cluster: Cluster, outcome: PlanOutcome) -> Cluster:
    """`cluster` after the plan: placed pods bound to their nodes, their claims allocated and
    the allocated claims they share reserved for them (what `plan -o yaml` prints, fed back in;
    `planning.snapshot.Snapshot.place`)."""
    after = Snapshot(cluster)
    after.place_all(outcome.pods)
    return after.cluster


__all__ = ["MAX_FILL", "Fill", "applied", "fill", "replicas"]
