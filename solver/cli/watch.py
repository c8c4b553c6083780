"""`dra-solver plan --watch`: a live "why is it pending" console (issue #32).

Why a module of its own: `plan` answers once; `--watch` keeps answering. It lists the cluster,
plans it, then follows the cluster's changes (`api.watch.Watcher`) and re-plans each batch of
them incrementally (`replan.planner.Planner.update`), printing one line per plan on stdout:

    12:04:31 pending 10: 8 placeable now (gpu-1 4, gpu-2 4); 2 blocked: <why> (2) [update +1 -0 0.21 s]

How a batch of changes becomes an update: the watcher's `Mirror` gives the loader's input for
the cluster as it is now (the pods workloads lack included, as in a list); the objects that
differ from the last input — added, removed, or changed in anything but their
resourceVersion, managedFields and heartbeat times — become `update(add, remove)`, a changed
object being removed and added again. So a pod the scheduler bound arrives as a bound pod
(with its claims' allocations, in the same batch when they came within the window), a Node
or ResourceSlice that changed re-checks the nodes it reaches, a deleted pod releases what it
held. A batch that changes nothing the planner reads prints nothing. When the planner refuses
an update (an object it cannot take as a change), or after a re-list (410 Gone), the state is
planned afresh, and the line says so; an invalid state prints its errors on stderr, a line
saying it was not planned, and waits for the next change.

Still read-only: the watcher sends GET requests only. `--watch-count N` ends after N lines
(the first plan included), with plan's exit code for the last one (0 every pod placeable, 2
not); Ctrl-C ends it with 130, as every interrupted command.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.text import Text

from .. import interrupt
from ..api.cluster import Cluster
from ..api.live import Target
from ..api.load import Document, load_lenient
from ..api.watch import Key, Mirror, Watcher, key_of
from ..cel.checks import validate_all as validate_cluster
from ..deadline import Deadline, enforced
from ..errors import DRASolverError, ValidationErrors
from ..gates import FeatureGates
from ..output.objects import OutputMode
from ..planning.job import Options
from ..planning.outcome import PlanOutcome, PodPlan
from ..planning.triage import triage
from ..replan.planner import Planner
from .console import BUG_HINT, EXIT_ERROR, EXIT_OK, EXIT_UNSCHEDULABLE, err, fail, print_warnings
from .help import UsageError
from .inputs import read_live
from .options import ExecutorChoice, OutputFormat, Search
from .request import PlanRequest

__all__ = [
    "BATCH_SECONDS",
    "WHERE_NODES",
    "WatchCountOpt",
    "WatchOpt",
    "Watching",
    "plan_watch",
    "watch_line",
]

WatchOpt = Annotated[
    bool,
    typer.Option(
        "--watch",
        "-w",
        help="With --kubeconfig/--context/--live: plan, then follow the cluster's changes and plan "
        "again on each (incrementally), one line each on stdout: pending pods, how many fit now and "
        "where, what blocks the rest. Read-only. Ends on Ctrl-C (exit 130) or after --watch-count.",
    ),
]
WatchCountOpt = Annotated[
    int | None,
    typer.Option(
        "--watch-count",
        min=1,
        metavar="N",
        help="With --watch: stop after N lines (the first plan included) and exit as plan does "
        "for the last one (0 every pod placeable, 2 not); default: until Ctrl-C.",
        show_default=False,
    ),
]

BATCH_SECONDS = 1.0
"""Changes that come within this many seconds of the first are planned as one batch: a pod the
scheduler binds and its claims' allocations are one change, sent as several events."""

WHERE_NODES = 3
"""The line names the nodes that take the most pods, up to this many, and counts the rest."""

REASON_CHARS = 160
"""The blocking reason is cut (with "…") beyond this many characters: the line stays a line."""

VOLATILE_META = ("resourceVersion", "managedFields")


WATCH_TIMEOUT = 60.0
"""A watch line's wall-clock limit without --timeout: never unbounded (issue #40 §2)."""


