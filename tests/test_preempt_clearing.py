"""The moves stage's bound and guided hint (`preempt.clearing`, docs/semantics.md, "Preemption",
"Moves"): on issue #43's fragmented clusters it proves the moves stage where the greedy hint
alone moves more pods. That the bound never exceeds the fewest moves the exhaustive
enumeration finds at the same earlier stages, and is not vacuous, is checked on the
enumerated cases themselves (tests/test_preempt_moves_exhaustive.py)."""

from __future__ import annotations

import functools

import pytest

from benchmarks.defrag_workloads import Defrag, consolidate, defrag_cluster, docs
from dra_solver.api.cluster import Cluster
from dra_solver.planners.bounds import reaches
from dra_solver.preempt import PreemptOutcome, plan_preempt


@functools.cache
def _planned(seed: int) -> tuple[Defrag, PreemptOutcome]:
    """Issue #43's workload at 100 nodes and its plan with moves, once per test process (the
    tests below only read them)."""
    d = defrag_cluster(100, seed)
    return d, plan_preempt(Cluster.from_objects(docs(d)), allow_moves=True, time_limit=60, seed=seed)


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_proves_the_fewest_moves_on_a_fragmented_cluster(seed: int) -> None:
    """Issue #43's workload at 100 nodes: every pending pod placed, none evicted, the moves
    stage proven by the bound (gap 0), and never more moves than the greedy consolidation
    (`defrag_workloads.consolidate`), which places as many here."""
    d, out = _planned(seed)
    base = consolidate(d)
    assert out.verdict.status == "OPTIMAL" and out.placed == len(d.pending) == len(base.placed)
    assert not out.victims
    assert out.stats["moves_bound"] == len(out.moves) and out.stats["moves_gap"] == 0
    assert len(out.moves) <= len(base.moves)


def test_the_bound_counts_the_budgets() -> None:
    """`defrag_cluster(100, 2)`: the 7 cheapest nodes to clear hold 10 pods, but budgets
    (PodDisruptionBudgets allowing 0-2 disruptions) keep some of their pods in place; the
    bound counts them (14, the fewest moves), and the greedy hint alone moved 17."""
    d, out = _planned(2)
    on: dict[str, list[str | None]] = {n: [] for n in d.nodes}
    for r in d.running:
        on[r.node].append(r.deployment)
    costs = sorted(len(ds) for n, ds in on.items() if d.nodes[n] == 8 and None not in ds)
    assert sum(costs[: len(d.pending)]) == 10  # without the budgets
    assert out.stats["moves_bound"] == len(out.moves) == 14


def test_a_value_below_its_bound_is_an_error() -> None:
    assert reaches(3, 3) and not reaches(4, 3) and not reaches(4, None)
    with pytest.raises(ValueError, match="below its bound"):
        reaches(2, 3)
