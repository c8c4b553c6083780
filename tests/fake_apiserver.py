"""An in-process fake Kubernetes API server for the live-read tests (issue #32).

Why our own: no test may need a real cluster, and what the tests must prove — pages of
`limit` objects chained by `continue`, discovery of the served versions, 401/403/404/410,
and that every request was a GET — is a small part of the API: stdlib `http.server` in a
thread serves it. Objects are served as a real server serves a list: `{kind: <Kind>List,
apiVersion, metadata: {resourceVersion, continue}, items}`, the items without their own
kind and apiVersion. The server does not convert: an object is served in the version it is
written in, so a test of an old cluster gives objects in that cluster's version.

Watches (`?watch=true`, for `plan --watch`) are served as a real server serves them: a chunked
answer of JSON lines `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": ...}`, from the
resourceVersion asked for. A test changes the cluster with `publish` (each change gets the next
resourceVersion, as etcd's revision), sends a `bookmark`, makes every older resourceVersion
`expire` (a watch from one gets `ERROR` 410 Gone, as after etcd's compaction) or `drop`s the
open watch connections (cut mid-answer, as a load balancer does).

Faults, for the live read's retries and limits (issue #39): `faults` maps a path or a resource
plural to what its next requests get instead of the answer, one `Fault` per request in order
(None: the answer) — a status with headers (429 and `Retry-After`), a connection closed without
an answer or in the middle of the body, an answer that comes late or trickles. A `Raw` object is
served as the text it holds (an item that is not valid JSON). `serving(fake, tls=...)` speaks
HTTPS with the given context; a client certificate the context verifies authenticates as a
bearer token does, as the API server's x509 authenticator. Every request is recorded with its
headers (the User-Agent), the client certificate's subject and the number of items answered.
"""

from __future__ import annotations

import copy
import functools
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from yaml_text import read_yaml

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
    "ReplicaSet": "replicasets",
    "StatefulSet": "statefulsets",
    "Job": "jobs",
}
NAMESPACED = {
    "Pod",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "PodGroup",
    "Workload",
    "PodDisruptionBudget",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
}
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
    "batch": {"v1": ["jobs", "cronjobs"]},
}
"""What a Kubernetes 1.37 server serves of the groups the reader asks about (the default)."""

TOKEN = "fake-token"

DUMP = Path(__file__).resolve().parent.parent / "docs" / "examples" / "cluster-dump.yaml"
"""The example cluster the live tests serve (`dump_items`)."""


def dump_items() -> list[dict[str, Any]]:
    """The items of `DUMP`, a copy of their own for each caller (tests and the fake change what
    they are given).

    Why: PyYAML's `safe_load` (pure Python) takes about 0.2 CPU s over the dump, and the live and
    watch tests read it in nearly every test, some several times: about 70 reads, over 10 CPU s
    of the suite. Parsed once per test process (`read_yaml`), a read is a deep copy (a few ms);
    the file is the same for the whole run."""
    return copy.deepcopy(_parsed_dump())


@functools.cache
def _parsed_dump() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = read_yaml(DUMP.read_text())["items"]
    return items


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str
    headers: dict[str, str] = field(default_factory=dict)
    """Every header of the request, by its lower-case name."""
    client: str = ""
    """The common name of the client certificate the TLS handshake verified ("" without one)."""
    items: int | None = None
    """How many objects a list answer held (None: not a list answer)."""
    size: int = 0
    """The answer body's length in bytes."""
    at: float = 0.0
    """When it arrived (`time.monotonic()`)."""


@dataclass(frozen=True)
class Fault:
    """What one request gets instead of its answer."""

    status: int = 0
    """Answer with this status (and a Status body), not the list."""
    headers: dict[str, str] = field(default_factory=dict)
    """Headers of that answer (`Retry-After`)."""
    message: str = ""
    """The Status body's message (default: the status's usual words)."""
    drop: bool = False
    """Close the connection without an answer (a load balancer, a restarting server)."""
    truncate: bool = False
    """Send the headers and half the body, then close: the body ends early."""
    delay: float = 0.0
    """Seconds to wait before answering (with the answer, or with the fault's status)."""
    trickle: float = 0.0
    """Seconds to wait between two bytes of the body (a server that answers, but slowly)."""


