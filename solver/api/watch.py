"""Watching a live cluster (`plan --watch`, issue #32): list every kind, then follow its changes.

Why a module of its own, under `api.live`: a watch is a live read that does not end. It lists
the kinds as `live.read` does (one `live.Session`, GET only), then opens one watch per kind
from that list's resourceVersion (`?watch=true&resourceVersion=...&allowWatchBookmarks=true`)
and hands the caller the changes in batches; what the cluster looks like after them —
`Mirror.documents()`, the loader's input, workloads turned into the pods they lack as in a
list (`live.planner_documents`) — is kept here, so the caller only plans.

How it follows the server, as client-go's reflector does:

* Each kind's watch runs in a thread of its own (a watch answer is a stream that does not
  end); its events go into one queue, in the order each stream sent them. `next_batch` waits
  for the first and then collects what comes within a short window, so that a pod bound by
  the scheduler and its claims' allocation (several objects, one change) are planned as one.
* BOOKMARK events only move the kind's resourceVersion (nothing changed: no batch).
* A watch that ends (the server's `timeoutSeconds`) is opened again from the last
  resourceVersion seen; one whose connection breaks too, after a short pause, with a note.
* 410 Gone (the resourceVersion is older than the server keeps: `ERROR` event or answer):
  every kind is listed again and the watches restart from the new lists; the batch says so
  (`Batch.relisted`), and the caller plans afresh.
* Read-only, always: every request is a `live.Session` GET.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import DRASolverError, InputError, ValidationErrors
from .live import (
    KINDS_READ,
    LiveError,
    LiveRead,
    Progress,
    ReadKind,
    Session,
    Stream,
    StreamBroken,
    Target,
    client_log,
    forbidden_error,
    item_ref,
    planner_documents,
    read_with,
)
from .load import Document

__all__ = ["NOT_WATCHED", "WATCH_SECONDS", "Batch", "Event", "Key", "Mirror", "Watcher"]

WATCH_SECONDS = 300
"""The `timeoutSeconds` of each watch request: the server ends the answer then, and the watch
is opened again from the last resourceVersion (as kubectl's and client-go's do)."""

READ_TIMEOUT = 90.0
"""Seconds of silence after which a watch connection is taken as broken (a server sends a
bookmark about every minute): it is opened again from the last resourceVersion."""

RETRY_SECONDS = (0.2, 1.0, 2.0, 5.0)
"""Pauses before opening again a watch whose connection broke, the last one repeated."""

NOT_WATCHED = frozenset({"PodDisruptionBudget"})
"""Kinds a plan without `--preempt` does not read: not listed, not watched."""

Key = tuple[str, str, str]
"""(kind, namespace, name) of an object; the namespace is "" for cluster-scoped kinds."""


@dataclass(frozen=True)
class Event:
    """One change: ADDED, MODIFIED or DELETED, with the object as the server sent it (stamped
    with its kind and the apiVersion it was watched in)."""

    type: str
    kind: str
    object: dict[str, Any]
    position: str
    """How messages name where it came from: `watch /api/v1/pods resourceVersion 12`."""


@dataclass
class Batch:
    """What `next_batch` returns: the changes, in order, or a fresh list after 410 Gone."""

    events: list[Event] = field(default_factory=list)
    relisted: LiveRead | None = None
    """Set when a watch was answered 410 Gone: every kind was listed again (the events of
    the batch are then in the list already, and `events` is empty)."""
    notes: list[str] = field(default_factory=list)
    """Connections that broke and were opened again, and why."""


def key_of(doc: dict[str, Any]) -> Key:
    meta = doc.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return (str(doc.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class Mirror:
    """The cluster's objects as the lists and events so far leave them, per kind and key."""

    def __init__(self, read: LiveRead) -> None:
        self.source = read.source
        self.objects: dict[str, dict[Key, Document]] = {}
        self.reset(read)

    def reset(self, read: LiveRead) -> None:
        """Forget everything: the objects of a (new) list."""
        self.objects = {
            kind: {key_of(doc): (src, pos, doc) for src, pos, doc in docs if isinstance(doc, dict)}
            for kind, docs in read.listed.items()
        }

    def apply(self, events: Iterable[Event]) -> None:
        for event in events:
            objects = self.objects.setdefault(event.kind, {})
            key = key_of(event.object)
            if event.type == "DELETED":
                objects.pop(key, None)
            else:  # ADDED, MODIFIED: the object as it is now (an ADDED seen twice after a reconnect too)
                objects[key] = (self.source, event.position, event.object)

    def documents(self) -> list[Document]:
        """The loader's input for the current state: as `live.read` gives it for a list."""
        listed = {kind: list(objects.values()) for kind, objects in self.objects.items()}
        return planner_documents(listed, self.source)[0]


