"""Node resources: what a pod requests of a node's CPU, memory and pod slots, and what a node has.

Why: a plan that fills GPUs but ignores CPU, memory and the pod limit puts pods where the
scheduler never will (its NodeResourcesFit filter). The rules, as upstream applies them
(`k8s.io/component-helpers/resource.PodRequests` and the NodeResourcesFit filter):

- A container requests `resources.requests`; where only `limits` are given for a resource,
  the request is the limit (API defaulting, which a hand-written manifest has not had).
- A pod requests, per resource, max(sum of app containers + sidecars (init containers with
  `restartPolicy: Always`), the largest of each non-sidecar init container plus the sidecars
  started before it); pod-level `spec.resources` replaces cpu and memory where set; then
  `spec.overhead` is added. It also takes one pod slot (`pods`).
- A node has `status.allocatable`; what is free is allocatable minus the requests of the pods
  bound to it (`spec.nodeName`, phase not Succeeded/Failed) and of the pods the plan put there.
- A pod fits when every resource it requests (cpu, memory, ephemeral-storage, hugepages-*,
  extended resources) is at most what is free, and a pod slot is free. A node without
  `status.allocatable` is not limited (its resources are unknown); a core resource (cpu,
  memory, ephemeral-storage, pods, hugepages-*) missing from a node's allocatable is not
  limited either (real nodes always report them), while a missing extended resource is 0 — as
  upstream, where that decides whether DRA serves it (`problem.extended`).

Amounts are integers: cpu in millicores, everything else in units (bytes, counts), rounded up
as upstream's `MilliValue`/`Value`. Messages use the scheduler's words ("Insufficient cpu",
"Too many pods").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..api.models import Container, Node, Pod, is_extended
from ..api.quantity import Quantity
from ..errors import InputError
from .nodealloc import Footprint

Amounts = dict[str, int]

PODS = "pods"
CORE = ("cpu", "memory", "ephemeral-storage")
POD_LEVEL = ("cpu", "memory")
DONE_PHASES = frozenset({"Succeeded", "Failed"})


def amount(name: str, q: Quantity) -> int:
    """A quantity as the scheduler counts it: millicores for cpu, units (rounded up) otherwise."""
    return q.milli_value() if name == "cpu" else q.value()


def is_checked(name: str) -> bool:
    """Whether NodeResourcesFit compares this resource with the node (others are ignored)."""
    return name in CORE or name.startswith("hugepages-") or is_extended(name)


def is_core(name: str) -> bool:
    return name in CORE or name == PODS or name.startswith("hugepages-")


def container_requests(container: Container) -> Amounts:
    """A container's requests, each defaulting to its limit."""
    res = container.resources
    if res is None:
        return {}
    merged = {**res.limits, **res.requests}
    return {k: amount(k, v) for k, v in merged.items()}


def _add(total: Amounts, more: Mapping[str, int]) -> None:
    for k, v in more.items():
        total[k] = total.get(k, 0) + v


