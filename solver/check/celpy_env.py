"""The checker's own CEL: cel-python (`celpy`) with the Kubernetes extensions DRA selectors use.

Why a second interpreter: the planner compiles selectors with the project's own CEL
(`dra_solver.cel`). If the checker used it too, a bug there (a wrong overload, a wrong
comparison) would choose a wrong device *and* approve it. cel-python is an independent
implementation of the CEL core (parser, macros, operators, error values); this module adds
what Kubernetes layers on top, written again from the Kubernetes CEL library docs, without
importing `dra_solver.cel`:

- the `device` variable: `driver`, `attributes` and `capacity` keyed by domain then
  name (an unknown domain reads as an empty map, as upstream), `allowMultipleAllocations`;
  an attribute version that is not strict semver makes every evaluation on the device fail,
  as upstream converts every attribute before evaluating;
- quantities (`quantity`, `isQuantity`, `sign`, `isInteger`, `asInteger`,
  `asApproximateFloat`, `add`, `sub`, `compareTo`, `isGreaterThan`, `isLessThan`) on
  `dra_solver.api.quantity.Quantity`, wrapped so that `<` and `+` stay "no such overload";
- semantic versions (`semver(s[, normalize])`, `isSemver`, `major`, `minor`, `patch`,
  `compareTo`, `isGreaterThan`, `isLessThan`), parsed here (strict semver 2.0.0);
- the strings extension (`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`,
  `replace`, `split`, `substring`, `trim`, `join`; Kubernetes enables version 2, without
  `reverse`) and the Kubernetes lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
  `lastIndexOf`) with cel-go's `slice`, `flatten`, `distinct`, `sort`, `reverse`;
- ip and cidr (`ip`, `isIP`, `ip.isCanonical`, `family`, `isUnspecified`, `isLoopback`,
  `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`, `cidr`, `isCIDR`,
  `containsIP`, `containsCIDR`, `ip()`, `masked`, `prefixLength`) on Python's `ipaddress`
  with Go netip's refusals (zones, IPv4-mapped IPv6, prefix lengths with leading zeros);
- url (`url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`,
  `getQuery`) as Go's `url.ParseRequestURI` decides;
- the named formats (`format.dns1123Label()`, ..., `format.named("uuid")`, `validate`) with
  apimachinery's messages, and the optional values they return (`hasValue`, `value`,
  `orValue`) — all but `uri`, `byte`, `date` and `datetime`.

celpy dispatches a method by its name only, the receiver being the first argument, so one
Python function per name serves every receiver type (`compareTo` on a quantity or a semver).
What celpy cannot parse (optional syntax `?.`, `[?`) or a function not here (`optional.of`,
the formats `uri`/`byte`/`date`/`datetime`, `format.named` of anything but a literal name
implemented here, the strings extension's `format` and `quote`) is `Unsupported`: the caller
(`expressions`) then says so (see there).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import celpy
import lark
from celpy import celparser, celtypes

from ..api.quantity import Quantity, QuantityError
from ..larkcache import cache_file

CelValue = Any
"""A value as celpy handles it (celtypes, or the wrappers of this module)."""


class Unsupported(Exception):
    """celpy cannot evaluate the expression: a syntax or a function it does not have."""


# --- semantic versions ---------------------------------------------------------------------

_STRICT: Final = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
_LOOSE: Final = re.compile(r"v?([0-9]+(?:\.[0-9]+){0,2})([-+].*)?", re.DOTALL)


def _prerelease_key(part: int | str) -> tuple[int, int, str]:
    """Order of pre-release identifiers (semver.org 11.4): numeric ones by value, below
    alphanumeric ones, which compare in ASCII order."""
    return (0, part, "") if isinstance(part, int) else (1, 0, part)


class Version:
    """A semver 2.0.0 version: equal and ordered by precedence, build metadata ignored."""

    __slots__ = ("text", "core", "pre")

    def __init__(self, text: str) -> None:
        m = _STRICT.fullmatch(text)
        if m is None:
            raise ValueError(f"invalid semantic version {text!r}")
        self.text = text
        self.core = (int(m[1]), int(m[2]), int(m[3]))
        self.pre: tuple[int | str, ...] = (
            tuple(int(p) if p.isdigit() else p for p in m[4].split(".")) if m[4] else ()
        )

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Version:
        """`semver(s)`; with `normalize`, a leading `v`, missing minor/patch and leading zeros
        are tolerated first (`semver(s, true)`)."""
        if normalize:
            m = _LOOSE.fullmatch(text)
            if m is not None:
                nums = [str(int(p)) for p in m[1].split(".")]
                text = ".".join(nums + ["0"] * (3 - len(nums))) + (m[2] or "")
        return cls(text)

    def compare(self, other: Version) -> int:
        if self.core != other.core:
            return -1 if self.core < other.core else 1
        a, b = self.pre, other.pre
        if a == b:
            return 0
        if not a or not b:
            return 1 if not a else -1
        for x, y in zip(a, b, strict=False):
            if x == y:
                continue
            if isinstance(x, int) != isinstance(y, int):
                return -1 if isinstance(x, int) else 1
            return -1 if _prerelease_key(x) < _prerelease_key(y) else 1
        return (len(a) > len(b)) - (len(a) < len(b))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.core, self.pre))

    def __str__(self) -> str:
        return self.text


class CelQuantity:
    """A Kubernetes quantity in CEL: `==` by value; no `<` or `+` (only the methods)."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity) -> None:
        self.q = q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelQuantity) and self.q.cmp(other.q) == 0

    def __hash__(self) -> int:
        return hash(self.q)

    def __str__(self) -> str:
        return str(self.q)