@dataclass
class _Gone:
    kind: str


@dataclass
class _Note:
    text: str


@dataclass
class _Fatal:
    error: DRASolverError


@dataclass
class _Skipped:
    """A line of a watch answer that is not an event of an object: said, and the stream read on
    (watching again from the last resourceVersion would only send it again)."""

    text: str


_Item = Event | _Gone | _Note | _Fatal


class Watcher:
    """Lists, then watches, the kinds a plan reads (`start`, `next_batch`, `close`).

    `skip`: kinds not listed nor watched (`NOT_WATCHED`). Counters for what happened:
    `bookmarks`, `reconnects`, `relists`."""

    def __init__(self, target: Target, skip: Collection[str] = NOT_WATCHED) -> None:
        self.target = target
        self.skip = frozenset(skip)
        self.session: Session | None = None
        self.read: LiveRead | None = None
        self.bookmarks = 0
        self.reconnects = 0
        self.relists = 0
        self._queue: queue.Queue[tuple[int, _Item]] = queue.Queue()
        self._generation = 0
        self._streams: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    # --- lists --------------------------------------------------------------------------------

    def start(self, progress: Progress | None = None, follow: bool = True) -> LiveRead:
        """List every kind (as `live.read`) and start watching them from the lists (`follow`
        False: list only; nothing will be asked of `next_batch`)."""
        kinds = [k for k in KINDS_READ if k.kind not in self.skip]
        with client_log():
            self.session = Session(self.target, connections=len(kinds) + 2)
            self.read = read_with(self.session, progress, self.skip)
        if follow:
            self._follow_all(self.read)
        return self.read

    def _relist(self) -> LiveRead:
        assert self.session is not None
        self._stop_streams()
        self.relists += 1
        with client_log():
            self.read = read_with(self.session, None, self.skip)
        self._follow_all(self.read)
        return self.read

    # --- watches ------------------------------------------------------------------------------

    def _follow_all(self, read: LiveRead) -> None:
        generation = self._generation
        by_kind = {k.kind: k for k in KINDS_READ}
        for kind, path in read.paths.items():
            thread = threading.Thread(
                target=self._follow,
                args=(by_kind[kind], path, read.versions[kind], read.resource_versions[kind], generation),
                name=f"dra-solver-watch-{kind}",
                daemon=True,  # a stream blocked in a read must not keep the process alive
            )
            self._threads.append(thread)
            thread.start()

    def _live(self, generation: int) -> bool:
        return generation == self._generation

    def _put(self, generation: int, item: _Item) -> None:
        if self._live(generation):
            self._queue.put((generation, item))

    def _follow(self, k: ReadKind, path: str, api_version: str, version: str, generation: int) -> None:
        """One kind's watch, opened again and again from the last resourceVersion seen, until
        the watcher stops it (a new generation), the server answers 410 Gone or refuses it."""
        session = self.session
        assert session is not None
        failures = 0
        while self._live(generation):
            try:
                version, broke, done = self._once(session, k, path, api_version, version, generation)
            except Exception as exc:  # a bug or a client failure: this thread must not die silently
                version, broke, done = version, f"{type(exc).__name__}: {exc}", False
            if done or not self._live(generation):
                return
            if not broke:  # the server's timeoutSeconds: watch again at once
                failures = 0
                continue
            self.reconnects += 1
            self._put(
                generation,
                _Note(
                    f"{session.source}: the watch of {k.plural} broke ({broke}); watching again from "
                    f"resourceVersion {version}"
                ),
            )
            time.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
            failures += 1

    def _once(
        self, session: Session, k: ReadKind, path: str, api_version: str, version: str, generation: int
    ) -> tuple[str, str, bool]:
        """One watch request, read to its end: (the last resourceVersion, why it broke — "" when
        the server ended it —, whether the watch is over: 410 Gone, refused, or stopped)."""
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": version,
            "timeoutSeconds": str(WATCH_SECONDS),
        }
        try:
            stream = session.stream(path, query, READ_TIMEOUT)
        except LiveError as exc:
            return version, str(exc), False
        with self._lock:
            self._streams[k.kind] = stream
        try:
            if not self._live(generation):
                return version, "", True
            refused = self._refused(session, k, stream, generation)
            if refused is not None:
                why, over = refused
                return version, why, over
            try:
                for line in stream.lines():
                    if not self._live(generation):
                        return version, "", True
                    got = self._event(k, api_version, path, line)
                    if isinstance(got, _Gone):
                        self._put(generation, got)
                        return version, "", True
                    if isinstance(got, str):
                        version = got or version  # a bookmark
                    elif isinstance(got, Event):
                        meta = got.object.get("metadata")
                        if isinstance(meta, dict) and meta.get("resourceVersion"):
                            version = str(meta["resourceVersion"])
                        self._put(generation, got)
                    elif isinstance(got, _Skipped):
                        self._put(generation, _Note(f"{session.source}: watch {path}: {got.text}"))
                    elif got is not None:
                        return version, got.text, False
            except StreamBroken as exc:
                return version, str(exc), False
            return version, "", False
        finally:
            stream.close()

    def _refused(
        self, session: Session, k: ReadKind, stream: Stream, generation: int
    ) -> tuple[str, bool] | None:
        """What a watch answer other than 200 means, as `_once` returns it (why it broke,
        whether the watch is over): 410 Gone and 401/403 end the watch (the reader is told:
        the list is read again, or the error is fatal); another status is tried again. None
        for a 200, whose events are read. Apart from `_once` so that reading the events
        stands alone."""
        if stream.status == 410:
            self._put(generation, _Gone(k.kind))
            return "", True
        if stream.status in (401, 403):
            body = stream.body()
            error: DRASolverError = (
                forbidden_error(session, k, "watch", body)
                if stream.status == 403
                else LiveError(f"{session.source}: 401 Unauthorized on watch {k.plural}")
            )
            self._put(generation, _Fatal(error))
            return "", True
        if stream.status != 200:
            return f"answered {stream.status}", False
        return None

    def _event(
        self, k: ReadKind, api_version: str, path: str, line: bytes
    ) -> Event | _Gone | _Note | _Skipped | str | None:
        """One line of a watch answer: an Event, a bookmark's resourceVersion, 410 Gone, a note
        (an error event: the watch is opened again), or a line skipped with a note (not valid
        JSON, not an event, an object without a name: as an item of a list, `live._pages`)."""
        try:
            doc = json.loads(line)
        except ValueError as exc:
            ref = item_ref(k.kind, line.decode("utf-8", "replace"))
            return _Skipped(f"skipped an event of {ref}: not valid JSON ({exc})")
        if not isinstance(doc, dict) or not isinstance(doc.get("object"), dict):
            return _Skipped("skipped a line that is not a watch event")
        type_, obj = doc.get("type"), doc["object"]
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        if type_ == "BOOKMARK":
            self.bookmarks += 1
            return str(meta.get("resourceVersion") or "")
        if type_ == "ERROR":
            if obj.get("code") == 410:
                return _Gone(k.kind)
            return _Note(f"error event {obj.get('code')}: {obj.get('message', '')}")
        if type_ not in ("ADDED", "MODIFIED", "DELETED"):
            return _Note(f"an event of type {type_!r}")
        if not isinstance(meta.get("name"), str) or not meta["name"]:
            return _Skipped(f"skipped a {type_} event of {k.kind} <unnamed>: no metadata.name")
        stamped = {"apiVersion": api_version, "kind": k.kind, **obj}
        stamped["apiVersion"], stamped["kind"] = api_version, k.kind
        position = f"watch {path} resourceVersion {meta.get('resourceVersion', '')}"
        return Event(str(type_), k.kind, stamped, position)

    def _stop_streams(self) -> None:
        """End every watch of this generation: their threads return, their events are dropped."""
        with self._lock:
            self._generation += 1
            streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            stream.close()
        self._threads = [t for t in self._threads if t.is_alive()]

    # --- batches ------------------------------------------------------------------------------

    def next_batch(self, window: float, stop: Callable[[], bool], poll: float = 0.2) -> Batch | None:
        """The next changes: waits for one, then collects what else comes within `window`
        seconds. None when `stop()` became true first. Raises LiveError or ValidationErrors when
        a watch may not be made (401, 403) or a re-list fails."""
        batch = Batch()
        deadline: float | None = None
        while True:
            if stop():
                return None
            if deadline is None:
                timeout = poll
            else:
                timeout = min(poll, deadline - time.monotonic())
                if timeout <= 0:
                    return batch
            try:
                generation, item = self._queue.get(timeout=timeout)
            except queue.Empty:
                continue
            if not self._live(generation):
                continue
            if isinstance(item, _Fatal):
                if isinstance(item.error, InputError):
                    raise ValidationErrors([item.error])
                raise item.error
            if isinstance(item, _Note):
                batch.notes.append(item.text)
                continue
            if isinstance(item, _Gone):
                batch.notes.append(
                    f"{self.read.source if self.read else ''}: the watch of {item.kind} is too far behind "
                    "(410 Gone): listing every kind again"
                )
                batch.events = []
                batch.relisted = self._relist()
                return batch
            batch.events.append(item)
            if deadline is None:
                deadline = time.monotonic() + window

    def close(self) -> None:
        """Stop watching (the threads end as their streams close) and close the session."""
        self._stop_streams()
        if self.session is not None:
            self.session.close()
            self.session = None
