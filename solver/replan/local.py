"""The local re-solve of a pods-only update (`Planner.update`): a small CP-SAT plan of the
nodes the change reached, with every other placement fixed, taken only when it places more
weight.

Why: incremental first fit keeps every placed pod and fills free room in queue order; it never
re-optimises. Its weight drifts below a fresh plan's where the change opened a better packing:
room released by removed pods that first fit fills greedily, or a new higher-priority pod that
finds no room while pods of lower priority hold room it could use. A fresh plan re-solves the
whole cluster (tens of seconds at 10,000 pods); the change reaches a few nodes. So the update
re-solves those nodes only (the region), with the pipeline's CP-SAT allocator on a sub-cluster:

- the region: the nodes where the update released or placed pods, then, for each pod of the
  update first fit could not place, the nodes where pods of lower priority asking for one of
  its DeviceClasses hold the most devices (`region`), at most `NODES`;
- the pods: those placed on the region — each may keep its node (with other devices), take
  another region node, or be left out: the model sees no pins; of its plan and the current
  one, the second stage (`moves.fewest_moves`) makes the plan of most weight that gains at
  least 1 per pod of the last plan it moves or leaves out, then of the fewest such pods (over
  the node patterns of both; where it does not apply, the model's plan exchanged between
  alike nodes and interchangeable pods, `relabel`, `stay`), and every group of nodes joined
  by moved pods that gains nothing is put back (`revert`, `home`) — and the pending pods in
  queue order (priority, then the cluster's order), at most `PER_NODE` per region node of
  one claim shape and `PENDING` in all;
- everything else fixed: every other placed pod's claims stay allocated in the sub-cluster
  (their devices are in use), and only the region's nodes and slices (and slices without a
  node name) are in it.

Its plan replaces the region's pods only when it places strictly more weight than they had
and gains at least 1 per pod of the last plan it moves or leaves out (`moves.pays`, checked
on the plan with devices: `docs/semantics.md`, "Re-planning"). It is valid for the
whole cluster: the pipeline checked it on the sub-cluster, which has every device in use that
the cluster has on those nodes' pools and the same node rules; the planner
re-checks each placement as it records it in its first-fit run (`Resumable.hold`) and the node
resources of every node a pod arrived at. It proves nothing about the cluster's optimum: the
update's bound and status are the ones the update had (an OPTIMAL update reaches its bound).

When it runs: only where a gain is possible (`may_gain`, a sound bound: a knapsack per region
node over its device counts per driver, of its pods and the pending pods offered, then — the
region's pods may move — the same counts over every region node at once; when no plan of the
counts holds more weight than the region, the sub-plan could not gain and is not built —
status "not re-solved: no region node can hold more weight (room bound)"). So an update whose
released room and left-out pods cannot be traded for weight costs a count, not a model.

Cost and determinism: the sub-plan is the pipeline with the planner's options (seed, workers)
and a budget of `LIMIT` deterministic seconds (CP-SAT's machine-independent work measure, so
the same input gives the same plan at any load: no wall clock stops it, docs/semantics.md,
"Limits and determinism").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from ortools.sat.python.cp_model_helper import CpSolverStatus  # not cp_model: `encoders.model`

from ..api.cluster import Cluster
from ..api.models import ResourceClaim, ResourceSlice
from ..cpsat import cp_solver, new_cp_model
from ..planners.aggregated.expansion import expand_aggregated
from ..planners.aggregated.master import AggregatedPlan, aggregate
from ..planners.aggregated.patterns import ModelMemo, allocate_beside
from ..planners.bounds import sequential_units
from ..planning.finish import per_pod
from ..planning.job import Job, Options, Unit
from ..planning.ledger import Ledger
from ..planning.outcome import PlanOutcome, PodPlan
from ..planning.resolve import make_job, units_for
from ..planning.snapshot import Snapshot
from ..problem.flat import claim_weight
from ..reasons import Kind, Reason
from .moves import disturbed, fewest_moves, pays

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

NODES = 32
"""The region's size: at most this many nodes are re-solved."""
PER_NODE = 2
"""Pending pods of one claim shape offered per region node (a node of 8 devices takes at most
8 pods of one device; more of a shape than this rarely change the region's optimum)."""
PER_WAITING = 2
"""Nodes added to the region per pod the update could not place (see `region`)."""
PENDING = 256
"""Pending pods offered in all, the first in queue order."""
LIMIT = 0.25
"""CP-SAT budget of the sub-plan, in deterministic seconds."""

Shape = tuple[str, ...]


@dataclass(frozen=True)
class Local:
    """What the local re-solve changed: the region, and the new plan of each pod it changed
    (the region's pods — kept on their node, or left out — and the pending pods it placed)."""

    region: tuple[str, ...]
    pods: Mapping[str, PodPlan]
    gain: int
    status: str = ""
    """The sub-plan's status (OPTIMAL: the region's best with the rest fixed, under the caps)."""


def shape_of(claims: Sequence[ResourceClaim]) -> Shape:
    """The claims' specs, as a key: pods of one shape ask for the same devices."""
    return tuple(c.spec.model_dump_json() for c in claims)


