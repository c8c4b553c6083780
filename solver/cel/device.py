"""The device as CEL sees it: :class:`DeviceView` and its conversion to the ``device`` value.

Why a plain view: the CEL layer must not depend on the pydantic models (the caller
builds the view from a ResourceSlice device, with bare attribute names already moved
under the driver's domain). Conversion happens once per view object and is cached on
it: the attribute maps are wrapped so that an unknown domain reads as an empty map, and
every attribute is validated up front, because upstream converts all attributes before
evaluating and an invalid one (a version that is not strict semver, a value of an
unsupported type) makes *every* evaluation on that device fail.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from solver.api.quantity import Quantity
from solver.cel.semver import Semver
from solver.cel.values import INT64_MAX, INT64_MIN, DeviceValue, DomainMap

__all__ = ["AttrValue", "DeviceView", "Prepared", "encode_value", "prepare"]

_Scalar = int | bool | str | Semver
#: An attribute value: a scalar or (KEP-5491 list-typed attributes) a tuple of scalars.
AttrValue = int | bool | str | Semver | tuple[_Scalar, ...]


@dataclass(frozen=True)
class DeviceView:
    """What a CEL expression can see of one device (plain data, built by the caller).

    ``attributes`` and ``capacity`` map domain -> id -> value; bare attribute names must
    already be placed under the ``driver`` domain. ``name`` is exposed as ``device.name``
    (used by KEP-6080 derived attributes; upstream selectors have no such field).
    """

    driver: str
    name: str
    attributes: Mapping[str, Mapping[str, AttrValue]]
    capacity: Mapping[str, Mapping[str, Quantity]]
    allow_multiple_allocations: bool = False
    _prepared: Prepared | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def ref(self) -> str:
        """``driver/name`` for messages."""
        return f"{self.driver}/{self.name}"


class Prepared:
    """The converted device (or the reason it cannot be evaluated) and its cached keys."""

    __slots__ = ("value", "error", "full_key")

    def __init__(self, value: DeviceValue | None, error: str | None) -> None:
        self.value = value
        self.error = error
        self.full_key: Hashable | None = None


_BOOL: Final = object()
_SEMVER: Final = object()
_QUANTITY: Final = object()
_LIST: Final = object()
_OTHER: Final = object()
#: Marks an attribute/capacity that does not exist (in signatures).
MISSING: Final = object()


def encode_value(v: Any) -> Hashable:
    """A hashable key for a value that distinguishes everything CEL can distinguish.

    ``True == 1`` and ``Quantity("1Ki") == Quantity("1024")`` in Python, but CEL can tell
    them apart (``type()``, result values), so values carry a type tag where needed.
    """
    t = type(v)
    if t is str or t is int:
        return v  # type: ignore[no-any-return]
    if t is bool:
        return (_BOOL, v)
    if t is Semver:
        return (_SEMVER, v.text)
    if t is Quantity:
        f = v.as_fraction()  # Fraction hashing is slow; its two ints are not
        return (_QUANTITY, f.numerator, f.denominator, v.format)
    if t is tuple:
        return (_LIST, tuple(encode_value(x) for x in v))
    return (_OTHER, type(v).__name__, repr(v))


def _check_scalar(v: Any) -> str | None:
    t = type(v)
    if t is bool or t is str:
        return None
    if t is int:
        return None if INT64_MIN <= v <= INT64_MAX else "integer value out of int64 range"
    if t is Semver:
        return None if v.error is None else f"parse semantic version: {v.error}"
    return "unsupported attribute value"


def _check_attribute(v: Any) -> str | None:
    if type(v) is tuple:
        kinds = {type(x) for x in v}
        if len(kinds) > 1:
            return "unsupported attribute value: list elements of different types"
        for x in v:
            err = _check_scalar(x)
            if err is not None:
                return err
        return None
    return _check_scalar(v)


def _convert(device: DeviceView) -> Prepared:
    attrs = DomainMap()
    for domain, ids in device.attributes.items():
        inner: dict[str, Any] = {}
        for name, v in ids.items():
            err = _check_attribute(v)
            if err is not None:
                return Prepared(None, f"attribute {domain}/{name}: {err}")
            inner[name] = v
        attrs[domain] = inner
    caps = DomainMap()
    for domain, ids in device.capacity.items():
        cinner: dict[str, Any] = {}
        for name, q in ids.items():
            if type(q) is not Quantity:
                return Prepared(None, f"capacity {domain}/{name}: unsupported capacity value")
            cinner[name] = q
        caps[domain] = cinner
    value = DeviceValue(device.driver, device.name, attrs, caps, bool(device.allow_multiple_allocations))
    return Prepared(value, None)


def prepare(device: DeviceView) -> Prepared:
    """The converted device, computed once per view object."""
    p = device._prepared
    if p is None:
        p = _convert(device)
        object.__setattr__(device, "_prepared", p)
    return p


def full_key(device: DeviceView) -> Hashable:
    """Everything CEL can read of the device (the signature of unanalysable programs)."""
    p = prepare(device)
    if p.full_key is None:
        attrs = tuple(
            sorted(
                (d, tuple(sorted((k, encode_value(v)) for k, v in m.items())))
                for d, m in device.attributes.items()
            )
        )
        caps = tuple(
            sorted(
                (d, tuple(sorted((k, encode_value(v)) for k, v in m.items())))
                for d, m in device.capacity.items()
            )
        )
        p.full_key = (device.driver, device.name, bool(device.allow_multiple_allocations), attrs, caps)
    return p.full_key
