"""Issue #29, "Nothing ignored in silence" and "Output a script and a cluster can use": what the
CLI says on stderr and writes on stdout, read as a user reads it (end to end, from the files
in docs/examples where they show the case)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from console_run import run_cli
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
GPU = str(ROOT / "docs" / "examples" / "gpu-cluster.yaml")
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
runner = CliRunner()
WIDE = {"COLUMNS": "200"}


# --- 3. invalid numeric options are usage errors --------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["plan", GPU, "--time-limit", "0"], "--time-limit"),
        (["allocate", GPU, "--time-limit", "-5"], "--time-limit"),
        (["plan", GPU, "--seed", "-1"], "--seed"),
        (["plan", GPU, "--workers", "0"], "--workers"),
        (["plan", GPU, "--max-new-nodes", "-1"], "--max-new-nodes"),
        (["plan", GPU, "--timeout", "soon"], "--timeout"),
        (["plan", GPU, "--timeout", "0s"], "--timeout"),
    ],
)
def test_an_invalid_number_is_a_one_line_usage_error(
    args: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run_cli(capsys, *args)
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
    pods = [o for o in read_yaml(result.stdout)["items"] if o["kind"] == "Pod"]
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


# --- 2. Namespaces are read: the admin-access rule ------------------------------------------

ADMIN_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "monitor", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "adminAccess": True}}
            ]
        }
    },
}


def _namespace(labels: dict[str, str] | None = None) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": labels or {}}}


def _files(tmp_path: Path, *objects: dict[str, object]) -> list[str]:
    path = tmp_path / "more.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return [GPU, str(path), "--feature-gates", "DRADerivedAttributes=true"]


def test_admin_access_in_a_namespace_without_the_label_is_refused(tmp_path: Path) -> None:
    """`validate` refuses the input; `plan` refuses the claim only (docs/semantics.md, "Messy
    clusters"): it is listed not placed, with the rule as its reason, and exit 2."""
    words = (
        "ResourceClaim default/monitor: spec.devices.requests[0].exactly.adminAccess: admin access to "
        "devices requires the `resource.kubernetes.io/admin-access: true` label on the containing "
        "namespace (Namespace default does not have it)"
    )
    for command, code in (("validate", 1), ("plan", 2)):
        result = runner.invoke(app, [command, *_files(tmp_path, ADMIN_CLAIM, _namespace())], env=WIDE)
        assert result.exit_code == code, result.output
        assert words in " ".join(result.stderr.split())
        assert "Traceback" not in result.output
    plan_ = runner.invoke(app, ["plan", *_files(tmp_path, ADMIN_CLAIM, _namespace()), "-o", "name"], env=WIDE)
    assert "default/monitor: not placed: ResourceClaim default/monitor is not valid: " in plan_.stderr


def test_admin_access_in_a_labelled_namespace_is_planned_and_the_namespace_kept(tmp_path: Path) -> None:
    labelled = _namespace({"resource.kubernetes.io/admin-access": "true"})
    valid = runner.invoke(app, ["validate", *_files(tmp_path, ADMIN_CLAIM, labelled)], env=WIDE)
    assert valid.exit_code == 0, valid.output
    assert "1 namespace" in valid.stdout and "warning" not in valid.stderr
    full = runner.invoke(app, ["plan", *_files(tmp_path, ADMIN_CLAIM, labelled), "--output-mode", "full"])
    assert full.exit_code == 0, full.output
    items = read_yaml(full.stdout)["items"]
    assert [i["metadata"]["labels"] for i in items if i["kind"] == "Namespace"] == [
        {"resource.kubernetes.io/admin-access": "true"}
    ]
    again = tmp_path / "after.yaml"
    again.write_text(full.stdout)
    assert (
        runner.invoke(app, ["check", str(again), "--feature-gates", "DRADerivedAttributes=true"]).exit_code
        == 0
    )


def test_admin_access_without_namespaces_in_the_input_is_a_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", *_files(tmp_path, ADMIN_CLAIM)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert (
        "warning: adminAccess of claim default/monitor not checked against the namespace rule: no "
        "Namespace objects in the input (the API server requires the label "
        'resource.kubernetes.io/admin-access: "true" on the namespace; add `kubectl get namespaces '
        "-o yaml` to the input to check it)"
    ) in result.stderr.splitlines()


