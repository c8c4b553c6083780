"""An in-process fake Kubernetes API server for the live-read tests (issue #32).

Why our own: no test may need a real cluster, and what the tests must prove — pages of
`limit` objects chained by `continue`, discovery of the served versions, 401/403/404/410,
and that every request was a GET — is a small part of the API: stdlib `http.server` in a
thread serves it. Objects are served as a real server serves a list: `{kind: <Kind>List,
apiVersion, metadata: {resourceVersion, continue}, items}`, the items without their own
kind and apiVersion. The server does not convert: an object is served in the version it is
written in, so a test of an old cluster gives objects in that cluster's version.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

PLURALS = {
    "Namespace": "namespaces",
    "Node": "nodes",
    "Pod": "pods",
    "PriorityClass": "priorityclasses",
    "DeviceClass": "deviceclasses",
    "ResourceSlice": "resourceslices",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "PodGroup": "podgroups",
    "Workload": "workloads",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "Deployment": "deployments",
}
NAMESPACED = {"Pod", "ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Workload", "PodDisruptionBudget"}
DRA = ["deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"]

SERVED_1_37: dict[str, dict[str, list[str]]] = {
    "resource.k8s.io": {
        "v1": [*DRA, "devicetaintrules"],
        "v1beta2": [*DRA, "devicetaintrules"],
        "v1beta1": DRA,
    },
    "scheduling.k8s.io": {"v1": ["priorityclasses"], "v1beta1": ["workloads", "podgroups"]},
    "policy": {"v1": ["poddisruptionbudgets"]},
    "apps": {"v1": ["deployments", "replicasets", "statefulsets", "daemonsets"]},
}
"""What a Kubernetes 1.37 server serves of the groups the reader asks about (the default)."""

TOKEN = "fake-token"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str


@dataclass
class FakeApiServer:
    """Serves `objects` (dicts with apiVersion and kind) as list responses.

    `served`: group -> version -> resources (the discovery documents); `errors`: a path or a
    resource plural -> the HTTP status to answer with instead (401, 403, 404, 500, ...);
    `expire_continue`: answer 410 Gone to any request with a `continue` token."""

    objects: list[dict[str, Any]]
    served: dict[str, dict[str, list[str]]] = field(default_factory=lambda: SERVED_1_37)
    errors: dict[str, int] = field(default_factory=dict)
    expire_continue: bool = False
    requests: list[Request] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kubeconfig(self, directory: Path, context: str = "fake", token: str = TOKEN) -> Path:
        """A kubeconfig file whose current context is this server, with a bearer token."""
        path = directory / "kubeconfig"
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                    "users": [{"name": "fake", "user": {"token": token}}],
                    "contexts": [
                        {"name": context, "context": {"cluster": "fake", "user": "fake"}},
                        {"name": "other", "context": {"cluster": "fake", "user": "fake"}},
                    ],
                    "current-context": context,
                }
            )
        )
        return path

    def lists(self) -> list[Request]:
        """The list requests (not discovery)."""
        return [r for r in self.requests if r.path.count("/") >= (3 if r.path.startswith("/api/") else 4)]

    # --- answering ------------------------------------------------------------------------

    def answer(self, method: str, target: str, authorization: str) -> tuple[int, Any]:
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        self.requests.append(Request(method, path, query, authorization))
        if method != "GET":
            return 405, _status(405, f"{method} is not allowed: this server is read-only")
        if authorization != f"Bearer {TOKEN}":
            return 401, _status(401, "Unauthorized")
        segments = [s for s in path.split("/") if s]
        resource = segments[-1] if segments else ""
        for key in (path, resource):
            if key in self.errors:
                code = self.errors[key]
                return code, _status(code, _reason(code, resource))
        if path == "/apis":
            groups = [_group(g, versions) for g, versions in self.served.items()]
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        if segments[:1] == ["apis"] and len(segments) == 2:
            versions = self.served.get(segments[1])
            if versions is None:
                return 404, _status(404, "the server could not find the requested resource")
            return 200, _group(segments[1], versions)
        if segments[:1] == ["apis"] and len(segments) == 3:
            resources = self.served.get(segments[1], {}).get(segments[2])
            if resources is None:
                return 404, _status(404, "the server could not find the requested resource")
            return 200, {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{segments[1]}/{segments[2]}",
                "resources": [
                    {
                        "name": r,
                        "namespaced": _kind_of(r) in NAMESPACED,
                        "kind": _kind_of(r),
                        "verbs": ["get", "list"],
                    }
                    for r in resources
                ]
                + [
                    {"name": f"{r}/status", "namespaced": False, "kind": _kind_of(r), "verbs": ["get"]}
                    for r in resources
                ],
            }
        if segments[:2] == ["api", "v1"] and len(segments) == 3:
            return self._list("v1", resource, query)
        if segments[:1] == ["apis"] and len(segments) == 4:
            group_version = f"{segments[1]}/{segments[2]}"
            if resource not in self.served.get(segments[1], {}).get(segments[2], []):
                return 404, _status(404, "the server could not find the requested resource")
            return self._list(group_version, resource, query)
        return 404, _status(404, "the server could not find the requested resource")

    def _list(self, api_version: str, resource: str, query: dict[str, str]) -> tuple[int, Any]:
        if "continue" in query and self.expire_continue:
            return 410, _status(410, "The provided continue parameter is too old")
        items = [
            {k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
            for o in self.objects
            if PLURALS[o["kind"]] == resource and o["apiVersion"] == api_version
        ]
        start = int(query.get("continue", "0") or 0)
        limit = int(query.get("limit", "0") or 0)
        end = start + limit if limit else len(items)
        meta: dict[str, Any] = {"resourceVersion": "12345"}
        if end < len(items):
            meta["continue"] = str(end)
            meta["remainingItemCount"] = len(items) - end
        kind = _kind_of(resource)
        return 200, {
            "kind": f"{kind}List",
            "apiVersion": api_version,
            "metadata": meta,
            "items": items[start:end],
        }


def _kind_of(resource: str) -> str:
    return next((k for k, r in PLURALS.items() if r == resource), resource)


def _group(name: str, versions: dict[str, list[str]]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": listed,
        "preferredVersion": listed[0],
    }


def _reason(code: int, resource: str) -> str:
    if code == 403:
        return (
            f'{resource} is forbidden: User "system:serviceaccount:default:planner" cannot list resource '
            f'"{resource}" at the cluster scope'
        )
    return {401: "Unauthorized", 404: "the server could not find the requested resource"}.get(code, "error")


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeApiServer

    def _serve(self) -> None:
        code, body = self.fake.answer(self.command, self.path, self.headers.get("Authorization", ""))
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the tests read the recorder, not the log."""


@contextmanager
def serving(fake: FakeApiServer) -> Iterator[FakeApiServer]:
    """Run `fake` on a free local port for the duration of the block."""
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
