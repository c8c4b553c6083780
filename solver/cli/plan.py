"""`dra-solver plan`: place many pods over many nodes; with --node-template, --fill or
--scenario, what-if plans; with --report, an HTML page of the plan.

Why this shape: `plan` has twenty options, so what the user asked is parsed once into one value,
`PlanRequest` (frozen), and the run's one `Options` is built from it once the input is valid;
the steps below take the request instead of loose arguments. Adding an option to `plan` is a
parameter of `plan`, a field of `PlanRequest`, and its use.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from .. import interrupt
from ..api.bounded import stop_reading_when
from ..api.cluster import Cluster
from ..api.load import collector_paused, dumps
from ..api.models import ResourceSlice
from ..api.templates import NodeTemplate
from ..deadline import Deadline, enforced
from ..deadline import fired as cut_short
from ..errors import DRASolverError, InputError
from ..executors import open_executor
from ..output.objects import OutputMode, changed_objects, cluster_after, plan_annotations
from ..output.report import ReportExtras, write_report
from ..output.table import plan_tables
from ..pipeline import DEFAULT_MAX_NEW_NODES
from ..pipeline import plan as plan_pods
from ..planners.run import fewer_collections
from ..planning.job import Options
from ..planning.outcome import PlanOutcome, PlanSummary, PodPlan, Status
from ..planning.resolve import resolve_nodes
from ..planning.snapshot import Snapshot
from ..preempt import PreemptOutcome, evicted_pod, plan_preempt
from ..whatif.filling import Fill
from ..whatif.filling import fill as fill_pod
from ..whatif.sweep import sweep, sweep_output
from .console import EXIT_ERROR, EXIT_UNSCHEDULABLE, err, fail, out, print_warnings
from .help import UsageError
from .inputs import Inputs, freeze_if_large, live_target, load_template, load_valid
from .options import (
    AllocatorChoice,
    ContextOpt,
    ExecutorChoice,
    FeatureGatesOpt,
    FilenameOpt,
    IgnoreGatesOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    LiveOpt,
    Output,
    OutputFormat,
    OutputModeOpt,
    OutputOpt,
    PathsArg,
    Search,
    SeedOpt,
    StrategyChoice,
    StrategyOpt,
    TimeLimitOpt,
    TimeoutOpt,
)
from .request import PlanRequest
from .steps import model_note, steps_annotations, steps_rows, steps_tables
from .watch import WatchCountOpt, WatchOpt, plan_watch

PLANNING_NOTICE = "planning (Ctrl-C stops the search and prints the best plan found so far)"
INTERRUPT_NOTICE = (
    "interrupted: stopping the search; the best plan found so far follows (Ctrl-C again to exit now)"
)

POD_LINES = 50
"""Up to this many pods, `plan` names every placed pod's node on stderr; above, only the pods
not placed get a line (each one line), so that a large plan ends in a summary, not a flood."""

UNPLACED_LINES = 10
"""At most this many pods not placed get their own stderr line; the rest are counted in one
line. Why: stderr is the short summary whatever the size of the plan (issue #12) — a plan of
thousands of pods that do not fit must not write thousands of lines; the table and `explain`
have the details."""


@dataclass(frozen=True)
class _Planned:
    """What the search returned, with what the output says about it."""

    outcome: PlanOutcome
    filled: Fill | None
    """--fill: the replicas' plan."""
    templates: tuple[NodeTemplate, ...]
    seconds: float
    """Wall clock of the search (loading, validating and writing not included)."""
    interrupted: bool

    @property
    def counted(self) -> str:
        return f"replicas of {self.filled.pod}" if self.filled is not None else "pods"


def plan(
    paths: PathsArg = None,
    filename: FilenameOpt = None,
    pod: Annotated[
        list[str] | None,
        typer.Option(
            "--pod",
            help="Pods to place (name or namespace/name), repeatable; default: every Pod "
            "with unallocated claims, or every unallocated claim as its own pod.",
        ),
    ] = None,
    node: Annotated[
        list[str] | None,
        typer.Option("--node", help="Candidate nodes, repeatable; default: every node the input knows."),
    ] = None,
    allocator: Annotated[
        AllocatorChoice, typer.Option(help="reference = scheduler-like first fit; cpsat = optimal.")
    ] = AllocatorChoice.cpsat,
    feature_gates: FeatureGatesOpt = None,
    kubernetes_version: KubernetesVersionOpt = None,
    ignore_scheduling_gates: IgnoreGatesOpt = False,
    strategy: StrategyOpt = StrategyChoice.pack,
    time_limit: TimeLimitOpt = 10.0,
    timeout: TimeoutOpt = None,
    seed: SeedOpt = 0,
    output: OutputOpt = OutputFormat.yaml,
    output_mode: OutputModeOpt = OutputMode.changed,
    node_template: Annotated[
        list[str] | None,
        typer.Option(
            "--node-template",
            help="A file with one Node and its ResourceSlices, repeatable: the plan may add copies "
            "(<node>-1, <node>-2, ...), fewest unplaced pods first, then least total cost "
            "(annotation dra-solver.io/cost, default 1).",
        ),
    ] = None,
    max_new_nodes: Annotated[
        int | None,
        typer.Option(
            "--max-new-nodes",
            min=0,
            help="Most copies of each node template; default: derived from the pending pods (as many "
            "as could go on the template: no optimal plan adds more). A cap that binds is reported "
            "with what it costs.",
        ),
    ] = DEFAULT_MAX_NEW_NODES,
    fill: Annotated[
        str | None,
        typer.Option(
            "--fill",
            help="How many more replicas of this pod fit (after the pending pods are placed); "
            "prints the replicas' plan.",
        ),
    ] = None,
    executor: Annotated[
        ExecutorChoice,
        typer.Option(
            "--executor",
            help="Where independent units run (components, partitions, scenarios): local = a process "
            "pool, ray = Ray (RAY_ADDRESS, else a local Ray), inline = this process, auto = local for "
            "partitions, scenarios or with --workers, else inline. Same plan on each.",
        ),
    ] = ExecutorChoice.auto,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Local pool size / CPUs of a local Ray (default 2)."),
    ] = None,
    partitions: Annotated[
        int,
        typer.Option(
            "--partitions",
            min=1,
            help="Split pods and nodes into K random parts (seeded), solve each alone, then repair "
            "what is left; reports the gap to the unpartitioned bound.",
        ),
    ] = 1,
    repair: Annotated[
        AllocatorChoice,
        typer.Option("--repair", help="The repair pass of --partitions: reference = first fit."),
    ] = AllocatorChoice.reference,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            help="A what-if scenario file (extra pods; Nodes with their slices are node templates), "
            "repeatable: plans each and prints one summary row per scenario.",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            help="Plan the pending pods of this namespace only (the others stay pending; bound pods of "
            "every namespace still use their nodes); --pod and --fill names without a namespace are in it.",
        ),
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option(
            "--all-namespaces", "-A", help="Plan the pending pods of every namespace (the default)."
        ),
    ] = False,
    report: Annotated[
        str | None,
        typer.Option(
            "--report",
            help="Also write the plan as one self-contained HTML page (summary, cluster map, "
            "utilisation, unplaced pods, added nodes) to this file.",
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="With --report: also plan with first fit on the same input and show its numbers "
            "side by side.",
        ),
    ] = False,
    preempt: Annotated[
        bool,
        typer.Option(
            "--preempt",
            help="Lower-priority running pods may be evicted for the pending ones, at least damage "
            "(most placed weight, then fewest PDB violations, lowest highest and sum of evicted "
            "priorities, fewest evicted pods); prints the evicted Pods and the claims they release.",
        ),
    ] = False,
    allow_moves: Annotated[
        bool,
        typer.Option(
            "--allow-moves",
            help="With --preempt: a running pod a controller owns (ReplicaSet, Job, ...), whose claims "
            "all come from its templates, may be moved to another node instead of evicted; fewest "
            "moves is the last criterion. Prints each moved Pod on its new node with its new claims.",
        ),
    ] = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
    watch: WatchOpt = False,
    watch_count: WatchCountOpt = None,
) -> None:
    """Place many pods over many nodes: as many (priority-weighted) pods as possible.

    Prints a `kind: List` of the Pods (placed ones with spec.nodeName, the others with a
    PodScheduled=False condition) and their claims (placed ones with status.allocation) and,
    on stderr, where each pod goes or why it does not fit. Exit 0 when every pod is placed, 2
    when some are not, 1 on invalid input. Ctrl-C or SIGTERM stops the search: the best plan
    found so far (every placement checked) is printed and the exit code is 130; a second
    Ctrl-C exits at once.
    """
    # The one deadline of the run: from the process's start (the console script), reading and
    # validating the input included.
    deadline = Deadline.since_start(timeout) if timeout is not None else None
    request = PlanRequest(
        # In this order: a bad --output-mode is a usage error before a missing input is.
        output=Output(output, output_mode),
        inputs=Inputs.of(
            paths,
            filename,
            feature_gates,
            live_target(kubeconfig, context, live),
            reads_live=True,
            kubernetes_version=kubernetes_version,
            ignore_scheduling_gates=ignore_scheduling_gates,
        ),
        search=Search(allocator, strategy, time_limit, seed),
        pods=None if pod is None else tuple(pod),
        nodes=tuple(node) if node else None,
        fill=fill,
        node_templates=tuple(node_template or ()),
        max_new_nodes=max_new_nodes,
        executor=executor,
        workers=workers,
        partitions=partitions,
        repair=repair,
        scenarios=tuple(scenario or ()),
        namespace=namespace,
        all_namespaces=all_namespaces,
        report=report,
        compare=compare,
        preempt=preempt,
        allow_moves=allow_moves,
        deadline=deadline,
    )
    if allow_moves and not preempt:
        raise UsageError("--allow-moves needs --preempt")
    if watch or watch_count is not None:
        if not watch:
            raise UsageError("--watch-count needs --watch")
        raise typer.Exit(plan_watch(request, watch_count))
    # The whole run as a plan runs (`planners.run.fewer_collections`): reading, validating,
    # planning and writing a large cluster keep millions of objects alive, and at Python's
    # thresholds the collector traversed them again and again between the steps (a third of
    # the writing of a 10,000-pod plan: the Pods' dumps). Changes no result.
    with fewer_collections():
        with stop_reading_when(partial(_cut_short_after, deadline)):
            loaded = load_valid(request.inputs)
        cluster = loaded.cluster
        options = request.options(loaded.gates)
        if options.deadline is not None:  # the output's time is not the search's
            gauge_writing(options.deadline, cluster, request.output)
            writing, objects = output_cpu_seconds(cluster, request.output)
            exact = request.output.mode is OutputMode.full and not request.output.tabular
            what = f"writing {objects:,} objects"
            options = Options.of(options, deadline=options.deadline.leaving(writing, exact=exact, what=what))
        if request.scenarios:
            _sweep(cluster, request, options)
            return
        request = request.in_namespace(cluster, loaded.gates)
        request.check_names(cluster)
        planned = _search(cluster, request, options)
        _end_if_nothing_placed(request, planned)
        if request.report is not None:
            _write_report(request.report, cluster, request, options, planned)
        # Without the cyclic collector: writing copies and dumps each Pod and claim, tens of
        # millions of objects at 50,000 pods, all alive until written, and even at the raised
        # thresholds its younger generations traversed them for half of the CPU of making
        # them (3.0 of 6.1 s, skewed 50,000 pods), finding no garbage. Changes no output.
        with collector_paused():
            _write_plan(cluster, request, options, planned)
        # Still with the thresholds raised: back at Python's, the first allocations after a
        # large plan set off a collection of the whole heap (a CPU second at 10,000 pods).
        _say_how_it_went(request, planned)


