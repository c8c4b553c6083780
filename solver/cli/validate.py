"""`dra-solver validate`: is the input valid, with these feature gates?"""

from __future__ import annotations

from rich.text import Text

from ..api.cluster import Cluster
from ..api.validate import pool_problems
from ..preempt.victims import unmatched_budgets
from .console import out, print_warnings
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


def validate(
    paths: PathsArg = None,
    filename: FilenameOpt = None,
    feature_gates: FeatureGatesOpt = None,
    kubernetes_version: KubernetesVersionOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
) -> None:
    """Check the input objects against the API validation rules and everything the allocator
    refuses as invalid input (with the given feature gates); print every problem.

    Exit 0 when everything is valid (with a one-line summary), 1 when anything is not.
    """
    cluster = load_valid(
        Inputs.of(
            paths,
            filename,
            feature_gates,
            live_target(kubeconfig, context, live),
            reads_live=True,
            kubernetes_version=kubernetes_version,
        ),
        strict=True,
    ).cluster
    # Incomplete or invalid pools are a real cluster state that upstream allocates around (the
    # pool is skipped), so they do not make the input invalid; say so, though.
    print_warnings(w.message for w in pool_problems(cluster.slices, cluster.source_of))
    # A budget that protects no pod is valid (a workload scaled to zero), but `plan --preempt`
    # leaves it out: say so here too.
    print_warnings(unmatched_budgets(cluster))
    out.print(Text(f"valid: {_summary(cluster)}", style="green"))


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
    if cluster.pdbs:
        parts.append(_count(len(cluster.pdbs), "PodDisruptionBudget"))
    return ", ".join(parts)


__all__ = ["validate"]
