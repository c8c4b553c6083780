"""The live read under faults (issue #39 §3), against the in-process fake API server.

What a real API server and the network between do: answer 429 with `Retry-After` (honoured,
capped), 500s and dropped connections in the middle of a list (sent again with a backoff, then
one line naming the server and the list), answer slowly (a bounded time per answer), hold
many pods (100,000 under the `long` profile; read in pages of `limit`, never one answer),
serve one object that is not valid JSON (that object is left out with a warning naming it;
the rest is read). Every request says
who sends it (`User-Agent: dra-solver/<version>`), and no message repeats the token.

The pauses between attempts are recorded instead of slept (`live._sleep`), but for the one test
that checks a `Retry-After` is really waited.
"""

from __future__ import annotations

import os
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from example_counts import sized
from typer.testing import CliRunner

from dra_solver.api import live
from dra_solver.api.watch import Watcher
from dra_solver.cli.main import app
from tests.fake_apiserver import TOKEN, FakeApiServer, Fault, Raw, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
PODS = "/api/v1/pods"
HANG = 300.0
"""Wall-clock seconds after which a wait is taken for hung: a guard, never a measurement."""
runner = CliRunner()


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


@pytest.fixture
def pauses(monkeypatch: Any) -> list[float]:
    """The pauses the reader takes between attempts, recorded instead of slept."""
    taken: list[float] = []
    monkeypatch.setattr(live, "_sleep", taken.append)
    return taken


def _items() -> list[dict[str, Any]]:
    return dump_items()


def _read(fake: FakeApiServer, tmp_path: Path) -> live.LiveRead:
    return live.read(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))


def _pod_requests(fake: FakeApiServer) -> list[tuple[str, int | None]]:
    """(continue token, items answered) of every pods list request, in order."""
    return [(r.query.get("continue", ""), r.items) for r in fake.requests if r.path == PODS]


# --- who asks ------------------------------------------------------------------------------


def test_every_request_says_it_is_dra_solver(tmp_path: Path) -> None:
    """Lists, discovery and watches: `User-Agent: dra-solver/<version>`, as kubectl sends its
    own, so that an administrator finds the reads in the audit log."""
    agent = f"dra-solver/{metadata.version('dra-solver')}"
    assert live.USER_AGENT == agent
    with serving(FakeApiServer(_items())) as fake:
        _read(fake, tmp_path)
        watcher = Watcher(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))
        try:
            watcher.start()
            deadline = time.monotonic() + HANG
            while not fake.watches() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            watcher.close()
    assert fake.watches() and fake.lists()
    assert {r.headers.get("user-agent") for r in fake.requests} == {agent}


# --- 429, 5xx, dropped connections -------------------------------------------------------------


def test_429_waits_the_retry_after_it_asks_for(tmp_path: Path) -> None:
    """Really waited (not recorded): the second request comes a second after the first."""
    fake = FakeApiServer(_items(), faults={PODS: [Fault(429, {"Retry-After": "1"})]})
    with serving(fake):
        got = _read(fake, tmp_path)
    first, second = [r.at for r in fake.requests if r.path == PODS]
    assert second - first >= 1.0
    assert got.counts["Pod"] == 10


def test_retry_after_is_capped_and_so_are_the_attempts(tmp_path: Path, pauses: list[float]) -> None:
    """A server asking for an hour: RETRIES pauses of RETRY_AFTER_MAX, then one line."""
    fault = Fault(429, {"Retry-After": "3600"})
    fake = FakeApiServer(_items(), faults={PODS: [fault] * 10})
    with serving(fake):
        with pytest.raises(live.LiveError) as exc:
            _read(fake, tmp_path)
    assert pauses == [live.RETRY_AFTER_MAX] * live.RETRIES
    assert len(_pod_requests(fake)) == live.RETRIES + 1
    message = str(exc.value)
    assert message.startswith(
        f"cannot list pods from the API server {fake.url} (context fake): 429 Too Many Requests: "
        "Too many requests, please try again later. (asked to retry after 3600 s); 6 attempts in "
    )
    assert "\n" not in message and TOKEN not in message


