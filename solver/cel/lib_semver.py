"""The Kubernetes ``semver`` CEL library on :class:`solver.cel.semver.Semver`.

``semver(s[, normalize])``, ``isSemver(s[, normalize])`` and the methods ``major``,
``minor``, ``patch``, ``compareTo``, ``isGreaterThan``, ``isLessThan``. Like quantities,
semvers have no ``<`` operator; ``==`` is semver precedence equality (build metadata
ignored).
"""

from __future__ import annotations

from typing import Final

from .functions import Overload, fail, register
from .semver import Semver, SemverError
from .values import INT64_MAX

__all__: list[str] = []


def _parse(s: str, normalize: bool = False) -> Semver:
    try:
        return Semver.parse(s, normalize)
    except SemverError as ex:
        raise fail(str(ex)) from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(s, normalize)
    except SemverError:
        return False
    return True


def _component(n: int) -> int:
    if n > INT64_MAX:
        raise fail("integer overflow")
    return n


_V: Final = "semver"

OVERLOADS: Final[list[Overload]] = [
    Overload("semver", False, ("string",), _V, _parse),
    Overload("semver", False, ("string", "bool"), _V, _parse),
    Overload("isSemver", False, ("string",), "bool", _is_semver),
    Overload("isSemver", False, ("string", "bool"), "bool", _is_semver),
    Overload("major", True, (_V,), "int", lambda v: _component(v.major)),
    Overload("minor", True, (_V,), "int", lambda v: _component(v.minor)),
    Overload("patch", True, (_V,), "int", lambda v: _component(v.patch)),
    Overload("compareTo", True, (_V, _V), "int", lambda a, b: a.compare(b)),
    Overload("isGreaterThan", True, (_V, _V), "bool", lambda a, b: a.compare(b) == 1),
    Overload("isLessThan", True, (_V, _V), "bool", lambda a, b: a.compare(b) == -1),
]

register(OVERLOADS)