# --- the device variable ---------------------------------------------------------------------


class DomainMap(celtypes.MapType):
    """`device.attributes` / `device.capacity`: an unknown domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        if key in self.keys():
            return super().__getitem__(key)
        if isinstance(key, str):
            return celtypes.MapType()
        return super().__getitem__(key)


def to_cel(value: Any) -> CelValue:
    """A plain Python attribute value as celpy's: bool, int, str, Version, or a list of them."""
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, (list, tuple)):
        return celtypes.ListType([to_cel(v) for v in value])
    if isinstance(value, (Version, CelQuantity)):
        return value
    raise TypeError(f"unsupported attribute value {value!r}")


def from_cel(value: CelValue) -> Any:
    """A celpy result as plain Python (bool, int, float, str, Version, tuple) for the rules."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.ListType):
        return tuple(from_cel(v) for v in value)
    return value


def device_value(
    driver: str,
    attributes: Mapping[str, Mapping[str, Any]],
    capacity: Mapping[str, Mapping[str, Quantity]],
    allow_multiple_allocations: bool,
) -> celtypes.MapType:
    """The `device` variable; `attributes` values are plain (versions as `Version`). No `name`:
    upstream's device has none (docs/semantics.md, "KEP-6080 as merged upstream"), so
    `device.name` fails here as it does upstream."""
    s = celtypes.StringType
    attrs = DomainMap(
        {s(d): celtypes.MapType({s(k): to_cel(v) for k, v in m.items()}) for d, m in attributes.items()}
    )
    caps = DomainMap(
        {s(d): celtypes.MapType({s(k): CelQuantity(q) for k, q in m.items()}) for d, m in capacity.items()}
    )
    return celtypes.MapType(
        {
            s("driver"): s(driver),
            s("attributes"): attrs,
            s("capacity"): caps,
            s("allowMultipleAllocations"): celtypes.BoolType(allow_multiple_allocations),
        }
    )


# --- extension functions ---------------------------------------------------------------------


def _err(message: str) -> celpy.CELEvalError:
    return celpy.CELEvalError(message)


def _quantity(s: Any) -> Any:
    try:
        return CelQuantity(Quantity.parse(str(s)))
    except QuantityError as ex:
        return _err(f"invalid quantity {str(s)!r}: {ex.reason}")


def _is_quantity(s: Any) -> Any:
    return celtypes.BoolType(not isinstance(_quantity(s), celpy.CELEvalError))


def _semver(s: Any, normalize: Any = False) -> Any:
    try:
        return Version.parse(str(s), bool(normalize))
    except ValueError as ex:
        return _err(str(ex))


def _is_semver(s: Any, normalize: Any = False) -> Any:
    return celtypes.BoolType(not isinstance(_semver(s, normalize), celpy.CELEvalError))


def _cmp(a: Any, b: Any) -> int | None:
    if isinstance(a, CelQuantity) and isinstance(b, CelQuantity):
        return a.q.cmp(b.q)
    if isinstance(a, Version) and isinstance(b, Version):
        return a.compare(b)
    return None


def _compare_to(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return _err("no such overload: compareTo") if c is None else celtypes.IntType(c)


def _greater(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return _err("no such overload: isGreaterThan") if c is None else celtypes.BoolType(c == 1)


def _less(a: Any, b: Any) -> Any:
    c = _cmp(a, b)
    return _err("no such overload: isLessThan") if c is None else celtypes.BoolType(c == -1)


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _as_int64(q: CelQuantity) -> int | None:
    v = q.q.as_fraction()
    return v.numerator if v.denominator == 1 and INT64_MIN <= v.numerator <= INT64_MAX else None


def _quantity_method(name: str, fn: Callable[[CelQuantity], Any]) -> Callable[[Any], Any]:
    def method(q: Any) -> Any:
        if not isinstance(q, CelQuantity):
            return _err(f"no such overload: {name}")
        return fn(q)

    return method


def _as_integer(q: CelQuantity) -> Any:
    v = _as_int64(q)
    return _err("cannot convert value to integer") if v is None else celtypes.IntType(v)


def _arith(name: str, sign: int) -> Callable[[Any, Any], Any]:
    def method(a: Any, b: Any) -> Any:
        if not isinstance(a, CelQuantity):
            return _err(f"no such overload: {name}")
        if isinstance(b, CelQuantity):
            other = b.q
        elif isinstance(b, celtypes.IntType) and not isinstance(b, celtypes.BoolType):
            other = Quantity.parse(int(b))
        else:
            return _err(f"no such overload: {name}")
        return CelQuantity(a.q + other if sign > 0 else a.q - other)

    return method


def _version_part(i: int) -> Callable[[Any], Any]:
    def method(v: Any) -> Any:
        return celtypes.IntType(v.core[i]) if isinstance(v, Version) else _err("no such overload")

    return method


def _string_fn(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(s: Any, *args: Any) -> Any:
        if not isinstance(s, celtypes.StringType):
            return _err(f"no such overload: {name}")
        try:
            return fn(str(s), *args)
        except (IndexError, ValueError) as ex:
            return _err(f"{name}: {ex}")

    return method


def _index_arg(s: str, i: Any) -> int:
    if not 0 <= int(i) <= len(s):
        raise IndexError(f"index out of range: {int(i)}")
    return int(i)


def _char_at(s: str, i: Any) -> Any:
    return celtypes.StringType(s[_index_arg(s, i)] if int(i) < len(s) else "")


def _index_of(s: Any, sub: Any, start: Any = 0) -> Any:
    if isinstance(s, celtypes.ListType):
        return celtypes.IntType(next((k for k, v in enumerate(s) if v == sub), -1))
    if not isinstance(s, celtypes.StringType):
        return _err("no such overload: indexOf")
    text = str(s)
    try:
        return celtypes.IntType(text.find(str(sub), _index_arg(text, start)))
    except IndexError as ex:
        return _err(f"indexOf: {ex}")


def _last_index_of(s: Any, sub: Any, end: Any = None) -> Any:
    if isinstance(s, celtypes.ListType):
        return celtypes.IntType(max((k for k, v in enumerate(s) if v == sub), default=-1))
    if not isinstance(s, celtypes.StringType):
        return _err("no such overload: lastIndexOf")
    text = str(s)
    try:
        stop = len(text) if end is None else _index_arg(text, end) + len(str(sub))
        return celtypes.IntType(text.rfind(str(sub), 0, stop))
    except IndexError as ex:
        return _err(f"lastIndexOf: {ex}")


def _replace(s: str, old: Any, new: Any, n: Any = -1) -> Any:
    count = int(n)
    return celtypes.StringType(s.replace(str(old), str(new), count if count >= 0 else -1))


def _split(s: str, sep: Any, n: Any = -1) -> Any:
    count = int(n)
    if count == 0:
        return celtypes.ListType([])
    parts = list(s) if str(sep) == "" else s.split(str(sep), count - 1 if count > 0 else -1)
    if str(sep) == "" and count > 0 and len(parts) > count:
        parts = parts[: count - 1] + ["".join(parts[count - 1 :])]
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(s: str, start: Any, end: Any = None) -> Any:
    a = _index_arg(s, start)
    b = len(s) if end is None else _index_arg(s, end)
    if a > b:
        raise IndexError(f"invalid substring range. start: {a}, end: {b}")
    return celtypes.StringType(s[a:b])


_SPACE = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode white space, as Go's unicode.IsSpace (the strings extension's trim)."""