def test_retry_after_as_a_date_and_without_one() -> None:
    assert live._retry_after("7") == 7.0
    assert live._retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: at once
    soon = live._retry_after(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30)))
    assert soon is not None and 25 < soon <= 30
    assert live._retry_after("soon") is None and live._retry_after(None) is None
    assert [live._backoff(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_5xx_in_the_middle_of_a_list_are_sent_again(
    tmp_path: Path, monkeypatch: Any, pauses: list[float]
) -> None:
    """The second page answers 500, then 503: asked again with its continue token, after 0.5 s
    and 1 s; the list is whole and in order."""
    monkeypatch.setattr(live, "PAGE_SIZE", 4)
    fake = FakeApiServer(_items(), faults={PODS: [None, Fault(500), Fault(503)]})
    with serving(fake):
        got = _read(fake, tmp_path)
    assert _pod_requests(fake) == [("", 4), ("4", None), ("4", None), ("4", 4), ("8", 2)]
    assert pauses == [0.5, 1.0]
    pods = [d["metadata"]["name"] for _, _, d in got.documents if d["kind"] == "Pod"]
    assert pods == [i["metadata"]["name"] for i in _items() if i["kind"] == "Pod"]


def test_dropped_connections_in_the_middle_of_a_list_are_sent_again(
    tmp_path: Path, monkeypatch: Any, pauses: list[float]
) -> None:
    """A connection closed without an answer, then one closed halfway through the body."""
    monkeypatch.setattr(live, "PAGE_SIZE", 4)
    fake = FakeApiServer(_items(), faults={PODS: [None, Fault(drop=True), Fault(truncate=True)]})
    with serving(fake):
        got = _read(fake, tmp_path)
    assert [token for token, _ in _pod_requests(fake)] == ["", "4", "4", "4", "8"]
    assert pauses == [0.5, 1.0]
    assert got.counts["Pod"] == 10


def test_a_list_that_keeps_failing_is_one_line_naming_the_server_and_the_list(
    tmp_path: Path, monkeypatch: Any, pauses: list[float]
) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 4)
    fake = FakeApiServer(_items(), faults={PODS: [None, *[Fault(drop=True)] * 10]})
    with serving(fake):
        with pytest.raises(live.LiveError) as exc:
            _read(fake, tmp_path)
    assert pauses == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert len(_pod_requests(fake)) == 1 + live.RETRIES + 1
    message = str(exc.value)
    assert message.startswith(f"cannot list pods from the API server {fake.url} (context fake): ")
    assert "; 6 attempts in " in message and "\n" not in message
    # The CLI: that line, and nothing else.
    with serving(FakeApiServer(_items(), faults={PODS: [Fault(500)] * 10})) as again:
        result = runner.invoke(app, ["plan", "--kubeconfig", str(again.kubeconfig(tmp_path))])
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"cannot list pods from the API server {again.url} (context fake): 500 ")


def test_a_server_never_reached_is_not_tried_again(tmp_path: Path, pauses: list[float]) -> None:
    """Connection refused before the server ever answered: it is not there; one line at once."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fake = FakeApiServer([])
    fake.port = port
    with pytest.raises(live.LiveError, match=r"^cannot reach the API server .*: Connection refused$"):
        _read(fake, tmp_path)
    assert pauses == []


# --- a slow server ---------------------------------------------------------------------------


def test_an_answer_that_does_not_come_in_time_is_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    """REQUEST_TIMEOUT bounds a whole answer: one that starts late, and one that trickles (each
    byte in time for the socket's timeout, the whole never); neither is sent again. Without the
    bound both answers would be read in full (3 s late, or byte by byte) and no error raised, so
    the error proves the read stopped; how soon is not asserted (no test asserts wall-clock
    time: on a busy machine 0.5 s of timeout takes longer)."""
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", 0.5)
    for fault in (Fault(delay=3.0), Fault(trickle=0.01)):
        fake = FakeApiServer(_items(), faults={PODS: [fault]})
        with serving(fake):
            with pytest.raises(live.LiveError) as exc:
                _read(fake, tmp_path)
        assert str(exc.value) == (
            f"cannot list pods from the API server {fake.url} (context fake): no complete answer within "
            "0.5 s (the server is slow or overloaded, or the network is)"
        )
        assert len(_pod_requests(fake)) == 1


def test_a_slow_answer_in_time_is_read(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", 5.0)
    fake = FakeApiServer(_items(), faults={PODS: [Fault(delay=0.3)]})
    with serving(fake):
        assert _read(fake, tmp_path).counts["Pod"] == 10


# --- many pods, in pages ---------------------------------------------------------------------

PAGED_PODS = sized(2_500, 100_000)
"""Pods served: 5 pages of 500 under the `ci` profile (a first, middle and last page, each
chained to the one before), the 100,000 (200 pages) under `long`; what is in flight is one
page at either size."""


def test_many_pods_are_read_in_pages(tmp_path: Path) -> None:
    """100,000 pods (`long`; 2,500 under `ci`) in answers of 500 pods, chained by continue
    tokens: no answer holds more than a page, so what is in flight stays a page whatever the
    cluster's size."""
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{i:06d}", "namespace": f"ns-{i % 50}", "uid": f"u-{i}"},
            "spec": {"nodeName": f"n-{i % 1000}", "containers": [{"name": "c", "image": "busybox"}]},
        }
        for i in range(PAGED_PODS)
    ]
    with serving(FakeApiServer(pods)) as fake:
        got = _read(fake, tmp_path)
    assert got.counts["Pod"] == PAGED_PODS
    requests = [r for r in fake.requests if r.path == PODS]
    assert len(requests) == PAGED_PODS // 500
    assert all(r.query["limit"] == "500" and r.items == 500 for r in requests)
    assert [r.query.get("continue", "") for r in requests[:3]] == ["", "500", "1000"]
    assert max(r.size for r in requests) < 150_000  # bytes: one page, not the list
    names = [d["metadata"]["name"] for _, _, d in got.documents]
    assert names[0] == "p-000000" and names[-1] == f"p-{PAGED_PODS - 1:06d}" and len(set(names)) == PAGED_PODS


