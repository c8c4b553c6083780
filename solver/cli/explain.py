"""`dra-solver explain`: why a claim (or a pod's claims) cannot be allocated, per node, and
what the plan of the other pending pods does with it (`solver.explain.diagnosis`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..errors import DRASolverError, InputError
from ..explain.diagnosis import explain as explain_why
from ..planning.job import Options
from ..preempt.reasons import why_preempt
from .console import fail
from .inputs import Inputs, live_target, load_template, load_valid
from .options import (
    ContextOpt,
    FeatureGatesOpt,
    FilenameOpt,
    IgnoreGatesOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    LiveOpt,
    PathsArg,
)


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
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
) -> None:
    """Say why a claim (or a pod's claims) cannot be allocated, per node, nodes with the same
    reason grouped; or where it fits — alone on the cluster as the input has it; then what the
    plan of the input's pending pods does with it. Exit 0 either way, 1 on invalid input."""
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
    if (claim is None) == (pod is None):
        fail([InputError("give either --claim or --pod")])
    if allow_moves and not preempt:
        fail([InputError("--allow-moves needs --preempt")])
    if preempt:
        if pod is None:
            fail([InputError("--preempt explains a pod: give --pod")])
        try:
            text = why_preempt(loaded.cluster, pod, node, Options(feature_gates=loaded.gates), allow_moves)
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
        )
    except DRASolverError as exc:
        fail([exc])
    sys.stdout.write(answer.text() + "\n")


__all__ = ["explain"]
