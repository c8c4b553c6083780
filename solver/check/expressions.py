"""Expressions: CEL evaluated on visible devices, cached, never raising.

Why a module: class and request selectors, the All-set of `count` and derived attributes
(KEP-6080) all evaluate CEL on the same devices; compiling each expression once, building
each device's `device` variable once and remembering selector outcomes keeps one check
call linear, and turning every CEL failure into a value lets the rules report it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, Program, Semver, compile_expression
from dra_solver.check.keys import DeviceKey, fqn
from dra_solver.check.pools import Dev


class Expressions:
    """Compiled programs, device views and selector outcomes for one check call."""

    def __init__(self) -> None:
        self._programs: dict[tuple[str, bool], Program] = {}
        self._views: dict[DeviceKey, DeviceView] = {}
        self._selector_cache: dict[tuple[str, DeviceKey], bool | str] = {}

    def view(self, dev: Dev) -> DeviceView:
        """The CEL `device` variable of a device (bare attribute names under the driver)."""
        found = self._views.get(dev.key)
        if found is not None:
            return found
        driver = dev.key[0]
        attrs: dict[str, dict[str, Any]] = defaultdict(dict)
        for name, attr in dev.device.attributes.items():
            domain, _, ident = fqn(name, driver).rpartition("/")
            value: Any = None
            if attr.int_ is not None:
                value = attr.int_
            elif attr.bool_ is not None:
                value = attr.bool_
            elif attr.string is not None:
                value = attr.string
            elif attr.version is not None:
                value = Semver(attr.version)
            elif attr.ints is not None:
                value = tuple(attr.ints)
            elif attr.bools is not None:
                value = tuple(attr.bools)
            elif attr.strings is not None:
                value = tuple(attr.strings)
            elif attr.versions is not None:
                value = tuple(Semver(v) for v in attr.versions)
            attrs[domain][ident] = value
        caps: dict[str, dict[str, Quantity]] = defaultdict(dict)
        for name, cap in dev.device.capacity.items():
            domain, _, ident = fqn(name, driver).rpartition("/")
            caps[domain][ident] = cap.value
        view = DeviceView(
            driver=driver,
            name=dev.device.name,
            attributes={k: dict(v) for k, v in attrs.items()},
            capacity={k: dict(v) for k, v in caps.items()},
            allow_multiple_allocations=bool(dev.device.allow_multiple_allocations),
        )
        self._views[dev.key] = view
        return view

    def evaluate(self, expression: str, dev: Dev, *, selector: bool) -> tuple[bool, Any, str]:
        """(ok, value, error) of a CEL expression on a device; never raises.

        Selectors must yield a bool (checked at compile time where the type is static and
        at run time otherwise); derived attributes may yield any value, checked by the caller.
        """
        try:
            program = self._programs.get((expression, selector))
            if program is None:
                program = compile_expression(expression, expect_bool=selector)
                self._programs[(expression, selector)] = program
            view = self.view(dev)
            value = program.evaluate_bool(view) if selector else program.evaluate(view)
            return True, value, ""
        except Exception as exc:  # noqa: BLE001 - any CEL failure is a reported violation
            return False, None, getattr(exc, "reason", None) or str(exc) or type(exc).__name__

    def selector(self, expression: str, dev: Dev) -> bool | str:
        """A selector's outcome on a device: its bool, or the CEL error (a str)."""
        cache_key = (expression, dev.key)
        cached = self._selector_cache.get(cache_key)
        if cached is None:
            ok, value, error = self.evaluate(expression, dev, selector=True)
            cached = bool(value) if ok else error
            self._selector_cache[cache_key] = cached
        return cached
