"""`plan --watch` (issue #32): list, watch, re-plan each batch of changes, one line each.

The cluster is the in-process fake API server (`tests/fake_apiserver.py`), reached through the
real `kubernetes` client; a test changes it from the loop's own `emit` (after line k, the
change that line k+1 must show), so every line describes a known state. Each line's counts
must equal those of a fresh `plan` of the same objects (a dump of them, through the CLI), and
every request the server saw must be a GET.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver import interrupt
from dra_solver.api.live import Target
from dra_solver.api.watch import Batch, Event, _Gone
from dra_solver.cli.main import app
from dra_solver.cli.options import AllocatorChoice, Search, StrategyChoice
from dra_solver.cli.watch import Watching, watch_line
from dra_solver.planning.outcome import PlanOutcome, PodPlan
from dra_solver.reasons import Kind, Reason
from dra_solver.reasons.words import say
from tests.fake_apiserver import FakeApiServer, dump_items, serving

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"
runner = CliRunner()
SEARCH = Search(AllocatorChoice.cpsat, StrategyChoice.pack, 10.0, 0)
LINE = re.compile(r"^\d\d:\d\d:\d\d pending (\d+): (\d+) placeable now")
WINDOW = 0.25
"""The loop's batch window in these tests. Why shorter than the command's (`BATCH_SECONDS`):
`_watch` waits until the events a test published after a line are in the watcher's queue
before the loop asks for its next batch, so a batch is what the test published whatever the
load; the window then only has to outlast the loop taking the queued events, not their trip
through the server's and the client's threads, and each line waited a whole second."""


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


def _items() -> list[dict[str, Any]]:
    return dump_items()


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeApiServer]:
    with serving(FakeApiServer(_items())) as server:
        server.kubeconfig(tmp_path)
        yield server
    assert server.requests and {r.method for r in server.requests} == {"GET"}


def _pending(fake: FakeApiServer) -> dict[str, Any]:
    return next(o for o in fake.objects if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer-1")


def _copy(pod: dict[str, Any], name: str) -> dict[str, Any]:
    """A new pending pod like `pod` (its claims made from the same template once planned)."""
    new = copy.deepcopy(pod)
    new["metadata"]["name"] = name
    new["metadata"].pop("uid", None)
    new.pop("status", None)
    return new


def _watch(
    fake: FakeApiServer, tmp_path: Path, count: int, after: Callable[[int, Watching], None]
) -> tuple[list[str], list[list[dict[str, Any]]], Watching, int]:
    """Run the loop for `count` lines; `after(k, watching)` changes the cluster after line k,
    and the loop asks for its next batch once those changes are queued (`WINDOW`).
    Returns the lines, the objects each line describes, the loop and its exit code."""
    lines: list[str] = []
    states: list[list[dict[str, Any]]] = []
    holder: list[Watching] = []

    def emit(line: str) -> None:
        lines.append(line)
        states.append(copy.deepcopy(fake.objects))
        published = len(fake.log)
        after(len(lines), holder[0])
        changes = [entry for entry in fake.log[published:] if entry[2] in ("ADDED", "MODIFIED", "DELETED")]
        _wait(lambda: _queued(holder[0], len(changes)))

    watching = Watching(
        Target(kubeconfig=str(tmp_path / "kubeconfig")),
        [],
        None,
        SEARCH,
        count=count,
        window=WINDOW,
        emit=emit,
    )
    holder.append(watching)
    code = watching.run()
    return lines, states, watching, code


def _queued(watching: Watching, events: int) -> bool:
    """Whether the watcher's queue holds `events` changes, or a 410 Gone (its events then come
    with the new list): what the loop's next batch is to be made of."""
    waiting = watching.watcher._queue
    with waiting.mutex:
        items = [item for _, item in waiting.queue]
    gone = any(isinstance(item, _Gone) for item in items)
    return gone or sum(isinstance(item, Event) for item in items) >= events


def _counts(line: str) -> tuple[int, int]:
    match = LINE.match(line)
    assert match, line
    return int(match.group(2)), int(match.group(1))


