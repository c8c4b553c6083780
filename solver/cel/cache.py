"""Per-signature evaluation cache: evaluate a program once per distinct device signature.

Why: see :mod:`solver.cel.signature`. Results *and* runtime errors are memoised (an error
is re-raised naming the device at hand, not the one first evaluated), so a broken
expression costs one evaluation per signature too.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from ..errors import CelRuntimeError
from .device import DeviceView
from .env import Program

__all__ = ["CacheStats", "EvalCache"]


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int

    @property
    def evaluations(self) -> int:
        return self.misses


class EvalCache:
    """Memo of (program, device signature) -> result or error reason.

    Not thread-safe; use one per allocation run (results stay valid as long as the
    programs' inputs, the devices, do not change meaning, i.e. forever).
    """

    def __init__(self, max_entries: int = 1_000_000) -> None:
        self._memo: dict[tuple[Program, Hashable], tuple[bool, Any]] = {}
        self._max = max_entries
        self.hits = 0
        self.misses = 0

    @property
    def stats(self) -> CacheStats:
        return CacheStats(self.hits, self.misses)

    def __len__(self) -> int:
        return len(self._memo)

    def clear(self) -> None:
        self._memo.clear()
        self.hits = self.misses = 0

    def evaluate(self, program: Program, device: DeviceView) -> Any:
        """``program.evaluate(device)``, once per distinct signature."""
        key = (program, program._signature(device))  # program.signature, one call less
        hit = self._memo.get(key)
        if hit is None:
            return self._miss(key, program, device)
        self.hits += 1
        ok, value = hit
        if ok:
            return value
        raise CelRuntimeError(value, expression=program.expression, device=device.ref)

    def evaluate_bool(self, program: Program, device: DeviceView) -> bool:
        """``program.evaluate_bool(device)``, once per distinct signature."""
        # evaluate(), inlined: this is the hot path of selector precompute
        key = (program, program._signature(device))
        hit = self._memo.get(key)
        if hit is None:
            value = self._miss(key, program, device)
        else:
            self.hits += 1
            ok, value = hit
            if not ok:
                raise CelRuntimeError(value, expression=program.expression, device=device.ref)
        if type(value) is bool:
            return value
        return program.check_bool(value, device)

    def _miss(self, key: tuple[Program, Hashable], program: Program, device: DeviceView) -> Any:
        """Evaluate for real (the only place a device gets converted) and memoise."""
        self.misses += 1
        try:
            value = program.evaluate(device)
        except CelRuntimeError as ex:
            self._store(key, (False, ex.reason))
            raise
        self._store(key, (True, value))
        return value

    def _store(self, key: tuple[Program, Hashable], entry: tuple[bool, Any]) -> None:
        if len(self._memo) >= self._max:
            self._memo.clear()
        self._memo[key] = entry
