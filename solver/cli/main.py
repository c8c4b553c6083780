"""The `dra-solver` command line (typer + rich).

Why this shape: every command starts the same way — read files/directories/stdin into a
Cluster, print every input problem as `file: Kind ns/name: field: reason`, exit 1 — so
loading and error printing are shared helpers (`_load_or_exit`, `_print_errors`) and each
command is one function that only does its own job. Bad input must never end in a Python
traceback: every `DRASolverError` is printed as a message and mapped to exit code 1.

Exit codes: 0 success, 1 invalid input or error, 2 (allocate) the claims cannot be allocated,
3 (check) the cluster breaks a rule.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, NoReturn

import typer
import typer.core
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from dra_solver import __version__, interrupt
from dra_solver.api.cluster import Cluster
from dra_solver.api.gated import gated_warnings
from dra_solver.api.load import dumps, load_sourced
from dra_solver.api.models import Pod, TypeMeta
from dra_solver.api.validate import admin_namespace_warnings, pool_problems
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.check import Violation, check_cluster
from dra_solver.errors import DRASolverError, InputError, ValidationErrors
from dra_solver.executors import open_executor
from dra_solver.explain.diagnosis import explain as explain_why
from dra_solver.gates import FeatureGates
from dra_solver.output.objects import ANNOTATION, OutputMode, changed_objects, cluster_after, plan_annotations
from dra_solver.output.report import write_report
from dra_solver.output.summary import PlanSummary
from dra_solver.output.table import plan_tables
from dra_solver.pipeline import DEFAULT_MAX_NEW_NODES, AllocationOutcome
from dra_solver.pipeline import allocate as allocate_claims
from dra_solver.pipeline import plan as plan_pods
from dra_solver.planning.job import Options, PlanOutcome, PodPlan
from dra_solver.planning.resolve import known_nodes, resolve_nodes, resolve_units
from dra_solver.whatif.filling import Fill
from dra_solver.whatif.filling import fill as fill_pod
from dra_solver.whatif.sweep import sweep, sweep_output
from dra_solver.whatif.templates import NodeTemplate

try:  # typer >= 0.20 vendors click; older releases use click itself
    from typer import _click as click
    from typer._click.exceptions import NoArgsIsHelpError as _NoArgsIsHelpError
    from typer._click.exceptions import UsageError as _UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    import click  # type: ignore[no-redef]  # older typer: click itself, the same classes
    from click.exceptions import NoArgsIsHelpError as _NoArgsIsHelpError  # type: ignore[assignment]  # (as above)
    from click.exceptions import UsageError as _UsageError  # type: ignore[assignment]  # (as above)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_UNSCHEDULABLE = 2
EXIT_VIOLATIONS = 3
OUT_OF_MEMORY = (
    "out of memory: the input, or the plan it asks for, is too large for this machine "
    "(give fewer files, pods or nodes)"
)
BUG_HINT = "a bug in dra-solver; DRA_SOLVER_DEBUG=1 shows the traceback"
PLANNING_NOTICE = "planning (Ctrl-C stops the search and prints the best plan found so far)"
INTERRUPT_NOTICE = (
    "interrupted: stopping the search; the best plan found so far follows (Ctrl-C again to exit now)"
)


def _reflow(text: str) -> str:
    """Help text with each paragraph on one line: docstrings are wrapped at the source's line
    length, and rich would otherwise keep those breaks and wrap again at the terminal's width
    (ragged lines). A paragraph starting with `\\b` keeps its breaks, as in click."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _tidy_help(command: typer.core.TyperCommand | typer.core.TyperGroup, ctx: click.Context) -> None:
    """Make one command's help read cleanly: typer labels every option with its Python type,
    which for a flag (`--any-node`, `--version`, `--help`) is a meaningless `<bool>` and for a
    repeatable option `<list[str]>`; flags get no label, repeatable options their element's
    (`<str>`, the help says "repeatable"). Idempotent, so every help request may call it."""
    if command.help:
        command.help = _reflow(command.help)
    for param in [*command.params, command.get_help_option(ctx)]:
        if not isinstance(param, typer.core.TyperOption) or param.metavar is not None:
            continue
        if param.is_bool_flag:
            param.metavar = ""
        else:
            label = param.display_type(ctx)
            if label.startswith("<list[") and label.endswith("]>"):
                param.metavar = f"<{label[6:-2]}>"