# --- 5. the plan's own facts on stdout, machine-readable -----------------------------------


def test_the_plan_says_its_numbers_and_reasons_on_the_list(tmp_path: Path) -> None:
    """A script reads status, objective, bound, gap, first fit and why each pod is not placed
    from the List's annotations (-o json), never from stderr; the same run's stderr summary agrees."""
    import json

    result = runner.invoke(app, ["plan", DUMP, "-o", "json", "--output-mode", "full"], env=WIDE)
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"apiVersion", "kind", "metadata", "items"} and set(doc["metadata"]) == {"annotations"}
    notes = doc["metadata"]["annotations"]
    facts = {k.removeprefix("dra-solver.io/"): v for k, v in notes.items()}
    assert facts["placed"] == "7" and facts["pods"] == "8" and facts["allocator"] == "cpsat"
    assert facts["status"] == "OPTIMAL" and facts["gap"] == "0"
    summary = result.stderr.strip().splitlines()[-1]
    for key in ("objective", "bound", "gap"):
        assert f"{key} {facts[key]}" in summary
    assert f"first fit placed {facts['first-fit-placed']}" in summary
    reasons = json.loads(facts["not-placed"])
    assert (
        list(reasons) == ["ml-training/trainer-3"] and "Insufficient cpu" in reasons["ml-training/trainer-3"]
    )
    # Fed back as input, the annotated List is read like any other (its items only).
    after = tmp_path / "after.json"
    after.write_text(result.stdout)
    again = runner.invoke(app, ["plan", str(after), "-o", "yaml"], env=WIDE)
    assert again.exit_code == 2, again.output
    assert read_yaml(again.stdout)["metadata"]["annotations"]["dra-solver.io/pods"] == "1"
    # Deterministic: no wall clock in the output.
    assert runner.invoke(app, ["plan", DUMP, "-o", "json", "--output-mode", "full"]).stdout == result.stdout


def test_allocate_says_whether_and_where_on_the_list() -> None:
    result = runner.invoke(app, ["allocate", GPU, "--any-node", "--claim", "two-gpus"], env=WIDE)
    assert result.exit_code == 0, result.output
    notes = read_yaml(result.stdout)["metadata"]["annotations"]
    assert notes == {
        "dra-solver.io/allocator": "cpsat",
        "dra-solver.io/allocated": "true",
        "dra-solver.io/node": "node-1",
    }


# --- 7. summaries say what they count --------------------------------------------------------


def test_fill_counts_replicas_of_the_pod() -> None:
    result = runner.invoke(app, ["plan", DUMP, "--fill", "ml-training/trainer-3"], env=WIDE)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[-2].startswith("placed 0 of 8 replicas of ml-training/trainer-3 (cpsat")
    assert lines[-1] == "fill: no more replicas of ml-training/trainer-3 fit"


# --- 8. quiet, grammatical stderr ---------------------------------------------------------------


def test_a_wrong_name_is_one_error_without_the_planning_banner() -> None:
    for args in (["--pod", "nosuch"], ["--node", "nosuch"], ["--fill", "nosuch"]):
        result = runner.invoke(app, ["plan", DUMP, *args], env=WIDE)
        assert result.exit_code == 1, result.output
        assert "planning" not in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1  # its line, no count of 1


