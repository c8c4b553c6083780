"""A live cluster's workloads (issue #32): read, and planned for the pods they lack only.

On a cluster a Deployment's, ReplicaSet's, StatefulSet's or Job's pods exist already, as Pods;
what a plan must add is what their controllers have still to create (`live.workload_pods`).
One test per rule of that count, then: the pages and errors of any other kind (403 names the
kind and the rule; a kind not served is skipped with a note), and the answer of `plan` on the
live cluster equals `plan` on the dump plus the lacking replicas given as a FILE.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from dra_solver.api import live
from dra_solver.cli.main import app
from dra_solver.errors import ValidationErrors
from tests.fake_apiserver import SERVED_1_37, FakeApiServer, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
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
NS = "ml-training"


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


def _workload(kind: str, name: str, spec: dict[str, Any], **status: Any) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    obj: dict[str, Any] = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {**spec, "template": copy.deepcopy(TEMPLATE)},
    }
    if status:
        obj["status"] = status
    return obj


def _pod(name: str, owner: str | None, phase: str | None = None, node: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
            }
        ]
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}}
    pod["spec"]["containers"] = [{"name": "c", "image": "busybox"}]
    if node:
        pod["spec"]["nodeName"] = node
    if phase:
        pod["status"] = {"phase": phase}
    return pod


def _lacking(workloads: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[str]:
    got = live.workload_pods(
        [("ctx", f"w{i}", w) for i, w in enumerate(workloads)],
        [("ctx", f"p{i}", p) for i, p in enumerate(pods)],
        "ctx",
    )
    return [doc["metadata"]["name"] for _, _, doc in got]


def test_a_replicaset_lacks_its_replicas_less_its_active_pods() -> None:
    rs = _workload("ReplicaSet", "web", {"replicas": 4})
    pods = [
        _pod("web-x1a2b", "web", "Running", node="n1"),
        _pod("web-q9z8w", "web"),  # pending: active
        _pod("web-done1", "web", "Succeeded"),  # finished: not active
        _pod("other-1", "other"),  # another controller's
    ]
    assert _lacking([rs], pods) == ["web-0", "web-1"]


def test_a_pod_being_deleted_is_not_active() -> None:
    rs = _workload("ReplicaSet", "web", {"replicas": 1})
    going = _pod("web-x1a2b", "web", "Running", node="n1")
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert _lacking([rs], [going]) == ["web-0"]


def test_a_replicaset_with_all_its_pods_lacks_none() -> None:
    rs = _workload("ReplicaSet", "web", {"replicas": 2})
    assert _lacking([rs], [_pod("web-a", "web"), _pod("web-b", "web", "Running", node="n1")]) == []


def test_a_deployment_with_a_replicaset_is_left_to_it() -> None:
    deployment = _workload("Deployment", "api", {"replicas": 3})
    rs = _workload("ReplicaSet", "api-5d8f", {"replicas": 3})
    rs["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "uid-api", "controller": True}
    ]
    assert _lacking([deployment, rs], []) == ["api-5d8f-0", "api-5d8f-1", "api-5d8f-2"]


def test_a_deployment_without_a_replicaset_lacks_its_replicas_unless_paused() -> None:
    assert _lacking([_workload("Deployment", "api", {"replicas": 2})], []) == ["api-0", "api-1"]
    assert _lacking([_workload("Deployment", "api", {"replicas": 2, "paused": True})], []) == []


def test_a_statefulset_lacks_its_missing_ordinals_by_name() -> None:
    sts = _workload("StatefulSet", "db", {"replicas": 3})
    assert _lacking([sts], [_pod("db-1", None, "Running", node="n1")]) == ["db-0", "db-2"]


def test_a_statefulset_counts_ordinals_from_its_start() -> None:
    sts = _workload("StatefulSet", "db", {"replicas": 2, "ordinals": {"start": 5}})
    assert _lacking([sts], [_pod("db-5", None)]) == ["db-6"]


def test_a_job_runs_parallelism_capped_by_the_completions_to_go() -> None:
    job = _workload("Job", "train", {"parallelism": 4, "completions": 5}, succeeded=3)
    running = _pod("train-abcde", None)
    running["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-train", "controller": True}
    ]
    assert _lacking([job], [running]) == ["train-0"]  # min(4, 5 - 3) - 1


def test_a_suspended_or_finished_job_lacks_none() -> None:
    assert _lacking([_workload("Job", "train", {"parallelism": 2, "suspend": True})], []) == []
    done = _workload("Job", "train", {"parallelism": 2}, conditions=[{"type": "Complete", "status": "True"}])
    assert _lacking([done], []) == []
    # A work-queue Job (no completions) starts no pod once one succeeded.
    assert _lacking([_workload("Job", "train", {"parallelism": 2}, succeeded=1)], []) == []
    assert _lacking([_workload("Job", "train", {"parallelism": 2})], []) == ["train-0", "train-1"]


def _items() -> list[dict[str, Any]]:
    return dump_items()


def test_workloads_are_listed_in_pages_and_not_loaded_themselves(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    workloads = [_workload("ReplicaSet", f"rs-{i}", {"replicas": 0}) for i in range(5)]
    workloads.append(_workload("Job", "probe", {"parallelism": 1}))
    with serving(FakeApiServer([*_items(), *workloads])) as fake:
        got = live.read(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))
    assert got.counts["ReplicaSet"] == 5 and got.counts["Job"] == 1
    rs_lists = [r for r in fake.lists() if r.path == "/apis/apps/v1/replicasets"]
    assert len(rs_lists) == 3 and all(r.query["limit"] == "2" for r in rs_lists)
    kinds = {d["kind"] for _, _, d in got.documents}
    assert not kinds & {"ReplicaSet", "Job", "Deployment", "StatefulSet"}
    (probe,) = [d for _, _, d in got.documents if d["metadata"]["name"] == "probe-0"]
    assert probe["kind"] == "Pod" and probe["metadata"]["ownerReferences"][0]["uid"] == "uid-probe"
    assert any("1 pod that workloads will create but have not yet" in w for w in got.warnings)
    assert {r.method for r in fake.requests} == {"GET"}


def test_a_workload_kind_not_served_is_skipped_with_a_note(tmp_path: Path) -> None:
    served = {g: v for g, v in SERVED_1_37.items() if g not in ("apps", "batch")}
    with serving(FakeApiServer(_items(), served=served)) as fake:
        got = live.read(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))
    assert {"Deployment", "ReplicaSet", "StatefulSet", "Job"} <= set(got.not_served)
    assert "context fake: the server does not serve jobs.batch: no Job read" in got.warnings
    assert got.counts["Pod"] > 0


def test_403_on_a_workload_kind_names_it_and_the_rule(tmp_path: Path) -> None:
    fake = FakeApiServer(_items(), errors={"jobs": 403})
    with serving(fake), pytest.raises(ValidationErrors) as exc:
        live.read(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))
    (line,) = [e.message for e in exc.value.errors]
    assert line.startswith("context fake: cannot list jobs.batch (403 Forbidden: ")
    assert line.endswith('{apiGroups: ["batch"], resources: ["jobs"], verbs: ["get", "list"]}')


def test_plan_on_live_workloads_equals_plan_on_the_dump_plus_what_they_lack(tmp_path: Path) -> None:
    """A ReplicaSet of 3 with one pod pending on the cluster lacks 2: the live plan is the
    dump's plan with a ReplicaSet of 2 given as a FILE."""
    rs = _workload("ReplicaSet", "probe", {"replicas": 3})
    mine = _pod("probe-zx7kq", "probe")
    mine["spec"] = copy.deepcopy(TEMPLATE["spec"])
    mine["spec"]["resourceClaims"] = []
    mine["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    lacking = copy.deepcopy(rs)
    del lacking["metadata"]["uid"]
    lacking["spec"]["replicas"] = 2
    (tmp_path / "rs.yaml").write_text(yaml.safe_dump_all([mine, lacking]))
    with serving(FakeApiServer([*_items(), rs, mine])) as fake:
        kubeconfig = str(fake.kubeconfig(tmp_path))
        on_live = runner.invoke(app, ["plan", "--kubeconfig", kubeconfig, "-o", "table"])
    on_file = runner.invoke(app, ["plan", str(DUMP), str(tmp_path / "rs.yaml"), "-o", "table"])
    assert on_live.exit_code == on_file.exit_code == 2, (on_live.stderr, on_file.stderr)

    def no_clock(text: str) -> str:
        return re.sub(r"planned in [0-9.]+ s", "planned in - s", text)

    assert no_clock(on_live.stdout) == no_clock(on_file.stdout)
    assert "ml-training/probe-1" in on_live.stdout and "ml-training/probe-2" not in on_live.stdout
