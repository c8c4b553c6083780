"""Kubernetes timestamps (metav1.Time: RFC 3339, as the API server writes them) read to the
nanosecond.

Why a module of its own at the edge: validation (`api.validate`, `status.startTime`) and the
preemption rules that order pods by start (`preempt.victims`) must accept and refuse the same
texts; one parser serves both. Python's `datetime` stops at microseconds, and upstream's own
tests order pods one nanosecond apart.
"""

from __future__ import annotations

import re
from datetime import datetime

_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})")


def rfc3339_nanos(text: str) -> int:
    """`2026-01-02T15:04:05Z` (a fraction of up to nine digits and an offset allowed) as
    nanoseconds since the epoch. Raises ValueError saying what is wrong: a time without its
    offset is refused, as the API server refuses it."""
    m = _RFC3339.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not an RFC 3339 time (like 2026-01-02T15:04:05Z): {text!r}")
    offset = "+00:00" if m.group(4) in ("Z", "z") else m.group(4)
    try:
        when = datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{offset}")
    except ValueError as exc:
        raise ValueError(f"not a valid time: {text!r} ({exc})") from None
    return int(when.timestamp()) * 1_000_000_000 + int((m.group(3) or "0").ljust(9, "0"))


__all__ = ["rfc3339_nanos"]
