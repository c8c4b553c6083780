"""Semantic versions (semver 2.0.0) as DRA ``version`` attributes and the CEL ``semver`` type.

Why a class of our own: upstream parses version attributes with ``blang/semver`` ``Parse``
(strict: exactly ``MAJOR.MINOR.PATCH``, no leading zeros, optional ``-pre`` and ``+build``)
and the Kubernetes CEL ``semver`` library compares them by semver precedence. An invalid
version attribute does not fail when the ResourceSlice is read; it makes *every* CEL
evaluation on that device fail ("parse semantic version: ..."). So a :class:`Semver` can be
built from any string without raising (``Semver(text)``) and remembers its parse error;
the CEL layer raises that error, naming the attribute, when the device is evaluated.
Use :meth:`Semver.parse` where an invalid string must raise at once.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["Semver", "SemverError"]

_UINT64_MAX: Final = 2**64 - 1

# semver.org's recommended regular expression (strict 2.0.0).
_STRICT: Final = re.compile(
    r"(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
    r"(?:-(?P<pre>(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+(?P<build>[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
# What ``semver(s, true)`` tolerates before normalising: a "v" prefix, one to three
# numeric components with leading zeros, then the usual pre-release/build suffix.
_LOOSE: Final = re.compile(r"v?(?P<core>[0-9]+(?:\.[0-9]+){0,2})(?P<rest>[-+].*)?", re.DOTALL)


class SemverError(ValueError):
    """A string that is not a strict semver 2.0.0 version."""


def _why_invalid(text: str) -> str:
    """A short reason in the style of blang/semver's errors."""
    if text == "":
        return "Version string empty"
    core = re.split(r"[-+]", text, maxsplit=1)[0]
    parts = core.split(".")
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    for label, part in zip(("Major", "Minor", "Patch"), parts, strict=True):
        if not part.isdigit() or not part.isascii():
            return f"Invalid character(s) found in {label.lower()} number {part!r}"
        if len(part) > 1 and part[0] == "0":
            return f"{label} number must not contain leading zeroes {part!r}"
    return "Invalid pre-release or build metadata"


def _prerelease_key(part: int | str) -> tuple[int, int, str]:
    """Order of pre-release identifiers (semver.org 11.4): numeric ones by value, below
    alphanumeric ones, which compare in ASCII order."""
    return (0, part, "") if isinstance(part, int) else (1, 0, part)


class Semver:
    """One semantic version; compares by semver precedence (build metadata ignored).

    ``Semver(text)`` never raises: an invalid ``text`` gives an object with ``valid`` False
    and ``error`` set, which the CEL layer reports when a device carrying it is evaluated.
    """

    __slots__ = ("text", "major", "minor", "patch", "pre", "build", "error")

    text: str
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]
    build: tuple[str, ...]
    error: str | None

    def __init__(self, text: str) -> None:
        self.text = text
        self.major = self.minor = self.patch = 0
        self.pre = ()
        self.build = ()
        self.error = None
        m = _STRICT.fullmatch(text) if isinstance(text, str) else None
        if m is None:
            self.error = _why_invalid(text) if isinstance(text, str) else "not a string"
            return
        nums = (int(m["major"]), int(m["minor"]), int(m["patch"]))
        if any(n > _UINT64_MAX for n in nums):
            self.error = "version number out of range"
            return
        self.major, self.minor, self.patch = nums
        if m["pre"] is not None:
            self.pre = tuple(int(p) if p.isdigit() else p for p in m["pre"].split("."))
        if m["build"] is not None:
            self.build = tuple(m["build"].split("."))

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Strict parse (``semver(s)``); with ``normalize`` the tolerant ``semver(s, true)``.

        Normalising strips a leading ``v``, pads a missing minor/patch with ``.0`` and drops
        leading zeros of the numeric components before the strict parse.
        Raises :class:`SemverError`.
        """
        if normalize and isinstance(text, str):
            m = _LOOSE.fullmatch(text)
            if m is not None:
                nums = [str(int(p)) for p in m["core"].split(".")]
                nums += ["0"] * (3 - len(nums))
                text = ".".join(nums) + (m["rest"] or "")
        v = cls(text)
        if v.error is not None:
            raise SemverError(f"invalid semantic version {text!r}: {v.error}")
        return v

    @property
    def valid(self) -> bool:
        return self.error is None

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence (blang ``Compare``)."""
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xi, yi = isinstance(x, int), isinstance(y, int)
            if xi and not yi:
                return -1
            if yi and not xi:
                return 1
            return -1 if _prerelease_key(x) < _prerelease_key(y) else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        if self.error is not None or other.error is not None:
            return self.text == other.text
        return self.compare(other) == 0

    def __hash__(self) -> int:
        if self.error is not None:
            return hash(self.text)
        return hash((self.major, self.minor, self.patch, self.pre))

    def __lt__(self, other: Semver) -> bool:
        return self.compare(other) < 0

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Semver({self.text!r})"
