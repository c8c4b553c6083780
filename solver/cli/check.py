"""`dra-solver check`: does a cluster state (a plan's output, a kubectl dump) keep every rule?"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer
from rich.text import Text

from ..check import Violation, check_cluster
from ..errors import DRASolverError
from .console import EXIT_VIOLATIONS, err, fail, out
from .inputs import Inputs, live_target, load_valid
from .options import (
    ContextOpt,
    FeatureGatesOpt,
    FilenameOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    LiveOpt,
    PathsArg,
)


def check(
    paths: PathsArg = None,
    filename: FilenameOpt = None,
    feature_gates: FeatureGatesOpt = None,
    kubernetes_version: KubernetesVersionOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
) -> None:
    """Audit a cluster state (a plan's --output-mode full output, or a kubectl dump): every
    allocated claim (devices, selectors, counts, capacity, counters, constraints, shareIDs,
    adminAccess, taints) and every bound pod (node selection, taints, its claims allocated and
    reserved for it on its node, node resources, gangs), with the checker's own reading of the
    rules. Prints one line per violation: the object, the rule, the values.

    Exit 0 when every rule holds, 3 when any is broken, 1 on invalid input.
    """
    loaded = load_valid(
        Inputs.of(
            paths,
            filename,
            feature_gates,
            live_target(kubeconfig, context, live),
            reads_live=True,
            kubernetes_version=kubernetes_version,
        )
    )
    cluster = loaded.cluster
    try:
        violations = check_cluster(cluster, loaded.gates)
    except DRASolverError as exc:
        fail([exc])
    _print_violations(violations)
    if violations:
        raise typer.Exit(EXIT_VIOLATIONS)
    counts = cluster.counts()
    bound = sum(1 for p in cluster.pods.values() if p.spec.node_name)
    checked = sum(not c.unread for c in cluster.allocated_claims())  # not an unreadable one's stand-in
    out.print(
        Text(
            f"ok: {checked} allocated claims, {bound} bound pods, "
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
        err.print(Text(f"{n} violation{'s' if n != 1 else ''}", style="bold red"))


__all__ = ["check"]
