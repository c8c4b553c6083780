"""Standard CEL timestamps and durations (``google.protobuf.Timestamp``/``Duration``).

Why: they are part of every cel-go environment, hence of the DRA one; a driver that
publishes a firmware build date (``timestamp(device.attributes["d"].built) >
timestamp("2025-01-01T00:00:00Z")``) or a selector that compares durations must compile.

Values are nanosecond integers (:class:`~solver.cel.values.Timestamp`,
:class:`~solver.cel.values.Duration`), because Python's ``datetime`` stops at
microseconds. Parsing follows Go: ``timestamp(s)`` takes RFC 3339 (``time.RFC3339``, up
to nine fractional digits) within years 1 to 9999, ``duration(s)`` takes Go's
``time.ParseDuration`` syntax (``1h30m``, ``1.5s``, ``-300ms``; units ns, us, µs, ms, s,
m, h) within int64 nanoseconds. Literal arguments are validated at compile time, like
Kubernetes' ``ValidateTimestampLiterals``/``ValidateDurationLiterals``. The getters take an
optional time zone: an IANA name (``"Europe/Berlin"``) or a fixed offset (``"+05:30"``);
the default is UTC (Kubernetes sets ``DefaultUTCTimeZone``). Arithmetic: timestamp ±
duration, timestamp - timestamp, duration ± duration, with range errors as in cel-go.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .functions import Overload, fail, register
from .values import INT64_MAX, INT64_MIN, Duration, Timestamp

__all__ = ["add_time", "parse_duration", "parse_timestamp", "sub_time"]

_NS: Final = 1_000_000_000
_EPOCH: Final = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
#: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z in ns since the epoch
_MIN_TS: Final = -62135596800 * _NS
_MAX_TS: Final = 253402300799 * _NS + 999_999_999

_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})"
)
_DUR_PART: Final = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")
_UNITS: Final = {
    "ns": 1,
    "us": 1000,
    "µs": 1000,
    "μs": 1000,
    "ms": 1_000_000,
    "s": _NS,
    "m": 60 * _NS,
    "h": 3600 * _NS,
}


def _timestamp_ns(text: str) -> int:
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        base = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.UTC)
    except ValueError as ex:
        raise ValueError(f'parsing time "{text}": {ex}') from None
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f'parsing time "{text}": second out of range')
    frac = int((m.group(7) or "").ljust(9, "0") or 0)
    tz = m.group(8)
    offset = 0
    if tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        offset = sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    delta = base - _EPOCH
    ns = (delta.days * 86400 + delta.seconds - offset) * _NS + frac
    if not _MIN_TS <= ns <= _MAX_TS:
        raise ValueError("timestamp out of range")
    return ns


def parse_timestamp(text: str) -> Timestamp:
    try:
        return Timestamp(_timestamp_ns(text))
    except ValueError as ex:
        raise fail(f"Failed to parse timestamp: {ex}") from None


def _duration_ns(text: str) -> int:
    s = text
    neg = False
    if s[:1] in ("+", "-"):
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0
    pos = 0
    while pos < len(s):
        m = _DUR_PART.match(s, pos)
        if m is None or (m.group(1) == "" and not m.group(2)):
            raise ValueError(f'time: invalid duration "{text}"')
        unit = _UNITS[m.group(3)]
        whole = int(m.group(1) or 0)
        frac = m.group(2) or ""
        total += whole * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
        pos = m.end()
    if total > INT64_MAX + (1 if neg else 0):
        raise ValueError(f'time: invalid duration "{text}"')
    return -total if neg else total


def parse_duration(text: str) -> Duration:
    try:
        return Duration(_duration_ns(text))
    except ValueError as ex:
        raise fail(f"Failed to parse duration: {ex}") from None


def _ts(ns: int) -> Timestamp:
    if not _MIN_TS <= ns <= _MAX_TS:
        raise fail("timestamp out of range")
    return Timestamp(ns)


def _dur(ns: int) -> Duration:
    if not INT64_MIN <= ns <= INT64_MAX:
        raise fail("integer overflow")
    return Duration(ns)


def add_time(a: Timestamp | Duration, b: Timestamp | Duration) -> Timestamp | Duration:
    """``+`` between a timestamp and a duration (either order) or two durations."""
    if type(a) is Timestamp and type(b) is Duration:
        return _ts(a.ns + b.ns)
    if type(a) is Duration and type(b) is Timestamp:
        return _ts(a.ns + b.ns)
    if type(a) is Duration and type(b) is Duration:
        return _dur(a.ns + b.ns)
    raise fail(f"found no matching overload for '_+_' applied to '({type(a).__name__}, {type(b).__name__})'")


def sub_time(a: Timestamp | Duration, b: Timestamp | Duration) -> Timestamp | Duration:
    """``-``: timestamp - duration, timestamp - timestamp (a duration), duration - duration."""
    if type(a) is Timestamp and type(b) is Duration:
        return _ts(a.ns - b.ns)
    if type(a) is Timestamp and type(b) is Timestamp:
        return _dur(a.ns - b.ns)
    if type(a) is Duration and type(b) is Duration:
        return _dur(a.ns - b.ns)
    raise fail(f"found no matching overload for '_-_' applied to '({type(a).__name__}, {type(b).__name__})'")


def _zone(name: str) -> _dt.tzinfo:
    m = re.fullmatch(r"([+-]?)(\d{1,2}):(\d{2})", name)
    if m is not None:
        sign = -1 if m.group(1) == "-" else 1
        return _dt.timezone(sign * _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    if name == "UTC" or name == "":
        return _dt.UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise fail(f"unknown time zone {name}") from None


def _local(t: Timestamp, tz: str = "UTC") -> tuple[_dt.datetime, int]:
    seconds, frac = divmod(t.ns, _NS)
    when = _EPOCH + _dt.timedelta(seconds=seconds)
    return when.astimezone(_zone(tz)), frac


def _getter(part: str) -> Callable[..., int]:  # (t) or (t, time zone)
    def get(t: Timestamp, tz: str = "UTC") -> int:
        d, frac = _local(t, tz)
        if part == "year":
            return d.year
        if part == "month":
            return d.month - 1
        if part == "dayOfYear":
            return d.timetuple().tm_yday - 1
        if part == "dayOfMonth":
            return d.day - 1
        if part == "date":
            return d.day
        if part == "dayOfWeek":
            return (d.weekday() + 1) % 7
        if part == "hours":
            return d.hour
        if part == "minutes":
            return d.minute
        if part == "seconds":
            return d.second
        return frac // 1_000_000

    return get


def _format_timestamp(t: Timestamp) -> str:
    """Go's ``time.RFC3339Nano`` in UTC, as cel-go's ``string(timestamp)``."""
    d, frac = _local(t)
    out = d.strftime("%Y-%m-%dT%H:%M:%S")
    if d.year < 1000:
        out = f"{d.year:04d}" + out[out.index("-") :]
    if frac:
        out += "." + f"{frac:09d}".rstrip("0")
    return out + "Z"


def _format_duration(d: Duration) -> str:
    """cel-go's ``string(duration)``: seconds with up to nine fractional digits and ``s``."""
    sign = "-" if d.ns < 0 else ""
    seconds, frac = divmod(abs(d.ns), _NS)
    return f"{sign}{seconds}" + ("." + f"{frac:09d}".rstrip("0") if frac else "") + "s"


