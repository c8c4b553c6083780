"""Messy input read as a new user would (issue #39, docs/semantics.md, "Messy clusters: what one
bad object costs (issue #39)"): a duplicate costs only itself, a name or a label value the API
server refuses is named with the field and the fix, a taint without an effect reads as such."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_messy_dump import GPU_CLASS, _claim, _node, _pod, _slice
from typer.testing import CliRunner

import dra_solver
from dra_solver.cli.main import app
from dra_solver.errors import ValidationErrors

runner = CliRunner()
Items = list[dict[str, Any]]


def _write(tmp_path: Path, items: Items, name: str = "dump.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _gpu_cluster() -> Items:
    """Two nodes of two GPUs each; pods a and b each want one GPU through their own claim."""
    items: Items = [GPU_CLASS]
    for n in ("n1", "n2"):
        items.append(_node(n))
        items.append(_slice(f"{n}-gpu", n, [{"name": "gpu-0"}, {"name": "gpu-1"}], nodeName=n))
    for p in ("a", "b"):
        items.append(_claim(p))
        items.append(_pod(p, resourceClaims=[{"name": "g", "resourceClaimName": p}]))
    return items


# --- a duplicate costs only itself ----------------------------------------------------------


def test_an_identical_copy_is_read_once_with_a_warning_and_validate_still_refuses_it(tmp_path: Path) -> None:
    """The same slice twice (a dump concatenated with part of itself) refused the whole input;
    the API server would hold one object. Planning reads the first, warns naming both
    positions; `validate` (a CI check of manifests) still refuses it."""
    items = _gpu_cluster()
    path = _write(tmp_path, [*items, copy.deepcopy(items[2])])
    cluster = dra_solver.load([path], strict=False)
    (warned,) = [w for w in cluster.warnings if "defined twice" in w]
    assert warned == (
        f"{path}: ResourceSlice n1-gpu: defined twice, an identical copy: in {path} (document 1, items[2]) "
        f"and in {path} (document 1, items[9]); read once"
    )
    assert [s.metadata.name for s in cluster.slices] == ["n1-gpu", "n2-gpu"]
    outcome = dra_solver.plan(cluster)
    assert all(outcome.pod(f"default/{p}").placed for p in "ab")
    planned = runner.invoke(app, ["plan", str(path), "-o", "name"])
    assert planned.exit_code == 0 and "read once" in planned.stderr, planned.stderr
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1 and "defined twice, an identical copy" in checked.stderr
    with pytest.raises(ValidationErrors):
        dra_solver.load([path])


def test_a_claim_defined_twice_differently_holds_only_its_pod(tmp_path: Path) -> None:
    """Two different claims under one name (a dump plus an edited copy in a second file): which
    one the cluster has cannot be told, so neither is read and the pod that uses it is held with
    that reason, naming both positions; the other pod is planned."""
    items = _gpu_cluster()
    edited = _claim("a", {"count": 2})
    first = _write(tmp_path, items)
    second = _write(tmp_path, [edited], "edit.yaml")
    cluster = dra_solver.load([first, second], strict=False)
    outcome = dra_solver.plan(cluster)
    assert outcome.pod("default/b").placed
    held = outcome.pod("default/a")
    assert not held.placed
    assert (held.reason or "").startswith(
        "spec.resourceClaims[0].resourceClaimName: ResourceClaim default/a could not be read (defined twice, "
        f"with different content: in {first} (document 1, items[5]) and in {second} (document 1, items[0]): "
        "which one the cluster has cannot be told, so neither is read)"
    ), held.reason
    planned = runner.invoke(app, ["plan", str(first), str(second), "-o", "name"])
    assert planned.exit_code == 2, planned.stderr
    assert "default/b: node" in planned.stderr and "Traceback" not in planned.stderr
    checked = runner.invoke(app, ["validate", str(first), str(second)])
    assert checked.exit_code == 1 and "defined twice, with different content" in checked.stderr


def test_a_class_defined_twice_differently_is_named_without_a_near_names_hint(tmp_path: Path) -> None:
    """Its claims' "DeviceClass 'x' not found" said as "could not be read (defined twice…)";
    the hint to a class of a similar name is dropped: the class is there."""
    items = _gpu_cluster()
    near = {**copy.deepcopy(GPU_CLASS), "metadata": {"name": "gpu.example.org"}}
    edited = copy.deepcopy(GPU_CLASS)
    edited["spec"]["selectors"] = []
    cluster = dra_solver.load([_write(tmp_path, [near, *items, edited])], strict=False)
    reason = dra_solver.plan(cluster).pod("default/a").reason or ""
    assert "DeviceClass gpu.example.com could not be read (defined twice, with different content" in reason
    assert "did you mean" not in reason, reason


def test_an_unreadable_object_and_a_readable_one_of_its_name_are_both_left_out(tmp_path: Path) -> None:
    """A pod once with a field its model refuses, once readable: the plan had both (held and
    planned). Neither is read: the pod is held, its reason naming both positions."""
    items = _gpu_cluster()
    broken = copy.deepcopy(items[-1])
    broken["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    path = _write(tmp_path, [*items, broken])
    outcome = dra_solver.plan(dra_solver.load([path], strict=False))
    held = outcome.pod("default/b")
    assert not held.placed
    assert "Input should be" in (held.reason or "") or "quantity" in (held.reason or ""), held.reason
    assert (
        f"defined twice: in {path} (document 1, items[9]) and in {path} (document 1, items[8]), not both "
        "readable" in (held.reason or "")
    ), held.reason
    assert outcome.pod("default/a").placed


# --- names and label values the API server refuses ----------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "field", "said"),
    [
        ("Pod", "trainer-ß", "metadata.name", "invalid name 'trainer-ß': must be a DNS subdomain"),
        ("Pod", "Trainer-0", "metadata.name", "invalid name 'Trainer-0': must be a DNS subdomain"),
        ("Node", "gpu_node", "metadata.name", "invalid name 'gpu_node': must be a DNS subdomain"),
        ("Pod", "ok", "metadata.namespace", "invalid namespace 'ML': must be a DNS label"),
    ],
)
def test_a_name_the_api_server_refuses_fails_validate_naming_the_field(
    tmp_path: Path, kind: str, name: str, field: str, said: str
) -> None:
    """`trainer-ß` passed `validate` although the API server refuses it (ObjectMeta validation:
    a DNS subdomain; a namespace a DNS label). Planning costs only that object."""
    items = _gpu_cluster()
    extra = _node(name) if kind == "Node" else _pod(name)
    if field == "metadata.namespace":
        extra["metadata"]["namespace"] = "ML"
    path = _write(tmp_path, [*items, extra])
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1, checked.stderr
    ns = "ML/" if field == "metadata.namespace" else ("default/" if kind == "Pod" else "")
    assert f"{kind} {ns}{name}: {field}: {said}" in checked.stderr, checked.stderr
    assert "the API server refuses it" in checked.stderr
    outcome = dra_solver.plan(dra_solver.load([path], strict=False))
    assert all(outcome.pod(f"default/{p}").placed for p in "ab")
    if kind == "Pod":
        held = outcome.pod(f"{ns}{name}")
        assert not held.placed and said in (held.reason or ""), held.reason


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (7, 'must be a string, not the number 7: quote it ("7"), as the API server refuses a number here'),
        (1.5, "must be a string, not the number 1.5: quote it as written"),
        (
            True,
            "must be a string, not the boolean true (YAML reads unquoted true, yes, on… as one): quote it",
        ),
    ],
)
def test_a_node_label_that_is_a_yaml_number_is_refused_with_the_fix(
    tmp_path: Path, value: object, said: str
) -> None:
    """`rack: 7` in hand-written YAML is a number, which the API server refuses in a label (and
    the value as written cannot be told: `1.10` reads as 1.1): the node is left out with a
    reason saying how to fix it (it said `Input should be a valid string`); a pod bound to it
    is said to be on a node left out, not on a deleted one."""
    items = _gpu_cluster()
    items[1]["metadata"]["labels"]["rack"] = value
    bound = {**_pod("running", nodeName="n1"), "status": {"phase": "Running"}}
    path = _write(tmp_path, [*items, bound])
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1
    assert f"Node n1: metadata.labels.rack: {said}" in checked.stderr, checked.stderr
    cluster = dra_solver.load([path], strict=False)
    assert list(cluster.nodes) == ["n2"]
    assert any(w.startswith(f"{path}: Node n1: metadata.labels.rack: {said}") for w in cluster.warnings)
    (on_it,) = [w for w in cluster.warnings if "default/running" in w]
    assert "bound to n1, whose Node is left out for a problem" in on_it and "deleted" not in on_it, on_it
    assert dra_solver.plan(cluster).pod("default/a").node == "n2"


# --- a taint without an effect ---------------------------------------------------------------


def test_a_node_taint_without_an_effect_is_named_as_such(tmp_path: Path) -> None:
    """A Node taint with an empty effect (the API server refuses it: Required value) read
    `the node has the taint gpu:`; `validate` called it an unsupported effect ''. Now validate
    says it is required, and the plan keeps the node with the taint blocking, worded as one
    without an effect. A taint without a key is kept the same way (the node is not lost)."""
    items = _gpu_cluster()
    items[1]["spec"] = {"taints": [{"key": "gpu", "effect": ""}]}
    items[3]["spec"] = {"taints": [{"key": "", "effect": "NoSchedule"}]}
    path = _write(tmp_path, items)
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1
    assert (
        "Node n1: spec.taints[0].effect: required: a taint must have an effect (NoSchedule, "
        "PreferNoSchedule, NoExecute)" in checked.stderr
    ), checked.stderr
    assert "Node n2: spec.taints[0].key: required: a taint must have a key" in checked.stderr
    cluster = dra_solver.load([path], strict=False)
    assert sorted(cluster.nodes) == ["n1", "n2"]
    reason = dra_solver.plan(cluster).pod("default/a").reason or ""
    assert "the node has the taint gpu (without an effect, counted as blocking), which the pod" in reason, (
        reason
    )
    assert "gpu:" not in reason


# --- what a live cluster is in the middle of ---------------------------------------------------


def _allocated(claim: dict[str, Any], node: str, device: str, pod: str) -> dict[str, Any]:
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "g", "driver": "gpu.example.com", "pool": node, "device": device}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}],
    }
    return claim


def test_a_claim_being_deleted_makes_its_pending_pod_wait(tmp_path: Path) -> None:
    """Upstream's DynamicResources refuses a pod whose claim has a deletionTimestamp
    (`resourceclaim "a" is being deleted`); the plan placed it. An allocated claim being deleted
    keeps its devices, and a bound pod that uses it is no problem (no warning)."""
    items = _gpu_cluster()
    items[5]["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"  # claim a
    running = _claim("r")
    running["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    bound = {
        **_pod("r", nodeName="n1", resourceClaims=[{"name": "g", "resourceClaimName": "r"}]),
        "status": {"phase": "Running"},
    }
    items += [_allocated(running, "n1", "gpu-0", "r"), bound]
    cluster = dra_solver.load([_write(tmp_path, items)], strict=False)
    assert not [w for w in cluster.warnings if "default/r" in w], cluster.warnings
    outcome = dra_solver.plan(cluster)
    held = outcome.pod("default/a")
    assert not held.placed
    assert held.reason == (
        "spec.resourceClaims[0]: ResourceClaim default/a is being deleted (metadata.deletionTimestamp): "
        "the pod waits"
    ), held.reason
    assert outcome.pod("default/b").placed


def test_a_pending_pod_being_deleted_is_not_planned(tmp_path: Path) -> None:
    """The scheduler skips a pod with a deletionTimestamp (skipPodSchedule); the plan placed it."""
    items = _gpu_cluster()
    items[-1]["metadata"]["deletionTimestamp"] = "2026-11-29T00:00:00Z"  # pod b
    outcome = dra_solver.plan(dra_solver.load([_write(tmp_path, items)], strict=False))
    held = outcome.pod("default/b")
    assert not held.placed
    assert held.reason == "the pod is being deleted (metadata.deletionTimestamp): the scheduler skips it"
    assert outcome.pod("default/a").placed


def test_a_pod_whose_name_is_a_number_costs_only_itself(tmp_path: Path) -> None:
    """`name: 12345` made the object nameless and the whole input fatal; it is that pod's problem."""
    items = _gpu_cluster()
    numbered = _pod("x")
    numbered["metadata"]["name"] = 12345
    path = _write(tmp_path, [*items, numbered])
    planned = runner.invoke(app, ["plan", str(path), "-o", "name"])
    assert planned.exit_code == 2, planned.stderr
    assert (
        "default/12345: not placed: the pod could not be read: metadata.name: must be a string, not the "
        'number 12345: quote it ("12345")' in planned.stderr
    ), planned.stderr
    assert "default/a: node" in planned.stderr