_FRESH: dict[str, tuple[int, int]] = {}
"""The counts `_fresh_counts` found, by the dump's text: several tests' lines describe the same
objects (the dump as listed, first of all), and a plan of the same text is the same plan."""


def _fresh_counts(objects: list[dict[str, Any]], tmp_path: Path) -> tuple[int, int]:
    """(placed, pods) of `dra-solver plan` on a dump of `objects`."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})  # JSON: PyYAML's
    if text in _FRESH:  # pure-Python writer took 0.1 CPU s a state
        return _FRESH[text]
    dump = tmp_path / "state.json"
    dump.write_text(text)
    got = runner.invoke(app, ["plan", str(dump), "-o", "name"])
    assert got.exit_code in (0, 2), got.stderr
    summary = [x for x in got.stderr.splitlines() if x.startswith("placed ")][-1]
    match = re.match(r"placed (\d+) of (\d+) pods", summary)
    assert match, summary
    _FRESH[text] = int(match.group(1)), int(match.group(2))
    return _FRESH[text]


HANG = 300.0
"""Wall-clock seconds after which a wait is taken for hung: a guard, never a measurement."""


def _wait(condition: Callable[[], bool], seconds: float = HANG) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_each_batch_of_changes_is_one_line_with_the_counts_of_a_fresh_plan(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    def after(k: int, watching: Watching) -> None:
        if k == 1:  # two new pending pods, one batch
            fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))
            fake.publish("ADDED", _copy(_pending(fake), "trainer-9"))
        elif k == 2:
            fake.publish("DELETED", _copy(_pending(fake), "trainer-8"))

    lines, states, _, code = _watch(fake, tmp_path, 3, after)
    assert len(lines) == 3 and code == 2
    assert [_counts(x)[1] for x in lines] == [8, 10, 9]
    assert "[plan " in lines[0] and "[update +2 -0 " in lines[1] and "[update +0 -1 " in lines[2]
    for line, state in zip(lines, states, strict=True):
        assert _counts(line) == _fresh_counts(state, tmp_path)


def test_a_pod_the_scheduler_bound_is_running_not_pending(fake: FakeApiServer, tmp_path: Path) -> None:
    """The scheduler binds trainer-1 where the plan said (MODIFIED: the pod has a node, its claim
    an allocation, one batch): it is no longer planned, and what it holds is in use."""
    planned = runner.invoke(app, ["plan", str(DUMP), "-o", "yaml"])
    after_plan = read_yaml(planned.stdout)["items"]
    bound = [
        o
        for o in after_plan
        if o["metadata"]["namespace"] == "ml-training" and o["metadata"]["name"].startswith("trainer-1")
    ]
    assert {o["kind"] for o in bound} == {"Pod", "ResourceClaim"}

    def after(k: int, watching: Watching) -> None:
        if k == 1:
            for obj in bound:
                fake.publish("MODIFIED", obj)

    lines, states, _, _ = _watch(fake, tmp_path, 2, after)
    assert _counts(lines[1]) == (_counts(lines[0])[0] - 1, _counts(lines[0])[1] - 1)
    assert "[update +2 -2 " in lines[1]
    assert _counts(lines[1]) == _fresh_counts(states[1], tmp_path)


def test_a_change_the_plan_does_not_read_prints_no_line(
    fake: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new resourceVersion alone (a status heartbeat): no re-plan; the next real change is line 2."""
    batches: list[list[str]] = []

    def after(k: int, watching: Watching) -> None:
        if k != 1:
            return
        taken = watching.watcher.next_batch

        def next_batch(window: float, stop: Callable[[], bool]) -> Batch | None:
            batch = taken(window, stop)
            if batch is not None:
                batches.append([e.kind for e in batch.events])
            if len(batches) == 1:  # the heartbeat's batch is over: the next change is its own
                fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))
            return batch

        monkeypatch.setattr(watching.watcher, "next_batch", next_batch)
        node = copy.deepcopy(next(o for o in fake.objects if o["kind"] == "Node"))
        fake.publish("MODIFIED", node)  # only its resourceVersion changes

    lines, _, _, _ = _watch(fake, tmp_path, 2, after)
    assert batches == [["Node"], ["Pod"]]  # the heartbeat alone printed no line
    assert "[update +1 -0 " in lines[1]


