"""Which parts of the device an expression reads, found statically, and the signature built from them.

Why: a cluster of 1,000 nodes with 8 identical GPUs each evaluates every selector 8,000
times on what is, for the selector, the same device. If the expression only reads
``device.attributes["gpu.example.com"].model`` and
``device.capacity["gpu.example.com"].memory``, the pair of those two values is all that
can influence the result, and one evaluation per distinct pair suffices.

The analysis walks the syntax tree and recognises the access paths whose reads it can
bound exactly:

* ``device.driver``, ``device.name``, ``device.allowMultipleAllocations``;
* ``device.attributes[D].ID`` / ``[D][ID]`` / ``.?ID`` / ``has(...ID)`` and ``"ID" in
  device.attributes[D]`` with constant ``D`` and ``ID`` (or ``D`` = ``device.driver``):
  the value of that one attribute, or its absence;
* ``device.attributes[D]`` used any other way (bound to a variable, iterated, sized):
  the whole domain ``D``;
* ``device.attributes`` used any other way, or a non-constant domain: all attributes;
* the ``device`` variable itself used any other way: the whole device.

The same holds for ``device.capacity``. ``device.name`` enters a signature only when the
expression reads it, so identical devices with different names share one evaluation.
A device that cannot be evaluated at all (an invalid attribute) gets a signature of its
own, so its error is never hidden behind a cached result of a valid device.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Final

from ..api.quantity import Quantity
from .ast import Bind, Call, Comprehension, Ident, Index, Lit, Node, Select
from .device import (
    _QUANTITY,
    _SEMVER,
    MISSING,
    UNCHECKED,
    DeviceView,
    check,
    encode_value,
    full_key,
)
from .semver import Semver

__all__ = ["ReadPlan", "analyse"]

#: domain placeholder: "the device's driver name" (``device.attributes[device.driver]``)
DRIVER: Final = None

Read = tuple[Any, ...]
_INVALID: Final = object()


@dataclass(frozen=True)
class ReadPlan:
    """The device reads of one expression; ``full`` when they could not be bounded."""

    full: bool
    reads: tuple[Read, ...]

    def describe(self) -> list[str]:
        """Readable form, for debugging and tests."""
        if self.full:
            return ["device"]
        out = []
        for r in self.reads:
            if r[0] in ("driver", "name", "allowMultipleAllocations"):
                out.append(f"device.{r[0]}")
            elif r[0] == "all":
                out.append(f"device.{r[1]}")
            else:
                dom = "<driver>" if r[2] is DRIVER else r[2]
                out.append(f"device.{r[1]}[{dom}]" + (f".{r[3]}" if r[0] == "id" else ""))
        return out


class _Analyser:
    def __init__(self) -> None:
        self.full = False
        self.reads: set[Read] = set()

    @staticmethod
    def _is_device(node: Node, bound: frozenset[str]) -> bool:
        return isinstance(node, Ident) and node.name == "device" and "device" not in bound

    def _kind(self, node: Node, bound: frozenset[str]) -> str | None:
        """``device.attributes`` or ``device.capacity`` (plain selection) -> its field name."""
        if (
            isinstance(node, Select)
            and not node.optional
            and not node.test_only
            and node.field in ("attributes", "capacity")
            and self._is_device(node.target, bound)
        ):
            return node.field
        return None

    def _domain_key(self, node: Node, bound: frozenset[str]) -> tuple[str, Any, Node | None] | None:
        """A lookup in ``device.attributes``: (kind, constant domain | DRIVER | ..., key node)."""
        if isinstance(node, Select):
            kind = self._kind(node.target, bound)
            if kind is not None:
                return (kind, node.field, None)
            return None
        if isinstance(node, Index):
            kind = self._kind(node.target, bound)
            if kind is None:
                return None
            key = node.key
            if isinstance(key, Lit) and type(key.value) is str:
                return (kind, key.value, None)
            if (
                isinstance(key, Select)
                and key.field == "driver"
                and not key.test_only
                and self._is_device(key.target, bound)
            ):
                return (kind, DRIVER, None)
            return (kind, ..., key)
        return None

    def _plain_domain(self, node: Node, bound: frozenset[str]) -> tuple[str, Any] | None:
        """A domain lookup usable as the base of an attribute lookup (no ``?``/``has``)."""
        if isinstance(node, (Select, Index)) and node.optional:
            return None
        if isinstance(node, Select) and node.test_only:
            return None
        d = self._domain_key(node, bound)
        if d is None or d[1] is ...:
            return None
        return (d[0], d[1])

    def _record_domain(self, kind: str, dom: Any) -> None:
        self.reads.add(("domain", kind, dom))
        if dom is DRIVER:
            self.reads.add(("driver",))

    def _record_id(self, kind: str, dom: Any, key: str) -> None:
        self.reads.add(("id", kind, dom, key))
        if dom is DRIVER:
            self.reads.add(("driver",))

    def visit(self, node: Node, bound: frozenset[str]) -> None:
        if isinstance(node, Ident):
            if self._is_device(node, bound):
                self.full = True
            return
        if isinstance(node, Comprehension):
            self.visit(node.range, bound)
            inner = bound | {node.var} | ({node.var2} if node.var2 else set())
            for a in node.args:
                self.visit(a, inner)
            return
        if isinstance(node, Bind):
            self.visit(node.init, bound)
            self.visit(node.body, bound | {node.var})
            return
        if isinstance(node, Call) and node.fn == "@in" and len(node.args) == 2:
            item, container = node.args
            d = self._plain_domain(container, bound)
            if d is not None and isinstance(item, Lit) and type(item.value) is str:
                self._record_id(d[0], d[1], item.value)
                return
        if isinstance(node, (Select, Index)) and self._lookup(node, bound):
            return
        for c in node.children():
            self.visit(c, bound)

    def _lookup(self, node: Select | Index, bound: frozenset[str]) -> bool:
        """`device.attributes[D].ID` and friends: the read of a lookup on the device recorded
        (its key visited where it is an expression); False when `node` is no such lookup, and
        `visit` walks its parts instead. Apart from `visit` so that each reads as one case."""
        d = self._plain_domain(node.target, bound)
        if d is not None:
            if isinstance(node, Select):
                self._record_id(d[0], d[1], node.field)
                return True
            if isinstance(node.key, Lit) and type(node.key.value) is str:
                self._record_id(d[0], d[1], node.key.value)
                return True
            self._record_domain(d[0], d[1])
            self.visit(node.key, bound)
            return True
        dk = self._domain_key(node, bound)
        if dk is not None:
            kind, dom, key = dk
            if dom is ...:
                self.reads.add(("all", kind))
                assert key is not None
                self.visit(key, bound)
            else:
                self._record_domain(kind, dom)
            return True
        if isinstance(node, Select) and self._is_device(node.target, bound):
            if node.field in ("attributes", "capacity"):
                self.reads.add(("all", node.field))
            elif not node.test_only:  # has(device.driver): true whatever the device, no read
                self.reads.add((node.field,))
            return True
        return False


def _simplify(reads: set[Read]) -> tuple[Read, ...]:
    alls = {r[1] for r in reads if r[0] == "all"}
    domains = {(r[1], r[2]) for r in reads if r[0] == "domain"}
    out = []
    for r in reads:
        if r[0] in ("domain", "id") and r[1] in alls:
            continue
        if r[0] == "id" and (r[1], r[2]) in domains:
            continue
        out.append(r)
    return tuple(sorted(out, key=repr))


def analyse(tree: Node) -> ReadPlan:
    """The device reads of a parsed expression."""
    a = _Analyser()
    a.visit(tree, frozenset())
    if a.full:
        return ReadPlan(True, ())
    return ReadPlan(False, _simplify(a.reads))


# -- signature functions ------------------------------------------------------------------

Getter = Callable[[DeviceView], Hashable]


def _maps(device: DeviceView, kind: str) -> Any:
    return device.attributes if kind == "attributes" else device.capacity


def _encode_domain(m: Any) -> Hashable:
    if m is None:
        return MISSING
    return tuple(sorted((k, encode_value(v)) for k, v in m.items()))


def _getter(read: Read) -> Getter:
    tag = read[0]
    if tag == "driver":
        return lambda d: d.driver
    if tag == "name":
        return lambda d: d.name
    if tag == "allowMultipleAllocations":
        return lambda d: bool(d.allow_multiple_allocations)
    kind = read[1]
    if tag == "all":
        return lambda d: tuple(sorted((dom, _encode_domain(m)) for dom, m in _maps(d, kind).items()))
    dom = read[2]
    if tag == "domain":
        if dom is DRIVER:
            return lambda d: _encode_domain(_maps(d, kind).get(d.driver))
        return lambda d: _encode_domain(_maps(d, kind).get(dom))
    key = read[3]
    if dom is DRIVER:
        return _key_of_drivers_domain(kind, key)
    if kind == "attributes":
        return _attribute(dom, key)
    return _capacity(dom, key)


def _key_of_drivers_domain(kind: str, key: str) -> Getter:
    """A getter of `key` in the domain named like the device's driver (`DRIVER`): the
    domain depends on the device, so it is looked up per device."""

    def attr_of_driver(d: DeviceView) -> Hashable:
        m = _maps(d, kind).get(d.driver)
        if m is None:
            return MISSING
        v = m.get(key, MISSING)
        return MISSING if v is MISSING else encode_value(v)

    return attr_of_driver


def _attribute(dom: str, key: str) -> Getter:
    """A getter of attribute `dom`/`key`: the common case, kept short — one dict lookup per
    level, strings and ints as is, the other usual types encoded inline exactly as
    encode_value does (a call less per hit)."""

    def attr(d: DeviceView) -> Hashable:
        m = d.attributes.get(dom)
        if m is None:
            return MISSING
        v: Any = m.get(key, MISSING)
        t = type(v)
        if t is str or t is int:
            return v
        if t is Semver:
            return (_SEMVER, v.text)
        return MISSING if v is MISSING else encode_value(v)

    return attr


def _capacity(dom: str, key: str) -> Getter:
    """A getter of capacity `dom`/`key`, a Quantity encoded inline (as `_attribute` does)."""

    def cap(d: DeviceView) -> Hashable:
        m = d.capacity.get(dom)
        if m is None:
            return MISSING
        v = m.get(key, MISSING)
        if type(v) is Quantity:
            f = v.as_fraction()
            return (_QUANTITY, f.numerator, f.denominator, v.format)
        return MISSING if v is MISSING else encode_value(v)

    return cap


def make_signature(plan: ReadPlan) -> Callable[[DeviceView], Hashable]:
    """The signature function of a read plan.

    It reads only the raw values the plan names, plus the device's validity flag
    (:func:`~solver.cel.device.check`, memoised on the view): a valid device's signature
    is the tuple of those values, an invalid one's is ``(_INVALID, reason)`` so that its
    error is never hidden behind a cached result. The device is never converted here;
    the cache converts it only on a miss, when it really evaluates.
    """
    if plan.full:

        def full(device: DeviceView) -> Hashable:
            err = check(device)
            if err is not None:
                return (_INVALID, err)
            return full_key(device)

        return full
    getters = tuple(_getter(r) for r in plan.reads)
    if len(getters) == 1:
        (g0,) = getters

        def sig1(device: DeviceView) -> Hashable:
            err = device._error
            if err is UNCHECKED:
                err = check(device)
            if err is not None:
                return (_INVALID, err)
            return (g0(device),)

        return sig1

    def sig(device: DeviceView) -> Hashable:
        err = device._error
        if err is UNCHECKED:
            err = check(device)
        if err is not None:
            return (_INVALID, err)
        return tuple([g(device) for g in getters])

    return sig
