"""Static read analysis, device signatures and the per-signature evaluation cache."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, EvalCache, Semver, compile_expression
from dra_solver.errors import CelRuntimeError

G = "gpu.example.com"


def gpu(name: str = "gpu-0", driver: str = G, **attrs: Any) -> DeviceView:
    base: dict[str, Any] = {"model": "a100", "index": 0, "uuid": "GPU-0000"}
    base.update(attrs)
    return DeviceView(
        driver,
        name,
        {G: base, "pci.example.com": {"root": "pci0"}},
        {G: {"memory": Quantity.parse("80Gi")}},
    )


@pytest.mark.parametrize(
    ("expression", "reads"),
    [
        (f'device.attributes["{G}"].model == "a100"', [f"device.attributes[{G}].model"]),
        (f'device.attributes["{G}"]["model"] == "a100"', [f"device.attributes[{G}].model"]),
        (f'has(device.attributes["{G}"].model)', [f"device.attributes[{G}].model"]),
        (f'"model" in device.attributes["{G}"]', [f"device.attributes[{G}].model"]),
        (f'device.attributes["{G}"].?model.orValue("")', [f"device.attributes[{G}].model"]),
        (f'device.capacity["{G}"].memory.isGreaterThan(quantity("1Gi"))', [f"device.capacity[{G}].memory"]),
        ("device.driver", ["device.driver"]),
        ("device.allowMultipleAllocations", ["device.allowMultipleAllocations"]),
        ("device.attributes[device.driver].model", ["device.driver", "device.attributes[<driver>].model"]),
        (f'device.attributes["{G}"].size() > 2', [f"device.attributes[{G}]"]),
        (f'cel.bind(g, device.attributes["{G}"], g.model)', [f"device.attributes[{G}]"]),
        ("device.attributes.exists(d, d == 'x')", ["device.attributes"]),
        ("'x' in device.attributes", ["device.attributes"]),
        ("device.attributes[device.attributes['d'].x].model", ["device.attributes"]),
        ("[device].size() == 1", ["device"]),
        ("cel.bind(d, device, d.driver)", ["device"]),
        ("has(device.driver)", []),
        ("[1, 2].map(device, device * 2).size() == 2", []),
        ("true", []),
    ],
)
def test_read_analysis(expression: str, reads: list[str]) -> None:
    assert sorted(compile_expression(expression).reads.describe()) == sorted(reads)


def test_unread_attributes_and_name_do_not_enter_the_signature() -> None:
    p = compile_expression(f'device.attributes["{G}"].model == "a100"')
    a = gpu("gpu-0", index=0, uuid="GPU-aaaa")
    b = gpu("gpu-7", index=7, uuid="GPU-bbbb")
    assert p.signature(a) == p.signature(b)
    assert p.signature(a) != p.signature(gpu(model="h100"))
    assert p.signature(a) != p.signature(DeviceView(G, "x", {}, {}))  # missing attribute


def test_the_name_is_never_read() -> None:
    """Upstream's device has no name (docs/semantics.md, "KEP-6080 as merged upstream"), so
    devices alike but for their names always share a signature."""
    p = compile_expression("device.driver + string(device.allowMultipleAllocations)")
    assert p.signature(gpu("gpu-0")) == p.signature(gpu("gpu-1"))


def test_signatures_distinguish_value_types() -> None:
    p = compile_expression(f'device.attributes["{G}"].x')
    sigs = {
        p.signature(gpu(x=1)),
        p.signature(gpu(x=True)),
        p.signature(gpu(x="1")),
        p.signature(gpu(x=(1,))),
        p.signature(gpu(x=Semver("1.0.0"))),
        p.signature(gpu(x=Semver("1.0.0+build"))),
    }
    assert len(sigs) == 6
    q = compile_expression(f'device.capacity["{G}"].m')
    one_ki = DeviceView(G, "a", {}, {G: {"m": Quantity.parse("1Ki")}})
    same_value_other_format = DeviceView(G, "b", {}, {G: {"m": Quantity.parse("1024")}})
    assert q.signature(one_ki) != q.signature(same_value_other_format)


def test_full_fallback_signature_covers_everything() -> None:
    p = compile_expression("[device].size() == 1")
    assert p.signature(gpu("a")) != p.signature(gpu("b"))
    assert p.signature(gpu("a")) == p.signature(gpu("a"))
    assert p.signature(gpu("a", uuid="x")) != p.signature(gpu("a", uuid="y"))


def test_eval_cache_evaluates_once_per_signature() -> None:
    p = compile_expression(
        f'device.driver == "{G}" && device.attributes["{G}"].model == "a100" && '
        f'device.capacity["{G}"].memory.isGreaterThan(quantity("40Gi"))'
    )
    cache = EvalCache()
    devices = [gpu(f"gpu-{i}", index=i, uuid=f"GPU-{i}") for i in range(8000)]
    assert all(cache.evaluate_bool(p, d) for d in devices)
    assert cache.stats.misses == 1 and cache.stats.hits == 7999
    assert cache.evaluate_bool(p, gpu(model="h100")) is False
    assert cache.stats.misses == 2


def test_eval_cache_keeps_programs_apart() -> None:
    cache = EvalCache()
    d = gpu()
    assert cache.evaluate(compile_expression(f'device.attributes["{G}"].model'), d) == "a100"
    assert cache.evaluate(compile_expression(f'device.attributes["{G}"].model + "!"'), d) == "a100!"
    assert cache.stats.misses == 2


def test_eval_cache_memoises_errors_naming_each_device() -> None:
    p = compile_expression(f'device.attributes["{G}"].nope')
    cache = EvalCache()
    with pytest.raises(CelRuntimeError) as first:
        cache.evaluate(p, gpu("gpu-0"))
    with pytest.raises(CelRuntimeError) as second:
        cache.evaluate(p, gpu("gpu-1"))
    assert first.value.reason == second.value.reason == "no such key: nope"
    assert first.value.device == f"{G}/gpu-0" and second.value.device == f"{G}/gpu-1"
    assert cache.stats.misses == 1 and cache.stats.hits == 1


def test_invalid_device_never_shares_a_cached_result() -> None:
    p = compile_expression(f'device.attributes["{G}"].model == "a100"')
    cache = EvalCache()
    assert cache.evaluate_bool(p, gpu()) is True
    broken = gpu("gpu-9", version=Semver("not-a-version"))
    with pytest.raises(CelRuntimeError, match="parse semantic version"):
        cache.evaluate_bool(p, broken)


def test_eval_cache_non_bool_selector() -> None:
    p = compile_expression(f'device.attributes["{G}"].model')
    cache = EvalCache()
    for _ in range(2):
        with pytest.raises(CelRuntimeError, match="could not be converted to bool"):
            cache.evaluate_bool(p, gpu())
