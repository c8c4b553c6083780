"""The moves stage's bound and guided hint (`preempt.clearing`, docs/semantics.md, "Preemption",
"Moves"): the bound never exceeds the fewest moves the exhaustive enumeration finds at the
same earlier stages, it is not vacuous, and on issue #43's fragmented clusters it proves the
moves stage where the greedy hint alone moves more pods."""

from __future__ import annotations

import os

import pytest
from preempt_cases import build
from test_preempt_moves_exhaustive import CPU, _model_tuple, exhaustive, generate

from benchmarks.defrag_workloads import consolidate, defrag_cluster, docs
from dra_solver.api.cluster import Cluster
from dra_solver.planners.bounds import reaches
from dra_solver.preempt import plan_preempt

CASES = int(os.environ.get("PREEMPT_MOVES_CASES", "120"))


def test_the_bound_never_exceeds_the_enumerated_fewest_moves() -> None:
    """On the exhaustive cases: wherever the plan reports a moves bound, it is at most the
    enumerator's fewest moves (at the same optimum of the earlier stages, which the plan
    proves: its tuple is the enumerator's); and the bound is not vacuous — positive on some
    cases, and on some the plan's moves meet it."""
    bounded = positive = met = 0
    for seed in range(CASES):
        nodes, running, pending, pdbs, gangs = generate(seed)
        cluster = build(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
        out = plan_preempt(cluster, allow_moves=True, time_limit=10)
        key = exhaustive(nodes, running, pending, pdbs, gangs)
        assert _model_tuple(out) == key, seed
        bound = out.stats.get("moves_bound")
        if bound is None:
            continue
        assert isinstance(bound, int) and 0 <= bound <= key[5], (seed, bound, key)
        assert out.stats["moves_gap"] == len(out.moves) - bound
        bounded += 1
        positive += bound > 0
        met += bound > 0 and bound == len(out.moves)
    assert bounded >= CASES // 6, bounded
    assert positive >= 5 and met >= 3, (positive, met)


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_proves_the_fewest_moves_on_a_fragmented_cluster(seed: int) -> None:
    """Issue #43's workload at 100 nodes: every pending pod placed, none evicted, the moves
    stage proven by the bound (gap 0), and never more moves than the greedy consolidation
    (`defrag_workloads.consolidate`), which places as many here."""
    d = defrag_cluster(100, seed)
    out = plan_preempt(Cluster.from_objects(docs(d)), allow_moves=True, time_limit=60, seed=seed)
    base = consolidate(d)
    assert out.stats["status"] == "OPTIMAL" and out.placed == len(d.pending) == len(base.placed)
    assert not out.victims
    assert out.stats["moves_bound"] == len(out.moves) and out.stats["moves_gap"] == 0
    assert len(out.moves) <= len(base.moves)


def test_the_bound_counts_the_budgets() -> None:
    """`defrag_cluster(100, 2)`: the 7 cheapest nodes to clear hold 10 pods, but budgets
    (PodDisruptionBudgets allowing 0-2 disruptions) keep some of their pods in place; the
    bound counts them (14, the fewest moves), and the greedy hint alone moved 17."""
    d = defrag_cluster(100, 2)
    on: dict[str, list[str | None]] = {n: [] for n in d.nodes}
    for r in d.running:
        on[r.node].append(r.deployment)
    costs = sorted(len(ds) for n, ds in on.items() if d.nodes[n] == 8 and None not in ds)
    assert sum(costs[: len(d.pending)]) == 10  # without the budgets
    out = plan_preempt(Cluster.from_objects(docs(d)), allow_moves=True, time_limit=60, seed=2)
    assert out.stats["moves_bound"] == len(out.moves) == 14


def test_a_value_below_its_bound_is_an_error() -> None:
    assert reaches(3, 3) and not reaches(4, 3) and not reaches(4, None)
    with pytest.raises(ValueError, match="below its bound"):
        reaches(2, 3)
