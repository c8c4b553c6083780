"""The Kubernetes ``url`` CEL library (``k8s.io/apiserver/pkg/cel/library/urls.go``).

``url(s)``, ``isURL(s)`` and the accessors ``getScheme``, ``getHost``, ``getHostname``,
``getPort``, ``getEscapedPath``, ``getQuery``.

Why not :func:`urllib.parse.urlsplit`: upstream parses with Go's ``url.ParseRequestURI``,
which is much stricter (a URL must be absolute or an absolute path, ``#`` is not a
fragment separator, control characters, a bad ``%`` escape or a non-numeric port are
errors) while ``urlsplit`` accepts almost anything. This module reproduces the parts of
``net/url`` that decide validity and the accessors' results; ``urllib.parse`` is used
only for percent-decoding the query, where the two agree.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from .functions import Overload, fail, register
from .lib_strings import QUOTE_ESCAPES
from .values import Url

__all__ = ["go_quote", "parse_url", "request_uri_error"]

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_HEX: Final = "0123456789abcdefABCDEF"
# characters Go's shouldEscape lets through unescaped in a host (encodeHost)
_ALNUM: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_HOST_OK: Final = frozenset(_ALNUM + "-_.~!$&'()*+,;=:[]<>\"")
# characters that may stay unescaped in a path (Go's shouldEscape for encodePath)
_PATH_OK: Final = frozenset(_ALNUM + "-_.~$&+,/:;=@")

# Go's validEncoded: what a raw path may contain to be returned as it is
_VALID_ENCODED: Final = _PATH_OK | frozenset("!'()*[]%")


class URLError(ValueError):
    """A ``url.ParseRequestURI`` error."""


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``, as ``%q`` prints the URL in a ``*url.Error``.

    Why not :func:`repr`: Go always uses double quotes and escapes control characters as
    ``\\x01`` (``\\u``/``\\U`` for non-printable runes beyond ASCII), and upstream's
    messages show the string that way.
    """
    out = ['"']
    for ch in s:
        esc = QUOTE_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _unescape(s: str, host: bool) -> str:
    """Go's ``unescape`` for a path or a host: validates ``%XX`` and, in a host, characters."""
    out = bytearray()
    i = 0
    b = s.encode("utf-8")
    while i < len(b):
        c = b[i]
        if c == 0x25:  # %
            seq = b[i : i + 3]
            if len(seq) < 3 or chr(seq[1]) not in _HEX or chr(seq[2]) not in _HEX:
                raise URLError(f'invalid URL escape "{seq.decode("utf-8", "replace")}"')
            if host and int(seq[1:], 16) < 0x80 and seq != b"%25":
                raise URLError(f'invalid URL escape "{seq.decode()}"')
            out.append(int(b[i + 1 : i + 3], 16))
            i += 3
            continue
        if host and c < 0x80 and chr(c) not in _HOST_OK:
            raise URLError(f"invalid character {go_quote(chr(c))} in host name")
        out.append(c)
        i += 1
    return out.decode("utf-8", "replace")


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= ch <= "9" for ch in port[1:]))


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        if not _valid_optional_port(host[end + 1 :]):
            raise URLError(f'invalid port "{host[end + 1 :]}" after host')
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_optional_port(host[colon:]):
            raise URLError(f'invalid port "{host[colon:]}" after host')
    return _unescape(host, True)


def _escape_path(path: str) -> str:
    out: list[str] = []
    for byte in path.encode("utf-8"):
        ch = chr(byte)
        out.append(ch if ch in _PATH_OK else f"%{byte:02X}")
    return "".join(out)


def _parse(raw: str) -> Url:
    """Go's ``url.ParseRequestURI``."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "":
        raise URLError("empty url")
    if raw == "*":
        return Url(raw, "", "", "", "*", "", "")
    scheme, rest = "", raw
    m = _SCHEME.match(raw)
    if raw[:1] == ":":
        raise URLError("missing protocol scheme")
    if m is not None and raw[m.end() : m.end() + 1] == ":":
        scheme, rest = raw[: m.end()].lower(), raw[m.end() + 1 :]
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return Url(raw, scheme, rest, "", "", "", query)
        raise URLError("invalid URI for request")
    host = ""
    if scheme and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        userinfo, at, hostpart = authority.rpartition("@")
        if at and any(ch not in _USERINFO_OK and ord(ch) < 0x80 for ch in userinfo):
            raise URLError("net/url: invalid userinfo")
        host = _parse_host(hostpart if at else authority)
    path = _unescape(rest, False)
    raw_path = rest if _escape_path(path) != rest else ""
    return Url(raw, scheme, "", host, path, raw_path, query)


_USERINFO_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@"
)


def parse_url(raw: str) -> Url:
    """``url(s)``: a runtime error naming the string when it is not a request URI."""
    try:
        return _parse(raw)
    except URLError as ex:
        raise fail(f"URL parse error during conversion from string: parse {go_quote(raw)}: {ex}") from None


def request_uri_error(raw: str) -> str | None:
    """The text of Go's ``*url.Error`` from ``url.ParseRequestURI(raw)``, None when it parses.

    The ``format`` library's ``uri`` format returns exactly this text as its one error.
    """
    try:
        _parse(raw)
    except URLError as ex:
        return f"parse {go_quote(raw)}: {ex}"
    return None


def _is_url(raw: str) -> bool:
    try:
        _parse(raw)
    except URLError:
        return False
    return True


def _split_host_port(host: str) -> tuple[str, str]:
    port = ""
    colon = host.rfind(":")
    if colon >= 0 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _escaped_path(u: Url) -> str:
    if u.raw_path and all(ch in _VALID_ENCODED for ch in u.raw_path) and (_unescape_ok(u.raw_path) == u.path):
        return u.raw_path
    if u.path == "*":
        return "*"
    return _escape_path(u.path)


def _unescape_ok(s: str) -> str | None:
    try:
        return _unescape(s, False)
    except URLError:
        return None


def _query_unescape(s: str) -> str | None:
    s = s.replace("+", " ")
    try:
        return _unescape(s, False)
    except URLError:
        return None


def _query(u: Url) -> dict[str, tuple[str, ...]]:
    """Go's ``url.ParseQuery``, errors skipped as ``URL.Query()`` does."""
    out: dict[str, list[str]] = {}
    for part in u.raw_query.split("&"):
        if ";" in part or part == "":
            continue
        k, _, v = part.partition("=")
        key, value = _query_unescape(k), _query_unescape(v)
        if key is None or value is None:
            continue
        out.setdefault(key, []).append(value)
    return {k: tuple(v) for k, v in out.items()}


def _string_cost(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(len(args[0]) * 0.1)


_U: Final = "url"
_S: Final = "string"

OVERLOADS: Final[list[Overload]] = [
    Overload("url", False, (_S,), _U, parse_url, _string_cost),
    Overload("isURL", False, (_S,), "bool", _is_url, _string_cost),
    Overload("getScheme", True, (_U,), _S, lambda u: u.scheme),
    Overload("getHost", True, (_U,), _S, lambda u: u.host),
    Overload("getHostname", True, (_U,), _S, lambda u: _split_host_port(u.host)[0]),
    Overload("getPort", True, (_U,), _S, lambda u: _split_host_port(u.host)[1]),
    Overload("getEscapedPath", True, (_U,), _S, _escaped_path),
    Overload("getQuery", True, (_U,), ("map", _S, ("list", _S)), _query),
]

register(OVERLOADS)
