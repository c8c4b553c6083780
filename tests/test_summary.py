"""A plan's summary counts the realized plan (issue #27 §1): pods in the output, each with its own
weight, and every number beside them (first fit's count, objective, bound) in that unit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.api.cluster import Cluster
from dra_solver.cli.main import app
from dra_solver.cli.plan import plan_summary
from dra_solver.output.objects import plan_annotations
from dra_solver.output.report import render_report
from dra_solver.pipeline import plan
from dra_solver.planners.bounds import verdict
from dra_solver.planning.job import Options
from dra_solver.planning.outcome import PlanOutcome, PlanSummary, PodPlan
from dra_solver.problem.flat import claim_weight

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "cluster-dump.yaml"
runner = CliRunner()


def _pod(name: str, claim_name: str, priority: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "priority": priority,
            "containers": [{"name": "app"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
        },
    }


def shared_claim_objects() -> list[dict[str, Any]]:
    """Two pods (priorities 5 and 0) share claim `shared`; a third pod (priority 2) has its own
    claim; one GPU left over for nobody: every pod fits, objective (5+1) + (0+1) + (2+1) = 10."""
    return [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0"), device("gpu-1"), device("gpu-2")], node="node-a"),
        claim("shared", [request("gpu")]),
        claim("own", [request("gpu")]),
        _pod("high", "shared", 5),
        _pod("low", "shared", 0),
        _pod("solo", "own", 2),
    ]


def _cluster(objs: list[dict[str, Any]]) -> Cluster:
    return Cluster.from_objects(objs)


def _line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("placed "))


def _numbers(line: str) -> dict[str, str]:
    return dict(re.findall(r"(objective|bound|gap|first fit placed) (-?[\d.]+)", line))


@pytest.mark.parametrize("allocator", ["cpsat", "reference"])
def test_each_pod_of_a_shared_claim_counts_with_its_own_weight(allocator: str) -> None:
    out = plan(_cluster(shared_claim_objects()), allocator=allocator)
    assert out.placed == 3
    assert {p.name: p.priority for p in out.pods} == {"default/high": 5, "default/low": 0, "default/solo": 2}
    assert out.weight == claim_weight(5) + claim_weight(0) + claim_weight(2) == 10
    assert out.weight == 10 and len(out.pods) == 3
    if allocator == "cpsat":
        assert out.stats["reference_placed"] == 3  # pods, not units (the shared claim joins two)


def test_the_summary_line_counts_pods_and_first_fit_in_the_same_unit_on_the_example() -> None:
    """`plan` on the README example: gpu-test2's two pods share one claim. First fit places 7
    pods (as `--allocator reference` says), and the summary's first-fit count says 7 too."""
    ref = runner.invoke(app, ["plan", str(EXAMPLE), "--allocator", "reference", "-o", "json"])
    best = runner.invoke(app, ["plan", str(EXAMPLE), "-o", "json"])
    assert ref.exit_code == best.exit_code == 2
    assert _line(ref.stderr).startswith("placed 7 of 8 pods (reference)")
    line = _line(best.stderr)
    assert line.startswith("placed 7 of 8 pods (cpsat, status ")
    numbers = _numbers(line)
    assert numbers["first fit placed"] == "7" and numbers["objective"] == "7"


def test_the_summary_is_the_same_in_the_table() -> None:
    out = runner.invoke(app, ["plan", str(EXAMPLE), "-o", "table"], env={"COLUMNS": "200"})
    numbers = _numbers(_line(out.stdout))
    assert numbers["first fit placed"] == "7" and numbers["objective"] == "7"


@pytest.mark.parametrize(
    "objects",
    [
        pytest.param(lambda: read_yaml(EXAMPLE.read_text())["items"], id="readme-example"),
        pytest.param(shared_claim_objects, id="shared-claim"),
    ],
)
def test_the_objective_never_exceeds_the_bound(objects: Any) -> None:
    out = plan(_cluster(objects()), time_limit=5)
    told = PlanSummary.of(out)
    assert told.bound is not None and told.objective <= told.bound
    assert told.gap is not None and told.gap >= 0


