"""Kubernetes lists library, cel-go ext.Lists (v3) and ext.Sets, and the comprehension macros."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView("d", "x", {"d": {"ints": (3, 1, 2), "names": ("b", "a")}}, {})


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # Kubernetes lists
        ("[1, 2, 3].isSorted()", True),
        ("['a', 'b', 'b', 'c'].isSorted()", True),
        ("[2.0, 1.0].isSorted()", False),
        ("[1].isSorted()", True),
        ("[].isSorted()", True),
        ("device.attributes['d'].ints.isSorted()", False),
        ("[1, 3].sum()", 4),
        ("[1.0, 3.0].sum()", 4.0),
        ("[1u, 3u].sum()", 4),
        ("[].sum()", 0),
        ("device.attributes['d'].ints.sum()", 6),
        ("[1, 3].min()", 1),
        ("[1, 3].max()", 3),
        ("[1].min()", 1),
        ("['b', 'a'].min()", "a"),
        ("device.attributes['d'].names.max()", "b"),
        ("[1, 2, 2, 3].indexOf(2)", 1),
        ("['a', 'b', 'b', 'c'].lastIndexOf('b')", 2),
        ("[1.0].indexOf(1.1)", -1),
        ("[].indexOf('string')", -1),
        ("[1, 2].lastIndexOf(5)", -1),
        # cel-go lists
        ("lists.range(4)", (0, 1, 2, 3)),
        ("lists.range(0)", ()),
        ("[1, 2, 3, 4].slice(1, 3)", (2, 3)),
        ("[1, 2].slice(2, 2)", ()),
        ("[[1, 2], [3, 4]].flatten()", (1, 2, 3, 4)),
        ("[dyn([1, dyn([2])]), dyn([3])].flatten(2)", (1, 2, 3)),
        ("[1, 2, 1, 3].distinct()", (1, 2, 3)),
        ("[1, 2, 3].reverse()", (3, 2, 1)),
        ("['c', 'a', 'b'].sort()", ("a", "b", "c")),
        ("[1, 2].first().value()", 1),
        ("[1, 2].last().value()", 2),
        ("[].first().hasValue()", False),
        ("['apple', 'kiwi', 'banana'].sortBy(x, size(x))", ("kiwi", "apple", "banana")),
        # cel-go sets
        ("sets.contains([1, 2, 3], [2, 3])", True),
        ("sets.contains([1], [2])", False),
        ("sets.equivalent([1, 2], [2, 1, 1])", True),
        ("sets.equivalent([1, 2], [1])", False),
        ("sets.intersects([1, 2], [2, 5])", True),
        ("sets.intersects([1, 2], [3])", False),
    ],
)
def test_list_functions(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("[].min()", "min called on empty list"),
        ("[].max()", "max called on empty list"),
        ("[dyn(1), dyn('a')].isSorted()", "no matching overload"),
        ("[dyn(1), dyn('a')].max()", "no matching overload"),
        ("[dyn(1), dyn(2.5)].sum()", "'_+_' applied to '(int, double)'"),
        ("[dyn('a')].sum()", "no matching overload for 'sum'"),
        ("[9223372036854775807, 1].sum()", "integer overflow"),
        ("[1, 2, 3].slice(2, 1)", "start index must be less than or equal to end index"),
        ("[1, 2, 3].slice(-1, 1)", "negative indexes not supported"),
        ("[1, 2, 3].slice(0, 4)", "list is length 3"),
        ("[[1]].flatten(-1)", "level must be non-negative"),
        ("[dyn(1), dyn('a')].sort()", "same type"),
        ("[1, 2].sortBy(x, x == 1 ? dyn('a') : dyn(1))", "same type"),
        ("dyn('abc').indexOf(1)", "no matching overload for 'indexOf'"),
    ],
)
def test_list_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as info:
        ev(expression)
    assert message in info.value.reason


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[1, 2, 3].all(x, x > 0)", True),
        ("[1, 2, 3].all(x, x > 1)", False),
        ("[1, 2, 3].exists(x, x > 2)", True),
        ("[1, 2, 3].exists_one(x, x > 2)", True),
        ("[1, 2, 3].existsOne(x, x > 1)", False),
        ("[1, 2, 3].map(x, x * 2)", (2, 4, 6)),
        ("[1, 2, 3].map(x, x > 1, x * 10)", (20, 30)),
        ("[1, 2, 3].filter(x, x % 2 == 1)", (1, 3)),
        ("{'a': 1, 'b': 2}.map(k, k)", ("a", "b")),
        ("{'a': 1, 'b': 2}.all(k, v, v > 0 && k != '')", True),
        ("[1, 2, 3].all(i, v, v > i)", True),
        ("[10, 20].exists(i, v, i == 1 && v == 20)", True),
        ("[10, 20].transformList(i, v, i + v)", (10, 21)),
        ("[10, 20].transformList(i, v, v > 10, v)", (20,)),
        ("{'a': 1}.transformMap(k, v, v + 1)", {"a": 2}),
        ("[5, 6].transformMap(i, v, v * 2)", {0: 10, 1: 12}),
        ("[1, 2].map(x, [3, 4].map(x, x * 2))", ((6, 8), (6, 8))),
        ("[].all(x, x)", True),
        ("[].exists(x, x)", False),
    ],
)
def test_macros(expression: str, expected: Any) -> None:
    assert ev(expression) == expected


def test_macro_range_must_be_iterable() -> None:
    with pytest.raises(CelCompileError, match="cannot be range of a comprehension"):
        compile_expression("'abc'.all(x, x == 'a')")
    with pytest.raises(CelRuntimeError, match="expected iterable type"):
        ev("dyn('abc').all(x, x == 'a')")


def test_macro_predicate_must_be_bool() -> None:
    with pytest.raises(CelCompileError, match="predicate must be bool"):
        compile_expression("[1].all(x, x)")
    with pytest.raises(CelRuntimeError):
        ev("[1].filter(x, dyn(x))")
