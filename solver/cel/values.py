"""Runtime values of the DRA CEL dialect and the strict core operations on them.

Why plain Python values instead of ``celpy.celtypes``: celpy's types implement CEL
operators through Python operator overloading and are lax (``IntType(1) + UintType(2)``
is 3, ``StringType("abc")[0]`` is ``"a"``, ``1 == 1.0`` raises instead of being true under
Kubernetes' cross-type numeric comparisons). Here every operator is a function that
checks the exact runtime types and raises :class:`EvalError` where cel-go has no overload.

Representation:

========  =====================================================================
CEL       Python
========  =====================================================================
null      ``None``
bool      ``bool``
int       ``int`` (int64 range enforced on every arithmetic result)
uint      :class:`UInt` (an ``int`` subclass; uint64 range enforced)
double    ``float``
string    ``str``
bytes     ``bytes``
list      ``tuple`` (immutable, like CEL lists)
map       ``dict`` (device domain maps: :class:`DomainMap`)
type      :class:`CelType`
optional  :class:`Opt`
quantity  :class:`solver.api.quantity.Quantity`
semver    :class:`solver.cel.semver.Semver`
========  =====================================================================

Type dispatch always uses ``type(x) is ...``, never ``isinstance``: ``bool`` and
:class:`UInt` are ``int`` subclasses and must not be mistaken for CEL ints.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from typing import Any, Final

from ..api.quantity import Quantity
from .semver import Semver

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "UINT64_MAX",
    "CelType",
    "Cidr",
    "Duration",
    "Timestamp",
    "Url",
    "NamedFormat",
    "CostLimitExceeded",
    "DeviceValue",
    "DomainMap",
    "EMPTY_MAP",
    "EvalError",
    "ABSENT",
    "NONE",
    "Opt",
    "UInt",
    "cel_compare",
    "cel_equal",
    "map_find",
    "type_name",
]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
UINT64_MAX: Final = 2**64 - 1


class EvalError(Exception):
    """A CEL runtime error (an error *value* in cel-go terms).

    Logical operators absorb it (``false && error`` is false), ``has()`` does not.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CostLimitExceeded(Exception):
    """The evaluation ran over its cost budget; never absorbed by ``&&``/``||``."""


class UInt(int):
    """A CEL ``uint`` value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class CelType:
    """A CEL type value, as returned by ``type(x)`` or named by ``int``, ``string``, ..."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return type(other) is CelType and other.name == self.name

    def __hash__(self) -> int:
        return hash(("CelType", self.name))

    def __repr__(self) -> str:
        return f"type({self.name})"


_ABSENT: Final = object()


class Opt:
    """A CEL ``optional`` value (``optional.of(x)`` / ``optional.none()``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any = _ABSENT) -> None:
        self.value = value

    @property
    def present(self) -> bool:
        return self.value is not _ABSENT

    def __eq__(self, other: object) -> bool:
        if type(other) is not Opt:
            return False
        if not self.present or not other.present:
            return self.present == other.present
        return cel_equal(self.value, other.value)

    def __hash__(self) -> int:  # pragma: no cover - optionals are never dict keys
        return 0

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE: Final = Opt()


class DomainMap(dict[str, Any]):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map.

    Upstream wraps these maps so that ``Find`` of a missing domain returns an empty map
    (``"x" in device.attributes["other.example.com"]`` is false, not an error), while
    ``"domain" in device.attributes`` still tests real presence.
    """

    __slots__ = ()

    def __missing__(self, key: Any) -> dict[str, Any]:
        return EMPTY_MAP


#: The shared empty domain map (never mutated).
EMPTY_MAP: Final[dict[str, Any]] = {}