def test_the_summary_reads_the_verdict_never_the_stats() -> None:
    """Status, bound and gap are the verdict's (`PlanOutcome.verdict`): entries of `stats` that
    say otherwise are not read, and a plan without a verdict (first fit's) claims nothing."""
    pods = [PodPlan("a", "n", [], placed=True), PodPlan("b", None, [], "no")]
    stats: dict[str, object] = {
        "status": "OPTIMAL",
        "objective": 1,
        "bound": 1,
        "gap": 0,
        "reference_placed": 1,
    }
    told = verdict(1, 2, "model")
    assert plan_summary(PlanOutcome(pods, "cpsat", stats, verdict=told), 1.26) == (
        "placed 1 of 2 pods (cpsat, status FEASIBLE, objective 1, bound 2, gap 1, "
        "first fit placed 1), planned in 1.3 s"
    )
    assert plan_summary(PlanOutcome(pods, "cpsat", stats), 1.26) == (
        "placed 1 of 2 pods (cpsat, first fit placed 1), planned in 1.3 s"
    )
    weighted = [PodPlan("a", "n", [], priority=3, placed=True), PodPlan("b", "n", [], placed=True)]
    summary = PlanSummary.of(PlanOutcome(weighted, "cpsat", {}, verdict=verdict(5, 5, "model")))
    assert (summary.objective, summary.bound, summary.gap, summary.status) == (5, 5, 0, "OPTIMAL")


def test_the_summary_never_says_optimal_where_the_verdict_says_feasible() -> None:
    """The objective meets the bound, but the verdict is FEASIBLE (what-if's least cost not
    proven): the summary line, the JSON annotations and the report say FEASIBLE."""
    pods = [PodPlan("a", "n", [], placed=True)]
    told = verdict(1, 1, "model", proven=False)
    outcome = PlanOutcome(pods, "cpsat", {"status": "OPTIMAL"}, verdict=told)
    summary = PlanSummary.of(outcome)
    assert (summary.status, summary.objective, summary.bound, summary.gap) == ("FEASIBLE", 1, 1, 0)
    assert "status FEASIBLE" in summary.text(0.1)
    written = plan_annotations(summary, pods)["dra-solver.io/status"]
    assert written == "FEASIBLE" and type(written) is str  # YAML writers take plain text only


def test_a_verdict_of_another_plan_is_refused() -> None:
    """A verdict speaks of the plan it came with: one whose objective is not the plan's weight
    (a pod dropped after it was made) is an error, never re-judged in the summary."""
    pods = [PodPlan("a", "n", [], placed=True), PodPlan("b", None, [], "no")]
    with pytest.raises(ValueError, match="weight 2"):
        PlanSummary.of(PlanOutcome(pods, "cpsat", {}, verdict=verdict(2, 2, "model")))


def test_the_report_shows_the_realized_objective_beside_the_bound() -> None:
    cluster = _cluster(shared_claim_objects())
    best = plan(cluster)
    first = plan(cluster, options=Options(allocator="reference"))
    page = render_report(cluster, best, ["node-a"], best_gates(), seconds=0.1, compare=first)
    row = re.search(r'data-key="objective \(placed weight\)">(\d+)<', page)
    other = re.search(r'data-compare="objective \(placed weight\)">(\d+)<', page)
    assert row is not None and other is not None
    assert row.group(1) == other.group(1) == "10"
    assert "First fit placed 3." in page


def best_gates() -> Any:
    return Options().feature_gates


def test_a_pod_the_model_placed_but_expansion_dropped_is_listed_with_that_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """First fit puts `one` (1 GPU) on node-a, the first node, and then `two` (2 GPUs) fits
    nowhere; the aggregated model puts `one` on node-b and `two` on node-a. If node-a's exact
    device allocation then fails (simulated here), `two` is not in the output: the summary
    counts what is, and `two`'s reason says what happened — not "left out so that more fit"."""
    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.policy as policy

    real = expansion.allocate_node

    def failing_on_a(ctx: Any, node: str, claims: Any, group_of: Any, **kw: Any) -> Any:
        problem, assignment = real(ctx, node, claims, group_of, **kw)
        return problem, None if node == "node-a" else assignment

    monkeypatch.setattr(expansion, "allocate_node", failing_on_a)
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0"), device("gpu-1")], node="node-a"),
        resource_slice("b", [device("gpu-0")], node="node-b"),
        claim("one", [request("gpu")]),
        claim("two", [request("gpu", count=2)]),
    ]
    out = plan(_cluster(objs), models=policy.AGGREGATED_FIRST, per_device_max=0)  # no per-device refinement
    assert out.stats["aggregated"] == "yes" and out.stats["expansion_dropped"] == 1
    placed = {p.name: p.node for p in out.pods if p.placed}
    assert placed == {"default/one": "node-b"}
    two = out.pod("default/two")
    assert two.reason is not None and "the plan model put it on node node-a" in two.reason
    told = PlanSummary.of(out)
    assert (told.placed, told.objective, told.status, told.dropped) == (1, 1, "FEASIBLE", 1)
    assert "1 placed by the model but not by its device allocation" in told.text(0.1)