def region(
    pods: Sequence[PodPlan],
    seeds: Iterable[str | None],
    waiting: Sequence[PodPlan],
    nodes: Sequence[str],
) -> tuple[str, ...]:
    """The nodes to re-solve, in node order: the `seeds` (nodes the update released or placed
    pods on), then, for the pods of `waiting` (not placed by the update, in queue order), the
    nodes where pods of lower priority asking for one of their DeviceClasses hold the most
    devices (room that leaving them out would free), `PER_WAITING` per pod; at most `NODES`."""
    order = {n: i for i, n in enumerate(nodes)}
    chosen = sorted({n for n in seeds if n is not None and n in order}, key=order.__getitem__)[:NODES]
    taken = set(chosen)
    if waiting and len(chosen) < NODES:
        top = max(w.priority for w in waiting)
        held: dict[tuple[int, str], dict[str, int]] = {}
        for p in pods:
            if p.placed and p.node is not None and p.priority < top and p.node in order:
                devices = sum(_devices(c) for c in p.claims)
                for cls in classes_of(p.claims):
                    per = held.setdefault((p.priority, cls), {})
                    per[p.node] = per.get(p.node, 0) + devices
        wanted: dict[tuple[int, frozenset[str]], int] = {}
        for w in waiting:
            key = (w.priority, frozenset(classes_of(w.claims)))
            wanted[key] = wanted.get(key, 0) + PER_WAITING
        for (priority, classes), count in wanted.items():
            score: dict[str, int] = {}
            for (prio, cls), per in held.items():
                if prio < priority and cls in classes:
                    for n, devices in per.items():
                        score[n] = score.get(n, 0) + devices
            best = sorted((n for n in score if n not in taken), key=lambda n: (-score[n], order[n]))
            for n in best[: min(count, NODES - len(chosen))]:
                taken.add(n)
                chosen.append(n)
            if len(chosen) == NODES:
                break
    if len(chosen) == 1 and len(nodes) > 1:  # the aggregated model plans two nodes or more
        chosen.append(nodes[(order[chosen[0]] + 1) % len(nodes)])
    return tuple(sorted(chosen, key=order.__getitem__))


def classes_of(claims: Sequence[ResourceClaim]) -> set[str]:
    """The DeviceClasses the claims' requests (and their subrequests) name."""
    out: set[str] = set()
    for c in claims:
        for r in c.spec.devices.requests:
            if r.exactly is not None:
                out.add(r.exactly.device_class_name)
            for sub in r.first_available or ():
                out.add(sub.device_class_name)
    return out


def _devices(claim: ResourceClaim) -> int:
    """How many devices the claim's allocation holds (0: not allocated)."""
    alloc = claim.status.allocation if claim.status is not None else None
    return len(alloc.devices.results) if alloc is not None else 0


def resolve(
    after: Cluster,
    pods: Sequence[PodPlan],
    area: Sequence[str],
    queue: Sequence[PodPlan],
    shape: Callable[[PodPlan], Shape],
    options: Options,
    memo: ModelMemo | None = None,
    last: Collection[str] | None = None,
) -> Local | None:
    """The local re-solve of `area` (module docstring): the new plans of the pods it changes
    (none when it places no more weight than the area's pods had; None when not tried).
    `queue`: the pending pods in queue order; `shape`: a pod's claim shape (`shape_of` its
    claims, cached by the caller); `memo`: the single-node answers of earlier re-solves
    (`patterns.ModelMemo`, kept by the caller: a region's nodes are of few kinds, and their
    caps and device allocations repeat from update to update); `last`: the names of the pods
    placed where the last plan placed them (None: every placed pod) — the pods whose moves
    the rule counts (`moves.pays`): the others this update's first fit placed."""
    inside = set(area)
    if len(inside) < 2:
        return None
    here = [p for p in pods if p.placed and p.node in inside]
    if any(p.pod is None or p.extended or p.reserved for p in here):
        return None  # pods of plain claims, shared or special claims: not re-solved here
    offered = _offered(queue, shape, max(1, int(PER_NODE * len(area))))
    if not may_gain(after, here, offered, area, options.seed):
        return Local(tuple(area), {}, 0, "not re-solved: no region node can hold more weight (room bound)")
    sub = _sub_cluster(after, pods, here, offered, inside)
    nodes: list[str | None] = list(area)
    opts = Options.of(options, time_limit=LIMIT, memo=memo)
    units = units_for(sub, [p.name for p in (*here, *offered)], None, nodes, opts.feature_gates)
    if any(len(u.members) != 1 for u in units):
        return None  # pods sharing a claim: one unit each is what the hint below assumes
    was = [_as_unit(u, p) for u, p in zip(units, (*here, *offered), strict=True)]
    job = make_job(sub, units, nodes, opts)
    current = PlanOutcome(was, "current", {})
    # The region's pods were placed by a checked plan: where no model judges them more strictly
    # than upstream, their nodes' patterns fit without a search.
    checked = not sequential_units(sub, units, opts.feature_gates)
    agg = aggregate(job, current, force=True, first_fits=checked)
    if isinstance(agg, str):
        return Local(tuple(area), {}, 0, f"not re-solved: {agg}")
    had = sum(claim_weight(p.priority) for p in here)
    if agg.objective <= had:  # the expansion only loses pods: no gain, nothing to expand
        return Local(tuple(area), {}, 0, agg.status.value)
    # The most weight that pays for what it disturbs, then the fewest disturbed, over the
    # patterns of both plans (`moves.fewest_moves`); the relabelled model's plan where that
    # stage does not apply.
    alike = {n: _alike(sub, n) for n in area}
    kept = {i for i, p in enumerate(here) if last is None or p.name in last}
    fewest = fewest_moves(units, was, agg.placements, area, alike.__getitem__, options.seed, kept)
    chosen = fewest if fewest is not None else relabel(sub, units, was, agg.placements, area)
    # Settled before the expansion (`settle`), so that only the nodes whose change gains are
    # searched for devices: every other node holds its pods as it did.
    planned = settle(units, was, chosen, area, shape)
    if _counted(units, planned) <= had:
        return Local(tuple(area), {}, 0, agg.status.value)
    tried = [_expanded(job, current, replace(agg, placements=planned), was)]
    if _weight(tried[0].pods) < _counted(units, planned):  # the settled plan lost a pod on devices
        tried.append(_expanded(job, current, agg, was))
    status = "" if tried[0].verdict is None else tried[0].verdict.status.value
    # Each expanded plan settled again (where devices dropped pods, groups may gain nothing
    # now); taken only where it gains and keeps the rule (`moves.pays`), the best of them.
    found = [
        (settled, got)
        for got in tried
        if _weight(got.pods) > had
        for settled in [home(units, was, revert(units, was, stay(units, was, list(got.pods), shape)))]
        if _weight(settled) > had and pays(was, settled, kept)
    ]
    if not found:
        return Local(tuple(area), {}, 0, status)
    settled, got = max(found, key=lambda f: (_weight(f[0]), -disturbed(was, f[0], kept)))
    status = "" if got.verdict is None else got.verdict.status.value
    gets = _weight(settled)
    done = per_pod(sub, units, PlanOutcome(settled, got.allocator, {}), opts.feature_gates)
    return Local(tuple(area), _changed(done.pods, (*here, *offered)), gets - had, status)


