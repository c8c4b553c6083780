"""Reading a live cluster's objects through the Kubernetes API, read-only (issue #32).

Why a module of its own, on its own floor: it is the one place that talks to a server. It
lists the kinds the planner reads and hands the served JSON, object by object, to the same
loader as files (`load.load_sourced(documents=...)`): one code path, every object checked
and converted exactly once, as if it came from `kubectl get -o json`.

What it promises:

* Read-only, always. Every request goes through `Session.get`, which sends GET and nothing
  else: discovery (`/apis/{group}`, `/apis/{group}/{version}`) and list calls. Nothing is
  created, patched, deleted or bound; the plan is printed for a user to apply.
* The server's JSON, not the client's models: the official `kubernetes` client is used for
  what it does well — resolving a kubeconfig (contexts, exec plugins, client certificates,
  in-cluster service accounts) and sending authenticated requests — and its typed models
  are never built (they lag behind the API and drop fields the loader must see).
* Pages of `PAGE_SIZE` objects (`limit` and `continue`), so a cluster of 100,000 pods is
  read in bounded responses, as kubectl does.
* Faults cost a pause, not the read (`Session.get`): 429 (its `Retry-After` honoured, up to
  `RETRY_AFTER_MAX`), 5xx and connections dropped by a server that has answered before are
  sent again with a doubling backoff, at most `RETRIES` times, then one line names the server
  and the list; a server never reached, a TLS failure and an answer not whole within
  `REQUEST_TIMEOUT` are one line at once. One item of a list that is not valid JSON, not an
  object or without a name is left out with a warning naming it (`_pages`, `_list_answer`).
* Who asks, and with what: `User-Agent: dra-solver/<version>` on every request (the audit log
  names dra-solver); the kubeconfig's CA and client certificate, verification off only when
  it says `insecure-skip-tls-verify` (and a warning says so); no message holds a credential
  (`Session.redact`, `_kubeconfig_secrets`).
* Versions: a kind is read in the first version the loader knows for it
  (`convert.API_VERSIONS`: the stored version first) that the server serves; an older
  cluster without `resource.k8s.io/v1` is read as v1beta2 or v1beta1 and converted by the
  loader, as a file in that version would be, with a warning naming what the server serves.
* Cluster-wide: every kind is listed across all namespaces. `-n NS` chooses which pending
  pods to plan, but capacity (bound pods, allocated claims) belongs to every namespace.
* Workloads (Deployments, ReplicaSets, StatefulSets, Jobs) are read, but not expanded as a
  file's are: on a cluster their pods exist already (as Pods, pending or bound), so expanding
  a workload again would count every replica twice. What is planned of them is what their
  controllers have still to create (`workloads.lacking_pods`; the loader does the same for a
  dump's workloads, which carry a uid); a workload written as a FILE on top of the live state
  is expanded as usual ("would it fit?"). A cluster that does not serve one of these kinds has
  none: it is skipped with a note. `read(plan=False)` keeps the workloads as listed, for
  `dra-solver dump`.
* Watching (`plan --watch`, `api.watch`): `read_with` lists on an open `Session`, and every
  kind's list resourceVersion and path are kept for the watch to start from; `Session.stream`
  is the one streamed GET.

Errors are one line each, never a traceback: the server that cannot be reached, the kind
that may not be listed (401/403, with the RBAC rule that would allow it), a kind the server
does not serve. The objects of different kinds are read one list after the other, so the
state is not one snapshot: an object that changes between two lists is read as it was when
its list was read (each list on its own is consistent).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import DRASolverError, InputError, ValidationErrors
from .convert import API_VERSIONS
from .load import Document
from .workloads import EXPANDED_KINDS, workload_pods

__all__ = [
    "INSTALL_HINT",
    "KINDS_READ",
    "PAGE_SIZE",
    "LiveError",
    "LiveRead",
    "Progress",
    "ReadKind",
    "Session",
    "Stream",
    "StreamBroken",
    "Target",
    "client_log",
    "forbidden_error",
    "item_ref",
    "kinds_read",
    "list_path",
    "planner_documents",
    "rbac_rules",
    "read",
    "read_with",
    "workload_pods",
]

PAGE_SIZE = 500
"""Objects per list response (`limit`), as kubectl's `--chunk-size` default."""

INSTALL_HINT = "pip install 'dra-solver[live]'"

MIN_CLIENT = 37
"""The oldest `kubernetes` client release whose request API (`ApiClient.param_serialize` and
`call_api` returning the raw response) this module uses; pyproject's `live` extra asks for it."""

CONNECT_TIMEOUT = 10.0
"""Seconds to connect to the server."""
REQUEST_TIMEOUT = 60.0
"""Seconds for one whole answer (a page of a list, a discovery document): a server that has not
sent all of it by then is slow or overloaded, and the read stops with one line saying so (not
retried: six more minutes of waiting would not be an answer either)."""

