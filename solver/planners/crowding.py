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

from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

from .. import interrupt
from ..inventory import DeviceID, PoolID
from ..planning.job import Job
from ..planning.outcome import PlanOutcome, PodPlan
from ..planning.snapshot import Snapshot
from ..problem.demand import demand_total
from ..reasons import Fact, Kind, Reason
from ..reasons.words import DETAIL_NODES, nowhere, over_nodes
from .bounds import HINT_STEPS
from .firstfit.solo import Alone, Solo
from .firstfit.words import NodeReasons


def crowded_reasons(job: Job, outcome: PlanOutcome, *, share: bool = True) -> PlanOutcome:
    """`outcome` with the reason of each pod not placed (outside gangs, not interrupted, not
    dropped by the aggregated plan's expansion: those reasons say more) that
    fits alone on some node rewritten: those nodes first, with the plan's pods that take the
    room there (their devices the pod could use, the node resources it needs) and why they
    were placed rather than it (priority, queue order, the most pods placed); then the other
    nodes' reasons on the input's cluster. `node_reasons` is set to the same per-node words.
    A pod that fits alone nowhere keeps its reason (the input itself stands in the way).

    `share`: pods that provably get the same words up to their claim names share them (one
    pass over the nodes per pod class, not per pod); False words every pod on its own, in the
    same words — what the tests compare the shared words with."""
    pods = outcome.pods
    if interrupt.requested() or not any(p.placed for p in pods):  # Ctrl-C: the plan, at once
        return _unexplained(outcome)
    left = [
        i
        for i, p in enumerate(pods)
        if not p.placed
        and not p.is_(Kind.INTERRUPTED, Kind.DROPPED)
        and not job.units[i].gang_pods(job.gangs)
    ]
    if not left:
        return outcome
    solo = Solo(job, HINT_STEPS)
    after = _after(job, pods, solo)
    index = _Index(job, pods, outcome.allocator, memo=share)
    shared: dict[Hashable, tuple[Kind, Facts, dict[str | None, Reason]] | None] = {}
    """A key that decides the reason up to the claim names -> its kind, facts and node
    reasons, claim refs as placeholders: pods of one class cost one pass over the nodes, not
    one each (50,000 pods x 10,000 nodes). Under CP-SAT every fact depends on nothing else
    (`_Index.room`): (the pod's shape key, priority, whether it has a reason); under first
    fit, also its place in the queue (`_Index.queue_key`)."""
    for i in left:
        if interrupt.requested():
            break
        unit = job.units[i]
        key = solo.key(unit)
        if key is not None and outcome.allocator != "reference":
            key = ("most", key, unit.priority, pods[i].reason is None) if share else i
        elif key is not None and pods[i].reason is not None and share:
            key = ("queue", index.queue_key(i, key, solo))
        else:
            key = None
        if key is None:
            found = _reasons(job, outcome, i, solo, after, index)
        else:
            if key not in shared:
                shared[key] = _reasons(job, outcome, i, solo, after, index)
            found = shared[key]
        if found is not None:
            refs = [c.namespaced_name for c in unit.claims]
            pods[i].because(Reason(found[0], unit.name, (*found[1], ("claims", tuple(refs)))))
            pods[i].node_reasons = NodeReasons(found[2], refs)
    return _unexplained(outcome)


def _unexplained(outcome: PlanOutcome) -> PlanOutcome:
    """`outcome` with a reason for every pod left out: a pod the model left out without first
    fit's reason (`policy.Cpsat.without_first_fit`) that an interrupt kept from being
    worded says so."""
    for p in outcome.pods:
        if not p.placed and p.reason is None:
            p.because(Reason.of(Kind.UNWORDED))
    return outcome


Facts = tuple[tuple[str, Fact], ...]
"""A reason's facts but its subject and claim refs (`Reason.facts`)."""


def _reasons(
    job: Job, outcome: PlanOutcome, i: int, solo: Solo, after: Solo, index: _Index
) -> tuple[Kind, Facts, dict[str | None, Reason]] | None:
    """Unit i's reason (its kind and facts: `Kind.CROWDED`) and node reasons, with the claim
    refs as placeholders (`reasons.words.with_refs` puts them in) (None: it fits alone nowhere,
    its reason stays — or, when it has none, first fit not having run, every node's reason on
    the input's cluster)."""
    pods, unit = outcome.pods, job.units[i]
    fits, whys = solo.nodes(unit)
    if not fits:
        if pods[i].reason is not None or not whys:
            return None
        return Kind.NO_NODE, nowhere(list(whys.items())), whys
    first, crowd = _crowded(outcome, i, fits, after, index, len(fits) + len(whys))
    rest = list(whys.items())
    others: Facts = (("others", over_nodes(rest, one=False)),) if rest else ()
    return Kind.CROWDED, (*first, *others), {**crowd, **whys}