def _join(items: Any, sep: Any = "") -> Any:
    if not isinstance(items, celtypes.ListType) or not all(isinstance(i, celtypes.StringType) for i in items):
        return _err("no such overload: join")
    return celtypes.StringType(str(sep).join(str(i) for i in items))


def _reverse(v: Any) -> Any:
    """Lists only: Kubernetes enables the strings extension at version 2, without reverse."""
    if isinstance(v, celtypes.ListType):
        return celtypes.ListType(list(reversed(v)))
    return _err("no such overload: reverse")


def _list_fn(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(items: Any, *args: Any) -> Any:
        if not isinstance(items, celtypes.ListType):
            return _err(f"no such overload: {name}")
        try:
            return fn(list(items), *args)
        except (TypeError, ValueError, IndexError) as ex:
            return _err(f"{name}: {ex}")

    return method


def _key(v: Any) -> Any:
    if isinstance(v, CelQuantity):
        return v.q
    if isinstance(v, Version):
        return _VersionKey(v)
    return v


class _VersionKey:
    __slots__ = ("v",)

    def __init__(self, v: Version) -> None:
        self.v = v

    def __lt__(self, other: _VersionKey) -> bool:
        return self.v.compare(other.v) < 0


def _is_sorted(items: list[Any]) -> Any:
    keys = [_key(v) for v in items]
    return celtypes.BoolType(all(not (b < a) for a, b in zip(keys, keys[1:], strict=False)))


def _sum(items: list[Any]) -> Any:
    if not items:
        return celtypes.IntType(0)
    if all(isinstance(v, CelQuantity) for v in items):
        total = items[0].q
        for v in items[1:]:
            total = total + v.q
        return CelQuantity(total)
    out = items[0]
    for v in items[1:]:
        out = out + v
    return out


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    def fn(items: list[Any]) -> Any:
        if not items:
            return _err(f"{name} called on empty list")
        return pick(items, key=_key)

    return fn


def _slice(items: list[Any], start: Any, end: Any) -> Any:
    a, b = int(start), int(end)
    if a < 0 or b > len(items) or a > b:
        raise IndexError(f"cannot slice({a}, {b}) a list of size {len(items)}")
    return celtypes.ListType(items[a:b])


def _flatten(items: list[Any], depth: Any = 1) -> Any:
    out: list[Any] = []
    for v in items:
        if isinstance(v, celtypes.ListType) and int(depth) > 0:
            out.extend(_flatten(list(v), int(depth) - 1))
        else:
            out.append(v)
    return celtypes.ListType(out)


def _distinct(items: list[Any]) -> Any:
    out: list[Any] = []
    for v in items:
        if not any(type(v) is type(w) and v == w for w in out):
            out.append(v)
    return celtypes.ListType(out)


def _sort(items: list[Any]) -> Any:
    return celtypes.ListType(sorted(items, key=_key))


# --- ip / cidr (Kubernetes' net library, on Go's net/netip rules) -------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class CelIP:
    """An IP address in CEL (`ip(s)`): `==` by address, `string()` its canonical text."""

    __slots__ = ("addr",)

    def __init__(self, addr: IPAddress) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelIP) and self.addr == other.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def __str__(self) -> str:
        return str(self.addr)


