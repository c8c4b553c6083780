"""Expressions: CEL evaluated on visible devices with cel-python, cached, never raising.

Why a module: class and request selectors, the All-set of `count` and derived attributes
(KEP-6080) all evaluate CEL on the same devices; each expression is compiled once per process
(cel-python's parser is slow), each device's `device` variable is built once per call and
selector outcomes are remembered per (expression, device object) across calls, so the checker
stays a small fraction of planning time; every CEL failure becomes a value the rules report.

The interpreter is cel-python with the Kubernetes extensions of `celpy_env`, not our own
compiler: a bug in `dra_solver.cel` must not approve the device it chose. The one exception
is an expression cel-python cannot evaluate at all (`celpy_env.Unsupported`: optional syntax
`?.`, `[?`, `optional.of`, the formats uri/byte/date/datetime, string `format`/`quote`): it is evaluated with
`dra_solver.cel` instead and its text recorded in `FALLBACKS`, so the limitation is visible
(docs/status.md, "Not finished"), never a silent pass.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from ..api.models import Device
from ..cel import DeviceView, compile_expression
from ..cel import Semver as OurSemver
from .celpy_env import Program, Unsupported, Version, device_value
from .keys import DeviceKey, fqn
from .pools import Dev

FALLBACKS: set[str] = set()
"""Expressions cel-python could not evaluate, evaluated with `dra_solver.cel` instead."""

_PROGRAMS: dict[str, Program | str] = {}
"""Expression -> its celpy program, or why cel-python cannot evaluate it (process-wide)."""

Fingerprint = tuple[object, ...]
"""What a CEL expression can read of a device: driver, attributes, capacity, the multi flag
(and the name, for expressions that may read it)."""

_OUTCOMES: dict[tuple[str, Fingerprint], bool | str] = {}
"""(expression, device fingerprint) -> selector outcome, process-wide: devices alike (the
same GPU model on every node) are evaluated once."""

_PRINTS: dict[tuple[int, str], tuple[Device, Fingerprint]] = {}
"""(id(device), driver) -> (the device, its fingerprint without the name); the device object is
kept so that its id cannot be reused while the entry lives."""

_MAX_OUTCOMES: Final = 200_000


def _plain(dev: Dev) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], str | None]:
    """(attributes, capacity, error) by domain then name; `error` for an invalid version."""
    driver = dev.key[0]
    attrs: dict[str, dict[str, Any]] = defaultdict(dict)
    error = None
    for name, attr in dev.device.attributes.items():
        domain, _, ident = fqn(name, driver).rpartition("/")
        value: Any = None
        try:
            if attr.int_ is not None:
                value = attr.int_
            elif attr.bool_ is not None:
                value = attr.bool_
            elif attr.string is not None:
                value = attr.string
            elif attr.version is not None:
                value = Version(attr.version)
            elif attr.ints is not None:
                value = tuple(attr.ints)
            elif attr.bools is not None:
                value = tuple(attr.bools)
            elif attr.strings is not None:
                value = tuple(attr.strings)
            elif attr.versions is not None:
                value = tuple(Version(v) for v in attr.versions)
        except ValueError as ex:
            error = error or f"attribute {domain}/{ident}: {ex}"
            continue
        attrs[domain][ident] = value
    caps: dict[str, dict[str, Any]] = defaultdict(dict)
    for name, cap in dev.device.capacity.items():
        domain, _, ident = fqn(name, driver).rpartition("/")
        caps[domain][ident] = cap.value
    return attrs, caps, error


class Expressions:
    """Device variables and selector outcomes for one check call."""

    def __init__(self) -> None:
        self._values: dict[DeviceKey, tuple[Any, str | None]] = {}

    def _device(self, dev: Dev) -> tuple[Any, str | None]:
        found = self._values.get(dev.key)
        if found is None:
            attrs, caps, error = _plain(dev)
            value = device_value(dev.key[0], attrs, caps, bool(dev.device.allow_multiple_allocations))
            found = (value, error)
            self._values[dev.key] = found
        return found

    def evaluate(self, expression: str, dev: Dev, *, selector: bool) -> tuple[bool, Any, str]:
        """(ok, value, error) of a CEL expression on a device; never raises.

        Selectors must yield a bool; derived attributes may yield any value, checked by the
        caller (plain Python: bool, int, str, `celpy_env.Version`, tuples of them).
        """
        try:
            program = _PROGRAMS.get(expression)
            if program is None:
                try:
                    program = Program(expression)
                except Unsupported as ex:
                    program = str(ex)
                _PROGRAMS[expression] = program
            value, error = self._device(dev)
            if error is not None:
                return False, None, error
            if isinstance(program, str):
                result = _fallback(expression, dev, selector=selector)
            else:
                try:
                    result = program.evaluate(value)
                except Unsupported:
                    _PROGRAMS[expression] = "unsupported"
                    result = _fallback(expression, dev, selector=selector)
            if selector and type(result) is not bool:
                return False, None, f"expected a bool result, got {result!r}"
            return True, result, ""
        except Exception as exc:  # noqa: BLE001 - any CEL failure is a reported violation
            return False, None, getattr(exc, "reason", None) or str(exc) or type(exc).__name__

    def selector(self, expression: str, dev: Dev) -> bool | str:
        """A selector's outcome on a device: its bool, or the CEL error (a str)."""
        key = (expression, _fingerprint(dev, named="name" in expression))
        cached = _OUTCOMES.get(key)
        if cached is not None:
            return cached
        ok, value, error = self.evaluate(expression, dev, selector=True)
        outcome: bool | str = bool(value) if ok else error
        if len(_OUTCOMES) >= _MAX_OUTCOMES:
            _OUTCOMES.clear()
            _PRINTS.clear()
        _OUTCOMES[key] = outcome
        return outcome


