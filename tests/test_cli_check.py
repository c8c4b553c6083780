"""`dra-solver check` and `dra_solver.check_cluster` (issue #27 §3): a plan's full output and a
raw dump pass; a hand-broken state exits 3 with one line naming the object and the rule; bad
input exits 1 with a one-line error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

import dra_solver
from dra_solver.api.cluster import Cluster
from dra_solver.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
BROKEN = ROOT / "docs" / "examples" / "check-broken.yaml"
runner = CliRunner()


def _plan_full(tmp_path: Path) -> Path:
    result = runner.invoke(app, ["plan", str(DUMP), "--output-mode", "full", "--seed", "1"])
    assert result.exit_code == 2, result.stderr  # one pod does not fit
    after = tmp_path / "after.yaml"
    after.write_text(result.stdout)
    return after


def test_the_cluster_after_a_plan_passes(tmp_path: Path) -> None:
    after = _plan_full(tmp_path)
    result = runner.invoke(app, ["check", str(after)])
    assert result.exit_code == 0, result.stdout
    assert result.stdout.startswith("ok: 7 allocated claims, 9 bound pods")


def test_the_raw_dump_passes() -> None:
    result = runner.invoke(app, ["check", str(DUMP)])
    assert result.exit_code == 0, result.stdout


def test_a_hand_broken_state_exits_3_naming_object_and_rule() -> None:
    result = runner.invoke(app, ["check", str(BROKEN)])
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert lines == [
        "[pod-node-taint] pod default/app: node node-a has taint dedicated=infra:NoSchedule "
        "that the pod does not tolerate",
        "[pod-claim-node] pod default/app: spec.resourceClaims entry 'gpu': ResourceClaim default/gpu "
        "is allocated for other nodes: its status.allocation.nodeSelector does not select node node-a",
    ]
    assert "2 violations" in result.stderr


def test_a_plan_output_moved_by_hand_is_caught(tmp_path: Path) -> None:
    """The plan's own output, one placed pod's nodeName edited: the device's node and the
    pod's disagree, and the control plane's taint is not tolerated."""
    after = _plan_full(tmp_path)
    doc = read_yaml(after.read_text())
    pod = next(o for o in doc["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer-1")
    pod["spec"]["nodeName"] = "control-plane-1"
    after.write_text(yaml.safe_dump(doc))
    result = runner.invoke(app, ["check", str(after)])
    assert result.exit_code == 3
    kinds = {line.split("]")[0][1:] for line in result.stdout.splitlines()}
    assert {"pod-node-taint", "pod-claim-node", "node-resources"} <= kinds
    assert all("ml-training/trainer-1" in line for line in result.stdout.splitlines())


def test_invalid_input_exits_1_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 3}\n")
    result = runner.invoke(app, ["check", str(bad)])
    # One object that cannot be read costs only itself (docs/semantics.md, "Messy clusters"):
    # a warning naming it, and the rest (here nothing) is audited.
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert "warning:" in result.stderr and "Pod p" in result.stderr and "spec.nodeName" in result.stderr
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("{not: [yaml\n")
    result = runner.invoke(app, ["check", str(garbage)])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    unknown = runner.invoke(app, ["check", str(BROKEN), "--feature-gates", "NoSuchGate=true"])
    assert unknown.exit_code == 1 and "NoSuchGate" in unknown.stderr


def test_check_cluster_is_public_and_does_not_modify_its_input() -> None:
    cluster = Cluster.from_paths([BROKEN])
    before = [o.model_dump() for o in (*cluster.pods.values(), *cluster.claims.values())]
    violations = dra_solver.check_cluster(cluster)
    assert [(v.kind, v.claim) for v in violations] == [
        ("pod-node-taint", "default/app"),
        ("pod-claim-node", "default/app"),
    ]
    assert isinstance(violations[0], dra_solver.Violation)
    assert [o.model_dump() for o in (*cluster.pods.values(), *cluster.claims.values())] == before


def test_a_list_attribute_match_needs_the_list_gate_in_the_checker_too(tmp_path: Path) -> None:
    """matchAttribute over a list-typed attribute (KEP-5491/KEP-6072) holds only with
    DRAListTypeAttributes: without the gate the list is absent, as the planners read it, so a
    plan made with the gate on breaks the constraint when checked with it off."""
    example = ROOT / "docs" / "examples" / "numa-list-alignment.yaml"
    gates = ["--feature-gates", "DRAListTypeAttributes=true"]
    result = runner.invoke(app, ["plan", str(example), *gates, "--output-mode", "full", "--seed", "1"])
    assert result.exit_code == 0, result.stderr
    after = tmp_path / "after.yaml"
    after.write_text(result.stdout)
    assert runner.invoke(app, ["check", str(after), *gates]).exit_code == 0
    off = runner.invoke(app, ["check", str(after)])
    assert off.exit_code == 3, off.stdout
    assert "[match]" in off.stdout and "does not have the attribute" in off.stdout
