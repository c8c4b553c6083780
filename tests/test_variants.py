"""One table of plan-level cases run against every way a plan is made (issue #41, step 2).

As upstream's structured allocator runs one shared test table against every variant, each
case of `tests/variant_cases.yaml` (a small cluster as YAML, the pending pods, the optimum's
weight worked out by hand) runs against each CP-SAT model variant of `planners.policy`, first
fit, the injected table (`Options.models`), partitions and `Planner.update`. A variant that
does not plan a case must say why, and the case lists how that reason begins: nothing is
skipped in silence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_solver import Cluster, Planner, plan
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.policy import MODELS, Aggregated, Complete, Cpsat, PerDevice
from dra_solver.planning.job import ModelVariant, Options, placed_weight
from dra_solver.planning.outcome import PlanOutcome
from dra_solver.planning.resolve import make_job, resolve_nodes, resolve_units

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "variant_cases.yaml").read_text())

VARIANTS: dict[str, ModelVariant] = {
    "complete": Complete(),
    "aggregated": Aggregated(),
    "aggregated-forced": Aggregated(force=True),
    "per-device": PerDevice(),
}
"""Every variant of the table, and the aggregated model forced where it applies."""

TIME_LIMIT = 10.0


def _ids(case: dict[str, Any]) -> str:
    return str(case["name"])


def _cluster(case: dict[str, Any]) -> Cluster:
    return Cluster.from_objects([*case["cluster"], *case["pods"]])


def _bound(out: PlanOutcome) -> int:
    assert out.verdict is not None and isinstance(out.verdict.bound, int), out.stats
    return out.verdict.bound


def test_the_table_names_every_variant() -> None:
    """A variant added to `MODELS` joins this table (and each case says whether it applies)."""
    assert {type(m) for m in MODELS} <= {type(v) for v in VARIANTS.values()}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_each_variant_plans_the_optimum_or_says_why_not(case: dict[str, Any], variant: str) -> None:
    cluster = _cluster(case)
    options = Options(time_limit=TIME_LIMIT)
    job = make_job(cluster, resolve_units(cluster, None, None), resolve_nodes(cluster, None), options)
    first = FirstFit(max_steps=Cpsat.first_fit_steps).plan(job)
    model = VARIANTS[variant]
    why = model.applies(job, first)
    out = model.plan(job, first, {}) if why is None else why
    expected = case.get("not_applied", {}).get(variant)
    if isinstance(out, str):
        assert expected is not None, f"{variant} does not plan {case['name']}: {out}"
        assert out.startswith(expected), out
        return
    assert expected is None, f"{variant} planned although the case says: {expected}"
    weight = placed_weight(job.units, out.pods)
    assert weight == case["optimum"], out.stats
    assert out.verdict.status == "OPTIMAL" and _bound(out) == case["optimum"], out.stats


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_first_fit_places_what_the_case_says(case: dict[str, Any]) -> None:
    out = plan(_cluster(case), allocator="reference")
    assert out.weight == case["first_fit"] <= case["optimum"]


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_the_default_table_reaches_the_optimum(case: dict[str, Any]) -> None:
    out = plan(_cluster(case), time_limit=TIME_LIMIT)
    assert out.weight == case["optimum"] and out.verdict.status == "OPTIMAL", out.stats


@pytest.mark.parametrize("variant", ["aggregated-forced", "per-device"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_a_table_given_in_the_options_is_the_one_used(case: dict[str, Any], variant: str) -> None:
    """`Options.models` replaces the table for the run: the injected variant plans (or says
    why not, in `stats["aggregated"]`), and the plan reaches the optimum either way."""
    models = (VARIANTS[variant], PerDevice()) if variant != "per-device" else (PerDevice(),)
    out = plan(_cluster(case), time_limit=TIME_LIMIT, models=models)
    assert out.weight == case["optimum"] and out.verdict.status == "OPTIMAL", out.stats
    said = str(out.stats["aggregated"])
    if variant == "per-device":
        assert said == "no: disabled"
    else:
        assert said.startswith("yes") or said.startswith(f"no: {case['not_applied'].get('aggregated', '')}")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_partitions_place_no_more_than_the_optimum_and_bound_it(case: dict[str, Any]) -> None:
    out = plan(_cluster(case), time_limit=TIME_LIMIT, partitions=2)
    assert out.weight <= case["optimum"] <= _bound(out), out.stats
    if out.verdict.status == "OPTIMAL":
        assert out.weight == case["optimum"]


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_an_update_that_adds_the_pods_reaches_the_optimum_or_says_it_may_not(case: dict[str, Any]) -> None:
    """`Planner.update` from the cluster without its pending pods, adding them: never above
    the optimum, its bound above it, and OPTIMAL only at it."""
    planner = Planner(Cluster.from_objects(case["cluster"]), time_limit=TIME_LIMIT)
    planner.plan()
    out = planner.update(add=case["pods"])
    assert out.weight <= case["optimum"] <= _bound(out), out.stats
    if out.verdict.status == "OPTIMAL":
        assert out.weight == case["optimum"]