# --- one broken object ------------------------------------------------------------------------

BROKEN = '{"metadata": {"name": "broken", "namespace": "ml-training"}, "spec": {"containers": [,]}}'


def test_an_object_that_is_not_valid_json_is_left_out_with_a_warning(tmp_path: Path) -> None:
    """One pod's JSON is broken, another item is a number, a third has no name: each is named in
    a warning with its problem; every other object is read, as from the dump."""
    nameless = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "x"}, "spec": {}}
    items = [*_items(), Raw("Pod", "v1", BROKEN), Raw("Pod", "v1", "42"), nameless]
    with serving(FakeApiServer(items)) as fake:
        got = _read(fake, tmp_path)
    assert got.counts["Pod"] == 10
    assert got.warnings == [
        "context fake: GET /api/v1/pods items[10]: skipped Pod ml-training/broken: not valid JSON "
        "(Expecting value at character 86 of the object)",
        "context fake: GET /api/v1/pods items[11]: skipped Pod <unnamed>: not a JSON object but a number",
        "context fake: GET /api/v1/pods items[12]: skipped Pod x/<unnamed>: no metadata.name",
    ]


def test_plan_with_a_broken_object_warns_and_plans_the_rest(tmp_path: Path) -> None:
    with serving(FakeApiServer([*_items(), Raw("Pod", "v1", BROKEN)])) as fake:
        on_live = runner.invoke(app, ["plan", "--kubeconfig", str(fake.kubeconfig(tmp_path)), "-o", "name"])
    on_file = runner.invoke(app, ["plan", str(DUMP), "-o", "name"])
    assert on_live.exit_code == on_file.exit_code == 2
    assert on_live.stdout == on_file.stdout
    warnings = [line for line in on_live.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: context fake: GET /api/v1/pods items[10]: skipped Pod ml-training/broken: not valid "
        "JSON (Expecting value at character 86 of the object)"
    ]


def test_an_answer_that_is_not_json_at_all_is_one_line(tmp_path: Path) -> None:
    """Brackets that do not balance: nothing of the page can be trusted."""
    with serving(FakeApiServer([*_items(), Raw("Pod", "v1", '{"metadata": {"name": "x"')])) as fake:
        with pytest.raises(live.LiveError, match=r"GET /api/v1/pods: the answer \(200\) is not JSON$"):
            _read(fake, tmp_path)


# --- no credential in any message -----------------------------------------------------------------


def test_no_message_repeats_the_token(tmp_path: Path, pauses: list[float]) -> None:
    """A server (or a proxy) that quotes the request's Authorization back in its error: the line
    says it, without the token; so does every other failure."""
    echo = Fault(500, message=f"rejected request with Authorization: Bearer {TOKEN}")
    messages: list[str] = []
    for faults in (
        {PODS: [echo] * 10},
        {"/apis/resource.k8s.io": [echo] * 10},
        {PODS: [Fault(drop=True)] * 10},
    ):
        with serving(FakeApiServer(_items(), faults=dict(faults))) as fake:
            with pytest.raises(live.LiveError) as exc:
                _read(fake, tmp_path)
        messages.append(str(exc.value))
    forbidden = Fault(403, message=f"Bearer {TOKEN} may not list pods")
    with serving(FakeApiServer(_items(), faults={PODS: [forbidden]})) as fake:
        result = runner.invoke(app, ["plan", "--kubeconfig", str(fake.kubeconfig(tmp_path))])
    assert result.exit_code == 1 and "cannot list pods (403 Forbidden: <redacted> may not" in result.stderr
    messages.append(result.stderr + result.stdout)
    assert "<redacted>" in messages[0] and "<redacted>" in messages[1]
    assert all(TOKEN not in m for m in messages), messages


def test_a_watch_line_that_is_not_an_event_is_skipped_with_a_note(tmp_path: Path) -> None:
    """A broken line on a watch: a note naming what can be read of it, and the stream read on
    (watching again would only be sent it again); the next event arrives."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "late", "namespace": "ml-training"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    with serving(FakeApiServer(_items())) as fake:
        watcher = Watcher(live.Target(kubeconfig=str(fake.kubeconfig(tmp_path))))
        try:
            kinds = len(watcher.start().paths)
            deadline = time.monotonic() + HANG
            while len(fake.watches()) < kinds and time.monotonic() < deadline:
                time.sleep(0.05)
            fake.send_raw("pods", BROKEN)
            fake.publish("ADDED", pod)
            events, notes = [], []
            while not events and time.monotonic() < deadline:
                batch = watcher.next_batch(0.2, lambda: time.monotonic() > deadline)
                assert batch is not None
                events, notes = events + batch.events, notes + batch.notes
        finally:
            watcher.close()
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [("ADDED", "late")]
    assert notes == [
        "context fake: watch /api/v1/pods: skipped an event of Pod ml-training/broken: not valid JSON "
        "(Expecting value: line 1 column 86 (char 85))"
    ]
    assert watcher.reconnects == 0
