"""What `plan` and `allocate` print (issue #12): Pods next to their claims, the cluster after
the plan as input for the next run, `-o table`, `--version`, clean help, did-you-mean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver import __version__
from dra_solver.api.cluster import Cluster
from dra_solver.cli.main import app
from dra_solver.output.table import NODE_ROWS
from dra_solver.pipeline import plan

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
"""Rich reads the terminal width from COLUMNS: wide enough that no table cell wraps."""
EXAMPLE = str(Path(__file__).resolve().parents[1] / "docs" / "examples" / "gpu-cluster.yaml")


def _write(tmp_path: Path, objects: list[dict[str, Any]], name: str = "in.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def node(name: str, **allocatable: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "pods": "110", **allocatable}},
    }


def pod(name: str, *entries: dict[str, str], cpu: str = "1", **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [container], "resourceClaims": list(entries), **spec},
    }


def template(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request("gpu")]}}},
    }


def cluster_objects() -> list[dict[str, Any]]:
    """Two nodes with one GPU each and a claim already holding node a's only other GPU...
    in short: three GPUs free, four pods asking for one each (template and named claims)."""
    return [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0"), device("gpu-1")], node="node-a"),
        resource_slice("b", [device("gpu-0")], node="node-b"),
        node("node-a"),
        node("node-b"),
        template("one-gpu"),
        claim("named", [request("gpu")]),
        pod("p1", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
        pod("p2", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
        pod("p3", {"name": "gpu", "resourceClaimName": "named"}),
        pod("p4", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
    ]


def _items(stdout: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(i["kind"], i["metadata"]["name"]): i for i in read_yaml(stdout)["items"]}


# --- (1) the Pod in the output; the cluster after the plan --------------------------------------


def test_allocate_pod_prints_the_pod_bound_to_the_node_next_to_its_reserved_claim(tmp_path: Path) -> None:
    path = _write(tmp_path, cluster_objects())
    result = runner.invoke(app, ["allocate", path, "--pod", "p1", "--node", "node-b"])
    assert result.exit_code == 0, result.stderr
    items = _items(result.stdout)
    assert list(items) == [("Pod", "p1"), ("ResourceClaim", "p1-gpu")]
    assert items[("Pod", "p1")]["spec"]["nodeName"] == "node-b"
    status = items[("ResourceClaim", "p1-gpu")]["status"]
    assert status["allocation"]["devices"]["results"][0]["pool"] == "b"
    assert status["reservedFor"] == [{"resource": "pods", "name": "p1", "uid": "uid-p1"}]


def test_allocate_pod_that_cannot_be_allocated_prints_the_pod_unschedulable(tmp_path: Path) -> None:
    objs = [o for o in cluster_objects() if o["kind"] != "ResourceSlice"]
    result = runner.invoke(app, ["allocate", _write(tmp_path, objs), "--pod", "p1", "--node", "node-a"])
    assert result.exit_code == 2
    p1 = _items(result.stdout)[("Pod", "p1")]
    assert "nodeName" not in p1["spec"]
    (cond,) = p1["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert cond["message"]


def test_allocate_without_a_pod_prints_only_the_claims(tmp_path: Path) -> None:
    path = _write(tmp_path, cluster_objects())
    result = runner.invoke(app, ["allocate", path, "--claim", "named", "--node", "node-a"])
    assert result.exit_code == 0, result.stderr
    assert list(_items(result.stdout)) == [("ResourceClaim", "named")]


def test_full_output_fed_back_as_input_is_the_cluster_after_the_plan(tmp_path: Path) -> None:
    objs = cluster_objects()
    first = runner.invoke(app, ["plan", _write(tmp_path, objs), "--output-mode", "full"])
    assert first.exit_code == 2, first.stderr  # three GPUs, four pods
    after = Cluster.from_yaml(first.stdout)  # loads: no object twice
    assert len(after.pods) == 4 and len(after.nodes) == 2 and len(after.templates) == 1
    bound = [p for p in after.pods.values() if p.spec.node_name]
    assert len(bound) == 3
    for p in bound:  # every placed pod's claim is allocated and reserved for it
        entry = p.spec.resource_claims[0]
        name = entry.resource_claim_name or f"{p.metadata.name}-{entry.name}"
        c = after.claims[("default", name)]
        assert c.status.allocation is not None
        assert [r.name for r in c.status.reserved_for] == [p.metadata.name]
    assert (
        runner.invoke(
            app, ["validate", _write(tmp_path, read_yaml(first.stdout)["items"], "after.yaml")]
        ).exit_code
        == 0
    )
    # The next run starts from there: the bound pods are not planned again, the fourth still does not fit.
    second = plan(after, allocator="reference")
    assert [(p.name, p.placed) for p in second.pods] == [("default/p4", False)]
    again = runner.invoke(app, ["plan", str(tmp_path / "after.yaml"), "--output-mode", "full"])
    assert again.exit_code == 2 and "placed 0 of 1 pod " in again.stderr


def test_full_output_with_a_dra_served_extended_resource_loads_and_holds(tmp_path: Path) -> None:
    gpu = device_class("gpu")
    gpu["spec"]["extendedResourceName"] = "example.com/gpu"
    ext = pod("ext", cpu="1")
    ext["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": "1"},
        "limits": {"example.com/gpu": "1"},
    }
    objs = [gpu, resource_slice("b", [device("gpu-0")], node="node-b"), node("node-b"), ext]
    first = runner.invoke(app, ["plan", _write(tmp_path, objs), "--output-mode", "full"])
    assert first.exit_code == 0, first.stderr
    after = Cluster.from_yaml(first.stdout)
    assert after.pods[("default", "ext")].spec.node_name == "node-b"
    assert after.claims[("default", "ext-extended-resources")].status.allocation is not None
    # gpu-0 is taken: a second pod asking for the extended resource does not fit on node-b.
    more = [
        *read_yaml(first.stdout)["items"],
        {**ext, "metadata": {**ext["metadata"], "name": "ext2", "uid": "u2"}},
    ]
    assert [p.placed for p in plan(Cluster.from_objects(more), allocator="reference").pods] == [False]


def test_output_mode_full_with_a_table_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["plan", _write(tmp_path, cluster_objects()), "-o", "table", "--output-mode", "full"]
    )
    assert result.exit_code != 0 and "--output-mode full needs -o yaml or -o json" in result.output


# --- (2) -o table ------------------------------------------------------------------------------


def test_table_has_a_row_per_pod_with_its_devices_or_reason_then_the_summary(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["plan", _write(tmp_path, cluster_objects()), "-o", "table", "--allocator", "reference"],
        env=WIDE,
    )
    assert result.exit_code == 2
    out = result.stdout
    assert "default/p1" in out and "gpu/gpu: gpu.example.com/a/gpu-0" in out.replace("p1-", "")
    assert "named/gpu: gpu.example.com/" in out
    p4 = next(line for line in out.splitlines() if "default/p4" in line)
    assert "not placed" in p4
    assert "placed 3 of 4 pods (reference)" in out
    assert "2 of 2" in out and "1 of 1" in out  # devices used per node
    assert result.stderr.count("placed 3 of 4") == 0  # no second summary, no per-pod lines
    assert "not placed" not in result.stderr


def test_table_shows_shares_and_the_capacity_stranded_on_shared_devices() -> None:
    args = ["plan", EXAMPLE, "--feature-gates", "DRADerivedAttributes=true", "-o", "table"]
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.stderr
    assert "(share " in result.stdout and "memory 30Gi)" in result.stdout
    node1 = next(line for line in result.stdout.splitlines() if line.startswith("│ node-1"))
    assert "5 of 7" in node1 and "memory 50Gi" in node1  # an 80Gi GPU with one 30Gi share


def test_table_groups_nodes_into_classes_above_node_rows(tmp_path: Path) -> None:
    n = NODE_ROWS + 1
    objs = [device_class("gpu")]
    objs += [resource_slice(f"s{i}", [device("gpu-0"), device("gpu-1")], node=f"n{i:02d}") for i in range(n)]
    objs += [claim(f"c{i}", [request("gpu")]) for i in range(3)]
    result = runner.invoke(
        app, ["plan", _write(tmp_path, objs), "-o", "table", "--allocator", "reference"], env=WIDE
    )
    assert result.exit_code == 0, result.stderr
    assert "Node classes" in result.stdout
    (row,) = [line for line in result.stdout.splitlines() if "gpu.example.com x2" in line]
    assert f" {n} │" in row and f"3 of {2 * n}" in row


def test_allocate_table_names_the_node() -> None:
    args = [
        "allocate",
        EXAMPLE,
        "--node",
        "node-1",
        "--feature-gates",
        "DRADerivedAttributes=true",
        "-o",
        "table",
    ]
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.stderr
    assert (
        "allocated on node node-1" in result.stdout
        and "two-gpus/gpus: gpu.example.com/node-1/" in result.stdout
    )


# --- (3) --version, help, did-you-mean -----------------------------------------------------------


def test_version_prints_the_installed_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"dra-solver {__version__}"


@pytest.mark.parametrize("command", [[], ["validate"], ["allocate"], ["plan"]])
def test_help_has_no_type_label_on_flags_and_no_source_line_breaks(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env=WIDE)
    assert result.exit_code == 0
    assert "<bool>" not in result.stdout and "<list[" not in result.stdout.split("Options")[-1]
    assert "--help  " in result.stdout.replace("│", "")


def test_misspelt_device_class_gets_a_did_you_mean(tmp_path: Path) -> None:
    objs = [device_class("gpu-large"), claim("c", [request("gpu", "gpu-lareg")])]
    result = runner.invoke(app, ["validate", _write(tmp_path, objs)])
    assert result.exit_code == 1
    assert "DeviceClass 'gpu-lareg' not found in the input; did you mean \"gpu-large\"?" in result.stderr


def test_misspelt_template_and_claim_in_a_pod_get_a_did_you_mean(tmp_path: Path) -> None:
    objs = [
        *cluster_objects(),
        pod(
            "typo",
            {"name": "a", "resourceClaimTemplateName": "one-gpus"},
            {"name": "b", "resourceClaimName": "nmaed"},
        ),
    ]
    result = runner.invoke(app, ["validate", _write(tmp_path, objs)])
    assert result.exit_code == 1
    assert (
        'ResourceClaimTemplate default/one-gpus not found in the input; did you mean "one-gpu"?'
        in result.stderr
    )
    assert 'ResourceClaim default/nmaed not found in the input; did you mean "named"?' in result.stderr


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (
            ["allocate", "--claim", "nmaed"],
            'ResourceClaim nmaed not found in the input; did you mean "named"?',
        ),
        (
            ["allocate", "--pod", "default/pp1"],
            'Pod default/pp1 not found in the input; did you mean "default/p1"?',
        ),
        (["plan", "--pod", "p11"], 'did you mean "p1"?'),
        (["plan", "--node", "node-c"], "unknown node node-c"),
    ],
)
def test_unknown_names_on_the_command_line_get_a_did_you_mean(
    tmp_path: Path, args: list[str], hint: str
) -> None:
    result = runner.invoke(app, [args[0], _write(tmp_path, cluster_objects()), *args[1:]])
    assert result.exit_code == 1 and hint in result.stderr, result.stderr


def test_a_dumped_pod_uses_the_generated_claim_its_status_names_not_a_second_one(tmp_path: Path) -> None:
    held = claim("p1-gpu-x7k2p", [request("gpu")])
    held["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "a", "device": "gpu-0"}]
            }
        },
        "reservedFor": [{"resource": "pods", "name": "p1", "uid": "uid-p1"}],
    }
    running = pod("p1", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}, nodeName="node-a")
    statuses = [{"name": "gpu", "resourceClaimName": held["metadata"]["name"]}]
    running["status"] = {"phase": "Running", "resourceClaimStatuses": statuses}
    pending = pod("p2", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"})
    pending["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p2-gpu-m2wqv"}]}
    objs = [
        device_class("gpu"),
        resource_slice("a", [device("gpu-0"), device("gpu-1")], node="node-a"),
        node("node-a"),
        template("one-gpu"),
        held,
        claim("p2-gpu-m2wqv", [request("gpu")]),
        running,
        pending,
    ]
    result = runner.invoke(app, ["plan", _write(tmp_path, objs)])
    assert result.exit_code == 0, result.stderr
    assert "placed 1 of 1 pod " in result.stderr  # p1 runs with its allocated claim: nothing to plan
    claims = [o for o in read_yaml(result.stdout)["items"] if o["kind"] == "ResourceClaim"]
    assert [c["metadata"]["name"] for c in claims] == ["p2-gpu-m2wqv"]
    assert claims[0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"
