"""Why, with preemption: why a running pod is evicted or stays, why a pending pod is placed (and
whom it evicts) or could not preempt (`dra-solver explain --preempt`; docs/semantics.md,
"Preemption").

Why a module: the plan's own lines say this per victim and per pod left out; `explain` asks it
of one pod, running or pending, and a running pod that stays has no line in the plan at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.cluster import Cluster
from ..planning.job import Options
from ..planning.outcome import proven
from ..problem.resources import holds_node
from ..problem.scheduling import pod_priority
from .hosts import hosts_text
from .model import PreemptOutcome, plan_preempt
from .victims import NEVER, preemption_policy, terminating


def why_preempt(
    cluster: Cluster,
    pod: str,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    allow_moves: bool = False,
) -> str:
    """One paragraph on `pod` in the preemption plan of every pending pod of the input (with
    `allow_moves`, the plan that may move pods instead of evicting them)."""
    target = cluster.pod(pod)
    outcome = plan_preempt(cluster, nodes=nodes, options=options, allow_moves=allow_moves)
    text = preemption_text(cluster, outcome, target.namespaced_name)
    if allow_moves and not holds_node(target):  # a pending pod: where it could go, alone
        text += "\n" + hosts_text(cluster, target.namespaced_name, options or Options())
    return text


def preemption_text(cluster: Cluster, outcome: PreemptOutcome, name: str) -> str:
    """What the plan `outcome` does with pod `name`, and why."""
    target = cluster.pod(name)
    told = outcome.verdict
    status = f"(plan {None if told is None else told.status.value}; {outcome.summary})"
    for v in outcome.victims:
        if v.name == name:
            return f"{name}: {v.reason} {status}"
    for m in outcome.moves:
        if m.name == name:
            return f"{name}: {m.reason} {status}"
    for p in outcome.pods:
        if p.name != name:
            continue
        if p.placed:
            mine = [v.name for v in outcome.victims if v.preemptor == name]
            there = [v.name for v in outcome.victims if v.node == p.node and v.preemptor != name]
            words = f"evicting {', '.join(mine)}" if mine else "evicting no pod for it"
            moving = [f"{m.name} to {m.to}" for m in outcome.moves if m.preemptor == name]
            if moving:
                words += f", moving {', '.join(moving)}"
            if there:
                words += f"; the room of {', '.join(there)} (evicted there for another pod) serves it too"
            return f"{name}: placed on {p.node}, {words} {status}"
        return f"{name}: not placed: {p.reason} {status}"
    if holds_node(target) and not terminating(target):
        prio = pod_priority(cluster, target)
        higher = [
            p.name
            for p in outcome.pods
            if p.pod is not None and p.priority > prio and preemption_policy(cluster, p.pod) != NEVER
        ]
        if not higher:
            return (
                f"{name}: stays on {target.spec.node_name}: no pending pod that may preempt has a priority "
                f"above its {prio} {status}"
            )
        which = "the plan that places" if proven(outcome) else "the best plan found for"
        return (
            f"{name}: stays on {target.spec.node_name}: pending pods of higher priority may preempt it "
            f"({', '.join(higher[:3])}{', ...' if len(higher) > 3 else ''}), but {which} the most "
            f"pending weight at least damage does not evict it {status}"
        )
    if terminating(target):
        return f"{name}: terminating: it holds its node and devices until it is gone; no candidate {status}"
    return f"{name}: not part of the plan (not pending, not running) {status}"


__all__ = ["preemption_text", "why_preempt"]
