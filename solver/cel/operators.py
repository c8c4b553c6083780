"""CEL operators with cel-go's exact overloads, at run time and at compile time.

Why explicit type dispatch: Python's operators would happily compute ``1 + True``,
``"ab" * 2`` or ``(1, 2) < (1, 3)``; CEL has no such overloads and cel-go raises
"no such overload". Arithmetic is defined only between operands of the same type
(int, uint, double; ``+`` also for string, bytes and list), with int64/uint64 overflow
errors, truncating integer division, Go's remainder sign and IEEE double division.
Ordering is defined for same-typed bool/string/bytes and across int/uint/double
(Kubernetes enables cross-type numeric comparisons). Equality is heterogeneous
(different types are unequal, never an error).
"""

from __future__ import annotations

import math
from typing import Any, Final

from .functions import check_size
from .lib_time import add_time, sub_time
from .typesys import DYN, Type, compatible, display, is_dyn
from .values import (
    ABSENT,
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    DomainMap,
    Duration,
    EvalError,
    Timestamp,
    UInt,
    cel_compare,
    cel_equal,
    map_find,
    type_name,
)

__all__ = [
    "add",
    "binary_result_type",
    "contains_op",
    "div",
    "mod",
    "mul",
    "neg",
    "no_overload",
    "sub",
]


def no_overload(op: str, *values: Any) -> EvalError:
    types = ", ".join(type_name(v) for v in values)
    return EvalError(f"found no matching overload for '{op}' applied to '({types})'")


def _int(r: int) -> int:
    if r < INT64_MIN or r > INT64_MAX:
        raise EvalError("integer overflow")
    return r


def _uint(r: int) -> UInt:
    if r < 0 or r > UINT64_MAX:
        raise EvalError("unsigned integer overflow")
    return UInt(r)


def add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            r = a + b
            if r < INT64_MIN or r > INT64_MAX:
                raise EvalError("integer overflow")
            return r
        if ta is str or ta is tuple or ta is bytes:
            check_size(len(a) + len(b))
            return a + b
        if ta is float:
            return a + b
        if ta is UInt:
            return _uint(a + b)
    if (ta is Timestamp or ta is Duration) and (type(b) is Timestamp or type(b) is Duration):
        if not (ta is Timestamp and type(b) is Timestamp):
            return add_time(a, b)
    raise no_overload("_+_", a, b)


