"""Optional: a real API server, from `kind` (issue #32). Skipped unless a `kind` binary (and so a
container runtime) and `kubectl` are on PATH; neither is in `[test]` nor on CI's machine.

How to run it: install kind and docker, then `.venv/bin/pytest tests/test_live_kind.py` (a few
minutes: it creates the cluster `dra-solver-live-test` and deletes it at the end). The node
image must be Kubernetes 1.32 or later (resource.k8s.io served; 1.34+ serves v1).

What it checks: the dra-example-driver's shapes — its DeviceClass and one node's ResourceSlice
of eight GPUs, published by hand (no driver runs: the scheduler allocates from the slice all
the same) — and ten pods of one GPU each. The scheduler places eight; two stay pending. Then
`plan --kubeconfig` must answer what `plan` answers on `kubectl get ... -o yaml` of the same
cluster, and the cluster must be unchanged by the plan (read-only).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from dra_solver.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
NAME = "dra-solver-live-test"
NODE = f"{NAME}-control-plane"
KINDS = (
    "namespaces,nodes,priorityclasses,deviceclasses,resourceslices,resourceclaimtemplates,resourceclaims,pods"
)

pytestmark = pytest.mark.skipif(
    shutil.which("kind") is None or shutil.which("kubectl") is None,
    reason="needs the kind and kubectl binaries (see the module docstring)",
)


def _run(*args: str, stdin: str | None = None) -> str:
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=True, timeout=600).stdout


def _bare(obj: dict[str, Any]) -> dict[str, Any]:
    """An object of the dump without what the server sets (uid, resourceVersion, ...)."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    out["metadata"] = {k: meta[k] for k in ("name", "namespace", "labels") if k in meta}
    out.pop("status", None)
    return out


def _objects() -> list[dict[str, Any]]:
    items = yaml.safe_load(DUMP.read_text())["items"]
    cls = next(i for i in items if i["kind"] == "DeviceClass" and i["metadata"]["name"] == "gpu.example.com")
    sl = next(i for i in items if i["kind"] == "ResourceSlice" and i["spec"]["driver"] == "gpu.example.com")
    template = next(
        i for i in items if i["kind"] == "ResourceClaimTemplate" and i["metadata"]["name"] == "single-gpu"
    )
    slice_ = _bare(sl)
    slice_["spec"]["nodeName"] = NODE
    slice_["spec"]["pool"]["name"] = NODE
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod{i}", "namespace": "gpu-test1"},
            "spec": {
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.9",
                        "resources": {"claims": [{"name": "gpu"}]},
                    }
                ],
            },
        }
        for i in range(10)
    ]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-test1"}}
    return [namespace, _bare(cls), slice_, _bare(template), *pods]


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("kind") / "kubeconfig"
    _run("kind", "create", "cluster", "--name", NAME, "--kubeconfig", str(path), "--wait", "120s")
    try:
        kubectl = ("kubectl", "--kubeconfig", str(path))
        _run(*kubectl, "apply", "-f", "-", stdin=yaml.safe_dump_all(_objects()))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            pods = yaml.safe_load(_run(*kubectl, "get", "pods", "-n", "gpu-test1", "-o", "yaml"))["items"]
            if sum(1 for p in pods if p["spec"].get("nodeName")) == 8:
                break
            time.sleep(3)
        else:
            pytest.fail("the scheduler did not place 8 of the 10 pods within 5 minutes")
        yield path
    finally:
        _run("kind", "delete", "cluster", "--name", NAME)


def test_plan_on_kind_equals_plan_on_its_dump(kubeconfig: Path, tmp_path: Path) -> None:
    kubectl = ("kubectl", "--kubeconfig", str(kubeconfig))
    dump = tmp_path / "dump.yaml"
    dump.write_text(_run(*kubectl, "get", KINDS, "-A", "-o", "yaml"))
    runner = CliRunner()
    on_live = runner.invoke(app, ["plan", "--kubeconfig", str(kubeconfig), "-o", "json"])
    on_file = runner.invoke(app, ["plan", str(dump), "-o", "json"])
    assert on_live.exit_code == on_file.exit_code == 2, (on_live.stderr, on_file.stderr)
    annotations = [yaml.safe_load(r.stdout)["metadata"]["annotations"] for r in (on_live, on_file)]
    assert annotations[0] == annotations[1]
    assert annotations[0]["dra-solver.io/placed"] == "0" and annotations[0]["dra-solver.io/pods"] == "2"
    after = tmp_path / "after.yaml"
    after.write_text(_run(*kubectl, "get", KINDS, "-A", "-o", "yaml"))
    assert _pods_and_claims(after) == _pods_and_claims(dump), "a live read changed the cluster"


def _pods_and_claims(path: Path) -> set[tuple[str, str, str]]:
    items = yaml.safe_load(path.read_text())["items"]
    return {
        (i["kind"], i["metadata"].get("namespace", ""), i["metadata"]["name"])
        for i in items
        if i["kind"] in ("Pod", "ResourceClaim")
    }
