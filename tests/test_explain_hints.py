"""Every `dra-solver explain` command the tool suggests runs on the input it was suggested for.

Why: a hint that fails is worse than none — `plan` once suggested `explain --pod NAME` for a
plan of plain claims (no Pod objects), where explain answered "Pod default/c92 not found", and
`--fill` suggested it for replicas that are not in the input (issue #29). Here every hint is
read off the output as a user reads it and run as a user would: exit 0 (an explanation) or 2,
never 1 (invalid input: the hint named something that is not there).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner

from dra_solver.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.yaml"))
HINT = re.compile(r"\(details: dra-solver explain ([^)`]*?)(?:, the pod it copies)?\)")
TEMPLATE = re.compile(r"`dra-solver explain (--\w+) NAME` for each")

runner = CliRunner()


def _claims_only(tmp_path: Path) -> str:
    """A plan of plain claims in two namespaces, most of them left out: one GPU for six claims."""
    teams = [claim(f"t{i}", [request("gpu")]) for i in range(3)]
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        *(claim(f"c{i}", [request("gpu")]) for i in range(3)),
        *({**c, "metadata": {**c["metadata"], "namespace": "team"}} for c in teams),
    ]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def _hints(stderr: str) -> list[list[str]]:
    found = [shlex.split(m.group(1)) for m in HINT.finditer(stderr)]
    assert all(args and args[0] in ("--pod", "--claim") for args in found), found
    return found


def _run_each(path: str, hints: list[list[str]]) -> None:
    for args in hints:
        result = runner.invoke(app, ["explain", path, *args])
        assert result.exit_code in (0, 2), (args, result.stdout, result.stderr)
        assert "not found" not in result.stderr


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_hint_of_a_docs_example_plan_runs(example: Path) -> None:
    result = runner.invoke(app, ["plan", str(example)])
    if result.exit_code == 1:  # an example of invalid input (check's broken cluster): no plan
        assert "dra-solver explain" not in result.stderr
        return
    hints = _hints(result.stderr)
    assert bool(hints) == (result.exit_code == 2), result.stderr  # every pod left out has one
    _run_each(str(example), hints)


def test_a_plan_of_plain_claims_suggests_explain_claim_and_it_runs(tmp_path: Path) -> None:
    path = _claims_only(tmp_path)
    result = runner.invoke(app, ["plan", path, "--allocator", "reference"])
    assert result.exit_code == 2
    hints = _hints(result.stderr)
    assert ["--claim", "default/c1"] in hints and ["--claim", "team/t2"] in hints
    assert not any("--pod" in args for args in hints)
    _run_each(path, hints)


def test_the_count_line_of_many_plain_claims_names_the_claim_flag(tmp_path: Path) -> None:
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0")], node="node-a"),
        *(claim(f"c{i:02d}", [request("gpu")]) for i in range(13)),
    ]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    result = runner.invoke(app, ["plan", str(path), "--allocator", "reference"])
    assert TEMPLATE.findall(result.stderr) == ["--claim"]
    _run_each(str(path), [["--claim", "c12"]])  # what the template stands for, filled in


def test_fill_hints_name_the_pod_the_replicas_copy_and_they_run() -> None:
    path = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
    result = runner.invoke(app, ["plan", path, "--fill", "ml-training/trainer-3"])
    assert result.exit_code == 0, result.stderr
    assert "trainer-3-fill-1: not placed" in result.stderr
    hints = _hints(result.stderr)
    assert hints and all(args == ["--pod", "ml-training/trainer-3"] for args in hints)
    assert "explain --pod ml-training/trainer-3, the pod it copies)" in result.stderr
    _run_each(path, hints[:1])


def test_allocate_hints_run(tmp_path: Path) -> None:
    path = _claims_only(tmp_path)
    result = runner.invoke(app, ["allocate", path, "--claim", "c0", "--claim", "c1", "--node", "node-a"])
    assert result.exit_code == 2
    hints = _hints(result.stderr)
    assert hints == [["--claim", "default/c0", "--claim", "default/c1"]]
    _run_each(path, hints)
