"""cel-go ext.Strings (v2): every function, with cel-go's documented examples and errors."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView("dra.example.com", "d", {"dra.example.com": {"topology": "numa0-pcie1-nic0"}}, {})


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # charAt
        ("'hello'.charAt(4)", "o"),
        ("'hello'.charAt(5)", ""),
        ("'héllo'.charAt(1)", "é"),
        # indexOf
        ("'hello mellow'.indexOf('')", 0),
        ("'hello mellow'.indexOf('ello')", 1),
        ("'hello mellow'.indexOf('jello')", -1),
        ("'hello mellow'.indexOf('', 2)", 2),
        ("'hello mellow'.indexOf('ello', 2)", 7),
        ("'héllo'.indexOf('llo')", 2),
        # lastIndexOf
        ("'hello mellow'.lastIndexOf('')", 12),
        ("'hello mellow'.lastIndexOf('ello')", 7),
        ("'hello mellow'.lastIndexOf('jello')", -1),
        ("'hello mellow'.lastIndexOf('ello', 6)", 1),
        # lowerAscii / upperAscii
        ("'TacoCat'.lowerAscii()", "tacocat"),
        ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
        ("'TacoCat'.upperAscii()", "TACOCAT"),
        ("'TacoCÆt Xii'.upperAscii()", "TACOCÆT XII"),
        # replace
        ("'hello hello'.replace('he', 'we')", "wello wello"),
        ("'hello hello'.replace('he', 'we', -1)", "wello wello"),
        ("'hello hello'.replace('he', 'we', 1)", "wello hello"),
        ("'hello hello'.replace('he', 'we', 0)", "hello hello"),
        ("'abc'.replace('', '-')", "-a-b-c-"),
        # split
        ("'hello hello hello'.split(' ')", ("hello", "hello", "hello")),
        ("'hello hello hello'.split(' ', 0)", ()),
        ("'hello hello hello'.split(' ', 1)", ("hello hello hello",)),
        ("'hello hello hello'.split(' ', 2)", ("hello", "hello hello")),
        ("'hello hello hello'.split(' ', -1)", ("hello", "hello", "hello")),
        ("'abc'.split('')", ("a", "b", "c")),
        ("'abc'.split('', 2)", ("a", "bc")),
        ("''.split(',')", ("",)),
        # substring
        ("'tacocat'.substring(4)", "cat"),
        ("'tacocat'.substring(0, 4)", "taco"),
        ("'tacocat'.substring(7)", ""),
        # trim (Go's unicode.IsSpace, not Python's)
        ("'  \\ttrim\\n    '.trim()", "trim"),
        ("'\\u00a0x\\u3000'.trim()", "x"),
        ("'\\x1cx'.trim()", "\x1cx"),
        # join
        ("['hello', 'mellow'].join()", "hellomellow"),
        ("['hello', 'mellow'].join(' ')", "hello mellow"),
        ("[].join()", ""),
        ("[].join('/')", ""),
        # format
        (
            "'this is a string: %s\\nand an integer: %d'.format(['str', dyn(42)])",
            "this is a string: str\nand an integer: 42",
        ),
        ("'%s %s'.format([64.2, 1.0])", "64.2 1"),
        ("'%f'.format([3.14])", "3.140000"),
        ("'%.2f'.format([3.14159])", "3.14"),
        ("'%f'.format([1234567.5])", "1,234,567.500000"),
        ("'%e'.format([2.71828])", "2.718280e+00"),
        ("'5 in binary: %b'.format([5])", "5 in binary: 101"),
        ("'%b'.format([true])", "1"),
        ("'26 in hex: %x'.format([26])", "26 in hex: 1a"),
        ("'%X'.format([26])", "1A"),
        ("'%x'.format(['hi'])", "6869"),
        ("'30 in octal: %o'.format([30])", "30 in octal: 36"),
        ("'100%% %s'.format(['sure'])", "100% sure"),
        ("'%s'.format([[1, 2]])", "[1, 2]"),
        ("'%s'.format([['a', 'b']])", '["a", "b"]'),
        ("'%s'.format([{'b': 1, 'a': 2}])", '{"a":2, "b":1}'),
        ("'%s %s'.format([true, dyn(null)])", "true null"),
        ("'%s'.format([type(1)])", "int"),
        # strings.quote
        ("strings.quote('single-quote with \"double quote\"')", '"single-quote with \\"double quote\\""'),
        ("strings.quote('two escape sequences \\a\\n')", '"two escape sequences \\a\\n"'),
        # KEP-6080 style
        ("device.attributes['dra.example.com'].topology.split('-')[0]", "numa0"),
        ("device.attributes['dra.example.com'].topology.substring(4, 5)", "0"),
    ],
)
def test_strings(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("'hello'.charAt(-1)", "index out of range: -1"),
        ("'hello'.charAt(6)", "index out of range: 6"),
        ("'hello mellow'.indexOf('ello', 20)", "index out of range: 20"),
        ("'hello mellow'.indexOf('ello', -1)", "index out of range: -1"),
        ("''.indexOf('a')", "index out of range: 0"),  # cel-go quirk, kept
        ("'hello mellow'.lastIndexOf('ello', -1)", "index out of range: -1"),
        ("'tacocat'.substring(-1)", "index out of range: -1"),
        ("'tacocat'.substring(8)", "index out of range: 8"),
        ("'tacocat'.substring(2, 1)", "invalid substring range. start: 2, end: 1"),
        ("'tacocat'.substring(0, 9)", "index out of range: 9"),
        ("[dyn('a'), dyn(1)].join()", "is not a string"),
        ("'%d'.format(['x'])", "decimal clause can only be used on integers"),
        ("'%f'.format([1])", "fixed-point clause can only be used on doubles"),
        ("'%e'.format(['x'])", "scientific clause can only be used on doubles"),
        ("'%b'.format([1.5])", "only integers and bools can be formatted as binary"),
        ("'%x'.format([1.5])", "can be formatted as hex"),
        ("'%o'.format(['x'])", "octal clause can only be used on integers"),
        ("'%d %d'.format([1])", "index 1 out of range"),
        ("'%q'.format([1])", "unrecognized formatting clause"),
        ("'%'.format([1])", "unexpected end of format string"),
        ("dyn(1).split(',')", "no matching overload for 'split'"),
    ],
)
def test_string_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression)
    assert message in info.value.reason


@pytest.mark.parametrize(
    "expression",
    ["'a'.split(1)", "'a'.replace('a')", "[1].join()", "'a'.trim(1)", "'a'.charAt('b')", "1.5.lowerAscii()"],
)
def test_string_static_errors(expression: str) -> None:
    with pytest.raises(CelCompileError):
        compile_expression(expression)
