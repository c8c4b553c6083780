"""A preemption plan as what a person does, in order, and how fragmented the cluster is before
and after it (docs/semantics.md, "Preemption", "Doing a plan with moves").

Why a module of its own: the batch model answers *what* changes (pods evicted, pods moved,
pending pods placed); a platform team needs *how*: which command first, and whether the room a
moved pod needs is free when it goes. That is read from the plan and the input alone — the
devices each departure frees and each arrival takes — so nothing here changes a result.

- `steps(cluster, outcome)`: cordon the nodes the plan empties for pending pods (so that no
  replacement, nor any other new pod, lands on them meanwhile), then each eviction and move
  as `kubectl delete pod` — a move is a delete whose controller re-creates the pod, which the
  scheduler then places where there is room; a move whose destination devices are held by a
  pod that leaves too comes after that pod's step (`after`) — then uncordon them, and the
  pending pods schedule. Where two moves wait for each other's devices (a swap), the first
  is done anyway and its replacement stays Pending until the other has gone: the note says so.
- `fragmentation(cluster, outcome)`: free node-local devices per node before and after the
  plan, the devices stranded (free, but on nodes where no pending pod's device count fits),
  the largest device count one node can still give, and pending pods placed per move.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..planning.outcome import PodPlan
from .model import Move, PreemptOutcome
from .moves import controller_of

DeviceId = tuple[str, str, str]
"""(driver, pool, device)."""
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Step:
    """One thing to do: `kind` cordon, evict, move or uncordon; the shell command; a note
    saying why; `after`: the step numbers (1-based) it waits for."""

    number: int
    kind: str
    command: str
    note: str
    pod: str | None = None
    node: str | None = None
    to: str | None = None
    after: tuple[int, ...] = ()


def _claims_of(cluster: Cluster, pod: Pod) -> list[ResourceClaim]:
    """The claims a running pod uses, as the input records them (by name or its status)."""
    ns = pod.metadata.ns
    statuses = {
        s.name: s.resource_claim_name for s in (pod.status.resource_claim_statuses if pod.status else [])
    }
    out = []
    for entry in pod.spec.resource_claims:
        name = entry.resource_claim_name or statuses.get(entry.name)
        claim = cluster.claims.get((ns, name)) if name else None
        if claim is not None:
            out.append(claim)
    return out


def _devices(claims: Iterable[ResourceClaim]) -> set[DeviceId]:
    out: set[DeviceId] = set()
    for c in claims:
        alloc = c.status.allocation if c.status is not None else None
        if alloc is not None:
            out.update((r.driver, r.pool, r.device) for r in alloc.devices.results if not r.admin_access)
    return out


def _pin(cluster: Cluster, node: str) -> str:
    """How a pod template pins a pod to `node`: a nodeSelector on its hostname label, else
    node affinity on the node's name."""
    obj = cluster.nodes.get(node)
    host = obj.metadata.labels.get(HOSTNAME) if obj is not None else None
    if host:
        return f"nodeSelector {HOSTNAME}={host}"
    return f"nodeAffinity metadata.name In [{node}]"


def _delete(name: str) -> str:
    ns, short = name.split("/", 1)
    return f"kubectl delete pod -n {ns} {short}"


def _waits_for(cluster: Cluster, outcome: PreemptOutcome) -> dict[str, set[str]]:
    """Moved pod -> the evicted or moved pods holding devices its replacement takes (they
    must leave first)."""
    frees: dict[str, set[DeviceId]] = {}
    for v in outcome.victims:
        if v.pod is not None:
            frees[v.name] = _devices(_claims_of(cluster, v.pod))
    for m in outcome.moves:
        pod = next((p for p in cluster.pods.values() if p.namespaced_name == m.name), None)
        frees[m.name] = _devices(_claims_of(cluster, pod)) if pod is not None else set()
    holder = {d: name for name, ds in frees.items() for d in ds}
    needs: dict[str, set[str]] = {}
    for m in outcome.moves:
        takes = _devices(m.plan.claims) if m.plan is not None else set()
        needs[m.name] = {holder[d] for d in takes if d in holder and holder[d] != m.name}
    return needs


def _move_note(cluster: Cluster, m: Move, waits: list[int], cycle: bool) -> str:
    """A move step's note: who re-creates the pod and where, the steps it waits for, and
    whether a later step frees its devices (a cycle of moves)."""
    owner = controller_of(m.plan.pod) if m.plan is not None and m.plan.pod is not None else None
    note = (
        f"moves {m.node} -> {m.to} for {m.preemptor}: {owner or 'its controller'} re-creates it, "
        f"{m.to} has room (pin: {_pin(cluster, m.to)})"
    )
    if waits:
        note += f"; after step {', '.join(map(str, waits))}, which frees its devices on {m.to}"
    if cycle:
        note += f"; its devices on {m.to} are freed by a later step: its replacement stays Pending until then"
    return note


