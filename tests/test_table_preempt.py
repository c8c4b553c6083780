"""`plan --preempt -o table`: the evicted pods are rows of the pods table, the nodes table
counts them, and the summary line says as many as there are rows (solver/output/table.py)."""

from __future__ import annotations

from pathlib import Path

import yaml
from preempt_cases import Pending, Running, cluster_docs, pdb
from typer.testing import CliRunner

from dra_solver.cli.main import app

runner = CliRunner()
WIDE = {"COLUMNS": "250"}


def _plan(tmp_path: Path, docs: list[dict[str, object]], *flags: str) -> tuple[str, str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = runner.invoke(app, ["plan", str(path), "--preempt", *flags], env=WIDE)
    assert result.exit_code == 0, result.stderr
    return result.stdout, result.stderr


def _rows(stdout: str, pod: str) -> list[list[str]]:
    """The cells of the table rows that start with `pod`."""
    rows = [[c.strip() for c in line.strip("│ ").split("│")] for line in stdout.splitlines() if "│" in line]
    return [r for r in rows if r and r[0] == pod]


def _three_victims() -> list[dict[str, object]]:
    return cluster_docs(
        {"n1": 2, "n2": 1},
        [
            Running("a", "n1", 1, (0,)),
            Running("b", "n1", 2, (1,)),
            Running("c", "n2", 3, (0,), {"app": "web"}),
        ],
        [Pending("p", 100, 2), Pending("q", 50, 1)],
        [pdb("web", {"app": "web"}, allowed=0)],
    )


def test_each_evicted_pod_is_a_row_with_its_node_and_preemptor(tmp_path: Path) -> None:
    stdout, _ = _plan(tmp_path, _three_victims(), "-o", "table")
    (a,) = _rows(stdout, "default/a")
    assert a[1] == "n1"
    assert a[2] == "evicted for default/p (priority 100 > 1); releases a-gpu"
    (b,) = _rows(stdout, "default/b")
    assert b[2] == "evicted for default/p (priority 100 > 2); releases b-gpu"


def test_the_summary_counts_the_evicted_rows(tmp_path: Path) -> None:
    stdout, stderr = _plan(tmp_path, _three_victims(), "-o", "table")
    evicted = [line for line in stdout.splitlines() if "evicted for " in line]
    assert "evicts 3 pods (highest priority 3, 1 PDB violation)" in stdout
    assert len(evicted) == 3
    assert "evicts 3 pods (highest priority 3, 1 PDB violation)" in stderr


def test_the_nodes_table_counts_the_evictions_per_node(tmp_path: Path) -> None:
    stdout, _ = _plan(tmp_path, _three_victims(), "-o", "table")
    assert "pods evicted" in stdout
    (n1,) = _rows(stdout, "n1")
    (n2,) = _rows(stdout, "n2")
    assert (n1[1], n1[2]) == ("1", "2")  # p placed, a and b evicted
    assert (n2[1], n2[2]) == ("1", "1")  # q placed, c evicted


def test_wide_adds_the_victims_priority(tmp_path: Path) -> None:
    stdout, _ = _plan(tmp_path, _three_victims(), "-o", "wide")
    (c,) = _rows(stdout, "default/c")
    assert c[1:3] == ["3", "n2"]
    assert c[3].startswith("evicted for default/q (priority 50 > 3)")


def test_a_claim_still_used_by_a_pod_that_stays_is_left_to_it(tmp_path: Path) -> None:
    """a goes for its cpu; the GPU claim it shares with b stays allocated, reserved for b."""
    docs = cluster_docs(
        {"n1": 1},
        [Running("a", "n1", 1, (0,), claim="shared", cpu="4"), Running("b", "n1", 200, (0,), claim="shared")],
        [Pending("p", 100, 0, cpu="7")],
    )
    stdout, _ = _plan(tmp_path, docs, "-o", "table")
    (a,) = _rows(stdout, "default/a")
    assert a[2] == "evicted for default/p (priority 100 > 1); leaves shared to default/b"


def test_a_plan_that_evicts_nothing_has_no_evicted_rows(tmp_path: Path) -> None:
    docs = cluster_docs({"n1": 2}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    stdout, stderr = _plan(tmp_path, docs, "-o", "table")
    assert "evicted for" not in stdout
    assert "evicts no pods" in stdout and "evicts no pods" in stderr
    (n1,) = _rows(stdout, "n1")
    assert n1[2] == "0"
