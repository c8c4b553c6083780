"""Preemption planned for the whole batch (`plan --preempt`, `dra_solver.plan_preempt`):
`victims` (candidates, preemption policy, PodDisruptionBudgets), `model` (the batch CP-SAT
model), `moves` (`--allow-moves`: which pods may move, and as what), `reference` (upstream's
one-pod-at-a-time answer). docs/semantics.md, "Preemption"."""

from __future__ import annotations

from .model import Move, PreemptOutcome, Victim, evicted_pod, plan_preempt

__all__ = ["Move", "PreemptOutcome", "Victim", "evicted_pod", "plan_preempt"]
