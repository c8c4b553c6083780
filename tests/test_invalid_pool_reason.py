"""A reason names the real cause (issues #27, #42): a pool made invalid by a device listed in two of its
slices is reported as that — the pool, the device and both slices — by `plan` and `explain`, not
as "0 match the selectors"; an invalid pool that would not help is not named as the cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from builders import allocated, claim, device, device_class, request, resource_slice, result
from typer.testing import CliRunner

from dra_solver.api.cluster import Cluster
from dra_solver.cli.main import app
from dra_solver.explain.diagnosis import explain
from dra_solver.pipeline import plan

runner = CliRunner()
CAUSE = (
    "pool gpu.example.com/node-a generation 1 is invalid: "
    "device gpu-0 listed by slices node-a-gpu-a and node-a-gpu-b"
)


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def duplicate_pool() -> list[dict[str, Any]]:
    """Node node-a's GPU pool has two slices of one generation that both list gpu-0 (upstream:
    the pool is invalid, none of its devices may be allocated); node-b has no devices."""
    return [
        _node("node-a"),
        _node("node-b"),
        device_class("gpu"),
        resource_slice(
            "node-a-gpu-a", [device("gpu-0"), device("gpu-1")], node="node-a", pool="node-a", count=2
        ),
        resource_slice("node-a-gpu-b", [device("gpu-0")], node="node-a", pool="node-a", count=2),
        claim("one-gpu", [request("gpu")]),
    ]


def test_explain_names_the_invalid_pool_the_device_and_both_slices() -> None:
    answer = explain(Cluster.from_objects(duplicate_pool()), claim="one-gpu")
    by_node = {a.node: a for a in answer.nodes}
    assert by_node["node-a"].reason.startswith(CAUSE), by_node["node-a"].reason
    assert "match the selectors" not in by_node["node-a"].reason
    assert any("outside invalid pools (3 in them)" in d for d in by_node["node-a"].details)
    assert "match the selectors" in by_node["node-b"].reason  # node-b has no devices at all


def test_the_explain_command_says_it_too(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(duplicate_pool()))
    out = runner.invoke(app, ["explain", str(path), "--claim", "one-gpu"])
    assert out.exit_code == 0, out.output
    assert f"node node-a: {CAUSE}" in out.stdout


def test_the_plan_reason_names_the_invalid_pool(tmp_path: Path) -> None:
    outcome = plan(Cluster.from_objects(duplicate_pool()), nodes=["node-a"])
    assert not outcome.pods[0].placed and CAUSE in (outcome.pods[0].reason or "")
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(duplicate_pool()))
    table = runner.invoke(app, ["plan", str(path), "-o", "table"], env={"COLUMNS": "400"})
    assert table.exit_code == 2
    assert f"node-a: invalid resource pools were encountered: {CAUSE}" in table.stdout


def held_gpu_beside_an_invalid_nic_pool() -> list[dict[str, Any]]:
    return [
        _node("node-a"),
        device_class("gpu"),
        device_class("nic", "nic.example.com"),
        resource_slice("gpus", [device("gpu-0")], node="node-a", pool="node-a-gpus"),
        resource_slice(
            "nic-a", [device("nic-0")], driver="nic.example.com", node="node-a", pool="n", count=2
        ),
        resource_slice(
            "nic-b", [device("nic-0")], driver="nic.example.com", node="node-a", pool="n", count=2
        ),
        allocated("holder", [result("gpu-0", pool="node-a-gpus")]),
        claim("want", [request("gpu")]),
    ]


NIC = "pool nic.example.com/n generation 1 is invalid: device nic-0 listed by slices nic-a and nic-b"


def test_an_invalid_pool_that_would_not_help_is_not_named_as_the_cause() -> None:
    """The NIC pool is invalid, but the claim wants a GPU and the one GPU is held: the reason is
    the held GPU, the invalid pool only mentioned beside it — in `explain` and in the plan."""
    cluster = Cluster.from_objects(held_gpu_beside_an_invalid_nic_pool())
    reason = explain(cluster, claim="want").nodes[0].reason
    assert reason.startswith("claim default/want: request gpu"), reason
    assert "1 match the selectors; 0 of 1 are free" in reason and NIC in reason
    for allocator in ("reference", "cpsat"):
        pod = plan(cluster, allocator=allocator).pod("default/want")
        assert not pod.placed and pod.reason is not None
        assert pod.reason.startswith("claim default/want: request gpu"), pod.reason
        assert "1 match the selectors; 0 of 1 are free" in pod.reason and NIC in pod.reason


def test_free_devices_are_counted_among_the_remaining_only_when_some_were_filtered() -> None:
    """'of the remaining N' says that some matching devices were set aside first (tainted, too
    small); with none set aside the count is of the matching devices, in grammatical number."""
    taint = {"taints": [{"key": "broken", "effect": "NoSchedule"}]}
    held = allocated("holder", [result("gpu-0", pool="node-a")])
    plain = [
        _node("node-a"),
        device_class("gpu"),
        resource_slice("node-a", [device("gpu-0"), device("gpu-1")], node="node-a", pool="node-a"),
        held,
        claim("two", [request("gpu", count=2)]),
    ]
    reason = explain(Cluster.from_objects(plain), claim="two").nodes[0].reason
    assert "needs 2 device(s), 2 match the selectors; 1 of 2 is free" in reason, reason
    filtered = [
        *plain[:2],
        resource_slice(
            "node-a",
            [device("gpu-0"), device("gpu-1"), device("gpu-2", **taint)],
            node="node-a",
            pool="node-a",
        ),
        held,
        plain[-1],
    ]
    reason = explain(Cluster.from_objects(filtered), claim="two").nodes[0].reason
    assert "3 match the selectors; of those 1 " in reason and "1 of the remaining 2 is free" in reason, reason


INCOMPLETE = (
    "pool gpu.example.com/node-a generation 1 is incomplete: 1 of its 2 slices are published "
    "(resourceSliceCount 2)"
)


def test_an_incomplete_pool_is_named_where_it_blocks_the_claim(tmp_path: Path) -> None:
    """Upstream skips an incomplete pool without a word (unschedulable); the reason of
    `allocate`, `plan` and `explain` names it (issue #42)."""
    objs = [
        _node("node-a"),
        device_class("gpu"),
        resource_slice("node-a-gpu-a", [device("gpu-0")], node="node-a", pool="node-a", count=2),
        claim("one-gpu", [request("gpu")]),
    ]
    cluster = Cluster.from_objects(objs)
    assert INCOMPLETE in (explain(cluster, claim="one-gpu").nodes[0].reason or "")
    for allocator in ("reference", "cpsat"):
        pod = plan(cluster, allocator=allocator).pods[0]
        assert not pod.placed and INCOMPLETE in (pod.reason or ""), pod.reason
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    out = runner.invoke(app, ["allocate", str(path), "--claim", "one-gpu", "--node", "node-a"])
    assert out.exit_code == 2, out.output
    assert "generation 1 is incomplete" in out.output


def test_allocate_names_the_invalid_pool(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(duplicate_pool()))
    out = runner.invoke(app, ["allocate", str(path), "--claim", "one-gpu", "--node", "node-a"])
    assert out.exit_code == 1, out.output
    assert CAUSE in out.stderr
