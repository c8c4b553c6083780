"""What every command does first: read its inputs into a cluster that remembers where each
object came from, print every problem with its file, and exit 1 on invalid input.

Why one place: `validate`, `check`, `allocate`, `plan` and `explain` read their input the same
way, so the request of where to read from (`Inputs`) is one value and `load_valid` the one call
that loads and validates it. A new input source is a field of `Inputs` and a branch in `_load`;
no command changes but for declaring its flag. A live cluster (`--kubeconfig`, `--context`,
`--live`; issue #32) is one: its objects are read first (`api.live`, GET only) and the PATHs
add objects to them, through the one loader.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.text import Text

from ..api.cluster import Cluster
from ..api.gated import gated_warnings
from ..api.live import LiveRead, Progress, Target
from ..api.live import read as read_cluster
from ..api.load import Unread, collector_paused, load_lenient, load_sourced
from ..api.models import TypeMeta
from ..api.templates import NodeTemplate
from ..api.validate import admin_namespace_warnings
from ..cel.checks import validate_all as validate_cluster
from ..deadline import Deadline, watch_off
from ..errors import DRASolverError, StoppedReading, ValidationErrors
from ..gates import FeatureGates
from ..planning.triage import name_unread, triage
from .console import err, fail, print_warnings
from .help import UsageError


@dataclass(frozen=True)
class Inputs:
    """Where a command reads its cluster from and the feature gates it reads it with: the PATH
    arguments, then the -f ones (at least one), and --feature-gates as given (parsed when the
    input is validated, so that its error follows the input's own, as it always has)."""

    paths: tuple[str, ...]
    feature_gates: str | None = None
    live: Target | None = None
    """The cluster to read first (`--kubeconfig`, `--context`, `--live`); None: files only."""
    kubernetes_version: str | None = None
    """`--kubernetes-version`: whose feature-gate defaults apply (None: `gates.DEFAULT_VERSION`)."""
    ignore_scheduling_gates: bool = False
    """`--ignore-scheduling-gates`: gated pods are planned as if admitted (`planning.triage`)."""

    @classmethod
    def of(
        cls,
        paths: list[str] | None,
        filenames: list[str] | None,
        feature_gates: str | None,
        live_target: Target | None = None,
        *,
        reads_live: bool = False,
        kubernetes_version: str | None = None,
        ignore_scheduling_gates: bool = False,
    ) -> Inputs:
        """From a command's arguments; no input at all is a usage error, which names the live
        flags when the command has them (`reads_live`)."""
        given = (*(paths or []), *(filenames or []))
        if not given and live_target is None:
            flags = ", or --live / --kubeconfig PATH" if reads_live else ""
            raise UsageError(f"no input: give PATH... or -f FILE (`-` for stdin){flags}")
        return cls(given, feature_gates, live_target, kubernetes_version, ignore_scheduling_gates)


def live_target(kubeconfig: str | None, context: str | None, read_live: bool) -> Target | None:
    """The cluster the flags name: any of them reads one (`--context` alone, as kubectl's, is a
    context of the kubeconfig kubectl would use); none: files only."""
    if kubeconfig is None and context is None and not read_live:
        return None
    return Target(kubeconfig=kubeconfig, context=context)


@dataclass
class SourcedCluster(Cluster):
    """A Cluster that also remembers which file each object came from, for messages.

    Kept in the CLI because only messages need it; keyed by `id(obj)` since the pydantic
    models are not hashable, and only for objects the cluster holds (so ids stay valid).
    """

    sources: dict[int, str] = field(default_factory=dict)

    def source_of(self, obj: TypeMeta) -> str:
        return self.sources.get(id(obj), "")


@dataclass(frozen=True)
class Loaded:
    """A command's valid input: the cluster, with each object's file, and the parsed gates."""

    cluster: SourcedCluster
    gates: FeatureGates


def _plural(kind: str) -> str:
    return f"{kind}es" if kind.endswith("s") else f"{kind}s"


def read_live(target: Target, reader: Callable[[Progress | None], LiveRead] | None = None) -> LiveRead:
    """A live cluster's objects; on a terminal, a transient line counting the objects read per
    kind while the lists are read, then one line saying what was read (never in pipes, files or
    CI logs, where stderr keeps only warnings and the answer's summary). `reader`: how the lists
    are read (default `live.read` of `target`; `plan --watch` lists through its watcher, which
    keeps the lists' resourceVersions)."""
    if reader is None:

        def reader(progress: Progress | None) -> LiveRead:
            return read_cluster(target, progress)

    if not err.is_terminal:
        return reader(None)
    counts: dict[str, int] = {}
    with err.status("reading the cluster", spinner="dots") as status:

        def progress(kind: str, n: int) -> None:
            counts[kind] = n
            read = ", ".join(f"{k:,} {_plural(kind)}" for kind, k in counts.items())
            status.update(f"reading the cluster: {read}")

        got = reader(progress)
    read = ", ".join(f"{n:,} {_plural(kind)}" for kind, n in got.counts.items() if n)
    err.print(Text(f"read {got.source} ({got.server}): {read or 'no objects'}", style="dim"))
    return got


def _load(
    paths: Sequence[str], target: Target | None = None, strict: bool = True, duplicates_fatal: bool = True
) -> SourcedCluster:
    """Same result as `Cluster.from_paths(paths)`, plus the file of every object; with a target,
    the live cluster's objects first (their source: `context NAME`), the files' on top.
    `strict=False`: an object that cannot be read is left out, kept in `Cluster.unread`, and so
    is an identity defined twice with different content (an identical copy is read once, with a
    warning) unless `duplicates_fatal` (`api.load.load_lenient`)."""
    got = read_live(target) if target is not None else None
    documents = got.documents if got is not None else ()
    unread: list[Unread] = []
    if strict:
        pairs, warnings = load_sourced(paths, documents)
    else:
        pairs, warnings, unread = load_lenient(paths, documents, duplicates_fatal=duplicates_fatal)
    cluster = SourcedCluster()  # `from_objects` without its second `dedupe`: the loader's is done
    for obj, _ in pairs:
        cluster.add(obj)
    cluster.unread = unread
    cluster.warnings.extend([*(got.warnings if got is not None else []), *warnings])
    by_id = {id(obj): src for obj, src in pairs}
    cluster.sources = {id(obj): by_id[id(obj)] for obj in cluster.objects() if id(obj) in by_id}
    return cluster


def load_or_exit(
    paths: Sequence[str], target: Target | None = None, *, strict: bool = True, duplicates_fatal: bool = True
) -> SourcedCluster:
    """Load the inputs or print every load error (file, object, field) and exit 1.

    Unexpected exceptions are also turned into a one-line message (set DRA_SOLVER_DEBUG=1
    to see the traceback), because a traceback is never an acceptable answer to bad input.
    """
    try:
        cluster = _load(paths, target, strict, duplicates_fatal)
    except ValidationErrors as exc:
        fail(exc.errors)
    except DRASolverError as exc:
        fail([exc])
    except Exception as exc:  # last line of defence against tracebacks
        if os.environ.get("DRA_SOLVER_DEBUG"):
            raise
        fail([DRASolverError(f"internal error while loading input: {type(exc).__name__}: {exc}")])
    print_warnings(cluster.warnings)
    return cluster


def _validate_or_exit(inputs: Inputs, cluster: SourcedCluster, strict: bool) -> Loaded:
    """Every validation error (API rules, references, CEL, what the allocator refuses with
    these gates): `strict`, printed, exit 1; else triaged (`planning.triage`): each problem one
    warning, the pods that depend on it held with it as their reason, the rest planned — only
    a problem that names no object of the input still exits 1. Then a warning for every field
    these gates make the allocator ignore (`api.gated`). The same checks for every command."""
    try:
        gates = FeatureGates.of(inputs.feature_gates, inputs.kubernetes_version)
    except DRASolverError as exc:
        fail([exc])
    try:
        errors = validate_cluster(cluster, cluster.source_of, gates=gates)
    except StoppedReading as exc:  # --timeout passed while validating (`api.bounded`)
        fail([exc])
    if strict:
        # Every problem at once: those of the objects that could not be read, then the rules
        # the others break — a reference to an unread object said as what it is.
        problems = [*(e for u in cluster.unread for e in u.errors), *name_unread(cluster, errors)]
        if problems:
            fail(problems)
    if not strict:
        done = triage(cluster, errors, gates, ignore_scheduling_gates=inputs.ignore_scheduling_gates)
        if done.fatal:
            fail(done.fatal)
        print_warnings(done.warnings)
        cluster = done.cluster
    # Fields the allocator would ignore with these gates: said now, not as a later "cannot be
    # satisfied" (issue #29).
    print_warnings(gated_warnings(cluster, gates))
    print_warnings(admin_namespace_warnings(cluster, gates))
    return Loaded(cluster, gates)


FREEZE_AT = 2_000
"""Objects from which what a command keeps is frozen out of the cyclic collector
(`freeze_if_large`). 2,000: at 6,000 objects (the overshoot benchmark's `d`) the first
collection after an unfrozen load traversed all of it, 0.27-0.28 CPU s right after the
reading's last look at `--timeout` (busy, CPU clock; 10,000 before)."""


def freeze_if_large(objects: int) -> None:
    """Everything alive frozen (`gc.freeze`) when the command holds `objects` >= `FREEZE_AT`:
    what it keeps to its end (the input, the plan) is then never traversed again by the
    collector; reference counting still frees it. Below that the heap is small, and a process
    that runs many commands (the test suite runs them in-process) would keep the cyclic
    garbage alive at each freeze for good. Used by `load_valid` and the plan (`cli.plan`)."""
    if objects >= FREEZE_AT:
        gc.freeze()


def load_valid(inputs: Inputs, *, strict: bool = False) -> Loaded:
    """The inputs loaded and validated, every warning printed. `strict` (`validate`): any
    problem is printed as an error, exit 1; else a problem in one object costs only what
    depends on it (`planning.triage`), as the scheduler leaves those pods pending.

    Without the cyclic collector (`api.load.collector_paused`); then, when the input holds
    `FREEZE_AT` objects or more, everything alive is frozen (`gc.freeze`) before the collector
    is put back as it was. Why:
    loading makes millions of objects (dicts, models, validation's strings) that the command
    keeps to its end, and no collection finds garbage among them. Paused only while reading
    (`api.load`), the first collection after it still traversed all of them — 2 of the 20 CPU
    seconds of loading a 50,000-pod cluster — and the later ones again. Frozen, they are never
    traversed again; reference counting still frees them. Below `FREEZE_AT` the heap is small,
    and a process that loads many inputs (the test suite runs commands in-process) would keep
    the cyclic garbage alive at each freeze for good. Changes no result."""
    with collector_paused():
        # Read leniently either way: `strict` (`validate`) then reports what could not be read
        # together with every other problem, not the unreadable objects alone; a duplicate is
        # an error for `validate`, and costs only itself for the others.
        cluster = load_or_exit(inputs.paths, inputs.live, strict=False, duplicates_fatal=strict)
        loaded = _validate_or_exit(inputs, cluster, strict)
        freeze_if_large(len(loaded.cluster.sources))
        return loaded


def cut_short_after(deadline: Deadline | None) -> str | None:
    """Why reading stops (`api.bounded.stop_reading_when`): the run's deadline passed (`plan`'s
    and `explain`'s `--timeout`)."""
    if deadline is None or not deadline.passed():
        return None
    watch_off()  # this message, not the watchdog's (`deadline.watch_start`)
    return f"cut short by --timeout after {deadline.elapsed():.1f} s"


def load_template(path: str) -> NodeTemplate:
    """A node template file, loaded like the inputs (errors name the file)."""
    return NodeTemplate.from_cluster(load_or_exit([path]), source=path)


__all__ = [
    "Inputs",
    "Loaded",
    "SourcedCluster",
    "cut_short_after",
    "live_target",
    "load_or_exit",
    "load_template",
    "freeze_if_large",
    "load_valid",
    "read_live",
]
