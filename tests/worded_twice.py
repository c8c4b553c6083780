"""A plan whose pods left out are worded twice, the second time another way, for the tests that
compare the words of shared answers with the words of answers made one by one.

Why: the reasons are the plan's last step (`planners.run` calls `crowded_reasons` on the job and
the model's plan), and the plan before them is the same whichever way they are worded; making
the whole plan again for the second wording cost most of such a test's time (two CP-SAT plans
of each generated cluster). `crowded_reasons` writes the reasons into the plan's pods: each
wording gets its own copy of them, made before either runs, so neither sees the other's words.
The wording the pipeline returns is the first; the second is taken as `crowded_reasons` returns
it (`finish.per_pod`, after it, keeps each pod's reason and node reasons)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from dra_solver.pipeline import plan
from dra_solver.planners import crowding
from dra_solver.planners import run as planning_run
from dra_solver.planning.outcome import PlanOutcome

__all__ = ["worded_twice"]

_WORDED = crowding.crowded_reasons
"""The pipeline's wording, as imported (`again` may patch the module's name)."""


def _copied(outcome: PlanOutcome) -> PlanOutcome:
    """`outcome` with pods of its own (`crowded_reasons` sets their reasons in place)."""
    return replace(outcome, pods=[replace(p) for p in outcome.pods])


def _nothing(m: pytest.MonkeyPatch) -> None:
    """No patch."""


def worded_twice(
    cluster: Any,
    again: Callable[[pytest.MonkeyPatch], None],
    first: Callable[[pytest.MonkeyPatch], None] = _nothing,
    **options: Any,
) -> tuple[PlanOutcome, PlanOutcome]:
    """`plan(cluster, **options)`, and its pods worded again with the patches `again` makes
    (undone at once; `crowding.crowded_reasons` itself among what it may patch): the plan as
    returned, and the plan as the second wording gives it. `first`: patches made for the first
    wording alone (a test's counters, say), after the second."""
    second: list[PlanOutcome] = []

    def twice(job: Any, outcome: PlanOutcome) -> PlanOutcome:
        mine, other = _copied(outcome), _copied(outcome)
        with pytest.MonkeyPatch.context() as m:
            again(m)
            second.append(crowding.crowded_reasons(job, other))
        with pytest.MonkeyPatch.context() as m:
            first(m)
            return _WORDED(job, mine)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(planning_run, "crowded_reasons", twice)
        first = plan(cluster, **options)
    (other,) = second
    return first, other
