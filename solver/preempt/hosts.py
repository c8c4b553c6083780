"""Which nodes could host one pending pod, and after how many moves and evictions
(`explain --pod X --preempt --allow-moves`; docs/semantics.md, "Preemption", "Doing a plan with
moves").

Why a module of its own: the batch plan answers for all pending pods at once; a person
looking at one pending 8-GPU pod asks where it *could* go and what that would cost there. The
answer is a reading of the input, node by node, for that pod alone: the devices its requests
may take on the node (selectors, taints and the rest of the precompute, with every device
counted free), how many of those are free now, and the fewest running pods of lower priority
to take off the node for the rest — movable ones (`preempt.moves`) as moves, others as
evictions, the pods holding most of those devices first. Not a plan: whether the moved pods
find room elsewhere, and what the other pending pods need, is the batch plan's question.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..api.cluster import Cluster
from ..api.models import Pod
from ..encoders.variables import allowed_candidates
from ..gates import FeatureGates
from ..planners.aggregated.classes import LocalViews
from ..planning.job import Options
from ..planning.resolve import resolve_nodes
from ..problem.build import build_problem
from ..problem.flat import Problem
from ..problem.pods import pod_claims
from ..problem.scheduling import node_refusal, pod_priority
from .moves import not_movable
from .victims import running_pods

DeviceId = tuple[str, str, str]


@dataclass(frozen=True)
class Host:
    """A node that could host the pod: the pods to move and to evict there first."""

    node: str
    moves: tuple[str, ...]
    evictions: tuple[str, ...]


def _in_use(
    cluster: Cluster, nodes: list[str], gates: FeatureGates
) -> tuple[dict[DeviceId, list[Pod]], dict[str, list[Pod]], dict[str, list[str]]]:
    """The running pods on `nodes`: who holds each device, the pods on each node, and each
    pod's claims (`namespace/name`)."""
    held: dict[DeviceId, list[Pod]] = {}
    on: dict[str, list[Pod]] = {}
    claims_of: dict[str, list[str]] = {}
    for p in running_pods(cluster, nodes):
        on.setdefault(p.spec.node_name or "", []).append(p)
        for c in pod_claims(cluster, p, gates):
            claims_of.setdefault(p.namespaced_name, []).append(c.namespaced_name)
            alloc = c.status.allocation if c.status is not None else None
            for r in alloc.devices.results if alloc is not None else ():
                held.setdefault((r.driver, r.pool, r.device), []).append(p)
    return held, on, claims_of


def _usable(problem: Problem) -> tuple[int, set[DeviceId]] | None:
    """How many devices the pod needs on the node and the devices it could use, with every
    device counted free; None when it cannot fit there at all (a request no device serves, a
    mode other than ExactCount, fewer usable devices than it needs)."""
    allowed, impossible = allowed_candidates(problem)
    need, usable = 0, set()
    for info in problem.claims:
        for req in info.requests:
            a = problem.alternatives[req.alternatives[0]]
            if a.index in impossible or a.mode != "ExactCount":
                return None
            need += a.count
            usable |= {
                (problem.devices[d].driver, problem.devices[d].pool, problem.devices[d].name)
                for d in allowed.get(a.index, {})
            }
    return (need, usable) if len(usable) >= need else None


def _departures(
    below: list[Pod],
    frees: dict[str, int],
    claims_of: dict[str, list[str]],
    users: dict[str, int],
    short: int,
    moves: list[str],
    evictions: list[str],
) -> int:
    """The pods of lower priority on a node (`below`) that leave, most devices freed first,
    until `short` devices are free: each added to `moves` (it may move) or `evictions`; a pod
    with a claim another pod uses stays (taking it off frees nothing). Returns what is still
    short (<= 0: enough)."""
    pods = {p.namespaced_name: p for p in below}
    for who in sorted((p for p in pods if p in frees), key=lambda p: (-frees[p], p)):
        if short <= 0:
            break
        mine = claims_of.get(who, [])
        sole = [ref for ref in mine if users.get(ref) == 1]
        if len(sole) != len(mine):
            continue
        (moves if not_movable(pods[who], sole, mine) is None else evictions).append(who)
        short -= frees[who]
    return short


