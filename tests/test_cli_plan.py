"""`dra-solver plan`: pods over nodes through the command line."""

from __future__ import annotations

from pathlib import Path

import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner

from dra_solver.cli import app

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
    items = yaml.safe_load(result.stdout)["items"]
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