def test_allocate_as_a_table_says_where_once() -> None:
    result = runner.invoke(
        app, ["allocate", GPU, "--any-node", "--claim", "two-gpus", "-o", "table"], env=WIDE
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("allocated on node node-1") == 1
    refused = runner.invoke(
        app, ["allocate", GPU, "--any-node", "--claim", "gpu-with-nic", "-o", "table"], env=WIDE
    )
    assert refused.exit_code == 2
    assert refused.output.count("cannot allocate:") == 1 and "dra-solver explain" in refused.stdout


def test_counts_are_grammatical(tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(Path(GPU).read_text()) if d["kind"] != "Node"]
    docs = [d for d in docs if d["kind"] != "ResourceClaim" or d["metadata"]["name"] == "two-gpus"]
    docs = [d for d in docs if d["kind"] != "DeviceClass" or d["metadata"]["name"] == "gpu.example.com"]
    docs = [
        d for d in docs if d["kind"] != "ResourceSlice" or d["metadata"]["name"] == "node-1-gpu.example.com"
    ]
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.stdout == "valid: 1 slice, 5 devices, 1 class, 1 claim\n", result.output


# --- 6. kubectl's habits ------------------------------------------------------------------------


def test_namespace_selects_the_pending_pods_to_plan() -> None:
    result = runner.invoke(app, ["plan", DUMP, "-n", "ml-training", "-o", "name"], env=WIDE)
    assert result.exit_code == 0, result.output
    pods = [line for line in result.stdout.splitlines() if line.startswith("pod/")]
    assert pods == ["pod/trainer-1", "pod/trainer-2", "pod/trainer-3"]
    assert "placed 3 of 3 pods" in result.stderr
    # -A is the default: every namespace's pending pods
    every = runner.invoke(app, ["plan", DUMP, "-A"], env=WIDE)
    assert every.exit_code == 2 and "placed 7 of 8 pods" in every.stderr
    # a name without a namespace is in -n's
    one = runner.invoke(app, ["plan", DUMP, "-n", "ml-training", "--pod", "trainer-3"], env=WIDE)
    assert one.exit_code == 0 and "placed 1 of 1 pod " in one.stderr, one.output
    both = runner.invoke(app, ["plan", DUMP, "-n", "ml-training", "-A"], env=WIDE)
    assert both.exit_code == 1 and "give either --namespace (-n) or --all-namespaces (-A)" in both.stderr
    none = runner.invoke(app, ["plan", DUMP, "-n", "nosuch"], env=WIDE)
    assert none.exit_code == 0 and "warning: no pending pods in namespace nosuch" in none.stderr


def test_dash_f_is_an_input_beside_the_paths(capsys: pytest.CaptureFixture[str]) -> None:
    result = runner.invoke(app, ["validate", "-f", GPU, "--feature-gates", "DRADerivedAttributes=true"])
    assert result.exit_code == 0 and result.stdout.startswith("valid: 4 slices"), result.output
    done = run_cli(capsys, "plan")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "dra-solver plan: no input: give PATH... or -f FILE (`-` for stdin), or --live / --kubeconfig PATH "
        "(see 'dra-solver plan --help')"
    )
    # allocate reads files only: its message names no live flag.
    done = run_cli(capsys, "allocate")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "dra-solver allocate: no input: give PATH... or -f FILE (`-` for stdin) "
        "(see 'dra-solver allocate --help')"
    )


def test_output_name_prints_what_kubectl_prints() -> None:
    result = runner.invoke(app, ["allocate", GPU, "--node", "node-1", "--claim", "two-gpus", "-o", "name"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "resourceclaim.resource.k8s.io/two-gpus\n"


def test_output_wide_adds_columns() -> None:
    narrow = runner.invoke(app, ["plan", DUMP, "-o", "table"], env=WIDE)
    wide = runner.invoke(app, ["plan", DUMP, "-o", "wide"], env={"COLUMNS": "260"})
    assert wide.exit_code == narrow.exit_code == 2

    def headers(out: str) -> str:  # the tables' header rows (a reason may say "priority" too)
        return "\n".join(line for line in out.splitlines() if "┃" in line)

    for column in ("priority", "claims already allocated", "node devices (driver x count)"):
        assert column in headers(wide.stdout) and column not in headers(narrow.stdout)
    assert "gpu.nvidia.com x4" in wide.stdout