class CelCIDR:
    """A prefix in CEL (`cidr(s)`): its address keeps the host bits, as netip.Prefix does."""

    __slots__ = ("addr", "bits")

    def __init__(self, addr: IPAddress, bits: int) -> None:
        self.addr, self.bits = addr, bits

    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelCIDR) and (self.addr, self.bits) == (other.addr, other.bits)

    def __hash__(self) -> int:
        return hash((self.addr, self.bits))

    def __str__(self) -> str:
        return f"{self.addr}/{self.bits}"


_BITS: Final = re.compile(r"0|[1-9][0-9]{0,2}")


def _address(text: str) -> IPAddress:
    """netip.ParseAddr with Kubernetes' refusals: no zone, no IPv4-mapped IPv6 address."""
    if "%" in text:
        raise ValueError(f"IP address with zone value is not allowed: {text}")
    addr = ipaddress.ip_address(text)  # ValueError for anything else, leading zeros included
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {text}")
    return addr


def _prefix(text: str) -> CelCIDR:
    addr_text, slash, bits_text = text.partition("/")
    if not slash or _BITS.fullmatch(bits_text) is None:
        raise ValueError(f"network address parse error on {text!r}")
    addr, bits = _address(addr_text), int(bits_text)
    if bits > addr.max_prefixlen:
        raise ValueError(f"network address parse error on {text!r}: prefix length out of range")
    return CelCIDR(addr, bits)


def _ip(v: Any) -> Any:
    """`ip(string)`, and `cidr.ip()` (celpy passes the receiver first): one name, two uses."""
    if isinstance(v, CelCIDR):
        return CelIP(v.addr)
    try:
        return CelIP(_address(str(v)))
    except ValueError as ex:
        return _err(f"IP Address {str(v)!r} parse error during conversion from string: {ex}")


class _IPNamespace:
    """The value of the identifier `ip` in `ip.isCanonical(s)`: celpy reads `ip.` as a
    variable, and calls the method with it as the receiver."""


IP_NAMESPACE: Final = _IPNamespace()


def _is_canonical(ns: Any, v: Any) -> Any:
    """`ip.isCanonical(s)`: `s` parses and is written as netip would print it."""
    if not isinstance(ns, _IPNamespace):
        return _err("no such overload: isCanonical")
    try:
        return celtypes.BoolType(str(_address(str(v))) == str(v))
    except ValueError as ex:
        return _err(f"IP Address {str(v)!r} parse error during conversion from string: {ex}")


def _cidr(v: Any) -> Any:
    try:
        return _prefix(str(v))
    except ValueError as ex:
        return _err(f"network address parse error during conversion from string: {ex}")


def _ok(parse: Callable[[str], Any], v: Any) -> Any:
    try:
        parse(str(v))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _ip_method(name: str, fn: Callable[[IPAddress], Any]) -> Callable[[Any], Any]:
    def method(v: Any) -> Any:
        return fn(v.addr) if isinstance(v, CelIP) else _err(f"no such overload: {name}")

    return method


def _global_unicast(a: IPAddress) -> bool:
    """Go's IsGlobalUnicast: not unspecified, loopback, multicast, link-local or broadcast."""
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"))


def _link_local_multicast(a: IPAddress) -> bool:
    if isinstance(a, ipaddress.IPv4Address):
        return a in ipaddress.IPv4Network("224.0.0.0/24")
    return a in ipaddress.IPv6Network("ff02::/16")


def _contains_ip(c: Any, v: Any) -> Any:
    if not isinstance(c, CelCIDR):
        return _err("no such overload: containsIP")
    ip = v if isinstance(v, CelIP) else _ip(v)
    if not isinstance(ip, CelIP):
        return ip
    return celtypes.BoolType(ip.addr.version == c.addr.version and ip.addr in c.network())


