"""The device as CEL sees it: :class:`DeviceView` and its conversion to the ``device`` value.

Why a plain view: the CEL layer must not depend on the pydantic models (the caller
builds the view from a ResourceSlice device, with bare attribute names already moved
under the driver's domain). Conversion happens once per view object and is cached on
it: the attribute maps are wrapped so that an unknown domain reads as an empty map, and
every attribute is validated up front, because upstream converts all attributes before
evaluating and an invalid one (a version that is not strict semver, a value of an
unsupported type) makes *every* evaluation on that device fail.

Three things are memoised on a view, each computed only when first needed:
:func:`check` (is the device valid; a cheap scan of the raw values, no copies),
:func:`prepare` (the full conversion, needed only to really evaluate a program) and
:func:`full_key` (the signature of programs whose reads could not be bounded). A cache
hit in :class:`solver.cel.cache.EvalCache` needs only :func:`check` and the few raw
values its program reads, never the conversion.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..api.quantity import Quantity
from .semver import Semver
from .values import INT64_MAX, INT64_MIN, DeviceValue, DomainMap

__all__ = ["AttrValue", "DeviceView", "Prepared", "check", "encode_value", "full_key", "prepare"]

_Scalar = int | bool | str | Semver
#: An attribute value: a scalar or (KEP-5491 list-typed attributes) a tuple of scalars.
AttrValue = int | bool | str | Semver | tuple[_Scalar, ...]


#: ``DeviceView._error`` before :func:`check` ran.
UNCHECKED: Final[Any] = object()


@dataclass(frozen=True, init=False)
class DeviceView:
    """What a CEL expression can see of one device (plain data, built by the caller).

    ``attributes`` and ``capacity`` map domain -> id -> value; bare attribute names must
    already be placed under the ``driver`` domain. ``name`` is exposed as ``device.name``
    (used by KEP-6080 derived attributes; upstream selectors have no such field).
    The maps must not be changed once the view has been evaluated (results are memoised).
    """

    driver: str
    name: str
    attributes: Mapping[str, Mapping[str, AttrValue | None]]  # None: an attribute without a value
    capacity: Mapping[str, Mapping[str, Quantity]]
    allow_multiple_allocations: bool = False
    # Memos, set on first use with object.__setattr__; until then the class defaults apply.
    _prepared: Prepared | None = field(default=None, init=False, repr=False, compare=False)
    _error: str | None = field(default=UNCHECKED, init=False, repr=False, compare=False)
    _full_key: Hashable | None = field(default=None, init=False, repr=False, compare=False)

    def __init__(
        self,
        driver: str,
        name: str,
        attributes: Mapping[str, Mapping[str, AttrValue | None]],
        capacity: Mapping[str, Mapping[str, Quantity]],
        allow_multiple_allocations: bool = False,
    ) -> None:
        # Hand-written for speed (a view is built per device and per run): the generated
        # frozen __init__ calls object.__setattr__ once per field, three times slower.
        # The memo fields are left to their class-level defaults.
        d = self.__dict__
        d["driver"] = driver
        d["name"] = name
        d["attributes"] = attributes
        d["capacity"] = capacity
        d["allow_multiple_allocations"] = allow_multiple_allocations

    @property
    def ref(self) -> str:
        """``driver/name`` for messages."""
        return f"{self.driver}/{self.name}"


class Prepared:
    """The converted device, or the reason it cannot be evaluated."""

    __slots__ = ("value", "error")

    def __init__(self, value: DeviceValue | None, error: str | None) -> None:
        self.value = value
        self.error = error


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
        return v
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


def _first_error(device: DeviceView) -> str | None:
    """The first invalid attribute or capacity (in map order), or None."""
    for domain, ids in device.attributes.items():
        for name, v in ids.items():
            err = _check_attribute(v)
            if err is not None:
                return f"attribute {domain}/{name}: {err}"
    for domain, cids in device.capacity.items():
        for name, q in cids.items():
            if type(q) is not Quantity:
                return f"capacity {domain}/{name}: unsupported capacity value"
    return None


def _validate(device: DeviceView) -> str | None:
    """:func:`_first_error`, with a fast pass for devices of plain valid scalars."""
    v: Any
    for ids in device.attributes.values():
        for v in ids.values():
            t = type(v)
            if t is str or t is bool:
                continue
            if t is int:
                if INT64_MIN <= v <= INT64_MAX:
                    continue
            elif t is Semver and v.error is None:
                continue
            return _first_error(device)  # a list, or maybe an invalid value: the full check
    for cids in device.capacity.values():
        for q in cids.values():
            if type(q) is not Quantity:
                return _first_error(device)
    return None


def check(device: DeviceView) -> str | None:
    """Why no expression can be evaluated on ``device`` (None: it can), once per view.

    Reads the raw values only (no conversion), so it is cheap enough for every cache
    lookup; the rule it enforces is upstream's: one invalid attribute fails every
    evaluation on the device, whatever the expression reads.
    """
    err = device._error
    if err is UNCHECKED:
        err = _validate(device)
        object.__setattr__(device, "_error", err)
    return err


def _convert(device: DeviceView) -> Prepared:
    err = check(device)
    if err is not None:
        return Prepared(None, err)
    attrs = DomainMap()
    for domain, ids in device.attributes.items():
        attrs[domain] = dict(ids)
    caps = DomainMap()
    for domain, cids in device.capacity.items():
        caps[domain] = dict(cids)
    value = DeviceValue(device.driver, device.name, attrs, caps, bool(device.allow_multiple_allocations))
    return Prepared(value, None)


def prepare(device: DeviceView) -> Prepared:
    """The converted device, computed once per view object."""
    p = device._prepared
    if p is None:
        p = _convert(device)
        object.__setattr__(device, "_prepared", p)
    return p


def _encode_maps(maps: Mapping[str, Mapping[str, Any]]) -> Hashable:
    return tuple(
        sorted((d, tuple(sorted((k, encode_value(v)) for k, v in m.items()))) for d, m in maps.items())
    )


def full_key(device: DeviceView) -> Hashable:
    """Everything CEL can read of the device (the signature of unanalysable programs).

    Computed from the raw values, once per view; validity is the caller's business
    (see :func:`check`).
    """
    k = device._full_key
    if k is None:
        k = (
            device.driver,
            device.name,
            bool(device.allow_multiple_allocations),
            _encode_maps(device.attributes),
            _encode_maps(device.capacity),
        )
        object.__setattr__(device, "_full_key", k)
    return k
