"""`dra-solver dump` (issue #39 §3): the objects a live read uses, in one file that plans as the
live cluster does; and the documented `kubectl get` command lists exactly the kinds read.

The cluster is the fake API server's, with every kind the planner reads: the example dump, a
DeviceTaintRule, a PriorityClass, a PodDisruptionBudget, a PodGroup, and workloads whose pods
exist in part (a ReplicaSet short of one replica, a Deployment without a ReplicaSet yet, a
StatefulSet missing an ordinal, a finished Job). `plan --kubeconfig` and `plan` of the dump must
print the same answer and exit the same; so must `check` and `validate`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.api import live
from dra_solver.api.load import load_sourced
from dra_solver.cli.main import app
from tests.fake_apiserver import FakeApiServer, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
NS = "ml-training"
runner = CliRunner()

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "probe"}},
    "spec": {
        "restartPolicy": "Never",
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-a100-same-pcie-root"}],
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "claims": [{"name": "gpus"}]},
            }
        ],
    },
}


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


def _workload(kind: str, name: str, spec: dict[str, Any], **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "resourceVersion": "9"},
        "spec": {**spec, "selector": {"matchLabels": {"app": "probe"}}, "template": copy.deepcopy(TEMPLATE)},
    }
    if status:
        obj["status"] = status
    return obj


def _pod_of(name: str, owner: str, kind: str = "ReplicaSet") -> dict[str, Any]:
    """A running pod a controller made, on cpu-worker-1, without claims."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": kind,
                    "name": owner,
                    "uid": f"uid-{owner}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": "cpu-worker-1",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        },
        "status": {"phase": "Running"},
    }


def _cluster() -> list[dict[str, Any]]:
    """Every kind the planner reads."""
    items = dump_items()
    extra = [
        {
            # the version a read asks for first (the fake serves each object in its own only)
            "apiVersion": live.API_VERSIONS["DeviceTaintRule"][0],
            "kind": "DeviceTaintRule",
            "metadata": {"name": "drain-gpu-0", "uid": "uid-rule"},
            "spec": {
                "deviceSelector": {"driver": "gpu.example.com", "device": "gpu-0"},
                "taint": {"key": "maintenance", "effect": "NoSchedule"},
            },
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "batch-low", "uid": "uid-pc"},
            "value": 10,
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "probe", "namespace": NS, "uid": "uid-pdb"},
            "spec": {"selector": {"matchLabels": {"app": "probe"}}, "maxUnavailable": 0},
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "uid": "uid-ns"}},
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": "team", "namespace": NS, "uid": "uid-wl"},
            "spec": {"podGroupTemplates": [{"name": "team", "schedulingPolicy": {"gang": {"minCount": 1}}}]},
        },
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "team", "namespace": NS, "uid": "uid-pg"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
        },
        _workload("ReplicaSet", "web", {"replicas": 2}),
        _pod_of("web-x1a2b", "web"),
        _workload("Deployment", "api", {"replicas": 1}),
        _workload("StatefulSet", "db", {"replicas": 2, "serviceName": "db"}),
        _pod_of("db-0", "db", "StatefulSet"),
        _workload("Job", "done", {"parallelism": 2}, conditions=[{"type": "Complete", "status": "True"}]),
    ]
    return [*items, *extra]


def _no_clock(text: str) -> str:
    return re.sub(r"planned in [0-9.]+ s", "planned in - s", text)


