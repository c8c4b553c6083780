"""`dra-solver plan --preempt --allow-moves` and `explain --preempt --allow-moves` through the
command line (docs/semantics.md, "Preemption", "Moves"): the moved Pods in the output, the
full output accepted by `dra-solver check`, the table row, the one-line usage error."""

from __future__ import annotations

from pathlib import Path

import yaml
from preempt_cases import Pending, Running, cluster_docs
from typer.testing import CliRunner

from dra_solver.api.cluster import Cluster
from dra_solver.check import check_cluster
from dra_solver.cli.main import app

runner = CliRunner()


def _input(tmp_path: Path) -> str:
    """Two 1-GPU pods of ReplicaSet web on n2; the 8-GPU job needs an empty node."""
    docs = cluster_docs(
        {"n0": 8, "n1": 8, "n2": 8},
        [
            Running("big0", "n0", 1000, (0, 1, 2, 3)),
            Running("big1", "n1", 1000, (0, 1, 2, 3)),
            Running("a", "n2", 0, (0,), {"app": "web"}, owner="web"),
            Running("b", "n2", 0, (1,), {"app": "web"}, owner="web"),
        ],
        [Pending("train", 100, 8)],
    )
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_allow_moves_prints_each_moved_pod_on_its_new_node_with_new_claims(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path), "--preempt", "--allow-moves"])
    assert result.exit_code == 0, result.stderr
    items = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load(result.stdout)["items"]}
    assert items[("Pod", "train")]["spec"]["nodeName"] == "n2"
    for name in ("a", "b"):
        pod = items[("Pod", name)]
        assert pod["spec"]["nodeName"] in ("n0", "n1")
        assert pod["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": f"{name}-gpu-moved"}
        ]
        new = items[("ResourceClaim", f"{name}-gpu-moved")]
        assert new["status"]["allocation"]["devices"]["results"][0]["pool"] == pod["spec"]["nodeName"]
        assert "allocation" not in (items[("ResourceClaim", f"{name}-gpu")].get("status") or {})
        assert not any(c.get("type") == "DisruptionTarget" for c in pod["status"].get("conditions", []))
    assert "evicts no pods, moves 2 pods (0 PDB violations)" in result.stderr
    assert "default/a: moved from n2 to n" in result.stderr


def test_allow_moves_full_output_passes_dra_solver_check(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["plan", _input(tmp_path), "--preempt", "--allow-moves", "--output-mode", "full"]
    )
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "after.yaml"
    out.write_text(result.stdout)
    after = Cluster.from_objects(yaml.safe_load(result.stdout)["items"])
    assert after.pods[("default", "a")].spec.node_name in ("n0", "n1")
    assert after.pods[("default", "train")].spec.node_name == "n2"
    assert check_cluster(after) == []
    checked = runner.invoke(app, ["check", str(out)])
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert "every rule holds" in checked.stdout


def test_allow_moves_table_has_a_row_per_moved_pod(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path), "--preempt", "--allow-moves", "-o", "table"])
    assert result.exit_code == 0, result.stderr
    assert "n2 → n" in result.stdout and "moved for default/train (priority 100 > 0)" in result.stdout
    assert "evicts no pods, moves 2 pods" in result.stdout


def test_allow_moves_without_preempt_is_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", _input(tmp_path), "--allow-moves"])
    assert result.exit_code != 0
    assert "--allow-moves needs --preempt" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    explained = runner.invoke(app, ["explain", _input(tmp_path), "--pod", "a", "--allow-moves"])
    assert explained.exit_code == 1 and "--allow-moves needs --preempt" in explained.stderr


def test_explain_says_why_a_pod_moved(tmp_path: Path) -> None:
    path = _input(tmp_path)
    moved = runner.invoke(app, ["explain", path, "--pod", "a", "--preempt", "--allow-moves"])
    assert moved.exit_code == 0, moved.stderr
    assert moved.stdout.startswith("default/a: moved from n2 to n")
    assert "for default/train (priority 100 > 0)" in moved.stdout
    placed = runner.invoke(app, ["explain", path, "--pod", "train", "--preempt", "--allow-moves"])
    assert "default/train: placed on n2, evicting no pod for it, moving default/a to n" in placed.stdout
    evicted = runner.invoke(app, ["explain", path, "--pod", "a", "--preempt"])
    assert evicted.stdout.startswith("default/a: evicted from n2")
