"""Reading a live cluster (issue #32): the same objects as a dump, page by page, GET only.

Every test talks to the in-process fake API server of `tests/fake_apiserver.py` through the
real `kubernetes` client (a kubeconfig with the fake's URL and a bearer token), so the client's
config loading and request path are what is tested; no test needs a cluster. The client is in
the `test` extra: under CI (`CI` set) its absence fails these tests, elsewhere they skip.
"""

from __future__ import annotations

import copy
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_solver.api import live
from dra_solver.api.cluster import Cluster
from dra_solver.api.load import load_sourced
from dra_solver.api.models import TypeMeta
from dra_solver.errors import ValidationErrors
from tests.fake_apiserver import DRA, SERVED_1_37, FakeApiServer, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"


@pytest.fixture(autouse=True)
def _client() -> None:
    """The kubernetes client: required under CI (it is in `[test]`), else skip without it."""
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - its absence must fail the run under CI
    else:
        pytest.importorskip("kubernetes")


def _dump_items() -> list[dict[str, Any]]:
    items = dump_items()
    assert len(items) > 20
    return items


def _by_identity(objects: list[TypeMeta]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(o.kind, o.metadata.namespace or "", o.metadata.name): o.dump() for o in objects}


def _read(fake: FakeApiServer, tmp_path: Path, **target: Any) -> live.LiveRead:
    return live.read(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path)), **target))


def test_a_live_read_loads_exactly_the_objects_of_a_dump(tmp_path: Path, monkeypatch: Any) -> None:
    """Served JSON through the loader = the same objects from `kubectl get -o yaml`; small pages
    so that every kind with more than two objects takes several requests."""
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    with serving(FakeApiServer(_dump_items())) as fake:
        got = _read(fake, tmp_path)
    live_objects, live_warnings = load_sourced([], got.documents)
    file_objects, file_warnings = load_sourced([DUMP])
    assert _by_identity([o for o, _ in live_objects]) == _by_identity([o for o, _ in file_objects])
    assert len(live_objects) == len(file_objects) == len(_dump_items())
    assert live_warnings == file_warnings == []
    # Within a kind the server's order is kept (first fit's order is the input's).
    pods = [o.metadata.name for o, _ in live_objects if o.kind == "Pod"]
    assert pods == [i["metadata"]["name"] for i in _dump_items() if i["kind"] == "Pod"]
    assert got.counts["Pod"] == 10 and got.counts["Node"] == 5 and got.counts["ResourceClaim"] == 8
    assert got.versions["ResourceSlice"] == "resource.k8s.io/v1"
    # Pages: 10 pods in pages of 2 are 5 requests, chained by the server's continue tokens.
    pod_requests = [r for r in fake.requests if r.path == "/api/v1/pods"]
    assert [r.query.get("continue", "") for r in pod_requests] == ["", "2", "4", "6", "8"]
    assert all(r.query["limit"] == "2" for r in pod_requests)
    assert {r.method for r in fake.requests} == {"GET"}
    assert got.requests == len(fake.requests)


def test_every_request_is_a_get_and_lists_are_cluster_wide(tmp_path: Path) -> None:
    """The read-only promise: the recorder saw GETs only, of discovery and list paths, every list
    across all namespaces (no namespace in any path)."""
    with serving(FakeApiServer(_dump_items())) as fake:
        _read(fake, tmp_path)
    assert fake.requests and all(r.method == "GET" for r in fake.requests)
    assert not any("/namespaces/" in r.path for r in fake.requests)
    listed = {r.path for r in fake.lists()}
    expected = {f"/api/v1/{r}" for r in ("namespaces", "nodes", "pods")} | {
        f"/apis/resource.k8s.io/v1/{r}" for r in DRA
    }
    # The first version the loader reads that the server serves (v1beta2 until the loader reads v1).
    expected |= {f"/apis/{live.API_VERSIONS['DeviceTaintRule'][0]}/devicetaintrules"}
    expected |= {"/apis/scheduling.k8s.io/v1/priorityclasses"}
    expected |= {f"/apis/scheduling.k8s.io/v1beta1/{r}" for r in ("workloads", "podgroups")}
    if "PodDisruptionBudget" in live.API_VERSIONS:  # read once the loader reads it
        expected |= {"/apis/policy/v1/poddisruptionbudgets"}
    # The workloads, for the pods they have not created yet (`live.workload_pods`).
    expected |= {f"/apis/apps/v1/{r}" for r in ("deployments", "replicasets", "statefulsets")}
    expected |= {"/apis/batch/v1/jobs"}
    assert listed == expected


