"""Node resources: the pods on a node fit in its allocatable cpu, memory, pod slots and
extended resources (the scheduler's NodeResourcesFit), read again from the Pod and Node objects.

Why a second reading: `solver.problem.resources` decides where pods may go; this module checks
the finished plan without it. Per node that reports `status.allocatable`, it sums, per
resource, the requests of the pods bound to the node (not Succeeded/Failed) and of the pods the
plan puts there, and compares with allocatable. A pod's request for a resource is
max(app containers + sidecars, max over the other init containers of their own request + the
sidecars started before them), pod-level cpu/memory where set, plus overhead; a container's
request defaults to its limit. Resources compared: cpu (millicores), memory,
ephemeral-storage, hugepages-*, extended resources, and the pod count. Not compared: a core
resource the node does not report (unknown), and the extended resources a pod got through
its DRA extended-resource claim (`served`); an extended resource the node does not report is
0 there.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.cluster import Cluster
from ..api.models import Container, Pod
from ..api.quantity import Quantity
from .violations import Violation

CORE = {"cpu", "memory", "ephemeral-storage", "pods"}


def _units(name: str, q: Quantity) -> int:
    return q.milli_value() if name == "cpu" else q.value()


def _own(c: Container) -> dict[str, int]:
    if c.resources is None:
        return {}
    return {k: _units(k, q) for k, q in {**c.resources.limits, **c.resources.requests}.items()}


def _compared(name: str) -> bool:
    if name in CORE or name.startswith(("hugepages-", "deviceclass.resource.kubernetes.io/")):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def requests_of(pod: Pod) -> dict[str, int]:
    """The pod's request per compared resource, pod slot included."""
    apps = [_own(c) for c in pod.spec.containers]
    inits = [(c.restart_policy == "Always", _own(c)) for c in pod.spec.init_containers]
    names = {k for a in apps for k in a} | {k for _, i in inits for k in i}
    out: dict[str, int] = {}
    for name in names:
        sidecars = peak = 0
        for always, own in inits:
            if always:
                sidecars += own.get(name, 0)
                peak = max(peak, sidecars)
            else:
                peak = max(peak, own.get(name, 0) + sidecars)
        out[name] = max(sum(a.get(name, 0) for a in apps) + sidecars, peak)
    level = pod.spec.resources
    if level is not None:
        for name, q in {**level.limits, **level.requests}.items():
            if name in ("cpu", "memory"):
                out[name] = _units(name, q)
    for name, q in pod.spec.overhead.items():
        out[name] = out.get(name, 0) + _units(name, q)
    out = {k: v for k, v in out.items() if v and _compared(k)}
    out["pods"] = 1
    return out


def _served_by_dra(pod: Pod) -> frozenset[str]:
    """The extended resources a bound pod's special claim serves (its
    status.extendedResourceClaimStatus): they come from devices, not from the node's
    allocatable, as for a pod this plan places (a plan's output fed back as input)."""
    status = pod.status.extended_resource_claim_status if pod.status else None
    return frozenset(m.resource_name for m in status.request_mappings) if status else frozenset()


def check_node_resources(
    cluster: Cluster, placed: Sequence[tuple[Pod, str, frozenset[str]]]
) -> list[Violation]:
    """Every node resource the plan overcommits. `placed`: (pod, its node, the extended
    resources its DRA extended-resource claim serves) for the pods the plan places."""
    on: dict[str, list[tuple[Pod, frozenset[str]]]] = {}
    planned = {p.key for p, _, _ in placed}
    for pod in cluster.pods.values():
        key = pod.key
        phase = pod.status.phase if pod.status else None
        if pod.spec.node_name and phase not in ("Succeeded", "Failed") and key not in planned:
            on.setdefault(pod.spec.node_name, []).append((pod, _served_by_dra(pod)))
    for pod, node, served in placed:
        on.setdefault(node, []).append((pod, served))
    out: list[Violation] = []
    for node, pods in sorted(on.items()):
        obj = cluster.nodes.get(node)
        if obj is None or not obj.status.allocatable:
            continue
        have = {k: _units(k, q) for k, q in obj.status.allocatable.items()}
        used: dict[str, int] = {}
        for pod, served in pods:
            for k, v in requests_of(pod).items():
                if k not in served:
                    used[k] = used.get(k, 0) + v
        for k, v in sorted(used.items()):
            limit = have.get(k)
            if limit is None and (k in CORE or k.startswith("hugepages-")):
                continue
            if v > (limit or 0):
                last = pods[-1][0]
                ref = last.namespaced_name
                why = f"node {node} is overcommitted in {k}: its pods request {v}, allocatable {limit or 0}"
                out.append(Violation(ref, None, "node-resources", f"pod {ref}: {why}"))
    return out
