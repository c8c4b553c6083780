"""The counting model (`preempt.counting`) against the per-device model on the generated
preemption clusters (docs/semantics.md, "Preemption", "Which model"): where it applies, both
prove the same objective tuple (weight, PDB violations, highest, sum, count) — the counting
model is exact on interchangeable node-local devices, not an approximation. And it applies
only where it should: a request that may take only some of a node's devices sends the input
to the per-device model."""

from __future__ import annotations

import functools
import os

import pytest
from example_counts import examples
from preempt_cases import Pending, Running, both_models, build
from test_preempt_differential import CPU, _model_tuple, generate

from dra_solver.planning.job import Options
from dra_solver.preempt import PreemptOutcome
from dra_solver.preempt.model import setting, solve_setting

CASES = int(os.environ.get("PREEMPT_CASES", examples(60)))


@functools.cache
def _solved(seed: int) -> tuple[PreemptOutcome, PreemptOutcome]:
    """`seed`'s generated case on the model auto picks (it must be the counting one: auto runs
    it as `model="counts"` does, and says so) and on the per-device model, once per test
    process: the tests below read the same plans (they only read them)."""
    nodes, running, pending, pdbs, gangs = generate(seed)
    return both_models(build(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs))


@pytest.mark.parametrize("seed", range(CASES))
def test_the_counting_model_proves_the_per_device_models_optimum(seed: int) -> None:
    by_counts, by_devices = _solved(seed)
    assert by_counts.verdict.status == by_devices.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)


def test_auto_takes_the_counting_model_where_it_applies() -> None:
    cluster = build({"n1": 2}, [Running("a", "n1", 1, (0, 1))], [Pending("p", 100, 1)])
    out = solve_setting(setting(cluster, None, None, Options.of(None)), Options.of(None))
    assert out.stats["preempt_model"] == "counts" and [v.name for v in out.victims] == ["default/a"]


def test_devices_a_request_may_take_only_some_of_stay_on_the_counting_model() -> None:
    """Issue #43: a node whose GPUs differ for the pending requests is modelled by counts with
    flows (`counting._flows`); the plan is the per-device model's."""
    from preempt_cases import cluster_docs

    docs = cluster_docs({"n1": 2}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1), Pending("q", 50, 1)])
    for d in docs:  # p asks for gpu-1 only, q for any: gpu-0 and gpu-1 are not alike to p
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "p-gpu":
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
                {"cel": {"expression": 'device.attributes["gpu.example.com"].index == 1'}}
            ]
        if d["kind"] == "ResourceSlice":
            for i, dev in enumerate(d["spec"]["devices"]):
                dev["attributes"] = {"index": {"int": i}}
    from dra_solver.api.cluster import Cluster

    cluster = Cluster.from_objects(docs)
    opts = Options.of(None)
    by_devices = solve_setting(setting(cluster, None, None, opts), opts, model="devices")
    out = solve_setting(setting(cluster, None, None, opts), opts)
    assert out.stats["preempt_model"] == "counts" and out.pod("default/p").placed
    assert [v.name for v in out.victims] == ["default/a"] and out.pod("default/q").placed
    assert [v.name for v in by_devices.victims] == ["default/a"] and by_devices.placed == out.placed == 2


MERGE_CASES = range(0, CASES, 2)