def _offered(queue: Sequence[PodPlan], shape: Callable[[PodPlan], Shape], cap: int) -> list[PodPlan]:
    """The pending pods a re-solve offers the region: in queue order, at most `PENDING`, and
    at most `cap` of one priority and claim shape (more of a kind than the region could hold
    only make the model bigger)."""
    offered: list[PodPlan] = []
    per_shape: dict[Shape, int] = {}
    for p in queue:
        if len(offered) == PENDING:
            break
        if p.pod is None:
            continue
        key = (str(p.priority), *shape(p))
        if per_shape.get(key, 0) >= cap:
            continue
        per_shape[key] = per_shape.get(key, 0) + 1
        offered.append(p)
    return offered


def _changed(done: Sequence[PodPlan], before: Sequence[PodPlan]) -> dict[str, PodPlan]:
    """The re-solve's plans that differ from `before` (the region's pods and the pending ones
    offered): a pod placed anew, on another node or other devices; a pod the region held
    left out, with the reason why (pods of more weight took its place)."""
    original = {p.name: p for p in before}
    changed: dict[str, PodPlan] = {}
    for q in done:
        old = original[q.name]
        if q.placed:
            if not old.placed or q.node != old.node or q.claims != old.claims:
                changed[q.name] = q
        elif old.placed:  # left out for pods of more weight
            why = Reason.of(Kind.LEFT_FOR_WEIGHT, q.name, node=old.node)
            changed[q.name] = replace(q, reason=None, why=why)
    return changed


def settle(
    units: Sequence[Unit],
    was: Sequence[PodPlan],
    placements: Mapping[str, list[int]],
    area: Sequence[str],
    shape: Callable[[PodPlan], Shape],
) -> dict[str, list[int]]:
    """The model's placements (node -> units) after the steps that keep pods home — `stay`,
    `revert`, `home`, the same ones the expanded plan goes through — read on the placements
    alone, before any device is chosen: interchangeable pods traded so that pods keep their
    nodes, every group of nodes that gains no weight given back its pods. Returned for every
    region node that holds a pod, in `area`'s order. Why: the model reshuffles pods across
    the region (it does not count moves) and most of that is put back; searching devices for
    it first (the expansion: exact models on partitionable devices) costs more than the rest
    of the update. The expanded plan is settled again, which changes it only where a node's
    devices did not take its pods."""
    node_of = {i: n for n, idxs in placements.items() for i in idxs}
    got = [
        PodPlan(u.name, node_of[i], list(u.claims), None, u.priority, True, pod=was[i].pod)
        if i in node_of
        else (was[i] if not was[i].placed else _left(u))
        for i, u in enumerate(units)
    ]
    out = home(units, was, revert(units, was, stay(units, was, got, shape)))
    on: dict[str, list[int]] = {}
    for i, p in enumerate(out):
        if p.placed and p.node is not None:
            on.setdefault(p.node, []).append(i)
    return {n: on[n] for n in area if n in on}


def _counted(units: Sequence[Unit], placements: Mapping[str, list[int]]) -> int:
    """The weight of the units the placements place."""
    return sum(claim_weight(units[i].priority) for idxs in placements.values() for i in idxs)