def hosts(cluster: Cluster, name: str, options: Options) -> list[Host] | str:
    """The nodes that could host pending pod `name` alone, cheapest first (fewest evictions,
    then fewest moves, then node order); or why the reading does not apply to it. Only
    `options.feature_gates` is read."""
    gates = options.feature_gates
    target = cluster.pod(name)
    claims = pod_claims(cluster, target, gates)
    if any(c.status is not None and c.status.allocation is not None for c in claims):
        return "one of its claims is allocated already"
    if not claims:
        return "it asks for no devices"
    prio = pod_priority(cluster, target)
    nodes = resolve_nodes(cluster, None)
    held, on, claims_of = _in_use(cluster, nodes, gates)
    users: dict[str, int] = {}
    for refs in claims_of.values():
        for ref in refs:
            users[ref] = users.get(ref, 0) + 1
    views = LocalViews(cluster)
    out: list[Host] = []
    for n in nodes:
        if node_refusal(cluster, target, n):
            continue
        view = views.of(cluster, n)  # every device of the node's pools counted free
        free_view = replace(
            view, claims={k: c for k, c in view.claims.items() if c.status is None or not c.status.allocation}
        )
        counted = _usable(build_problem(free_view, claims, n, gates))
        if counted is None:
            continue
        need, usable = counted
        taken = {d for d in usable if d in held}
        short = need - (len(usable) - len(taken))
        moves: list[str] = []
        evictions: list[str] = []
        if short > 0:
            frees: dict[str, int] = {}
            for d in taken:
                for p in held[d]:
                    frees[p.namespaced_name] = frees.get(p.namespaced_name, 0) + 1
            below = [p for p in on.get(n, []) if pod_priority(cluster, p) < prio]
            short = _departures(below, frees, claims_of, users, short, moves, evictions)
        if short <= 0:
            out.append(Host(n, tuple(moves), tuple(evictions)))
    order = {n: i for i, n in enumerate(nodes)}
    out.sort(key=lambda h: (len(h.evictions), len(h.moves), order[h.node]))
    return out


def hosts_text(cluster: Cluster, name: str, options: Options, shown: int = 5) -> str:
    """One paragraph: the cheapest nodes for pod `name` alone, and how many nodes need how
    many departures."""
    got = hosts(cluster, name, options)
    if isinstance(got, str):
        return f"where it could go alone: not read ({got})"
    if not got:
        return "where it could go alone: no node, even taking off every lower-priority pod"
    words = []
    for h in got[:shown]:
        parts = []
        if h.moves:
            parts.append(f"{len(h.moves)} move{'s' if len(h.moves) != 1 else ''} ({', '.join(h.moves)})")
        if h.evictions:
            plural = "s" if len(h.evictions) != 1 else ""
            parts.append(f"{len(h.evictions)} eviction{plural} ({', '.join(h.evictions)})")
        words.append(f"{h.node} after {' and '.join(parts) if parts else 'nothing (free now)'}")
    counts: dict[tuple[int, int], int] = {}
    for h in got:
        key = (len(h.moves), len(h.evictions))
        counts[key] = counts.get(key, 0) + 1
    tally = "; ".join(
        f"{k} node{'s' if k != 1 else ''} after {m} move{'s' if m != 1 else ''}"
        + (f" and {e} eviction{'s' if e != 1 else ''}" if e else "")
        for (m, e), k in sorted(counts.items(), key=lambda t: (t[0][1], t[0][0]))
    )
    return (
        f"where it could go alone, as the input stands (moved pods assumed to find room elsewhere): "
        f"{'; '.join(words)}{'; ...' if len(got) > shown else ''} — {tally}"
    )


__all__ = ["Host", "hosts", "hosts_text"]