class _Group(typer.core.TyperGroup):
    """The app's group: tidies the help of itself and of every command (`_tidy_help`), so
    commands added later get clean help without doing anything."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup):
            _tidy_help(command, ctx)
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _tidy_help(self, ctx)
        for command in self.commands.values():
            if isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup):
                _tidy_help(command, ctx)
        super().format_help(ctx, formatter)


app = typer.Typer(
    name="dra-solver",
    cls=_Group,
    help="Optimal allocation engine for Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Consoles resolve sys.stdout/sys.stderr at print time, so test runners can capture them.
_out = Console(soft_wrap=True, highlight=False)
_err = Console(stderr=True, soft_wrap=True, highlight=False)

PathsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="YAML/JSON files (multi-document and `kind: List` allowed), directories "
        "(their *.yaml, *.yml, *.json files, recursively) or `-` for stdin; also as -f.",
        metavar="PATH",
        show_default=False,
    ),
]
FilenameOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filename",
        "-f",
        help="An input, as a PATH argument (kubectl's habit), repeatable; read after the PATHs.",
        show_default=False,
    ),
]


def _inputs(paths: list[str] | None, filenames: list[str] | None) -> list[str]:
    """The PATH arguments, then the -f ones; at least one."""
    given = [*(paths or []), *(filenames or [])]
    if not given:
        raise _UsageError("no input: give PATH... or -f FILE (`-` for stdin)")
    return given


@dataclass
class SourcedCluster(Cluster):
    """A Cluster that also remembers which file each object came from, for messages.

    Kept in the CLI because only messages need it; keyed by `id(obj)` since the pydantic
    models are not hashable, and only for objects the cluster holds (so ids stay valid).
    """

    sources: dict[int, str] = field(default_factory=dict)

    def source_of(self, obj: TypeMeta) -> str:
        return self.sources.get(id(obj), "")

    def all_objects(self) -> Iterable[TypeMeta]:
        yield from self.classes.values()
        yield from self.slices
        yield from self.claims.values()
        yield from self.templates.values()
        yield from self.pods.values()
        yield from self.nodes.values()
        yield from self.pod_groups.values()
        yield from self.workloads.values()
        yield from self.namespaces.values()


# --- shared helpers ---------------------------------------------------------------------


def _print_error(error: InputError | DRASolverError) -> None:
    """One line: `file: Kind ns/name: field: reason` (parts that are unknown are left out)."""
    line = Text()
    if isinstance(error, InputError):
        for part, style in ((error.source, "dim"), (error.obj, "bold"), (error.field, "cyan")):
            if part:
                line.append(part, style=style)
                line.append(": ")
        line.append(error.reason, style="red")
    else:
        line.append(str(error), style="red")
    _err.print(line)


def _print_errors(errors: Sequence[InputError | DRASolverError]) -> None:
    """Every error, then a count, so a user can fix them all in one pass."""
    for error in errors:
        _print_error(error)
    n = len(errors)
    _err.print(Text(f"{n} error{'s' if n != 1 else ''}", style="bold red"))


def _print_warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        _err.print(Text(f"warning: {warning}", style="yellow"))


def _fail(errors: Sequence[InputError | DRASolverError]) -> NoReturn:
    _print_errors(errors)
    raise typer.Exit(EXIT_ERROR)


def _load(paths: Sequence[str]) -> SourcedCluster:
    """Same result as `Cluster.from_paths(paths)`, plus the file of every object."""
    pairs, warnings = load_sourced(paths)
    cluster = SourcedCluster.from_objects(obj for obj, _ in pairs)
    cluster.warnings.extend(warnings)
    by_id = {id(obj): src for obj, src in pairs}
    cluster.sources = {id(obj): by_id[id(obj)] for obj in cluster.all_objects() if id(obj) in by_id}
    return cluster


def _load_or_exit(paths: Sequence[str]) -> SourcedCluster:
    """Load the inputs or print every load error (file, object, field) and exit 1.

    Unexpected exceptions are also turned into a one-line message (set DRA_SOLVER_DEBUG=1
    to see the traceback), because a traceback is never an acceptable answer to bad input.
    """
    try:
        cluster = _load(paths)
    except ValidationErrors as exc:
        _fail(exc.errors)
    except DRASolverError as exc:
        _fail([exc])
    except Exception as exc:  # last line of defence against tracebacks
        if os.environ.get("DRA_SOLVER_DEBUG"):
            raise
        _fail([DRASolverError(f"internal error while loading input: {type(exc).__name__}: {exc}")])
    _print_warnings(cluster.warnings)
    return cluster


def _validate_or_exit(cluster: SourcedCluster, feature_gates: str | None) -> None:
    """Every validation error (API rules, references, CEL, what the allocator refuses with
    these gates) printed, exit 1; else a warning for every field these gates make the
    allocator ignore (`api.gated`). The same checks for `validate`, `allocate` and `plan`."""
    try:
        gates = FeatureGates.of(feature_gates)
    except DRASolverError as exc:
        _fail([exc])
    errors = validate_cluster(cluster, cluster.source_of, gates=gates)
    if errors:
        _fail(errors)
    # Fields the allocator would ignore with these gates: said now, not as a later "cannot be
    # satisfied" (issue #29).
    _print_warnings(gated_warnings(cluster, gates))
    _print_warnings(admin_namespace_warnings(cluster, gates))


def _count(n: int, noun: str) -> str:
    """`1 class`, `2 classes`, `0 claims`."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{n} {noun}s"


