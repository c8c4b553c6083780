"""A pool left out because a slice of it cannot be read, or would be refused by the API
server, is named where it would have served (docs/semantics.md, "Messy clusters";
`planning.leftpools`): the pods it leaves without a fit read it and its problem as an invalid
pool's reason — in `plan` (both allocators, every output), `explain --pod`, the table's node
row and `check` — never `0 match the selectors`, as on a node with no devices. The pool places
as an absent one: the healthy pods' plans do not change."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

import dra_solver
from dra_solver.cli.main import app
from dra_solver.errors import InputError

runner = CliRunner()
Items = list[dict[str, Any]]

UNREAD = (
    "pool gpu.example.com/n1 generation 1 is invalid: ResourceSlice n1-gpu could not be read "
    "(spec.devices[1].attributes.index.int: Input should be a valid integer)"
)
REFUSED = (
    "pool gpu.example.com/n1 generation 1 is invalid: ResourceSlice n1-gpu is not valid: "
    "spec.devices[1].name: duplicate device name 'gpu-0' in this slice"
)


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def _slice(node: str, devices: list[dict[str, Any]], generation: int = 1, name: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node}-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}],
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one-gpu"}],
        },
    }


REQUEST = {"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}


def _cluster(n1_devices: list[dict[str, Any]]) -> Items:
    """n1's pool is the one under test; n2 has one good GPU; two pods of one GPU each: one
    placed on n2, the other left without a fit."""
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [REQUEST]}}},
        },
        _node("n1"),
        _node("n2"),
        _slice("n1", n1_devices),
        _slice("n2", [{"name": "gpu-0"}]),
        _pod("a"),
        _pod("b"),
    ]


UNREADABLE = [{"name": "gpu-0"}, {"name": "gpu-1", "attributes": {"index": {"int": "x"}}}]
DUPLICATE = [{"name": "gpu-0"}, {"name": "gpu-0"}]


def _write(tmp_path: Path, items: Items) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _unplaced(outcome: dra_solver.PlanOutcome) -> list[dra_solver.PodPlan]:
    return [p for p in outcome.pods if not p.placed]


@pytest.mark.parametrize("allocator", ["cpsat", "reference"])
@pytest.mark.parametrize(
    ("devices", "why"), [(UNREADABLE, UNREAD), (DUPLICATE, REFUSED)], ids=["unread", "refused"]
)
def test_the_pod_left_without_a_fit_names_the_left_out_pool(
    tmp_path: Path, allocator: str, devices: Items, why: str
) -> None:
    cluster = dra_solver.load([_write(tmp_path, _cluster(devices))], strict=False)
    assert [w for w in cluster.warnings if "pool gpu.example.com/n1 is left out of the plan" in w]
    outcome = dra_solver.plan(cluster, allocator=allocator)
    assert outcome.placed == 1 and [p.node for p in outcome.pods if p.placed] == ["n2"]
    (left,) = _unplaced(outcome)
    assert left.reason is not None and why in left.reason, left.reason
    assert "0 match the selectors" not in left.reason


def test_the_table_names_the_pool_in_the_reason_and_on_its_node(tmp_path: Path) -> None:
    path = _write(tmp_path, _cluster(UNREADABLE))
    got = runner.invoke(app, ["plan", str(path), "-o", "table"], env={"COLUMNS": "400"})
    assert got.exit_code == 2, got.stderr
    text = " ".join(got.stdout.replace("│", " ").split())
    assert "invalid resource pools were encountered: " + UNREAD in text
    assert "n1 0 0 of 0 (pool gpu.example.com/n1 left out)" in text
    assert "n2 1 1 of 1 -" in text  # a node without a left-out pool: as before


def test_explain_names_the_pool_and_says_its_devices_are_unknown(tmp_path: Path) -> None:
    path = _write(tmp_path, _cluster(UNREADABLE))
    got = runner.invoke(app, ["explain", str(path), "--pod", "default/b"])
    assert got.exit_code == 0, got.stderr
    line = next(x for x in got.stdout.splitlines() if x.startswith("node n1: "))
    assert line == f"node n1: {UNREAD}; its devices are not read, and with them the claims might fit"


def test_a_pod_of_a_node_without_the_pool_keeps_its_own_reason(tmp_path: Path) -> None:
    """Only the node that would see the pool names it: n2's answer is its own shortage."""
    items = _cluster(UNREADABLE)
    items.append(_pod("c"))
    outcome = dra_solver.plan(dra_solver.load([_write(tmp_path, items)], strict=False))
    for p in _unplaced(outcome):
        assert p.reason is not None and "gpu.example.com/n2" not in p.reason


def test_check_names_the_left_out_pool_of_an_allocated_device(tmp_path: Path) -> None:
    items = _cluster(UNREADABLE)
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "held", "namespace": "default"},
        "spec": {"devices": {"requests": [REQUEST]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                    ]
                },
            }
        },
    }
    got = runner.invoke(app, ["check", str(_write(tmp_path, [*items, claim]))])
    assert got.exit_code == 3, got.stderr
    assert got.stdout.splitlines() == [
        "[unknown-device] claim default/held, request g: device gpu.example.com/n1/gpu-0: "
        "pool gpu.example.com/n1 is invalid: ResourceSlice n1-gpu could not be read "
        "(spec.devices[1].attributes.index.int: Input should be a valid integer)"
    ]