NO_PLAN = "before any pod was placed: no plan (a longer --timeout gives one)"
"""The end of the one stderr line of a run whose deadline passed with nothing placed."""


def _end_if_nothing_placed(request: PlanRequest, planned: _Planned) -> None:
    """A run cut short by --timeout before it placed any pod ends here: one line on stderr,
    nothing on stdout, exit 1 (`typer.Exit`), as a run cut short while reading does. Why: a
    plan placing nothing says only that the time was too short — every pod's reason would be
    the deadline — while writing it is the costliest step left (`--output-mode full`: the whole cluster again,
    seconds at 10,000 objects), which would take the run far past its deadline to say nothing
    (docs/semantics.md, "Limits and determinism")."""
    outcome = planned.outcome
    if not (cut_short(request.deadline) and request.deadline is not None) or planned.interrupted:
        return
    if outcome.placed or not outcome.pods or outcome.added_nodes:
        return
    warnings = outcome.stats.get("warnings")
    print_warnings(warnings if isinstance(warnings, list) else [])
    seconds = request.deadline.elapsed()
    kept = request.deadline.kept_for()
    err.print(
        Text(
            f"cut short by --timeout after {seconds:.1f} s{f' ({kept})' if kept else ''} {NO_PLAN}",
            style="bold yellow",
        )
    )
    raise typer.Exit(EXIT_ERROR)