def watch_line(outcome: PlanOutcome, how: str, seconds: float, now: float | None = None) -> str:
    """The one line of a plan: the time (UTC), pending pods, how many a plan places now and
    where, the reason that blocks most of the rest, how it was planned and its status."""
    pods = outcome.pods
    placed = [p for p in pods if p.placed]
    where = Counter(str(p.node) for p in placed)
    top = sorted(where.items(), key=lambda item: (-item[1], item[0]))
    nodes = ", ".join(f"{node} {n}" for node, n in top[:WHERE_NODES])
    if len(top) > WHERE_NODES:
        nodes += f", +{len(top) - WHERE_NODES} nodes"
    clock = time.strftime("%H:%M:%S", time.gmtime(now))
    line = f"{clock} pending {len(pods)}: {len(placed)} placeable now"
    if nodes:
        line += f" ({nodes})"
    blocked = [p for p in pods if not p.placed]
    if blocked:
        keys = [_alike(p) for p in blocked]
        firsts = {
            k: p.reason or "no reason given" for k, p in reversed(list(zip(keys, blocked, strict=True)))
        }
        # the key only counts alike pods together; the line shows the first one's own words
        key, n = min(Counter(keys).items(), key=lambda item: (-item[1], firsts[item[0]]))
        reason = firsts[key]
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        line += f"; {len(blocked)} blocked: {reason} ({n})"
    status = "" if outcome.verdict is None else outcome.verdict.status.value
    return f"{line} [{how} {seconds:.2f} s, {status}]"


def _alike(p: PodPlan) -> Hashable:
    """What counts pods blocked for the same reason together on the watch line: the reason's
    kind and facts without those that make it the pod's own (`Reason.alike`); a
    reason given only as words (a held pod's, a check cut short) by its words."""
    if p.why is not None:
        return p.why.alike()
    return p.reason or "no reason given"


def _content(doc: dict[str, Any]) -> dict[str, Any]:
    """What the planner may read of an object: all but its resourceVersion, managedFields and
    the heartbeat times of its conditions (a Node's kubelet renews them without a change)."""
    meta = doc.get("metadata")
    out = dict(doc)
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in VOLATILE_META}
    status = doc.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        conditions = [
            {k: v for k, v in c.items() if k != "lastHeartbeatTime"} if isinstance(c, dict) else c
            for c in status["conditions"]
        ]
        out["status"] = {**status, "conditions": conditions}
    return out


@dataclass
class _Input:
    """The loader's input the planner holds: each live object by key, as compared."""

    docs: dict[Key, dict[str, Any]]

    @classmethod
    def of(cls, documents: Sequence[Document]) -> _Input:
        return cls({key_of(d): d for _, _, d in documents if isinstance(d, dict)})

    def changes(self, now: _Input) -> tuple[list[dict[str, Any]], list[tuple[str, str | None, str]]]:
        """(add, remove) that turn this input into `now`: a changed object is both."""
        remove: list[tuple[str, str | None, str]] = []
        add: list[dict[str, Any]] = []
        # The mirror keeps an object it got no event for as the same dict: `is` settles most.
        for key, doc in self.docs.items():
            new = now.docs.get(key)
            if new is None or (new is not doc and _content(new) != _content(doc)):
                remove.append((key[0], key[1] or None, key[2]))
        for key, doc in now.docs.items():
            old = self.docs.get(key)
            if old is None or (old is not doc and _content(old) != _content(doc)):
                add.append(doc)
        return add, remove


