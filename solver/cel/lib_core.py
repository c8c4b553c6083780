"""Standard CEL functions, optional values and DRA's ``includes`` (KEP-5491).

Covers ``size``, ``contains``/``startsWith``/``endsWith``, the type conversions
(``int``, ``uint``, ``double``, ``string``, ``bool``, ``bytes``, ``type``), the optional
library (``optional.of/none/ofNonZeroValue``, ``hasValue``, ``value``, ``orValue``,
``or``) and ``includes``. Conversions follow Go's ``strconv`` rules as cel-go does
(``int("1_000")`` and ``int(" 1")`` are errors although Python's ``int()`` accepts them).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Final

from .functions import Overload, fail, register
from .typesys import DYN, Type
from .values import (
    INT64_MAX,
    INT64_MIN,
    NONE,
    UINT64_MAX,
    CelType,
    DomainMap,
    Opt,
    UInt,
    cel_equal,
    type_name,
)

__all__ = ["format_double", "includes", "to_string"]

#: KEP-5491: ``includes`` refuses lists longer than the per-device attribute value limit.
INCLUDES_MAX_LIST: Final = 48

_INT_RE: Final = re.compile(r"[+-]?[0-9]+")
_UINT_RE: Final = re.compile(r"\+?[0-9]+")
_FLOAT_RE: Final = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)


def _size(v: Any) -> int:
    t = type(v)
    if t is str or t is bytes or t is tuple or t is dict or t is DomainMap:
        return len(v)
    raise fail(f"found no matching overload for 'size' applied to '({type_name(v)})'")


def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return v
    if t is UInt:
        if v > INT64_MAX:
            raise fail("range error converting uint to int")
        return int(v)
    if t is float:
        if math.isnan(v) or math.isinf(v) or not (-(2.0**63) <= v < 2.0**63):
            raise fail(f"range error converting {v} to int")
        return math.trunc(v)
    if t is str:
        if _INT_RE.fullmatch(v) is None:
            raise fail(f'strconv.ParseInt: parsing "{v}": invalid syntax')
        n = int(v)
        if not INT64_MIN <= n <= INT64_MAX:
            raise fail(f'strconv.ParseInt: parsing "{v}": value out of range')
        return n
    raise fail(f"type conversion error from '{type_name(v)}' to 'int'")


def _to_uint(v: Any) -> UInt:
    t = type(v)
    if t is UInt:
        return v
    if t is int:
        if v < 0:
            raise fail("range error converting int to uint")
        return UInt(v)
    if t is float:
        if math.isnan(v) or math.isinf(v) or not (0 <= v < 2.0**64):
            raise fail(f"range error converting {v} to uint")
        return UInt(math.trunc(v))
    if t is str:
        if _UINT_RE.fullmatch(v) is None:
            raise fail(f'strconv.ParseUint: parsing "{v}": invalid syntax')
        n = int(v)
        if n > UINT64_MAX:
            raise fail(f'strconv.ParseUint: parsing "{v}": value out of range')
        return UInt(n)
    raise fail(f"type conversion error from '{type_name(v)}' to 'uint'")


def _to_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return v
    if t is int or t is UInt:
        return float(v)
    if t is str:
        if _FLOAT_RE.fullmatch(v) is None:
            raise fail(f'strconv.ParseFloat: parsing "{v}": invalid syntax')
        return float(v)
    raise fail(f"type conversion error from '{type_name(v)}' to 'double'")


def format_double(f: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'g', -1, 64)``, which cel-go uses for ``string(double)``."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign, digit_tuple, exp = Decimal(repr(f)).as_tuple()
    digits = list(digit_tuple)
    assert isinstance(exp, int)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    nd = len(digits)
    dp = nd + exp  # position of the decimal point relative to the digits
    x = dp - 1
    s = "-" if sign else ""
    ds = "".join(map(str, digits))
    if x < -4 or x >= 6:  # Go: shortest formatting switches to %e at exponent 6
        mant = ds[0] + ("." + ds[1:] if nd > 1 else "")
        return f"{s}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if dp <= 0:
        return f"{s}0.{'0' * -dp}{ds}"
    if dp >= nd:
        return f"{s}{ds}{'0' * (dp - nd)}"
    return f"{s}{ds[:dp]}.{ds[dp:]}"


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return format_double(v)
    if t is bool:
        return "true" if v else "false"
    if t is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise fail("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is CelType:
        return v.name
    raise fail(f"type conversion error from '{type_name(v)}' to 'string'")


_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _to_bool(v: Any) -> bool:
    t = type(v)
    if t is bool:
        return v
    if t is str:
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise fail(f'strconv.ParseBool: parsing "{v}": invalid syntax')
    raise fail(f"type conversion error from '{type_name(v)}' to 'bool'")


def _to_bytes(v: Any) -> bytes:
    t = type(v)
    if t is bytes:
        return v
    if t is str:
        return v.encode("utf-8")
    raise fail(f"type conversion error from '{type_name(v)}' to 'bytes'")


def _type_of(v: Any) -> CelType:
    return CelType(type_name(v))


def _is_zero(v: Any) -> bool:
    t = type(v)
    if v is None:
        return True
    if t is bool:
        return v is False
    if t in (int, UInt, float):
        return bool(v == 0)
    if t in (str, bytes, tuple, dict, DomainMap):
        return len(v) == 0
    return False


def _opt_value(o: Opt) -> Any:
    if not o.present:
        raise fail("optional.none() dereference")
    return o.value


def _opt_or_value(o: Opt, default: Any) -> Any:
    return o.value if o.present else default


def _opt_or(o: Opt, other: Opt) -> Opt:
    return o if o.present else other


def includes(target: Any, arg: Any) -> bool:
    """DRA's ``x.includes(y)``: membership for a list attribute, equality for a scalar."""
    if type(target) is tuple:
        if len(target) > INCLUDES_MAX_LIST:
            raise fail(
                f"'includes' function cannot be applied to lists longer than {INCLUDES_MAX_LIST} values"
            )
        return any(cel_equal(x, arg) for x in target)
    return cel_equal(target, arg)


