"""Gang scheduling (issue #19, KEP-4671): PodGroups with `gang.minCount` placed all or nothing.

Each test is named for the rule it checks; both allocators where the rule applies. The
reference is upstream's PodGroup cycle (pod-at-a-time first fit, never revisited); CP-SAT
decides the gang jointly (`encoders.gangs`)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, plan
from dra_solver.check import check

BOTH = ["reference", "cpsat"]


def pod_group(name: str, min_count: int | None = None, **spec: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def pod(name: str, claims: list[str], group: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def gpu_nodes(nodes: int, gpus: int) -> list[dict[str, Any]]:
    return [
        resource_slice(f"s{n}", [device(f"gpu-{n}-{i}") for i in range(gpus)], node=f"node-{n}")
        for n in range(nodes)
    ]


def gpu_pod(name: str, count: int, group: str | None = None) -> list[dict[str, Any]]:
    return [claim(f"{name}-gpus", [request("gpu", count=count)]), pod(name, [f"{name}-gpus"], group)]


def verify(cluster: Cluster, out: Any) -> None:
    """Every placed pod passes the checker, node by node with earlier nodes' claims in use."""
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    for n in dict.fromkeys(p.node for p in out.pods if p.node is not None):
        mine = [c for p in out.pods if p.node == n for c in p.claims]
        assert check(current, mine, node=n) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


def placed(out: Any) -> dict[str, str | None]:
    return {p.name.split("/", 1)[1]: p.node for p in out.pods}


def issue_example() -> Cluster:
    """Issue #19: a gang of 3 pods x 4 GPUs (minCount 3) and a lone 1-GPU pod, 2 nodes x 4 GPUs."""
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(2, 4), pod_group("train", 3)]
    for i in range(3):
        objs += gpu_pod(f"worker-{i}", 4, "train")
    objs += gpu_pod("lone", 1)
    return Cluster.from_objects(objs)


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_below_min_count_places_none_and_frees_the_lone_pod(allocator: str) -> None:
    cluster = issue_example()
    out = plan(cluster, allocator=allocator)
    got = placed(out)
    assert [got[f"worker-{i}"] for i in range(3)] == [None, None, None]
    assert got["lone"] is not None
    for i in range(3):
        reason = out.pod(f"default/worker-{i}").reason or ""
        assert "PodGroup default/train not placed" in reason and "minCount 3" in reason
    verify(cluster, out)


def kubernetes_138765() -> Cluster:
    """kubernetes#138765 (reproducer in kubernetes PR #140097): two pods, each asking a whole
    device or, as a fallback, half of it, on one partitionable device."""
    whole = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "whole"'}}]
    half = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "half"'}}]
    counters = [{"name": "mem", "counters": {"memory": {"value": "2"}}}]

    def part(name: str, size: str, amount: str) -> dict[str, Any]:
        uses = [{"counterSet": "mem", "counters": {"memory": {"value": amount}}}]
        return device(name, attrs={"size": size}, consumesCounters=uses)

    devices = [part("whole", "whole", "2"), part("half-0", "half", "1"), part("half-1", "half", "1")]
    objs: list[dict[str, Any]] = [
        device_class("gpu"),
        resource_slice("s0", devices, node="node-0", sharedCounters=counters),
        pod_group("pair", 2),
    ]
    for name in ("a", "b"):
        first = [
            {"name": "whole", "deviceClassName": "gpu", "selectors": whole},
            {"name": "half", "deviceClassName": "gpu", "selectors": half},
        ]
        objs += [claim(f"{name}-gpu", [{"name": "gpu", "firstAvailable": first}])]
        objs.append(pod(name, [f"{name}-gpu"], "pair"))
    return Cluster.from_objects(objs)


def test_kubernetes_138765_reference_fails_the_gang_as_upstream() -> None:
    cluster = kubernetes_138765()
    out = plan(cluster, allocator="reference")
    assert placed(out) == {"a": None, "b": None}
    assert "1 of its pods fit" in (out.pod("default/a").reason or "")


def test_kubernetes_138765_cpsat_places_the_gang_jointly() -> None:
    cluster = kubernetes_138765()
    out = plan(cluster, allocator="cpsat")
    assert placed(out) == {"a": "node-0", "b": "node-0"}
    devices = sorted(
        r.device for p in out.pods for c in p.claims for r in c.status.allocation.devices.results
    )
    assert devices == ["half-0", "half-1"]
    verify(cluster, out)
