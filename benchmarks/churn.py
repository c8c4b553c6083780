"""A heterogeneous cluster and its churn, for `Planner.update` (issue 30 §2).

The cluster: Node objects of three kinds — 8-GPU nodes with two NUMA domains and a NIC per
domain (`numa` attributes), 4-GPU nodes, nodes with 2 small accelerators — in the ratio
2:2:1, each with allocatable cpu, memory and pods. Pods (each with its own ResourceClaim)
ask for 1, 2, 4 or 8 GPUs (a quarter of the 2- and 4-GPU ones with `matchAttribute` numa,
so they fit in one NUMA domain), or 1 accelerator; priorities 0-3. Partitionable devices
(counters) are left out: they keep nodes from being independent only where a counter is
shared, and the incremental path does not depend on them.

`churn(pods, fraction, seed)`: which pods to remove (a random sample) and new pods to add
(the same shapes, new names), as `Planner.update` takes them.

`CLUSTERS` and `shaped_churn`: the same churn on the scale curve's generators
(`workloads.mixed_cluster`, `workloads.skewed_cluster`, issue #40 §1), whose pods take their
claims from ResourceClaimTemplates: a removed pod goes alone (its claim is generated), and an
added pod is a copy of a random pod of the cluster (its template and PriorityClass) under a
new name — so no single shape is what the update is tuned on.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from benchmarks.workloads import _class, _slice, mixed_cluster, skewed_cluster

GPU = "gpu.example.com"
ACC = "acc.example.com"
NIC = "nic.example.com"


def _node(name: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "node-kind": kind}},
        "status": {"allocatable": {"cpu": "96", "memory": "768Gi", "pods": "110"}},
    }


def nodes_of(count: int) -> list[dict[str, Any]]:
    """`count` nodes of the three kinds (2:2:1), with their slices."""
    objs: list[dict[str, Any]] = []
    for n in range(count):
        name = f"node-{n:05d}"
        kind = ("gpu8", "gpu8", "gpu4", "gpu4", "acc")[n % 5]
        objs.append(_node(name, kind))
        if kind == "gpu8":
            gpus = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i // 4}}} for i in range(8)]
            objs.append(_slice(f"{name}-gpu", GPU, name, gpus))
            nics = [{"name": f"nic-{i}", "attributes": {"numa": {"int": i}}} for i in range(2)]
            objs.append(_slice(f"{name}-nic", NIC, name, nics))
        elif kind == "gpu4":
            gpus = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": 0}}} for i in range(4)]
            objs.append(_slice(f"{name}-gpu", GPU, name, gpus))
        else:
            objs.append(_slice(f"{name}-acc", ACC, name, [{"name": f"acc-{i}"} for i in range(2)]))
    return objs


def pod_of(index: int, rng: random.Random, prefix: str = "pod") -> list[dict[str, Any]]:
    """One pod and its claim, of a random shape."""
    name = f"{prefix}-{index:05d}"
    kind = rng.choices(["gpu1", "gpu2", "gpu4", "gpu8", "acc"], weights=[4, 3, 2, 1, 2])[0]
    if kind == "acc":
        requests = [{"name": "dev", "exactly": {"deviceClassName": "acc", "count": 1}}]
    else:
        count = int(kind[3:])
        requests = [{"name": "dev", "exactly": {"deviceClassName": "gpu", "count": count}}]
    devices: dict[str, Any] = {"requests": requests}
    if kind in ("gpu2", "gpu4") and rng.random() < 0.25:
        devices["constraints"] = [{"requests": ["dev"], "matchAttribute": f"{GPU}/numa"}]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"{name}-claim", "namespace": "default"},
        "spec": {"devices": devices},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "priority": rng.randint(0, 3),
            "containers": [
                {
                    "name": "main",
                    "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "claims": [{"name": "dev"}]},
                }
            ],
            "resourceClaims": [{"name": "dev", "resourceClaimName": f"{name}-claim"}],
        },
    }
    return [claim, pod]


def heterogeneous(nodes: int, pods: int, seed: int = 30) -> list[dict[str, Any]]:
    """The cluster: DeviceClasses, `nodes` nodes, `pods` pending pods with their claims."""
    rng = random.Random(seed)
    objs = [_class("gpu", GPU), _class("acc", ACC), _class("nic", NIC), *nodes_of(nodes)]
    for p in range(pods):
        objs.extend(pod_of(p, rng))
    return objs


def churn(
    pods: int, fraction: float, seed: int = 31, start: int = 0
) -> tuple[list[tuple[str, str, str]], list[dict[str, Any]]]:
    """Remove `fraction` of the pods `pod-00000`..(random sample) with their claims, and add as
    many new pods (`new-<start>...`): the removals and the objects to add."""
    rng = random.Random(seed)
    count = max(1, round(pods * fraction))
    gone = sorted(rng.sample(range(pods), count))
    remove: list[tuple[str, str, str]] = []
    for p in gone:
        remove += [("Pod", "default", f"pod-{p:05d}"), ("ResourceClaim", "default", f"pod-{p:05d}-claim")]
    add: list[dict[str, Any]] = []
    for i in range(count):
        add.extend(pod_of(start + i, rng, prefix="new"))
    return remove, add


def shaped_churn(
    objects: list[dict[str, Any]], fraction: float, seed: int = 31, start: int = 0
) -> tuple[list[tuple[str, str, str]], list[dict[str, Any]]]:
    """`churn` for a cluster whose Pods name ResourceClaimTemplates (`CLUSTERS`' generators):
    remove `fraction` of its Pods (a random sample; their claims are generated, not objects)
    and add as many copies of random Pods of `objects` (template and PriorityClass kept),
    named `new-<start>...`: the removals and the objects to add."""
    rng = random.Random(seed)
    pods = [o for o in objects if o["kind"] == "Pod"]
    count = max(1, round(len(pods) * fraction))
    gone = sorted(rng.sample(range(len(pods)), count))
    remove = [("Pod", pods[p]["metadata"]["namespace"], pods[p]["metadata"]["name"]) for p in gone]
    add: list[dict[str, Any]] = []
    for i in range(count):
        pod = copy.deepcopy(rng.choice(pods))
        pod["metadata"]["name"] = f"new-{start + i:05d}"
        pod["metadata"]["uid"] = f"uid-new-{start + i:05d}"
        add.append(pod)
    return remove, add


CLUSTERS: dict[str, Callable[[int, int], list[dict[str, Any]]]] = {
    "churn": heterogeneous,
    "mixed": mixed_cluster,
    "skewed": skewed_cluster,
}
"""The re-planning benchmark's clusters by name: this module's own (`heterogeneous`) and the
scale curve's two generators; each called with (nodes, pods)."""


__all__ = ["CLUSTERS", "churn", "heterogeneous", "nodes_of", "pod_of", "shaped_churn"]