def test_pages_of_500(tmp_path: Path) -> None:
    """1001 nodes: three requests of `limit=500`, the second and third with the server's token."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n-{i:04d}"}} for i in range(1001)]
    with serving(FakeApiServer(nodes)) as fake:
        got = _read(fake, tmp_path)
    requests = [r for r in fake.requests if r.path == "/api/v1/nodes"]
    assert [(r.query["limit"], r.query.get("continue")) for r in requests] == [
        ("500", None),
        ("500", "500"),
        ("500", "1000"),
    ]
    assert got.counts["Node"] == 1001
    assert [d["metadata"]["name"] for _, _, d in got.documents] == [f"n-{i:04d}" for i in range(1001)]


def test_items_get_the_kind_and_version_of_their_list_and_positions(tmp_path: Path) -> None:
    with serving(FakeApiServer(_dump_items())) as fake:
        got = _read(fake, tmp_path)
    source, position, doc = next(d for d in got.documents if d[2]["kind"] == "ResourceSlice")
    assert source == "context fake"
    assert position == "GET /apis/resource.k8s.io/v1/resourceslices items[0]"
    assert list(doc)[:2] == ["apiVersion", "kind"] and doc["apiVersion"] == "resource.k8s.io/v1"


def test_files_add_objects_to_the_live_state_and_a_duplicate_names_both(tmp_path: Path) -> None:
    items = _dump_items()
    with serving(FakeApiServer(items[:-1])) as fake:
        got = _read(fake, tmp_path)
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump(items[-1]))
    objects, _ = load_sourced([extra], got.documents)
    assert _by_identity([o for o, _ in objects]) == _by_identity([o for o, _ in load_sourced([DUMP])[0]])
    assert [s for o, s in objects if o.metadata.name == items[-1]["metadata"]["name"]] == [str(extra)]
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(items[0]))
    with pytest.raises(ValidationErrors) as exc:
        load_sourced([again], got.documents)
    (error,) = exc.value.errors
    assert "defined twice" in error.reason and "context fake (GET /apis/resource.k8s.io/v1/" in error.reason
    assert str(again) in error.reason


def _v1beta1(obj: dict[str, Any]) -> dict[str, Any]:
    """A resource.k8s.io/v1 object as v1beta1 writes it (devices wrap their fields in `basic`,
    a request's `exactly` fields are flat on the request), for a cluster without v1."""
    if not obj["apiVersion"].startswith("resource.k8s.io/"):
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = "resource.k8s.io/v1beta1"
    if obj["kind"] == "ResourceSlice":
        out["spec"]["devices"] = [
            {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
            for d in obj["spec"].get("devices", [])
        ]
    spec = out["spec"].get("spec", out["spec"]) if obj["kind"] == "ResourceClaimTemplate" else out["spec"]
    for request in spec.get("devices", {}).get("requests", []) if obj["kind"] != "ResourceSlice" else []:
        request.update(request.pop("exactly", {}))
    return out


def test_an_old_cluster_is_read_in_the_version_it_serves(tmp_path: Path) -> None:
    """resource.k8s.io/v1 not served: the objects are read as v1beta1 and converted by the loader,
    to the same objects as the v1 dump; a warning names what the server serves."""
    old = {**SERVED_1_37, "resource.k8s.io": {"v1beta1": DRA}}
    items = [_v1beta1(o) for o in _dump_items()]
    assert any(o["apiVersion"] == "resource.k8s.io/v1beta1" and o["kind"] == "ResourceSlice" for o in items)
    with serving(FakeApiServer(items, served=old)) as fake:
        got = _read(fake, tmp_path)
    assert got.versions["ResourceClaim"] == "resource.k8s.io/v1beta1"
    assert "DeviceTaintRule" in got.not_served
    assert got.warnings == [
        "context fake: the server does not serve resource.k8s.io/v1 for DeviceClass, ResourceSlice, "
        "ResourceClaimTemplate, ResourceClaim (it serves resource.k8s.io v1beta1): read as "
        "resource.k8s.io/v1beta1 and converted as a file in resource.k8s.io/v1beta1 is"
    ]
    objects, _ = load_sourced([], got.documents)
    assert _by_identity([o for o, _ in objects]) == _by_identity([o for o, _ in load_sourced([DUMP])[0]])
    assert not any(r.path.startswith("/apis/resource.k8s.io/v1/") for r in fake.requests)


def test_an_optional_kind_not_served_is_not_listed(tmp_path: Path) -> None:
    served = {**SERVED_1_37, "scheduling.k8s.io": {"v1": ["priorityclasses"]}}
    with serving(FakeApiServer(_dump_items(), served=served)) as fake:
        got = _read(fake, tmp_path)
    assert {"PodGroup", "Workload"} <= set(got.not_served)
    assert not any("podgroups" in r.path or "workloads" in r.path for r in fake.lists())
    assert got.warnings == []


def test_an_optional_kind_in_a_version_not_read_is_a_warning(tmp_path: Path) -> None:
    served = {**SERVED_1_37, "scheduling.k8s.io": {"v1": ["priorityclasses"], "v1alpha1": ["workloads"]}}
    with serving(FakeApiServer(_dump_items(), served=served)) as fake:
        got = _read(fake, tmp_path)
    assert got.warnings == [
        "context fake: the server serves workloads.scheduling.k8s.io only in scheduling.k8s.io/v1alpha1, "
        "which dra-solver does not read: any Workload there is left out"
    ]


def test_a_cluster_without_dra_is_one_error(tmp_path: Path) -> None:
    served = {g: v for g, v in SERVED_1_37.items() if g != "resource.k8s.io"}
    with serving(FakeApiServer(_dump_items(), served=served)) as fake:
        with pytest.raises(live.LiveError) as exc:
            _read(fake, tmp_path)
    assert str(exc.value) == (
        "context fake: the server does not serve the API group resource.k8s.io (is Dynamic Resource "
        "Allocation enabled on this cluster?); DeviceClass is read as resource.k8s.io v1, v1beta2, v1beta1"
    )


def test_a_dra_version_without_the_kind_is_one_error(tmp_path: Path) -> None:
    served = {**SERVED_1_37, "resource.k8s.io": {"v1alpha3": ["deviceclasses", "devicetaintrules"]}}
    with serving(FakeApiServer(_dump_items(), served=served)) as fake:
        with pytest.raises(live.LiveError, match=r"serves resource.k8s.io v1alpha3, but not deviceclasses"):
            _read(fake, tmp_path)


def test_403_names_every_kind_and_the_rbac_rule(tmp_path: Path) -> None:
    fake = FakeApiServer(_dump_items(), errors={"resourceslices": 403, "pods": 403})
    with serving(fake):
        with pytest.raises(ValidationErrors) as exc:
            _read(fake, tmp_path)
    lines = [e.message for e in exc.value.errors]
    assert len(lines) == 2
    assert lines[0].startswith("context fake: cannot list resourceslices.resource.k8s.io (403 Forbidden: ")
    assert lines[0].endswith(
        'e.g. a ClusterRole rule {apiGroups: ["resource.k8s.io"], resources: ["resourceslices"], '
        'verbs: ["get", "list"]}'
    )
    assert 'cannot list resource "pods"' in lines[1] and '{apiGroups: [""], resources: ["pods"]' in lines[1]
    assert all(r.method == "GET" for r in fake.requests)


def test_401_is_one_error(tmp_path: Path) -> None:
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path, token="wrong")
        with pytest.raises(live.LiveError) as exc:
            live.read(live.Target(kubeconfig=str(path)))
    assert str(exc.value) == (
        f"{fake.url} (context fake): 401 Unauthorized on list namespaces: the server does not accept "
        "these credentials (expired token or certificate? check the kubeconfig's user)"
    )
    assert "\n" not in str(exc.value)


def test_other_answers_are_one_error(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    monkeypatch.setattr(live, "_sleep", lambda seconds: None)
    fake = FakeApiServer(_dump_items(), errors={"/api/v1/nodes": 500})
    with serving(fake):
        with pytest.raises(live.LiveError) as exc:
            _read(fake, tmp_path)
    assert str(exc.value).startswith(
        f"cannot list nodes from the API server {fake.url} (context fake): 500 Internal Server Error: error; "
        "6 attempts in "
    )
    fake = FakeApiServer(_dump_items(), errors={"/api/v1/nodes": 404})
    with serving(fake):
        with pytest.raises(live.LiveError, match=r"^context fake: GET /api/v1/nodes: 404 the server could"):
            _read(fake, tmp_path)
    fake = FakeApiServer(_dump_items(), expire_continue=True)
    with serving(fake):
        with pytest.raises(live.LiveError, match=r"list of nodes changed too much .* \(410 Gone"):
            _read(fake, tmp_path)


def test_an_unreachable_server_is_named(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fake = FakeApiServer([])
    fake.port = port  # nothing listens there any more
    with pytest.raises(live.LiveError) as exc:
        _read(fake, tmp_path)
    assert str(exc.value).startswith(f"cannot reach the API server http://127.0.0.1:{port} (context fake): ")
    assert str(exc.value).endswith("(context fake): Connection refused")


def test_contexts(tmp_path: Path) -> None:
    with serving(FakeApiServer(_dump_items())) as fake:
        assert _read(fake, tmp_path, context="other").source == "context other"
        with pytest.raises(live.LiveError) as exc:
            _read(fake, tmp_path, context="nope")
    assert str(exc.value) == f"--context nope: not in {tmp_path / 'kubeconfig'} (contexts: fake, other)"


def test_the_config_is_resolved_as_kubectl_does(tmp_path: Path, monkeypatch: Any) -> None:
    """KUBECONFIG (a list: missing files skipped), else ~/.kube/config, else in-cluster."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    with pytest.raises(live.LiveError, match=r"^no cluster to read: no --kubeconfig, KUBECONFIG is not set"):
        live.read(live.Target())
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path)
        monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}{os.pathsep}{path}")
        assert live.read(live.Target()).counts["Pod"] == 10
        monkeypatch.delenv("KUBECONFIG")
        (tmp_path / ".kube").mkdir()
        path.rename(tmp_path / ".kube" / "config")
        assert live.read(live.Target()).source == "context fake"
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(live.LiveError, match=r"^KUBECONFIG=.*missing: none of its files exists$"):
        live.read(live.Target())
    with pytest.raises(live.LiveError, match=r"^--kubeconfig /nonexistent: no such file$"):
        live.read(live.Target(kubeconfig="/nonexistent"))


def test_the_kubeconfig_is_never_written(tmp_path: Path) -> None:
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path)
        before = path.read_bytes(), path.stat().st_mtime_ns
        live.read(live.Target(kubeconfig=str(path)))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_without_the_client_one_line_says_how_to_install_it(monkeypatch: Any) -> None:
    """Runs whether or not the client is installed: an import that fails is simulated."""
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(live.LiveError) as exc:
        live.read(live.Target(kubeconfig="/nonexistent"))
    assert str(exc.value) == (
        "reading a live cluster needs the kubernetes Python client: pip install 'dra-solver[live]'"
    )


def test_rbac_rules_cover_every_kind_read() -> None:
    rules = live.rbac_rules()
    assert all(r["verbs"] == ["get", "list"] for r in rules)
    listed = {(g, res) for r in rules for g in r["apiGroups"] for res in r["resources"]}
    assert listed == {(k.group, k.resource) for k in live.kinds_read()}
    assert ("resource.k8s.io", "resourceslices") in listed and ("", "pods") in listed


def test_the_cluster_of_a_live_read_plans_like_the_dump(tmp_path: Path) -> None:
    from dra_solver.pipeline import plan
    from dra_solver.planning.job import Options

    with serving(FakeApiServer(_dump_items())) as fake:
        got = _read(fake, tmp_path)
    options = Options.of(allocator="reference")
    from_live = plan(Cluster.from_objects(d for _, _, d in got.documents), options=options)
    from_file = plan(Cluster.from_paths([DUMP]), options=options)
    assert [(p.name, p.node, p.placed) for p in from_live.pods] == [
        (p.name, p.node, p.placed) for p in from_file.pods
    ]
    assert sum(p.placed for p in from_live.pods) == 7


def test_a_device_taint_rule_served_as_v1_is_read(tmp_path: Path) -> None:
    """Issue #32 §3: a server that serves DeviceTaintRule only as resource.k8s.io/v1."""
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-gpu-0", "resourceVersion": "7", "uid": "0d4c"},
        "spec": {
            "deviceSelector": {"driver": "gpu.nvidia.com", "device": "gpu-0"},
            "taint": {"key": "maintenance", "effect": "NoSchedule"},
        },
    }
    served = {**SERVED_1_37, "resource.k8s.io": {"v1": [*DRA, "devicetaintrules"]}}
    with serving(FakeApiServer([*_dump_items(), rule], served=served)) as fake:
        got = _read(fake, tmp_path)
    assert got.versions["DeviceTaintRule"] == "resource.k8s.io/v1" and got.counts["DeviceTaintRule"] == 1
    cluster = Cluster.from_objects(d for _, _, d in got.documents)
    taint = cluster.taint_rules["drain-gpu-0"]
    assert taint.converted_from == "resource.k8s.io/v1" and taint.spec.taint.key == "maintenance"


def test_the_documented_cluster_role_is_what_a_read_needs() -> None:
    """docs/input-formats.md's ClusterRole grants get and list on exactly the kinds read (a kind
    the loader starts to read, PodDisruptionBudget say, must be added there too)."""
    text = (ROOT / "docs" / "input-formats.md").read_text()
    (block,) = [b for b in text.split("```yaml\n")[1:] if "kind: ClusterRole" in b.split("```")[0]]
    role = yaml.safe_load(block.split("```")[0])
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert all(rule["verbs"] == ["get", "list"] for rule in role["rules"])
    assert granted == {(k.group, k.resource) for k in live.kinds_read()}


def test_a_tls_failure_is_one_line(tmp_path: Path) -> None:
    """https to a server that speaks plain HTTP: the handshake fails; one line names the server."""
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path)
        config = yaml.safe_load(path.read_text())
        config["clusters"][0]["cluster"] = {
            "server": f"https://127.0.0.1:{fake.port}",
            "insecure-skip-tls-verify": True,
        }
        path.write_text(yaml.safe_dump(config))
        with pytest.raises(live.LiveError) as exc:
            live.read(live.Target(kubeconfig=str(path)))
    message = str(exc.value)
    assert message.startswith(f"cannot reach the API server https://127.0.0.1:{fake.port} (context fake): ")
    assert "\n" not in message and "SSL" in message


def test_a_failing_credential_plugin_is_part_of_the_one_line(tmp_path: Path, capfd: Any) -> None:
    """An exec plugin that fails: the client logs it and sends no token; the 401 line ends in
    what the client said, and nothing else reaches stderr."""
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path)
        config = yaml.safe_load(path.read_text())
        plugin = {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "false",
            "interactiveMode": "Never",
        }
        config["users"][0]["user"] = {"exec": plugin}
        path.write_text(yaml.safe_dump(config))
        with pytest.raises(live.LiveError) as exc:
            live.read(live.Target(kubeconfig=str(path)))
    assert str(exc.value).startswith(f"{fake.url} (context fake): 401 Unauthorized on list namespaces")
    assert str(exc.value).endswith("(the kubernetes client said: exec: process returned 1)")
    assert capfd.readouterr().err == ""


def test_a_kubeconfig_without_a_current_context(tmp_path: Path) -> None:
    """kubectl reads it with --context; without, one line lists the contexts."""
    with serving(FakeApiServer(_dump_items())) as fake:
        path = fake.kubeconfig(tmp_path)
        config = yaml.safe_load(path.read_text())
        del config["current-context"]
        path.write_text(yaml.safe_dump(config))
        assert live.read(live.Target(kubeconfig=str(path), context="other")).counts["Pod"] == 10
        with pytest.raises(live.LiveError) as exc:
            live.read(live.Target(kubeconfig=str(path)))
    assert str(exc.value) == f"kubeconfig {path}: no current-context; give --context (contexts: fake, other)"
