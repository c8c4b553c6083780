"""The ``device`` variable: upstream lookup semantics, has(), invalid attributes, KEP-5491 lists."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, Semver, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DRIVER = "dra.example.com"


def gpu(**attrs: Any) -> DeviceView:
    return DeviceView(
        driver=DRIVER,
        name="gpu-0",
        attributes={DRIVER: attrs, "other.example.com": {"name": True}},
        capacity={DRIVER: {"memory": Quantity.parse("1Mi")}},
    )


def ev(expression: str, device: DeviceView | None = None) -> Any:
    return compile_expression(expression).evaluate(device or gpu(model="a100", cores=4))


def err(expression: str, device: DeviceView | None = None) -> str:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression, device)
    return info.value.reason


# -- fields ----------------------------------------------------------------------------


def test_driver_name_and_allow_multiple_allocations() -> None:
    d = DeviceView(DRIVER, "gpu-7", {}, {}, allow_multiple_allocations=True)
    assert ev("device.driver", d) == DRIVER
    assert ev("device.allowMultipleAllocations", d) is True
    assert ev("device.allowMultipleAllocations == false", DeviceView(DRIVER, "x", {}, {})) is True


def test_empty_driver_name() -> None:
    assert ev('device.driver == ""', DeviceView("", "x", {}, {})) is True


def test_unknown_device_field_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match="undefined field 'model'"):
        compile_expression("device.model")


def test_attribute_lookup_by_field_and_by_index() -> None:
    assert ev(f'device.attributes["{DRIVER}"].model') == "a100"
    assert ev(f'device.attributes["{DRIVER}"]["model"]') == "a100"
    assert ev('device.attributes["other.example.com"].name') is True


def test_capacity_values_are_quantities() -> None:
    q = ev(f'device.capacity["{DRIVER}"].memory')
    assert isinstance(q, Quantity) and q == Quantity.parse("1Mi")
    assert ev(f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1Ki"))') is True


# -- upstream missing-domain / missing-attribute behaviour ---------------------------------


def test_unknown_domain_is_an_empty_map() -> None:
    assert ev('device.attributes["no-such-domain"]') == {}
    assert ev('"model" in device.attributes["x.com"]') is False
    assert ev('device.attributes["x.com"].size()') == 0
    assert ev('device.capacity["x.com"] == {}') is True


def test_domain_presence_is_real_presence() -> None:
    assert ev('"no-such-domain" in device.attributes') is False
    assert ev(f'"{DRIVER}" in device.attributes') is True
    assert ev('device.attributes.exists_one(x, x == "dra.example.com")') is True


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        f'device.attributes["{DRIVER}"].noSuchAttr',
        f'device.capacity["{DRIVER}"]["noSuchAttr"]',
    ],
)
def test_unknown_id_is_a_runtime_error(expression: str) -> None:
    assert err(expression) == "no such key: noSuchAttr"


def test_runtime_error_names_expression_and_device() -> None:
    with pytest.raises(CelRuntimeError) as info:
        ev(f'device.attributes["{DRIVER}"].nope')
    assert info.value.device == f"{DRIVER}/gpu-0"
    assert info.value.expression == f'device.attributes["{DRIVER}"].nope'
    assert "no such key: nope" in str(info.value)


def test_has_macro() -> None:
    assert ev(f'has(device.attributes["{DRIVER}"].model)') is True
    assert ev(f'has(device.attributes["{DRIVER}"].nope)') is False
    assert ev('has(device.attributes["x.com"].model)') is False
    assert ev("has(device.driver)") is True
    # upstream's domain map answers every lookup, so presence of a domain field is true
    assert ev("has(device.attributes.nodomain)") is True


def test_has_requires_a_field_selection() -> None:
    with pytest.raises(CelCompileError, match="invalid argument to has"):
        compile_expression('has(device.attributes["d"])')


def test_safe_patterns() -> None:
    assert ev(f'"nope" in device.attributes["{DRIVER}"] && device.attributes["{DRIVER}"].nope') is False
    assert ev(f'device.attributes["{DRIVER}"].?nope.orValue("dflt")') == "dflt"
    assert ev(f'device.attributes["{DRIVER}"].?model.orValue("dflt")') == "a100"
    assert ev(f'device.attributes["{DRIVER}"][?"cores"].value()') == 4
    assert (
        ev(f'cel.bind(dra, device.attributes["{DRIVER}"], dra.model + "-" + string(dra.cores))') == "a100-4"
    )


def test_bind_may_shadow_device() -> None:
    assert ev("cel.bind(device, 5, device + 1)") == 6
    assert ev("[1, 2].map(device, device * 2)") == (2, 4)


# -- attribute values --------------------------------------------------------------------


def test_attribute_value_types() -> None:
    d = gpu(i=7, b=False, s="x", v=Semver("1.2.3"))
    assert ev(f'device.attributes["{DRIVER}"].i + 1', d) == 8
    assert ev(f'!device.attributes["{DRIVER}"].b', d) is True
    assert ev(f'device.attributes["{DRIVER}"].s + "y"', d) == "xy"
    assert ev(f'device.attributes["{DRIVER}"].v.isGreaterThan(semver("0.0.1"))', d) is True
    assert ev(f'device.attributes["{DRIVER}"].v == semver("1.2.3")', d) is True


def test_invalid_semver_attribute_fails_every_evaluation_naming_the_attribute() -> None:
    d = gpu(model="a100", version=Semver("1.0"))
    reason = err("true", d)
    assert reason.startswith(f"attribute {DRIVER}/version: parse semantic version")
    # even an expression that does not read the attribute
    assert "version" in err(f'device.attributes["{DRIVER}"].model == "a100"', d)


def test_unsupported_attribute_value() -> None:
    d = gpu(weird=1.5)
    assert err("true", d) == f"attribute {DRIVER}/weird: unsupported attribute value"
    big = gpu(n=2**63)
    assert "out of int64 range" in err("true", big)


def test_list_attributes_kep5491() -> None:
    d = gpu(names=("fish", "bird"), ints=(1, 2), bools=(True, False), vers=(Semver("1.0.0"), Semver("2.0.0")))
    a = f'device.attributes["{DRIVER}"]'
    assert ev(f"{a}.names.size() == 2", d) is True
    assert ev(f'{a}.names.exists(x, x == "fish")', d) is True
    assert ev(f"{a}.ints.exists(x, x > 1)", d) is True
    assert ev(f'{a}.vers.all(x, x.isGreaterThan(semver("0.0.1")))', d) is True
    assert ev(f"1 in {a}.ints", d) is True
    assert ev(f"{a}.names", d) == ("fish", "bird")


def test_macro_on_scalar_attribute_is_an_error() -> None:
    d = gpu(name=1)
    assert (
        err(f'device.attributes["{DRIVER}"].name.exists(x, x > 0)', d) == "got 'int', expected iterable type"
    )


@pytest.mark.parametrize(
    ("attr", "arg", "expected"),
    [
        (True, "true", True),
        (False, "true", False),
        ((True, False), "true", True),
        ((True, True), "false", False),
        (1, "1", True),
        (2, "1", False),
        ((1, 2), "1", True),
        ((1, 2), "3", False),
        ("fish", '"fish"', True),
        ("fish", '"bird"', False),
        (("fish", "bird"), '"fish"', True),
        (("fish", "bird"), '"cat"', False),
        (Semver("1.0.0"), 'semver("1.0.0")', True),
        (Semver("1.0.0"), 'semver("2.0.0")', False),
        ((Semver("1.0.0"), Semver("2.0.0")), 'semver("1.0.0")', True),
        ((Semver("1.0.0"), Semver("2.0.0")), 'semver("3.0.0")', False),
    ],
)
def test_includes(attr: Any, arg: str, expected: bool) -> None:
    assert ev(f'device.attributes["{DRIVER}"].name.includes({arg})', gpu(name=attr)) is expected


def test_includes_long_lists() -> None:
    values = tuple(f"value-{i}" for i in range(48))
    assert ev(f'device.attributes["{DRIVER}"].name.includes("value-48")', gpu(name=values)) is False
    longer = (*values, "value-48")
    reason = err(f'device.attributes["{DRIVER}"].name.includes("value-49")', gpu(name=longer))
    assert reason == "'includes' function cannot be applied to lists longer than 48 values"


def test_view_is_converted_once() -> None:
    d = gpu(model="a100")
    p = compile_expression(f'device.attributes["{DRIVER}"].model')
    p.evaluate(d)
    first = d._prepared
    p.evaluate(d)
    assert d._prepared is first
