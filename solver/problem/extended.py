"""Extended resources served by DRA devices (KEP-5004, gate DRAExtendedResource).

Why: most GPU workloads still ask `nvidia.com/gpu: 1` in their container resources. With
KEP-5004 a DeviceClass can serve such a request: the scheduler then allocates devices of that
class in one special ResourceClaim per pod. The rules, as upstream's scheduler applies them:

- Mapping (resource name -> class): a class serves `spec.extendedResourceName`; two classes
  naming the same resource: the newer (creationTimestamp), then the lower name. Every class
  also serves its implicit name `deviceclass.resource.kubernetes.io/<class>`.
- Per node: a mapped resource is served by DRA when the node's allocatable for it is 0 or
  absent; a node that advertises it (allocatable > 0) serves it by device plugin (counted as
  a node resource, `problem.resources`); an unmapped resource the node does not advertise does
  not fit ("Insufficient <name>").
- The special claim: one ExactCount request per container (init containers first, then app
  containers, indexed together) and DRA-served resource, `count` = that container's request,
  named `container-<i>-request-<j>` (j = the resource's index among the container's sorted
  request names), requests in name order; annotation
  `resource.kubernetes.io/extended-resource-claim: "true"`, the pod as controller owner.
  Upstream generates the name from `<pod>-extended-resources-`; the random suffix is left out
  here for reproducible output (as for claims from templates, `problem.pods`).
- The pod's `status.extendedResourceClaimStatus` names the claim and maps each request back to
  its container and resource.

Upstream quirk not reproduced: when a pod has two mapped resources and a node serves one by
device plugin and the other by DRA, upstream's claim also asks DRA for the device-plugin one;
here only the DRA-served ones are in the claim (the device-plugin one is counted once, as a
node resource).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..api.models import (
    DRA_PREFIX,
    DeviceClass,
    Pod,
    PodExtendedResourceClaimStatus,
    ResourceClaim,
    is_extended,
)
from .resources import Amounts, container_requests

CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def class_mapping(classes: Mapping[str, DeviceClass]) -> dict[str, str]:
    """Extended resource name -> the DeviceClass that serves it."""
    explicit: dict[str, DeviceClass] = {}
    for cls in classes.values():
        name = cls.spec.extended_resource_name
        if not name:
            continue
        have = explicit.get(name)
        if have is None or _newer(cls, have):
            explicit[name] = cls
    out = {r: c.metadata.name for r, c in sorted(explicit.items())}
    for name in sorted(classes):
        out.setdefault(DRA_PREFIX + name, name)
    return out


def _newer(a: DeviceClass, b: DeviceClass) -> bool:
    """a wins over b: later creationTimestamp (RFC 3339 strings order as times), then lower name."""
    ta, tb = str(a.metadata.creation_timestamp or ""), str(b.metadata.creation_timestamp or "")
    if ta != tb:
        return ta > tb
    return a.metadata.name < b.metadata.name


def extended_requests(requests: Mapping[str, int]) -> Amounts:
    """The extended resources among a pod's effective requests."""
    return {k: v for k, v in requests.items() if v > 0 and is_extended(k)}


def dra_served(
    requests: Mapping[str, int], mapping: Mapping[str, str], allocatable: Mapping[str, int] | None
) -> tuple[str, ...]:
    """The pod's extended resources that DRA serves on a node with this allocatable (None:
    unknown, so nothing advertised), in name order."""
    return tuple(
        r
        for r in sorted(extended_requests(requests))
        if r in mapping and not (allocatable is not None and allocatable.get(r, 0) > 0)
    )


def special_claim(
    pod: Pod, served: Iterable[str], mapping: Mapping[str, str]
) -> tuple[ResourceClaim, PodExtendedResourceClaimStatus]:
    """The pod's extended-resource claim for the DRA-served resources, and the pod status that
    names it."""
    wanted = set(served)
    ns = pod.metadata.ns
    name = f"{pod.metadata.name}-extended-resources"
    requests: list[dict[str, object]] = []
    mappings: list[dict[str, str]] = []
    for i, c in enumerate([*pod.spec.init_containers, *pod.spec.containers]):
        own = container_requests(c)
        keys = sorted(own)
        for r in sorted(wanted & set(own)):
            if own[r] <= 0:
                continue
            req = f"container-{i}-request-{keys.index(r)}"
            requests.append(
                {
                    "name": req,
                    "exactly": {
                        "deviceClassName": mapping[r],
                        "allocationMode": "ExactCount",
                        "count": own[r],
                    },
                }
            )
            mappings.append({"containerName": c.name, "resourceName": r, "requestName": req})
    requests.sort(key=lambda r: str(r["name"]))
    owner: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod.metadata.name,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    if pod.metadata.uid:
        owner["uid"] = pod.metadata.uid
    claim = ResourceClaim.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": name,
                "namespace": ns,
                "generateName": f"{pod.metadata.name}-extended-resources-",
                "annotations": {CLAIM_ANNOTATION: "true"},
                "ownerReferences": [owner],
            },
            "spec": {"devices": {"requests": requests}},
        }
    )
    status = PodExtendedResourceClaimStatus.model_validate(
        {"resourceClaimName": name, "requestMappings": mappings}
    )
    return claim, status


__all__ = [
    "CLAIM_ANNOTATION",
    "class_mapping",
    "dra_served",
    "extended_requests",
    "special_claim",
]
