"""`dra-solver allocate`: claims together on one node, as upstream allocates one pod's claims
(all or none), printed as `plan` prints a plan of one pod."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from ..api.cluster import Cluster
from ..api.models import Pod
from ..errors import DRASolverError
from ..output.objects import ANNOTATION, OutputMode, changed_objects, cluster_after
from ..output.table import plan_tables
from ..pipeline import AllocationOutcome
from ..pipeline import allocate as allocate_claims
from ..planning.outcome import PlanOutcome, PodPlan
from ..planning.resolve import known_nodes
from .console import EXIT_UNSCHEDULABLE, err, fail, out
from .inputs import Inputs, load_valid
from .options import (
    AllocatorChoice,
    FeatureGatesOpt,
    FilenameOpt,
    KubernetesVersionOpt,
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
)


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
    allocator: Annotated[
        AllocatorChoice, typer.Option(help="reference = upstream first fit; cpsat = optimal.")
    ] = AllocatorChoice.cpsat,
    feature_gates: FeatureGatesOpt = None,
    kubernetes_version: KubernetesVersionOpt = None,
    strategy: StrategyOpt = StrategyChoice.pack,
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
    shown = Output(output, output_mode)
    loaded = load_valid(Inputs.of(paths, filename, feature_gates, kubernetes_version=kubernetes_version))
    cluster = loaded.cluster
    options = Search(allocator, strategy, time_limit, seed).options(loaded.gates)
    candidates = _node_arg(cluster, node, any_node)
    try:
        outcome = allocate_claims(cluster, claims=claim or None, node=candidates, options=options, pod=pod)
        pod_obj = cluster.pod(pod) if pod is not None else None
    except DRASolverError as exc:
        fail([exc])
    result = _as_plan(outcome, pod_obj)
    if shown.tabular:
        nodes = [candidates] if isinstance(candidates, str) else list(candidates or [])
        summary = (
            f"allocated on node {outcome.node}"
            if outcome.allocated
            else f"cannot allocate: {outcome.reason}{_explain_hint(outcome, pod)}"
        )
        out.print(plan_tables(cluster, result, nodes, options.feature_gates, summary, shown.wide))
    else:
        if shown.mode is OutputMode.full:
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
        shown.write(objects, notes)
    # The table's summary line says it already: stderr repeats nothing (issue #29).
    table = shown.tabular
    if not table and outcome.allocated and outcome.node and (any_node or (node and len(node) > 1)):
        err.print(Text(f"allocated on node {outcome.node}", style="green"))
    if not outcome.allocated:
        if not table:
            err.print(Text(f"cannot allocate: {outcome.reason}{_explain_hint(outcome, pod)}", style="red"))
        raise typer.Exit(EXIT_UNSCHEDULABLE)


def _node_arg(cluster: Cluster, node: list[str] | None, any_node: bool) -> str | list[str] | None:
    """One node as a string; several (or --any-node) as a list of candidates, in input order."""
    if any_node:
        if node:
            raise typer.BadParameter("give either --node or --any-node")
        return known_nodes(cluster)
    if not node:
        return None
    return node[0] if len(node) == 1 else node


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
        return PlanOutcome([outcome.plan], outcome.allocator, outcome.stats, verdict=outcome.verdict)
    name = pod.namespaced_name if pod is not None else ""
    name = name or ",".join(c.namespaced_name for c in outcome.claims)
    reason = None if outcome.allocated else outcome.reason
    single = PodPlan(name, outcome.node, outcome.claims, reason, placed=outcome.allocated, pod=pod)
    return PlanOutcome([single], outcome.allocator, outcome.stats, verdict=outcome.verdict)


__all__ = ["allocate"]
