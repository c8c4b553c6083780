"""Why a pod the plan leaves out does not fit: first the nodes where only the plan's other pods
stand in the way, and which pods take the room there.

Why: first fit words a pod's reason at its turn, after the pods before it took their devices,
so "2 nodes: Insufficient cpu; 1 node: a taint; 2 more nodes for 2 other reason(s)" may cut
off the cause that matters — the GPU nodes would take the pod, but this plan gives their
GPUs to other pending pods. The reasons are ordered by what would have to change for the pod
to fit: nodes where it fits alone on the cluster as the input has it come first (change
nothing but which pods the plan places), named with the pods that take the room; then the
nodes where the pod or the cluster must change, with their reasons on the input's cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dra_solver.allocators import DROPPED, HINT_STEPS, INTERRUPTED, Job, PlanOutcome, PodPlan, Unit
from dra_solver.demand import NodeBook
from dra_solver.firstfit import DETAIL_NODES, Alone, Solo, reason_groups
from dra_solver.inventory import DeviceID, PoolID

NAMED_PODS = 3
"""At most this many pods are named per node that fits alone (then "and K more")."""


def crowded_reasons(job: Job, outcome: PlanOutcome) -> PlanOutcome:
    """`outcome` with the reason of each pod not placed (outside gangs, not interrupted, not
    dropped by the aggregated plan's expansion: those reasons say more) that
    fits alone on some node rewritten: those nodes first, with the plan's pods that take the
    room there (their devices the pod could use, the node resources it needs) and why they
    were placed rather than it (priority, queue order, the most pods placed); then the other
    nodes' reasons on the input's cluster. `node_reasons` is set to the same per-node words.
    A pod that fits alone nowhere keeps its reason (the input itself stands in the way)."""
    pods = outcome.pods
    if not any(p.placed for p in pods):
        return outcome
    left = [
        i
        for i, p in enumerate(pods)
        if not p.placed
        and p.reason != INTERRUPTED
        and not (p.reason or "").startswith(DROPPED)
        and not job.units[i].gang_pods(job.gangs)
    ]
    if not left:
        return outcome
    solo = Solo(job, HINT_STEPS)
    after = _after(job, pods)
    held = _held(pods)
    book = job.book.fresh()
    for j, p in enumerate(pods):
        if p.placed:
            book.take(book.variant(job.units[j].needs, p.node), p.node)
    placed = [j for j, p in enumerate(pods) if p.placed]

    def before(i: int) -> set[int]:
        """The placed units that could stand in unit i's way: for first fit, those ahead of it
        in the queue (higher priority, then input order); for CP-SAT, every one."""
        if outcome.allocator != "reference":
            return set(placed)
        me = (-job.units[i].priority, i)
        return {j for j in placed if (-job.units[j].priority, j) < me}

    for i in left:
        unit = job.units[i]
        fits, texts, templates = solo.nodes(unit)
        if not fits:
            continue
        crowd: dict[str | None, str] = {}
        takers: dict[int, None] = {}
        for alone in fits:
            busy = not after.devices_fit(unit, alone.node)
            words, who = _room(job, unit, alone, pods, held if busy else {}, book, before(i))
            crowd[alone.node] = words
            takers.update(dict.fromkeys(who))
        first = _crowd_line(fits, crowd, pods, takers, unit, outcome.allocator)
        rest = list(texts.items())
        if not rest:
            others: list[str] = []
        elif len(rest) <= DETAIL_NODES:
            others = [f"{n}: {r}" for n, r in rest]
        else:
            others = reason_groups(rest, templates)
        total = len(fits) + len(rest)
        head = f"no node fits the pod (0 of {total} nodes): " if total > 1 else ""
        pods[i].reason = head + "; ".join([first, *others])
        pods[i].node_reasons = {**{a.node: crowd[a.node] for a in fits}, **texts}
    return outcome


def _after(job: Job, pods: Sequence[PodPlan]) -> Solo:
    """Answers on the cluster after the plan (its placed claims allocated): whether the
    devices, not only the node resources, are what the plan's pods take."""
    claims = dict(job.cluster.claims)
    for p in pods:
        if p.placed:
            claims.update({(c.metadata.namespace or "default", c.metadata.name): c for c in p.claims})
    return Solo(replace(job, cluster=replace(job.cluster, claims=claims)), HINT_STEPS)


def _held(pods: Sequence[PodPlan]) -> dict[int, frozenset[DeviceID]]:
    """Placed unit -> the devices its claims were allocated by this plan."""
    out: dict[int, frozenset[DeviceID]] = {}
    for j, p in enumerate(pods):
        if not p.placed:
            continue
        devices = set()
        for c in p.claims:
            alloc = c.status.allocation if c.status is not None else None
            if alloc is not None:
                devices |= {(r.driver, r.pool, r.device) for r in alloc.devices.results}
        out[j] = frozenset(devices)
    return out


def _room(
    job: Job,
    unit: Unit,
    alone: Alone,
    pods: Sequence[PodPlan],
    held: dict[int, frozenset[DeviceID]],
    book: NodeBook,
    before: set[int],
) -> tuple[str, list[int]]:
    """What the plan's pods take on a node where `unit` fits alone, in words ("devices it could
    use go to a, b, and beside c the node has Insufficient cpu"), and which placed units those
    are — among `before`: the units placed before its turn (all of them for CP-SAT, which
    places every pod at once). `held`: the placed units' new devices, empty when the unit still
    finds devices on the node after the plan (then the devices are not what it lacks)."""
    pools: frozenset[PoolID] = alone.pools
    on_devices = [j for j, devs in held.items() if j in before and devs & alone.devices]
    if not on_devices:  # shared counters or capacity: any new allocation in the node's pools
        on_devices = [
            j for j, devs in held.items() if j in before and any((d[0], d[1]) in pools for d in devs)
        ]
    parts: list[str] = []
    if on_devices:
        parts.append(f"devices it could use go to {_names(pods, on_devices)}")
    short = book.refusal(book.variant(unit.needs, alone.node), alone.node)
    on_node: list[int] = []
    if short:
        on_node = [
            j
            for j, p in enumerate(pods)
            if j in before and p.placed and p.node == alone.node and any(n.demand for n in job.units[j].needs)
        ]
        parts.append(f"beside {_names(pods, on_node)} the node has {short}")
    if not parts:
        return "it fits alone, but the search did not find a way beside this plan's pods", []
    return ", and ".join(parts), [*on_devices, *on_node]


def _names(pods: Sequence[PodPlan], which: Sequence[int]) -> str:
    names = [pods[j].name for j in dict.fromkeys(which)]
    if len(names) > NAMED_PODS:
        return ", ".join(names[:NAMED_PODS]) + f" and {len(names) - NAMED_PODS} more"
    return ", ".join(names)


def _crowd_line(
    fits: list[Alone],
    crowd: dict[str | None, str],
    pods: Sequence[PodPlan],
    takers: dict[int, None],
    unit: Unit,
    allocator: str,
) -> str:
    """ "fits on a, b alone, but this plan gives ... (why them)": the nodes where only the
    plan's other pods stand in the way."""
    names = [str(a.node) for a in fits]
    if len(names) > DETAIL_NODES:
        where = ", ".join(names[:DETAIL_NODES]) + f" and {len(names) - DETAIL_NODES} more"
    else:
        where = _listed(names)
    detail = "; ".join(f"on {a.node}, {crowd[a.node]}" for a in fits[:DETAIL_NODES])
    why = _priority_words(unit.priority, [pods[j].priority for j in takers], allocator)
    return f"fits on {where} alone, but other pods of this plan take the room there ({why}): {detail}"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _priority_words(mine: int, theirs: list[int], allocator: str) -> str:
    """Why the plan placed the pods that take the room rather than this one, in words true of
    how the allocator decides: first fit places by priority, then input order; CP-SAT places
    the most priority-weighted pods it can."""
    if theirs and all(t > mine for t in theirs):
        return "they have a higher priority"
    if allocator == "reference":
        if all(t >= mine for t in theirs):
            return "first fit: the same or a higher priority, earlier in the queue"
        return "first fit: placed before its turn"
    return "CP-SAT places the most pods, by priority, that fit together"
