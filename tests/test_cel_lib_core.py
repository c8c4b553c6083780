"""Standard functions, conversions, optionals and the regex library."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView("d", "gpu-3", {"d": {"s": "asymetric", "model": "A100-SXM4-80GB"}}, {})


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # size / contains / startsWith / endsWith
        ("'héllo'.size()", 5),
        ("size('héllo')", 5),
        ("size(b'ab')", 2),
        ("[1, 2].size()", 2),
        ("{'a': 1}.size()", 1),
        ("'hello'.contains('ell')", True),
        ("'hello'.startsWith('he')", True),
        ("'hello'.endsWith('lo')", True),
        ("'hello'.endsWith('he')", False),
        # int / uint / double
        ("int('12')", 12),
        ("int('-12')", -12),
        ("int(2.9)", 2),
        ("int(-2.9)", -2),
        ("int(5u)", 5),
        ("uint('42')", 42),
        ("uint(42)", 42),
        ("uint(3.7)", 3),
        ("double('1e3')", 1000.0),
        ("double(3)", 3.0),
        ("double(3u)", 3.0),
        # string
        ("string(42)", "42"),
        ("string(42u)", "42"),
        ("string(1.5)", "1.5"),
        ("string(1000000.0)", "1e+06"),
        ("string(123456.0)", "123456"),
        ("string(0.0001)", "0.0001"),
        ("string(0.00001)", "1e-05"),
        ("string(true)", "true"),
        ("string(b'abc')", "abc"),
        ("string('x')", "x"),
        # bool / bytes
        ("bool('true')", True),
        ("bool('F')", False),
        ("bytes('é')", b"\xc3\xa9"),
        # type / dyn
        ("type(1) == int", True),
        ("type('a') == string", True),
        ("type(1u) == uint", True),
        ("type([1]) == list", True),
        ("type({}) == map", True),
        ("type(null) == null_type", True),
        ("type(1) == type(2)", True),
        ("dyn(1) == 1", True),
        # optionals
        ("optional.of(1).hasValue()", True),
        ("optional.of(1).value()", 1),
        ("optional.none().hasValue()", False),
        ("optional.none().orValue(5)", 5),
        ("optional.ofNonZeroValue(0).hasValue()", False),
        ("optional.ofNonZeroValue('x').value()", "x"),
        ("optional.none().or(optional.of(3)).value()", 3),
        ("{'a': 1}[?'b'].orValue(9)", 9),
        ("{'a': {'b': 2}}.?a.?b.value()", 2),
        ("{'a': {'b': 2}}.?x.?b.hasValue()", False),
        ("[1, 2][?5].hasValue()", False),
        ("[1, 2][?1].value()", 2),
        # regex
        ("'abc'.matches('^a.c$')", True),
        ("matches('abc', 'b')", True),
        ("'abc'.matches('^b')", False),
        ("device.attributes['d'].s.matches('[^a]?sym')", True),
        ("'héllo'.matches('^\\\\pL+$')", True),
        ("'abc123def456'.find('[0-9]+')", "123"),
        ("'abc'.find('[0-9]+')", ""),
        ("'abc123def456'.findAll('[0-9]+')", ("123", "456")),
        ("'abc123def456'.findAll('[0-9]+', 1)", ("123",)),
        ("'abc123def456'.findAll('[0-9]+', 0)", ()),
        ("'baaac'.findAll('a*')", ("", "aaa", "")),
        ("device.attributes['d'].model.find('[0-9]+GB')", "80GB"),
        ("device.attributes['d'].model.find('[0-9]+')", "100"),
    ],
)
def test_functions(expression: str, expected: Any) -> None:
    result = ev(expression)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("int(' 1')", "invalid syntax"),
        ("int('1_000')", "invalid syntax"),
        ("int('99999999999999999999')", "value out of range"),
        ("int(18446744073709551615u)", "range error"),
        ("int(1e19)", "range error"),
        ("uint(-1)", "range error"),
        ("uint('-1')", "invalid syntax"),
        ("double('abc')", "invalid syntax"),
        ("bool('yes')", "invalid syntax"),
        ("string(b'\\xff')", "invalid UTF-8"),
        ("optional.none().value()", "optional.none() dereference"),
        ("dyn(1).contains('a')", "no matching overload for 'contains'"),
        ("'abc'.matches(dyn('('))", "Illegal regex"),
        ("'abc'.find(dyn('['))", "Illegal regex"),
        ("'abc'.findAll(dyn('('), 2)", "Illegal regex"),
    ],
)
def test_function_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression)
    assert message in info.value.reason


def test_double_special_values() -> None:
    assert math.isinf(ev("double('inf')"))
    assert math.isnan(ev("double('NaN')"))
    assert ev("double('NaN') < 1.0") is False
    assert ev("double('NaN') == double('NaN')") is False


@pytest.mark.parametrize("expression", ["'abc'.matches('(')", "'abc'.find('[')", "'abc'.findAll('(', 1)"])
def test_constant_invalid_regex_is_a_compile_error(expression: str) -> None:
    with pytest.raises(CelCompileError, match="invalid regular expression"):
        compile_expression(expression)
