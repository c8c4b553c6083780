"""The base-environment libraries added for issue #13: ip/cidr, url, timestamps and
durations, optional entries in list and map literals, with upstream's edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView(
    "nic.example.com",
    "nic-0",
    {"nic.example.com": {"ip": "10.1.2.3", "subnet": "10.1.0.0/16", "built": "2025-03-04T05:06:07.5+01:00"}},
    {},
)


def ev(expression: str) -> Any:
    return compile_expression(expression).evaluate(DEV)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('ip("10.1.2.3").family()', 4),
        ('ip("2001:db8::1").family()', 6),
        ('isIP("10.1.2.3")', True),
        ('isIP("::ffff:1.2.3.4")', False),  # IPv4-mapped IPv6: refused upstream
        ('isIP("fe80::1%eth0")', False),  # zones: refused upstream
        ('isIP("01.2.3.4")', False),  # leading zeros: netip refuses them
        ('isIP("1.2.3.4/8")', False),
        ('ip("0.0.0.0").isUnspecified()', True),
        ('ip("::").isUnspecified()', True),
        ('ip("127.0.0.2").isLoopback()', True),
        ('ip("::1").isLoopback()', True),
        ('ip("224.0.0.251").isLinkLocalMulticast()', True),
        ('ip("224.0.1.1").isLinkLocalMulticast()', False),
        ('ip("ff02::fb").isLinkLocalMulticast()', True),
        ('ip("169.254.1.1").isLinkLocalUnicast()', True),
        ('ip("fe80::1").isLinkLocalUnicast()', True),
        ('ip("10.0.0.1").isGlobalUnicast()', True),  # private addresses are global unicast in Go
        ('ip("255.255.255.255").isGlobalUnicast()', False),
        ('ip("224.0.0.1").isGlobalUnicast()', False),
        ('ip.isCanonical("2001:db8::1")', True),
        ('ip.isCanonical("2001:DB8::1")', False),
        ('ip.isCanonical("2001:db8:0:0:0:0:0:1")', False),
        ('string(ip("2001:DB8::1"))', "2001:db8::1"),
        ('ip("10.1.2.3") == ip("10.1.2.3")', True),
        ('type(ip("10.1.2.3")) == type(ip("::1"))', True),
        ('cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))', True),
        ('cidr("10.0.0.0/8").containsIP("11.1.2.3")', False),
        ('cidr("::/0").containsIP("10.1.2.3")', False),  # families never mix
        ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', True),
        ('cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', False),
        ('cidr("10.0.0.0/8").containsCIDR("10.0.0.0/8")', True),
        ('cidr("192.168.1.5/24").ip() == ip("192.168.1.5")', True),
        ('cidr("192.168.1.5/24").masked() == cidr("192.168.1.0/24")', True),
        ('string(cidr("192.168.1.5/24").masked())', "192.168.1.0/24"),
        ('cidr("2001:db8::/32").prefixLength()', 32),
        ('isCIDR("10.0.0.0/33")', False),
        ('isCIDR("10.0.0.0/024")', False),
        ('isCIDR("10.0.0.0/255.0.0.0")', False),  # no netmask syntax in netip
        ('isCIDR("::ffff:1.2.3.0/120")', False),
        (
            'cidr(device.attributes["nic.example.com"].subnet)'
            '.containsIP(device.attributes["nic.example.com"].ip)',
            True,
        ),
    ],
)
def test_ip_and_cidr(expression: str, want: Any) -> None:
    assert ev(expression) == want


def test_ip_and_cidr_errors_name_the_value() -> None:
    with pytest.raises(CelRuntimeError, match='IP Address "x" parse error') as info:
        ev('ip("x")')
    assert info.value.device is not None and "nic-0" in str(info.value)
    with pytest.raises(CelRuntimeError, match='IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'):
        ev('ip("::ffff:1.2.3.4")')
    with pytest.raises(CelRuntimeError, match='IP address "fe80::1%eth0" with zone value is not allowed'):
        ev('ip("fe80::1%eth0")')
    with pytest.raises(CelRuntimeError, match="network address parse error"):
        ev('cidr("10.0.0.1")')
    with pytest.raises(CelCompileError, match="found no matching overload for 'containsIP'"):
        compile_expression('cidr("10.0.0.0/8").containsIP(1)')


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('url("https://example.com:8080/a/b").getScheme()', "https"),
        ('url("HTTPS://example.com/").getScheme()', "https"),
        ('url("https://example.com:8080/a/b").getHost()', "example.com:8080"),
        ('url("https://example.com:8080/a/b").getHostname()', "example.com"),
        ('url("https://example.com:8080/a/b").getPort()', "8080"),
        ('url("https://example.com/a/b").getPort()', ""),
        ('url("https://[::1]:80/").getHostname()', "::1"),
        ('url("https://[::1]:80/").getHost()', "[::1]:80"),
        ('url("https://example.com/a%2Fb").getEscapedPath()', "/a%2Fb"),
        ('url("https://example.com/a b").getEscapedPath()', "/a%20b"),
        ('url("/a/b?x=1&x=2&y=a+b&&z").getQuery()', {"x": ("1", "2"), "y": ("a b",), "z": ("",)}),
        ('url("/path").getHost()', ""),
        ('isURL("https://example.com")', True),
        ('isURL("/absolute/path")', True),
        ('isURL("mailto:someone@example.com")', True),  # opaque URLs are request URIs too
        ('isURL("example.com/path")', False),  # neither absolute nor an absolute path
        ('isURL("")', False),
        ('isURL("https://exa mple.com/")', False),
        ('isURL("https://example.com:port/")', False),
        ('isURL("https://example.com/%zz")', False),
    ],
)
def test_url(expression: str, want: Any) -> None:
    assert ev(expression) == want


def test_url_error() -> None:
    with pytest.raises(CelRuntimeError, match='URL parse error during conversion from string: parse "x"'):
        ev('url("x")')


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('string(timestamp(device.attributes["nic.example.com"].built))', "2025-03-04T04:06:07.5Z"),
        ('timestamp("2025-03-04T05:06:07Z") > timestamp("2025-01-01T00:00:00Z")', True),
        ('timestamp("2025-03-04T05:06:07Z").getFullYear()', 2025),
        ('timestamp("2025-03-04T05:06:07Z").getMonth()', 2),  # 0-based
        ('timestamp("2025-03-04T05:06:07Z").getDate()', 4),  # 1-based
        ('timestamp("2025-03-04T05:06:07Z").getDayOfMonth()', 3),  # 0-based
        ('timestamp("2025-03-04T05:06:07Z").getDayOfWeek()', 2),  # Sunday is 0
        ('timestamp("2025-12-31T00:00:00Z").getDayOfYear()', 364),
        ('timestamp("2025-03-04T05:06:07.250Z").getMilliseconds()', 250),
        ('timestamp("2025-03-04T05:06:07Z").getHours("Europe/Berlin")', 6),
        ('timestamp("2025-03-04T05:06:07Z").getHours("-08:00")', 21),
        ('int(timestamp("1970-01-01T00:01:00Z"))', 60),
        ('timestamp(86400) == timestamp("1970-01-02T00:00:00Z")', True),
        ('string(duration("1h30m") + duration("1.5s"))', "5401.5s"),
        ('string(duration("-300ms"))', "-0.3s"),
        ('duration("90m").getHours()', 1),
        ('duration("90m").getMinutes()', 90),
        ('int(duration("1us"))', 1000),
        ('string(timestamp("2025-01-02T00:00:00Z") - timestamp("2025-01-01T00:00:00Z"))', "86400s"),
        ('timestamp("2025-01-01T00:00:00Z") + duration("24h") == timestamp("2025-01-02T00:00:00Z")', True),
        ('duration("1h") < duration("61m")', True),
        ('type(duration("1s"))', "google.protobuf.Duration"),
    ],
)
def test_timestamps_and_durations(expression: str, want: Any) -> None:
    assert ev(expression) == want


def test_time_errors() -> None:
    # literals are validated at compile time (ValidateTimestampLiterals/ValidateDurationLiterals)
    with pytest.raises(CelCompileError, match="invalid timestamp"):
        compile_expression('timestamp("2025-13-01T00:00:00Z") > timestamp(0)')
    with pytest.raises(CelCompileError, match="invalid duration"):
        compile_expression('duration("1x") > duration("1s")')
    with pytest.raises(CelCompileError, match="found no matching overload for '_\\+_'"):
        compile_expression("timestamp(0) + timestamp(1)")
    with pytest.raises(CelRuntimeError, match="timestamp out of range"):
        ev('timestamp("9999-12-31T23:59:59Z") + duration("1s")')
    with pytest.raises(CelRuntimeError, match="Failed to parse timestamp"):
        ev('timestamp(device.attributes["nic.example.com"].ip)')


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ("[1, ?optional.of(2), ?optional.none()]", (1, 2)),
        ('[?device.attributes["nic.example.com"].?missing, 3]', (3,)),
        ('[?device.attributes["nic.example.com"].?ip]', ("10.1.2.3",)),
        ('{"a": 1, ?"b": optional.none(), ?"c": optional.of(3)}', {"a": 1, "c": 3}),
        ("size([?optional.none()]) == 0", True),
        ("[1, 2,]", (1, 2)),  # trailing commas, as cel-go's grammar allows
    ],
)
def test_optional_entries(expression: str, want: Any) -> None:
    assert ev(expression) == want


def test_optional_entries_need_optionals() -> None:
    with pytest.raises(CelCompileError, match="expected type 'optional_type"):
        compile_expression("[?1]")
    with pytest.raises(CelCompileError, match="expected type 'optional_type"):
        compile_expression('{?"a": 1}')