def _summary(cluster: Cluster) -> str:
    counts = cluster.counts()
    parts = [
        _count(counts["slices"], "slice"),
        _count(counts["devices"], "device"),
        _count(counts["classes"], "class"),
        _count(counts["claims"], "claim"),
    ]
    for key in ("templates", "pods", "nodes", "namespaces"):
        if counts[key]:
            parts.append(_count(counts[key], key[:-1]))
    return ", ".join(parts)


# --- commands ---------------------------------------------------------------------------

FeatureGatesOpt = Annotated[
    str | None,
    typer.Option("--feature-gates", help="Comma-separated Name=true|false; others keep defaults."),
]


def _print_version(value: bool) -> None:
    """`--version`: eager, so it answers before any command is required."""
    if value:
        _out.print(f"dra-solver {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """dra-solver: validate and allocate DRA ResourceClaims offline, from YAML."""


@app.command()
def validate(
    paths: PathsArg = None, filename: FilenameOpt = None, feature_gates: FeatureGatesOpt = None
) -> None:
    """Check the input objects against the API validation rules and everything the allocator
    refuses as invalid input (with the given feature gates); print every problem.

    Exit 0 when everything is valid (with a one-line summary), 1 when anything is not.
    """
    paths = _inputs(paths, filename)
    cluster = _load_or_exit(paths)
    _validate_or_exit(cluster, feature_gates)
    # Incomplete or invalid pools are a real cluster state that upstream allocates around (the
    # pool is skipped), so they do not make the input invalid; say so, though.
    _print_warnings(w.message for w in pool_problems(cluster.slices, cluster.source_of))
    _out.print(Text(f"valid: {_summary(cluster)}", style="green"))


class Allocator(StrEnum):
    reference = "reference"
    cpsat = "cpsat"


class Strategy(StrEnum):
    pack = "pack"
    spread = "spread"


class ExecutorChoice(StrEnum):
    local = "local"
    ray = "ray"
    inline = "inline"


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"
    table = "table"
    wide = "wide"
    """The table with more columns (kubectl's `-o wide`)."""
    name = "name"
    """One `kind.group/name` per object of the yaml output (kubectl's `-o name`)."""

    @property
    def tabular(self) -> bool:
        return self in (OutputFormat.table, OutputFormat.wide)


def _write_objects(objects: Sequence[dict[str, Any]], output: OutputFormat, notes: dict[str, str]) -> None:
    """yaml/json: one `kind: List` with the run's annotations; name: a line per object."""
    if output is OutputFormat.name:
        sys.stdout.write("".join(f"{object_name(o)}\n" for o in objects))
    else:
        sys.stdout.write(dumps(objects, output.value, notes))


def object_name(obj: Mapping[str, Any]) -> str:
    """As `kubectl get -o name` prints it: `pod/web-0` for the core group,
    `resourceclaim.resource.k8s.io/web-0-gpu` for the others (no namespace, as kubectl)."""
    group = str(obj.get("apiVersion", "v1")).rpartition("/")[0]
    kind = str(obj.get("kind", "")).lower()
    return f"{kind}.{group}/{obj['metadata']['name']}" if group else f"{kind}/{obj['metadata']['name']}"


# Options shared by `allocate` and `plan`.
StrategyOpt = Annotated[Strategy, typer.Option(help="CP-SAT placement preference.")]


def _positive_seconds(value: float) -> float:
    """`--time-limit` is a budget: 0, a negative number or NaN leave no search at all."""
    if not value > 0:
        raise typer.BadParameter(f"must be a positive number of seconds, got {value:g}")
    return value


TimeLimitOpt = Annotated[
    float,
    typer.Option(
        "--time-limit",
        callback=_positive_seconds,
        help=(
            "Budget of the CP-SAT search in deterministic seconds (CP-SAT's work count, about "
            "seconds on an idle machine, so the same input and seed give the same plan); a "
            "wall-clock guard stops it at 3 x the limit + 1 s."
        ),
    ),
]
MAX_SEED = 2**31 - 1
"""CP-SAT's random_seed is a 32-bit integer."""
SeedOpt = Annotated[
    int,
    typer.Option(
        min=0,
        max=MAX_SEED,
        help="Seed for CP-SAT and shareIDs (0 to 2147483647): same input + seed = same output.",
    ),
]
OutputOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--output",
        "-o",
        help="yaml/json: Kubernetes objects (a List, the run's facts in its annotations); name: "
        "kind.group/name of each, a line each; table: rows per pod and per node; wide: the table "
        "with more columns.",
    ),
]
OutputModeOpt = Annotated[
    OutputMode,
    typer.Option(
        "--output-mode",
        help="What -o yaml|json prints: changed = the Pods and claims the run changes; full = every "
        "input object after the run (the cluster after the plan: give it as the next run's input).",
    ),
]


