"""Strictness: what cel-go rejects must not evaluate (at compile time where its checker
rejects it, at run time for dynamic attribute values), and error absorption of && / ||."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

D = "dra.example.com"
A = f'device.attributes["{D}"]'
DEV = DeviceView(D, "dev-0", {D: {"i": 1, "s": "x", "b": True, "f": 2}}, {})


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


def runtime_error(expression: str) -> str:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression)
    return info.value.reason


def compile_error(expression: str) -> str:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expression)
    return info.value.reason


@pytest.mark.parametrize(
    "expression",
    [
        "1 + 2u",
        "1 + 2.0",
        "1u * 2.0",
        '"a" + 1',
        "1 - true",
        "[1] + 1",
        'quantity("1") < quantity("2")',
        'quantity("1") + quantity("2")',
        'semver("1.0.0") > semver("0.1.0")',
        "1 == 1u",
        "1 == 1.0",
        '1 == "1"',
        "1 == null",
        '"abc"[0]',
        "!1",
        "-true",
        "-1u",
        "1 && true",
        'true ? 1 : "a"',
        '[1, "a"]',
        '{"a": 1, "b": "c"}',
        "2 in 1",
        '"a".size(1)',
        "nosuchfunction(1)",
        "x + 1",
        "timestamp('2024-01-01T00:00:00Z') + timestamp('2024-01-01T00:00:00Z')",
        "timestamp('2024-13-01T00:00:00Z')",
    ],
)
def test_static_type_errors(expression: str) -> None:
    assert compile_error(expression).startswith("compilation failed: ERROR: <input>:")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f"{A}.i + 1u", "'_+_' applied to '(int, uint)'"),
        (f"{A}.i + 1.0", "'_+_' applied to '(int, double)'"),
        (f"{A}.s + 1", "'_+_' applied to '(string, int)'"),
        (f"{A}.s * 2", "'_*_' applied to '(string, int)'"),
        (f"{A}.b + 1", "'_+_' applied to '(bool, int)'"),
        (f"{A}.s < 1", "'_<_' applied to '(string, int)'"),
        (f"{A}.s[0]", "'_[_]' applied to '(string, int)'"),
        (f"{A}.i && true", "'_&&_' applied to '(int)'"),
        (f"{A}.i || false", "'_||_' applied to '(int)'"),
        (f"!{A}.i", "'!_' applied to '(int)'"),
        (f"{A}.i ? 1 : 2", "'_?_:_' applied to '(int)'"),
        (f'{A}.s.isGreaterThan(quantity("1"))', "'isGreaterThan' applied to '(string, kubernetes.Quantity)'"),
        (f"{A}.i.size()", "'size' applied to '(int)'"),
        (f"{A}.s.x", "type 'string' does not support field selection"),
    ],
)
def test_dynamic_type_errors(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (f"{A}.i == 1u", True),  # heterogeneous numeric equality at run time
        (f"{A}.i == 1.0", True),
        (f"{A}.i < 1.5", True),  # cross-type numeric comparison (Kubernetes option)
        (f"{A}.i > 0u", True),
        (f'{A}.i == "1"', False),  # different types: unequal, not an error
        (f"{A}.s != 1", True),
        ("dyn(null) == 1", False),
        ("1 < 1.5 && 2u > 1 && 1.5 >= 1u", True),
    ],
)
def test_heterogeneous_equality_and_numeric_comparisons(expression: str, expected: bool) -> None:
    assert ev(expression) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9223372036854775807 + 1", "integer overflow"),
        ("-9223372036854775808 - 1", "integer overflow"),
        ("-9223372036854775808 / -1", "integer overflow"),
        ("4611686018427387904 * 2", "integer overflow"),
        ("5u - 6u", "unsigned integer overflow"),
        ("18446744073709551615u + 1u", "unsigned integer overflow"),
        ("1 / 0", "division by zero"),
        ("1 % 0", "modulus by zero"),
        ("1u / 0u", "division by zero"),
        ("[1, 2][2]", "index out of range: 2"),
        ("[1, 2][-1]", "index out of range: -1"),
        ('{"a": 1}["b"]', "no such key: b"),
        ('{"a": 1, "a": 2}', "repeated key"),
        ("int(9.3e18)", "range error"),
    ],
)
def test_arithmetic_errors(expression: str, message: str) -> None:
    assert message in runtime_error(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("7 / -2", -3),
        ("-7 / 2", -3),
        ("-7 % 3", -1),
        ("7 % -3", 1),
        ("7u / 2u", 3),
        ("7.0 / 2.0", 3.5),
        ("1.0 / 0.0", float("inf")),
        ("[1, 2] + [3]", (1, 2, 3)),
        ('b"ab" + b"c"', b"abc"),
        ('"ab" + "c"', "abc"),
    ],
)
def test_arithmetic(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("false && 1 / 0 == 1", False),
        ("1 / 0 == 1 && false", False),
        ("true || 1 / 0 == 1", True),
        ("1 / 0 == 1 || true", True),
        (f"{A}.nope || true", True),
        (f"false && {A}.nope", False),
        (f"{A}.i || true", True),  # a non-bool on one side is absorbed like an error
        ("[dyn(1), dyn('a'), dyn(-1)].all(x, x > 0)", False),
        ("[dyn('a'), dyn(1)].exists(x, x > 0)", True),
    ],
)
def test_error_absorption(expression: str, expected: bool) -> None:
    assert ev(expression) is expected


@pytest.mark.parametrize(
    "expression",
    [
        "true && 1 / 0 == 1",
        "1 / 0 == 1 || false",
        f"{A}.nope && true",
        "[dyn(1), dyn('a')].all(x, x > 0)",
        "[dyn('a'), dyn(0)].exists(x, x > 0)",
        "[1, 2].exists_one(x, x / 0 == 1)",
    ],
)
def test_errors_propagate_when_not_absorbed(expression: str) -> None:
    runtime_error(expression)


def test_selector_must_be_bool() -> None:
    p = compile_expression(f"{A}.s")
    with pytest.raises(CelRuntimeError, match="CEL result of type string could not be converted to bool"):
        p.evaluate_bool(DEV)
    assert compile_expression(f"{A}.b").evaluate_bool(DEV) is True


def test_expect_bool_refuses_statically_non_bool_selectors() -> None:
    with pytest.raises(CelCompileError, match="must evaluate to bool or the unknown type, not int"):
        compile_expression("1", expect_bool=True)
    assert compile_expression(f"{A}.b", expect_bool=True).result_type == "dyn"
    assert compile_expression("device.driver == ''", expect_bool=True).result_type == "bool"


def test_quantity_and_semver_equality_is_by_value() -> None:
    assert ev('quantity("1") == quantity("1000m")') is True
    assert ev('quantity("1Ki") != quantity("1000")') is True
    assert ev('semver("1.2.3") == semver("1.2.3+build.5")') is True
    assert ev('dyn(quantity("1")) == dyn(semver("1.0.0"))') is False


def test_no_raw_exception_leaks() -> None:
    """Whatever fails inside, callers only ever see the project's CEL errors."""
    expressions = [
        "int('x')",
        "uint('-1')",
        "double('abc')",
        "bool('maybe')",
        "string(b'\\xff')",
        "'%q'.format([1])",
        "'abc'.substring(5)",
        "[1, 2].slice(-1, 1)",
        "[].max()",
        "optional.none().value()",
        "lists.range(5).sortBy(x, x % 2 == 0 ? dyn('a') : dyn(1))",
    ]
    for e in expressions:
        with pytest.raises(CelRuntimeError):
            ev(e)
