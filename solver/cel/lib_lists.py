"""List functions: the Kubernetes ``lists`` library, cel-go ``ext.Lists`` (v3) and ``ext.Sets``.

Kubernetes: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``.
cel-go lists: ``lists.range``, ``slice``, ``flatten``, ``distinct``, ``reverse``,
``sort``, ``first``, ``last`` (``sortBy`` is a macro, see the compiler).
cel-go sets: ``sets.contains``, ``sets.equivalent``, ``sets.intersects``.

Element comparisons use the strict CEL ordering (mixed types raise, int/uint/double
order across types) and CEL equality (heterogeneous, never raising).
"""

from __future__ import annotations

import functools
from typing import Any, Final

from .functions import Overload, check_size, fail, register
from .operators import add
from .typesys import DYN, Type
from .values import NONE, Opt, UInt, cel_compare, cel_equal

__all__: list[str] = []


def _is_sorted(items: tuple[Any, ...]) -> bool:
    for a, b in zip(items, items[1:], strict=False):
        c = cel_compare(a, b, "isSorted")
        if c == 1:
            return False
    return True


def _sum(items: tuple[Any, ...]) -> Any:
    if not items:
        return 0
    acc = items[0]
    if type(acc) not in (int, UInt, float):
        raise fail(f"found no matching overload for 'sum' applied to 'list({type(acc).__name__})'")
    for x in items[1:]:
        acc = add(acc, x)
    return acc


def _extreme(items: tuple[Any, ...], name: str, want: int) -> Any:
    if not items:
        raise fail(f"{name} called on empty list")
    best = items[0]
    cel_compare(best, best, name)  # raise for an element type without an ordering
    for x in items[1:]:
        if cel_compare(x, best, name) == want:
            best = x
    return best


def _index_of(items: tuple[Any, ...], v: Any) -> int:
    for i, x in enumerate(items):
        if cel_equal(x, v):
            return i
    return -1


def _last_index_of(items: tuple[Any, ...], v: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if cel_equal(items[i], v):
            return i
    return -1


def _range(n: int) -> tuple[int, ...]:
    check_size(10 * n)  # each element costs 1 (a character costs 1/10): refuse before building
    return tuple(range(n))


def _slice(items: tuple[Any, ...], start: int, end: int) -> tuple[Any, ...]:
    if start < 0 or end < 0:
        raise fail(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise fail(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise fail(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: tuple[Any, ...], depth: int = 1) -> tuple[Any, ...]:
    if depth < 0:
        raise fail("level must be non-negative")
    out: list[Any] = []

    def walk(xs: tuple[Any, ...], level: int) -> None:
        for x in xs:
            if type(x) is tuple and level > 0:
                walk(x, level - 1)
            else:
                out.append(x)
        check_size(len(out))

    walk(items, depth)
    return tuple(out)


def _distinct(items: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for x in items:
        if not any(cel_equal(x, y) for y in out):
            out.append(x)
    return tuple(out)


def _sort(items: tuple[Any, ...]) -> tuple[Any, ...]:
    if items:
        t0 = type(items[0])
        for x in items:
            if type(x) is not t0:
                raise fail("list elements must have the same type")
            cel_compare(x, x, "sort")
    return tuple(sorted(items, key=functools.cmp_to_key(lambda a, b: cel_compare(a, b, "sort"))))


def _first(items: tuple[Any, ...]) -> Opt:
    return Opt(items[0]) if items else NONE


def _last(items: tuple[Any, ...]) -> Opt:
    return Opt(items[-1]) if items else NONE


def _sets_contains(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return all(any(cel_equal(x, y) for y in a) for x in b)


def _sets_intersects(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return any(any(cel_equal(x, y) for y in a) for x in b)


def _elem(args: tuple[Type, ...]) -> Type:
    t = args[0]
    return t[1] if isinstance(t, tuple) and t[0] == "list" else DYN


def _same(args: tuple[Type, ...]) -> Type:
    return args[0]


def _flat(args: tuple[Type, ...]) -> Type:
    e = _elem(args)
    if isinstance(e, tuple) and e[0] == "list":
        return e
    return ("list", DYN)


def _opt_elem(args: tuple[Type, ...]) -> Type:
    return ("opt", _elem(args))


def _len_cost(args: tuple[Any, ...], result: Any) -> int:
    return sum(len(a) for a in args if type(a) is tuple)


def _pair_cost(args: tuple[Any, ...], result: Any) -> int:
    return len(args[0]) * len(args[1])


def _square_cost(args: tuple[Any, ...], result: Any) -> int:
    return len(args[0]) * max(len(result), 1) if type(result) is tuple else len(args[0])


_L: Final = ("list", "A")

OVERLOADS: Final[list[Overload]] = [
    Overload("isSorted", True, (_L,), "bool", _is_sorted, _len_cost),
    Overload(
        "sum",
        True,
        (_L,),
        lambda a: _elem(a) if _elem(a) in ("int", "uint", "double") else DYN,
        _sum,
        _len_cost,
    ),
    Overload("min", True, (_L,), _elem, lambda xs: _extreme(xs, "min", -1), _len_cost),
    Overload("max", True, (_L,), _elem, lambda xs: _extreme(xs, "max", 1), _len_cost),
    Overload("indexOf", True, (_L, "A"), "int", _index_of, _len_cost),
    Overload("lastIndexOf", True, (_L, "A"), "int", _last_index_of, _len_cost),
    Overload("lists.range", False, ("int",), ("list", "int"), _range, lambda a, r: len(r)),
    Overload("slice", True, (_L, "int", "int"), _same, _slice, _len_cost),
    Overload("flatten", True, (_L,), _flat, _flatten, lambda a, r: len(r)),
    Overload("flatten", True, (_L, "int"), lambda a: ("list", DYN), _flatten, lambda a, r: len(r)),
    Overload("distinct", True, (_L,), _same, _distinct, _square_cost),
    Overload("reverse", True, (_L,), _same, lambda xs: xs[::-1], _len_cost),
    Overload("sort", True, (_L,), _same, _sort, _len_cost),
    Overload("first", True, (_L,), _opt_elem, _first),
    Overload("last", True, (_L,), _opt_elem, _last),
    Overload("sets.contains", False, (_L, _L), "bool", _sets_contains, _pair_cost),
    Overload(
        "sets.equivalent",
        False,
        (_L, _L),
        "bool",
        lambda a, b: _sets_contains(a, b) and _sets_contains(b, a),
        _pair_cost,
    ),
    Overload("sets.intersects", False, (_L, _L), "bool", _sets_intersects, _pair_cost),
]

register(OVERLOADS)
