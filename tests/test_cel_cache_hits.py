"""Cache hits read only what they need: no conversion, validity memoised per view.

The per-signature cache is only worth having if a hit is much cheaper than an evaluation:
a signature reads the few raw values its program names plus a per-view validity flag,
and the full conversion of the device happens only on a miss. Upstream's rule that one
invalid attribute fails *every* evaluation on the device must hold for hits too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import dra_solver.cel.device as device_mod
from dra_solver.api.models import Device
from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, EvalCache, Semver, compile_expression
from dra_solver.cel.device import check, prepare
from dra_solver.errors import CelRuntimeError
from dra_solver.gates import FeatureGates
from dra_solver.problem.devices import _split_name, cel_attr_value, device_view

G = "gpu.example.com"
MODEL = f'device.attributes["{G}"].model == "a100"'
EXPRESSIONS = [
    MODEL,  # one attribute read
    f'device.capacity["{G}"].memory.isGreaterThan(quantity("1Gi"))',  # one capacity read
    f'device.attributes["{G}"].model + string(device.attributes["{G}"].index)',  # two reads
    f'device.attributes["{G}"].size()',  # a whole domain
    "device.attributes.exists(d, d == 'pci.example.com')",  # all attributes
    "[device].size() == 1",  # unbounded: the full signature
    "true",  # reads nothing
]


def gpu(name: str = "gpu-0", **attrs: Any) -> DeviceView:
    base: dict[str, Any] = {"model": "a100", "index": 0, "version": Semver("1.2.3")}
    base.update(attrs)
    return DeviceView(
        G, name, {G: base, "pci.example.com": {"root": "pci0"}}, {G: {"memory": Quantity.parse("80Gi")}}
    )


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The refs of the devices converted (``prepare`` -> ``_convert``) while the test runs."""
    seen: list[str] = []
    real = device_mod._convert

    def counting(device: DeviceView) -> device_mod.Prepared:
        seen.append(device.ref)
        return real(device)

    monkeypatch.setattr(device_mod, "_convert", counting)
    return seen


# -- hits do not convert ----------------------------------------------------------------


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_signature_does_not_convert_the_device(expression: str, conversions: list[str]) -> None:
    d = gpu()
    compile_expression(expression).signature(d)
    assert conversions == [] and d._prepared is None


def test_hits_do_not_convert(conversions: list[str]) -> None:
    p = compile_expression(MODEL)
    cache = EvalCache()
    devices = [gpu(f"gpu-{i}", index=i) for i in range(100)]
    assert all(cache.evaluate_bool(p, d) for d in devices)
    assert cache.stats.misses == 1 and cache.stats.hits == 99
    assert conversions == [f"{G}/gpu-0"]  # the one miss, evaluated for real
    assert all(d._prepared is None for d in devices[1:])


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_hits_do_not_convert_for_any_read_plan(expression: str, conversions: list[str]) -> None:
    p = compile_expression(expression)
    cache = EvalCache()
    first, second = gpu("gpu-0"), gpu("gpu-0")  # equal devices, distinct views
    assert cache.evaluate(p, first) == cache.evaluate(p, second) == p.evaluate(gpu("gpu-0"))
    assert cache.stats.hits == 1
    assert second._prepared is None
    assert conversions == [f"{G}/gpu-0"] * 2  # the miss and the direct evaluation