def _max(total: Amounts, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > total.get(k, 0):
            total[k] = v


def pod_requests(pod: Pod, dra: Footprint | None = None) -> Amounts:
    """The pod's effective request per resource (without the pod slot); see the module docstring.
    `dra`: what its claims' devices add (KEP-5517, `problem.nodealloc`): each referencing
    container's perContainer share with that container, the rest after the containers' peak."""
    spec = pod.spec
    total: Amounts = {}
    extra = dra.per_container if dra is not None else {}
    names = {c.name for c in (*spec.containers, *spec.init_containers)}
    for c in spec.containers:
        _add(total, container_requests(c))
        _add(total, extra.get(c.name, {}))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for c in spec.init_containers:
        own = container_requests(c)
        _add(own, extra.get(c.name, {}))
        if c.restart_policy == "Always":
            _add(total, own)
            _add(sidecars, own)
            _max(init_peak, sidecars)
        else:
            step = dict(own)
            _add(step, sidecars)
            _max(init_peak, step)
    _max(total, init_peak)
    if dra is not None:
        _add(total, dra.fixed)
        for name, more in extra.items():  # references by containers the pod does not have
            if name not in names:
                _add(total, more)
    if spec.resources is not None:
        level = {**spec.resources.limits, **spec.resources.requests}
        for k in POD_LEVEL:
            if k in level:
                want = amount(k, level[k])
                if dra is not None and not dra.empty and total.get(k, 0) > want:
                    raise InputError(
                        f"pod-level request for {k} is less than its containers' requests plus what "
                        "its devices add (KEP-5517 nodeAllocatableResources): upstream leaves it "
                        "unschedulable on every node",
                        obj=pod.ref,
                        field="spec.resources",
                    )
                total[k] = want
    _add(total, {k: amount(k, v) for k, v in spec.overhead.items()})
    return {k: v for k, v in total.items() if v}


def pod_demand(pod: Pod, dra: Footprint | None = None) -> Amounts:
    """What the pod takes of a node: its checked requests (with what its devices add, `dra`)
    and one pod slot."""
    out = {k: v for k, v in pod_requests(pod, dra).items() if is_checked(k)}
    out[PODS] = 1
    return out


def holds_node(pod: Pod) -> bool:
    """A pod bound to a node that still holds its resources there."""
    phase = pod.status.phase if pod.status else None
    return bool(pod.spec.node_name) and phase not in DONE_PHASES


def allocatable(node: Node | None) -> Amounts | None:
    """The node's allocatable amounts; None when unknown (no Node object, or no allocatable)."""
    if node is None or not node.status.effective_allocatable:
        return None
    return {k: amount(k, v) for k, v in node.status.effective_allocatable.items()}


def node_free(
    node: Node | None, bound: Iterable[Pod], dra: Callable[[Pod], Footprint | None] | None = None
) -> Amounts | None:
    """Allocatable minus what the pods bound to the node request (None: unknown, unlimited);
    `dra` (gate DRANodeAllocatableResources): what a bound pod's devices add
    (`nodealloc.FootprintBook.bound`)."""
    alloc = allocatable(node)
    if alloc is None:
        return None
    free = dict(alloc)
    for pod in bound:
        status = pod.status.extended_resource_claim_status if pod.status else None
        served = {m.resource_name for m in status.request_mappings} if status else set()
        # Extended resources DRA serves (KEP-5004) come from the pod's special claim's devices,
        # not from the node's allocatable.
        take(free, {k: v for k, v in pod_demand(pod, dra(pod) if dra else None).items() if k not in served})
    return free


def shortfalls(demand: Mapping[str, int], free: Mapping[str, int] | None) -> list[str]:
    """The resources `demand` is short of in `free` ([] = it fits), in the order of the
    scheduler's reasons: `pods` first (its `Too many pods`), then each `Insufficient NAME`
    (worded by `reasons.words.insufficient`). The caller leaves out the extended resources
    DRA serves on the node (`problem.extended`)."""
    if free is None:
        return []
    out = []
    if PODS in demand and PODS in free and demand[PODS] > free[PODS]:
        out.append(PODS)
    for name in sorted(demand, key=_order):
        need = demand[name]
        if name == PODS or need <= 0:
            continue
        if name not in free and is_core(name):
            continue
        if need > free.get(name, 0):
            out.append(name)
    return out


def _order(name: str) -> tuple[int, str]:
    return (CORE.index(name), "") if name in CORE else (len(CORE), name)


def take(free: Amounts | None, demand: Mapping[str, int]) -> None:
    """Record `demand` as used in `free` (in place; None: unlimited, nothing to record)."""
    if free is None:
        return
    for k, v in demand.items():
        if k in free:
            free[k] -= v
        elif not is_core(k):
            free[k] = -v


__all__ = [
    "Amounts",
    "allocatable",
    "amount",
    "container_requests",
    "holds_node",
    "is_checked",
    "is_core",
    "is_extended",
    "node_free",
    "pod_demand",
    "pod_requests",
    "shortfalls",
    "take",
]
