"""The Kubernetes ``ip`` and ``cidr`` CEL libraries (``k8s.io/apiserver/pkg/cel/library``
``ip.go``/``cidr.go``, in the base environment since 1.30).

Why a library of its own: a NIC driver publishes addresses and subnets as string
attributes, and selectors such as ``cidr("10.0.0.0/8").containsIP(device.attributes[
"nic.example.com"].ip)`` are accepted by the API server; without these functions they
would fail to compile here.

Parsing follows Go's ``net/netip`` as upstream uses it, on Python's :mod:`ipaddress`
where the two agree, with upstream's extra refusals: an IPv6 zone (``fe80::1%eth0``) and
an IPv4-mapped IPv6 address (``::ffff:1.2.3.4``) are errors, and so is anything
``netip`` refuses that :mod:`ipaddress` would take (a netmask or a prefix length with a
sign or leading zeros after the slash). ``cidr("192.168.1.5/24")`` keeps its host bits
(``.ip()`` returns them, ``.masked()`` drops them), as ``netip.Prefix`` does.

Costs follow upstream's ``library.CostEstimator``: parsing costs the string length times
0.1, accessors 1.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Any, Final

from .functions import Overload, fail, register
from .values import Cidr

__all__ = ["parse_cidr", "parse_ip"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_BITS: Final = re.compile(r"0|[1-9][0-9]{0,2}")


class _Unparsed(ValueError):
    """`netip`'s own refusal (Go's wording, `ParseAddr(...)` / `netip.ParsePrefix(...)`), as
    against one of upstream's extra refusals (a zone, an IPv4-mapped address): the two are
    worded apart in the runtime error, told apart by type, not by their message."""


class _Mapped(ValueError):
    """Upstream's refusal of an IPv4-mapped IPv6 address (`_addr`)."""


def _addr(raw: str) -> IPAddress:
    """``netip.ParseAddr`` plus upstream's refusals; raises ValueError with Go's wording."""
    try:
        addr = ipaddress.ip_address(raw)
    except ValueError:
        raise _Unparsed(f'ParseAddr("{raw}"): unable to parse IP') from None
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.scope_id is not None:
            raise ValueError(f'IP address "{raw}" with zone value is not allowed')
        if addr.ipv4_mapped is not None:
            raise _Mapped(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return addr


def parse_ip(raw: str) -> IPAddress:
    """``ip(s)``: a runtime error naming the string when it is not an IP address."""
    try:
        return _addr(raw)
    except _Unparsed as ex:
        raise fail(f'IP Address "{raw}" parse error during conversion from string: {ex}') from None
    except ValueError as ex:
        raise fail(str(ex)) from None


def _prefix(raw: str) -> Cidr:
    """``netip.ParsePrefix`` plus upstream's refusals; raises ValueError."""
    addr_text, slash, bits_text = raw.rpartition("/")
    if not slash:
        raise _Unparsed(f"netip.ParsePrefix(\"{raw}\"): no '/'")
    if "%" in addr_text:
        raise _Unparsed(f'netip.ParsePrefix("{raw}"): IPv6 zones cannot be present in a prefix')
    try:
        addr = _addr(addr_text)
    except _Mapped:
        raise _Mapped(f'IPv4-mapped IPv6 address "{raw}" is not allowed') from None
    except ValueError as ex:
        raise _Unparsed(f'netip.ParsePrefix("{raw}"): {ex}') from None
    if _BITS.fullmatch(bits_text) is None or int(bits_text) > addr.max_prefixlen:
        raise _Unparsed(f'netip.ParsePrefix("{raw}"): bad bits after slash: "{bits_text}"')
    return Cidr(addr, int(bits_text))


def parse_cidr(raw: str) -> Cidr:
    """``cidr(s)``: a runtime error naming the string when it is not a CIDR."""
    try:
        return _prefix(raw)
    except _Unparsed as ex:
        raise fail(f"network address parse error during conversion from string: {ex}") from None
    except ValueError as ex:
        raise fail(str(ex)) from None


def _ok(parse: Any, raw: str) -> bool:
    try:
        parse(raw)
    except ValueError:
        return False
    return True


def _is_canonical(raw: str) -> bool:
    return str(parse_ip(raw)) == raw


def _is_link_local_multicast(a: IPAddress) -> bool:
    if a.version == 4:
        return int(a) >> 8 == 0xE00000  # 224.0.0.0/24
    return (int(a) >> 112) & 0xFF0F == 0xFF02  # ff02::/16, any flags


def _is_global_unicast(a: IPAddress) -> bool:
    """Go's ``IsGlobalUnicast``: not unspecified, loopback, multicast, link-local or the
    IPv4 broadcast address (private ranges *are* global unicast, unlike ``is_global``)."""
    if a.version == 4 and int(a) == 0xFFFFFFFF:
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


def _string_cost(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(len(args[-1]) * 0.1) if type(args[-1]) is str else 0


def _contains_cost(args: tuple[Any, ...], result: Any) -> int:
    # upstream: comparing two byte lists of up to 16 bytes (x0.1), plus parsing a string argument
    size = 4 if args[0].addr.version == 4 else 16
    return math.ceil(2 * size * 0.1) + _string_cost(args, result)


_IP: Final = "ip"
_CIDR: Final = "cidr"
_S: Final = "string"

OVERLOADS: Final[list[Overload]] = [
    Overload("ip", False, (_S,), _IP, parse_ip, _string_cost),
    Overload("isIP", False, (_S,), "bool", lambda s: _ok(_addr, s), _string_cost),
    Overload("ip.isCanonical", False, (_S,), "bool", _is_canonical, _string_cost),
    Overload("string", False, (_IP,), _S, str),
    Overload("family", True, (_IP,), "int", lambda a: a.version),
    Overload("isUnspecified", True, (_IP,), "bool", lambda a: a.is_unspecified),
    Overload("isLoopback", True, (_IP,), "bool", lambda a: a.is_loopback),
    Overload("isLinkLocalMulticast", True, (_IP,), "bool", _is_link_local_multicast),
    Overload("isLinkLocalUnicast", True, (_IP,), "bool", lambda a: a.is_link_local),
    Overload("isGlobalUnicast", True, (_IP,), "bool", _is_global_unicast),
    Overload("cidr", False, (_S,), _CIDR, parse_cidr, _string_cost),
    Overload("isCIDR", False, (_S,), "bool", lambda s: _ok(_prefix, s), _string_cost),
    Overload("string", False, (_CIDR,), _S, str),
    Overload("containsIP", True, (_CIDR, _IP), "bool", lambda c, a: c.contains_ip(a), _contains_cost),
    Overload(
        "containsIP", True, (_CIDR, _S), "bool", lambda c, s: c.contains_ip(parse_ip(s)), _contains_cost
    ),
    Overload("containsCIDR", True, (_CIDR, _CIDR), "bool", lambda c, o: c.contains_cidr(o), _contains_cost),
    Overload(
        "containsCIDR",
        True,
        (_CIDR, _S),
        "bool",
        lambda c, s: c.contains_cidr(parse_cidr(s)),
        _contains_cost,
    ),
    Overload("ip", True, (_CIDR,), _IP, lambda c: c.addr),
    Overload("masked", True, (_CIDR,), _CIDR, lambda c: c.masked()),
    Overload("prefixLength", True, (_CIDR,), "int", lambda c: c.bits),
]

register(OVERLOADS)
