"""The Kubernetes ``format`` CEL library (``k8s.io/apiserver/pkg/cel/library/format.go``).

``format.named(name)`` returns ``optional(kubernetes.NamedFormat)`` (``optional.none()`` for
an unknown name); ``format.dns1123Label()`` ... ``format.datetime()`` return one format
each; ``<format>.validate(s)`` returns ``optional(list(string))``: ``optional.none()`` when
``s`` is valid, otherwise upstream's error strings, so a selector reads
``!format.dns1123Label().validate(device.attributes["d"].name).hasValue()``.

Why reimplement the validators instead of one regular expression each: the messages are
part of the result (``validate(s).value()``), and upstream's come from several places with
their own quirks, reproduced here:

* the DNS names (``dns1123Label``, ``dns1123Subdomain``, ``dns1035Label``) use
  ``k8s.io/apimachinery/pkg/util/validation`` ("must be no more than 63 *characters*"),
  while ``qualifiedName`` and ``labelValue`` use the newer ``pkg/api/validate/content``
  ("must be no more than 63 *bytes*", "a valid label key ..."), both at v0.36;
* lengths are Go byte lengths (``len(s)``), so the checks run on the UTF-8 bytes;
* the ``...Prefix`` formats (names for ``generateName``) replace a trailing ``-`` by
  cutting the last *two* bytes and appending ``a`` (apimachinery's ``maskTrailingDash``);
* ``uri`` is Go's ``url.ParseRequestURI`` and returns its error text
  (:func:`~solver.cel.lib_url.request_uri_error`); ``uuid``, ``byte``, ``date`` and
  ``datetime`` are kube-openapi's ``strfmt`` checks with fixed messages ("invalid base64");
  ``datetime`` in particular only looks at the text between the first and second ``t``
  after lower-casing, as ``strfmt.IsDateTime`` does.

Cost: at run time a call costs ``ceil((len(s) + 1) * 0.1) * ceil(max_regex_size * 0.25)``
with the format's own ``MaxRegexSize`` (upstream's ``CallCost``); the static estimate
(:mod:`~solver.cel.estimate`) cannot know the format and uses upstream's
``MaxNameFormatRegexSize`` (128) for every one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

from .functions import Overload, register
from .lib_url import request_uri_error
from .values import NONE, NamedFormat, Opt

__all__ = ["FORMATS", "MAX_NAME_FORMAT_REGEX_SIZE"]

#: upstream ``apiservercel.MaxNameFormatRegexSize``: the regex size the static estimate
#: assumes for ``validate``, whichever format it is called on
MAX_NAME_FORMAT_REGEX_SIZE: Final = 128

# -- apimachinery: DNS names, label keys and values ----------------------------------------

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _LABEL_KEY_FMT + ")?"


def _bytes_re(fmt: str) -> re.Pattern[bytes]:
    """Match the whole value, like Go's ``^fmt$`` (Go's ``$`` never matches before a ``\\n``)."""
    return re.compile(fmt.encode("ascii"))


_DNS1123_LABEL_RE: Final = _bytes_re(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE: Final = _bytes_re(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE: Final = _bytes_re(_DNS1035_LABEL_FMT)
_LABEL_KEY_RE: Final = _bytes_re(_LABEL_KEY_FMT)
_LABEL_VALUE_RE: Final = _bytes_re(_LABEL_VALUE_FMT)

_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError`` (the same text in both packages).

    Each example is followed by ``", "`` and joined by ``" or "``, so upstream's text has
    two spaces before ``or`` (``'my-name',  or '123-abc'``); kept, since it is the message.
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_chars(n: int) -> str:
    """``pkg/util/validation.MaxLenError``."""
    return f"must be no more than {n} characters"


def _max_len_bytes(n: int) -> str:
    """``pkg/api/validate/content.MaxLenError`` (the newer package says bytes)."""
    return f"must be no more than {n} bytes"


def _full(rx: re.Pattern[bytes], value: bytes) -> bool:
    return rx.fullmatch(value) is not None


def _dns1123_label(value: bytes) -> list[str]:
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_chars(63))
    if not _full(_DNS1123_LABEL_RE, value):
        if _full(_DNS1123_SUBDOMAIN_RE, value):
            # a valid subdomain that is no label: with the length checked, it must be the dots
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(value: bytes, max_len: Callable[[int], str] = _max_len_chars) -> list[str]:
    errs: list[str] = []
    if len(value) > 253:
        errs.append(max_len(253))
    if not _full(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _dns1035_label(value: bytes) -> list[str]:
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_chars(63))
    if not _full(_DNS1035_LABEL_RE, value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


_LABEL_KEY_EXAMPLES: Final = ("MyName", "my.name", "123-abc")


def _label_key(value: bytes) -> list[str]:
    """``content.IsLabelKey`` (what ``validation.IsQualifiedName`` is at v0.36)."""
    errs: list[str] = []
    parts = value.split(b"/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(prefix, _max_len_bytes))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, *_LABEL_KEY_EXAMPLES)
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_bytes(63))
    if not _full(_LABEL_KEY_RE, name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, *_LABEL_KEY_EXAMPLES))
    return errs


def _label_value(value: bytes) -> list[str]:
    errs: list[str] = []
    if len(value) > 63:
        errs.append(_max_len_bytes(63))
    if not _full(_LABEL_VALUE_RE, value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(value: bytes) -> bytes:
    """apimachinery's ``maskTrailingDash``: ``name[:len(name)-2] + "a"`` (two bytes cut, sic)."""
    if len(value) > 1 and value.endswith(b"-"):
        return value[:-2] + b"a"
    return value


