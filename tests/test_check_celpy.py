"""The checker's own CEL (`check.celpy_env`, cel-python): the Kubernetes extensions DRA
selectors use, agreement with our compiler on them, and that a bug in our compiler cannot
make the checker approve a device (issue #27 §2)."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.models import Device
from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, Semver, compile_expression
from dra_solver.check import celpy_env, expressions
from dra_solver.check.celpy_env import Program, Unsupported, Version, device_value
from dra_solver.check.expressions import Expressions
from dra_solver.check.pools import Dev

ATTRS: dict[str, dict[str, Any]] = {
    "gpu.example.com": {
        "model": "A100-SXM4-80GB",
        "index": 3,
        "healthy": True,
        "driverVersion": Version("1.2.3-rc.1"),
        "tags": ("fast", "nvlink"),
        "numas": (0, 1),
    },
    "resource.kubernetes.io": {"pcieRoot": "pci0000:00"},
}
CAPS = {"gpu.example.com": {"memory": Quantity.parse("80Gi"), "cores": Quantity.parse("1500m")}}


def _celpy(expression: str) -> Any:
    return Program(expression).evaluate(device_value("gpu.example.com", ATTRS, CAPS, False))


def _ours(expression: str) -> Any:
    attrs = {
        d: {k: Semver(v.text) if isinstance(v, Version) else v for k, v in m.items()}
        for d, m in ATTRS.items()
    }
    view = DeviceView(driver="gpu.example.com", name="gpu-0", attributes=attrs, capacity=CAPS)
    value = compile_expression(expression).evaluate(view)
    return Version(value.text) if isinstance(value, Semver) else value


AGREE = [
    'device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "A100-SXM4-80GB"',
    'device.attributes["gpu.example.com"].model.startsWith("A100")',
    'device.attributes["gpu.example.com"].model.lowerAscii().contains("sxm4")',
    'device.attributes["gpu.example.com"].model.upperAscii()',
    'device.attributes["gpu.example.com"].model.split("-")',
    'device.attributes["gpu.example.com"].model.split("-", 2)',
    'device.attributes["gpu.example.com"].model.replace("-", "_")',
    'device.attributes["gpu.example.com"].model.replace("-", "_", 1)',
    'device.attributes["gpu.example.com"].model.indexOf("SXM")',
    'device.attributes["gpu.example.com"].model.lastIndexOf("0")',
    'device.attributes["gpu.example.com"].model.substring(5, 9)',
    'device.attributes["gpu.example.com"].model.charAt(1)',
    '"  x ".trim() == "x"',
    '["a", "b"].join("-")',
    'device.attributes["gpu.example.com"].index > 2 && device.attributes["gpu.example.com"].healthy',
    'device.attributes["gpu.example.com"].index % 2 == 1',
    '"nvlink" in device.attributes["gpu.example.com"].tags',
    "device.attributes['gpu.example.com'].numas.exists(n, n == 1)",
    "device.attributes['gpu.example.com'].numas.all(n, n < 2)",
    "device.attributes['gpu.example.com'].numas.map(n, n * 2)",
    "device.attributes['gpu.example.com'].numas.filter(n, n > 0)",
    "has(device.attributes['gpu.example.com'].model)",
    "has(device.attributes['gpu.example.com'].nope)",
    "device.attributes['other.example.com'].size() == 0",
    "!('x' in device.attributes['other.example.com'])",
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))',
    'device.capacity["gpu.example.com"].memory.isLessThan(quantity("81Gi"))',
    'device.capacity["gpu.example.com"].memory == quantity("80Gi")',
    'device.capacity["gpu.example.com"].cores == quantity("1.5")',
    'device.capacity["gpu.example.com"].cores.isInteger()',
    'device.capacity["gpu.example.com"].memory.asInteger()',
    'device.capacity["gpu.example.com"].cores.sign()',
    'device.capacity["gpu.example.com"].cores.add(quantity("500m")) == quantity("2")',
    'device.capacity["gpu.example.com"].cores.sub(1).isLessThan(quantity("1"))',
    'isQuantity("1Gi") && !isQuantity("1 Gi")',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.2"))',
    'device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3"))',
    'device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.2.3-rc.1+build"))',
    'device.attributes["gpu.example.com"].driverVersion.major() == 1',
    'semver("v1.2", true) == semver("1.2.0")',
    'isSemver("1.2") || isSemver("01.2.3")',
    "[3, 1, 2].sort() == [1, 2, 3] && [1, 2, 3].isSorted() && ![2, 1].isSorted()",
    "[1, 2, 3].sum() == 6 && [4, 2, 9].min() == 2 && [4, 2, 9].max() == 9",
    "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
    "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
    "[[1], [2, 3]].flatten() == [1, 2, 3]",
    "[1, 1, 2].distinct() == [1, 2]",
    "[1, 2].reverse() == [2, 1]",
    "device.allowMultipleAllocations == false",
    "size(device.attributes['gpu.example.com'].tags) == 2",
]


@pytest.mark.parametrize("expression", AGREE)
def test_celpy_and_our_compiler_agree(expression: str) -> None:
    """Two independent implementations of the same documented functions give the same value."""
    assert _celpy(expression) == _ours(expression)


ERRORS = [
    'device.attributes["gpu.example.com"].missing == 1',  # no such key
    'device.capacity["gpu.example.com"].memory < quantity("1Gi")',  # quantities have no <
    'quantity("1Gi") + quantity("1Gi")',
    'quantity("one")',
    'semver("1.2")',
    "[].min()",
    '"abc".substring(2, 1)',
    '"abc".reverse()',  # Kubernetes' strings extension is version 2: no reverse
]


@pytest.mark.parametrize("expression", ERRORS)
def test_errors_are_errors_in_both(expression: str) -> None:
    with pytest.raises(ValueError):
        _celpy(expression)
    with pytest.raises(Exception):  # noqa: B017 - our compiler raises its own CEL error types
        _ours(expression)


def test_what_celpy_lacks_is_unsupported_not_a_pass() -> None:
    for expression in [
        'format.uri().validate("x").hasValue()',
        'format.named("byte")',
        "device.attributes?.x",
        "[?optional.none(), 1] == [1]",
        '"%d".format([1]) == "1"',
        'strings.quote("x") == "x"',
    ]:
        with pytest.raises(Unsupported):
            _celpy(expression)


def _dev(**attributes: Any) -> Dev:
    device = Device.model_validate({"name": "gpu-0", "attributes": attributes})
    return Dev(("gpu.example.com", "pool", "gpu-0"), None, device, ("node", "node-1"))  # type: ignore[arg-type]


def test_the_checker_does_not_use_our_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our compiler replaced by one that accepts everything: the checker still rejects."""

    class Yes:
        def evaluate_bool(self, _view: object) -> bool:
            return True

        def evaluate(self, _view: object) -> bool:
            return True

    monkeypatch.setattr(expressions, "compile_expression", lambda *_a, **_k: Yes())
    dev = _dev(model={"string": "T4"})
    cel = Expressions()
    assert cel.selector('device.attributes["gpu.example.com"].model == "A100"', dev) is False
    assert cel.selector('device.attributes["gpu.example.com"].model == "T4"', dev) is True