def steps(cluster: Cluster, outcome: PreemptOutcome) -> list[Step]:
    """The plan's evictions and moves in an order that works (module docstring); empty when
    the plan evicts and moves nothing."""
    if not outcome.victims and not outcome.moves:
        return []
    needs = _waits_for(cluster, outcome)
    emptied = sorted({v.node for v in outcome.victims} | {m.node for m in outcome.moves})
    out: list[Step] = [
        Step(
            1,
            "cordon",
            f"kubectl cordon {' '.join(emptied)}",
            "no new pod (a moved pod's replacement included) may land on the nodes emptied for "
            "the pending pods while they are emptied",
        )
    ]
    number: dict[str, int] = {}
    by_name = {v.name: v for v in outcome.victims}
    moves = {m.name: m for m in outcome.moves}
    visiting: set[str] = set()

    def emit(name: str) -> None:
        if name in number:
            return
        waits = []
        cycle = False
        visiting.add(name)
        for dep in sorted(needs.get(name, ())):
            if dep in visiting:
                cycle = True
                continue
            emit(dep)
            waits.append(number[dep])
        visiting.discard(name)
        k = len(out) + 1
        number[name] = k
        if name in by_name:
            v = by_name[name]
            note = f"evicted from {v.node} for {v.preemptor}"
            out.append(Step(k, "evict", _delete(name), note, name, v.node))
            return
        m = moves[name]
        note = _move_note(cluster, m, waits, cycle)
        out.append(Step(k, "move", _delete(name), note, name, m.node, m.to, tuple(waits)))

    # Pending pod by pending pod (queue order), the departures from its node.
    order = [v.name for v in outcome.victims] + [m.name for m in outcome.moves]
    by_pending: dict[str, list[str]] = {}
    for name in order:
        why = by_name[name].preemptor if name in by_name else moves[name].preemptor
        by_pending.setdefault(why, []).append(name)
    for p in outcome.pods:
        for name in by_pending.pop(p.name, []):
            emit(name)
    for names in by_pending.values():
        for name in names:
            emit(name)
    placed = [p.name for p in outcome.pods if p.placed and p.node in emptied]
    out.append(
        Step(
            len(out) + 1,
            "uncordon",
            f"kubectl uncordon {' '.join(emptied)}",
            f"the pending pods the room is for schedule there: {', '.join(placed) or 'none'}",
            after=tuple(range(2, len(out) + 1)),
        )
    )
    return out


@dataclass(frozen=True)
class Reading:
    """How fragmented the node-local devices are at one moment (`fragmentation`)."""

    free: int
    """Free node-local devices, all nodes."""
    free_per_node: dict[int, int]
    """Free devices -> how many nodes have that many."""
    stranded: int
    """Free devices on nodes where none of the pending pods' device counts fits."""
    largest: int
    """The most free devices on one node: the largest pod (in devices) that fits now."""


@dataclass(frozen=True)
class Fragmentation:
    before: Reading
    after: Reading
    shapes: tuple[int, ...]
    """The pending pods' device counts (distinct, ascending)."""
    moves: int
    unblocked: int
    """Pending pods placed on nodes the plan empties (evictions or moves there)."""
    per_move: float | None = field(default=None)
    """`unblocked / moves` (None without moves)."""


def fragmentation(cluster: Cluster, outcome: PreemptOutcome) -> Fragmentation:
    """The reading before and after the plan (module docstring). Node-local devices only
    (slices with `spec.nodeName`); a pending pod's shape is the devices its claims ask for in
    all (ExactCount requests; pods asking none are left out)."""
    total: dict[str, set[DeviceId]] = {}
    for s in cluster.slices:
        if s.spec.node_name:
            total.setdefault(s.spec.node_name, set()).update(
                (s.spec.driver, s.spec.pool.name, d.name) for d in s.spec.devices
            )
    used = _devices(cluster.claims.values())
    released: set[DeviceId] = set()
    for c in outcome.released:
        if c.status is None or c.status.allocation is None:
            released |= _devices([cluster.claims[c.key]]) if c.key in cluster.claims else set()
    arrived: list[PodPlan] = [*outcome.pods, *(m.plan for m in outcome.moves if m.plan is not None)]
    after = (used - released) | _devices(c for p in arrived if p.placed for c in p.claims)
    shapes = sorted({n for p in outcome.pods if (n := _asked(p.claims))})
    emptied = {v.node for v in outcome.victims} | {m.node for m in outcome.moves}
    unblocked = sum(1 for p in outcome.pods if p.placed and p.node in emptied)
    moves = len(outcome.moves)
    return Fragmentation(
        _reading(total, used, shapes),
        _reading(total, after, shapes),
        tuple(shapes),
        moves,
        unblocked,
        round(unblocked / moves, 2) if moves else None,
    )


def _asked(claims: Sequence[ResourceClaim]) -> int:
    n = 0
    for c in claims:
        for r in c.spec.devices.requests:
            if r.exactly is not None and (r.exactly.allocation_mode or "ExactCount") == "ExactCount":
                n += r.exactly.count or 1
    return n


def _reading(total: dict[str, set[DeviceId]], used: set[DeviceId], shapes: Sequence[int]) -> Reading:
    smallest = min(shapes, default=None)
    free = {n: len(ds - used) for n, ds in total.items()}
    histogram: dict[int, int] = {}
    for f in free.values():
        histogram[f] = histogram.get(f, 0) + 1
    stranded = sum(f for f in free.values() if smallest is not None and f < smallest)
    return Reading(
        sum(free.values()), dict(sorted(histogram.items())), stranded, max(free.values(), default=0)
    )


__all__ = ["Fragmentation", "Reading", "Step", "fragmentation", "steps"]
