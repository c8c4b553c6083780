"""`dra-solver validate`: exit codes, the summary line, error lines, never a traceback.

Why: the CLI is what users script against; exit 0/1 and the one-line-per-error format
(`file: Kind ns/name: field: reason`) are its contract.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from console_run import run_cli
from typer.testing import CliRunner

from dra_solver.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "gpu-cluster.yaml"

runner = CliRunner()

VALID = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
  - name: gpu-1
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""

INVALID = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, count: 0}
    - name: gpu
      exactly: {deviceClassName: missing}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def assert_no_traceback(output: str) -> None:
    assert "Traceback" not in output
    assert 'File "' not in output


def test_valid_file_exits_0_with_summary(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(write(tmp_path / "ok.yaml", VALID))])
    assert result.exit_code == 0, result.output
    assert "valid: 1 slice, 2 devices, 1 class, 1 claim" in result.stdout  # grammatical (issue #29)
    assert result.stdout.count("\n") == 1


def test_bundled_example_is_valid() -> None:
    result = runner.invoke(app, ["validate", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "4 slices, 13 devices, 2 classes, 3 claims" in result.stdout
    assert "2 nodes" in result.stdout


def test_invalid_file_exits_1_and_prints_every_error(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", INVALID)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines == [
        f"{path}: ResourceClaim default/c1: spec.devices.requests[0].exactly.count: "
        "must be at least 1 for allocationMode ExactCount, got 0",
        f"{path}: ResourceClaim default/c1: spec.devices.requests[1].name: duplicate request name 'gpu'",
        f"{path}: ResourceClaim default/c1: spec.devices.requests[0].exactly.deviceClassName: "
        "DeviceClass 'gpu.example.com' not found in the input",
        f"{path}: ResourceClaim default/c1: spec.devices.requests[1].exactly.deviceClassName: "
        "DeviceClass 'missing' not found in the input",
        "4 errors",
    ]
    assert result.stdout == ""


def test_errors_name_the_file_of_each_object(tmp_path: Path) -> None:
    good = write(tmp_path / "a.yaml", VALID)
    bad = write(tmp_path / "b.yaml", INVALID.replace("name: c1", "name: c2"))
    result = runner.invoke(app, ["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{bad}: ResourceClaim default/c2: spec.devices.requests[0].exactly.count" in result.stderr
    assert str(good) not in result.stderr


def test_directory_and_stdin(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    write(tmp_path / "d" / "all.yaml", VALID)
    result = runner.invoke(app, ["validate", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["validate", "-"], input=VALID)
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["validate", "-"], input=INVALID)
    assert result.exit_code == 1
    assert "<stdin>: ResourceClaim default/c1: spec.devices.requests[1].name" in result.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kind: DeviceClass\nmetadata: {name: [\n", "malformed YAML: line"),
        (
            VALID.replace("generation: 1", "generation: one"),
            "ResourceSlice node-1-gpu: spec.pool.generation: ",
        ),
        (
            VALID.replace("- name: gpu-1", "- name: gpu-1\n    capacity: {memory: {value: 10Gx}}"),
            "ResourceSlice node-1-gpu: spec.devices[1].capacity.memory.value: ",
        ),
        ("- a\n- b\n", "expected a Kubernetes object"),
    ],
    ids=["malformed-yaml", "wrong-type", "bad-quantity", "not-a-mapping"],
)
def test_load_errors_exit_1_without_traceback(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path / "in.yaml", text)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert_no_traceback(result.output)
    assert f"{path}: " in result.stderr
    assert expected in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_bad_quantity_message_names_the_value(tmp_path: Path) -> None:
    text = VALID.replace("- name: gpu-1", "- name: gpu-1\n    capacity: {memory: {value: 10Gx}}")
    result = runner.invoke(app, ["validate", str(write(tmp_path / "q.yaml", text))])
    assert "10Gx" in result.stderr


def test_missing_file_exits_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert_no_traceback(result.output)
    assert "no such file or directory" in result.stderr


def test_unknown_kind_warns_but_validates(tmp_path: Path) -> None:
    text = VALID + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"
    result = runner.invoke(app, ["validate", str(write(tmp_path / "m.yaml", text))])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "ConfigMap default/x" in result.stderr


def test_field_paths_with_brackets_are_printed_literally(tmp_path: Path) -> None:
    """Rich markup must not eat `[...]` in field paths."""
    text = VALID.replace("- name: gpu-1", "- name: gpu-1\n    attributes: {Bad_Domain/numa: {int: 0}}")
    result = runner.invoke(app, ["validate", str(write(tmp_path / "b.yaml", text))])
    assert result.exit_code == 1
    assert 'spec.devices[1].attributes["Bad_Domain/numa"]: ' in result.stderr


def test_no_arguments_shows_usage() -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code != 0
    assert_no_traceback(result.output)


def test_python_dash_m_solver() -> None:
    """`python -m solver validate` works like the console script."""
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "dra_solver", "validate", str(EXAMPLE)],
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=600,  # a guard against a hang, not a measurement
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "valid:" in proc.stdout


def test_usage_errors_exit_1_not_2_through_the_console_entry_point(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Exit 2 means "cannot be allocated"; a bad option is invalid input (exit 1). `run()` in
    this process (`console_run`; the console script `entry` runs it as it is without
    `--timeout`): what it does with click's usage error is the point, not the interpreter;
    `python -m dra_solver` runs in a process above."""
    done = run_cli(capsys, "allocate", "x.yaml", "--allocator", "bogus")
    assert done.returncode == 1
    assert "bogus" in done.stderr and "Traceback" not in done.stderr


def test_loading_freezes_a_large_input_out_of_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`load_valid` runs without the cyclic collector and puts it back as it was; an input of
    `FREEZE_AT` objects or more is frozen out of it (`gc.freeze`), a smaller one is not."""
    import gc

    from dra_solver.cli import inputs

    path = tmp_path / "c.yaml"
    path.write_text(VALID)
    before = gc.get_freeze_count()
    try:
        loaded = inputs.load_valid(inputs.Inputs((str(path),)))
        assert len(loaded.cluster.sources) > 1 and gc.isenabled()
        assert gc.get_freeze_count() == before
        monkeypatch.setattr(inputs, "FREEZE_AT", len(loaded.cluster.sources))
        inputs.load_valid(inputs.Inputs((str(path),)))
        assert gc.get_freeze_count() > before and gc.isenabled()
        gc.disable()
        inputs.load_valid(inputs.Inputs((str(path),)))
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
