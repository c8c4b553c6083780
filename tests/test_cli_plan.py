"""`dra-solver plan`: pods over nodes through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.cli.main import app
from dra_solver.cli.plan import PLANNING_NOTICE, POD_LINES, UNPLACED_LINES, plan_summary
from dra_solver.planners.bounds import verdict
from dra_solver.planning.outcome import PlanOutcome, PodPlan, Stats

runner = CliRunner()


def _write(tmp_path: Path, objects: list[dict]) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def test_plan_places_every_pod_and_says_where(tmp_path: Path) -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        resource_slice("b", [device("gpu-0")], node="node-b"),
        claim("c1", [request("gpu")]),
        claim("c2", [request("gpu")]),
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs)])
    assert result.exit_code == 0, result.stderr
    items = read_yaml(result.stdout)["items"]
    assert all(c["status"]["allocation"] for c in items)
    assert "placed 2 of 2 pods" in result.stderr


def test_plan_exits_2_and_says_why_when_a_pod_does_not_fit(tmp_path: Path) -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        claim("c1", [request("gpu")]),
        claim("c2", [request("gpu")]),
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs), "--allocator", "reference"])
    assert result.exit_code == 2
    assert "not placed" in result.stderr and "placed 1 of 2 pods" in result.stderr


def test_plan_summary_names_allocator_status_bound_and_first_fit(tmp_path: Path) -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        claim("c1", [request("gpu")]),
        claim("c2", [request("gpu")]),
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs), "--time-limit", "2"])
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith("placed 1 of 2 pods (cpsat, status ")
    assert "first fit placed 1), planned in " in summary and summary.endswith(" s")


def test_plan_summary_reports_the_verdicts_bound_and_gap() -> None:
    """Status, bound and gap come from the plan's verdict (the stats hold none of them), the
    objective from the pods; a search's own status (`cpsat_status`) and lexicographic
    objective are not the plan's: without a verdict the line claims nothing."""
    pods = [PodPlan("a", "n", [], placed=True), PodPlan("b", None, [], "no")]
    stats: Stats = {"reference_placed": 1}
    assert plan_summary(PlanOutcome(pods, "cpsat", stats, verdict=verdict(1, 2, "model")), 1.26) == (
        "placed 1 of 2 pods (cpsat, status FEASIBLE, objective 1, bound 2, gap 1, "
        "first fit placed 1), planned in 1.3 s"
    )
    staged: Stats = {"cpsat_status": "OPTIMAL", "cpsat_objective": {"placed": 1, "devices": 3}}
    assert plan_summary(PlanOutcome(pods, "cpsat", staged), 0.04) == (
        "placed 1 of 2 pods (cpsat), planned in 0.0 s"
    )


def test_large_plans_print_only_unplaced_pods_and_no_progress_when_stderr_is_not_a_terminal(
    tmp_path: Path,
) -> None:
    n = POD_LINES + 5
    objs = [
        device_class("gpu"),
        resource_slice("a", [device(f"gpu-{i}") for i in range(n - 1)], node="node-a"),
        *(claim(f"c{i:03d}", [request("gpu")]) for i in range(n)),
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs), "--allocator", "reference"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.strip().splitlines() if line != PLANNING_NOTICE]
    assert len(lines) == 2 and lines[0].startswith(f"default/c{n - 1:03d}: not placed: ")
    assert lines[1].startswith(f"placed {n - 1} of {n} pods (reference), planned in ")


def test_stderr_names_at_most_ten_unplaced_pods_then_counts_the_rest_whatever_the_plan_size(
    tmp_path: Path,
) -> None:
    n = 200  # 199 pods cannot fit: stderr stays the same dozen lines as for 12
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        *(claim(f"c{i:03d}", [request("gpu")]) for i in range(n)),
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs), "--allocator", "reference"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.strip().splitlines() if line != PLANNING_NOTICE]
    assert len(lines) == UNPLACED_LINES + 2, lines
    assert [line.split(":")[0] for line in lines[:UNPLACED_LINES]] == [
        f"default/c{i:03d}" for i in range(1, UNPLACED_LINES + 1)
    ]
    assert lines[UNPLACED_LINES] == (
        f"… and {n - 1 - UNPLACED_LINES} more pods not placed "
        "(`-o table` or `dra-solver explain --claim NAME` for each)"  # plain claims: --claim
    )
    assert lines[-1].startswith(f"placed 1 of {n} pods (reference)")


def test_the_unplaced_pods_named_on_stderr_are_the_highest_priority_ones(tmp_path: Path) -> None:
    def pod(name: str, priority: int) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "priority": priority,
                "containers": [{"name": "app"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"c-{name}"}],
            },
        }

    names = [f"p{i:02d}" for i in range(UNPLACED_LINES + 5)]
    urgent = {"p03", "p11", "p14"}  # late in the input, first on stderr
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        *(claim(f"c-{name}", [request("gpu")]) for name in ["blocker", *names]),
        *(pod(name, 1000 if name in urgent else 0) for name in names),
    ]
    # the only GPU is taken by a claim that no pod uses: every pod is left out
    objs[2]["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "a", "device": "gpu-0"}]
            }
        }
    }
    result = runner.invoke(app, ["plan", _write(tmp_path, objs), "--allocator", "reference"])
    assert result.exit_code == 2, result.stderr
    named = {line.split(":")[0].removeprefix("default/") for line in result.stderr.splitlines()}
    shown = named & set(names)
    assert len(shown) == UNPLACED_LINES and urgent <= shown, result.stderr
    assert "… and 5 more pods not placed" in result.stderr


def test_plan_runs_without_the_collector_and_freezes_what_a_large_plan_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan` plans with the cyclic collector paused (`cli.plan._kept_out_of_collection`) and
    puts it back after; on a cluster of `FREEZE_AT` objects or more what the plan made is
    frozen (`gc.freeze`) before the collector runs again, on a smaller one it is not."""
    import gc

    from dra_solver.api.cluster import Cluster
    from dra_solver.cli import plan as cli_plan

    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        claim("c1", [request("gpu")]),
    ]
    seen: list[bool] = []
    planned = cli_plan.plan_pods

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return planned(*args, **kwargs)  # type: ignore[arg-type]  # the CLI's own arguments

    monkeypatch.setattr(cli_plan, "plan_pods", spy)
    assert runner.invoke(app, ["plan", _write(tmp_path, objs)]).exit_code == 0
    assert seen == [False] and gc.isenabled()

    cluster = Cluster.from_objects(objs)  # a slice and a claim
    before = gc.get_freeze_count()
    try:
        with cli_plan._kept_out_of_collection(cluster):
            assert not gc.isenabled()
            made = [[i] for i in range(100)]
        assert gc.isenabled() and gc.get_freeze_count() == before
        monkeypatch.setattr("dra_solver.cli.inputs.FREEZE_AT", 2)  # `inputs.freeze_if_large` reads it
        with cli_plan._kept_out_of_collection(cluster):
            made = [[i] for i in range(100)]
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(made)
    finally:
        gc.unfreeze()