@app.command()
def allocate(
    paths: PathsArg = None,
    filename: FilenameOpt = None,
    node: Annotated[
        list[str] | None,
        typer.Option(
            "--node",
            help="Node to allocate for (omit: allNodes devices only). Repeat it to let dra-solver "
            "choose among several nodes.",
        ),
    ] = None,
    any_node: Annotated[
        bool,
        typer.Option("--any-node", help="Choose among every node the input knows (Node objects, slices)."),
    ] = False,
    claim: Annotated[
        list[str] | None,
        typer.Option(
            "--claim",
            help="Claim to allocate (`name` or `namespace/name`), repeatable; "
            "default: every claim without status.allocation, in input order.",
        ),
    ] = None,
    pod: Annotated[
        str | None,
        typer.Option(
            help="Allocate this pod's unallocated claims (templates instantiated); node defaults to "
            "its spec.nodeName."
        ),
    ] = None,
    allocator: Annotated[Allocator, typer.Option(help="reference = upstream first fit; cpsat = optimal.")] = (
        Allocator.cpsat
    ),
    feature_gates: FeatureGatesOpt = None,
    strategy: StrategyOpt = Strategy.pack,
    time_limit: TimeLimitOpt = 10.0,
    seed: SeedOpt = 0,
    output: OutputOpt = OutputFormat.yaml,
    output_mode: OutputModeOpt = OutputMode.changed,
) -> None:
    """Allocate claims together on one node (as upstream does for one pod: all or none).

    Prints a `kind: List` of the claims, with status.allocation filled in when allocated
    (with --pod: the Pod first, with spec.nodeName when allocated, else a PodScheduled=False
    condition; its claims with status.reservedFor). Exit 0 when allocated, 2 when they cannot
    be (stderr names the claim and request that blocked), 1 on invalid input or a CEL runtime
    error.
    """
    _check_output_mode(output, output_mode)
    paths = _inputs(paths, filename)
    cluster = _load_or_exit(paths)
    _validate_or_exit(cluster, feature_gates)
    options = _options(allocator, feature_gates, seed, strategy, time_limit)
    candidates = _node_arg(cluster, node, any_node)
    try:
        outcome = allocate_claims(cluster, claims=claim or None, node=candidates, options=options, pod=pod)
        pod_obj = cluster.pod(pod) if pod is not None else None
    except DRASolverError as exc:
        _fail([exc])
    result = _as_plan(outcome, pod_obj)
    if output.tabular:
        nodes = [candidates] if isinstance(candidates, str) else list(candidates or [])
        summary = (
            f"allocated on node {outcome.node}"
            if outcome.allocated
            else f"cannot allocate: {outcome.reason}{_explain_hint(outcome, pod)}"
        )
        wide = output is OutputFormat.wide
        _out.print(plan_tables(cluster, result, nodes, options.feature_gates, summary, wide))
    else:
        if output_mode is OutputMode.full:
            objects = cluster_after(cluster, result.pods)
        elif pod_obj is not None:
            objects = changed_objects(result.pods)
        else:
            objects = [c.dump() for c in outcome.claims]
        notes = {
            ANNOTATION + "allocator": outcome.allocator,
            ANNOTATION + "allocated": str(outcome.allocated).lower(),
        }
        if outcome.node:
            notes[ANNOTATION + "node"] = outcome.node
        if not outcome.allocated:
            notes[ANNOTATION + "reason"] = outcome.reason or ""
        _write_objects(objects, output, notes)
    # The table's summary line says it already: stderr repeats nothing (issue #29).
    table = output.tabular
    if not table and outcome.allocated and outcome.node and (any_node or (node and len(node) > 1)):
        _err.print(Text(f"allocated on node {outcome.node}", style="green"))
    if not outcome.allocated:
        if not table:
            _err.print(Text(f"cannot allocate: {outcome.reason}{_explain_hint(outcome, pod)}", style="red"))
        raise typer.Exit(EXIT_UNSCHEDULABLE)


def _explain_hint(outcome: AllocationOutcome, pod: str | None) -> str:
    """Where the detail is, as `plan` points to it: the one-line reason names what blocked,
    `explain` says why per node (selectors, held devices, capacity left, a minimal blocking set)."""
    if pod is not None:
        return f" (details: dra-solver explain --pod {pod})"
    names = [c.namespaced_name for c in outcome.claims]
    return f" (details: dra-solver explain {' '.join(f'--claim {n}' for n in names)})" if names else ""