def test_an_allocated_device_no_slice_publishes_is_warned_about(tmp_path: Path) -> None:
    """A driver that republished its devices under other names leaves an allocation naming a
    device its pool no longer has: the plan cannot hold it (nor can the scheduler), and said
    nothing. A pool the input has no slice of says nothing (a dump without slices)."""
    items = _gpu_cluster()
    gone = _allocated(_claim("r"), "n1", "gpu-7", "r")
    elsewhere = _allocated(_claim("s"), "n9", "gpu-0", "s")
    bound = [
        {
            **_pod(p, nodeName="n1", resourceClaims=[{"name": "g", "resourceClaimName": p}]),
            "status": {"phase": "Running"},
        }
        for p in "rs"
    ]
    cluster = dra_solver.load([_write(tmp_path, [*items, gone, elsewhere, *bound])], strict=False)
    (warned,) = [w for w in cluster.warnings if "published by no ResourceSlice" in w]
    assert warned.startswith(
        "ResourceClaim default/r: status.allocation.devices.results[0]: device gpu.example.com/n1/gpu-7 is "
        "published by no ResourceSlice of its pool"
    ), warned


def test_a_null_field_reads_as_unset_as_the_api_server_reads_it(tmp_path: Path) -> None:
    """`labels:` written with nothing under it is YAML's null, which Kubernetes decodes as no
    labels; the pod was refused (`Input should be a valid dictionary`). A null list item is
    still refused, naming only that field."""
    items = _gpu_cluster()
    pod = items[-1]
    pod["metadata"]["labels"] = None
    pod["spec"]["tolerations"] = None
    pod["spec"]["containers"][0]["resources"]["limits"] = None
    broken = _pod("c")
    broken["metadata"]["annotations"] = None
    broken["spec"]["containers"].append(None)
    path = _write(tmp_path, [*items, broken])
    cluster = dra_solver.load([path], strict=False)
    assert cluster.pods[("default", "b")].metadata.labels == {}
    outcome = dra_solver.plan(cluster)
    assert outcome.pod("default/b").placed
    held = outcome.pod("default/c")
    assert held.reason == (
        "the pod could not be read: spec.containers[1]: Input should be a valid dictionary or instance of "
        "Container"
    ), held.reason


