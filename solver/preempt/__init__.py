"""Preemption planned for the whole batch (`plan --preempt`, `dra_solver.plan_preempt`):
`victims` (candidates, preemption policy, PodDisruptionBudgets), `model` (the batch CP-SAT
model), `moves` (`--allow-moves`: which pods may move, and as what), `reference` (upstream's
one-pod-at-a-time answer). docs/semantics.md, "Preemption".

The names below are loaded from `model` on first use, so that reading `victims` (`validate`
checks the PodDisruptionBudgets) does not load CP-SAT."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Move, PreemptOutcome, Victim, evicted_pod, plan_preempt

__all__ = ["Move", "PreemptOutcome", "Victim", "evicted_pod", "plan_preempt"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.model"), name)
    globals()[name] = value
    return value