def _crowded(
    outcome: PlanOutcome, i: int, fits: list[Alone], after: Solo, index: _Index, total: int
) -> tuple[Facts, dict[str | None, Reason]]:
    """The facts of unit i's reason for the nodes where it fits alone (`Kind.CROWDED`: the
    nodes, what the plan's pods take on each, why those pods), and those nodes' reasons (what
    the plan's pods take there, `Kind.TAKEN`), in the order of `fits`."""
    pods, unit = outcome.pods, index.job.units[i]
    free = after.devices_fit(unit, [a.node for a in fits])
    crowd: dict[str | None, Reason] = {}
    takers: dict[int, None] = {}
    for alone in fits:
        taken, who = index.room(i, alone, devices=alone.node not in free)
        crowd[alone.node] = taken
        takers.update(dict.fromkeys(who))
    relation = _priority_relation(unit.priority, [pods[j].priority for j in takers], outcome.allocator)
    named = fits[:DETAIL_NODES]
    facts: Facts = (
        ("total", total),
        ("fitting", len(fits)),
        ("fits", tuple(str(a.node) for a in named)),
        ("rooms", tuple(crowd[a.node] for a in named)),
        ("relation", relation),
    )
    return facts, crowd


def _after(job: Job, pods: Sequence[PodPlan], before: Solo) -> Solo:
    """Answers on the cluster after the plan (its placed claims allocated): whether the
    devices, not only the node resources, are what the plan's pods take. It shares the nodes'
    static parts with `before`, the answers on the input's cluster (`Solo`'s `like`)."""
    after = Snapshot(job.cluster, job.gates)  # claims only: the node resources are counted apart
    after.allocate(c for p in pods if p.placed for c in p.claims)
    return Solo(replace(job, cluster=after.cluster), HINT_STEPS, like=before)