def sub(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            return _int(a - b)
        if ta is float:
            return a - b
        if ta is UInt:
            return _uint(a - b)
    if ta is Timestamp and (type(b) is Timestamp or type(b) is Duration):
        return sub_time(a, b)
    if ta is Duration and type(b) is Duration:
        return sub_time(a, b)
    raise no_overload("_-_", a, b)


def mul(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int:
            return _int(a * b)
        if ta is float:
            return a * b
        if ta is UInt:
            return _uint(a * b)
    raise no_overload("_*_", a, b)


def div(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b):
        if ta is int or ta is UInt:
            if b == 0:
                raise EvalError("division by zero")
            q = abs(int(a)) // abs(int(b))
            if (a < 0) != (b < 0):
                q = -q
            return _int(q) if ta is int else UInt(q)
        if ta is float:
            if b == 0.0:  # IEEE 754: no error for doubles
                if a != a or a == 0.0:
                    return math.nan
                return math.copysign(math.inf, a) * math.copysign(1.0, b)
            return a / b
    raise no_overload("_/_", a, b)


def mod(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is UInt):
        if b == 0:
            raise EvalError("modulus by zero")
        r = abs(int(a)) % abs(int(b))
        if a < 0:
            r = -r
        return r if ta is int else UInt(r)
    raise no_overload("_%_", a, b)


def neg(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        return _int(-a)
    if ta is float:
        return -a
    raise no_overload("-_", a)


def contains_op(item: Any, container: Any) -> bool:
    """``item in container``: list membership by CEL equality, map key presence.

    For the device domain maps this is real presence (``"d" in device.attributes`` is
    false for an unknown domain), unlike indexing, which yields an empty map.
    """
    tc = type(container)
    if tc is tuple:
        for x in container:
            if cel_equal(x, item):
                return True
        return False
    if tc is dict or tc is DomainMap:
        if type(item) is str:
            return item in container
        return map_find(container, item) is not ABSENT
    raise no_overload("@in", item, container)


def compare(op: str, a: Any, b: Any) -> bool:
    c = cel_compare(a, b, op)
    if c == 2:  # NaN
        return False
    if op == "_<_":
        return c < 0
    if op == "_<=_":
        return c <= 0
    if op == "_>_":
        return c > 0
    return c >= 0


# -- static typing ------------------------------------------------------------------------

_ARITH: Final[dict[str, frozenset[str]]] = {
    "_+_": frozenset({"int", "uint", "double", "string", "bytes", "list"}),
    "_-_": frozenset({"int", "uint", "double"}),
    "_*_": frozenset({"int", "uint", "double"}),
    "_/_": frozenset({"int", "uint", "double"}),
    "_%_": frozenset({"int", "uint"}),
}
_ORDERED: Final = frozenset({"int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration"})
_TIME: Final = frozenset({"timestamp", "duration"})
# (op, left, right) -> result for the timestamp/duration arithmetic overloads
_TIME_ARITH: Final[dict[tuple[str, Type, Type], Type]] = {
    ("_+_", "timestamp", "duration"): "timestamp",
    ("_+_", "duration", "timestamp"): "timestamp",
    ("_+_", "duration", "duration"): "duration",
    ("_-_", "timestamp", "duration"): "timestamp",
    ("_-_", "timestamp", "timestamp"): "duration",
    ("_-_", "duration", "duration"): "duration",
}
_NUMERIC: Final = frozenset({"int", "uint", "double"})


def _base(t: Type) -> str:
    return t if isinstance(t, str) else str(t[0])


class StaticError(Exception):
    """An operator applied to statically incompatible types."""


def _bad(op: str, *types: Type) -> StaticError:
    return StaticError(
        f"found no matching overload for '{op}' applied to '({', '.join(display(t) for t in types)})'"
    )


def binary_result_type(op: str, a: Type, b: Type) -> Type:
    """The result type of a binary operator, or :class:`StaticError` for no overload."""
    if op in ("_+_", "_-_") and (a in _TIME or b in _TIME):
        if is_dyn(a) or is_dyn(b):
            return DYN
        if (op, a, b) not in _TIME_ARITH:
            raise _bad(op, a, b)
        return _TIME_ARITH[(op, a, b)]
    if op in _ARITH:
        return _arith_type(op, a, b)
    if op in ("_<_", "_<=_", "_>_", "_>=_"):
        for t in (a, b):
            if not is_dyn(t) and t not in _ORDERED:
                raise _bad(op, a, b)
        if not is_dyn(a) and not is_dyn(b) and a != b and not (a in _NUMERIC and b in _NUMERIC):
            raise _bad(op, a, b)
        return "bool"
    if op in ("_==_", "_!=_"):
        if not compatible(a, b):
            raise _bad(op, a, b)
        return "bool"
    if op == "@in":
        return _in_type(a, b)
    raise AssertionError(op)  # pragma: no cover


def _arith_type(op: str, a: Type, b: Type) -> Type:
    """An arithmetic operator's result (not on times, `_TIME_ARITH`): both sides of one of the
    operator's types (a dyn side takes the other's), list + list a list of the common element
    type (dyn where the two differ)."""
    allowed = _ARITH[op]
    if is_dyn(a) and is_dyn(b):
        return DYN
    known = b if is_dyn(a) else a
    if _base(known) not in allowed:
        raise _bad(op, a, b)
    if not is_dyn(a) and not is_dyn(b):
        if _base(a) != _base(b):
            raise _bad(op, a, b)
        if _base(a) == "list":
            return ("list", a[1] if a == b else DYN)
    return known


def _in_type(a: Type, b: Type) -> Type:
    """`a in b`: bool, where `b` is a list of elements (or a map of keys) `a` may equal."""
    if is_dyn(b):
        return "bool"
    if _base(b) in ("list", "map"):
        if not compatible(a, b[1]):
            raise _bad("@in", a, b)
        return "bool"
    raise _bad("@in", a, b)


def unary_result_type(op: str, a: Type) -> Type:
    if op == "!_":
        if not (is_dyn(a) or a == "bool"):
            raise _bad(op, a)
        return "bool"
    if is_dyn(a):
        return DYN
    if a not in ("int", "double"):
        raise _bad(op, a)
    return a