def test_full_output_writes_the_slice_as_given_and_no_stand_in(tmp_path: Path) -> None:
    items = _cluster(DUPLICATE)
    got = runner.invoke(app, ["plan", str(_write(tmp_path, items)), "--output-mode", "full"])
    assert got.exit_code == 2, got.stderr
    written = [o for o in read_yaml(got.stdout)["items"] if o["kind"] == "ResourceSlice"]
    assert sorted(o["metadata"]["name"] for o in written) == ["n1-gpu", "n2-gpu"]
    n1 = next(o for o in written if o["metadata"]["name"] == "n1-gpu")
    assert n1["spec"]["devices"] == DUPLICATE


def test_a_bad_slice_of_an_older_generation_leaves_the_newest_planned(tmp_path: Path) -> None:
    items = _cluster([{"name": "gpu-0"}])
    items.append(_slice("n1", DUPLICATE, generation=0, name="n1-gpu-old"))
    cluster = dra_solver.load([_write(tmp_path, items)], strict=False)
    assert any(
        "pool gpu.example.com/n1 generation 0 is left out (generation 1, the newest, is planned)" in w
        for w in cluster.warnings
    ), cluster.warnings
    assert dra_solver.plan(cluster).placed == 2


def test_a_slice_whose_pool_cannot_be_read_is_a_warning_as_before(tmp_path: Path) -> None:
    items = _cluster([{"name": "gpu-0"}])
    items.append({**_slice("n1", [{"name": "x"}], name="no-pool"), "spec": {"driver": "d", "pool": 5}})
    cluster = dra_solver.load([_write(tmp_path, items)], strict=False)
    assert any(w.endswith("; left out of the plan") and "no-pool" in w for w in cluster.warnings)
    assert dra_solver.plan(cluster).placed == 2


def test_the_healthy_pods_plan_as_without_the_pool(tmp_path: Path) -> None:
    """A left-out pool places as an absent one (the aggregated model still applies): the plan of
    the other pods is the plan of the cluster without the bad slice."""
    items = _cluster(UNREADABLE)
    more = [_node(f"m{i}") for i in range(4)] + [_slice(f"m{i}", [{"name": "gpu-0"}]) for i in range(4)]
    pods = [_pod(f"p{i}") for i in range(6)]
    (tmp_path / "messy").mkdir()
    (tmp_path / "clean").mkdir()
    messy_path = _write(tmp_path / "messy", [*items, *more, *pods])
    messy = dra_solver.plan(dra_solver.load([messy_path], strict=False))
    clean_items = [o for o in [*items, *more, *pods] if o["metadata"]["name"] != "n1-gpu"]
    clean = dra_solver.plan(dra_solver.load([_write(tmp_path / "clean", clean_items)]))
    assert {p.name: p.node for p in messy.pods} == {p.name: p.node for p in clean.pods}
    assert messy.stats.get("aggregated") == clean.stats.get("aggregated") == "yes"


def test_an_update_touching_a_left_out_pool_is_refused(tmp_path: Path) -> None:
    """Its stand-ins would stay beside the new slice: only a fresh plan (which `plan --watch`
    falls back to on a refused update) reads the pool again."""
    cluster = dra_solver.load([_write(tmp_path, _cluster(DUPLICATE))], strict=False)
    planner = dra_solver.Planner(cluster)
    planner.plan()
    fixed = copy.deepcopy(_slice("n1", [{"name": "gpu-0"}, {"name": "gpu-1"}]))
    with pytest.raises(InputError, match="pool gpu.example.com/n1 was left out of the plan for a problem"):
        planner.update(add=[fixed], remove=[("ResourceSlice", None, "n1-gpu")])
    assert planner.update(add=[_pod("c")]).pod("default/c") is not None


def test_a_left_out_pool_of_another_driver_is_beside_the_reason_not_its_cause(tmp_path: Path) -> None:
    """The class pins `device.driver == 'gpu.example.com'`: a left-out pool of a CPU driver cannot
    serve the claim whatever its devices, so the node's reason stays its own shortage, the
    pool beside it (`problem.leftout.may_serve`)."""
    items = _cluster([{"name": "gpu-0"}])
    cpu = _slice("n1", [{"name": "cpu-0"}, {"name": "cpu-0"}], name="n1-cpu")
    cpu["spec"]["driver"] = "cpu.example.com"
    items[4] = _slice("n1", [], name="n1-gpu")  # n1: no GPU at all
    items.append(cpu)
    path = _write(tmp_path, items)
    outcome = dra_solver.plan(dra_solver.load([path], strict=False), allocator="reference")
    (left,) = _unplaced(outcome)
    assert left.reason is not None and "invalid resource pools were encountered" not in left.reason
    assert "0 match the selectors" in left.reason and "not searched: pool cpu.example.com/n1" in left.reason
    got = runner.invoke(app, ["explain", str(path), "--pod", left.name])
    line = next(x for x in got.stdout.splitlines() if x.startswith("node n1: "))
    assert "0 match the selectors" in line and "might fit" not in line, line