class _Index:
    """The plan's placed units by what they take — each device their claims were allocated, the
    pools of those devices, the node resources on their node — and the node resources left
    after the plan, so that each (pod, node) looks up its takers instead of scanning the plan."""

    def __init__(self, job: Job, pods: Sequence[PodPlan], allocator: str, *, memo: bool = True) -> None:
        self.job, self.pods, self.allocator, self.memo = job, pods, allocator, memo
        self.by_device: dict[DeviceID, list[int]] = {}
        self.by_pool: dict[PoolID, list[int]] = {}
        self.by_node: dict[str | None, list[int]] = {}
        self.book = job.book.fresh()
        self._memo: dict[tuple[Alone, bool, tuple[tuple[str, int], ...]], tuple[Reason, list[int]]] = {}
        """(the node with the pod's candidate devices, whether devices are named, the demand) ->
        the room: the same for every pod of a shape under CP-SAT, so computed once."""
        self._devices_of: (
            tuple[int, dict[tuple[frozenset[DeviceID], frozenset[PoolID]], list[int]]] | None
        ) = None
        """`_on_devices`: the unit asked about last, and its answers per (devices, pools)."""
        self._queue: dict[tuple[Hashable, int], list[int]] = {}
        """(`Solo.key`, priority) -> the placed units of that priority that could take the room
        of such a pod, in input order (`queue_key`)."""
        for j, p in enumerate(pods):
            if not p.placed:
                continue
            self.book.take(self.book.variant(job.units[j].needs, p.node), p.node)
            if any(n.demand for n in job.units[j].needs):
                self.by_node.setdefault(p.node, []).append(j)
            for c in p.claims:
                alloc = c.status.allocation if c.status is not None else None
                for r in alloc.devices.results if alloc is not None else ():
                    self.by_device.setdefault((r.driver, r.pool, r.device), []).append(j)
                    self.by_pool.setdefault((r.driver, r.pool), []).append(j)

    def queue_key(self, i: int, key: Hashable, solo: Solo) -> Hashable:
        """What decides unit i's reason under first fit, up to its claim names, for a unit of
        `Solo.key` `key` that has first fit's reason: the key, its priority, and how many
        placed units of its priority that could take its room are ahead of it in the queue.
        Why that is all: the nodes, their words on the input's cluster and whether devices
        are what it lacks after the plan follow from the key; the only thing that differs
        between such pods is `ahead`, the takers that come before it, and the takers looked
        at (`_room`) are placed units on its fit nodes' devices, pools and node resources —
        those of a higher priority are ahead of every such pod, those of a lower one of none,
        and those of its own priority ahead of it are the first so many in input order."""
        unit = self.job.units[i]
        mine = self._queue.get((key, unit.priority))
        if mine is None:
            fits, _ = solo.nodes(unit)
            near: set[int] = set()
            looked: set[tuple[frozenset[DeviceID], frozenset[PoolID]]] = set()
            for a in fits:
                if (a.devices, a.pools) not in looked:  # nodes of one world share both sets
                    looked.add((a.devices, a.pools))
                    for d in a.devices:
                        near.update(self.by_device.get(d, ()))
                    for pid in a.pools:
                        near.update(self.by_pool.get(pid, ()))
                near.update(self.by_node.get(a.node, ()))
            units = self.job.units
            mine = self._queue[(key, unit.priority)] = sorted(
                j for j in near if units[j].priority == unit.priority
            )
        return (key, unit.priority, bisect_left(mine, i))

    def ahead(self, i: int, js: Iterable[int]) -> list[int]:
        """Of the placed units `js` (once each, in order), those that could stand in unit i's way:
        for first fit, those ahead of it in the queue (higher priority, then input order); for
        CP-SAT, which places every pod at once, all of them."""
        out = sorted(set(js))
        if self.allocator != "reference":
            return out
        units = self.job.units
        me = (-units[i].priority, i)
        return [j for j in out if (-units[j].priority, j) < me]

    def room(self, i: int, alone: Alone, *, devices: bool) -> tuple[Reason, list[int]]:
        """What the plan's pods take on a node where unit i fits alone (`Kind.TAKEN`: the pods
        on devices it could use, and beside which the node lacks resources it needs), and
        which placed units those are. `devices`: the unit finds no devices there after the
        plan (else the devices are not what it lacks, and only the node resources are named)."""
        unit = self.job.units[i]
        key = (alone, devices, tuple(sorted(demand_total(unit.needs).items())))
        if self.allocator != "reference" and self.memo:  # the same takers for every pod of a shape
            hit = self._memo.get(key)
            if hit is None:
                hit = self._memo[key] = self._room(i, alone, devices)
            return hit
        return self._room(i, alone, devices)

    def _room(self, i: int, alone: Alone, devices: bool) -> tuple[Reason, list[int]]:
        unit, pods = self.job.units[i], self.pods
        facts: list[tuple[str, Fact]] = []
        on_devices: list[int] = []
        if devices:
            on_devices = self._on_devices(i, alone)
            if on_devices:
                facts.append(("devices", _names(pods, on_devices)))
        short = self.book.refusal(self.book.variant(unit.needs, alone.node), alone.node)
        on_node: list[int] = []
        if short:
            on_node = self.ahead(i, self.by_node.get(alone.node, ()))
            facts += [("short", short), ("beside", _names(pods, on_node))]
        return Reason(Kind.TAKEN, "", tuple(facts)), [*on_devices, *on_node]

    def _on_devices(self, i: int, alone: Alone) -> list[int]:
        """The placed units ahead of unit i that hold devices it could use on `alone`'s node,
        else (shared counters or capacity) any new allocation in its pools. Kept for the last
        unit asked about, per (devices, pools): the nodes of one world share both sets, and
        looking at thousands of network-attached devices once per node made the reasons cost
        nodes x devices."""
        if self._devices_of is None or self._devices_of[0] != i:
            self._devices_of = (i, {})
        memo = self._devices_of[1]
        key = (alone.devices, alone.pools)
        hit = memo.get(key)
        if hit is None:
            hit = self.ahead(i, (j for d in alone.devices for j in self.by_device.get(d, ())))
            if not hit:
                hit = self.ahead(i, (j for pid in alone.pools for j in self.by_pool.get(pid, ())))
            memo[key] = hit
        return hit


def _names(pods: Sequence[PodPlan], which: Sequence[int]) -> tuple[str, ...]:
    return tuple(pods[j].name for j in dict.fromkeys(which))


def _priority_relation(mine: int, theirs: list[int], allocator: str) -> str:
    """Why the plan placed the pods that take the room rather than this one, as a key of
    `reasons.words.PRIORITY`, true of how the allocator decides: first fit places by priority,
    then input order; CP-SAT places the most priority-weighted pods it can."""
    if theirs and all(t > mine for t in theirs):
        return "higher"
    if allocator == "reference":
        return "queue" if all(t >= mine for t in theirs) else "before"
    return "most"