def _on_bytes(check: Callable[[bytes], list[str]], prefix: bool = False) -> Callable[[str], list[str]]:
    """Run a byte-level check on a CEL string (Go strings are bytes; lengths count bytes)."""

    def run(s: str) -> list[str]:
        value = s.encode("utf-8", "surrogatepass")
        return check(_mask_trailing_dash(value) if prefix else value)

    return run


# -- kube-openapi strfmt: uuid, byte, date, datetime ---------------------------------------

#: ``strfmt.UUIDPattern``; its length is the format's MaxRegexSize
_UUID_PATTERN: Final = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
_UUID_RE: Final = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I | re.A)
#: govalidator's ``Base64`` (``strfmt`` validates ``byte`` with ``govalidator.IsBase64``)
_BASE64_RE: Final = re.compile(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})", re.A
)
#: ``strfmt.DateTimePattern``; upstream sizes both ``date`` and ``datetime`` by it
_DATETIME_PATTERN: Final = r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
_TIME_RE: Final = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_DATE_RE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
#: upstream's constants for the govalidator regexes it sizes ``byte`` and ``uri`` by
_BASE64_LENGTH: Final = 84
_URL_LENGTH: Final = 1103

_DAYS: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date(s: str) -> bool:
    """``strfmt.IsDate``: Go's ``time.Parse("2006-01-02", s)`` (year 0000 included, leap years)."""
    m = _DATE_RE.fullmatch(s)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS[month - 1] + (1 if month == 2 and leap else 0)


def _go_lower(s: str) -> str:
    """Go's ``strings.ToLower``: one rune in, one rune out (Python lowers ``İ`` to two)."""
    lowered = s.lower()
    if len(lowered) == len(s):
        return lowered
    return "".join(ch.lower()[0] for ch in s)


def _is_datetime(s: str) -> bool:
    """``strfmt.IsDateTime``: a date before the first ``t``, a time between it and the next."""
    if len(s.encode("utf-8", "surrogatepass")) < 4:
        return False
    parts = _go_lower(s).split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME_RE.fullmatch(parts[1])
    if m is None:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _fixed(ok: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    def run(s: str) -> list[str]:
        return [] if ok(s) else [message]

    return run


def _uri(s: str) -> list[str]:
    err = request_uri_error(s)
    return [] if err is None else [err]


#: format.named()'s names -> the formats, in upstream's order
FORMATS: Final[dict[str, NamedFormat]] = {
    "dns1123Label": NamedFormat("DNS1123Label", _on_bytes(_dns1123_label), 30),
    "dns1123Subdomain": NamedFormat("DNS1123Subdomain", _on_bytes(_dns1123_subdomain), 60),
    "dns1035Label": NamedFormat("DNS1035Label", _on_bytes(_dns1035_label), 30),
    "qualifiedName": NamedFormat("QualifiedName", _on_bytes(_label_key), 60),
    "dns1123LabelPrefix": NamedFormat("DNS1123LabelPrefix", _on_bytes(_dns1123_label, True), 30),
    "dns1123SubdomainPrefix": NamedFormat("DNS1123SubdomainPrefix", _on_bytes(_dns1123_subdomain, True), 60),
    "dns1035LabelPrefix": NamedFormat("DNS1035LabelPrefix", _on_bytes(_dns1035_label, True), 30),
    "labelValue": NamedFormat("LabelValue", _on_bytes(_label_value), 40),
    "uri": NamedFormat("URI", _uri, _URL_LENGTH),
    "uuid": NamedFormat(
        "uuid",
        _fixed(lambda s: _UUID_RE.fullmatch(s) is not None, "does not match the UUID format"),
        len(_UUID_PATTERN),
    ),
    "byte": NamedFormat(
        "byte", _fixed(lambda s: _BASE64_RE.fullmatch(s) is not None, "invalid base64"), _BASE64_LENGTH
    ),
    "date": NamedFormat("date", _fixed(_is_date, "invalid date"), len(_DATETIME_PATTERN)),
    "datetime": NamedFormat("datetime", _fixed(_is_datetime, "invalid datetime"), len(_DATETIME_PATTERN)),
}


def _named(name: str) -> Opt:
    f = FORMATS.get(name)
    return NONE if f is None else Opt(f)


def _validate(f: NamedFormat, s: str) -> Opt:
    errs = f.validate(s)
    return NONE if not errs else Opt(tuple(errs))


def _validate_cost(args: tuple[Any, ...], result: Any) -> int:
    """Upstream's ``CallCost`` for ``validate``, less the 1 every call is charged already."""
    f, s = args
    str_cost = math.ceil((len(s) + 1) * 0.1)
    regex_cost = math.ceil(f.max_regex_size * 0.25)
    return max(str_cost * regex_cost - 1, 0)


_F: Final = "format"

OVERLOADS: Final[list[Overload]] = [
    Overload("format.named", False, ("string",), ("opt", _F), _named),
    Overload("validate", True, (_F, "string"), ("opt", ("list", "string")), _validate, _validate_cost),
    *(Overload(f"format.{key}", False, (), _F, lambda f=f: f) for key, f in FORMATS.items()),
]

register(OVERLOADS)