def _elem(args: tuple[Type, ...]) -> Type:
    t = args[0]
    return t[1] if isinstance(t, tuple) and t[0] in ("list", "opt") else DYN


def _opt_of(args: tuple[Type, ...]) -> Type:
    return ("opt", args[0])


def _text_cost(args: tuple[Any, ...], result: Any) -> int:
    return sum(len(a) for a in args if type(a) is str) // 10


_SIZED: Final[tuple[Type, ...]] = ("string", "bytes", ("list", "A"), ("map", "A", "B"))

OVERLOADS: Final[list[Overload]] = [
    *(Overload("size", False, (t,), "int", _size) for t in _SIZED),
    *(Overload("size", True, (t,), "int", _size) for t in _SIZED),
    Overload("contains", True, ("string", "string"), "bool", lambda s, x: x in s, _text_cost),
    Overload("startsWith", True, ("string", "string"), "bool", lambda s, x: s.startswith(x), _text_cost),
    Overload("endsWith", True, ("string", "string"), "bool", lambda s, x: s.endswith(x), _text_cost),
    *(Overload("int", False, (t,), "int", _to_int) for t in ("int", "uint", "double", "string")),
    *(Overload("uint", False, (t,), "uint", _to_uint) for t in ("int", "uint", "double", "string")),
    *(Overload("double", False, (t,), "double", _to_double) for t in ("int", "uint", "double", "string")),
    *(
        Overload("string", False, (t,), "string", to_string)
        for t in ("string", "int", "uint", "double", "bool", "bytes", "type")
    ),
    *(Overload("bool", False, (t,), "bool", _to_bool) for t in ("bool", "string")),
    *(Overload("bytes", False, (t,), "bytes", _to_bytes) for t in ("bytes", "string")),
    Overload("type", False, ("A",), "type", _type_of),
    # optional library
    Overload("optional.of", False, ("A",), _opt_of, Opt),
    Overload("optional.none", False, (), ("opt", DYN), lambda: NONE),
    Overload("optional.ofNonZeroValue", False, ("A",), _opt_of, lambda v: NONE if _is_zero(v) else Opt(v)),
    Overload("hasValue", True, (("opt", "A"),), "bool", lambda o: o.present),
    Overload("value", True, (("opt", "A"),), _elem, _opt_value),
    Overload("orValue", True, (("opt", "A"), "A"), _elem, _opt_or_value),
    Overload("or", True, (("opt", "A"), ("opt", "A")), lambda a: a[0], _opt_or),
    # DRA (KEP-5491): works on a scalar or a list attribute
    Overload("includes", True, (DYN, DYN), "bool", includes),
]

register(OVERLOADS)