def test_a_bookmark_moves_the_resource_version_a_reconnect_starts_from(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    marks: list[int] = []

    def after(k: int, watching: Watching) -> None:
        if k == 1:
            marks.append(fake.bookmark("pods"))
            _wait(lambda: watching.watcher.bookmarks >= 1)
            fake.drop()  # every watch connection cut: each reconnects from its last resourceVersion
            fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))

    lines, states, watching, _ = _watch(fake, tmp_path, 2, after)
    pods = [r for r in fake.watches() if r.path == "/api/v1/pods"]
    assert pods[0].query["resourceVersion"] == "12345"  # the list's
    assert str(marks[0]) in [r.query["resourceVersion"] for r in pods[1:]]
    assert all(r.query["allowWatchBookmarks"] == "true" for r in fake.watches())
    assert watching.watcher.reconnects >= 1 and watching.watcher.relists == 0
    assert "[update +1 -0 " in lines[1]
    assert _counts(lines[1]) == _fresh_counts(states[1], tmp_path)


def test_a_dropped_connection_loses_no_event(fake: FakeApiServer, tmp_path: Path) -> None:
    """The events sent while no watch was connected come when it reconnects (from its last
    resourceVersion), in one batch with the others."""

    def after(k: int, watching: Watching) -> None:
        if k == 1:
            fake.drop()
            fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))

    lines, states, watching, _ = _watch(fake, tmp_path, 2, after)
    assert watching.watcher.reconnects >= 1
    assert _counts(lines[1])[1] == 9
    assert _counts(lines[1]) == _fresh_counts(states[1], tmp_path)


def test_410_gone_lists_again_and_plans_afresh(fake: FakeApiServer, tmp_path: Path) -> None:
    def after(k: int, watching: Watching) -> None:
        if k == 1:
            fake.expire()  # every resourceVersion given so far is too old: ERROR 410 on each watch
            fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))

    lines, states, watching, _ = _watch(fake, tmp_path, 2, after)
    assert watching.watcher.relists == 1
    assert "[re-listed, fresh plan " in lines[1]
    assert len([r for r in fake.lists() if r.path == "/api/v1/pods"]) == 2
    assert _counts(lines[1]) == _fresh_counts(states[1], tmp_path)


def test_ctrl_c_ends_the_watch_with_130(fake: FakeApiServer, tmp_path: Path) -> None:
    def after(k: int, watching: Watching) -> None:
        interrupt.request()

    try:
        lines, _, _, code = _watch(fake, tmp_path, 5, after)
    finally:
        interrupt.reset()
    assert len(lines) == 1 and code == interrupt.EXIT_INTERRUPTED


def test_a_bad_pod_arriving_costs_only_itself_and_its_fix_is_picked_up(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    """Issue #39: a pod naming a deleted template never stops the console. It is listed as not
    placed with its problem as the reason; later pods are planned; when the pod is fixed, the
    next line plans it. Every line's counts are those of a fresh `plan` of the same objects."""

    def after(k: int, watching: Watching) -> None:
        if k == 1:  # a pod naming a claim template that does not exist
            bad = _copy(_pending(fake), "broken")
            bad["spec"]["resourceClaims"] = [
                {"name": "gpus", "resourceClaimTemplateName": "no-such-template"}
            ]
            fake.publish("ADDED", bad)
        elif k == 2:  # a valid pod arrives beside it
            fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))
        elif k == 3:  # the bad pod is fixed: it names the template its siblings use
            fixed = _copy(_pending(fake), "broken")
            fake.publish("MODIFIED", fixed)

    lines, states, watching, code = _watch(fake, tmp_path, 4, after)
    assert not any("not planned" in x for x in lines), lines
    assert [_counts(x)[1] for x in lines] == [8, 9, 10, 10]
    for line, state in zip(lines, states, strict=True):
        assert _counts(line) == _fresh_counts(state, tmp_path)
    assert watching.last is not None
    broken = watching.last.pod("ml-training/broken")
    assert broken.reason is None or "no-such-template" not in broken.reason
    assert code == 2