def _as_plan(outcome: AllocationOutcome, pod: Pod | None) -> PlanOutcome:
    """An allocation as the one-pod plan it is, so that `allocate` prints what `plan` prints
    (the Pod as the scheduler leaves it, a table row): the pipeline's own PodPlan when it
    planned, else one made from the outcome (decided before planning)."""
    if outcome.plan is not None:
        return PlanOutcome([outcome.plan], outcome.allocator, outcome.stats)
    name = pod.namespaced_name if pod is not None else ""
    name = name or ",".join(c.namespaced_name for c in outcome.claims)
    reason = None if outcome.allocated else outcome.reason
    single = PodPlan(name, outcome.node, outcome.claims, reason, placed=outcome.allocated, pod=pod)
    return PlanOutcome([single], outcome.allocator, outcome.stats)


def _check_output_mode(output: OutputFormat, mode: OutputMode) -> None:
    """A table is one view of the run, not a set of objects: `--output-mode full` needs yaml/json."""
    if output.tabular and mode is OutputMode.full:
        raise typer.BadParameter("--output-mode full needs -o yaml or -o json", param_hint="--output-mode")


@app.command()
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
        Allocator, typer.Option(help="reference = scheduler-like first fit; cpsat = optimal.")
    ] = (Allocator.cpsat),
    feature_gates: FeatureGatesOpt = None,
    strategy: StrategyOpt = Strategy.pack,
    time_limit: TimeLimitOpt = 10.0,
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
            "pool, ray = Ray (RAY_ADDRESS, else a local Ray), inline = this process. Same plan on each.",
        ),
    ] = ExecutorChoice.local,
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
        Allocator, typer.Option("--repair", help="The repair pass of --partitions: reference = first fit.")
    ] = Allocator.reference,
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
) -> None:
    """Place many pods over many nodes: as many (priority-weighted) pods as possible.

    Prints a `kind: List` of the Pods (placed ones with spec.nodeName, the others with a
    PodScheduled=False condition) and their claims (placed ones with status.allocation) and,
    on stderr, where each pod goes or why it does not fit. Exit 0 when every pod is placed, 2
    when some are not, 1 on invalid input. Ctrl-C or SIGTERM stops the search: the best plan
    found so far (every placement checked) is printed and the exit code is 130; a second
    Ctrl-C exits at once.
    """
    _check_output_mode(output, output_mode)
    paths = _inputs(paths, filename)
    cluster = _load_or_exit(paths)
    _validate_or_exit(cluster, feature_gates)
    options = _options(
        allocator, feature_gates, seed, strategy, time_limit, partitions=partitions, repair=repair.value
    )
    if scenario:
        _sweep(cluster, scenario, node_template, max_new_nodes, options, executor, workers, output)
        return
    if namespace is not None:
        if all_namespaces:
            _fail([InputError("give either --namespace (-n) or --all-namespaces (-A)")])
        pod, fill = _in_namespace(cluster, namespace, pod, fill, options.feature_gates)
    _check_plan_arguments(cluster, pod, node, fill, node_template)
    started = time.perf_counter()
    try:
        with (
            # On a terminal the signal is answered at once; in a pipe or a log the final
            # `interrupted: placed ...` line is the one message (issue #29).
            interrupt.signals_stop(INTERRUPT_NOTICE if _err.is_terminal else ""),
            _plan_progress(options) as options,
            open_executor(executor.value, workers) as pool,
        ):
            options = Options.of(options, executor=pool)
            _err.print(Text(PLANNING_NOTICE, style="dim"))
            filled: Fill | None = None
            templates: list[NodeTemplate] = []
            if fill is not None:
                filled = fill_pod(cluster, fill, node or None, options)
                outcome = filled.outcome
            else:
                templates = [_template(f) for f in node_template or []]
                outcome = plan_pods(
                    cluster,
                    pods=pod,
                    nodes=node or None,
                    options=options,
                    node_templates=templates or None,
                    max_new_nodes=max_new_nodes,
                )
            interrupted = interrupt.requested()
    except DRASolverError as exc:
        _fail([exc])
    seconds = time.perf_counter() - started
    if report is not None:
        first_fit = partial(
            plan_pods,
            cluster,
            pods=pod,
            nodes=node or None,
            options=Options.of(options, allocator="reference", progress=None),
            node_templates=templates or None,
            max_new_nodes=max_new_nodes,
        )
        written = write_report(
            report,
            cluster,
            outcome,
            resolve_nodes(cluster, node or None),
            options.feature_gates,
            seconds=seconds,
            first_fit=first_fit if compare else None,
            inputs=paths,
        )
        _err.print(Text(f"report: {written} ({written.stat().st_size / 1e6:.1f} MB)", style="dim"))
    added = [o.dump() for o in (*outcome.added_nodes, *outcome.added_slices)]  # what-if nodes
    if output.tabular:
        nodes = [*resolve_nodes(cluster, node or None), *(n.metadata.name for n in outcome.added_nodes)]
        summary = plan_summary(
            outcome, seconds, f"replicas of {filled.pod}" if filled is not None else "pods"
        )
        wide = output is OutputFormat.wide
        _out.print(plan_tables(cluster, outcome, nodes, options.feature_gates, summary, wide))
    else:
        notes = plan_annotations(PlanSummary.of(outcome), outcome.pods, interrupted)
        if output_mode is OutputMode.full:
            objects = [*cluster_after(cluster, outcome.pods), *added]
        else:
            objects = [*added, *changed_objects(outcome.pods)]
        _write_objects(objects, output, notes)
    warnings = outcome.stats.get("warnings")  # a list of str (pipeline.plan, whatif)
    _print_warnings(warnings if isinstance(warnings, list) else [])
    # The table already has a row per pod; stderr then keeps only the summary.
    if not output.tabular:
        _print_pod_lines(outcome.pods, filled.pod if filled is not None else None)
    counted = f"replicas of {filled.pod}" if filled is not None else "pods"
    if interrupted:
        summary = f"interrupted: {plan_summary(outcome, seconds, counted)}"
        _err.print(Text(f"{summary} (the best plan found so far)", style="bold yellow"))
        raise typer.Exit(interrupt.EXIT_INTERRUPTED)
    if not output.tabular:  # the table has the summary
        _err.print(Text(plan_summary(outcome, seconds, counted), style="bold"))
    if node_template:
        for line in whatif_lines(outcome.stats):
            _err.print(Text(line, style="bold"))
    if filled is not None:
        _err.print(Text(filled.summary(), style="bold"))
        return
    if outcome.placed < len(outcome.pods):
        raise typer.Exit(EXIT_UNSCHEDULABLE)