@dataclass(frozen=True)
class Raw:
    """An object served as `text`, verbatim, among its list's items (malformed JSON)."""

    kind: str
    apiVersion: str  # noqa: N815 - the field it stands for
    text: str

    def get(self, key: str, default: Any = None) -> Any:
        return {"kind": self.kind, "apiVersion": self.apiVersion}.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return {"kind": self.kind, "apiVersion": self.apiVersion}[key]


@dataclass
class FakeApiServer:
    """Serves `objects` (dicts with apiVersion and kind) as list responses.

    `served`: group -> version -> resources (the discovery documents); `errors`: a path or a
    resource plural -> the HTTP status to answer with instead (401, 403, 404, 500, ...);
    `expire_continue`: answer 410 Gone to any request with a `continue` token."""

    objects: list[dict[str, Any]]
    served: dict[str, dict[str, list[str]]] = field(default_factory=lambda: SERVED_1_37)
    errors: dict[str, int] = field(default_factory=dict)
    watch_errors: dict[str, int] = field(default_factory=dict)
    """A resource plural -> the HTTP status to answer its watch requests with (its lists are served)."""
    expire_continue: bool = False
    faults: dict[str, list[Fault | None]] = field(default_factory=dict)
    """A path or a resource plural -> what its next requests get, one entry per request (None:
    the answer); once the entries are used up, the answers."""
    client_cn: str = "planner"
    """The common name of a client certificate that authenticates (under TLS)."""
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    scheme: str = "http"
    version: int = 12345
    """The current resourceVersion (etcd's revision): lists are of it, changes advance it."""
    log: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    """(resourceVersion, resource, event type, object) of every change and bookmark."""
    compacted: int = 0
    """A watch from a resourceVersion below this is answered 410 Gone."""
    dropped: int = 0
    """Bumped by `drop`: every watch answer open then is cut."""
    closed: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)
    _cache: dict[tuple[str, str, int, int, int], list[str]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def kubeconfig(
        self,
        directory: Path,
        context: str = "fake",
        token: str | None = TOKEN,
        cluster: dict[str, Any] | None = None,
        user: dict[str, Any] | None = None,
    ) -> Path:
        """A kubeconfig file whose current context is this server, with a bearer token; `cluster`
        and `user`: more fields of its cluster (a CA) and user (a client certificate)."""
        path = directory / "kubeconfig"
        credentials = {**({"token": token} if token is not None else {}), **(user or {})}
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url, **(cluster or {})}}],
                    "users": [{"name": "fake", "user": credentials}],
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
        """The list requests (not discovery, not watches)."""
        return [
            r
            for r in self.requests
            if r.path.count("/") >= (3 if r.path.startswith("/api/") else 4) and "watch" not in r.query
        ]

    def watches(self) -> list[Request]:
        """The watch requests."""
        return [r for r in self.requests if r.query.get("watch") == "true"]

    # --- changing the cluster (watches) ------------------------------------------------------

    def publish(self, type_: str, obj: dict[str, Any]) -> int:
        """ADDED, MODIFIED or DELETED `obj` (with apiVersion and kind): the served objects
        change and open watches of its kind get the event; returns its resourceVersion."""
        key = _key(obj)
        with self.changed:
            self.version += 1
            stamped = {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": str(self.version)}}
            kept = [o for o in self.objects if _key(o) != key]
            if type_ == "ADDED" and len(kept) != len(self.objects):
                raise ValueError(f"ADDED {key}: already there")
            if type_ in ("MODIFIED", "DELETED") and len(kept) == len(self.objects):
                raise ValueError(f"{type_} {key}: not there")
            self.objects = kept if type_ == "DELETED" else [*kept, stamped]
            self.log.append((self.version, PLURALS[obj["kind"]], type_, stamped))
            self.changed.notify_all()
            return self.version

    def bookmark(self, resource: str) -> int:
        """A BOOKMARK on the watches of `resource`, at a new resourceVersion."""
        with self.changed:
            self.version += 1
            self.log.append(
                (self.version, resource, "BOOKMARK", {"metadata": {"resourceVersion": str(self.version)}})
            )
            self.changed.notify_all()
            return self.version

    def send_raw(self, resource: str, text: str) -> int:
        """A line of `text`, verbatim, on the watches of `resource` (a line that is not an event)."""
        with self.changed:
            self.version += 1
            self.log.append((self.version, resource, "RAW", {"text": text}))
            self.changed.notify_all()
            return self.version

    def expire(self) -> None:
        """Every resourceVersion given out so far is too old: open watches end with ERROR 410
        Gone, and a watch from one of them gets it at once; a new list is of a newer one."""
        with self.changed:
            self.version += 1
            self.compacted = self.version
            self.changed.notify_all()

    def drop(self) -> None:
        """Cut every open watch answer mid-stream (no final chunk): the client must reconnect."""
        with self.changed:
            self.dropped += 1
            self.changed.notify_all()

    def close(self) -> None:
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def watch_lines(
        self, resource: str, api_version: str, since: int, seconds: float
    ) -> Iterator[bytes | None]:
        """The lines of one watch answer; None: cut the connection (a `drop`)."""
        dropped = self.dropped
        deadline = time.monotonic() + seconds
        sent = since
        while True:
            with self.changed:
                while True:
                    if self.closed:
                        return
                    if self.dropped != dropped:
                        yield None
                        return
                    if sent < self.compacted:
                        status = _status(410, f"too old resource version: {sent} ({self.compacted})")
                        yield json.dumps(
                            {"type": "ERROR", "object": {**status, "reason": "Expired"}}
                        ).encode()
                        return
                    due = [
                        e
                        for e in self.log
                        if e[0] > sent
                        and e[1] == resource
                        and (e[2] in ("BOOKMARK", "RAW") or e[3].get("apiVersion") == api_version)
                    ]
                    if due:
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return  # the server's timeoutSeconds: the answer ends, the client watches again
                    self.changed.wait(min(left, 0.1))
            for version, _, type_, obj in due:
                sent = version
                yield (
                    obj["text"].encode()
                    if type_ == "RAW"
                    else json.dumps({"type": type_, "object": obj}).encode()
                )

    # --- answering ------------------------------------------------------------------------

    def fault(self, path: str) -> Fault | None:
        """What the next request of `path` gets instead of its answer, if anything."""
        segments = [s for s in path.split("/") if s]
        for key in (path, segments[-1] if segments else ""):
            planned = self.faults.get(key)
            if planned:
                return planned.pop(0)
        return None

    def answer(
        self,
        method: str,
        target: str,
        authorization: str,
        headers: dict[str, str] | None = None,
        client: str = "",
    ) -> tuple[int, Any]:
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        request = Request(
            method, path, query, authorization, dict(headers or {}), client, at=time.monotonic()
        )
        self.requests.append(request)
        if method != "GET":
            return 405, _status(405, f"{method} is not allowed: this server is read-only")
        if authorization != f"Bearer {TOKEN}" and not (client and client == self.client_cn):
            return 401, _status(401, "Unauthorized")
        segments = [s for s in path.split("/") if s]
        resource = segments[-1] if segments else ""
        if query.get("watch") == "true" and resource in self.watch_errors:
            code = self.watch_errors[resource]
            return code, _status(code, _reason(code, resource, "watch"))
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
        if query.get("watch") == "true":
            since = int(query.get("resourceVersion") or self.version)
            return 200, Watch(resource, api_version, since, float(query.get("timeoutSeconds") or 300))
        if "continue" in query and self.expire_continue:
            return 410, _status(410, "The provided continue parameter is too old")
        items = self._items(api_version, resource)
        start = int(query.get("continue", "0") or 0)
        limit = int(query.get("limit", "0") or 0)
        end = start + limit if limit else len(items)
        meta: dict[str, Any] = {"resourceVersion": str(self.version)}
        if end < len(items):
            meta["continue"] = str(end)
            meta["remainingItemCount"] = len(items) - end
        kind = _kind_of(resource)
        self.requests[-1].items = len(items[start:end])
        # Written out here rather than by json.dumps: a Raw item is its text, valid JSON or not.
        head = json.dumps({"kind": f"{kind}List", "apiVersion": api_version, "metadata": meta})
        body = head[:-1] + ', "items": [' + ", ".join(items[start:end]) + "]}"
        return 200, body.encode()

    def _items(self, api_version: str, resource: str) -> list[str]:
        """The list's items as JSON texts, without kind and apiVersion; kept until the objects
        change (a list of 100,000 pods is asked for 200 times, a page at a time)."""
        key = (api_version, resource, id(self.objects), len(self.objects), self.version)
        cached = self._cache.get(key)
        if cached is None:
            cached = [
                o.text
                if isinstance(o, Raw)
                else json.dumps({k: v for k, v in o.items() if k not in ("apiVersion", "kind")})
                for o in self.objects
                if PLURALS[o["kind"]] == resource and o["apiVersion"] == api_version
            ]
            self._cache = {key: cached}
        return cached


@dataclass(frozen=True)
class Watch:
    """`answer`'s reply to a watch request: the handler streams `FakeApiServer.watch_lines`."""

    resource: str
    api_version: str
    since: int
    seconds: float


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata", {})
    return (obj["kind"], meta.get("namespace") or "", meta["name"])


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


def _reason(code: int, resource: str, verb: str = "list") -> str:
    if code == 403:
        return (
            f'{resource} is forbidden: User "system:serviceaccount:default:planner" cannot {verb} resource '
            f'"{resource}" at the cluster scope'
        )
    return {
        401: "Unauthorized",
        404: "the server could not find the requested resource",
        429: "Too many requests, please try again later.",
        503: "the server is currently unable to handle the request",
    }.get(code, "error")


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeApiServer
    protocol_version = "HTTP/1.1"  # keep-alive and chunked answers, as a real API server's
    # Headers and body are two writes: with Nagle's algorithm on, the client's delayed ACK holds
    # the body back ~40 ms per request on a kept-alive connection.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # a client that fails it ends here (`_Server.handle_error`)
        super().setup()

    def _client(self) -> str:
        """The common name of the client certificate verified in the handshake, if any."""
        if not isinstance(self.connection, ssl.SSLSocket):
            return ""
        cert = self.connection.getpeercert() or {}
        for rdn in cert.get("subject", ()):
            for name, value in rdn:
                if name == "commonName":
                    return str(value)
        return ""

    def _serve(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        code, body = self.fake.answer(
            self.command, self.path, self.headers.get("Authorization", ""), headers, self._client()
        )
        if isinstance(body, Watch):
            self._stream(body)
            return
        fault = self.fake.fault(urlsplit(self.path).path)
        extra: dict[str, str] = {}
        if fault is not None:
            time.sleep(fault.delay)
            if fault.drop or fault.status:
                self.fake.requests[-1].items = None  # not answered with the list
            if fault.drop:
                self._cut()
                return
            if fault.status:
                message = fault.message or _reason(fault.status, "")
                code, body, extra = fault.status, _status(fault.status, message), fault.headers
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.fake.requests[-1].size = len(data)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        if fault is not None and fault.truncate:
            self.wfile.write(data[: len(data) // 2])
            self._cut()
            return
        if fault is not None and fault.trickle:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                time.sleep(fault.trickle)
            return
        self.wfile.write(data)

    def _cut(self) -> None:
        """Close the connection under the client: no answer, or not all of it."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:  # the client went away first
            pass

    def _stream(self, watch: Watch) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for line in self.fake.watch_lines(watch.resource, watch.api_version, watch.since, watch.seconds):
                if line is None:  # cut: no final chunk, the connection closed under the client
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = line + b"\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the tests read the recorder, not the log."""


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that closes a watch connection (it stops watching) resets it."""


@contextmanager
def serving(fake: FakeApiServer, tls: ssl.SSLContext | None = None) -> Iterator[FakeApiServer]:
    """Run `fake` on a free local port for the duration of the block; with `tls`, as HTTPS (the
    handshake in the request's thread, so a client that fails it stops no other)."""
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = _Server(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        fake.scheme = "https"
    fake.port = server.server_address[1]
    # A short poll: `shutdown` waits for it, at the end of every test.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.close()
        server.shutdown()
        server.server_close()
        thread.join()