class Watching:
    """The loop of `plan --watch` (`run`), its lines going to `emit` (stdout by default).

    `window`: seconds of a batch (`BATCH_SECONDS`); `count`: lines before it returns (None:
    until Ctrl-C)."""

    def __init__(
        self,
        target: Target,
        paths: Sequence[str],
        feature_gates: str | None,
        search: Search,
        *,
        count: int | None = None,
        window: float = BATCH_SECONDS,
        emit: Callable[[str], None] | None = None,
        timeout: float = WATCH_TIMEOUT,
        ignore_scheduling_gates: bool = False,
    ) -> None:
        self.timeout = timeout
        """Each line's wall-clock limit (`--timeout`, else `WATCH_TIMEOUT`): a re-plan never
        keeps the console silent longer; a line cut short says so."""
        self.ignore_scheduling_gates = ignore_scheduling_gates
        self.target = target
        self.paths = tuple(paths)
        self.feature_gates = feature_gates
        self.search = search
        self.count = count
        self.window = window
        self.emit = emit if emit is not None else _print_line
        self.watcher = Watcher(target)
        self.planner: Planner | None = None
        self.input = _Input({})
        self.lines = 0
        self.last: PlanOutcome | None = None
        self.warned: set[str] = set()
        """The warnings printed so far (each once per watch)."""

    def run(self) -> int:
        """Plan, then re-plan on every batch of changes; the exit code (module docstring)."""
        try:
            follow = self.count != 1
            read = read_live(self.target, lambda progress: self.watcher.start(progress, follow=follow))
        except ValidationErrors as exc:
            fail(exc.errors)
        except DRASolverError as exc:
            fail([exc])
        try:
            print_warnings(read.warnings)
            gates = self._gates()
            options = self.search.options(gates, ignore_scheduling_gates=self.ignore_scheduling_gates)
            mirror = Mirror(read)
            self._fresh(mirror.documents(), gates, options, "plan")
            while self.count is None or self.lines < self.count:
                try:
                    batch = self.watcher.next_batch(self.window, interrupt.requested)
                except ValidationErrors as exc:
                    fail(exc.errors)
                except DRASolverError as exc:
                    fail([exc])
                if batch is None:
                    break
                for note in batch.notes:
                    err.print(Text(note, style="yellow"))
                if batch.relisted is not None:
                    mirror.reset(batch.relisted)
                    self._fresh(mirror.documents(), gates, options, "re-listed, fresh plan")
                    continue
                mirror.apply(batch.events)
                self._update(mirror.documents(), gates, options)
        finally:
            self.watcher.close()
        if interrupt.requested():
            err.print(Text(f"interrupted: {self.lines} plans printed", style="bold yellow"))
            return interrupt.EXIT_INTERRUPTED
        last = self.last
        if last is None:
            return EXIT_ERROR  # the last state was not valid
        return EXIT_OK if all(p.placed for p in last.pods) else EXIT_UNSCHEDULABLE

    def _gates(self) -> FeatureGates:
        try:
            return FeatureGates.of(self.feature_gates)
        except DRASolverError as exc:
            fail([exc])

    def _fresh(self, documents: list[Document], gates: FeatureGates, options: Options, how: str) -> None:
        """A new Planner on the whole state (files included), planned; an invalid state is
        said on stderr and in the line, and the planner waits for the next change."""
        started = time.perf_counter()
        self.input = _Input.of(documents)
        self.planner = None
        try:
            # Read as `plan` reads: an object that cannot be read costs what depends on it
            # (`planning.triage`), never every line of the watch.
            pairs, warnings, unread = load_lenient(self.paths, documents)
            # A plain Cluster: the files of the objects serve the validation's messages only
            # (`by_id`), so the planner need not carry them through its updates.
            cluster = Cluster.from_objects(obj for obj, _ in pairs)
            cluster.unread = unread
            by_id = {id(obj): src for obj, src in pairs}
            errors = validate_cluster(cluster, lambda obj: by_id.get(id(obj), ""), gates=gates)
            # A bad object costs only the pods that depend on it (`planning.triage`): said once
            # on stderr, those pods listed with it as their reason, the rest planned.
            done = triage(cluster, errors, gates, ignore_scheduling_gates=options.ignore_scheduling_gates)
            if done.fatal:
                raise ValidationErrors(done.fatal)
            warnings = [*warnings, *done.warnings]
            planner = Planner(done.cluster, options)
            deadline = Deadline.after(self.timeout)
            with enforced(deadline):
                outcome = planner.plan()
        except ValidationErrors as exc:
            self._not_planned(exc.errors)
            return
        except DRASolverError as exc:
            self._not_planned([exc])
            return
        # Each warning once per watch: a bad pod that arrives is said when it arrives, not again
        # with every line after it.
        print_warnings([w for w in warnings if w not in self.warned])
        self.warned.update(warnings)
        self.planner = planner
        self._said(outcome, _cut(how, deadline), time.perf_counter() - started)

    def _update(self, documents: list[Document], gates: FeatureGates, options: Options) -> None:
        now = _Input.of(documents)
        add, remove = self.input.changes(now)
        if not add and not remove:
            return  # nothing the planner reads changed: no line
        if self.planner is None:  # the last state was not valid: try this one whole
            self._fresh(documents, gates, options, "fresh plan")
            return
        started = time.perf_counter()
        deadline = Deadline.after(self.timeout)
        try:
            with enforced(deadline):
                outcome = self.planner.update(add=add, remove=remove)
        except DRASolverError as exc:
            err.print(Text(f"the update was refused ({exc}): planning afresh", style="yellow"))
            self._fresh(documents, gates, options, "fresh plan")
            return
        except Exception as exc:  # a bug of the incremental path: the fresh plan still answers
            if os.environ.get("DRA_SOLVER_DEBUG"):
                raise
            err.print(
                Text(
                    f"the update failed ({type(exc).__name__}: {exc}; {BUG_HINT}): planning afresh",
                    style="red",
                )
            )
            self._fresh(documents, gates, options, "fresh plan")
            return
        self.input = now
        how = _cut(f"update +{len(add)} -{len(remove)}", deadline)
        self._said(outcome, how, time.perf_counter() - started)

    def _said(self, outcome: PlanOutcome, how: str, seconds: float) -> None:
        if interrupt.requested():
            return  # a search cut short: Ctrl-C ends the watch, no line for it
        self.last = outcome
        self.lines += 1
        self.emit(watch_line(outcome, how, seconds))

    def _not_planned(self, errors: Sequence[DRASolverError]) -> None:
        for error in errors:
            err.print(Text(str(error), style="red"))
        self.last = None
        self.lines += 1
        clock = time.strftime("%H:%M:%S", time.gmtime())
        self.emit(
            f"{clock} not planned: the cluster's objects are not valid "
            f"({len(errors)} error{'' if len(errors) == 1 else 's'} on stderr)"
        )