def _contains_cidr(c: Any, v: Any) -> Any:
    if not isinstance(c, CelCIDR):
        return _err("no such overload: containsCIDR")
    other = v if isinstance(v, CelCIDR) else _cidr(v)
    if not isinstance(other, CelCIDR):
        return other
    same = other.addr.version == c.addr.version
    return celtypes.BoolType(same and other.bits >= c.bits and _subnet_of(other.network(), c.network()))


def _subnet_of(inner: IPNetwork, outer: IPNetwork) -> bool:
    """`inner.subnet_of(outer)` for two networks of one IP version (the caller checks it)."""
    if isinstance(inner, ipaddress.IPv4Network) and isinstance(outer, ipaddress.IPv4Network):
        return inner.subnet_of(outer)
    if isinstance(inner, ipaddress.IPv6Network) and isinstance(outer, ipaddress.IPv6Network):
        return inner.subnet_of(outer)
    raise TypeError(f"{inner} and {outer} are not of the same version")


def _cidr_method(name: str, fn: Callable[[CelCIDR], Any]) -> Callable[[Any], Any]:
    def method(v: Any) -> Any:
        return fn(v) if isinstance(v, CelCIDR) else _err(f"no such overload: {name}")

    return method


# --- url (Kubernetes' url library: Go's url.ParseRequestURI) ----------------------------------


class CelURL:
    """A URL in CEL (`url(s)`): the parts the accessors return."""

    __slots__ = ("text", "scheme", "host", "raw_path", "path", "query")

    def __init__(self, text: str, scheme: str, host: str, raw_path: str, path: str, query: str) -> None:
        self.text, self.scheme, self.host = text, scheme, host
        self.raw_path, self.path, self.query = raw_path, path, query

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelURL) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __str__(self) -> str:
        return self.text


_URL_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_ALNUM: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_HOST_CHARS: Final = frozenset(_ALNUM + "-_.~!$&'()*+,;=:[]<>\"%")
_PATH_KEEP: Final = frozenset(_ALNUM + "-_.~$&+,/:;=@")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")


def _unescape(text: str, plus: bool = False) -> str:
    """Percent-decoding as Go's unescape: every `%` needs two hex digits."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) != 2 or not set(pair) <= _HEX_DIGITS:
                raise ValueError(f"invalid URL escape {text[i : i + 3]!r}")
            out.append(int(pair, 16))
            i += 3
            continue
        out += b" " if plus and ch == "+" else ch.encode()
        i += 1
    return out.decode("utf-8", errors="replace")


def _parse_url(text: str) -> CelURL:
    """Go's url.ParseRequestURI: absolute (`scheme:...`) or an absolute path; `#` is not a
    fragment; control characters, bad escapes, bad host characters or port are errors."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError("invalid control character in URL")
    if text == "":
        raise ValueError("empty url")
    scheme, rest = "", text
    m = _URL_SCHEME.match(text)
    if m is not None and text[m.end() : m.end() + 1] == ":":
        scheme, rest = m.group().lower(), text[m.end() + 1 :]
    elif text.startswith(":"):
        raise ValueError("missing protocol scheme")
    rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return CelURL(text, scheme, "", "", "", query)  # opaque
        raise ValueError("invalid URI for request")
    host = ""
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path_rest = rest[2:].partition("/")
        rest = slash + path_rest
        host = authority.rpartition("@")[2]
        _check_host(host)
    path = _unescape(rest)
    return CelURL(text, scheme, _unescape(host) if "%" in host else host, rest, path, query)


def _check_host(host: str) -> None:
    if host.startswith("["):
        close = host.find("]")
        if close < 0:
            raise ValueError("missing ']' in host")
        port = host[close + 1 :]
        if port and (not port.startswith(":") or not port[1:].isdigit() and port != ":"):
            raise ValueError(f"invalid port {port!r} after host")
        return
    name, colon, port = host.rpartition(":") if ":" in host else (host, "", "")
    if colon and port and not (port.isascii() and port.isdigit()):
        raise ValueError(f"invalid port {':' + port!r} after host")
    for ch in name:
        if ord(ch) < 0x80 and ch not in _HOST_CHARS:
            raise ValueError(f"invalid character {ch!r} in host name")
    if "%" in name:
        _unescape(name)


def _split_host(host: str) -> tuple[str, str]:
    """(hostname, port) of `host`: Go's URL.Hostname and URL.Port."""
    if host.startswith("["):
        close = host.find("]")
        port = host[close + 1 :]
        return host[1:close], port[1:] if port.startswith(":") else ""
    name, colon, port = host.rpartition(":")
    return (name, port) if colon and port.isdigit() else (host, "")


def _escaped_path(u: CelURL) -> str:
    """Go's EscapedPath: the raw path when it is a valid encoding of the path, else escaped."""
    raw = u.raw_path
    valid = all(c in _PATH_KEEP or c in "!'()*[]%" for c in raw)
    if raw and valid and _unescape(raw) == u.path:
        return raw
    return "".join(c if c in _PATH_KEEP else "".join(f"%{b:02X}" for b in c.encode()) for c in u.path)