def _fingerprint(dev: Dev, *, named: bool) -> Fingerprint:
    """The device as far as CEL can see it (`Fingerprint`). The name is included only when the
    expression's text contains `name` (no other way to read `device.name`)."""
    driver = dev.key[0]
    found = _PRINTS.get((id(dev.device), driver))
    if found is None or found[0] is not dev.device:
        d = dev.device
        attrs = tuple(
            sorted(
                (
                    fqn(n, driver),
                    a.int_,
                    a.bool_,
                    a.string,
                    a.version,
                    tuple(a.ints) if a.ints is not None else None,
                    tuple(a.bools) if a.bools is not None else None,
                    tuple(a.strings) if a.strings is not None else None,
                    tuple(a.versions) if a.versions is not None else None,
                )
                for n, a in d.attributes.items()
            )
        )
        caps = tuple(sorted((fqn(n, driver), c.value.as_fraction()) for n, c in d.capacity.items()))
        found = (d, (driver, attrs, caps, bool(d.allow_multiple_allocations)))
        if len(_PRINTS) >= _MAX_OUTCOMES:
            _PRINTS.clear()  # bounded: a long-lived process sees many clusters
        _PRINTS[(id(d), driver)] = found
    return (*found[1], dev.device.name) if named else found[1]


def _fallback(expression: str, dev: Dev, *, selector: bool) -> Any:
    """Our compiler, for an expression cel-python cannot evaluate (recorded in FALLBACKS)."""
    FALLBACKS.add(expression)
    program = compile_expression(expression, expect_bool=selector)
    attrs, caps, _ = _plain(dev)
    ours = {d: {k: _ours(v) for k, v in m.items()} for d, m in attrs.items()}
    view = DeviceView(
        driver=dev.key[0],
        name=dev.device.name,
        attributes=ours,
        capacity=caps,
        allow_multiple_allocations=bool(dev.device.allow_multiple_allocations),
    )
    value = program.evaluate_bool(view) if selector else program.evaluate(view)
    return _back(value)


def _ours(v: Any) -> Any:
    if isinstance(v, Version):
        return OurSemver(v.text)
    if isinstance(v, tuple):
        return tuple(_ours(x) for x in v)
    return v


def _back(v: Any) -> Any:
    if isinstance(v, OurSemver):
        return Version(v.text)
    if isinstance(v, (tuple, list)):
        return tuple(_back(x) for x in v)
    return v
