"""cel-go's ``ext.Strings`` (version 2, as in the Kubernetes base environment).

``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``,
``split``, ``substring``, ``trim``, ``join``, ``format`` and ``strings.quote``. Indices
count Unicode code points, as cel-go does (Python ``str`` indices already do).

Faithful to cel-go's edge cases, including its quirks: ``indexOf`` with a non-empty
needle and ``lastIndexOf`` raise "index out of range" on an empty receiver; ``split`` and
``replace`` follow Go's ``strings.SplitN``/``strings.Replace`` (an empty separator splits
into characters). ``format`` implements ``%s %d %f %e %b %x %X %o %%`` with an optional
``.N`` precision for ``%f``/``%e``; ``%f`` groups thousands like cel-go's en-US printer,
``%e`` prints Go's plain ``d.dddddde+XX`` form (cel-go's locale printer renders a
typographic ``×10ⁿ`` instead; see the module docs of :mod:`solver.cel`).
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from .functions import Overload, check_size, fail, register
from .lib_core import format_double, to_string
from .values import CelType, DomainMap, UInt, type_name

__all__ = ["format_string", "quote"]

# Go's unicode.IsSpace (strings.TrimSpace); Python's str.strip() also strips \x1c-\x1f.
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER: Final = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise fail(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def _index_of(s: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0 or offset >= len(s):
        raise fail(f"index out of range: {offset}")
    return s.find(sub, offset)


def _last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == "":
            return len(s)
        offset = len(s) - 1
    if sub == "":
        return offset
    if offset < 0 or offset >= len(s):
        raise fail(f"index out of range: {offset}")
    # the match may start at most at ``offset``
    return s.rfind(sub, 0, offset + len(sub))


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    count = len(s) + 1 if old == "" else s.count(old)
    if n >= 0:
        count = min(count, n)
    check_size(len(s) + count * (len(new) - len(old)))
    return s.replace(old, new, n if n >= 0 else -1)


def _split(s: str, sep: str, n: int = -1) -> tuple[str, ...]:
    if n == 0:
        return ()
    if sep == "":
        chars = list(s)
        if n < 0 or n >= len(chars):
            return tuple(chars)
        return (*chars[: n - 1], "".join(chars[n - 1 :]))
    return tuple(s.split(sep, n - 1 if n > 0 else -1))


def _substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise fail(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise fail(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise fail(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise fail(f"index out of range: {end}")
    return s[start:end]


def _join(items: tuple[Any, ...], sep: str = "") -> str:
    for x in items:
        if type(x) is not str:
            raise fail(f"join: list element of type '{type_name(x)}' is not a string")
    check_size(sum(len(x) for x in items) + len(sep) * max(len(items) - 1, 0))
    return sep.join(items)


QUOTE_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}
"""The backslash escapes of a double-quoted string, as CEL's `strings.quote` and Go's
`strconv.Quote` write them (`lib_url` quotes its errors with the same table)."""


def quote(s: str) -> str:
    """``strings.quote``: double-quoted, with CEL escapes for control characters."""
    out = ['"']
    for ch in s:
        out.append(QUOTE_ESCAPES.get(ch, ch))
    out.append('"')
    return "".join(out)


# -- format -----------------------------------------------------------------------------

_CLAUSE: Final = re.compile(r"%(?:\.(?P<prec>[0-9]+))?(?P<verb>.?)", re.DOTALL)


def _fmt_decimal(v: Any) -> str:
    if type(v) in (int, UInt):
        return str(int(v))
    raise fail(
        f"error during formatting: decimal clause can only be used on integers, was given {type_name(v)}"
    )


def _fmt_fixed(v: Any, prec: int) -> str:
    if type(v) is str and v in ("NaN", "Infinity", "-Infinity"):
        v = float(v.replace("Infinity", "inf"))
    if type(v) is not float:
        raise fail(
            "error during formatting: fixed-point clause can only be used on doubles, "
            f"was given {type_name(v)}"
        )
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return format(v, f",.{prec}f")


def _fmt_scientific(v: Any, prec: int) -> str:
    if type(v) is str and v in ("NaN", "Infinity", "-Infinity"):
        v = float(v.replace("Infinity", "inf"))
    if type(v) is not float:
        raise fail(
            "error during formatting: scientific clause can only be used on doubles, "
            f"was given {type_name(v)}"
        )
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return format(v, f".{prec}e")


def _fmt_binary(v: Any) -> str:
    if type(v) is bool:
        return "1" if v else "0"
    if type(v) in (int, UInt):
        return format(int(v), "b")
    raise fail(
        "error during formatting: only integers and bools can be formatted as binary, "
        f"was given {type_name(v)}"
    )


def _fmt_hex(v: Any, upper: bool) -> str:
    t = type(v)
    if t is str:
        out = v.encode("utf-8").hex()
    elif t is bytes:
        out = v.hex()
    elif t in (int, UInt):
        out = format(int(v), "x")
    else:
        raise fail(
            "error during formatting: only integers, byte buffers, and strings can be formatted as hex, "
            f"was given {type_name(v)}"
        )
    return out.upper() if upper else out


def _fmt_octal(v: Any) -> str:
    if type(v) in (int, UInt):
        return format(int(v), "o")
    raise fail(
        f"error during formatting: octal clause can only be used on integers, was given {type_name(v)}"
    )


def _quote_member(v: Any, text: str) -> str:
    t = type(v)
    if t is str:
        return quote(text)
    if t is bytes:
        return "b" + quote(text)
    if t is float and (math.isnan(v) or math.isinf(v)):
        return quote(text)
    return text


def _fmt_member(v: Any) -> str:
    """How ``%s`` renders a list element or map value (doubles with 6 decimals, as cel-go)."""
    t = type(v)
    if t is float:
        return format(v, ".6f") if not (math.isnan(v) or math.isinf(v)) else format_double(v)
    if t is CelType:
        return f"type({v.name})"
    return _fmt_string(v)


def _fmt_string(v: Any) -> str:
    t = type(v)
    if t is tuple:
        return "[" + ", ".join(_quote_member(x, _fmt_member(x)) for x in v) + "]"
    if t is dict or t is DomainMap:
        pairs = []
        for k, x in v.items():
            if type(k) not in (str, bool, int, UInt):
                raise fail(f"no formatting function for map key of type {type_name(k)}")
            pairs.append((_quote_member(k, _fmt_string(k)), _quote_member(x, _fmt_member(x))))
        pairs.sort(key=lambda p: p[0])
        return "{" + ", ".join(f"{k}:{x}" for k, x in pairs) + "}"
    if v is None:
        return "null"
    if t in (str, int, UInt, float, bool, bytes, CelType):
        return to_string(v)
    raise fail(
        "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
        f"maps, lists, types, durations, and timestamps, was given {type_name(v)}"
    )


def format_string(fmt: str, args: tuple[Any, ...]) -> str:
    """``"...".format([args])``."""
    out: list[str] = []
    pos = 0
    argi = 0
    total = 0
    while True:
        i = fmt.find("%", pos)
        if i < 0:
            out.append(fmt[pos:])
            break
        out.append(fmt[pos:i])
        m = _CLAUSE.match(fmt, i)
        assert m is not None
        pos = m.end()
        verb, prec_text = m["verb"], m["prec"]
        if verb == "%" and prec_text is None:
            out.append("%")
            continue
        if verb == "":
            raise fail("error during formatting: unexpected end of format string")
        if argi >= len(args):
            raise fail(f"error during formatting: index {argi} out of range")
        v = args[argi]
        argi += 1
        prec = int(prec_text) if prec_text is not None else 6
        if prec_text is not None and verb not in ("f", "e"):
            raise fail(f"error during formatting: precision is not supported for %{verb}")
        if verb == "s":
            piece = _fmt_string(v)
        elif verb == "d":
            piece = _fmt_decimal(v)
        elif verb == "f":
            piece = _fmt_fixed(v, prec)
        elif verb == "e":
            piece = _fmt_scientific(v, prec)
        elif verb == "b":
            piece = _fmt_binary(v)
        elif verb in ("x", "X"):
            piece = _fmt_hex(v, verb == "X")
        elif verb == "o":
            piece = _fmt_octal(v)
        else:
            raise fail(
                "error during formatting: could not parse formatting clause: "
                f"unrecognized formatting clause %{verb}"
            )
        total += len(piece)
        check_size(total + len(fmt))
        out.append(piece)
    return "".join(out)


def _text_cost(args: tuple[Any, ...], result: Any) -> int:
    n = sum(len(a) for a in args if type(a) is str)
    if type(result) is str:
        n += len(result)
    elif type(result) is tuple:
        n += sum(len(x) for x in result if type(x) is str)
    return n // 10


def _join_cost(args: tuple[Any, ...], result: Any) -> int:
    return len(result) // 10 if type(result) is str else 0


_S: Final = "string"
_I: Final = "int"

OVERLOADS: Final[list[Overload]] = [
    Overload("charAt", True, (_S, _I), _S, _char_at),
    Overload("indexOf", True, (_S, _S), _I, _index_of, _text_cost),
    Overload("indexOf", True, (_S, _S, _I), _I, _index_of, _text_cost),
    Overload("lastIndexOf", True, (_S, _S), _I, _last_index_of, _text_cost),
    Overload("lastIndexOf", True, (_S, _S, _I), _I, _last_index_of, _text_cost),
    Overload("lowerAscii", True, (_S,), _S, lambda s: s.translate(_LOWER), _text_cost),
    Overload("upperAscii", True, (_S,), _S, lambda s: s.translate(_UPPER), _text_cost),
    Overload("replace", True, (_S, _S, _S), _S, _replace, _text_cost),
    Overload("replace", True, (_S, _S, _S, _I), _S, _replace, _text_cost),
    Overload("split", True, (_S, _S), ("list", _S), _split, _text_cost),
    Overload("split", True, (_S, _S, _I), ("list", _S), _split, _text_cost),
    Overload("substring", True, (_S, _I), _S, _substring, _text_cost),
    Overload("substring", True, (_S, _I, _I), _S, _substring, _text_cost),
    Overload("trim", True, (_S,), _S, lambda s: s.strip(_GO_SPACE), _text_cost),
    Overload("join", True, (("list", _S),), _S, _join, _join_cost),
    Overload("join", True, (("list", _S), _S), _S, _join, _join_cost),
    Overload("format", True, (_S, ("list", "dyn")), _S, format_string, _text_cost),
    Overload("strings.quote", False, (_S,), _S, quote, _text_cost),
]

register(OVERLOADS)