class DeviceValue:
    """The ``device`` variable: an object with a fixed set of fields (not a map)."""

    __slots__ = ("driver", "name", "attributes", "capacity", "allow_multiple_allocations")

    FIELDS: Final = ("driver", "name", "attributes", "capacity", "allowMultipleAllocations")

    def __init__(
        self,
        driver: str,
        name: str,
        attributes: DomainMap,
        capacity: DomainMap,
        allow_multiple_allocations: bool,
    ) -> None:
        self.driver = driver
        self.name = name
        self.attributes = attributes
        self.capacity = capacity
        self.allow_multiple_allocations = allow_multiple_allocations

    def field(self, name: str) -> Any:
        if name == "attributes":
            return self.attributes
        if name == "capacity":
            return self.capacity
        if name == "driver":
            return self.driver
        if name == "name":
            return self.name
        if name == "allowMultipleAllocations":
            return self.allow_multiple_allocations
        raise EvalError(f"no such key: {name}")


class Cidr:
    """A ``net.CIDR`` value: an address and a prefix length (host bits kept, as in Go)."""

    __slots__ = ("addr", "bits")

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address, bits: int) -> None:
        self.addr = addr
        self.bits = bits

    @property
    def max_bits(self) -> int:
        return self.addr.max_prefixlen

    def _network_int(self, a: ipaddress.IPv4Address | ipaddress.IPv6Address) -> int:
        shift = self.max_bits - self.bits
        return int(a) >> shift

    def contains_ip(self, a: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return a.version == self.addr.version and self._network_int(a) == self._network_int(self.addr)

    def contains_cidr(self, other: Cidr) -> bool:
        """``Overlaps && bits <= other.bits``: the other prefix lies inside this one."""
        return self.bits <= other.bits and self.contains_ip(other.addr)

    def masked(self) -> Cidr:
        net = ipaddress.ip_network((self.addr, self.bits), strict=False)
        return Cidr(net.network_address, self.bits)

    def __eq__(self, other: object) -> bool:
        return type(other) is Cidr and other.addr == self.addr and other.bits == self.bits

    def __hash__(self) -> int:
        return hash((self.addr, self.bits))

    def __str__(self) -> str:
        return f"{self.addr}/{self.bits}"

    def __repr__(self) -> str:
        return f"cidr({str(self)!r})"


class Url:
    """A ``kubernetes.URL`` value: the parts Go's ``url.ParseRequestURI`` yields."""

    __slots__ = ("text", "scheme", "opaque", "host", "path", "raw_path", "raw_query")

    def __init__(
        self, text: str, scheme: str, opaque: str, host: str, path: str, raw_path: str, raw_query: str
    ) -> None:
        self.text = text
        self.scheme = scheme
        self.opaque = opaque
        self.host = host
        self.path = path
        self.raw_path = raw_path
        self.raw_query = raw_query

    def _key(self) -> tuple[str, ...]:
        return (self.scheme, self.opaque, self.host, self.path, self.raw_path, self.raw_query)

    def __eq__(self, other: object) -> bool:
        return type(other) is Url and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"url({self.text!r})"


class NamedFormat:
    """A ``kubernetes.NamedFormat`` value (``format.dns1123Label()``, ``format.named(...)``).

    ``name`` is upstream's ``Format.Name`` (``"DNS1123Label"``), which equality compares;
    ``validate`` returns the error strings (empty when the string is valid);
    ``max_regex_size`` is what upstream charges per call at run time, in place of the size
    of a regular expression (see :mod:`~solver.cel.lib_format`).
    """

    __slots__ = ("name", "validate", "max_regex_size")

    def __init__(self, name: str, validate: Callable[[str], list[str]], max_regex_size: int) -> None:
        self.name = name
        self.validate = validate
        self.max_regex_size = max_regex_size

    def __eq__(self, other: object) -> bool:
        return type(other) is NamedFormat and other.name == self.name

    def __hash__(self) -> int:
        return hash(("format", self.name))

    def __repr__(self) -> str:
        return f"NamedFormat({self.name!r})"


class Timestamp:
    """A ``google.protobuf.Timestamp``: nanoseconds since the Unix epoch (UTC).

    Why nanoseconds and not :class:`datetime.datetime`: CEL timestamps and durations have
    nanosecond precision, Python's datetime only microseconds.
    """

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("ts", self.ns))

    def __repr__(self) -> str:
        return f"Timestamp({self.ns})"