RETRIES = 5
"""Requests sent again, at most, after the first failed (`RETRY_STATUSES`, a connection the
server dropped): a transient failure — a restarting API server, an overloaded one shedding load,
a load balancer cutting a connection — costs a pause, not the read."""
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Answers taken as transient: too many requests, and the server errors a restart or an
overload gives."""
BACKOFF = (0.5, 8.0)
"""Seconds: the first pause before a request is sent again, doubled each time up to the second."""
RETRY_AFTER_MAX = 10.0
"""Seconds: the longest pause a `Retry-After` header is honoured with (a server asking for
an hour gets RETRIES pauses of this, then the read stops with one line)."""


def _version() -> str:
    try:
        return metadata.version("dra-solver")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


USER_AGENT = f"dra-solver/{_version()}"
"""Sent with every request, so that an administrator finds dra-solver's reads in the API
server's audit log (the client's default names the OpenAPI generator)."""

_sleep = time.sleep
"""How a pause before a retry is waited (the tests record it instead)."""


class LiveError(DRASolverError):
    """A live cluster could not be read: one line saying what and why."""


@dataclass(frozen=True)
class ReadKind:
    """One kind read from the server: where it is listed and whether a cluster must serve it."""

    kind: str
    group: str
    """The API group, "" for the core group (`/api/v1`)."""
    resource: str
    """The plural resource name, as in URLs and RBAC rules."""
    required: bool
    """A cluster that does not serve it cannot be planned (the core kinds and DRA's four);
    the others are optional (behind feature gates, or not yet in every release): a cluster
    that does not serve them has none, so nothing is missed by not reading them."""

    @property
    def plural(self) -> str:
        """`resourceslices.resource.k8s.io`, `pods`: how kubectl and RBAC errors name it."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


KINDS_READ: tuple[ReadKind, ...] = (
    ReadKind("Namespace", "", "namespaces", True),
    ReadKind("Node", "", "nodes", True),
    ReadKind("PriorityClass", "scheduling.k8s.io", "priorityclasses", True),
    ReadKind("DeviceClass", "resource.k8s.io", "deviceclasses", True),
    ReadKind("ResourceSlice", "resource.k8s.io", "resourceslices", True),
    ReadKind("DeviceTaintRule", "resource.k8s.io", "devicetaintrules", False),
    ReadKind("ResourceClaimTemplate", "resource.k8s.io", "resourceclaimtemplates", True),
    ReadKind("ResourceClaim", "resource.k8s.io", "resourceclaims", True),
    ReadKind("Workload", "scheduling.k8s.io", "workloads", False),
    ReadKind("PodGroup", "scheduling.k8s.io", "podgroups", False),
    ReadKind("PodDisruptionBudget", "policy", "poddisruptionbudgets", False),
    ReadKind("Pod", "", "pods", True),
    ReadKind("Deployment", "apps", "deployments", False),
    ReadKind("ReplicaSet", "apps", "replicasets", False),
    ReadKind("StatefulSet", "apps", "statefulsets", False),
    ReadKind("Job", "batch", "jobs", False),
)
"""Every kind a live read may list, in the order read (the order of the loader's input)."""


def kinds_read() -> tuple[ReadKind, ...]:
    """The kinds of `KINDS_READ` the loader reads (`convert.API_VERSIONS`): a kind the loader
    would skip is not listed at all (no request, no RBAC rule needed)."""
    return tuple(k for k in KINDS_READ if k.kind in API_VERSIONS)


def rbac_rules() -> list[dict[str, list[str]]]:
    """The ClusterRole rules a live read needs: get and list on every kind it reads, per group."""
    groups: dict[str, list[str]] = {}
    for k in kinds_read():
        groups.setdefault(k.group, []).append(k.resource)
    return [{"apiGroups": [g], "resources": r, "verbs": ["get", "list"]} for g, r in groups.items()]


@dataclass(frozen=True)
class Target:
    """Which cluster: `kubeconfig` None resolves the config as kubectl does (KUBECONFIG, then
    ~/.kube/config, then the in-cluster service account); `context` None is the current one."""

    kubeconfig: str | None = None
    context: str | None = None


@dataclass
class LiveRead:
    """What a live read returns: the served objects for the loader, and what was read."""

    server: str
    """The API server's URL."""
    source: str
    """How messages name the cluster: `context NAME` or the server's URL."""
    documents: list[Document] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    """Objects read per kind (kinds read, zero included)."""
    versions: dict[str, str] = field(default_factory=dict)
    """The apiVersion each kind was read in."""
    not_served: list[str] = field(default_factory=list)
    """Optional kinds the server does not serve (so it has none)."""
    warnings: list[str] = field(default_factory=list)
    requests: int = 0
    listed: dict[str, list[Document]] = field(default_factory=dict)
    """The objects of each kind as listed (workloads included: `documents` has the pods they
    lack instead, `workload_pods`)."""
    resource_versions: dict[str, str] = field(default_factory=dict)
    """Each kind's list's resourceVersion: where a watch of it starts."""
    paths: dict[str, str] = field(default_factory=dict)
    """Each kind's list path (`/apis/resource.k8s.io/v1/resourceslices`): where it is watched."""


Progress = Callable[[str, int], None]
"""Called with (kind, objects of that kind read so far) after every page."""


# --- the client: config and GET requests --------------------------------------------------


def _kubernetes() -> Any:
    """The `kubernetes` package, or one line saying how to install it."""
    try:
        import kubernetes
    except ImportError:
        raise LiveError(
            f"reading a live cluster needs the kubernetes Python client: {INSTALL_HINT}"
        ) from None
    major = str(getattr(kubernetes, "__version__", "0")).split(".", 1)[0]
    if not major.isdigit() or int(major) < MIN_CLIENT:
        raise LiveError(
            f"the kubernetes Python client {kubernetes.__version__} is too old (need {MIN_CLIENT} or "
            f"later): {INSTALL_HINT}"
        )
    return kubernetes


def _kubeconfig_files(target: Target) -> str | None:
    """The kubeconfig path(s) to read, as kubectl resolves them: --kubeconfig, else KUBECONFIG
    (a list of files, merged), else ~/.kube/config when it exists; None: the in-cluster
    service account."""
    if target.kubeconfig is not None:
        if not Path(target.kubeconfig).expanduser().is_file():
            raise LiveError(f"--kubeconfig {target.kubeconfig}: no such file")
        return target.kubeconfig
    env = os.environ.get("KUBECONFIG", "")
    if any(Path(p).expanduser().is_file() for p in env.split(os.pathsep) if p):
        return env
    if env:
        raise LiveError(f"KUBECONFIG={env}: none of its files exists")
    home = Path("~/.kube/config").expanduser()
    if home.is_file():
        return str(home)
    return None


_SECRET = re.compile(
    r"""\b(?:token|password|client-key-data|client-certificate-data|certificate-authority-data)["']?"""
    r"""[ \t]*:[ \t]*["']?([^"'\s,}#]+)"""
)
"""A credential (or a certificate) in a kubeconfig, YAML or JSON: the value is group 1."""


def _kubeconfig_secrets(files: str | None) -> tuple[str, ...]:
    """Every credential and certificate written in the kubeconfig files: what no message may
    repeat (`_redact`), whatever the client or a YAML error puts in its own."""
    found: list[str] = []
    for name in (files or "").split(os.pathsep):
        try:
            text = Path(name).expanduser().read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.extend(m.group(1) for m in _SECRET.finditer(text))
    return tuple(sorted({s for s in found if len(s) >= 4}, key=len, reverse=True))


def _redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "<redacted>")
    return text