def test_a_bad_pod_is_listed_with_its_problem_as_the_reason(fake: FakeApiServer, tmp_path: Path) -> None:
    def after(k: int, watching: Watching) -> None:
        if k == 1:
            bad = _copy(_pending(fake), "broken")
            bad["spec"]["resourceClaims"] = [
                {"name": "gpus", "resourceClaimTemplateName": "no-such-template"}
            ]
            fake.publish("ADDED", bad)

    lines, _, watching, _ = _watch(fake, tmp_path, 2, after)
    assert watching.last is not None
    broken = watching.last.pod("ml-training/broken")
    assert not broken.placed and broken.reason is not None
    assert "ResourceClaimTemplate ml-training/no-such-template not found in the input" in broken.reason


# --- the command line ------------------------------------------------------------------------


def test_plan_watch_count_1_is_the_line_of_plan(fake: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")
    got = runner.invoke(app, ["plan", "--watch", "--watch-count", "1", "--kubeconfig", kubeconfig])
    assert got.exit_code == 2, got.stderr
    (line,) = got.stdout.splitlines()
    assert _counts(line) == (7, 8) == _fresh_counts(_items(), tmp_path)
    assert "placeable now (" in line and "; 1 blocked: " in line
    assert not fake.watches()  # one line asked for: nothing to watch for
    assert not any(r.path.endswith("poddisruptionbudgets") for r in fake.requests)


def test_plan_watch_follows_changes_from_the_command_line(fake: FakeApiServer, tmp_path: Path) -> None:
    """Two lines: the change is published once the command watches pods."""
    kubeconfig = str(tmp_path / "kubeconfig")

    def publish() -> None:
        _wait(lambda: any(r.path == "/api/v1/pods" for r in fake.watches()))
        fake.publish("ADDED", _copy(_pending(fake), "trainer-8"))

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    got = runner.invoke(app, ["plan", "--watch", "--watch-count", "2", "--kubeconfig", kubeconfig])
    thread.join(timeout=HANG)
    assert got.exit_code == 2, got.stderr
    lines = got.stdout.splitlines()
    assert [_counts(x)[1] for x in lines] == [8, 9]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--watch", str(DUMP)], "--watch needs a live cluster"),
        (["--watch-count", "2", "--live"], "--watch-count needs --watch"),
        (["--watch", "--live", "-n", "ml-training"], "cannot be combined with --namespace"),
        (["--watch", "--live", "--preempt", "--pod", "a/b"], "cannot be combined with --pod, --preempt"),
        (["--watch", "--live", "-o", "table"], "cannot be combined with --output"),
    ],
)
def test_watch_refuses_what_it_cannot_do_in_one_line(args: list[str], message: str) -> None:
    got = runner.invoke(app, ["plan", *args])
    assert got.exit_code != 0
    assert message in " ".join(re.sub("[│╭╮╰╯─]", " ", got.stderr).split())


def test_a_watch_that_is_forbidden_is_one_line_with_the_rule(tmp_path: Path) -> None:
    """Listing is allowed, watching is not: exit 1, the kind, and the rule with `watch`."""
    with serving(FakeApiServer(_items(), watch_errors={"pods": 403})) as fake:
        kubeconfig = str(fake.kubeconfig(tmp_path))
        got = runner.invoke(app, ["plan", "--watch", "--watch-count", "2", "--kubeconfig", kubeconfig])
    assert got.exit_code == 1 and "Traceback" not in got.stderr
    text = " ".join(got.stderr.split())
    assert "cannot watch pods (403 Forbidden: " in text
    assert 'verbs: ["get", "list", "watch"]' in text
    assert {r.method for r in fake.requests} == {"GET"}