class Duration:
    """A ``google.protobuf.Duration``: a signed number of nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return type(other) is Duration and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("dur", self.ns))

    def __repr__(self) -> str:
        return f"Duration({self.ns})"


_TYPE_NAMES: Final[dict[type, str]] = {
    bool: "bool",
    int: "int",
    UInt: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    tuple: "list",
    dict: "map",
    DomainMap: "map",
    type(None): "null_type",
    CelType: "type",
    Opt: "optional_type",
    Quantity: "kubernetes.Quantity",
    Semver: "kubernetes.Semver",
    DeviceValue: "kubernetes.DRADevice",
    ipaddress.IPv4Address: "net.IP",
    ipaddress.IPv6Address: "net.IP",
    Cidr: "net.CIDR",
    Url: "kubernetes.URL",
    NamedFormat: "kubernetes.NamedFormat",
    Timestamp: "google.protobuf.Timestamp",
    Duration: "google.protobuf.Duration",
}


def type_name(v: Any) -> str:
    """The CEL type name of a runtime value (for messages and ``type()``)."""
    return _TYPE_NAMES.get(type(v), type(v).__name__)


_NUMERIC: Final = (int, UInt, float)


def _num_equal(a: Any, b: Any) -> bool:
    # Python compares int with float exactly (no rounding of big ints); NaN is never equal.
    return bool(a == b)


def cel_equal(a: Any, b: Any) -> bool:
    """Heterogeneous CEL equality: values of different types are unequal, never an error.

    Numbers compare across int/uint/double by value (cel-go's heterogeneous equality).
    """
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is tuple:
            return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
        if ta is dict or ta is DomainMap:
            return _map_equal(a, b)
        if ta is Semver:
            return bool(a.compare(b) == 0)
        return bool(a == b)
    if ta in _NUMERIC and tb in _NUMERIC:
        return _num_equal(a, b)
    if (ta is dict or ta is DomainMap) and (tb is dict or tb is DomainMap):
        return _map_equal(a, b)
    return False


def _map_equal(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    if len(a) != len(b):
        return False
    for k, v in a.items():
        found = map_find(b, k)
        if found is _ABSENT or not cel_equal(v, found):
            return False
    return True


def map_find(m: dict[Any, Any], key: Any) -> Any:
    """``m[key]`` with CEL key semantics, or :data:`ABSENT`.

    String keys (all device maps) take the dict fast path. Other keys are matched by
    exact type (Python's ``True == 1`` must not make a bool key find an int key), with
    int and uint keys matching each other by value as in cel-go.
    """
    if type(key) is str:
        return m.get(key, _ABSENT)
    tk = type(key)
    for k, v in m.items():
        tv = type(k)
        if (tv is tk or (tv in _NUMERIC and tk in _NUMERIC)) and k == key:
            return v
    return _ABSENT


ABSENT: Final = _ABSENT


def cel_compare(a: Any, b: Any, op: str = "_<_") -> int:
    """-1/0/1 ordering for the types CEL orders; raises for any other pair.

    Kubernetes enables cross-type numeric comparisons, so int, uint and double order
    against each other (Python compares int with float exactly). Quantities and semvers
    have no ``<`` overload (their libraries offer ``compareTo``/``isLessThan`` instead),
    so they raise like cel-go does. Returns 2 when a NaN is involved: every ordering
    comparison with NaN is false.
    """
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int or ta is bytes or ta is bool or ta is UInt):
        return (a > b) - (a < b)
    if ta is tb and (ta is Timestamp or ta is Duration):
        return (a.ns > b.ns) - (a.ns < b.ns)
    if ta in _NUMERIC and tb in _NUMERIC:
        if (ta is float and math.isnan(a)) or (tb is float and math.isnan(b)):
            return 2
        return (a > b) - (a < b)
    raise EvalError(f"found no matching overload for '{op}' applied to '({type_name(a)}, {type_name(b)})'")