def _configuration(k8s: Any, target: Target) -> tuple[Any, str, tuple[str, ...]]:
    """The client Configuration for the target, how messages name it, and the credentials of
    its kubeconfig (`_kubeconfig_secrets`)."""
    files = _kubeconfig_files(target)
    secrets = _kubeconfig_secrets(files)
    try:
        configuration, source = _configure(k8s, target, files)
    except LiveError as exc:
        raise LiveError(_redact(str(exc), secrets)) from None
    return configuration, source, secrets


def _configure(k8s: Any, target: Target, files: str | None) -> tuple[Any, str]:
    configuration = k8s.client.Configuration()
    if files is None:
        if target.context is not None:
            raise LiveError(
                f"--context {target.context}: no kubeconfig (KUBECONFIG is not set, no ~/.kube/config)"
            )
        if not os.environ.get("KUBERNETES_SERVICE_HOST"):
            raise LiveError(
                "no cluster to read: no --kubeconfig, KUBECONFIG is not set, ~/.kube/config does not "
                "exist and this is not a pod in a cluster (KUBERNETES_SERVICE_HOST is not set)"
            )
        try:
            k8s.config.load_incluster_config(client_configuration=configuration)
        except Exception as exc:  # the client's ConfigException or an OSError reading the token
            raise LiveError(f"in-cluster config: {_one_line(exc)}") from None
        return configuration, "in-cluster"
    try:
        # The files merged as the client merges them (KUBECONFIG's first file wins), read here
        # for the context names: the client's own listing fails without a current-context, even
        # when --context names one (kubectl's does not).
        merged = k8s.config.kube_config.KubeConfigMerger(files).config
    except Exception as exc:  # ConfigException, YAML errors: a broken kubeconfig
        raise LiveError(f"kubeconfig {files}: {_one_line(exc)}") from None
    raw = getattr(merged, "value", None)
    if not isinstance(raw, dict):
        raise LiveError(f"kubeconfig {files}: not a kubeconfig (no mapping in it)")
    contexts = raw.get("contexts") or []
    names = [str(c["name"]) for c in contexts if "name" in c]
    listed = ", ".join(names) or "none"
    name = target.context if target.context is not None else raw.get("current-context") or None
    if name is None:
        raise LiveError(f"kubeconfig {files}: no current-context; give --context (contexts: {listed})")
    if str(name) not in names:
        flag = f"--context {name}" if target.context is not None else f"current-context {name}"
        raise LiveError(f"{flag}: not in {files} (contexts: {listed})")
    try:
        # persist_config=False: the kubeconfig is never written (a refreshed token stays in memory).
        k8s.config.load_kube_config(
            config_file=files, context=name, client_configuration=configuration, persist_config=False
        )
    except Exception as exc:  # ConfigException, an exec plugin that failed, a missing certificate
        raise LiveError(f"kubeconfig {files}, context {name}: {_one_line(exc)}") from None
    return configuration, f"context {name}"


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line, without object reprs (`<... object at 0x...>: `)."""
    text = re.sub(r"<[^<>]* object at 0x[0-9a-fA-F]+>:?\s*", "", str(exc))
    return " ".join(text.split()) or type(exc).__name__


def _unreachable_reason(exc: BaseException) -> str:
    """Why a connection failed, in the words of its innermost cause."""
    reason: BaseException = exc
    inner = getattr(exc, "reason", None)
    if isinstance(inner, BaseException):
        reason = inner
    text = _one_line(reason)
    text = re.sub(r"^\w*Connection(?:Pool)?\([^)]*\):\s*", "", text)  # urllib3's `HTTPConnection(host=...)`
    text = re.sub(r"^Failed to establish a new connection:\s*", "", text)
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text)


_GET = "GET"
"""The one HTTP method this module sends."""


class _NoAnswer(Exception):
    """A request that got no (complete) answer: why, and what it means — `unreachable` (a
    server never reached, a TLS failure), `slow` (no whole answer in time), `transient` (a
    connection dropped: sending it again may help)."""

    def __init__(self, why: str, kind: str) -> None:
        super().__init__(why)
        self.why = why
        self.kind = kind


class Session:
    """GET requests to one API server, and nothing else (the read-only promise lives here).

    Every request carries `USER_AGENT`. One that fails transiently — a status of
    `RETRY_STATUSES`, a connection dropped by a server that has answered before — is sent again
    after a pause (its `Retry-After`, at most `RETRY_AFTER_MAX`, else a doubling backoff), at
    most `RETRIES` times; then one line names the server, what was asked and how often. A server
    never reached, a TLS failure and an answer slower than `REQUEST_TIMEOUT` are one line at
    once. TLS is the kubeconfig's: its CA and client certificate; verification is off only when
    the kubeconfig says `insecure-skip-tls-verify` (`insecure`). No message carries a credential
    (`redact`)."""

    def __init__(self, target: Target, connections: int = 0) -> None:
        k8s = _kubernetes()
        import urllib3  # a dependency of the kubernetes client

        configuration, self.source, self._secrets = _configuration(k8s, target)
        if connections:
            # A watch holds one connection per kind open: a pool that large keeps urllib3 from
            # discarding (and warning about) connections it has no room for.
            configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, connections)
        # The retries are this class's (`get`): urllib3's own would resend at once, unseen;
        # redirects are not followed (an API server does not send them for a list).
        configuration.retries = urllib3.util.Retry(0, redirect=False)
        self.insecure = not configuration.verify_ssl
        """The kubeconfig turned TLS verification off (insecure-skip-tls-verify)."""
        if self.insecure:
            # Said once, in the read's warnings, rather than by urllib3 on stderr per request.
            import warnings

            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        self._configuration = configuration
        self.server = str(configuration.host)
        self.api = k8s.client.ApiClient(configuration)
        self.api.user_agent = USER_AGENT
        self.requests = 0
        self._answered = False
        self._urllib3 = urllib3
        self._api_exception: type[BaseException] = k8s.client.exceptions.ApiException

        # What a request that did not get an answer raises: connection and protocol errors,
        # timeouts, and the client's ApiException (status 0) for a TLS failure.
        self._no_answer: tuple[type[BaseException], ...] = (
            urllib3.exceptions.HTTPError,
            OSError,
            k8s.client.exceptions.ApiException,
        )

    def redact(self, text: str) -> str:
        """`text` without the credentials of this session (its bearer token, as configured or
        as an exec plugin refreshed it, and whatever the kubeconfig holds): what reaches a
        message never holds one."""
        secrets = list(self._secrets)
        for value in (self._configuration.api_key or {}).values():
            token = str(value or "")
            secrets += [t for t in (token, token.removeprefix("Bearer ").strip()) if len(t) >= 4]
        return _redact(text, sorted(secrets, key=len, reverse=True))

    def error(self, text: str) -> LiveError:
        """A LiveError of `text`, credentials removed."""
        return LiveError(self.redact(text))

    def get(self, path: str, query: dict[str, str] | None = None, what: str = "") -> tuple[int, bytes]:
        """(HTTP status, body) of `GET path?query`, sent again while it fails transiently (see
        the class); `what` names it in messages (`list pods`; default `GET path`). A server that
        cannot be reached, or keeps failing, is a LiveError naming it. Other non-2xx answers are
        returned, for the caller to word."""
        what = what or f"GET {path}"
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                status, headers, body = self._get_once(path, query or {})
            except _NoAnswer as exc:
                if exc.kind == "unreachable":
                    raise self.error(
                        f"cannot reach the API server {self.server} ({self.source}): {exc.why}"
                    ) from None
                if exc.kind == "slow":
                    raise self.error(
                        f"cannot {what} from the API server {self.server} ({self.source}): {exc.why}"
                    ) from None
                if attempt > RETRIES:
                    raise self._gave_up(what, exc.why, attempt, started) from None
                pause = _backoff(attempt)
            else:
                self._answered = True
                if status not in RETRY_STATUSES:
                    return status, body
                why = f"{status} {_phrase(status)}: {_status_message(body)}".rstrip(": ")
                asked = _retry_after(headers.get("Retry-After"))
                if attempt > RETRIES:
                    if asked is not None and asked > RETRY_AFTER_MAX:
                        why += f" (asked to retry after {asked:g} s)"
                    raise self._gave_up(what, why, attempt, started) from None
                pause = min(asked, RETRY_AFTER_MAX) if asked is not None else _backoff(attempt)
            _sleep(pause)

    def _gave_up(self, what: str, why: str, attempts: int, started: float) -> LiveError:
        return self.error(
            f"cannot {what} from the API server {self.server} ({self.source}): {why}; "
            f"{attempts} attempts in {time.monotonic() - started:.1f} s"
        )

    def _get_once(self, path: str, query: dict[str, str]) -> tuple[int, Mapping[str, str], bytes]:
        """One request, its whole answer read within `REQUEST_TIMEOUT`; `_NoAnswer` without one."""
        started = time.monotonic()
        try:
            response = self._send(path, query, REQUEST_TIMEOUT)
        except self._no_answer as exc:
            raise self._classify(exc) from None
        # The socket's timeout bounds each read, not the whole body: a server that trickles it
        # would never end. The connection is shut at the deadline instead.
        late = threading.Event()

        def shut() -> None:
            late.set()
            response.response.shutdown()

        timer = threading.Timer(max(0.0, REQUEST_TIMEOUT - (time.monotonic() - started)), shut)
        timer.daemon = True
        timer.start()
        try:
            body = bytes(response.read())
        except Exception as exc:  # a shut, dropped or broken connection: classified
            if late.is_set():
                raise _NoAnswer(self._slow(), "slow") from None
            raise self._classify(exc) from None
        finally:
            timer.cancel()
        return int(response.status), response.headers or {}, body

    @staticmethod
    def _slow() -> str:
        return (
            f"no complete answer within {REQUEST_TIMEOUT:g} s (the server is slow or overloaded, or the "
            "network is)"
        )

    def _classify(self, exc: BaseException) -> _NoAnswer:
        """Why a request got no answer, and whether to send it again: a connection that was
        dropped (by a server that has answered before, or in the middle of an answer) may be;
        a server never reached, a TLS failure or a timeout is reported at once."""
        errors = self._urllib3.exceptions
        reason: BaseException = exc
        inner = getattr(exc, "reason", None)
        if isinstance(exc, errors.MaxRetryError) and isinstance(inner, BaseException):
            reason = inner
        why = self.redact(_unreachable_reason(exc))
        if isinstance(exc, self._api_exception) or isinstance(reason, errors.SSLError):
            return _NoAnswer(why, "unreachable")
        if isinstance(reason, errors.ConnectTimeoutError):  # NewConnectionError too: refused, no such host
            return _NoAnswer(why, "transient" if self._answered else "unreachable")
        if isinstance(reason, errors.ReadTimeoutError | TimeoutError):
            return _NoAnswer(self._slow(), "slow")
        return _NoAnswer(why, "transient")

    def stream(self, path: str, query: dict[str, str], read_timeout: float) -> Stream:
        """`GET path?query` whose body is read as it comes (a watch): the status, and the
        body's lines as they arrive. A server that cannot be reached is a LiveError."""
        try:
            response = self._send(path, query, read_timeout)
        except self._no_answer as exc:
            raise self._unreachable(exc) from None
        return Stream(int(response.status), response.response, self._no_answer)

    def _send(self, path: str, query: dict[str, str], read_timeout: float) -> Any:
        """The client's answer to `GET path?query`, its body not read yet: the one place a
        request is built and sent (always a GET: the session never writes)."""
        try:
            _method, url, headers, _body, _post = self.api.param_serialize(
                _GET,
                path,
                query_params=list(query.items()),
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
        except Exception as exc:  # a token refresh (exec plugin, expired credentials) that failed
            raise self.error(
                f"{self.source}: cannot authenticate to {self.server}: {_one_line(exc)}"
            ) from None
        self.requests += 1
        return self.api.call_api(
            _GET, url, header_params=headers, _request_timeout=(CONNECT_TIMEOUT, read_timeout)
        )

    def _unreachable(self, exc: BaseException) -> LiveError:
        return self.error(
            f"cannot reach the API server {self.server} ({self.source}): {_unreachable_reason(exc)}"
        )

    def close(self) -> None:
        self.api.close()


def _backoff(attempt: int) -> float:
    """The pause after the `attempt`-th failure: BACKOFF's first, doubled each time, capped."""
    first, most = BACKOFF
    return float(min(first * 2 ** (attempt - 1), most))


def _retry_after(value: str | None) -> float | None:
    """Seconds a `Retry-After` header asks for (a number of seconds or an HTTP date), None when
    there is none or it cannot be read."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class Stream:
    """The answer to a streamed GET: `status`, then `lines()` as the server sends them.

    `lines()` ends when the server ends the answer, and raises `StreamBroken` when the
    connection breaks or goes silent for the read timeout; `close()` (from any thread) ends it."""

    def __init__(self, status: int, response: Any, broken: tuple[type[BaseException], ...]) -> None:
        self.status = status
        self._response = response
        self._broken = broken

    def body(self) -> bytes:
        """The whole body (for an answer that is not a stream: an error's Status)."""
        try:
            return bytes(self._response.read())
        except self._broken as exc:
            raise StreamBroken(_unreachable_reason(exc)) from None

    def lines(self) -> Iterator[bytes]:
        pending = b""
        try:
            for chunk in self._response.stream(None):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                yield from (line for line in complete if line.strip())
        except self._broken as exc:
            raise StreamBroken(_unreachable_reason(exc)) from None
        except (ValueError, AttributeError) as exc:  # urllib3 reading a response `close` closed
            raise StreamBroken(f"closed: {_one_line(exc)}") from None
        if pending.strip():
            yield pending

    def close(self) -> None:
        """End the stream now (a blocked `lines()` returns or raises StreamBroken)."""
        try:
            self._response.shutdown()
            self._response.release_conn()
        except Exception:  # noqa: BLE001 - closing what may be closed already: nothing to report
            pass


class StreamBroken(DRASolverError):
    """A streamed answer's connection broke (or went silent past the read timeout)."""


# --- discovery and lists ------------------------------------------------------------------


def _json(session: Session, status: int, body: bytes, what: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise session.error(
            f"{session.server} ({session.source}): {what}: the answer ({status}) is not JSON"
        ) from None


def _status_message(body: bytes) -> str:
    """The `message` of a metav1.Status body, else the body's start."""
    try:
        doc = json.loads(body)
    except ValueError:
        return " ".join(body[:200].decode("utf-8", "replace").split())
    return str(doc.get("message", "")) if isinstance(doc, dict) else ""


class _Discovery:
    """Which versions of a group the server serves, and which resources each version has."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._versions: dict[str, list[str]] = {}
        self._resources: dict[tuple[str, str], dict[str, Any]] = {}

    def _get(self, path: str) -> Any | None:
        status, body = self.session.get(path)
        if status == 404:
            return None
        _raise_for_auth(self.session, status, body, f"GET {path}")
        if status != 200:
            raise self.session.error(
                f"{self.session.server} ({self.session.source}): GET {path}: {status} {_status_message(body)}"
            )
        return _json(self.session, status, body, f"GET {path}")

    def versions(self, group: str) -> list[str]:
        """The versions the server serves of `group` (none when it does not serve the group)."""
        if group not in self._versions:
            doc = self._get(f"/apis/{group}")
            found = doc.get("versions", []) if isinstance(doc, dict) else []
            self._versions[group] = [str(v.get("version")) for v in found if isinstance(v, dict)]
        return self._versions[group]

    def resource(self, group: str, version: str, resource: str) -> dict[str, Any] | None:
        """The APIResource `resource` of group/version, or None when that version lacks it."""
        if (group, version) not in self._resources:
            doc = self._get(f"/apis/{group}/{version}")
            found = doc.get("resources", []) if isinstance(doc, dict) else []
            self._resources[(group, version)] = {
                str(r.get("name")): r for r in found if isinstance(r, dict) and "/" not in str(r.get("name"))
            }
        return self._resources[(group, version)].get(resource)


def _raise_for_auth(session: Session, status: int, body: bytes, what: str) -> None:
    if status == 401:
        raise LiveError(
            f"{session.server} ({session.source}): 401 Unauthorized on {what}: the server does not accept "
            "these credentials (expired token or certificate? check the kubeconfig's user)"
        )


def _version_of(discovery: _Discovery, k: ReadKind) -> str | None:
    """The apiVersion to read `k` in: the first of the loader's versions (stored first) that the
    server serves with this resource; core kinds are `v1`. None when no such version is served."""
    if not k.group:
        return "v1"
    served = discovery.versions(k.group)
    for api_version in API_VERSIONS[k.kind]:
        group, _, version = api_version.rpartition("/")
        if group == k.group and version in served and discovery.resource(group, version, k.resource):
            return api_version
    return None


def _unread_versions(discovery: _Discovery, k: ReadKind) -> list[str]:
    """The versions of k's group that serve its resource but that the loader does not read (an
    alpha the loader never knew, or one a later release dropped)."""
    return [
        f"{k.group}/{v}"
        for v in discovery.versions(k.group)
        if f"{k.group}/{v}" not in API_VERSIONS[k.kind] and discovery.resource(k.group, v, k.resource)
    ]


def _not_served(discovery: _Discovery, k: ReadKind, source: str) -> LiveError:
    known = ", ".join(v.rpartition("/")[2] for v in API_VERSIONS[k.kind])
    served = discovery.versions(k.group)
    if not served:
        what = f"does not serve the API group {k.group}"
        if k.group == "resource.k8s.io":
            what += " (is Dynamic Resource Allocation enabled on this cluster?)"
    else:
        what = f"serves {k.group} {', '.join(served)}, but not {k.plural} in a version dra-solver reads"
    return LiveError(f"{source}: the server {what}; {k.kind} is read as {k.group} {known}")


def list_path(k: ReadKind, api_version: str) -> str:
    """Where kind `k` is listed (and watched) in `api_version`, across all namespaces."""
    return f"/api/{api_version}/{k.resource}" if not k.group else f"/apis/{api_version}/{k.resource}"


def forbidden_error(session: Session, k: ReadKind, verb: str, body: bytes) -> InputError:
    """A 403 on `verb` (list, watch) of `k`: the server's words, and the rule that allows it."""
    verbs = '["get", "list", "watch"]' if verb == "watch" else '["get", "list"]'
    rule = f'{{apiGroups: ["{k.group}"], resources: ["{k.resource}"], verbs: {verbs}}}'
    needs = "get, list and watch" if verb == "watch" else "get and list"
    said = session.redact(_status_message(body))
    return InputError(
        f"cannot {verb} {k.plural} (403 Forbidden: {said}); dra-solver needs "
        f"{needs} on it cluster-wide, e.g. a ClusterRole rule {rule}",
        source=session.source,
    )


def _pages(
    session: Session,
    k: ReadKind,
    api_version: str,
    progress: Progress | None,
    version: list[str],
    warnings: list[str] | None = None,
) -> Iterator[Document]:
    """Every object of one kind, page by page (`limit`, `continue`), stamped with the kind and
    apiVersion of its list (a list's items carry neither); the list's resourceVersion (the
    first page's: the pages of one list are one snapshot) is appended to `version`.

    An item that cannot be an object — not valid JSON, not a JSON object, no name — is left
    out with a line in `warnings` naming it (kind, namespace/name as far as they can be read)
    and the problem: one broken object costs only itself (`_list_answer`)."""
    path = list_path(k, api_version)
    token = ""
    n = 0
    while True:
        query = {"limit": str(PAGE_SIZE)}
        if token:
            query["continue"] = token
        status, body = session.get(path, query, what=f"list {k.plural}")
        _raise_for_auth(session, status, body, f"list {k.plural}")
        if status == 403:
            raise _Forbidden(forbidden_error(session, k, "list", body))
        if status == 410:
            raise LiveError(
                f"{session.source}: the list of {k.plural} changed too much while it was read in pages "
                f"(410 Gone: the continue token expired); run again"
            )
        if status != 200:
            raise session.error(f"{session.source}: GET {path}: {status} {_status_message(body)}")
        doc = _list_answer(body)
        if doc is None:
            raise LiveError(
                f"{session.server} ({session.source}): GET {path}: the answer ({status}) is not JSON"
            )
        items = doc.get("items")
        if not isinstance(items, list):
            raise LiveError(f"{session.source}: GET {path}: the answer is not a list (no items)")
        for item in items:
            position = f"GET {path} items[{n}]"
            n += 1
            problem = _not_an_object(item)
            if problem:
                if warnings is not None:
                    ref = item_ref(k.kind, item)
                    warnings.append(f"{session.source}: {position}: skipped {ref}: {problem}")
                continue
            # Kind and apiVersion first, as kubectl prints a dump; the server's fields as served.
            yield session.source, position, {"apiVersion": api_version, "kind": k.kind, **item}
        if progress is not None:
            progress(k.kind, n)
        meta = doc.get("metadata")
        if not version and isinstance(meta, dict):
            version.append(str(meta.get("resourceVersion") or ""))
        token = str(meta.get("continue") or "") if isinstance(meta, dict) else ""
        if not token:
            return


@dataclass(frozen=True)
class _Broken:
    """An item of a list answer that is not valid JSON: its text, and what is wrong with it."""

    text: str
    problem: str


def _not_an_object(item: Any) -> str:
    """Why a list's item cannot be read as an object ("" when it can)."""
    if isinstance(item, _Broken):
        return item.problem
    if not isinstance(item, dict):
        json_type = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(item), "a number"
        )
        return f"not a JSON object but {json_type}"
    meta = item.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return "no metadata.name"
    return ""


_NAME = re.compile(r'"(name|namespace)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def item_ref(kind: str, item: Any) -> str:
    """`Kind namespace/name` of a list's item or a watch event's object, as much of it as can
    be read: a text that is not valid JSON is searched for its metadata's name and namespace."""
    if isinstance(item, _Broken):
        item = item.text
    if isinstance(item, dict):
        meta = item.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        name, namespace = meta.get("name"), meta.get("namespace")
    elif isinstance(item, str):
        found: dict[str, str] = {}
        at = item.find('"metadata"')
        for match in _NAME.finditer(item, max(at, 0)):
            found.setdefault(match.group(1), match.group(2))
        name, namespace = found.get("name"), found.get("namespace")
    else:
        name = namespace = None
    name = name if isinstance(name, str) and name else "<unnamed>"
    return f"{kind} {namespace}/{name}" if isinstance(namespace, str) and namespace else f"{kind} {name}"


def _skip(text: str, pos: int) -> int:
    """The position of the first character at or after `pos` that is not JSON whitespace."""
    while text[pos] in " \t\r\n":
        pos += 1
    return pos


def _list_answer(body: bytes) -> dict[str, Any] | None:
    """A list answer as a dict; None when it is not a JSON object.

    Why not only `json.loads`: one item that is not valid JSON (a proxy that mangled it, a
    server bug) would make the whole page unreadable. When the answer does not parse, it is
    read again value by value: every other item is read, and the broken one, found by its
    brackets, becomes a `_Broken` item naming the problem. An answer whose brackets are broken
    too is not JSON (None)."""
    try:
        doc = json.loads(body)
    except ValueError:
        pass
    else:
        return doc if isinstance(doc, dict) else None
    try:
        return _tolerant(body.decode("utf-8", "replace"))
    except (ValueError, IndexError):
        return None


def _tolerant(text: str) -> dict[str, Any]:
    """`text`, a JSON object whose `items` array may hold values that are not valid JSON."""
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if text[pos] != "{":
        raise ValueError("not an object")
    out: dict[str, Any] = {}
    pos += 1
    while True:
        pos = _skip(text, pos)
        if text[pos] == "}" and not out:
            return out
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if not isinstance(key, str) or text[pos] != ":":
            raise ValueError("not an object")
        pos = _skip(text, pos + 1)
        if key == "items" and text[pos] == "[":
            out[key], pos = _tolerant_items(text, pos + 1, decoder)
        else:
            out[key], pos = decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == "}":
            return out
        if text[pos] != ",":
            raise ValueError("not an object")
        pos += 1


def _tolerant_items(text: str, pos: int, decoder: json.JSONDecoder) -> tuple[list[Any], int]:
    """The values of a JSON array from `pos` (after its `[`) and the position after its `]`;
    a value that does not parse is a `_Broken` item, skipped by its brackets."""
    items: list[Any] = []
    while True:
        pos = _skip(text, pos)
        if text[pos] == "]" and not items:
            return items, pos + 1
        start = pos
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            pos = _value_end(text, start)
            where = f"character {exc.pos - start + 1} of the object" if exc.pos < pos else "its end"
            value = _Broken(text[start:pos], f"not valid JSON ({exc.msg} at {where})")
        items.append(value)
        pos = _skip(text, pos)
        if text[pos] == "]":
            return items, pos + 1
        if text[pos] != ",":
            raise ValueError("not an array")
        pos += 1


def _value_end(text: str, pos: int) -> int:
    """Where the JSON-like value at `pos` ends: its brackets matched, strings skipped (a value
    without brackets ends at the next `,` or `]` outside a string)."""
    depth = 0
    in_string = escaped = False
    for i in range(pos, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            if depth == 0:
                return i  # the end of the array holding the value
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "," and depth == 0:
            return i
    raise ValueError("unbalanced brackets")


class _Forbidden(DRASolverError):
    def __init__(self, error: InputError) -> None:
        self.error = error
        super().__init__(error.message)


def read(target: Target, progress: Progress | None = None, plan: bool = True) -> LiveRead:
    """Every object of `kinds_read()` on the target cluster, for `load.load_sourced`; `plan`
    False: the objects as listed only (`listed`: `dra-solver dump`), no `documents`.

    Raises LiveError (one line) when the server cannot be reached, rejects the credentials or
    does not serve a required kind; ValidationErrors with one line per kind that may not be
    listed (all of them, so that one RBAC change fixes every one)."""
    with client_log() as said:
        session: Session | None = None
        try:
            session = Session(target)
            try:
                return read_with(session, progress, plan=plan)
            finally:
                session.close()
        except LiveError as exc:
            if not said:
                raise
            # What the client logged (an exec plugin that failed) is part of the why; it may
            # quote what the plugin printed, so it loses the credentials the message would.
            text = f"{exc} (the kubernetes client said: {said[-1]})"
            if session is not None:
                raise session.error(text) from None
            try:
                secrets = _kubeconfig_secrets(_kubeconfig_files(target))
            except LiveError:
                secrets = ()
            raise LiveError(_redact(text, secrets)) from None


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(_one_line(Exception(record.getMessage())))


@contextmanager
def client_log() -> Iterator[list[str]]:
    """While a read runs, what the client and urllib3 log goes nowhere but into the list (its
    errors only), so stderr keeps one line per problem. Why: the client logs through the root
    logger (`logging.error("exec: process returned 1")`), which without a handler configures
    one on stderr for the rest of the process, and urllib3 logs each retry as a warning. A
    handler of the caller's own still gets every record."""
    said: list[str] = []
    root = logging.getLogger()
    handler = _Collect(said)
    root.addHandler(handler)
    try:
        yield said
    finally:
        root.removeHandler(handler)


def read_with(
    session: Session, progress: Progress | None = None, skip: Collection[str] = (), plan: bool = True
) -> LiveRead:
    """`read` on an open session (a watch re-lists on the one it watches with); `skip`: kinds
    not to list. Raises as `read`."""
    out = LiveRead(server=session.server, source=session.source)
    discovery = _Discovery(session)
    forbidden: list[InputError] = []
    fallbacks: dict[tuple[str, str], list[str]] = {}
    for k in kinds_read():
        if k.kind in skip:
            continue
        api_version = _version_of(discovery, k)
        if api_version is None:
            if k.required:
                raise _not_served(discovery, k, session.source)
            out.not_served.append(k.kind)
            unread = _unread_versions(discovery, k)
            if unread:
                out.warnings.append(
                    f"{session.source}: the server serves {k.plural} only in {', '.join(unread)}, which "
                    f"dra-solver does not read: any {k.kind} there is left out"
                )
            elif k.kind in EXPANDED_KINDS:
                out.warnings.append(
                    f"{session.source}: the server does not serve {k.plural}: no {k.kind} read"
                )
            continue
        out.versions[k.kind] = api_version
        stored = API_VERSIONS[k.kind][0]
        if api_version != stored:
            fallbacks.setdefault((stored, api_version), []).append(k.kind)
        version: list[str] = []
        try:
            documents = list(_pages(session, k, api_version, progress, version, out.warnings))
        except _Forbidden as exc:
            forbidden.append(exc.error)
            continue
        out.listed[k.kind] = documents
        out.counts[k.kind] = len(documents)
        out.resource_versions[k.kind] = version[0] if version else ""
        out.paths[k.kind] = list_path(k, api_version)
    if forbidden:
        raise ValidationErrors(forbidden)
    for (stored, used), kinds in fallbacks.items():
        group = stored.rpartition("/")[0]
        served = ", ".join(discovery.versions(group))
        out.warnings.append(
            f"{session.source}: the server does not serve {stored} for {', '.join(kinds)} (it serves "
            f"{group} {served}): read as {used} and converted as a file in {used} is"
        )
    if session.insecure:
        out.warnings.append(
            f"{session.source}: TLS verification is off (the kubeconfig's insecure-skip-tls-verify): "
            f"nothing proves that {session.server} is the cluster's API server"
        )
    if plan:
        out.documents, note = planner_documents(out.listed, session.source)
        if note:
            out.warnings.append(note)
    out.requests = session.requests
    return out


# --- workloads: the pods they lack --------------------------------------------------------


def planner_documents(listed: Mapping[str, Sequence[Document]], source: str) -> tuple[list[Document], str]:
    """What the loader is given of a cluster's objects, per kind as listed: every object but the
    workloads, in `KINDS_READ`'s order, then the pods the workloads lack (`workload_pods`); and
    a note counting those (empty when there are none)."""
    documents = [d for k in KINDS_READ if k.kind not in EXPANDED_KINDS for d in listed.get(k.kind, ())]
    workloads = [d for kind in EXPANDED_KINDS for d in listed.get(kind, ())]
    lacking = workload_pods(workloads, listed.get("Pod", ()), source)
    if not lacking:
        return documents, ""
    note = (
        f"{source}: {len(lacking)} pod{'s' if len(lacking) != 1 else ''} that workloads will create "
        "but have not yet (named <workload>-<i>) are planned too"
    )
    return documents + lacking, note
