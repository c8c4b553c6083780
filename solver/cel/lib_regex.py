"""Regular expressions: standard ``matches`` and the Kubernetes ``find``/``findAll``.

Why RE2 (the ``re2`` module cel-python depends on) and not Python's ``re``: cel-go uses
Go's ``regexp``, which is RE2 syntax and linear-time. Python's ``re`` has a different
syntax (no ``\\pL`` classes, different flags) and backtracking that an expression could
use to hang the scheduler. Patterns are compiled once and cached; a constant pattern
is also validated when the expression is compiled (Kubernetes' regex literal
validation), so an invalid literal is a compile error.
``findAll`` reproduces Go's ``FindAllString``: an empty match right after the previous
match is skipped.
"""

from __future__ import annotations

from typing import Any, Final

import re2

from .functions import Overload, check_size, fail, register

__all__ = ["compile_regex", "REGEX_FUNCTIONS"]

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False

_CACHE: Final[dict[str, Any]] = {}
_CACHE_MAX: Final = 1024

#: function name -> index of its pattern argument (receiver counted as 0)
REGEX_FUNCTIONS: Final = {"matches": 1, "find": 1, "findAll": 1}


def compile_regex(pattern: str) -> Any:
    """The compiled RE2 pattern; raises :class:`ValueError` with RE2's message."""
    rx = _CACHE.get(pattern)
    if rx is None:
        try:
            rx = re2.compile(pattern, options=_OPTIONS)
        except re2.error as ex:
            msg = (
                ex.args[0].decode("utf-8", "replace")
                if ex.args and isinstance(ex.args[0], bytes)
                else str(ex)
            )
            raise ValueError(f"error parsing regexp: {msg}") from None
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[pattern] = rx
    return rx


def _rx(pattern: str) -> Any:
    try:
        return compile_regex(pattern)
    except ValueError as ex:
        raise fail(f"Illegal regex: {ex}") from None


def _matches(s: str, pattern: str) -> bool:
    return _rx(pattern).search(s) is not None


def _find(s: str, pattern: str) -> str:
    m = _rx(pattern).search(s)
    return "" if m is None else str(m.group(0))


def _find_all(s: str, pattern: str, limit: int = -1) -> tuple[str, ...]:
    rx = _rx(pattern)
    out: list[str] = []
    if limit == 0:
        return ()
    pos = 0
    prev_end = -1
    while pos <= len(s):
        m = rx.search(s, pos)
        if m is None:
            break
        start, end = m.start(), m.end()
        if start == end and start == prev_end:
            # Go skips an empty match that abuts the previous match
            pos = start + 1
            continue
        out.append(str(m.group(0)))
        check_size(len(out))
        if 0 < limit <= len(out):
            break
        prev_end = end
        pos = end if end > start else end + 1
    return tuple(out)


def _cost(args: tuple[Any, ...], result: Any) -> int:
    # cel-go: string length x regex length, scaled
    return (len(args[0]) * max(len(args[1]), 1)) // 4


OVERLOADS: Final[list[Overload]] = [
    Overload("matches", True, ("string", "string"), "bool", _matches, _cost),
    Overload("matches", False, ("string", "string"), "bool", _matches, _cost),
    Overload("find", True, ("string", "string"), "string", _find, _cost),
    Overload("findAll", True, ("string", "string"), ("list", "string"), _find_all, _cost),
    Overload("findAll", True, ("string", "string", "int"), ("list", "string"), _find_all, _cost),
]

register(OVERLOADS)