def _query(u: CelURL) -> Any:
    """Go's URL.Query: `&`-separated, `+` is a space; a pair with `;` or a bad escape is skipped."""
    out: dict[str, list[str]] = {}
    for part in u.query.split("&"):
        if part == "" or ";" in part:
            continue
        key, _, value = part.partition("=")
        try:
            k, v = _unescape(key, plus=True), _unescape(value, plus=True)
        except ValueError:
            continue
        out.setdefault(k, []).append(v)
    s = celtypes.StringType
    return celtypes.MapType({s(k): celtypes.ListType([s(x) for x in v]) for k, v in out.items()})


def _url(v: Any) -> Any:
    try:
        return _parse_url(str(v))
    except ValueError as ex:
        return _err(f"URL {str(v)!r} parse error during conversion from string: {ex}")


def _url_method(name: str, fn: Callable[[CelURL], Any]) -> Callable[[Any], Any]:
    def method(v: Any) -> Any:
        return fn(v) if isinstance(v, CelURL) else _err(f"no such overload: {name}")

    return method


# --- optional values and named formats (Kubernetes' format library) ---------------------------


class CelOptional:
    """An optional value (`hasValue`, `value`, `orValue`), as the format library returns."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelOptional) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


class _FormatNamespace:
    """The value of the identifier `format` in `format.dns1123Label()` (as `ip` above)."""


FORMAT_NAMESPACE: Final = _FormatNamespace()

_LABEL_RE: Final = re.compile(rb"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE: Final = re.compile(rb"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_RE: Final = re.compile(rb"[a-z]([-a-z0-9]*[a-z0-9])?")
_NAME_RE: Final = re.compile(rb"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_VALUE_RE: Final = re.compile(rb"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
)


def _regex_message(what: str, regex: str, *examples: str) -> str:
    """apimachinery's RegexError wording (two spaces after each example's comma, as upstream)."""
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{what} (e.g. {shown}, regex used for validation is '{regex}')"


_LABEL_MSG: Final = _regex_message(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character",
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "my-name",
    "123-abc",
)
_SUBDOMAIN_MSG: Final = _regex_message(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "example.com",
)
_DNS1035_MSG: Final = _regex_message(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character",
    "[a-z]([-a-z0-9]*[a-z0-9])?",
    "my-name",
    "abc-123",
)
_NAME_MSG: Final = _regex_message(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character",
    "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
    "MyName",
    "my.name",
    "123-abc",
)
_VALUE_MSG: Final = _regex_message(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
    "MyValue",
    "my_value",
    "12345",
)


def _dns_label(v: bytes) -> list[str]:
    errors = ["must be no more than 63 characters"] if len(v) > 63 else []
    if not _LABEL_RE.fullmatch(v):
        errors.append("must not contain dots" if _SUBDOMAIN_RE.fullmatch(v) else _LABEL_MSG)
    return errors


def _dns_subdomain(v: bytes) -> list[str]:
    errors = ["must be no more than 253 characters"] if len(v) > 253 else []
    return errors + ([] if _SUBDOMAIN_RE.fullmatch(v) else [_SUBDOMAIN_MSG])


def _dns1035_label(v: bytes) -> list[str]:
    errors = ["must be no more than 63 characters"] if len(v) > 63 else []
    return errors + ([] if _DNS1035_RE.fullmatch(v) else [_DNS1035_MSG])


def _qualified_name(v: bytes) -> list[str]:
    parts = v.split(b"/")
    if len(parts) > 2:
        return [
            f"a valid label key {_NAME_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    errors: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            errors.append("prefix part must be no more than 253 bytes")
        elif not _SUBDOMAIN_RE.fullmatch(prefix):
            errors.append(f"prefix part {_SUBDOMAIN_MSG}")
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _NAME_RE.fullmatch(name):
        errors.append(f"name part {_NAME_MSG}")
    return errors


def _label_value(v: bytes) -> list[str]:
    errors = ["must be no more than 63 bytes"] if len(v) > 63 else []
    return errors + ([] if _VALUE_RE.fullmatch(v) else [_VALUE_MSG])


def _prefix_of(check: Callable[[bytes], list[str]]) -> Callable[[bytes], list[str]]:
    """A `...Prefix` format: a generateName prefix may end in `-`; upstream masks it by cutting
    the last two *bytes* and appending `a` before checking."""

    def prefixed(v: bytes) -> list[str]:
        return check(v[:-2] + b"a" if len(v) > 1 and v.endswith(b"-") else v)

    return prefixed


def _uuid(v: bytes) -> list[str]:
    return [] if _UUID_RE.fullmatch(v.decode("utf-8", "replace")) else ["does not match the UUID format"]


NAMED_FORMATS: Final[dict[str, Callable[[bytes], list[str]]]] = {
    "dns1123Label": _dns_label,
    "dns1123Subdomain": _dns_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": _prefix_of(_dns_label),
    "dns1123SubdomainPrefix": _prefix_of(_dns_subdomain),
    "dns1035LabelPrefix": _prefix_of(_dns1035_label),
    "labelValue": _label_value,
    "uuid": _uuid,
}
"""The named formats implemented here; `uri`, `byte`, `date` and `datetime` are not (an
expression naming them is `Unsupported`)."""


class CelFormat:
    """One named format (`format.uuid()`): `==` by name; `validate(s)` its messages."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelFormat) and self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)


