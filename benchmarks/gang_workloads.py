"""Issue #19's gang benchmark workload: PodGroups over partly used, partly partitionable GPU nodes.

Why its own module and not `workloads.py`: the gang shapes (PodGroups, Pods, whole-or-partition
requests) are only used here, and keeping them apart keeps concurrent edits to the shared
generators small. Plain `resource.k8s.io/v1` / `scheduling.k8s.io/v1alpha2` dicts, deterministic.

Shape (defaults): 64 nodes x 8 physical GPUs. Even nodes are partitionable, as in
kubernetes#138765: each GPU is a counter set of 2 memory units, published as the whole device
(`gpu-i`, consumes 2) and two halves (`gpu-i-half-0/1`, 1 each); odd nodes publish 8 plain GPUs.
Every node has a running claim holding 0-4 of its whole GPUs. 40 PodGroups of 4-16 pods; every
pod of a gang asks the same 1, 2, 4 or 8 whole GPUs, except in every fourth gang, where each pod
asks one GPU as a `firstAvailable` list: a whole GPU or, as fallback, a half. Every fifth gang
has minCount half its size (the others minCount = size). Far more is asked for than exists, so
the plan decides which gangs run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from benchmarks.workloads import GPU, _class, _node, resource_claim

SIZE = f'device.attributes["{GPU}"].size'
WHOLE = [{"cel": {"expression": f'{SIZE} == "whole"'}}]
HALF = [{"cel": {"expression": f'{SIZE} == "half"'}}]


@dataclass(frozen=True)
class GangShape:
    """One generated PodGroup: what the report prints next to the placements."""

    name: str
    pods: int
    min_count: int
    gpus: int  # whole GPUs per pod; 0 for a whole-or-half pod
    """Whole GPUs each pod asks for; 0 when each pod asks one whole GPU or a half (firstAvailable)."""


def _gpu_slice(node: str, gpus: int, partitionable: bool) -> dict[str, Any]:
    """The node's GPU slice: plain whole GPUs, or whole + two halves per GPU sharing counters."""
    spec: dict[str, Any] = {
        "driver": GPU,
        "nodeName": node,
        "pool": {"name": f"{node}-gpu", "generation": 1, "resourceSliceCount": 1},
    }
    whole = {"size": {"string": "whole"}}
    if not partitionable:
        spec["devices"] = [{"name": f"gpu-{i}", "attributes": whole} for i in range(gpus)]
    else:
        spec["sharedCounters"] = [
            {"name": f"gpu-{i}-mem", "counters": {"memory": {"value": "2"}}} for i in range(gpus)
        ]
        devices: list[dict[str, Any]] = []
        for i in range(gpus):

            def uses(amount: str, i: int = i) -> list[dict[str, Any]]:
                return [{"counterSet": f"gpu-{i}-mem", "counters": {"memory": {"value": amount}}}]

            devices.append({"name": f"gpu-{i}", "attributes": whole, "consumesCounters": uses("2")})
            for h in range(2):
                half = {"size": {"string": "half"}}
                devices.append(
                    {"name": f"gpu-{i}-half-{h}", "attributes": half, "consumesCounters": uses("1")}
                )
        spec["devices"] = devices
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": spec,
    }


def _pod_group(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def _pod(name: str, claim: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpus"}]}}],
            "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}],
            "schedulingGroup": {"podGroupName": group},
        },
    }


def gangs(
    nodes: int = 64,
    gpus_per_node: int = 8,
    groups: int = 40,
    pods: tuple[int, int] = (4, 16),
    sizes: tuple[int, ...] = (1, 2, 4, 8),
    seed: int = 19,
) -> tuple[list[dict[str, Any]], list[GangShape]]:
    """The objects (DeviceClass, Nodes, slices, running claims, PodGroups, claims, Pods) and
    the gangs' shapes; see the module docstring."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(nodes):
        node = f"node-{n:02d}"
        objs += [_node(node), _gpu_slice(node, gpus_per_node, n % 2 == 0)]
        held = rng.randint(0, min(4, gpus_per_node))
        if held:
            running = resource_claim(
                f"running-{node}",
                [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": held, "selectors": WHOLE}}],
            )
            which = sorted(rng.sample(range(gpus_per_node), held))
            results = [
                {"request": "gpu", "driver": GPU, "pool": f"{node}-gpu", "device": f"gpu-{i}"} for i in which
            ]
            running["status"] = {"allocation": {"devices": {"results": results}}}
            objs.append(running)
    shapes: list[GangShape] = []
    for g in range(groups):
        name, size = f"train-{g:02d}", rng.randint(*pods)
        min_count = size // 2 if g % 5 == 4 else size
        gpus = 0 if g % 4 == 3 else rng.choice(sizes)
        shapes.append(GangShape(name, size, min_count, gpus))
        objs.append(_pod_group(name, min_count))
        for p in range(size):
            pod = f"{name}-{p:02d}"
            if gpus:
                request: dict[str, Any] = {
                    "name": "gpu",
                    "exactly": {"deviceClassName": "gpu", "count": gpus, "selectors": WHOLE},
                }
            else:
                request = {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "whole", "deviceClassName": "gpu", "selectors": WHOLE},
                        {"name": "half", "deviceClassName": "gpu", "selectors": HALF},
                    ],
                }
            objs += [resource_claim(f"{pod}-gpus", [request]), _pod(pod, f"{pod}-gpus", name)]
    return objs, shapes


def gangs_placed(shapes: list[GangShape], placed_pods: dict[str, str | None]) -> int:
    """How many gangs have at least minCount pods placed (pod name `default/<gang>-NN`)."""
    count = 0
    for s in shapes:
        got = sum(1 for p in range(s.pods) if placed_pods.get(f"default/{s.name}-{p:02d}"))
        count += got >= s.min_count
    return count
