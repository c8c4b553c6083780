"""Compilation: syntax errors with positions, length and nesting limits, literals, the cache."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError

DEV = DeviceView("d", "x", {}, {})


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


def position(expression: str) -> tuple[int, int, str]:
    with pytest.raises(CelCompileError) as info:
        compile_expression(expression)
    e = info.value
    assert e.expression == expression
    return e.line, e.column, e.reason


@pytest.mark.parametrize(
    ("expression", "line", "column", "message"),
    [
        ("?!", 1, 1, "Syntax error: mismatched input '?'"),
        ("1 +", 1, 4, "Syntax error: unexpected end of expression"),
        ("device.attributes[", 1, 19, "unexpected end of expression"),
        ("a.b(", 1, 5, "unexpected end of expression"),
        ("1 # 2", 1, 3, "token recognition error at: '#'"),
        ("true &&\n  foo", 2, 3, "undeclared reference to 'foo'"),
        ("device.nosuch == 1", 1, 8, "undefined field 'nosuch'"),
        ("1 + 2u", 1, 3, "found no matching overload for '_+_' applied to '(int, uint)'"),
        ("'\\q'", 1, 1, "invalid escape sequence"),
        ("9223372036854775808", 1, 1, "invalid int literal"),
        ("18446744073709551616u", 1, 1, "invalid uint literal"),
        ("Foo{a: 1}", 1, 1, "message construction is not supported"),
        ("[1].all(1, true)", 1, 9, "variable names must be simple identifiers"),
        ("cel.bind(1, 2, 3)", 1, 5, "cel.bind() requires an identifier"),
    ],
)
def test_compile_errors_carry_position(expression: str, line: int, column: int, message: str) -> None:
    got_line, got_column, reason = position(expression)
    assert (got_line, got_column) == (line, column)
    assert message in reason
    assert reason.startswith(f"compilation failed: ERROR: <input>:{line}:{column}: ")
    assert reason.rstrip().endswith("^")  # caret under the position


def test_error_message_shows_the_source_line() -> None:
    with pytest.raises(CelCompileError) as info:
        compile_expression("device.driver == 1u + 1")
    text = str(info.value)
    assert "expression 'device.driver == 1u + 1'" in text
    assert " | device.driver == 1u + 1\n | ....................^" in text


def test_length_limit() -> None:
    ok = "true" + " && true" * ((10 * 1024 - 4) // 8)
    assert len(ok) <= 10 * 1024
    assert compile_expression(ok).evaluate(DEV) is True
    too_long = "'" + "x" * (10 * 1024) + "' == ''"
    with pytest.raises(CelCompileError, match="the maximum is 10240"):
        compile_expression(too_long)
    with pytest.raises(CelCompileError, match="the maximum is 5"):
        compile_expression("true || false", max_length=5)
    # bytes, not characters
    with pytest.raises(CelCompileError):
        compile_expression("'" + "é" * 6000 + "' != ''")


def test_nesting_limit() -> None:
    deep = "[" * 90 + "1" + "]" * 90
    assert compile_expression(deep).evaluate(DEV) is not None
    with pytest.raises(CelCompileError, match="maximum depth"):
        compile_expression("[" * 200 + "1" + "]" * 200)
    chain = " + ".join(["1"] * 95)
    assert compile_expression(chain).evaluate(DEV) == 95
    with pytest.raises(CelCompileError, match="maximum depth"):
        compile_expression(" + ".join(["1"] * 400))
    # redundant parentheses cost nothing
    assert ev("(" * 500 + "1" + ")" * 500) == 1


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'a\\nb'", "a\nb"),
        ('"tab\\there"', "tab\there"),
        ("r'a\\nb'", "a\\nb"),
        ("'''two\nlines'''", "two\nlines"),
        ('"\\u00e9\\x41\\101\\U0001F600"', "éAA\U0001f600"),
        ("b'\\xff\\x00'", b"\xff\x00"),
        ("b'é'", "é".encode()),
        ("0x1F", 31),
        ("-0x10", -16),
        ("-9223372036854775808", -(2**63)),
        ("18446744073709551615u", 2**64 - 1),
        ("1.5e3", 1500.0),
        (".5", 0.5),
        ("null", None),
        ("true", True),
        ("// a comment\n  false", False),
        ("1 - 2", -1),
        ("1-2", -1),
        ("- -3", 3),
        ("!!true", True),
    ],
)
def test_literals(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


def test_programs_are_cached_by_expression() -> None:
    a = compile_expression("device.driver == 'x' && true")
    b = compile_expression("device.driver == 'x' && true")
    assert a is b
    assert a.expression == "device.driver == 'x' && true"


def test_constant_subexpressions_are_folded_when_they_succeed() -> None:
    # a bad constant that is never reached must not fail the expression
    assert ev("true || quantity('bogus').isInteger()") is True
    assert ev("false && semver('x').major() == 1") is False


def test_result_types() -> None:
    assert compile_expression("device.driver").result_type == "string"
    assert compile_expression("device.attributes['d'].x").result_type == "dyn"
    assert compile_expression("device.driver.split('.')").result_type == "list(string)"
    assert compile_expression("device.capacity['d'].m").result_type == "kubernetes.Quantity"
    assert compile_expression("[1, 2]").result_type == "list(int)"