def test_validity_is_checked_once_per_view(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = device_mod._validate

    def counting(device: DeviceView) -> str | None:
        calls.append(device.ref)
        return real(device)

    monkeypatch.setattr(device_mod, "_validate", counting)
    cache = EvalCache()
    d = gpu()
    for e in EXPRESSIONS:
        cache.evaluate(compile_expression(e), d)
        cache.evaluate(compile_expression(e), d)
    compile_expression("device.driver").evaluate(d)
    assert calls == [f"{G}/gpu-0"]


# -- invalid devices still fail on hits ---------------------------------------------------


INVALID = [
    ({"version": Semver("1.0")}, f"attribute {G}/version: parse semantic version"),
    ({"weird": 1.5}, f"attribute {G}/weird: unsupported attribute value"),
    ({"nothing": None}, f"attribute {G}/nothing: unsupported attribute value"),
    ({"big": 2**63}, f"attribute {G}/big: integer value out of int64 range"),
    ({"small": -(2**63) - 1}, f"attribute {G}/small: integer value out of int64 range"),
    ({"mixed": (1, "a")}, f"attribute {G}/mixed: unsupported attribute value: list elements of different"),
    ({"ints": (1, 2**64)}, f"attribute {G}/ints: integer value out of int64 range"),
    ({"vers": (Semver("1.0.0"), Semver("x"))}, f"attribute {G}/vers: parse semantic version"),
    ({"sub": type("S", (str,), {})("x")}, f"attribute {G}/sub: unsupported attribute value"),
]


@pytest.mark.parametrize(("attrs", "reason"), INVALID)
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_cache_hit_on_invalid_device_still_raises(
    expression: str, attrs: dict[str, Any], reason: str
) -> None:
    p = compile_expression(expression)
    cache = EvalCache()
    cache.evaluate(p, gpu("gpu-0"))  # a valid device first: its result must not leak
    for i in (1, 2):  # the second invalid device is a cache hit (same signature, same error)
        broken = gpu(f"gpu-{i}", **attrs)
        with pytest.raises(CelRuntimeError) as info:
            cache.evaluate(p, broken)
        assert info.value.reason.startswith(reason)
        assert info.value.device == f"{G}/gpu-{i}"
        with pytest.raises(CelRuntimeError):  # and again on the same view (a hit as well)
            cache.evaluate_bool(p, broken)
    assert cache.stats.misses == 2 and cache.stats.hits == 3
    direct = pytest.raises(CelRuntimeError, p.evaluate, gpu("gpu-3", **attrs))
    assert direct.value.reason == info.value.reason


def test_invalid_capacity_fails_every_evaluation() -> None:
    caps: dict[str, Any] = {G: {"memory": 80}}  # not a Quantity
    d = DeviceView(G, "gpu-0", {G: {"model": "a100"}}, caps)
    assert check(d) == f"capacity {G}/memory: unsupported capacity value"
    cache = EvalCache()
    cache.evaluate(compile_expression(MODEL), gpu())
    for _ in range(2):
        with pytest.raises(CelRuntimeError, match="unsupported capacity value"):
            cache.evaluate(compile_expression(MODEL), d)


def test_first_invalid_value_in_map_order_is_reported() -> None:
    # plain valid values before, a list (the slow path) in between, two invalid ones after
    attrs: dict[str, Any] = {"first.example.com": {"ok": True}}
    attrs[G] = {"a": "x", "l": ("p", "q"), "v": Semver("bad"), "w": 1.5}
    caps: dict[str, Any] = {G: {"m": "1"}}  # invalid too, but after the attributes
    d = DeviceView(G, "gpu-0", attrs, caps)
    assert check(d) == f"attribute {G}/v: parse semantic version: No Major.Minor.Patch elements found"
    assert prepare(d).error == check(d)
    lists_only = DeviceView(G, "gpu-0", {G: {"l": ("p",), "e": ()}}, {G: {"m": Quantity.parse("1")}})
    assert check(lists_only) is None


# -- the view itself ---------------------------------------------------------------------


def test_view_stays_a_frozen_dataclass() -> None:
    a = DeviceView(G, "gpu-0", {G: {"model": "a100"}}, {})
    b = DeviceView(driver=G, name="gpu-0", attributes={G: {"model": "a100"}}, capacity={})
    compile_expression(MODEL).evaluate(a)  # fills a's memos
    assert a == b and repr(a) == repr(b)
    assert a.allow_multiple_allocations is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "x"  # type: ignore[misc]
    broken: dict[str, Any] = {G: {"model": 1.5}}
    c = dataclasses.replace(a, attributes=broken)
    assert c._prepared is None and check(c) is not None and check(a) is None


# -- device_view (solver.problem) ------------------------------------------------------


def _reference_view(driver: str, device: Device) -> DeviceView:
    """The straightforward construction device_view must equal."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        dom, ident = _split_name(name, driver)
        attrs.setdefault(dom, {})[ident] = cel_attr_value(attr)
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        dom, ident = _split_name(name, driver)
        caps.setdefault(dom, {})[ident] = cap.value
    return DeviceView(driver, device.name, attrs, caps, bool(device.allow_multiple_allocations))


def test_device_view_matches_the_reference_construction() -> None:
    dev = Device.model_validate(
        {
            "name": "gpu-0",
            "allowMultipleAllocations": True,
            "attributes": {
                "zero": {"int": 0},
                "flag": {"bool": False},
                "empty": {"string": ""},
                "version": {"version": "1.3.0"},
                "bad": {"version": "1.0"},
                "other.example.com/model": {"string": "x"},
                "a/b/c": {"int": 3},
                "ints": {"ints": [1, 2]},
                "bools": {"bools": [True]},
                "strings": {"strings": []},
                "versions": {"versions": ["1.0.0", "2.0.0-rc.1"]},
                "none": {},
                f"{G}/late": {"int": 1},
            },
            "capacity": {"memory": {"value": "80Gi"}, "pci.example.com/lanes": {"value": 16}},
        }
    )
    got = device_view(G, dev, FeatureGates())
    want = _reference_view(G, dev)
    assert got == want
    assert list(got.attributes) == list(want.attributes)  # domain order is visible to CEL
    for dom in want.attributes:
        assert list(got.attributes[dom]) == list(want.attributes[dom])
        for k, v in want.attributes[dom].items():
            assert type(got.attributes[dom][k]) is type(v)
    bad = got.attributes[G]["bad"]
    assert isinstance(bad, Semver) and bad.error is not None
    for e in EXPRESSIONS:
        p = compile_expression(e)
        assert pytest.raises(CelRuntimeError, p.evaluate, got).value.reason.startswith(f"attribute {G}/bad")


def test_device_view_shares_parsed_versions() -> None:
    devs = [
        Device.model_validate({"name": f"gpu-{i}", "attributes": {"v": {"version": "9.8.7-rc.1"}}})
        for i in range(3)
    ]
    views = [device_view(G, d, FeatureGates()) for d in devs]
    first = views[0].attributes[G]["v"]
    assert isinstance(first, Semver) and first == Semver("9.8.7-rc.1") and first.pre == ("rc", 1)
    assert all(v.attributes[G]["v"] is first for v in views)