def test_an_unsupported_expression_falls_back_and_is_recorded() -> None:
    expression = (
        '[?device.attributes["gpu.example.com"].?zone, "end"] == ["end"] '
        '&& device.driver == "gpu.example.com"'
    )
    expressions.FALLBACKS.discard(expression)
    assert Expressions().selector(expression, _dev()) is True
    assert expression in expressions.FALLBACKS


def test_an_invalid_version_attribute_fails_every_evaluation() -> None:
    dev = _dev(v={"version": "1.2"}, model={"string": "A100"})
    outcome = Expressions().selector('device.attributes["gpu.example.com"].model == "A100"', dev)
    assert isinstance(outcome, str) and "invalid semantic version" in outcome


def test_a_selector_must_be_a_bool() -> None:
    outcome = Expressions().selector("device.driver", _dev())
    assert isinstance(outcome, str) and "expected a bool" in outcome


def _table(test: str) -> list[tuple[str, Any]]:
    """The (expression, expected value) table of a test of our compiler's net/url library:
    the same expectations (upstream's behaviour) must hold for the checker's implementation."""
    import ast  # noqa: PLC0415 - only this helper reads another test's source
    from pathlib import Path  # noqa: PLC0415

    tree = ast.parse((Path(__file__).parent / "test_cel_lib_net_url_time.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == test:
            table = node.decorator_list[0].args[1]  # type: ignore[attr-defined]
            return [ast.literal_eval(elt) for elt in table.elts]
    raise AssertionError(test)


NIC = {"nic.example.com": {"ip": "10.1.2.3", "subnet": "10.1.0.0/16"}}


@pytest.mark.parametrize(("expression", "want"), _table("test_ip_and_cidr") + _table("test_url"))
def test_ip_cidr_and_url_as_upstream(expression: str, want: Any) -> None:
    got = Program(expression).evaluate(device_value("nic.example.com", NIC, {}, False))
    if isinstance(want, dict):
        got = {k: tuple(v) for k, v in got.items()}
    assert got == want


def test_outcomes_are_cached_by_what_cel_sees_of_the_device() -> None:
    """Alike devices share one evaluation; a different value, or the name when the expression
    may read it, is a different entry."""
    a100, t4 = _dev(model={"string": "A100"}), _dev(model={"string": "T4"})
    selector = 'device.attributes["gpu.example.com"].model == "A100"'
    assert Expressions().selector(selector, a100) is True
    assert Expressions().selector(selector, t4) is False
    other_name = Dev(
        ("gpu.example.com", "pool", "gpu-1"),
        None,
        a100.device.model_copy(update={"name": "gpu-1"}),
        ("node", "node-1"),
    )  # type: ignore[arg-type]
    assert Expressions().selector('device.attributes["gpu.example.com"].model == "A100"', other_name) is True


def test_device_has_no_name_as_upstream() -> None:
    """Upstream's `device` has no `name` (docs/semantics.md, "KEP-6080 as merged upstream"):
    a selector reading it fails in the checker too, never matches."""
    outcome = Expressions().selector('device.name == "gpu-0"', _dev())
    assert isinstance(outcome, str) and "name" in outcome


def _format_cases() -> tuple[list[tuple[str, str]], list[tuple[str, str, list[str]]]]:
    """The VALID / INVALID tables of our compiler's format tests (upstream's messages)."""
    from test_cel_lib_format import INVALID, VALID  # noqa: PLC0415 - the other test's data

    return VALID, INVALID


@pytest.mark.parametrize("case", range(len(_format_cases()[0]) + len(_format_cases()[1])))
def test_named_formats_as_upstream(case: int) -> None:
    """Each case of our compiler's format tests, on the checker's own implementation; the
    formats it lacks (uri, byte, date, datetime) must be Unsupported, never a guess."""
    valid, invalid = _format_cases()
    fmt, value, want = (*valid[case], None) if case < len(valid) else invalid[case - len(valid)]
    expression = f'format.{fmt}().validate(device.attributes["d.example.com"].v)'
    device = device_value("d.example.com", {"d.example.com": {"v": value}}, {}, False)
    if fmt not in celpy_env.NAMED_FORMATS:
        with pytest.raises(Unsupported):
            Program(expression)
        return
    got = Program(expression).evaluate(device)
    assert isinstance(got, celpy_env.CelOptional)
    assert (None if got.value is None else list(celpy_env.from_cel(got.value))) == want


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('format.named("uuid").hasValue()', True),
        ('format.named("unknown").hasValue()', None),  # Unsupported: not a name implemented here
        ("format.named(device.driver).hasValue()", None),  # not a literal: Unsupported
        ('format.named("uuid").value() == format.uuid()', True),
        ("format.uuid() == format.dns1123Label()", False),
        ('format.uuid().validate("x").orValue(["ok"])', ("does not match the UUID format",)),
        ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").orValue(["ok"])', ("ok",)),
        ('!format.dns1123Label().validate("my.label").hasValue()', False),
        ('format.dns1123Label().validate("my.label").value()[0] == "must not contain dots"', True),
    ],
)
def test_optional_values_of_the_format_library(expression: str, want: Any) -> None:
    if want is None:
        with pytest.raises(Unsupported):
            Program(expression)
        return
    assert _celpy(expression) == want
    assert _ours(expression) == want
