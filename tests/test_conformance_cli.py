"""Every conformance case through `dra-solver allocate`, with both allocators.

Checks the exit code contract (0 allocated, 2 unschedulable, 1 error) and the printed
`kind: List` of claims.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from conformance_cases import gates_arg, load_cases, normalise, per_request_counts, per_subrequest_counts
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.cli.main import app

CASES = load_cases()
runner = CliRunner()
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's safe dumper and loader where PyYAML has them: the same documents as PyYAML's
own safe ones (tests/test_load.py, tests/test_emit.py compare them), in a tenth of the time;
the file written and the list printed are the test's data, not what it tests."""


@functools.cache
def _objects_text(name: str) -> str:
    """The YAML of the case `name`'s objects: written once for both allocators."""
    case = next(c for c in CASES if c["name"] == name)
    return yaml.dump_all(case["objects"], Dumper=_DUMPER)


def _invoke(case: dict, allocator: str, tmp_path: Path):
    path = tmp_path / "objects.yaml"
    path.write_text(_objects_text(case["name"]))
    args = ["allocate", str(path), "--allocator", allocator]
    if case.get("node"):
        args += ["--node", case["node"]]
    if gates_arg(case):
        args += ["--feature-gates", gates_arg(case)]
    for name in case["allocate"]:
        args += ["--claim", name]
    return runner.invoke(app, args)


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance_case_cli(case: dict, allocator: str, tmp_path: Path) -> None:
    expect = case["expect"]
    result = _invoke(case, allocator, tmp_path)
    assert "Traceback" not in result.output
    if "error" in expect:
        assert result.exit_code == 1, result.output
        assert expect["error"] in result.stderr
        return
    if expect.get("fails"):
        assert result.exit_code in (1, 2), result.output
        return
    if expect.get("unschedulable"):
        assert result.exit_code == 2, result.output
        assert "cannot allocate" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    printed = {c["metadata"]["name"]: c for c in read_yaml(result.stdout)["items"]}
    assert list(printed) == case["allocate"]
    for claim_name, want in expect["results"].items():
        got = printed[claim_name]["status"]["allocation"]["devices"]["results"]
        if allocator == "reference" and not expect.get("any_valid"):
            assert normalise(got) == normalise(want)
        elif allocator == "cpsat" and not expect.get("any_valid"):
            assert per_subrequest_counts(got) == per_subrequest_counts(want)
        else:
            assert per_request_counts(got) == per_request_counts(want)