def _from_seconds(n: int) -> Timestamp:
    return _ts(n * _NS)


_T: Final = "timestamp"
_D: Final = "duration"
_S: Final = "string"

_PARTS: Final = {
    "getFullYear": "year",
    "getMonth": "month",
    "getDayOfYear": "dayOfYear",
    "getDayOfMonth": "dayOfMonth",
    "getDate": "date",
    "getDayOfWeek": "dayOfWeek",
    "getHours": "hours",
    "getMinutes": "minutes",
    "getSeconds": "seconds",
    "getMilliseconds": "milliseconds",
}
_DURATION_PARTS: Final = {
    "getHours": 3600 * _NS,
    "getMinutes": 60 * _NS,
    "getSeconds": _NS,
    "getMilliseconds": 1_000_000,
}


def _dur_getter(unit: int) -> Callable[[Duration], int]:
    def get(d: Duration) -> int:
        q = abs(d.ns) // unit  # truncation toward zero, as Go's integer division
        return -q if d.ns < 0 else q

    return get


OVERLOADS: Final[list[Overload]] = [
    Overload("timestamp", False, (_S,), _T, parse_timestamp),
    Overload("timestamp", False, ("int",), _T, _from_seconds),
    Overload("timestamp", False, (_T,), _T, lambda t: t),
    Overload("duration", False, (_S,), _D, parse_duration),
    Overload("duration", False, (_D,), _D, lambda d: d),
    Overload("string", False, (_T,), _S, _format_timestamp),
    Overload("string", False, (_D,), _S, _format_duration),
    Overload("int", False, (_T,), "int", lambda t: t.ns // _NS),
    Overload("int", False, (_D,), "int", lambda d: d.ns),
    *(Overload(name, True, (_T,), "int", _getter(part)) for name, part in _PARTS.items()),
    *(Overload(name, True, (_T, _S), "int", _getter(part)) for name, part in _PARTS.items()),
    *(Overload(name, True, (_D,), "int", _dur_getter(unit)) for name, unit in _DURATION_PARTS.items()),
]

register(OVERLOADS)