def test_dump_writes_every_object_read_and_plans_as_the_live_read(tmp_path: Path) -> None:
    objects = _cluster()
    with serving(FakeApiServer(objects)) as fake:
        kubeconfig = str(fake.kubeconfig(tmp_path))
        dumped = runner.invoke(app, ["dump", "--kubeconfig", kubeconfig])
        assert dumped.exit_code == 0, dumped.stderr
        assert dumped.stderr == ""
        path = tmp_path / "cluster.yaml"
        path.write_text(dumped.stdout)
        runs = [
            (
                args,
                runner.invoke(app, [*args, "--kubeconfig", kubeconfig]),
                runner.invoke(app, [*args, str(path)]),
            )
            for args in (
                ["plan"],
                ["plan", "-o", "table"],
                ["plan", "-n", NS, "-o", "name"],
                ["plan", "--preempt", "-o", "name"],
                ["check"],
                ["validate"],
            )
        ]
    assert {r.method for r in fake.requests} == {"GET"}
    # The file: one List of every object served, each with its kind and apiVersion, as served.
    document = read_yaml(dumped.stdout)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    key = lambda o: (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])  # noqa: E731
    assert sorted(map(key, document["items"])) == sorted(map(key, objects))
    by_key = {key(o): o for o in objects}
    assert all(item == by_key[key(item)] for item in document["items"])
    assert {i["kind"] for i in document["items"]} == {k.kind for k in live.kinds_read()}
    # The plans: the same answer, the same exit code, from the file as from the cluster.
    assert [on_live.exit_code for _, on_live, _ in runs] == [2, 2, 2, 2, 0, 0]
    for args, on_live, on_file in runs:
        assert on_live.exit_code == on_file.exit_code, (args, on_live.stderr, on_file.stderr)
        assert _no_clock(on_live.stdout) == _no_clock(on_file.stdout), args
        assert "Traceback" not in on_live.stderr + on_file.stderr
    plan_live = runs[1][1]
    # What the workloads lack is planned, from the file as from the cluster: web-0 (the
    # ReplicaSet has one of two), api-0 (no ReplicaSet yet), db-1 (db-0 runs); the Job is done.
    for name in ("web-0", "api-0", "db-1"):
        assert f"{NS}/{name}" in plan_live.stdout
    assert f"{NS}/done-" not in plan_live.stdout and f"{NS}/web-1" not in plan_live.stdout
    assert "that workloads will create but have not yet" in runs[1][2].stderr


def test_dump_as_json_is_the_same_list(tmp_path: Path) -> None:
    with serving(FakeApiServer(_cluster())) as fake:
        kubeconfig = str(fake.kubeconfig(tmp_path))
        as_yaml = runner.invoke(app, ["dump", "--kubeconfig", kubeconfig])
        as_json = runner.invoke(app, ["dump", "--kubeconfig", kubeconfig, "-o", "json"])
    assert as_yaml.exit_code == as_json.exit_code == 0
    assert json.loads(as_json.stdout) == read_yaml(as_yaml.stdout)


def test_dump_of_an_empty_cluster_is_an_empty_list(tmp_path: Path) -> None:
    with serving(FakeApiServer([])) as fake:
        result = runner.invoke(app, ["dump", "--kubeconfig", str(fake.kubeconfig(tmp_path))])
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout) == {"apiVersion": "v1", "kind": "List", "items": []}


def test_dump_errors_are_one_line(tmp_path: Path) -> None:
    fake = FakeApiServer(_cluster(), errors={"pods": 403})
    with serving(fake):
        kubeconfig = str(fake.kubeconfig(tmp_path))
        result = runner.invoke(app, ["dump", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("context fake: cannot list pods (403 Forbidden: ")
    result = runner.invoke(app, ["dump", "--kubeconfig", kubeconfig])  # nobody listens now
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"cannot reach the API server {fake.url} (context fake): ")


def test_a_dumped_workload_is_planned_for_what_it_lacks_a_written_one_whole() -> None:
    """The loader, whatever reads the file: a workload with a uid (a cluster's) lacks what its
    pods in the same input do not cover; one without (written to ask "would it fit?") is
    expanded whole."""
    rs = _workload("ReplicaSet", "web", {"replicas": 3})
    mine = copy.deepcopy(rs)
    del mine["metadata"]["uid"]
    mine["metadata"]["name"] = "mine"
    documents = [
        ("dump.yaml", f"items[{i}]", d) for i, d in enumerate([rs, _pod_of("web-x1a2b", "web"), mine])
    ]
    objects, warnings = load_sourced([], documents)
    names = sorted(o.metadata.name for o, _ in objects if o.kind == "Pod")
    assert names == ["mine-0", "mine-1", "mine-2", "web-0", "web-1", "web-x1a2b"]
    assert warnings == [
        "dump.yaml: 2 pods that workloads will create but have not yet (named <workload>-<i>) are planned too"
    ]


def _kubectl_line() -> str:
    text = (ROOT / "docs" / "cli.md").read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("kubectl get ") and " -A -o yaml" in x]
    return line


def test_the_documented_kubectl_command_lists_exactly_the_kinds_read() -> None:
    """docs/cli.md's `kubectl get ... -A -o yaml` line: the kinds of `live.kinds_read()`, each by
    its full name (`deviceclasses.resource.k8s.io`: a CRD of the same short name — Kueue's
    `workloads` — is not taken for it), nothing else."""
    words = shlex.split(_kubectl_line())
    assert words[:2] == ["kubectl", "get"] and words[3:] == ["-A", "-o", "yaml", ">", "cluster.yaml"]
    listed = words[2].split(",")
    assert sorted(listed) == sorted(k.plural for k in live.kinds_read())
    assert len(listed) == len(set(listed))