def _in_namespace(
    cluster: Cluster, namespace: str, pods: list[Any] | None, fill: str | None, gates: FeatureGates
) -> tuple[list[Any] | None, str | None]:
    """`-n NS`: names without a namespace are in NS; without --pod (and --fill), the pods to plan
    are the pending pods of NS only — what `plan` would take by default, in that namespace
    (a pod of plain claims, its claims'). A namespace without pending pods plans none."""

    def qualified(name: str) -> str:
        return name if "/" in name else f"{namespace}/{name}"

    if fill is not None:
        return pods, qualified(fill)
    if pods:
        return [qualified(p) for p in pods], fill
    selected: list[Any] = []
    for unit in resolve_units(cluster, None, None, gates):
        for member in unit.members:
            if member.pod is not None:
                if (member.pod.metadata.ns) == namespace:
                    selected.append(member.pod.namespaced_name)
            elif member.claims and all(c.split("/", 1)[0] == namespace for c in member.claims):
                selected.append(list(member.claims))
    if not selected:
        known = sorted({ns for ns, _ in [*cluster.pods, *cluster.claims]} | set(cluster.namespaces))
        hint = f" (namespaces in the input: {', '.join(known)})" if namespace not in known else ""
        _print_warnings([f"no pending pods in namespace {namespace}{hint}"])
    return selected, fill


def _check_plan_arguments(
    cluster: Cluster,
    pods: list[Any] | None,
    nodes: list[str] | None,
    fill: str | None,
    templates: list[str] | None,
) -> None:
    """The names and combinations `plan` is given, checked before it says it is planning: a typo
    is one error line, not a banner and then an error."""
    try:
        if fill is not None:
            if templates or pods:
                raise InputError("--fill cannot be combined with --node-template or --pod")
            cluster.pod(fill)
        for name in pods or []:
            if isinstance(name, str):
                cluster.pod(name)
        if nodes or not templates:
            resolve_nodes(cluster, nodes or None)
    except DRASolverError as exc:
        _fail([exc])


@app.command()
def explain(
    paths: PathsArg = None,
    filename: FilenameOpt = None,
    claim: Annotated[
        list[str] | None,
        typer.Option("--claim", help="Claim to explain (name or namespace/name), repeatable."),
    ] = None,
    pod: Annotated[
        str | None, typer.Option(help="Explain this pod's unallocated claims and constraints.")
    ] = None,
    node: Annotated[
        list[str] | None, typer.Option("--node", help="Nodes to explain, repeatable; default: every node.")
    ] = None,
    node_template: Annotated[
        list[str] | None,
        typer.Option("--node-template", help="Also say whether a new node of this template would take it."),
    ] = None,
    alone: Annotated[
        bool,
        typer.Option(
            "--alone",
            help="Only the pod (or claims) alone on the cluster as the input has it; skip the plan "
            "of the other pending pods (which says whether the plan places it, and what takes its room).",
        ),
    ] = False,
    feature_gates: FeatureGatesOpt = None,
) -> None:
    """Say why a claim (or a pod's claims) cannot be allocated, per node, nodes with the same
    reason grouped; or where it fits — alone on the cluster as the input has it; then what the
    plan of the input's pending pods does with it. Exit 0 either way, 1 on invalid input."""
    paths = _inputs(paths, filename)
    cluster = _load_or_exit(paths)
    _validate_or_exit(cluster, feature_gates)
    if (claim is None) == (pod is None):
        _fail([InputError("give either --claim or --pod")])
    try:
        templates = [_template(f) for f in node_template or []]
        answer = explain_why(
            cluster,
            claim=claim,
            pod=pod,
            nodes=node,
            feature_gates=feature_gates,
            node_templates=templates,
            with_plan=not alone,
        )
    except DRASolverError as exc:
        _fail([exc])
    sys.stdout.write(answer.text() + "\n")