def _cut(how: str, deadline: Deadline) -> str:
    """The line's `how`, with what the deadline did to it."""
    return f"{how}, cut short by the timeout" if deadline.fired else how


def plan_watch(request: PlanRequest, count: int | None) -> int:
    """`plan --watch`: the request checked (a live cluster; no option that plans something else
    than the pending pods of every namespace, nor one that writes a report), then watched."""
    target = request.inputs.live
    if target is None:
        raise UsageError("--watch needs a live cluster: --kubeconfig PATH, --context NAME or --live")
    given = {
        "--pod": request.pods is not None,
        "--node": request.nodes is not None,
        "--fill": request.fill is not None,
        "--node-template": bool(request.node_templates),
        "--scenario": bool(request.scenarios),
        "--namespace": request.namespace is not None,
        "--report": request.report is not None,
        "--preempt": request.preempt,
        "--partitions": request.partitions != 1,
        "--max-new-nodes": request.max_new_nodes is not None,
        "--output": request.output.format is not OutputFormat.yaml,  # it prints lines, not objects
        "--output-mode": request.output.mode is not OutputMode.changed,
        # it plans in this process
        "--executor": request.executor not in (ExecutorChoice.auto, ExecutorChoice.local),
        "--workers": request.workers is not None,
    }
    refused = [flag for flag, on in given.items() if on]
    if refused:
        raise UsageError(
            "--watch plans the pending pods of every namespace: it cannot be combined with "
            + ", ".join(refused)
        )
    deadline = request.deadline
    watching = Watching(
        target,
        request.inputs.paths,
        request.inputs.feature_gates,
        request.search,
        count=count,
        timeout=deadline.seconds if deadline is not None else WATCH_TIMEOUT,
        ignore_scheduling_gates=request.inputs.ignore_scheduling_gates,
    )
    with interrupt.signals_stop(
        "interrupted: stopping the watch (Ctrl-C again to exit now)" if err.is_terminal else ""
    ):
        return watching.run()


def _print_line(line: str) -> None:
    """stdout, flushed: a line is read as it comes (a terminal, `| grep`, a log)."""
    print(line, flush=True)
