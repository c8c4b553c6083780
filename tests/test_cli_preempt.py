"""`dra-solver plan --preempt` through the command line (docs/semantics.md, "Preemption")."""

from __future__ import annotations

from pathlib import Path

import yaml
from preempt_cases import Pending, Running, cluster_docs, pdb
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.api.cluster import Cluster
from dra_solver.check import check_cluster
from dra_solver.cli.main import app

runner = CliRunner()


def _input(tmp_path: Path) -> str:
    docs = cluster_docs(
        {"n1": 2, "n2": 2},
        [
            Running("a", "n1", 10, (0, 1)),
            Running("b", "n2", 5, (0,), {"app": "web"}),
            Running("c", "n2", 1, (1,)),
        ],
        [Pending("p", 100, 2)],
        [pdb("web", {"app": "web"}, allowed=0)],
    )
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_preempt_prints_the_evicted_pod_and_its_released_claim(tmp_path: Path) -> None:
    """b is under a budget that allows nothing: a (priority 10) goes rather than b and c."""
    result = runner.invoke(app, ["plan", _input(tmp_path), "--preempt"])
    assert result.exit_code == 0, result.stderr
    items = {(o["kind"], o["metadata"]["name"]): o for o in read_yaml(result.stdout)["items"]}
    assert items[("Pod", "p")]["spec"]["nodeName"] == "n1"
    condition = items[("Pod", "a")]["status"]["conditions"][-1]
    assert condition["type"] == "DisruptionTarget" and condition["reason"] == "PreemptionByScheduler"
    assert "allocation" not in (items[("ResourceClaim", "a-gpu")].get("status") or {})
    assert "evicts 1 pod (highest priority 10, 0 PDB violations)" in result.stderr
    assert "default/a: evicted from n1 for default/p (priority 100 > 10)" in result.stderr


def test_preempt_full_output_is_a_cluster_the_checker_accepts(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path), "--preempt", "--output-mode", "full"])
    assert result.exit_code == 0, result.stderr
    after = Cluster.from_objects(read_yaml(result.stdout)["items"])
    assert ("default", "a") not in after.pods
    assert check_cluster(after) == []


def test_without_preempt_nothing_is_evicted(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path)])
    assert result.exit_code == 2
    assert "evicts" not in result.stderr


def test_preempt_refuses_fill(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path), "--preempt", "--fill", "p"])
    assert result.exit_code == 1
    assert "--preempt cannot be combined" in result.stderr


def test_explain_preempt_says_why_a_pod_is_evicted_or_stays(tmp_path: Path) -> None:
    path = _input(tmp_path)
    evicted = runner.invoke(app, ["explain", path, "--pod", "a", "--preempt"])
    assert evicted.exit_code == 0, evicted.stderr
    assert evicted.stdout.startswith("default/a: evicted from n1 for default/p (priority 100 > 10)")
    stays = runner.invoke(app, ["explain", path, "--pod", "b", "--preempt"])
    assert "default/b: stays on n2: pending pods of higher priority may preempt it" in stays.stdout
    placed = runner.invoke(app, ["explain", path, "--pod", "p", "--preempt"])
    assert "default/p: placed on n1, evicting default/a" in placed.stdout


def test_explain_preempt_needs_a_pod(tmp_path: Path) -> None:
    result = runner.invoke(app, ["explain", _input(tmp_path), "--claim", "p-gpu", "--preempt"])
    assert result.exit_code == 1 and "--preempt explains a pod" in result.stderr


def test_a_pdb_matching_nothing_is_one_clear_warning_line(tmp_path: Path) -> None:
    docs = cluster_docs(
        {"n1": 1},
        [Running("a", "n1", 1, (0,))],
        [Pending("p", 100, 1)],
        [pdb("x", {"app": "none"}, allowed=0)],
    )
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = runner.invoke(app, ["plan", str(path), "--preempt"])
    assert result.exit_code == 0, result.stderr
    assert "PodDisruptionBudget default/x: spec.selector matches no pod of the input" in result.stderr
    assert "Traceback" not in result.stderr