def _cut_short_after(deadline: Deadline | None) -> str | None:
    """Why reading stops (`api.bounded.stop_reading_when`): the run's deadline passed."""
    if deadline is None or not deadline.passed():
        return None
    return f"cut short by --timeout after {deadline.elapsed():.1f} s"


WRITE_CPU_PER_OBJECT = 0.00006
"""CPU seconds writing one object takes as YAML or JSON on the reference machine (its dump
and its text; 57 us fitted), plus `WRITE_CPU_PER_POD` for a pending Pod (recorded in the
cluster after the plan with its node or its condition, and the claims its templates make; 116
us), `WRITE_CPU_PER_DEVICE` for each device of a ResourceSlice (13 us) and
`WRITE_CPU_PER_ALLOCATION` for a claim the plan may allocate (none measurable beside the
others). Fitted to the writing of the plans of the overshoot benchmark's eight inputs
(0.05-1.1 CPU s each, on the 2 shared cores at load 9: this count within 0.8-1.2x of each);
docs/benchmarks.md, "Bounded runs". Turned into this run's seconds by its pace
(`gauge_writing`)."""
WRITE_CPU_PER_POD = 0.00012
WRITE_CPU_PER_DEVICE = 0.000015
WRITE_CPU_PER_ALLOCATION = 0.00001

