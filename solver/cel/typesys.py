"""Static types for the compile-time checker.

Why a checker at all: cel-go type-checks every expression against the declared
``device`` variable and the declared function overloads. Many mistakes are therefore
*compile* errors upstream (``quantity("1") < quantity("2")``, ``"a" + 1``, ``1 == 1u``,
``device.nosuchfield``, an unknown function). dra-solver has no apiserver in front of it,
so the same checks run here; anything the checker cannot decide (``dyn`` operands, which
is what every attribute value is) is checked again at run time.

A type is a string for the simple types (``"int"``, ``"dyn"``, ``"quantity"``, ...) or a
tuple for the parameterised ones: ``("list", T)``, ``("map", K, V)``, ``("opt", T)``.
``"A"`` is an overload type parameter and behaves like ``dyn``.
"""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address
from typing import Any, Final

from ..api.quantity import Quantity
from .semver import Semver
from .values import (
    CelType,
    Cidr,
    DeviceValue,
    DomainMap,
    Duration,
    NamedFormat,
    Opt,
    Timestamp,
    UInt,
    Url,
)

__all__ = [
    "DEVICE_FIELDS",
    "DYN",
    "Type",
    "common",
    "compatible",
    "display",
    "is_dyn",
    "runtime_check",
    "unify",
]

Type = str | tuple[Any, ...]

DYN: Final = "dyn"
_DYNISH: Final = frozenset({"dyn", "A", "B"})

#: Fields of the ``device`` variable and their static types: upstream's ``kubernetes.DRADevice``,
#: which has no ``name`` (docs/semantics.md, "KEP-6080 as merged upstream").
DEVICE_FIELDS: Final[dict[str, Type]] = {
    "driver": "string",
    "allowMultipleAllocations": "bool",
    "attributes": ("map", "string", ("map", "string", "dyn")),
    "capacity": ("map", "string", ("map", "string", "quantity")),
}

_DISPLAY: Final = {
    "quantity": "kubernetes.Quantity",
    "semver": "kubernetes.Semver",
    "device": "kubernetes.DRADevice",
    "null": "null_type",
    "ip": "net.IP",
    "cidr": "net.CIDR",
    "url": "kubernetes.URL",
    "format": "kubernetes.NamedFormat",
    "timestamp": "google.protobuf.Timestamp",
    "duration": "google.protobuf.Duration",
}


def is_dyn(t: Type) -> bool:
    return isinstance(t, str) and t in _DYNISH


def display(t: Type) -> str:
    """cel-go style type name for messages."""
    if isinstance(t, str):
        return "dyn" if t in _DYNISH else _DISPLAY.get(t, t)
    if t[0] == "list":
        return f"list({display(t[1])})"
    if t[0] == "map":
        return f"map({display(t[1])}, {display(t[2])})"
    if t[0] == "opt":
        return f"optional_type({display(t[1])})"
    return str(t)  # pragma: no cover


_NUMERIC: Final = frozenset({"int", "uint", "double"})


def compatible(a: Type, b: Type) -> bool:
    """Can a value of static type ``a`` meet one of static type ``b`` (either may be dyn)?"""
    if is_dyn(a) or is_dyn(b):
        return True
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a[0] != b[0] or len(a) != len(b):
        return False
    return all(compatible(x, y) for x, y in zip(a[1:], b[1:], strict=True))


def unify(params: tuple[Type, ...], args: tuple[Type, ...]) -> bool:
    """Do argument types fit an overload's parameters, type parameters bound consistently?

    ``[1].indexOf("a")`` does not fit ``list(A).indexOf(A)``: ``A`` is bound to ``int`` by
    the receiver, and cel-go's checker refuses it at compile time.
    """
    bound: dict[str, Type] = {}

    def fit(p: Type, a: Type) -> bool:
        if isinstance(p, str):
            if p in ("A", "B"):
                if is_dyn(a):
                    return True
                prev = bound.get(p)
                if prev is None:
                    bound[p] = a
                    return True
                if not compatible(prev, a):
                    return False
                bound[p] = common(prev, a)
                return True
            return compatible(p, a)
        if is_dyn(a):
            return True
        if isinstance(a, str) or a[0] != p[0] or len(a) != len(p):
            return False
        return all(fit(x, y) for x, y in zip(p[1:], a[1:], strict=True))

    return all(fit(p, a) for p, a in zip(params, args, strict=True))


def common(a: Type, b: Type) -> Type:
    """The type of a value that is either an ``a`` or a ``b`` (dyn where they differ)."""
    if a == b:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b):
        return (a[0], *(common(x, y) for x, y in zip(a[1:], b[1:], strict=True)))
    if a == "null":
        return b
    if b == "null":
        return a
    return DYN


def _is_map(v: Any) -> bool:
    t = type(v)
    return t is dict or t is DomainMap


_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "int": lambda v: type(v) is int,
    "uint": lambda v: type(v) is UInt,
    "double": lambda v: type(v) is float,
    "bool": lambda v: type(v) is bool,
    "string": lambda v: type(v) is str,
    "bytes": lambda v: type(v) is bytes,
    "null": lambda v: v is None,
    "type": lambda v: type(v) is CelType,
    "quantity": lambda v: type(v) is Quantity,
    "semver": lambda v: type(v) is Semver,
    "device": lambda v: type(v) is DeviceValue,
    "ip": lambda v: type(v) is IPv4Address or type(v) is IPv6Address,
    "cidr": lambda v: type(v) is Cidr,
    "url": lambda v: type(v) is Url,
    "format": lambda v: type(v) is NamedFormat,
    "timestamp": lambda v: type(v) is Timestamp,
    "duration": lambda v: type(v) is Duration,
}


def runtime_check(t: Type) -> Callable[[Any], bool] | None:
    """A predicate a runtime value must meet for a parameter of type ``t`` (None: any)."""
    if is_dyn(t):
        return None
    if isinstance(t, str):
        return _CHECKS[t]
    if t[0] == "list":
        return lambda v: type(v) is tuple
    if t[0] == "map":
        return _is_map
    if t[0] == "opt":
        return lambda v: type(v) is Opt
    raise AssertionError(t)  # pragma: no cover
