"""Issue #29, "Nothing ignored in silence" and "Output a script and a cluster can use": what the
CLI says on stderr and writes on stdout, read as a user reads it (end to end, from the files
in docs/examples where they show the case)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from dra_solver.cli import app

ROOT = Path(__file__).resolve().parents[1]
GPU = str(ROOT / "docs" / "examples" / "gpu-cluster.yaml")
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
runner = CliRunner()
WIDE = {"COLUMNS": "200"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed program as a user runs it (the console script's `run()`, not `app`)."""
    return subprocess.run(
        [sys.executable, "-m", "dra_solver", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


# --- 3. invalid numeric options are usage errors --------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["plan", GPU, "--time-limit", "0"], "--time-limit"),
        (["allocate", GPU, "--time-limit", "-5"], "--time-limit"),
        (["plan", GPU, "--seed", "-1"], "--seed"),
        (["plan", GPU, "--workers", "0"], "--workers"),
        (["plan", GPU, "--max-new-nodes", "-1"], "--max-new-nodes"),
    ],
)
def test_an_invalid_number_is_a_one_line_usage_error(args: list[str], option: str) -> None:
    done = _cli(*args)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert option in lines[0] and f"dra-solver {args[0]} --help" in lines[0]
    assert "internal error" not in done.stderr and "bug" not in done.stderr
    assert "planning" not in done.stderr


# --- 4. a placed pod's status is true to its binding ----------------------------------------


def test_a_placed_pod_loses_its_stale_unschedulable_condition() -> None:
    """cluster-dump.yaml's pending pods carry `PodScheduled=False / Unschedulable` from the
    scheduler's last attempt; once the plan binds them, the binding's `PodScheduled=True` replaces it."""
    result = runner.invoke(app, ["plan", DUMP], env=WIDE)
    assert result.exit_code == 2, result.output
    pods = [o for o in yaml.safe_load(result.stdout)["items"] if o["kind"] == "Pod"]
    placed = [p for p in pods if p["spec"].get("nodeName")]
    assert placed and len(placed) < len(pods)
    for p in pods:
        scheduled = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert len(scheduled) == 1, p["metadata"]["name"]
        if p["spec"].get("nodeName"):
            assert scheduled[0] == {"type": "PodScheduled", "status": "True"}
        else:
            assert (scheduled[0]["status"], scheduled[0]["reason"]) == ("False", "Unschedulable")


# --- 1. a field whose feature gate is off is a warning, not a silent omission ---------------

IGNORED = (
    "warning: derivedAttributes of claim default/gpu-with-nic ignored: feature gate "
    "DRADerivedAttributes is off (--feature-gates DRADerivedAttributes=true)"
)


@pytest.mark.parametrize(
    "args",
    [
        ["validate", GPU],
        ["plan", GPU],
        ["allocate", GPU, "--any-node", "--claim", "gpu-with-nic"],
    ],
)
def test_derived_attributes_with_their_gate_off_are_a_warning(args: list[str]) -> None:
    result = runner.invoke(app, args, env=WIDE)
    assert result.stderr.splitlines().count(IGNORED) == 1, result.stderr
    on = runner.invoke(app, [*args, "--feature-gates", "DRADerivedAttributes=true"], env=WIDE)
    assert on.exit_code == 0, on.output
    assert "derivedAttributes" not in on.stderr


def test_every_gate_says_what_it_does_to_fields() -> None:
    """One table (`api.gated.GATED`) for the ignored fields; a new gate must be added to it, or
    be listed as refusing its fields or as changing only how they are read."""
    from dra_solver.api.gated import all_gates, gates_covered

    assert gates_covered() == all_gates()


def test_a_slice_field_of_two_gates_names_both(tmp_path: Path) -> None:
    """bindingConditions need DRADeviceBindingConditions and DRAResourceClaimDeviceStatus."""
    docs = list(yaml.safe_load_all(Path(GPU).read_text()))
    for d in docs:
        if d["kind"] == "ResourceSlice":
            for dev in d["spec"]["devices"]:
                dev["bindingConditions"] = ["ready"]
                dev["bindingFailureConditions"] = ["failed"]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    gates = "DRADeviceBindingConditions=false,DRAResourceClaimDeviceStatus=false,DRADerivedAttributes=true"
    result = runner.invoke(app, ["validate", str(path), "--feature-gates", gates], env=WIDE)
    assert result.exit_code == 0, result.output
    assert (
        "warning: devices with bindingConditions in ResourceSlices node-1-gpu.example.com, "
        "node-1-nic.example.com, node-2-gpu.example.com and 1 more not used: feature gates "
        "DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are off (--feature-gates "
        "DRADeviceBindingConditions=true,DRAResourceClaimDeviceStatus=true)"
    ) in result.stderr.splitlines()