WRITE_SAMPLE = 300
"""Objects `gauge_writing` writes to measure the run's pace: 1-2 % of a large input's writing,
enough CPU (10-40 ms) for the clock to measure."""


def slice_devices(slices: Iterable[ResourceSlice]) -> int:
    """The devices of `slices`."""
    return sum(len(s.spec.devices or ()) for s in slices)


def gauge_writing(deadline: Deadline, cluster: Cluster, output: Output) -> None:
    """Set the run's pace (`Deadline.gauge`) by writing a sample of its objects — every k-th,
    `WRITE_SAMPLE` of them, each dumped and written as the plan's writing does, the text thrown
    away — against what the count says they cost (`WRITE_CPU_PER_OBJECT`, `..._DEVICE`). Why
    the writing itself: the costs were measured on one machine at one load, and how much
    slower or faster this run's CPU seconds do that work (its CPU, a busy machine's
    contention) is best told by the work itself — reading, for one, goes twice as slow
    through YAML aliases as without, which says nothing of the writing. Tables and names
    (`-o name`) are not gauged: their writing is small."""
    if output.tabular or output.format is OutputFormat.name:
        return
    objects = cluster.objects()
    if not objects:
        return
    sample = objects[:: max(len(objects) // WRITE_SAMPLE, 1)][:WRITE_SAMPLE]
    dumps([sample[0].dump()], output.format.value, distinct=True)  # the emitter's first call: its setup
    with deadline.gauging() as gauge:
        dumps([o.dump() for o in sample], output.format.value, distinct=True)
        slices = [o for o in sample if isinstance(o, ResourceSlice)]
        gauge.counted = len(sample) * WRITE_CPU_PER_OBJECT + slice_devices(slices) * WRITE_CPU_PER_DEVICE


def output_cpu_seconds(cluster: Cluster, output: Output) -> tuple[float, int]:
    """What writing the plan will take on the reference machine, counted, and the objects it
    counts: every object it may write (`--output-mode full`: the cluster's and the claims the
    pending pods' templates make — what any plan writes; `changed`: the pods to plan and
    their claims, at most a claim per claim entry, a worst case), each at its cost
    (`WRITE_CPU_PER_*`). The search leaves this much, at the run's pace (`Deadline.leaving`)."""
    pending = [p for p in cluster.pods.values() if not p.spec.node_name]
    entries = sum(len(p.spec.resource_claims) for p in pending)
    unallocated = sum(1 for c in cluster.claims.values() if c.status is None or c.status.allocation is None)
    if output.mode is OutputMode.full:
        made = sum(1 for p in pending for e in p.spec.resource_claims if e.resource_claim_template_name)
        objects = len(cluster.objects()) + made
        seconds = objects * WRITE_CPU_PER_OBJECT + slice_devices(cluster.slices) * WRITE_CPU_PER_DEVICE
    else:
        objects = len(pending) + entries + len(cluster.claims)  # a claim held may be reserved
        seconds = objects * WRITE_CPU_PER_OBJECT
    seconds += len(pending) * WRITE_CPU_PER_POD + (unallocated + entries) * WRITE_CPU_PER_ALLOCATION
    if output.format is OutputFormat.name:
        seconds /= 10  # a line per object
    return seconds, objects


def _search(cluster: Cluster, request: PlanRequest, options: Options) -> _Planned:
    """The plan (or --fill's replicas), timed; Ctrl-C or SIGTERM stop the search with the best
    plan found so far."""
    started = time.perf_counter()
    try:
        with (
            # On a terminal the signal is answered at once; in a pipe or a log the final
            # `interrupted: placed ...` line is the one message (issue #29).
            interrupt.signals_stop(INTERRUPT_NOTICE if err.is_terminal else ""),
            enforced(options.deadline),  # inside signals_stop: a passed deadline stops as Ctrl-C does
            _progress_bar(options.allocator) as progress,
            _running(request, options, progress) as running,
        ):
            err.print(Text(PLANNING_NOTICE, style="dim"))
            filled: Fill | None = None
            templates: list[NodeTemplate] = []
            if request.fill is not None:
                filled = fill_pod(cluster, request.fill, request.nodes, running)
                outcome = filled.outcome
            elif request.preempt:
                with fewer_collections():  # as `plan` does (pipeline.plan)
                    outcome = plan_preempt(
                        cluster,
                        pods=request.pods,
                        nodes=request.nodes,
                        options=running,
                        allow_moves=request.allow_moves,
                    )
            else:
                templates = [load_template(f) for f in request.node_templates]
                with _kept_out_of_collection(cluster):
                    outcome = plan_pods(
                        cluster,
                        pods=request.pods,
                        nodes=request.nodes,
                        options=running,
                        node_templates=templates or None,
                        max_new_nodes=request.max_new_nodes,
                    )
            interrupted = interrupt.requested() and not cut_short(options.deadline)
    except DRASolverError as exc:
        fail([exc])
    return _Planned(outcome, filled, tuple(templates), time.perf_counter() - started, interrupted)


@contextmanager
def _kept_out_of_collection(cluster: Cluster) -> Iterator[None]:
    """The plan without the cyclic collector (`api.load.collector_paused`) and, on a cluster of
    `FREEZE_AT` objects or more (pods, claims, slices and nodes), what it made frozen
    (`gc.freeze`) before the collector is put back, as `load_valid` does with what it reads.
    Why: a plan keeps what it makes (claims and their results, per-pod plans, the reasons'
    indexes) until its output is written, and the young collections at
    `planners.run.fewer_collections`' thresholds traversed all of it without finding garbage —
    2.7 of 59 CPU seconds of a 50,000-pod plan (skewed, busy). Paused only, the first
    collection after it would traverse all of it at once (the collector's count goes on while
    it is paused); frozen, none does before the command ends, where nothing is collected
    (`cli.main`). Below `FREEZE_AT` (the test suite runs commands in-process) the cycles left
    are collected as usual once the collector runs again. Cyclic garbage made while it is
    paused waits: a few ten thousand objects of millions at 10,000 pods. Changes no result."""
    with collector_paused():
        yield
        freeze_if_large(len(cluster.pods) + len(cluster.claims) + len(cluster.slices) + len(cluster.nodes))


@contextmanager
def _running(
    request: PlanRequest, options: Options, progress: Callable[[int, int], None] | None = None
) -> Iterator[Options]:
    """`options` as the search runs with them: on the executor of --executor (shut down when the
    search ends) and, when given, telling `progress` how first fit goes."""
    whole_plans = request.partitions > 1 or bool(request.scenarios)
    with open_executor(request.executor.value, request.workers, whole_plans=whole_plans) as pool:
        yield Options.of(options, executor=pool, progress=progress)


@contextmanager
def _progress_bar(allocator: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr while first fit works, then a spinner while the chosen allocator
    improves on it — only when stderr is a terminal (never in pipes, files or CI logs)."""
    if not err.is_terminal:
        yield None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("first fit", total=None)
        later = "CP-SAT (up to the time limit)" if allocator == "cpsat" else "results"

        def progress(done: int, total: int) -> None:
            if done == total:
                bar.update(task, description=later, completed=done, total=None)
            elif done % 50 == 0 or done == 1:
                bar.update(task, completed=done, total=total)

        yield progress


def _write_report(
    path: str, cluster: Cluster, request: PlanRequest, options: Options, planned: _Planned
) -> None:
    """--report: the HTML page; --compare: with first fit's plan of the same input beside it
    (in this process: the search's executor is shut down by now)."""
    first_fit = partial(
        plan_pods,
        cluster,
        pods=request.pods,
        nodes=request.nodes,
        options=Options.of(options, allocator="reference"),
        node_templates=list(planned.templates) or None,
        max_new_nodes=request.max_new_nodes,
    )
    written = write_report(
        path,
        cluster,
        planned.outcome,
        resolve_nodes(cluster, request.nodes),
        options.feature_gates,
        seconds=planned.seconds,
        first_fit=first_fit if request.compare else None,
        extras=ReportExtras(request.inputs.paths, **_steps_for_report(cluster, planned.outcome)),
    )
    err.print(Text(f"report: {written} ({written.stat().st_size / 1e6:.1f} MB)", style="dim"))


def _steps_for_report(cluster: Cluster, outcome: PlanOutcome) -> dict[str, list[dict[str, str]]]:
    """A preemption plan's steps and fragmentation readings for the report (`cli.steps`)."""
    if not isinstance(outcome, PreemptOutcome):
        return {}
    rows, readings = steps_rows(cluster, outcome)
    return {"steps": rows, "readings": readings}


def _write_plan(cluster: Cluster, request: PlanRequest, options: Options, planned: _Planned) -> None:
    """stdout: the table, or the objects (the nodes a what-if plan adds first)."""
    outcome = planned.outcome
    if isinstance(outcome, PreemptOutcome):
        _write_preempted(cluster, request, options, planned, outcome)
        return
    if request.output.tabular:
        # the nodes a what-if plan adds, with their slices: their devices count as the report's do
        new = {n.metadata.name: n for n in outcome.added_nodes}
        grown = replace(
            cluster, slices=[*cluster.slices, *outcome.added_slices], nodes={**cluster.nodes, **new}
        )
        nodes = list(dict.fromkeys([*resolve_nodes(grown, request.nodes), *new]))
        summary = plan_summary(outcome, planned.seconds, planned.counted)
        out.print(plan_tables(grown, outcome, nodes, options.feature_gates, summary, request.output.wide))
        return
    added = [o.dump() for o in (*outcome.added_nodes, *outcome.added_slices)]
    notes = plan_annotations(
        PlanSummary.of(outcome), outcome.pods, planned.interrupted, cut_short(request.deadline)
    )
    if request.output.mode is OutputMode.full:
        objects = [*cluster_after(cluster, outcome.pods), *added]
    else:
        objects = [*added, *changed_objects(outcome.pods)]
    # Each object a fresh dump (`K8sModel.dump`), but for the documents `cluster_after` copies
    # back as they were read (a YAML alias there is one object twice, written as an anchor).
    fresh = request.output.mode is not OutputMode.full or not cluster.unread
    request.output.write(objects, notes, distinct=fresh)


def _write_preempted(
    cluster: Cluster, request: PlanRequest, options: Options, planned: _Planned, outcome: PreemptOutcome
) -> None:
    """--preempt's stdout: as `_write_plan`, on the cluster after the evictions. `changed`: the
    plan's Pods and claims, then every evicted Pod with its DisruptionTarget condition and the
    claims the evictions release; `full`: the cluster after the plan, without the evicted pods
    (deleted) and with the released claims (loads again as the next run's input)."""
    gone = Snapshot(cluster, options.feature_gates)
    gone.evict({v.name for v in outcome.victims} | {m.name for m in outcome.moves})
    moved = [m.plan for m in outcome.moves if m.plan is not None]
    for plan_ in moved:  # the re-created pod, placed on its new node below (`preempt.moves`)
        if plan_.pod is not None:
            gone.create(plan_.pod)
    after = gone.cluster
    if request.output.tabular:
        summary = f"{plan_summary(outcome, planned.seconds)}; {outcome.summary}"
        nodes = resolve_nodes(cluster, request.nodes)
        tables = plan_tables(
            after,
            outcome,
            nodes,
            options.feature_gates,
            summary,
            request.output.wide,
            evicted=outcome.victims,
            released=outcome.released,
            moved=outcome.moves,
        )
        out.print(tables)
        out.print(steps_tables(cluster, outcome, request.output.wide))
        return
    notes = plan_annotations(
        PlanSummary.of(outcome), outcome.pods, planned.interrupted, cut_short(request.deadline)
    )
    notes.update(steps_annotations(cluster, outcome))
    if request.output.format is OutputFormat.name:
        # `-o name` names what the plan places (a moved pod is re-created where it lands); an
        # evicted pod is not one of them, and its line on stderr says it is evicted: printed
        # here too it would read exactly like a placed pod (docs/cli.md, "-o name").
        objects = [*changed_objects(outcome.pods), *changed_objects(moved)]
    elif request.output.mode is OutputMode.full:
        objects = cluster_after(after, [*outcome.pods, *moved])
    else:
        evicted = [evicted_pod(v.pod) for v in outcome.victims if v.pod is not None]
        objects = [
            *changed_objects(outcome.pods),
            *changed_objects(moved),
            *evicted,
            *(c.dump() for c in outcome.released),
        ]
    request.output.write(objects, notes)


def _say_how_it_went(request: PlanRequest, planned: _Planned) -> None:
    """stderr: the plan's warnings, a line per pod (bounded), the summary, what a what-if plan
    adds, --fill's answer; then the exit code (130 interrupted, 2 when pods are not placed)."""
    outcome = planned.outcome
    warnings = outcome.stats.get("warnings")  # a list of str (pipeline.plan, whatif)
    print_warnings(warnings if isinstance(warnings, list) else [])
    # The table already has a row per pod; stderr then keeps only the summary.
    if not request.output.tabular:
        _print_pod_lines(outcome.pods, planned.filled.pod if planned.filled is not None else None)
    if planned.interrupted:
        summary = f"interrupted: {plan_summary(outcome, planned.seconds, planned.counted)}"
        err.print(Text(f"{summary} (the best plan found so far)", style="bold yellow"))
        raise typer.Exit(interrupt.EXIT_INTERRUPTED)
    deadline = request.deadline
    if cut_short(deadline) and deadline is not None:
        kept = deadline.kept_for()
        err.print(
            Text(
                f"cut short by --timeout after {deadline.elapsed():.1f} s{f' ({kept})' if kept else ''}: "
                "the best checked plan so far; this answer depends on the machine's speed",
                style="bold yellow",
            )
        )
    if isinstance(outcome, PreemptOutcome) and not request.output.tabular:
        _print_evictions(outcome)
    if not request.output.tabular:  # the table has the summary
        err.print(Text(plan_summary(outcome, planned.seconds, planned.counted), style="bold"))
    if isinstance(outcome, PreemptOutcome):
        err.print(Text(outcome.summary, style="bold"))
        if (why := model_note(outcome)) is not None:
            err.print(Text(why, style="yellow"))
    if request.node_templates:
        for line in whatif_lines(outcome):
            err.print(Text(line, style="bold"))
    if planned.filled is not None:
        err.print(Text(planned.filled.summary(), style="bold"))
        return
    if outcome.placed < len(outcome.pods):
        raise typer.Exit(EXIT_UNSCHEDULABLE)


def _print_evictions(outcome: PreemptOutcome) -> None:
    """stderr under --preempt: a line per evicted and per moved pod (bounded, like the pods')."""
    for v in outcome.victims[:POD_LINES]:
        err.print(Text(f"{v.name}: {v.reason}", style="yellow"))
    if len(outcome.victims) > POD_LINES:
        err.print(Text(f"… and {len(outcome.victims) - POD_LINES} more evicted pods", style="yellow"))
    for m in outcome.moves[:POD_LINES]:
        err.print(Text(f"{m.name}: {m.reason}", style="yellow"))
    if len(outcome.moves) > POD_LINES:
        err.print(Text(f"… and {len(outcome.moves) - POD_LINES} more moved pods", style="yellow"))


def _sweep(cluster: Cluster, request: PlanRequest, options: Options) -> None:
    """`plan --scenario`: one plan per scenario on the executor, one table (`solver.whatif.sweep`)."""
    if request.output.format is OutputFormat.name:
        fail([InputError("--scenario prints rows, not objects: use -o table, wide, yaml or json")])
    try:
        templates = [load_template(f) for f in request.node_templates]
        with _running(request, options) as running:
            rows = sweep(
                cluster,
                request.scenarios,
                running,
                templates=templates,
                max_new_nodes=request.max_new_nodes,
            )
    except DRASolverError as exc:
        fail([exc])
    sys.stdout.write(sweep_output(rows, "table" if request.output.tabular else request.output.format.value))


def whatif_lines(outcome: PlanOutcome) -> list[str]:
    """The what-if lines on stderr: what is added and its cost, with the cost bound unless the
    cost is proven least (`solver.planners.whatif`: per path, what the bound bounds), then a cap that
    binds (or may) and what it costs."""
    stats = outcome.stats
    cost, bound = stats.get("added_cost"), stats.get("cost_bound")
    line = f"{stats.get('added')} (cost {cost})"
    status = None if outcome.verdict is None else outcome.verdict.status
    if status == Status.OPTIMAL:
        line += ", least cost proven"
    elif status == Status.OPTIMAL_WITHIN_CAP:
        line += ", least cost proven within the cap"
    elif bound is not None:
        line += f", cost bound {bound} (least cost not proven)"
    else:
        line += ", first fit (least cost not proven)"
    lines = [line]
    if stats.get("whatif_cap"):
        lines.append(str(stats["whatif_cap"]))
    return lines


def _print_pod_lines(pods: Sequence[PodPlan], copies: str | None = None) -> None:
    """The per-pod stderr lines of `plan`, bounded: the first `UNPLACED_LINES` pods not placed
    (highest priority first, then input order: the ones a user most wants to hear about), one
    line counting the others, and each placed pod's node when the plan has at most `POD_LINES`
    pods. Lines keep the input order, so they read like the output's list of Pods.

    Each line not placed ends in the `dra-solver explain` command that runs on the input:
    `--claim` for plain claims; `copies` (a `--fill` plan): the pod the replicas copy, as the
    replicas are not in the input."""
    unplaced = [i for i, p in enumerate(pods) if not p.placed]
    shown = set(sorted(unplaced, key=lambda i: (-pods[i].priority, i))[:UNPLACED_LINES])
    every_pod = len(pods) <= POD_LINES
    for i, p in enumerate(pods):
        if i in shown:
            if copies is not None:
                hint = f" (details: dra-solver explain --pod {copies}, the pod it copies)"
            else:
                hint = f" (details: dra-solver explain {p.explain_flags})"
            err.print(Text(f"{p.name}: not placed: {p.reason}{hint}", style="red"))
        elif p.placed and every_pod:
            err.print(Text(f"{p.name}: node {p.node}", style="green"))
    if len(unplaced) > len(shown):
        more = len(unplaced) - len(shown)
        if copies is not None:
            flag = f"--pod {copies}"
        elif all(pods[i].pod is None for i in unplaced):
            flag = "--claim NAME"
        else:
            flag = "--pod NAME"
        hint = f"`-o table` or `dra-solver explain {flag}` for each"
        err.print(Text(f"… and {more} more pod{'s' if more != 1 else ''} not placed ({hint})", style="red"))


def plan_summary(outcome: PlanOutcome, seconds: float, counted: str = "pods") -> str:
    """One line: placed of total, the allocator, status, objective, bound and gap, what it kept
    instead (a fallback to first fit), first fit's count, and the wall clock of the planning
    (loading and validating the input, and writing the output, not included). Counts and
    objective describe the pods in the output, each with its own weight; only the bound comes
    from the allocator (`solver.planning.outcome`)."""
    return PlanSummary.of(outcome).text(seconds, counted)


__all__ = [
    "PLANNING_NOTICE",
    "POD_LINES",
    "UNPLACED_LINES",
    "PlanRequest",
    "plan",
    "plan_summary",
    "whatif_lines",
]