@app.command()
def check(
    paths: PathsArg = None, filename: FilenameOpt = None, feature_gates: FeatureGatesOpt = None
) -> None:
    """Audit a cluster state (a plan's --output-mode full output, or a kubectl dump): every
    allocated claim (devices, selectors, counts, capacity, counters, constraints, shareIDs,
    adminAccess, taints) and every bound pod (node selection, taints, its claims allocated and
    reserved for it on its node, node resources, gangs), with the checker's own reading of the
    rules. Prints one line per violation: the object, the rule, the values.

    Exit 0 when every rule holds, 3 when any is broken, 1 on invalid input.
    """
    paths = _inputs(paths, filename)
    cluster = _load_or_exit(paths)
    _validate_or_exit(cluster, feature_gates)
    try:
        violations = check_cluster(cluster, FeatureGates.of(feature_gates))
    except DRASolverError as exc:
        _fail([exc])
    _print_violations(violations)
    if violations:
        raise typer.Exit(EXIT_VIOLATIONS)
    counts = cluster.counts()
    bound = sum(1 for p in cluster.pods.values() if p.spec.node_name)
    _out.print(
        Text(
            f"ok: {len(cluster.allocated_claims())} allocated claims, {bound} bound pods, "
            f"{counts['claims']} claims in all: every rule holds",
            style="green",
        )
    )


def _print_violations(violations: Sequence[Violation]) -> None:
    """One line each on stdout (the answer, not an error: the input was valid), then a count."""
    for v in violations:
        sys.stdout.write(f"{v}\n")
    if violations:
        n = len(violations)
        _err.print(Text(f"{n} violation{'s' if n != 1 else ''}", style="bold red"))


def _sweep(
    cluster: Cluster,
    scenarios: list[str],
    node_template: list[str] | None,
    max_new_nodes: int | None,
    options: Options,
    executor: ExecutorChoice,
    workers: int | None,
    output: OutputFormat,
) -> None:
    """`plan --scenario`: one plan per scenario on the executor, one table (`solver.whatif.sweep`)."""
    if output is OutputFormat.name:
        _fail([InputError("--scenario prints rows, not objects: use -o table, wide, yaml or json")])
    try:
        templates = [_template(f) for f in node_template or []]
        with open_executor(executor.value, workers) as pool:
            rows = sweep(
                cluster,
                scenarios,
                Options.of(options, executor=pool),
                templates=templates,
                max_new_nodes=max_new_nodes,
            )
    except DRASolverError as exc:
        _fail([exc])
    sys.stdout.write(sweep_output(rows, "table" if output.tabular else output.value))


def whatif_lines(stats: Mapping[str, object]) -> list[str]:
    """The what-if lines on stderr: what is added and its cost, with the cost bound unless the
    cost is proven least (`solver.whatif.model`: per path, what the bound bounds), then a cap that
    binds (or may) and what it costs."""
    cost, bound = stats.get("added_cost"), stats.get("cost_bound")
    line = f"{stats.get('added')} (cost {cost})"
    status = stats.get("status")
    if status == "OPTIMAL":
        line += ", least cost proven"
    elif status == "OPTIMAL within the cap":
        line += ", least cost proven within the cap"
    elif bound is not None:
        line += f", cost bound {bound} (least cost not proven)"
    else:
        line += ", first fit (least cost not proven)"
    lines = [line]
    if stats.get("whatif_cap"):
        lines.append(str(stats["whatif_cap"]))
    return lines


def _template(path: str) -> NodeTemplate:
    """A node template file, loaded like the inputs (errors name the file)."""
    return NodeTemplate.from_cluster(_load_or_exit([path]), source=path)


POD_LINES = 50
"""Up to this many pods, `plan` names every placed pod's node on stderr; above, only the pods
not placed get a line (each one line), so that a large plan ends in a summary, not a flood."""

