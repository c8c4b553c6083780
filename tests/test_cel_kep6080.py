"""KEP-6080 (derived attributes) examples evaluate as the KEP describes."""

from __future__ import annotations

import pytest

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, EvalCache, Semver, compile_expression
from dra_solver.errors import CelCompileError


def nvidia(name: str, numa: int, memory: str, memory_gb: int) -> DeviceView:
    return DeviceView(
        "gpu.nvidia.com",
        name,
        {"gpu.nvidia.com": {"numa": numa, "memory_gb": memory_gb, "driverVersion": Semver("550.54.15")}},
        {"gpu.nvidia.com": {"memory": Quantity.parse(memory)}},
    )


def nic(name: str, numa: int, topology: str) -> DeviceView:
    return DeviceView(
        "dra.net",
        name,
        {"dra.net": {"numaNode": numa, "topology": topology, "r1": "pci0", "r2": "pci1"}},
        {},
    )


GPU0 = nvidia("gpu0", 0, "80Gi", 80)
GPU1 = nvidia("gpu1", 1, "40Gi", 40)
ETH0 = nic("eth0", 0, "numa0-pcieDomain1-nic0")
ETH1 = nic("eth1", 1, "numa1-pcieDomain3-nic1")


def test_shared_numa_node_keys_match_across_drivers() -> None:
    gpu_key = compile_expression("device.attributes['gpu.nvidia.com'].numa")
    nic_key = compile_expression("device.attributes['dra.net'].numaNode")
    assert gpu_key.evaluate(GPU0) == nic_key.evaluate(ETH0) == 0
    assert gpu_key.evaluate(GPU1) == nic_key.evaluate(ETH1) == 1


def test_topology_extraction() -> None:
    p = compile_expression("device.attributes['dra.net'].topology.split('-')[0]")
    assert p.evaluate(ETH0) == "numa0"
    assert p.evaluate(ETH1) == "numa1"
    regex = compile_expression("device.attributes['dra.net'].topology.find('pcieDomain[0-9]+')")
    assert regex.evaluate(ETH1) == "pcieDomain3"


def test_capacity_tiering() -> None:
    by_attribute = compile_expression(
        "device.attributes['gpu.nvidia.com'].memory_gb >= 80 ? 'tier-1' : 'tier-2'"
    )
    assert by_attribute.evaluate(GPU0) == "tier-1"
    assert by_attribute.evaluate(GPU1) == "tier-2"
    by_capacity = compile_expression(
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0 ? "large" : "small"'
    )
    assert by_capacity.evaluate(GPU0) == "large"
    assert by_capacity.evaluate(GPU1) == "small"
    assert by_capacity.result_type == "string"


@pytest.mark.parametrize(
    "expression", ["device.name.replace('gpu', '')", "has(device.name)", "device.name == 'gpu-0'"]
)
def test_device_has_no_name_as_upstream(expression: str) -> None:
    """Upstream's `kubernetes.DRADevice` has no `name` (docs/semantics.md, "KEP-6080 as merged
    upstream"): reading it is a compile error, with cel-go's words."""
    with pytest.raises(CelCompileError, match="undefined field 'name'"):
        compile_expression(expression)


def test_list_literal_results() -> None:
    p = compile_expression("[device.attributes['dra.net'].r1, device.attributes['dra.net'].r2]")
    assert p.evaluate(ETH0) == ("pci0", "pci1")
    assert p.result_type == "list(dyn)"


def test_semver_results() -> None:
    p = compile_expression("device.attributes['gpu.nvidia.com'].driverVersion")
    v = p.evaluate(GPU0)
    assert isinstance(v, Semver) and v == Semver("550.54.15")


def test_derived_values_are_cached_per_signature() -> None:
    p = compile_expression("device.attributes['gpu.nvidia.com'].numa")
    cache = EvalCache()
    gpus = [nvidia(f"gpu{i}", i % 2, "80Gi", 80) for i in range(64)]
    assert [cache.evaluate(p, g) for g in gpus] == [i % 2 for i in range(64)]
    assert cache.stats.misses == 2