def _expanded(job: Job, current: PlanOutcome, agg: AggregatedPlan, was: Sequence[PodPlan]) -> PlanOutcome:
    """The model's plan on devices (`expansion.expand_aggregated`), but for the nodes that keep
    every pod they hold in `current` (nodes are independent here, their slices all name them):
    those pods keep their devices there — that node's part of a checked plan — and a node
    that also takes new pods searches devices for those only, on the devices left
    (`patterns.allocate_beside`, the reference's fast yes; where it finds none, the node is
    expanded whole). Why: most of a region keeps its pods, and a whole-node search of
    partitionable devices costs an exact model where the new pods alone are a quick fit."""
    held: dict[str, list[int]] = {}
    for i, p in enumerate(was):
        if p.placed and p.node is not None:
            held.setdefault(p.node, []).append(i)
    ledger: Ledger | None = None
    grown: dict[int, PodPlan] = {}
    kept: set[str] = set()
    for n, idxs in agg.placements.items():
        mine = held.get(n, [])
        if sorted(idxs) == mine:
            kept.add(n)
            continue
        if not mine or not set(mine) <= set(idxs):
            continue
        new = [i for i in idxs if i not in set(mine)]
        claims = [c for i in new for c in job.units[i].claims]
        group_of = [g for g, i in enumerate(new) for _ in job.units[i].claims]
        beside = [c for i in mine for c in was[i].claims]
        problem, found, view = allocate_beside(agg.ctx, n, beside, claims, group_of)
        if found is None or len(found) != len(claims):
            continue
        ledger = ledger or Ledger(job)
        done = ledger.results(problem, tuple(claims), found)
        ledger.commit(done, n, view)
        at = 0
        for i in new:
            unit, k = job.units[i], len(job.units[i].claims)
            grown[i] = PodPlan(unit.name, n, done[at : at + k], None, unit.priority, placed=True)
            at += k
        kept.add(n)
    if not kept:
        return expand_aggregated(job, current, agg, {})
    rest = {n: idxs for n, idxs in agg.placements.items() if n not in kept}
    # Those nodes' pods are outside the expansion: not in its first plan either (else it would
    # keep that plan for placing more than its own).
    outside = {i for n in kept for i in agg.placements[n]}
    first = [
        PodPlan(p.name, None, list(job.units[i].claims), None, p.priority, False) if i in outside else p
        for i, p in enumerate(current.pods)
    ]
    got = expand_aggregated(job, replace(current, pods=first), replace(agg, placements=rest), {})
    pods = list(got.pods)
    for n in kept:
        for i in held.get(n, []):
            pods[i] = was[i]
    for i, p in grown.items():
        pods[i] = p
    return replace(got, pods=pods)


STATES = 100_000
"""Device-count states per node above which `may_gain` does not bound it (it answers "may
gain"): the knapsack's table is the product of the node's per-driver device counts."""

_LITERAL = r"""("[^"\\]*"|'[^'\\]*')"""
_DRIVER = re.compile(
    rf"\s*(?:device\.driver\s*==\s*(?P<a>{_LITERAL})|(?P<b>{_LITERAL})\s*==\s*device\.driver)\s*"
)
"""A selector that is exactly `device.driver == "<name>"` (either side; a literal without
escapes, so its text is its value)."""

Need = tuple[tuple[str, int], ...]
"""A pod's fewest devices per driver (`min_devices`); the driver "" for requests that may take
devices of any driver."""


