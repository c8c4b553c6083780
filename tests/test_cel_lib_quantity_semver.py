"""Kubernetes quantity and semver CEL libraries, and the Semver class itself."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, Semver, SemverError, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView(
    "gpu.example.com",
    "gpu-0",
    {"gpu.example.com": {"driverVersion": Semver("1.2.3-rc.1")}},
    {"gpu.example.com": {"memory": Quantity.parse("80Gi"), "fraction": Quantity.parse("500m")}},
)


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


def runtime_error(expression: str) -> str:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression)
    return info.value.reason


# -- quantity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("quantity('1.5G') == quantity('1500M')", True),
        ("isQuantity('1.3G')", True),
        ("isQuantity('1.3Gi')", True),
        ("isQuantity('1,3G')", False),
        ("isQuantity('10000k')", True),
        ("isQuantity('200K')", False),
        ("isQuantity('Three')", False),
        ("isQuantity('Mi')", False),
        ("quantity('50000000G').isInteger()", True),
        ("quantity('50k').isInteger()", True),
        ("quantity('1.5').isInteger()", False),
        ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
        ("quantity('50k').asInteger()", 50000),
        ("quantity('50k').sub(20000).asApproximateFloat()", 30000.0),
        ("quantity('1.5').asApproximateFloat()", 1.5),
        ("quantity('50k').add(quantity('20k')) == quantity('70k')", True),
        ("quantity('50k').add(20) == quantity('50020')", True),
        ("quantity('50k').sub(quantity('20k')) == quantity('30k')", True),
        ("quantity('50k').sub(20000) == quantity('30k')", True),
        ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
        ("quantity('200M').compareTo(quantity('0.2G'))", 0),
        ("quantity('50M').compareTo(quantity('50Mi'))", -1),
        ("quantity('50Mi').compareTo(quantity('50M'))", 1),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
        ("quantity('50Mi').isGreaterThan(quantity('100Mi'))", False),
        ("quantity('50M').isLessThan(quantity('100M'))", True),
        ("quantity('100M').isLessThan(quantity('50M'))", False),
        ("quantity('5').sign()", 1),
        ("quantity('-5m').sign()", -1),
        ("sign(quantity('0'))", 0),
        ("device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('40Gi'))", True),
        ("device.capacity['gpu.example.com'].memory.compareTo(quantity('80Gi')) >= 0", True),
        ("device.capacity['gpu.example.com'].fraction.isInteger()", False),
        ("device.capacity['gpu.example.com'].memory.asInteger()", 80 * 2**30),
    ],
)
def test_quantity(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


def test_quantity_result_is_a_quantity() -> None:
    q = ev("quantity('1Gi').add(quantity('512Mi'))")
    assert isinstance(q, Quantity) and q == Quantity.parse("1536Mi")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("quantity('200K')", "invalid quantity '200K'"),
        ("quantity('Three')", "invalid quantity"),
        ("quantity('1.5').asInteger()", "cannot convert value to integer"),
        ("quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
        ("device.capacity['gpu.example.com'].fraction.asInteger()", "cannot convert value to integer"),
        ("dyn(1).isGreaterThan(quantity('1'))", "no matching overload for 'isGreaterThan'"),
    ],
)
def test_quantity_errors(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "quantity('1') < quantity('2')",
        "quantity('1') + quantity('2')",
        "quantity(1)",
        "quantity('1').add(1.5)",
        "quantity('1').isGreaterThan(1)",
        "device.capacity['gpu.example.com'].memory > 5",
    ],
)
def test_quantity_static_errors(expression: str) -> None:
    with pytest.raises(CelCompileError, match="no matching overload"):
        compile_expression(expression)


# -- semver ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("isSemver('1.0.0')", True),
        ("isSemver('0.1.0-alpha.1')", True),
        ("isSemver('v1.0')", False),
        ("isSemver('v1.0', true)", True),
        ("isSemver('hello')", False),
        ("isSemver('01.0.0')", False),
        ("semver('1.2.3').major()", 1),
        ("semver('1.2.3').minor()", 2),
        ("semver('1.2.3').patch()", 3),
        ("semver('v01.2', true).minor()", 2),
        ("semver('1.2.3').compareTo(semver('1.2.3'))", 0),
        ("semver('1.2.3').compareTo(semver('2.0.0'))", -1),
        ("semver('1.2.3').compareTo(semver('0.1.2'))", 1),
        ("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", True),
        ("semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))", True),
        ("semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))", True),
        ("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", True),
        ("semver('2.0.0').isGreaterThan(semver('1.9.9'))", True),
        ("semver('1.0.0+a') == semver('1.0.0+b')", True),
        ("device.attributes['gpu.example.com'].driverVersion.isLessThan(semver('1.2.3'))", True),
        ("device.attributes['gpu.example.com'].driverVersion.major()", 1),
    ],
)
def test_semver(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("semver('1.0')", "No Major.Minor.Patch elements found"),
        ("semver('01.0.0')", "leading zeroes"),
        ("semver('1.0.0-')", "invalid semantic version"),
        ("semver('hello', true)", "invalid semantic version"),
        ("dyn('1.0.0').major()", "no matching overload for 'major'"),
    ],
)
def test_semver_errors(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


def test_semver_has_no_ordering_operators() -> None:
    with pytest.raises(CelCompileError, match="no matching overload for '_<_'"):
        compile_expression("semver('1.2.3') < semver('1.2.4')")


def test_semver_class() -> None:
    v = Semver("1.2.3-rc.1+build.5")
    assert v.valid and (v.major, v.minor, v.patch) == (1, 2, 3)
    assert v.pre == ("rc", 1) and v.build == ("build", "5")
    assert v == Semver("1.2.3-rc.1") and hash(v) == hash(Semver("1.2.3-rc.1"))
    assert Semver("1.0.0") > Semver("1.0.0-rc.1")
    bad = Semver("1.0")
    assert not bad.valid and bad.error is not None
    with pytest.raises(SemverError):
        Semver.parse("1.0")
    assert Semver.parse("v1", normalize=True) == Semver("1.0.0")
    assert str(Semver.parse("v1.02.3-x", normalize=True)) == "1.2.3-x"