def test_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    """`plan a.yaml dir/` with a.yaml in dir made each of its objects a duplicate of itself
    (one warning, or `validate` error, per object); the file is one input file."""
    path = _write(tmp_path, _gpu_cluster())
    for command in ("validate", "plan"):
        got = runner.invoke(app, [command, str(path), str(tmp_path)])
        assert got.exit_code == 0, got.stderr
        assert f"{path}: given more than once: read once" in got.stderr
        assert "defined twice" not in got.stderr


def test_an_object_with_metadata_but_no_name_is_refused_not_held(tmp_path: Path) -> None:
    """A pod with `metadata: {namespace: default}` was held as `default/` and the plan then
    failed with `internal error: KeyError: 'name'`; `metadata: null` must not be read as unset
    either. An object without a name is not Kubernetes: the input is refused, naming it."""
    items = _gpu_cluster()
    for metadata in ({"namespace": "default"}, None):
        nameless = {**_pod("x"), "metadata": metadata}
        got = runner.invoke(app, ["plan", str(_write(tmp_path, [*items, nameless])), "-o", "name"])
        assert got.exit_code == 1, got.stderr
        assert "Pod " in got.stderr and "internal error" not in got.stderr, got.stderr
        assert "name" in got.stderr or "metadata" in got.stderr
