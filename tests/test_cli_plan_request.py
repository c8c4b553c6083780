"""`plan`'s request (`dra_solver.cli.request.PlanRequest`): what the user asked, parsed once, and
the one Options built from it — the steps after the search use those options, not the ones the
search ran with (whose executor is shut down by then)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dra_solver.cli import plan as cli_plan
from dra_solver.cli.help import UsageError
from dra_solver.cli.inputs import Inputs
from dra_solver.cli.main import app
from dra_solver.cli.options import Output, OutputFormat
from dra_solver.errors import DRASolverError
from dra_solver.gates import FeatureGates
from dra_solver.output.objects import OutputMode
from dra_solver.planning.job import Options

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "gpu-cluster.yaml"

runner = CliRunner()


def test_report_compare_of_a_partitioned_plan_runs_first_fit(tmp_path: Path) -> None:
    """`--report --compare` runs first fit after the search; with `--partitions 2` first fit
    submits its parts to an executor, and the search's process pool is shut down by then (this
    ended in `RuntimeError: cannot schedule new futures after shutdown`)."""
    page = tmp_path / "plan.html"
    args = ["plan", str(EXAMPLE), "-o", "name", "--allocator", "reference", "--partitions", "2"]
    result = runner.invoke(app, [*args, "--executor", "local", "--report", str(page), "--compare"])
    assert "internal error" not in result.stderr, result.stderr
    assert result.exit_code == 2, result.stderr  # the example leaves one pod out
    assert "placed 2 of 3 pods (reference, status PARTITIONED" in result.stderr
    assert "first fit (same input)" in page.read_text()


def test_plan_hands_the_pipeline_the_options_it_was_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's values reach the pipeline as one Options (an error stops the run
    once they are seen: this test is about the request, not the plan)."""
    seen: list[Options] = []

    def plan_pods(cluster: object, *, options: Options, **_: object) -> None:
        seen.append(options)
        raise DRASolverError("seen")

    monkeypatch.setattr(cli_plan, "plan_pods", plan_pods)
    args = ["--strategy", "spread", "--time-limit", "2.5", "--seed", "7", "--partitions", "3"]
    gates = "DRAPartitionableDevices=true"
    args += ["--repair", "cpsat", "--executor", "inline", "--feature-gates", gates]
    result = runner.invoke(app, ["plan", str(EXAMPLE), *args])
    assert result.exit_code == 1 and "seen" in result.stderr, result.stderr
    [options] = seen
    asked = (options.allocator, options.strategy, options.time_limit, options.seed)
    assert asked == ("cpsat", "spread", 2.5, 7)
    assert (options.partitions, options.repair) == (3, "cpsat")
    assert options.feature_gates == FeatureGates.of(gates)
    assert options.executor is None  # inline


def test_no_input_is_a_usage_error_and_output_mode_full_needs_objects() -> None:
    with pytest.raises(UsageError, match="no input"):
        Inputs.of(None, [], None)
    assert Inputs.of(["a.yaml"], ["b.yaml"], "X=true") == Inputs(("a.yaml", "b.yaml"), "X=true")
    with pytest.raises(typer.BadParameter, match="--output-mode full needs -o yaml or -o json"):
        Output(OutputFormat.table, OutputMode.full)