def _format_getter(name: str) -> Callable[[Any], Any]:
    def getter(ns: Any) -> Any:
        return CelFormat(name) if isinstance(ns, _FormatNamespace) else _err(f"no such overload: {name}")

    return getter


def _named(ns: Any, name: Any) -> Any:
    if not isinstance(ns, _FormatNamespace):
        return _err("no such overload: named")
    return CelOptional(CelFormat(str(name)) if str(name) in NAMED_FORMATS else None)


def _validate(fmt: Any, value: Any) -> Any:
    if not isinstance(fmt, CelFormat) or not isinstance(value, celtypes.StringType):
        return _err("no such overload: validate")
    errors = NAMED_FORMATS[fmt.name](str(value).encode())
    return CelOptional(celtypes.ListType([celtypes.StringType(e) for e in errors]) if errors else None)


def _has_value(o: Any) -> Any:
    return celtypes.BoolType(o.value is not None) if isinstance(o, CelOptional) else _err("no such overload")


def _value(o: Any) -> Any:
    if not isinstance(o, CelOptional):
        return _err("no such overload: value")
    return o.value if o.value is not None else _err("optional.none() dereference")


def _or_value(o: Any, default: Any) -> Any:
    if not isinstance(o, CelOptional):
        return _err("no such overload: orValue")
    return o.value if o.value is not None else default


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "sign": _quantity_method("sign", lambda q: celtypes.IntType(q.q.sign())),
    "isInteger": _quantity_method("isInteger", lambda q: celtypes.BoolType(_as_int64(q) is not None)),
    "asInteger": _quantity_method("asInteger", _as_integer),
    "asApproximateFloat": _quantity_method(
        "asApproximateFloat", lambda q: celtypes.DoubleType(q.q.as_approximate_float())
    ),
    "add": _arith("add", 1),
    "sub": _arith("sub", -1),
    "semver": _semver,
    "isSemver": _is_semver,
    "major": _version_part(0),
    "minor": _version_part(1),
    "patch": _version_part(2),
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "charAt": _string_fn("charAt", _char_at),
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _string_fn("lowerAscii", lambda s: celtypes.StringType(s.translate(_LOWER))),
    "upperAscii": _string_fn("upperAscii", lambda s: celtypes.StringType(s.translate(_UPPER))),
    "replace": _string_fn("replace", _replace),
    "split": _string_fn("split", _split),
    "substring": _string_fn("substring", _substring),
    "trim": _string_fn("trim", lambda s: celtypes.StringType(s.strip(_SPACE))),
    "join": _join,
    "reverse": _reverse,
    "isSorted": _list_fn("isSorted", _is_sorted),
    "sum": _list_fn("sum", _sum),
    "min": _list_fn("min", _extreme("min", min)),
    "max": _list_fn("max", _extreme("max", max)),
    "slice": _list_fn("slice", _slice),
    "flatten": _list_fn("flatten", _flatten),
    "distinct": _list_fn("distinct", _distinct),
    "sort": _list_fn("sort", _sort),
    "ip": _ip,
    "isIP": lambda v: _ok(_address, v),
    "family": _ip_method("family", lambda a: celtypes.IntType(a.version)),
    "isUnspecified": _ip_method("isUnspecified", lambda a: celtypes.BoolType(a.is_unspecified)),
    "isLoopback": _ip_method("isLoopback", lambda a: celtypes.BoolType(a.is_loopback)),
    "isLinkLocalMulticast": _ip_method(
        "isLinkLocalMulticast", lambda a: celtypes.BoolType(_link_local_multicast(a))
    ),
    "isLinkLocalUnicast": _ip_method("isLinkLocalUnicast", lambda a: celtypes.BoolType(a.is_link_local)),
    "isGlobalUnicast": _ip_method("isGlobalUnicast", lambda a: celtypes.BoolType(_global_unicast(a))),
    "isCanonical": _is_canonical,
    "cidr": _cidr,
    "isCIDR": lambda v: _ok(_prefix, v),
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "masked": _cidr_method("masked", lambda c: CelCIDR(c.network().network_address, c.bits)),
    "prefixLength": _cidr_method("prefixLength", lambda c: celtypes.IntType(c.bits)),
    "url": _url,
    "isURL": lambda v: _ok(_parse_url, v),
    "getScheme": _url_method("getScheme", lambda u: celtypes.StringType(u.scheme)),
    "getHost": _url_method("getHost", lambda u: celtypes.StringType(u.host)),
    "getHostname": _url_method("getHostname", lambda u: celtypes.StringType(_split_host(u.host)[0])),
    "getPort": _url_method("getPort", lambda u: celtypes.StringType(_split_host(u.host)[1])),
    "getEscapedPath": _url_method("getEscapedPath", lambda u: celtypes.StringType(_escaped_path(u))),
    "getQuery": _url_method("getQuery", _query),
    **{name: _format_getter(name) for name in NAMED_FORMATS},
    "named": _named,
    "validate": _validate,
    "hasValue": _has_value,
    "value": _value,
    "orValue": _or_value,
}
"""The extension functions, by name (celpy passes a method's receiver as the first argument)."""

