"""The Kubernetes ``quantity`` CEL library on :class:`solver.api.quantity.Quantity`.

``quantity(s)``, ``isQuantity(s)`` and the methods ``sign``, ``isInteger``,
``asInteger``, ``asApproximateFloat``, ``add``/``sub`` (quantity or int),
``compareTo``, ``isGreaterThan``, ``isLessThan``. Quantities have no ``<``/``+``
operators upstream (those are compile/run-time "no such overload" errors here too);
``==`` compares values (``quantity("1") == quantity("1000m")``).

``isInteger``/``asInteger`` follow upstream's ``AsInt64``: the value must be a whole
number within int64, otherwise ``isInteger`` is false and ``asInteger`` raises
"cannot convert value to integer".
"""

from __future__ import annotations

from typing import Final

from ..api.quantity import Quantity, QuantityError
from .functions import Overload, fail, register
from .values import INT64_MAX, INT64_MIN

__all__: list[str] = []


def _parse(s: str) -> Quantity:
    try:
        return Quantity.parse(s)
    except QuantityError as ex:
        raise fail(f"invalid quantity {s!r}: {ex.reason}") from None


def _is_quantity(s: str) -> bool:
    try:
        Quantity.parse(s)
    except QuantityError:
        return False
    return True


def _as_int64(q: Quantity) -> int | None:
    v = q.as_fraction()
    if v.denominator != 1 or not INT64_MIN <= v.numerator <= INT64_MAX:
        return None
    return v.numerator


def _as_integer(q: Quantity) -> int:
    v = _as_int64(q)
    if v is None:
        raise fail("cannot convert value to integer")
    return v


_Q: Final = "quantity"

OVERLOADS: Final[list[Overload]] = [
    Overload("quantity", False, ("string",), _Q, _parse),
    Overload("isQuantity", False, ("string",), "bool", _is_quantity),
    # upstream declared sign() as a global overload first and documents it as a method;
    # accept both spellings
    Overload("sign", True, (_Q,), "int", lambda q: q.sign()),
    Overload("sign", False, (_Q,), "int", lambda q: q.sign()),
    Overload("isInteger", True, (_Q,), "bool", lambda q: _as_int64(q) is not None),
    Overload("asInteger", True, (_Q,), "int", _as_integer),
    Overload("asApproximateFloat", True, (_Q,), "double", lambda q: q.as_approximate_float()),
    Overload("add", True, (_Q, _Q), _Q, lambda a, b: a + b),
    Overload("add", True, (_Q, "int"), _Q, lambda a, b: a + Quantity.parse(b)),
    Overload("sub", True, (_Q, _Q), _Q, lambda a, b: a - b),
    Overload("sub", True, (_Q, "int"), _Q, lambda a, b: a - Quantity.parse(b)),
    Overload("compareTo", True, (_Q, _Q), "int", lambda a, b: a.cmp(b)),
    Overload("isGreaterThan", True, (_Q, _Q), "bool", lambda a, b: a.cmp(b) == 1),
    Overload("isLessThan", True, (_Q, _Q), "bool", lambda a, b: a.cmp(b) == -1),
]

register(OVERLOADS)