def may_gain(
    after: Cluster,
    here: Sequence[PodPlan],
    offered: Sequence[PodPlan],
    area: Sequence[str],
    seed: int = 0,
) -> bool:
    """Whether the sub-plan of `area` could place more weight than its pods have (`here`):
    False only when that is impossible, so skipping the solve then changes nothing.

    Why it is sound: the sub-plan places pods of `here` and `offered` on the region's nodes
    only (they are its only nodes) — a pod of `here` on its own node, on another region node
    (the model may move it: `revert` keeps such a move only where its group gains), or left
    out — each pod once, so its weight is a sum, over the region's nodes, of the weight of
    disjoint sets of those pods, one set per node. On node n such a set needs distinct devices
    of n (its slices all name a node: `Planner` runs the step only then): at least
    `min_devices` of each pod (claims never share a device but with adminAccess, counted 0, or
    on devices allowing multiple allocations — a region with one is not bounded: True), of one
    driver where the request's class or selectors require it, and no more than n's devices of
    that driver, nor than n's devices in all — every device of every slice naming n, in use or
    not, whatever else it is, less only those that shared counters keep from being allocated
    at once (`room`): more room than any plan has. Every other rule (class and request
    selectors beyond the driver, constraints, node rules and resources, which node a pod
    takes) only removes sets. So the heaviest such assignment of the pods' device counts to
    the nodes' (the *count relaxation*) bounds the sub-plan; when it is the weight the region
    holds, no plan of the region places more, and the solve would return its pods unchanged.

    Two steps, cheapest first: per node, the heaviest set of its own pods and the offered pods
    (a knapsack over its counts, exact): when one node's is heavier than what it holds, a gain
    is possible without moving anything (True). Otherwise a gain needs pods moved between
    nodes, and the count relaxation over every node at once decides (`_joint_gain`: a small
    CP-SAT model of counts per node and kind of pod, deterministic; True unless it proves the
    region's weight is its optimum)."""
    slices: dict[str, list[ResourceSlice]] = {n: [] for n in area}
    for s in after.slices:
        n = s.spec.node_name
        if n is not None and n in slices:
            if any(d.allow_multiple_allocations for d in s.spec.devices):
                return True
            slices[n].append(s)
    devices = {n: room(slices[n]) for n in area}
    drivers: dict[str, str] = {}
    need = {id(p): min_devices(p.claims, after, drivers) for p in (*here, *offered)}
    pending: dict[tuple[int, Need], int] = {}
    for p in offered:
        key = (claim_weight(p.priority), need[id(p)])
        pending[key] = pending.get(key, 0) + 1
    on: dict[str, list[PodPlan]] = {}
    for p in here:
        on.setdefault(p.node or "", []).append(p)
    caps = {n: {**devices[n], "": sum(devices[n].values())} for n in area}
    for n in area:
        mine = [(claim_weight(p.priority), need[id(p)]) for p in on.get(n, ())]
        had = sum(w for w, _ in mine)
        if _knapsack(mine, caps[n]) != had:
            return True  # what the node holds is beyond these counts (not expected): not bounded
        items = list(mine)
        for (w, d), count in pending.items():
            fits = [caps[n].get(k, 0) // c for k, c in d if c > 0]
            items += [(w, d)] * min(count, min(fits, default=count))
        best = _knapsack(items, caps[n])
        if best is None or best > had:
            return True
    kinds = dict(pending)
    for p in here:
        key = (claim_weight(p.priority), need[id(p)])
        kinds[key] = kinds.get(key, 0) + 1
    return _joint_gain(kinds, [caps[n] for n in area], sum(claim_weight(p.priority) for p in here), seed)


JOINT_LIMIT = 0.05
"""CP-SAT budget of the count relaxation (`_joint_gain`), in deterministic seconds: past it,
the relaxation is not proven and the step runs."""


def room(slices: Sequence[ResourceSlice]) -> dict[str, int]:
    """The most devices of each driver that can be allocated at once among `slices` (a node's):
    each device counts one, except that the devices drawing on one shared counter (KEP-4815's
    `consumesCounters`) count no more, together, than its capacity over the least any of them
    consumes of it. Why: a partitionable device lists itself whole and in parts, all drawing
    on one counter, so its devices far outnumber what it can hold at once (8 GPUs listed whole
    and in two halves are 24 devices, at most 16 of them allocated), and `may_gain` counted
    room that no plan has.

    Sound: each device is put in one group — the counter it consumes a positive amount of that
    admits the fewest such consumptions (capacity / amount), or alone when it consumes none
    (or of a counter no slice defines: its pool is invalid and nothing is allocated from it) —
    and the devices of a group allocated at once consume at least the group's least amount
    each of a counter that never gives more than its capacity (devices already in use only
    take more of it; with DRAPartitionableDevices off, no device that consumes counters is
    allocated at all). So no allocation holds more of a group than that bound, and the sum
    over the groups of one driver bounds that driver's devices."""
    capacity: dict[tuple[str, str, str, str], Fraction] = {}
    for s in slices:
        for cs in s.spec.shared_counters:
            for name, counter in cs.counters.items():
                capacity[(s.spec.driver, s.spec.pool.name, cs.name, name)] = counter.value.as_fraction()
    out: dict[str, int] = {}
    groups: dict[tuple[str, str, str, str], Fraction] = {}
    sizes: dict[tuple[str, str, str, str], int] = {}
    for s in slices:
        driver = s.spec.driver
        out.setdefault(driver, 0)
        for d in s.spec.devices:
            best: tuple[Fraction, tuple[str, str, str, str], Fraction] | None = None
            for use in d.consumes_counters:
                for name, amount in use.counters.items():
                    key = (driver, s.spec.pool.name, use.counter_set, name)
                    value = amount.value.as_fraction()
                    if (
                        value > 0
                        and key in capacity
                        and (best is None or (capacity[key] / value, key) < best[:2])
                    ):
                        best = (capacity[key] / value, key, value)
            if best is None:
                out[driver] += 1
                continue
            key, value = best[1], best[2]
            groups[key] = min(groups.get(key, value), value)
            sizes[key] = sizes.get(key, 0) + 1
    for key, least in groups.items():
        out[key[0]] += min(sizes[key], math.floor(capacity[key] / least))
    return out


def _joint_gain(
    kinds: Mapping[tuple[int, Need], int], caps: Sequence[Mapping[str, int]], had: int, seed: int
) -> bool:
    """Whether some assignment of the pods' device counts to the nodes (`kinds`: how many pods
    of each (weight, fewest devices per driver); `caps`: each node's devices per driver and in
    all, key "") weighs more than `had` — the count relaxation of `may_gain`, every pod free to
    take any node. False only when that is proven impossible (every pod at its most weighs no
    more, or CP-SAT finds `had` + 1 infeasible); True when it is possible or the search stops
    unproven. Deterministic: `cpsat.cp_solver` (one worker, the seed, deterministic time)."""
    items = sorted(kinds.items())
    cp = new_cp_model()
    objective: list[tuple[cp_model.IntVar, int, int]] = []  # (count, weight, most)
    per_kind: list[list[tuple[cp_model.IntVar, int]]] = [[] for _ in items]
    for cap in caps:
        use: dict[str, list[tuple[cp_model.IntVar, int, int]]] = {}
        for j, ((w, need), count) in enumerate(items):
            d = {k: c for k, c in need if c > 0}
            total = sum(d.values())
            most = min([count, *(cap.get(k, 0) // c for k, c in d.items() if k)])
            if total > 0:
                most = min(most, cap.get("", 0) // total)
            if most <= 0:
                continue  # not one pod of this kind fits the node
            x = cp.new_int_var(0, most, "")
            per_kind[j].append((x, most))
            objective.append((x, w, most))
            for k, c in d.items():
                if k:
                    use.setdefault(k, []).append((x, c, most))
            if total > 0:
                use.setdefault("", []).append((x, total, most))
        for k, terms in use.items():
            if sum(c * most for _, c, most in terms) > cap.get(k, 0):
                cp.add(sum(c * x for x, c, _ in terms) <= cap.get(k, 0))
    for j, (_, count) in enumerate(items):
        if sum(most for _, most in per_kind[j]) > count:
            cp.add(sum(x for x, _ in per_kind[j]) <= count)
    if sum(w * most for _, w, most in objective) <= had:
        return False  # every pod at its most: no more than the region holds
    cp.add(sum(w * x for x, w, _ in objective) >= had + 1)
    return cp_solver(seed, JOINT_LIMIT).solve(cp) != CpSolverStatus.INFEASIBLE


def min_devices(claims: Sequence[ResourceClaim], cluster: Cluster, memo: dict[str, str]) -> Need:
    """The fewest devices any allocation of the claims holds, per driver (`Need`): per request
    its count (1 unless set) in ExactCount mode, 0 in All mode or with adminAccess (it holds
    devices without using them up), the smallest of its subrequests' for firstAvailable (of any
    driver). A request's driver is the one its class's or its own selectors pin (`_driver`).
    `memo`: drivers per DeviceClass name."""
    out: dict[str, int] = {}
    for c in claims:
        for r in c.spec.devices.requests:
            if r.exactly is not None:
                e = r.exactly
                if e.admin_access or e.allocation_mode == "All":
                    continue
                cls = memo.get(e.device_class_name)
                if cls is None:
                    found = cluster.classes.get(e.device_class_name)
                    cls = memo[e.device_class_name] = _driver(found.spec.selectors if found else [])
                driver = cls or _driver(e.selectors)
                out[driver] = out.get(driver, 0) + (e.count or 1)
            elif r.first_available:
                least = min(0 if s.allocation_mode == "All" else s.count or 1 for s in r.first_available)
                out[""] = out.get("", 0) + least
    return tuple(sorted(out.items()))


def _driver(selectors: Sequence[object]) -> str:
    """The driver every device the selectors accept has: one selector (they must all hold)
    that is exactly `device.driver == "<name>"`; "" when none pins it."""
    for sel in selectors:
        cel = getattr(sel, "cel", None)
        m = _DRIVER.fullmatch(cel.expression) if cel is not None else None
        if m is not None:
            return (m.group("a") or m.group("b"))[1:-1]
    return ""


def _knapsack(items: Sequence[tuple[int, Need]], caps: Mapping[str, int]) -> int | None:
    """The largest total weight of items (weight, per-driver counts) whose counts fit `caps`
    per driver and in all (key ""); None when the table would exceed `STATES`."""
    keys = sorted(caps)
    size = 1
    for k in keys:
        size *= caps[k] + 1
    if size > STATES:
        return None
    best: dict[tuple[int, ...], int] = {tuple(0 for _ in keys): 0}
    for w, need in items:
        d = dict(need)
        total = sum(d.values())
        if any(k and k not in caps for k in d if d[k] > 0):
            continue  # devices of a driver the node has none of: not on this node
        step = [d.get(k, 0) if k else total for k in keys]
        more: dict[tuple[int, ...], int] = {}
        for used, got in best.items():
            nxt = tuple(u + s for u, s in zip(used, step, strict=True))
            if all(x <= caps[k] for x, k in zip(nxt, keys, strict=True)) and got + w > best.get(nxt, -1):
                more[nxt] = max(more.get(nxt, -1), got + w)
        for k2, v in more.items():
            if v > best.get(k2, -1):
                best[k2] = v
    return max(best.values())


def _weight(pods: Sequence[PodPlan]) -> int:
    return sum(claim_weight(p.priority) for p in pods if p.placed)


def relabel(
    cluster: Cluster,
    units: Sequence[Unit],
    was: Sequence[PodPlan],
    placements: Mapping[str, list[int]],
    area: Sequence[str],
) -> dict[str, list[int]]:
    """The model's placements (node -> units) with the contents of alike nodes exchanged so that
    as many pods as possible stay on the node they had: the model picks a node of a class by
    its order, not by where pods are. Alike (`_alike`): the same devices, attributes and
    capacities, labels but the hostname, allocatable resources and taints, and no pod bound to
    it in the input. A content goes to a node only where none of its pods is refused (their
    scheduling constraints: `Unit.blocked`); greedy on the pods that stay, ties in node order.
    The devices are chosen afterwards, on the node given (`aggregated.expansion.expand_aggregated`,
    which checks them)."""
    groups: dict[str, list[str]] = {}
    for n in area:
        groups.setdefault(_alike(cluster, n), []).append(n)
    out = {n: list(v) for n, v in placements.items()}
    for nodes in groups.values():
        if len(nodes) < 2:
            continue
        contents = [placements.get(n, []) for n in nodes]
        pairs = sorted(
            (
                (-sum(1 for i in content if was[i].placed and was[i].node == m), c, k)
                for c, content in enumerate(contents)
                for k, m in enumerate(nodes)
                if content and not any(m in units[i].blocked for i in content)
            ),
        )
        home: dict[int, int] = {}
        used: set[int] = set()
        for _, c, k in pairs:
            if c not in home and k not in used:
                home[c], used = k, used | {k}
        if len(home) != sum(1 for content in contents if content):
            continue  # a content no free node of the group takes: the model's nodes stay
        for n in nodes:
            out.pop(n, None)
        for c, k in home.items():
            out[nodes[k]] = contents[c]
    return out


def _alike(cluster: Cluster, node: str) -> str:
    """A key equal for nodes a pod cannot tell apart (`relabel`); unique for a node with pods
    bound to it in the input."""
    if any(p.spec.node_name == node for p in cluster.pods.values()):
        return f"bound:{node}"
    obj = cluster.nodes.get(node)
    labels = (
        {k: v for k, v in (obj.metadata.labels or {}).items() if k != "kubernetes.io/hostname"} if obj else {}
    )
    parts = [
        repr(sorted(labels.items())),
        obj.spec.model_dump_json() if obj is not None and obj.spec is not None else "",
        obj.status.model_dump_json() if obj is not None and obj.status is not None else "",
    ]
    parts += sorted(
        s.spec.model_dump_json(exclude={"node_name", "pool"})
        for s in cluster.slices
        if s.spec.node_name == node
    )
    return "\n".join(parts)


def _as_unit(unit: Unit, p: PodPlan) -> PodPlan:
    """The pod's current plan as the sub-plan's unit sees it: its name, its claims as placed
    (allocated: the model's hint) or as the unit has them (pending)."""
    if p.placed:
        return replace(p, name=unit.name)
    return PodPlan(unit.name, None, list(unit.claims), p.reason, unit.priority, False, pod=p.pod, why=p.why)


def stay(
    units: Sequence[Unit], was: Sequence[PodPlan], got: list[PodPlan], shape: Callable[[PodPlan], Shape]
) -> list[PodPlan]:
    """`got` with placements traded between interchangeable pods so that as many pods as
    possible keep the node they had in `was`: moving stays the last criterion. Interchangeable:
    one Pod each, the same priority, namespace, claim specs (in order) and Pod spec but for the
    claims' names — any pod of such a group may take another's node and devices (its claims get
    the other's allocation), the plan's weight and every rule's verdict unchanged. Within a
    group, a pod that had a node keeps it when the plan places one of the group there; the other
    placements go to the group's placed pods first (moved, not left out), then the rest in order."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, u in enumerate(units):
        pod = u.members[0].pod if len(u.members) == 1 else None
        if pod is None:
            continue
        spec = pod.spec.model_dump_json(exclude={"resource_claims"})
        entries = tuple(e.name for e in pod.spec.resource_claims)
        key = (u.priority, pod.metadata.ns, shape(was[i]), spec, entries)
        groups.setdefault(key, []).append(i)
    out = list(got)
    for idxs in groups.values():
        if len(idxs) < 2:
            continue
        slots: dict[str | None, list[PodPlan]] = {}
        for i in idxs:
            if got[i].placed:
                slots.setdefault(got[i].node, []).append(got[i])
        given: dict[int, PodPlan] = {}
        for i in idxs:
            if was[i].placed and slots.get(was[i].node):
                given[i] = slots[was[i].node].pop(0)
        rest = [s for node in sorted(slots, key=str) for s in slots[node]]
        order = [i for i in idxs if i not in given and was[i].placed] + [
            i for i in idxs if i not in given and not was[i].placed
        ]
        for i in order:
            if rest:
                given[i] = rest.pop(0)
        for i in idxs:
            slot = given.get(i)
            if slot is None:
                out[i] = got[i] if not got[i].placed else was[i] if not was[i].placed else _left(units[i])
            elif slot is not got[i]:
                claims = [
                    mine.model_copy(update={"status": _unreserved(theirs)})
                    for mine, theirs in zip(units[i].claims, slot.claims, strict=True)
                ]
                out[i] = replace(slot, name=units[i].name, claims=claims, pod=units[i].members[0].pod)
    return out


def revert(units: Sequence[Unit], was: Sequence[PodPlan], got: Sequence[PodPlan]) -> list[PodPlan]:
    """`got` with every group of nodes whose change gains nothing put back as it was in `was`.
    The groups: nodes joined by a pod that moved between them (a pod placed in both plans on
    other nodes), each node alone otherwise. A group whose pods in `got` weigh no more than its
    pods in `was` is a reshuffle (or a loss): its nodes get their pods and devices of `was`
    back, the pods `got` placed there newly are pending again, those it left out are placed
    again. Valid: such a node holds what it held in the last plan, which passed the checker, and
    the other nodes only lose pods that return home. So a pod moves, or is left out, only in a
    group that places more weight; the total weight never drops."""
    parent: dict[str, str] = {}

    def root(n: str) -> str:
        while parent.setdefault(n, n) != n:
            n = parent[n]
        return n

    for w, g in zip(was, got, strict=True):
        if w.placed and g.placed and w.node is not None and g.node is not None and w.node != g.node:
            parent[root(w.node)] = root(g.node)
    old: dict[str, int] = {}
    new: dict[str, int] = {}
    for w, g in zip(was, got, strict=True):
        if w.placed and w.node is not None:
            old[root(w.node)] = old.get(root(w.node), 0) + claim_weight(w.priority)
        if g.placed and g.node is not None:
            new[root(g.node)] = new.get(root(g.node), 0) + claim_weight(g.priority)
    back = {r for r in (*old, *new) if new.get(r, 0) <= old.get(r, 0)}
    out: list[PodPlan] = []
    for w, g in zip(was, got, strict=True):
        home = w.node is not None and w.placed and root(w.node) in back
        there = g.node is not None and g.placed and root(g.node) in back
        out.append(w if home or there else g)
    return out


def home(units: Sequence[Unit], was: Sequence[PodPlan], got: Sequence[PodPlan]) -> list[PodPlan]:
    """`got` with single nodes given back what they held in `was` wherever that loses no
    weight and brings a moved pod home (`revert` puts back whole groups of nodes; a group that
    gains may still hold reshuffles). Such a node gets its pods and devices of `was` back; its
    pods that `got` had placed on other nodes leave those (room freed only); the pods `got`
    had placed there newly are left out — so the node is taken back only when the weight of
    its pods coming back (from being left out) covers theirs. Node after node, in order, until
    nothing changes."""
    out = list(got)
    weight = [claim_weight(u.priority) for u in units]
    nodes = sorted({w.node for w in was if w.placed and w.node is not None})
    changed = True
    while changed:
        changed = False
        for n in nodes:
            old = [i for i, w in enumerate(was) if w.placed and w.node == n]
            now = [i for i, g in enumerate(out) if g.placed and g.node == n]
            if sorted(old) == sorted(now) and all(out[i] is was[i] for i in old):
                continue
            moved = [i for i in old if out[i].placed and out[i].node != n]
            back = sum(weight[i] for i in old if not out[i].placed)
            lost = sum(weight[i] for i in now if i not in old)
            if back < lost or (not moved and back == lost):
                continue
            for i in now:
                if i not in old:
                    out[i] = was[i] if not was[i].placed else _left(units[i])
            for i in old:
                out[i] = was[i]
            changed = True
    return out


def _unreserved(claim: ResourceClaim) -> object:
    """The claim's status without its consumers (a traded allocation names its new pod only)."""
    return claim.status.model_copy(update={"reserved_for": []}) if claim.status is not None else None


def _left(unit: Unit) -> PodPlan:
    return PodPlan(
        unit.name, None, list(unit.claims), "left out by the update's local re-solve", unit.priority, False
    )


def _sub_cluster(
    after: Cluster,
    pods: Sequence[PodPlan],
    here: Sequence[PodPlan],
    offered: Sequence[PodPlan],
    inside: set[str],
) -> Cluster:
    """`after` restricted to the region: its nodes and slices (and slices without a node
    name), the pods bound to them, the region's placed pods pinned to their node, the pending
    pods offered; every claim of the cluster that is not allocated, and the allocated claims
    that hold a device of the region's pools (those of pods placed outside the region, as
    placed: their devices stay in use). An allocated claim without a device there changes
    nothing in the region — its slices all name a region node (`Planner._local` runs the step
    only then), so no such claim competes for them — and the sub-cluster stays the region's
    size, not the cluster's."""
    pools = {(s.spec.driver, s.spec.pool.name) for s in after.slices if s.spec.node_name in inside}

    def here_too(claim: ResourceClaim) -> bool:
        alloc = claim.status.allocation if claim.status is not None else None
        return alloc is None or any((r.driver, r.pool) in pools for r in alloc.devices.results)

    outside = Snapshot(after)  # their claims only: their pods are not in the region
    outside.allocate(c for p in pods if p.placed and p.node not in inside for c in (*p.claims, *p.reserved))
    claims = {k: c for k, c in outside.cluster.claims.items() if here_too(c)}
    bound = {k: pod for k, pod in after.pods.items() if pod.spec.node_name in inside}
    for p in here:
        assert p.pod is not None and p.node is not None
        bound[p.pod.key] = p.pod
    for p in offered:
        assert p.pod is not None
        bound[p.pod.key] = p.pod
    return replace(
        after,
        pods=bound,
        claims=claims,
        nodes={n: node for n, node in after.nodes.items() if n in inside},
        slices=[s for s in after.slices if s.spec.node_name is None or s.spec.node_name in inside],
        _identities={},
    )


__all__ = [
    "LIMIT",
    "NODES",
    "PENDING",
    "PER_NODE",
    "PER_WAITING",
    "Local",
    "classes_of",
    "may_gain",
    "min_devices",
    "region",
    "resolve",
    "room",
    "settle",
    "shape_of",
    "stay",
]