@pytest.mark.parametrize("seed", MERGE_CASES)
def test_merged_kinds_prove_the_tuple_of_kinds_by_weight(seed: int) -> None:
    """`counting.merged`: with every pending pod placed, kinds that only a weight or a level no
    candidate's priority separates tell apart are one kind, and the plan's objective tuple is
    the one the model with every kind apart proves."""
    nodes, running, pending, pdbs, gangs = generate(seed)
    cluster = build(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    opts = Options.of(None, time_limit=10)
    merged = _solved(seed)[0]
    apart = solve_setting(setting(cluster, None, None, opts), opts, model="counts-by-weight")
    assert apart.stats["kinds_merged"] is False
    assert merged.verdict.status == apart.verdict.status == "OPTIMAL"
    assert _model_tuple(merged) == _model_tuple(apart)


def test_some_generated_cases_merge_kinds_and_some_do_not() -> None:
    """The comparison above covers both paths: kinds merged (every pod placed by the hint) and
    kinds by weight (the hint leaves a pod out)."""
    seen = {_solved(seed)[0].stats["kinds_merged"] for seed in MERGE_CASES}
    assert seen == {True, False}


def test_levels_a_candidate_priority_separates_stay_apart() -> None:
    """Pods of priority 100 and 200 may both evict the priority-50 pod but only the 200 one the
    priority-150 pod: two kinds; 200 and 300 are alike to every candidate: one kind, weight 1,
    its units in queue order."""
    from dra_solver.preempt import counting
    from dra_solver.preempt.setting import Setting

    cluster = build(
        {"n1": 4},
        [Running("low", "n1", 50, (0, 1)), Running("mid", "n1", 150, (2, 3))],
        [Pending("a", 100, 1), Pending("b", 200, 1), Pending("c", 300, 1)],
    )
    opts = Options.of(None)
    s: Setting = setting(cluster, None, None, opts)
    kinds = [counting.Kind([i], [i], 0, lv, 7, {}, frozenset({"n1"}), ()) for i, lv in enumerate(s.levels)]
    facts = counting.Counting(kinds, [], [], {}, [], [], [], {})
    one = counting.merged(s, facts)
    by_level = sorted((k.level, k.units, k.weight) for k in one.kinds)
    names = [u.name for u in s.pending]
    assert by_level == [
        (100, [names.index("default/a")], 1),
        (200, sorted([names.index("default/b"), names.index("default/c")]), 1),
    ]


def test_the_lowest_highest_priority_comes_before_fewer_victims_in_the_ceiling_search() -> None:
    """`model._by_ceiling`: stage 3 before stage 4. Evicting `big` (priority 50, both GPUs of
    n1) would be one victim; evicting `b` and `c` (priority 0, one GPU each on n2) is two, but
    of a lower highest priority — the batch plan evicts b and c, and the ceiling search found
    it (priority 0: the first ceiling with a plan; "nothing evicted" has none)."""
    cluster = build(
        {"n1": 2, "n2": 2},
        [Running("big", "n1", 50, (0, 1)), Running("b", "n2", 0, (0,)), Running("c", "n2", 0, (1,))],
        [Pending("p", 100, 2)],
    )
    opts = Options.of(None)
    out = solve_setting(setting(cluster, None, None, opts), opts)
    assert out.stats["preempt_model"] == "counts" and out.stats["kinds_merged"] is True
    assert out.verdict.status == "OPTIMAL"
    assert sorted(v.name for v in out.victims) == ["default/b", "default/c"]
    assert out.pod("default/p").node == "n2"


def test_a_pending_pod_that_fits_without_evictions_evicts_nobody_in_the_ceiling_search() -> None:
    """The first ceiling, "nothing evicted", has a plan: no victim although both could go."""
    cluster = build({"n1": 2, "n2": 2}, [Running("a", "n1", 0, (0, 1))], [Pending("p", 100, 2)])
    opts = Options.of(None)
    out = solve_setting(setting(cluster, None, None, opts), opts)
    assert out.verdict.status == "OPTIMAL" and out.victims == [] and out.pod("default/p").node == "n2"


def test_fewer_budget_violations_come_before_a_lower_ceiling() -> None:
    """Stage 2 before stage 3 in the ceiling search: evicting `a` (priority 0, its budget
    allows none) or `b` (priority 50, no budget) — the plan evicts b, with no violation,
    although the ceiling "priority 0" is lower."""
    from preempt_cases import pdb

    cluster = build(
        {"n1": 2, "n2": 2},
        [Running("a", "n1", 0, (0, 1), {"app": "a"}), Running("b", "n2", 50, (0, 1), {"app": "b"})],
        [Pending("p", 100, 2)],
        [pdb("keep-a", {"app": "a"}, allowed=0)],
    )
    opts = Options.of(None)
    out = solve_setting(setting(cluster, None, None, opts), opts)
    assert out.stats["kinds_merged"] is True and out.verdict.status == "OPTIMAL"
    assert [v.name for v in out.victims] == ["default/b"] and out.stats["pdb_violations"] == 0


def test_a_budget_violation_the_plan_cannot_avoid_is_found_by_the_second_ceiling_search() -> None:
    """No ceiling has a plan within no violation (the only room is `a`'s, whose budget allows
    none): stage 2 is solved (1 violation) and the ceilings asked again — the plan evicts a,
    proven."""
    from preempt_cases import pdb

    cluster = build(
        {"n1": 2},
        [Running("a", "n1", 0, (0, 1), {"app": "a"})],
        [Pending("p", 100, 2)],
        [pdb("keep-a", {"app": "a"}, allowed=0)],
    )
    opts = Options.of(None)
    out = solve_setting(setting(cluster, None, None, opts), opts)
    assert out.stats["kinds_merged"] is True and out.verdict.status == "OPTIMAL"
    assert [v.name for v in out.victims] == ["default/a"] and out.stats["pdb_violations"] == 1
    assert out.stats["stage_status"]["highest_priority"] == "OPTIMAL"