UNPLACED_LINES = 10
"""At most this many pods not placed get their own stderr line; the rest are counted in one
line. Why: stderr is the short summary whatever the size of the plan (issue #12) — a plan of
thousands of pods that do not fit must not write thousands of lines; the table and `explain`
have the details."""


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
            _err.print(Text(f"{p.name}: not placed: {p.reason}{hint}", style="red"))
        elif p.placed and every_pod:
            _err.print(Text(f"{p.name}: node {p.node}", style="green"))
    if len(unplaced) > len(shown):
        more = len(unplaced) - len(shown)
        if copies is not None:
            flag = f"--pod {copies}"
        elif all(pods[i].pod is None for i in unplaced):
            flag = "--claim NAME"
        else:
            flag = "--pod NAME"
        hint = f"`-o table` or `dra-solver explain {flag}` for each"
        _err.print(Text(f"… and {more} more pod{'s' if more != 1 else ''} not placed ({hint})", style="red"))


def plan_summary(outcome: PlanOutcome, seconds: float, counted: str = "pods") -> str:
    """One line: placed of total, the allocator, status, objective, bound and gap, what it kept
    instead (a fallback to first fit), first fit's count, and the wall clock of the planning
    (loading and validating the input, and writing the output, not included). Counts and
    objective describe the pods in the output, each with its own weight; only the bound comes
    from the allocator (`solver.output.summary`)."""
    return PlanSummary.of(outcome).text(seconds, counted)


@contextmanager
def _plan_progress(options: Options) -> Iterator[Options]:
    """The options with a progress bar on stderr while first fit works, then a spinner while
    the chosen allocator improves on it — only when stderr is a terminal (never in pipes,
    files or CI logs)."""
    if not _err.is_terminal:
        yield options
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=_err, transient=True) as bar:
        task = bar.add_task("first fit", total=None)
        later = "CP-SAT (up to the time limit)" if options.allocator == "cpsat" else "results"

        def progress(done: int, total: int) -> None:
            if done == total:
                bar.update(task, description=later, completed=done, total=None)
            elif done % 50 == 0 or done == 1:
                bar.update(task, completed=done, total=total)

        yield Options.of(options, progress=progress)


def _options(
    allocator: Allocator,
    feature_gates: str | None,
    seed: int,
    strategy: Strategy,
    time_limit: float,
    **more: Any,
) -> Options:
    """The run's Options; a value they refuse is the user's error (one line, exit 1), not a bug."""
    try:
        return Options.of(
            allocator=allocator.value,
            feature_gates=feature_gates,  # Options parses the string
            seed=seed,
            strategy=strategy.value,
            time_limit=time_limit,
            **more,
        )
    except DRASolverError as exc:
        _fail([exc])


def _node_arg(cluster: Cluster, node: list[str] | None, any_node: bool) -> str | list[str] | None:
    """One node as a string; several (or --any-node) as a list of candidates, in input order."""
    if any_node:
        if node:
            raise typer.BadParameter("give either --node or --any-node")
        return known_nodes(cluster)
    if not node:
        return None
    return node[0] if len(node) == 1 else node


def _usage_line(exc: _UsageError) -> str:
    """A usage error (unknown option, bad value) as one line, as every other error is: the
    command, what is wrong, where the help is."""
    command = exc.ctx.command_path if exc.ctx is not None else "dra-solver"
    message = " ".join(exc.format_message().split())
    return f"{command}: {message} (see '{command} --help')"


def run() -> None:
    """Entry point of the `dra-solver` console script and `python -m dra_solver`.

    Why not `app` directly: click reports usage errors (an unknown option, a bad choice)
    with exit code 2, which `allocate` uses for "cannot be allocated". Usage errors are
    invalid input here, so they exit 1. Ctrl-C outside a plan's search exits 130; an
    unexpected exception (a bug) or running out of memory is one line on stderr and exit 1,
    never a traceback."""
    try:
        code = app(prog_name="dra-solver", standalone_mode=False)
    except _NoArgsIsHelpError as exc:  # `dra-solver` alone: the help
        exc.show()
        code = EXIT_ERROR
    except _UsageError as exc:
        _err.print(Text(_usage_line(exc), style="red"))
        code = EXIT_ERROR
    except typer.Abort:  # click's name for KeyboardInterrupt (Ctrl-C outside a plan's search)
        _err.print(Text("interrupted", style="bold yellow"))
        code = interrupt.EXIT_INTERRUPTED
    except MemoryError:
        _err.print(Text(OUT_OF_MEMORY, style="red"))
        code = EXIT_ERROR
    except Exception as exc:  # a bug, not the user's fault: one line, never a traceback
        if os.environ.get("DRA_SOLVER_DEBUG"):
            raise
        _err.print(Text(f"internal error: {type(exc).__name__}: {exc} ({BUG_HINT})", style="red"))
        code = EXIT_ERROR
    sys.exit(code if isinstance(code, int) else EXIT_OK)


__all__ = ["app", "run", "SourcedCluster"]

if __name__ == "__main__":  # pragma: no cover
    run()
