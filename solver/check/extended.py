"""Extended resources served by DRA (KEP-5004): the pod's special claim asks for what the
pod's containers request.

Why a second reading: the planner builds the special claim in `problem.extended`; this
module reads the pod's `status.extendedResourceClaimStatus` (the plan's, for a pod it places)
and the claim it names, and checks, per request mapping (`pod-extended-resource`):

- the container exists and requests the resource (requests, else limits: whole units);
- the claim has the named request, ExactCount, with `count` equal to that container's request;
- its device class serves the resource: the class whose `spec.extendedResourceName` names it
  (two classes: the newer creationTimestamp, then the lower name), or the class `<c>` of the
  implicit name `deviceclass.resource.kubernetes.io/<c>`.

The special claim is also a claim of the pod: allocated, reserved for it and usable on its
node (`pod_claims`). Only with DRAExtendedResource on.
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import DRA_PREFIX, Container, DeviceClass, ResourceClaim
from .pod_claims import check_claim_of_pod
from .pods import PodPlacement, pod_violation
from .violations import Violation


def _v(pod: str, message: str) -> Violation:
    return pod_violation(pod, "pod-extended-resource", message)


def serving_class(cluster: Cluster, resource: str) -> str | None:
    """The DeviceClass that serves an extended resource name, or None."""
    named = [c for c in cluster.classes.values() if c.spec.extended_resource_name == resource]
    if named:
        newest = max(_stamp(c) for c in named)
        return min(c.metadata.name for c in named if _stamp(c) == newest)
    if resource.startswith(DRA_PREFIX) and resource[len(DRA_PREFIX) :] in cluster.classes:
        return resource[len(DRA_PREFIX) :]
    return None


def _stamp(cls: DeviceClass) -> str:
    """creationTimestamp as RFC 3339 text (compares in time order); '' when unset."""
    return str(cls.metadata.creation_timestamp or "")


def _request_of(container: Container, resource: str) -> int | None:
    res = container.resources
    if res is None:
        return None
    q = res.requests.get(resource) or res.limits.get(resource)
    return q.value() if q is not None else None


def check_extended(cluster: Cluster, p: PodPlacement, claims: dict[str, ResourceClaim]) -> list[Violation]:
    """Every way the pod's special claim differs from its containers' extended requests."""
    status = p.extended
    if status is None:
        return []
    pod = p.pod.namespaced_name
    ns = p.pod.metadata.ns
    ref = f"{ns}/{status.resource_claim_name}"
    claim = claims.get(ref) or cluster.claims.get((ns, status.resource_claim_name))
    what = "status.extendedResourceClaimStatus"
    out = check_claim_of_pod(cluster, p, ref, claim, None, what)
    if claim is None:
        return out
    containers = {c.name: c for c in [*p.pod.spec.init_containers, *p.pod.spec.containers]}
    requests = {r.name: r for r in claim.spec.devices.requests}
    for m in status.request_mappings:
        where = f"{what} maps request {m.request_name} to {m.resource_name} of container {m.container_name}"
        container = containers.get(m.container_name)
        want = _request_of(container, m.resource_name) if container is not None else None
        if want is None:
            out.append(_v(pod, f"{where}, but that container does not request {m.resource_name}"))
            continue
        request = requests.get(m.request_name)
        exact = request.exactly if request is not None else None
        if exact is None:
            out.append(_v(pod, f"{where}, but ResourceClaim {ref} has no such exactly request"))
            continue
        mode = exact.allocation_mode or "ExactCount"
        count = exact.count if exact.count is not None else 1
        if mode != "ExactCount" or count != want:
            out.append(
                _v(pod, f"{where}: the claim asks for {mode} count {count}, the container requests {want}")
            )
        cls = serving_class(cluster, m.resource_name)
        if cls != exact.device_class_name:
            out.append(
                _v(
                    pod,
                    f"{where}: the claim asks for device class {exact.device_class_name}, "
                    f"but {m.resource_name} is served by {cls or 'no DeviceClass'}",
                )
            )
    return out
