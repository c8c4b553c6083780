"""The commands on a live cluster (issue #32): `--kubeconfig`, `--context`, `--live`.

The answer must equal the one on a dump of the same objects: `plan --kubeconfig K FILE` prints
what `plan DUMP FILE` prints, for every namespace choice, and `validate`, `check` and `explain`
likewise. The cluster is the in-process fake API server of `tests/fake_apiserver.py`, reached
through the real `kubernetes` client (required under CI, where it is in `[test]`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dra_solver.cli.main import app
from tests.fake_apiserver import FakeApiServer, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
runner = CliRunner()

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: probe, namespace: ml-training}
spec:
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: two-a100-same-pcie-root}
      containers:
      - name: c
        image: busybox
        resources:
          requests: {cpu: "1", memory: 1Gi}
          claims: [{name: gpus}]
"""


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


@pytest.fixture
def fake(tmp_path: Path) -> Any:
    items = dump_items()
    with serving(FakeApiServer(items)) as server:
        server.kubeconfig(tmp_path)
        yield server
    assert server.requests and {r.method for r in server.requests} == {"GET"}


def _same(live_args: list[str], file_args: list[str]) -> Any:
    """Run both; the exit codes and stdout must be equal; returns the live run."""
    on_live = runner.invoke(app, live_args)
    on_file = runner.invoke(app, file_args)
    assert on_live.exit_code == on_file.exit_code, (on_live.stderr, on_file.stderr)
    # The table's summary line has the search's wall clock, the one part that may differ.
    assert _no_clock(on_live.stdout) == _no_clock(on_file.stdout)
    assert "Traceback" not in on_live.stderr
    return on_live


def _no_clock(text: str) -> str:
    return re.sub(r"planned in [0-9.]+ s", "planned in - s", text)


def _summary(stderr: str) -> str:
    """The plan's summary line without its wall clock."""
    line = [x for x in stderr.splitlines() if x.startswith("placed ")][-1]
    return re.sub(r", planned in [0-9.]+ s$", "", line)


def test_plan_on_a_live_cluster_equals_plan_on_its_dump(fake: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")
    for extra in ([], ["-o", "table"], ["--output-mode", "full"], ["--allocator", "reference"]):
        on_live = _same(["plan", "--kubeconfig", kubeconfig, *extra], ["plan", str(DUMP), *extra])
        assert on_live.exit_code == 2
    assert _summary(on_live.stderr).startswith("placed 7 of 8 pods")


def test_files_add_objects_to_the_live_state(fake: FakeApiServer, tmp_path: Path) -> None:
    """ "Would this job fit now, and where?": the live state plus a FILE is the dump plus it."""
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    kubeconfig = str(tmp_path / "kubeconfig")
    on_live = _same(["plan", "--kubeconfig", kubeconfig, str(job)], ["plan", str(DUMP), str(job)])
    assert "ml-training/probe-0" in on_live.stderr
    assert _summary(on_live.stderr).startswith("placed 7 of 9 pods")


@pytest.mark.parametrize("namespace", [["-n", "ml-training"], ["-n", "gpu-test1"], ["-A"], ["-n", "nope"]])
def test_namespaces_choose_the_pods_capacity_is_cluster_wide(
    fake: FakeApiServer, tmp_path: Path, namespace: list[str]
) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")
    _same(["plan", "--kubeconfig", kubeconfig, *namespace], ["plan", str(DUMP), *namespace])
    assert not any("/namespaces/" in r.path for r in fake.requests)


def test_validate_check_and_explain_read_the_live_cluster(fake: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")
    on_live = _same(["validate", "--kubeconfig", kubeconfig], ["validate", str(DUMP)])
    assert on_live.exit_code == 0 and on_live.stdout.startswith("valid: 3 slices")
    _same(["check", "--kubeconfig", kubeconfig], ["check", str(DUMP)])
    pod = ["--pod", "ml-training/trainer-3"]
    on_live = _same(["explain", "--kubeconfig", kubeconfig, *pod], ["explain", str(DUMP), *pod])
    assert "trainer-3" in on_live.stdout


def test_live_resolves_the_config_as_kubectl_does(
    fake: FakeApiServer, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    _same(["validate", "--live"], ["validate", str(DUMP)])
    _same(["validate", "--context", "other"], ["validate", str(DUMP)])  # --context implies --live


def test_errors_are_one_line_and_exit_1(tmp_path: Path) -> None:
    items = dump_items()
    fake = FakeApiServer(items, errors={"resourceclaims": 403})
    with serving(fake):
        kubeconfig = str(fake.kubeconfig(tmp_path))
        result = runner.invoke(app, ["plan", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("context fake: cannot list resourceclaims.resource.k8s.io (403 Forbidden: ")
    assert lines[0].endswith(
        '{apiGroups: ["resource.k8s.io"], resources: ["resourceclaims"], verbs: ["get", "list"]}'
    )
    assert lines[1:] == []  # one error: its line, no count
    assert {r.method for r in fake.requests} == {"GET"}
    # Nothing listens on the fake's port any more.
    result = runner.invoke(app, ["validate", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"cannot reach the API server {fake.url} (context fake): ")
    result = runner.invoke(app, ["validate", "--kubeconfig", kubeconfig, "--context", "nope"])
    assert result.exit_code == 1 and "--context nope: not in" in result.stderr


def test_without_any_input_it_is_still_a_usage_error() -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code != 0 and "no input" in result.stderr


def test_no_progress_line_when_stderr_is_not_a_terminal(fake: FakeApiServer, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", "--kubeconfig", str(tmp_path / "kubeconfig")])
    assert result.exit_code == 0
    assert "read " not in result.stderr and result.stderr == ""


def test_on_a_terminal_stderr_says_what_was_read(
    fake: FakeApiServer, tmp_path: Path, monkeypatch: Any
) -> None:
    import io

    from rich.console import Console

    from dra_solver.api.live import Target
    from dra_solver.cli import inputs

    buffer = io.StringIO()
    monkeypatch.setattr(inputs, "err", Console(file=buffer, force_terminal=True, width=300))
    got = inputs.read_live(Target(kubeconfig=str(tmp_path / "kubeconfig")))
    assert got.counts["Pod"] == 10
    last = buffer.getvalue().rstrip().splitlines()[-1]
    assert re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", last) == (
        f"read context fake ({fake.url}): 5 Nodes, 3 DeviceClasses, 3 ResourceSlices, "
        "3 ResourceClaimTemplates, 8 ResourceClaims, 10 Pods"
    )


@pytest.mark.parametrize("command", ["validate", "plan", "explain", "check", "dump"])
def test_the_kubeconfig_help_names_the_live_extra(command: str) -> None:
    """`[live]` is rich markup to the help's renderer: escaped, it is printed."""
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"})
    (line,) = [x for x in result.stdout.splitlines() if x.lstrip("│ ").startswith("--kubeconfig")]
    assert "needs the dra-solver[live] extra" in line and "\\[" not in line