def test_a_new_job_is_planned_for_the_pods_it_has_not_created(fake: FakeApiServer, tmp_path: Path) -> None:
    """A workload event: the Job's pods do not exist yet, so the plan has its two replicas."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "probe", "namespace": "ml-training", "uid": "uid-probe"},
        "spec": {"parallelism": 2, "template": {"spec": copy.deepcopy(_pending(fake)["spec"])}},
    }
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"

    def after(k: int, watching: Watching) -> None:
        if k == 1:
            fake.publish("ADDED", job)

    lines, _, _, _ = _watch(fake, tmp_path, 2, after)
    assert _counts(lines[1])[1] == _counts(lines[0])[1] + 2
    assert "[update +2 -0 " in lines[1]


def test_sigint_ends_plan_watch_with_130_and_nothing_written(fake: FakeApiServer, tmp_path: Path) -> None:
    """The real signal, in a subprocess: after the first line, Ctrl-C; exit 130, no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dra_solver", "plan", "--watch", "--kubeconfig", str(tmp_path / "kubeconfig")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert LINE.match(first), (first, proc.stderr.read() if proc.poll() is not None else "")
    _wait(lambda: len({r.path for r in fake.watches()}) >= 5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted: 1 plans printed" in err
    assert out == ""


def test_files_add_objects_to_the_watched_state(fake: FakeApiServer, tmp_path: Path) -> None:
    """`plan --watch --kubeconfig K FILE`: the FILE's objects stay on top of every state."""
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump(_copy(_pending(fake), "probe")))
    kubeconfig = str(tmp_path / "kubeconfig")
    got = runner.invoke(
        app, ["plan", "--watch", "--watch-count", "1", "--kubeconfig", kubeconfig, str(extra)]
    )
    (line,) = got.stdout.splitlines()
    assert _counts(line) == _fresh_counts([*_items(), read_yaml(extra.read_text())], tmp_path)
    assert _counts(line)[1] == 9


def test_pods_blocked_for_the_same_reason_count_together() -> None:
    """The line's top reason counts pods by their reasons' kind and facts: the pods' own names
    (claims, the nodes each fits on alone, which pods take the room) do not split a reason;
    what they ask for does."""

    def crowded(name: str, fits: tuple[str, ...], taker: str) -> Reason:
        rooms = tuple(f"devices it could use go to {taker}" for _ in fits)
        return Reason.of(
            Kind.CROWDED,
            name,
            total=100,
            fitting=len(fits),
            fits=fits,
            rooms=rooms,
            relation="higher",
            others=("98 nodes: Insufficient cpu",),
            claims=(f"{name}-claim",),
        )

    a = crowded("default/a", ("node-1", "node-2"), "default/p-3")
    b = crowded("default/b", ("node-7",), "default/p-9")
    assert a.alike() == b.alike() and say(a) != say(b)
    assert "fits on node-1 and node-2 alone" in say(a)

    def short(claim: str, count: int) -> Reason:
        part = Reason.of(Kind.SHORT, "dev", count=count, matching=2, usable=2, candidates=2)
        return Reason.of(Kind.REQUEST, claim, request="dev", parts=(part,), node="n1")

    c, d, e = short("default/x-claim", 4), short("default/y-claim", 4), short("default/y-claim", 8)
    assert c.alike() == d.alike() != e.alike()
    z = crowded("default/z", ("node-3",), "default/p-1")
    pods = [PodPlan(f"default/{i}", None, [], why=r) for i, r in enumerate([e, c, a, b, d, z])]
    line = watch_line(PlanOutcome(pods, "cpsat", {}), "plan", 0.1, now=0)
    assert "6 blocked: no node fits the pod (0 of 100 nodes): fits on node-1 and node-2 alone" in line
    assert " (3) [plan" in line, line


def test_on_a_terminal_the_first_list_says_what_was_read(
    fake: FakeApiServer, tmp_path: Path, monkeypatch: Any
) -> None:
    """`plan --watch` lists through its watcher with the same progress line as `plan`: on a
    terminal, stderr says what was read before the first line."""
    import io

    from rich.console import Console

    from dra_solver.cli import inputs

    buffer = io.StringIO()
    monkeypatch.setattr(inputs, "err", Console(file=buffer, force_terminal=True, width=300))
    got = runner.invoke(
        app, ["plan", "--watch", "--watch-count", "1", "--kubeconfig", str(tmp_path / "kubeconfig")]
    )
    assert got.exit_code == 2, got.stderr
    read = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", x) for x in buffer.getvalue().splitlines()]
    assert any(x.startswith(f"read context fake ({fake.url}): 5 Nodes") for x in read), read


