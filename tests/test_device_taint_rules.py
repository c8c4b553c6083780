"""DeviceTaintRule (KEP-5055): taints a rule puts on the devices it selects count like the
devices' own taints, for both allocators and the checker (issue #9)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, allocate
from dra_solver.errors import InputError


def rule(name: str, selector: dict[str, Any], effect: str = "NoSchedule", version: str = "v1beta2") -> dict:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "maintenance", "value": "true", "effect": effect},
        },
    }


def gpus(*objs: dict[str, Any]) -> Cluster:
    return Cluster.from_objects(
        [device_class("gpu"), resource_slice("s1", [device("gpu-0"), device("gpu-1")]), *objs]
    )


@pytest.mark.parametrize("version", ["v1beta2", "v1"])
@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_rule_tainted_device_is_not_allocated(allocator: str, version: str) -> None:
    drain = rule("drain-gpu-0", {"driver": "gpu.example.com", "device": "gpu-0"}, version=version)
    c = gpus(drain, claim("c", [request("gpu")]))
    out = allocate(c, node="node-1", allocator=allocator)
    assert out.allocated
    assert [r.device for r in out.allocation("c").devices.results] == ["gpu-1"]


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_rule_over_a_whole_pool_leaves_nothing(allocator: str) -> None:
    c = gpus(rule("drain-pool", {"pool": "s1"}, version="v1alpha3"), claim("c", [request("gpu")]))
    out = allocate(c, node="node-1", allocator=allocator)
    assert not out.allocated and "taint" in (out.reason or "")


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_tolerated_rule_taint_does_not_block(allocator: str) -> None:
    tol = [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    drain = rule("drain-all", {"driver": "gpu.example.com"})
    c = gpus(drain, claim("c", [request("gpu", count=2, tolerations=tol)]))
    assert allocate(c, node="node-1", allocator=allocator).allocated


def test_rule_with_a_class_selector_is_refused_not_ignored() -> None:
    c = gpus(rule("by-class", {"deviceClassName": "gpu"}, version="v1alpha3"), claim("c", [request("gpu")]))
    with pytest.raises(InputError, match="deviceClassName and CEL selectors"):
        allocate(c, node="node-1")
