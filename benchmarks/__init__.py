"""Benchmarks (pytest-benchmark) and the scripts that run and report them."""

from __future__ import annotations

from dra_solver.planning.outcome import PlanOutcome


def verdict_info(out: PlanOutcome) -> dict[str, object]:
    """A plan's verdict as plain data for a benchmark's record, under the keys the records
    have always used: `status`, `objective` (the realized weight), `bound`, `gap`,
    `bound_from` — None each for a plan without a verdict (first fit's), whose objective is
    still its weight. Read from `PlanOutcome.verdict`, the one place a plan's claim lives
    (`PlanOutcome.stats` holds diagnostics only)."""
    told = out.verdict
    return {
        "status": None if told is None else told.status.value,
        "objective": out.weight,
        "bound": None if told is None else told.bound,
        "gap": None if told is None else told.gap,
        "bound_from": None if told is None else told.bound_from,
    }