def test_a_line_past_its_timeout_is_printed_and_says_it_was_cut_short(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    """A re-plan never keeps the console silent past its limit (--timeout, else a minute): the
    line comes with the checked plan so far, and says it was cut short."""
    lines: list[str] = []
    watching = Watching(
        Target(kubeconfig=str(tmp_path / "kubeconfig")),
        [],
        None,
        SEARCH,
        count=1,
        window=1.0,
        emit=lines.append,
        timeout=0.000001,
    )
    watching.run()
    assert len(lines) == 1 and "cut short by the timeout" in lines[0], lines
    assert _counts(lines[0])[1] == 8  # every pending pod is listed


def test_watch_plans_gated_pods_with_ignore_scheduling_gates(fake: FakeApiServer, tmp_path: Path) -> None:
    gated = _copy(_pending(fake), "gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    fake.publish("ADDED", gated)
    for ignore in (False, True):
        watching = Watching(
            Target(kubeconfig=str(tmp_path / "kubeconfig")),
            [],
            None,
            SEARCH,
            count=1,
            window=1.0,
            emit=lambda line: None,
            ignore_scheduling_gates=ignore,
        )
        watching.run()
        assert watching.last is not None
        reason = watching.last.pod("ml-training/gated").reason or ""
        assert ("waiting for scheduling gates" in reason) is not ignore, reason


def test_a_slice_that_breaks_and_is_fixed_leaves_its_pool_out_then_plans_it(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    """Issue #39: a slice the API server would refuse leaves its pool out (the pods it would
    serve name it), and its fix brings the pool back: the update touching the left-out pool is
    refused and the next line is a fresh plan, never one with the stand-ins beside the fixed
    slice. Every line's counts are those of a fresh `plan` of the same objects."""
    name = "gpu-a100-1-gpu.nvidia.com-q8x2z"
    original = copy.deepcopy(next(o for o in fake.objects if o["metadata"]["name"] == name))

    def after(k: int, watching: Watching) -> None:
        if k == 1:  # two devices of one name: a slice the API server would refuse
            bad = copy.deepcopy(original)
            bad["spec"]["devices"][1]["name"] = bad["spec"]["devices"][0]["name"]
            fake.publish("MODIFIED", bad)
        elif k == 2:
            fake.publish("MODIFIED", copy.deepcopy(original))

    lines, states, watching, _ = _watch(fake, tmp_path, 3, after)
    assert not any("not planned" in x for x in lines), lines
    for line, state in zip(lines, states, strict=True):
        assert _counts(line) == _fresh_counts(state, tmp_path)
    assert _counts(lines[2]) == _counts(lines[0])
    assert _counts(lines[1])[0] < _counts(lines[0])[0], lines  # the pool's pods wait meanwhile
    assert watching.last is not None


def test_a_pod_that_cannot_be_read_costs_only_itself(fake: FakeApiServer, tmp_path: Path) -> None:
    """Issue #39: an object the loader cannot read (a quantity that is not one) made every line
    after it `not planned: the cluster's objects are not valid`, where `plan` of the same
    objects plans everything else. Now the watch reads as `plan` does: the pod is listed with
    why it could not be read, the others are planned, and its fix is picked up."""

    def after(k: int, watching: Watching) -> None:
        if k == 1:
            bad = _copy(_pending(fake), "unreadable")
            bad["spec"]["containers"][0].setdefault("resources", {})["requests"] = {"cpu": "lots"}
            fake.publish("ADDED", bad)
        elif k == 2:
            fake.publish("MODIFIED", _copy(_pending(fake), "unreadable"))

    lines, states, watching, _ = _watch(fake, tmp_path, 3, after)
    assert not any("not planned" in x for x in lines), lines
    assert [_counts(x)[1] for x in lines] == [8, 9, 9]
    for line, state in zip(lines, states, strict=True):
        assert _counts(line) == _fresh_counts(state, tmp_path)
    assert watching.last is not None
    fixed = watching.last.pod("ml-training/unreadable")
    assert fixed.reason is None or "could not be read" not in fixed.reason
