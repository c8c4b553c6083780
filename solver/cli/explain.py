"""`dra-solver explain`: why a claim (or a pod's claims) cannot be allocated, per node, and
what the plan of the other pending pods does with it (`solver.explain.diagnosis`)."""

from __future__ import annotations

import sys
from functools import partial
from typing import Annotated

import typer

from ..api.bounded import stop_reading_when
from ..deadline import Deadline, watch_off
from ..errors import DRASolverError, InputError
from ..explain.diagnosis import explain as explain_why
from ..planning.job import Options
from ..preempt.reasons import why_preempt
from .console import fail
from .inputs import Inputs, cut_short_after, live_target, load_template, load_valid
from .options import (
    ContextOpt,
    FeatureGatesOpt,
    FilenameOpt,
    IgnoreGatesOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    LiveOpt,
    PathsArg,
    timeout_option,
)

ExplainTimeoutOpt = Annotated[
    float | None,
    timeout_option(
        "Wall-clock limit of the whole run from the process's start, as plan's (30s, 5m, "
        "1m30s): when it passes, the nodes not examined yet are left out (every node answer "
        "given is whole), the plan of the other pending pods (or --preempt's) is its checked "
        "plan so far, and the answer says it was cut short; passed while reading: no answer, "
        "exit 1. Default: none."
    ),
]


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
    kubernetes_version: KubernetesVersionOpt = None,
    ignore_scheduling_gates: IgnoreGatesOpt = False,
    preempt: Annotated[
        bool,
        typer.Option(
            "--preempt",
            help="With --pod: what `plan --preempt` does with the pod (running or pending) and why: "
            "why it is evicted or stays, whom it evicts, or why it could not preempt.",
        ),
    ] = False,
    allow_moves: Annotated[
        bool,
        typer.Option(
            "--allow-moves",
            help="With --preempt: as `plan --preempt --allow-moves` (controller-owned pods may be moved "
            "instead of evicted); says why a pod is moved, and where to.",
        ),
    ] = False,
    timeout: ExplainTimeoutOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
) -> None:
    """Say why a claim (or a pod's claims) cannot be allocated, per node, nodes with the same
    reason grouped; or where it fits — alone on the cluster as the input has it; then what the
    plan of the input's pending pods does with it. Exit 0 either way, 1 on invalid input."""
    deadline = Deadline.since_start(timeout) if timeout is not None else None
    with stop_reading_when(partial(cut_short_after, deadline)):
        loaded = load_valid(
            Inputs.of(
                paths,
                filename,
                feature_gates,
                live_target(kubeconfig, context, live),
                reads_live=True,
                kubernetes_version=kubernetes_version,
                ignore_scheduling_gates=ignore_scheduling_gates,
            )
        )
    watch_off()  # from here explain's own looks bound it (`deadline.watch_start`)
    if (claim is None) == (pod is None):
        fail([InputError("give either --claim or --pod")])
    if allow_moves and not preempt:
        fail([InputError("--allow-moves needs --preempt")])
    if preempt:
        if pod is None:
            fail([InputError("--preempt explains a pod: give --pod")])
        try:
            options = Options(feature_gates=loaded.gates, deadline=deadline)
            text = why_preempt(loaded.cluster, pod, node, options, allow_moves)
        except DRASolverError as exc:
            fail([exc])
        sys.stdout.write(text + "\n")
        return
    try:
        templates = [load_template(f) for f in node_template or []]
        answer = explain_why(
            loaded.cluster,
            claim=claim,
            pod=pod,
            nodes=node,
            feature_gates=loaded.gates,
            node_templates=templates,
            with_plan=not alone,
            deadline=deadline,
        )
    except DRASolverError as exc:
        fail([exc])
    sys.stdout.write(answer.text() + "\n")


__all__ = ["explain"]