_LOWER: Final[dict[int, int]] = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER: Final[dict[int, int]] = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def _environment() -> celpy.Environment:
    """celpy's environment, its parser's tables kept between runs (`larkcache`): celpy builds
    its one parser (`CELParser.CEL_PARSER`, shared by every environment) with
    `celparser.Lark`, which is given the cache for that one call — celpy's own grammar and
    options, only the analysis of its tables saved. As before when celpy builds it otherwise."""
    path = cache_file("celpy-parser")
    if path is None or celparser.CELParser.CEL_PARSER is not None or celparser.Lark is not lark.Lark:
        return celpy.Environment()
    celparser.Lark = functools.partial(lark.Lark, cache=path)  # type: ignore[assignment,misc]
    try:
        return celpy.Environment()
    finally:
        celparser.Lark = lark.Lark  # type: ignore[misc]


_ENV: Final = _environment()
_UNDECLARED: Final = re.compile(r"undeclared reference to '([^']*)'")


class Program:
    """One compiled expression, evaluated with celpy and the extensions above."""

    def __init__(self, expression: str) -> None:
        try:
            ast = _ENV.compile(expression)
        except celpy.CELParseError as ex:
            raise Unsupported(f"cel-python cannot parse it: {_first_line(ex)}") from None
        unknown = sorted(_called(ast) - _KNOWN)
        unknown += [f"named({arg})" for arg in _named_args(ast) if arg not in NAMED_FORMATS]
        if unknown:
            raise Unsupported(f"cel-python has no function {', '.join(map(repr, unknown))}")
        self.expression = expression
        self._runner = _ENV.program(ast, functions=FUNCTIONS)

    def evaluate(self, device: celtypes.MapType) -> Any:
        """The plain result (`from_cel`); raises `ValueError` with CEL's reason on a CEL error,
        `Unsupported` when a function is neither celpy's nor ours."""
        # `ip` and `format` are no CEL values (celpy's Context type): receivers only our
        # functions read, which celpy passes through.
        context: dict[str, Any] = {"device": device, "ip": IP_NAMESPACE, "format": FORMAT_NAMESPACE}
        try:
            value = self._runner.evaluate(context)
        except celpy.CELEvalError as ex:
            raise _reason(ex) from None
        if isinstance(value, celpy.CELEvalError):
            raise _reason(value)
        return from_cel(value)


_MACROS: Final = frozenset({"has", "all", "exists", "exists_one", "map", "filter"})
_KNOWN: Final = frozenset(FUNCTIONS) | frozenset(celpy.evaluation.base_functions) | _MACROS


def _called(ast: Any) -> set[str]:
    """Every function and method name the expression calls (its syntax tree, before running):
    a name neither celpy nor this module has would only fail at run time, and celpy's error
    values then lose the name on their way up."""
    names: set[str] = set()
    for node in ast.iter_subtrees():
        if node.data == "ident_arg":
            names.add(str(node.children[0]))
        elif node.data == "member_dot_arg":
            names.add(str(node.children[1]))
    return names


def _named_args(ast: Any) -> list[str]:
    """The argument of every `format.named(...)`: a name when it is a plain string literal,
    else its source form (then not a name we know: the expression is `Unsupported`)."""
    out: list[str] = []
    for node in ast.iter_subtrees():
        if node.data == "member_dot_arg" and str(node.children[1]) == "named":
            tokens = list(node.children[2].scan_values(lambda _: True)) if len(node.children) > 2 else []
            literal = tokens[0] if len(tokens) == 1 and tokens[0].type == "STRING_LIT" else None
            text = str(literal)
            plain = literal is not None and len(text) >= 2 and text[0] == text[-1] and "\\" not in text
            out.append(text[1:-1] if plain else "<not a string literal>")
    return out


def _reason(ex: celpy.CELEvalError) -> Exception:
    text = str(ex.args[0]) if ex.args else str(ex)
    m = _UNDECLARED.search(text)
    if m is not None:
        if m.group(1) in FUNCTIONS or m.group(1) == "device":
            return ValueError(f"undeclared reference to {m.group(1)!r}")
        return Unsupported(f"cel-python has no function {m.group(1)!r}")
    return ValueError(text)


def _first_line(ex: Exception) -> str:
    return str(ex).strip().splitlines()[0] if str(ex).strip() else type(ex).__name__
