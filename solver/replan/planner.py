"""`Planner`: a plan kept between calls, and re-planned incrementally when the cluster changes.

Why: a platform team asks again whenever a few pods come and go; planning the whole cluster
from scratch each time costs what the first plan cost and moves pods for nothing. A Planner
keeps the cluster, the last plan, a valid bound of it and a first-fit run in the state that
plan left (`firstfit.resumable.Resumable`: per-node pools, cached answers, what is in use), and
`update(add=..., remove=...)` re-plans only what the change touches:

- *Pods only* (pending pods added or removed, their unallocated claims): the removed pods'
  claims and node resources are released in the kept run, and the added pods — with the
  pods the last plan left out, when something was released — are placed by first fit on what
  is free, in the scheduler's queue order (priority, then the cluster's order: pods left out
  before pods added). No placed pod moves (`stats["moved"]` is 0), nothing else is
  re-searched. What it costs is what changed, not the cluster: the pods naming a changed
  object are found by an index (`changes.Naming`); a pod of a kind no node took is tried only
  on the nodes changed since (`Resumable.place`), a pod left out only on the released nodes,
  and not at all when one of its kind failed there since (`Resumable.place_on`); the pods
  left out are resolved once, not per update (`_left_units`); node resources are verified on
  the nodes pods arrived at. `plan()` prepares the run for this (`Resumable.warm`, counted
  in `stats["warm_seconds"]`). Then, unless the result reaches its bound, the *local
  re-solve* (`local.py`): the aggregated CP-SAT model on the nodes the update reached (where
  it released or placed pods, and where pods of lower priority hold room a pod it could not
  place asks for), with the pending pods and every other placement fixed, hinted with the
  current plan, run only where a cheap bound shows the region may hold more weight
  (`local.may_gain`); of the plans of the patterns it and the current plan use, the one of
  most weight that gains at least 1 per pod of the last plan it moves or leaves out, then of
  the fewest such pods (`moves.fewest_moves`), taken only when it places more weight. Its
  placements are recorded in the first-fit run
  (`Resumable.release`, `Resumable.hold`, which re-checks them), so the next update starts
  from the plan returned. `stats`: `local_nodes`, `local_gain`, `local_status`,
  `local_seconds`.
- *Anything else* (nodes, slices, allocated claims, bound pods, DeviceClasses...): the pods
  of the last plan whose pod and claims are unchanged and whose node is still there are
  kept, after the checker re-verified them on the nodes the change reaches (every node when
  it reaches all: `changes.Changes.everywhere`); a node whose pods no longer pass gives its
  pods back to the queue. The rest is planned by the pipeline on the cluster with the kept
  pods bound to their nodes (`pipeline.plan` with the chosen allocator): moved pods are
  never needed for that plan.
- *Moving for weight*: when the result is not proven optimal and the instance is small
  (pods x nodes at most `SMALL`), a fresh plan of the changed cluster runs too; it is taken
  whenever it places more weight (a guarantee of first fit's weight on small instances: its
  moves are neither minimized nor held to the local re-solve's rule, `moves.PRICE`), and its
  proven bound tightens the update's.

Bound and status (`docs/semantics.md`, "What a status proves", "Re-planning"): the bound of
an update is never the last plan's status carried over. It is the smallest of: the total
weight of the pods of the changed cluster; the last bound plus the weight of every pending pod
added or changed that may use some node, plus — when nodes changed — the weight of every
pod that may use one of them (any plan of the changed cluster, less its pods on changed
nodes and its new pods, is a plan of the last cluster; used only without gangs, without pods
the joint models judge strictly — `_chains` — and, when nodes changed, without slices that
have no node name); and a fresh plan's proven bound when one ran. OPTIMAL only when the
update's realized weight reaches that bound.

Checked (every plan returned passed the checker): a pods-only update checks what it changed,
and that is the verdict a full check of the plan would give. Its plan is the last plan (which
passed the full check — `pipeline.plan` verifies every plan it returns — or, inductively, this
argument) less the removed pods, plus the new placements. Rule by rule: a claim's allocation
against the slices, DeviceClasses and node it reads — unchanged for every kept claim, since
the path runs only when no node, slice, class or allocated claim changed (`_fast_applies`;
otherwise the general path re-checks the nodes reached, `_still_valid`), and checked for
every new claim as it is committed (`firstfit.engine._Placing._check`: the node's slices and every
claim holding a device in a pool that node sees — all the claims a device could be
double-booked with); removed claims only free devices; node resources — re-verified with
every pod on each node a pod arrived at (`update`), elsewhere pods only left; node filters
and reservations of the new pods (`planning.finish.per_pod`); a kept pod's claims still exist
(`apply_changes` refuses an update that removes a claim a remaining pod names); gangs — none
on this path. So every rule's verdict on a node, claim or pool the update did not touch is
its verdict on the last plan. `tests/test_planner_incremental.py` mutates both sides: a
corrupted new placement is refused by the update, a corrupted first plan by `plan()`. The
local re-solve's placements are checked by the pipeline's stages on the region's sub-cluster
(`aggregated.expansion.expand_aggregated` per node, `planning.finish.per_pod`), again per node when the
first-fit run records them (`Resumable.hold`), and with every pod of each node a pod arrived at
for node resources; a node given back its old pods holds what the last plan held there.

Determinism: every step is deterministic for the same calls and seed (first fit in queue
order, the pipeline's and the local re-solve's seeded CP-SAT with a deterministic time limit,
which no wall clock cuts short: docs/semantics.md, "Limits and determinism").
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..api.cluster import Cluster
from ..api.identity import identity
from ..api.models import Pod, ResourceClaim, ResourceClaimTemplate, ResourceSlice, TypeMeta
from ..cel import EvalCache
from ..check import PodPlacement, check, check_node_resources, check_placements
from ..errors import CelError, InputError
from ..pipeline import plan
from ..planners.aggregated.patterns import ModelMemo
from ..planners.bounds import verdict
from ..planners.firstfit.resumable import Resumable
from ..planners.firstfit.words import NodeReasons
from ..planners.run import fewer_collections
from ..planning.finish import per_pod, verify_resources, with_held
from ..planning.job import Options, Unit
from ..planning.outcome import (
    PlanOutcome,
    PodPlan,
    Stats,
    Verdict,
    proven,
    record,
)
from ..planning.resolve import (
    all_with_nodes,
    join_shared,
    make_job,
    resolve_nodes,
    resolve_units,
    with_nodes,
)
from ..planning.snapshot import Snapshot
from ..planning.triage import split_held, triaged
from ..problem.demand import Needs, demand_total
from ..problem.flat import claim_weight
from ..reasons import Kind, Reason
from .changes import Changes, Naming, Ref, apply_changes
from .local import Shape, region, resolve, shape_of

SMALL = 20_000
"""Pods x nodes up to which an update that is not proven optimal also runs a fresh plan of the
changed cluster (it may move pods when that places more weight, and it proves a bound)."""

Key = tuple[str, str]


def _retried(run: Resumable, unit: Unit, released: set[str | None]) -> PodPlan | None:
    """`run.place_on` of a pod the last plan left out, on the nodes released; None also when its
    claim meets a CEL runtime error again (the plan listed it with that error,
    `triage.held_for_cel_error`: the listing stays)."""
    try:
        return run.place_on(unit, released)
    except CelError:
        return None


def _planned(cluster: Cluster, options: Options) -> PlanOutcome:
    """`pipeline.plan` of `cluster` without the held pods it lists (`Cluster.held`): the
    planner's own state is the pods it plans; `plan()` and `update()` list the held ones."""
    outcome = plan(cluster, options=options)
    if not cluster.held:
        return outcome
    held = {h.name for h in [*cluster.held.values(), *cluster.held_claims.values()]}
    kept = [p for p in outcome.pods if p.name not in held]
    return replace(outcome, pods=kept) if len(kept) != len(outcome.pods) else outcome


class Planner:
    """A plan of `cluster` kept between calls: `plan()` plans it, `update(add, remove)`
    re-plans it after a change (module docstring). The cluster given is never modified;
    `planner.cluster` is the cluster after the updates so far, `planner.outcome` the last plan."""

    def __init__(self, cluster: Cluster, options: Options | None = None, **changes: Any) -> None:
        opts = Options.of(options, **changes)
        if opts.partitions != 1:
            raise InputError("Planner plans one model: partitions must be 1")
        if opts.cache is None:  # one CEL cache for every call (it never changes results)
            opts = Options.of(opts, cache=EvalCache())
        self._options = opts
        # The pods the scheduler skips (`planning.triage`) are held once, here: every plan and
        # update lists them (`with_held`) and plans only the rest.
        self._cluster = triaged(
            cluster, opts.feature_gates, ignore_scheduling_gates=opts.ignore_scheduling_gates
        )
        self._outcome: PlanOutcome | None = None
        self._bound = 0
        self._run: Resumable | None = None
        self._nodes: list[str] = []
        self._memo: dict[tuple[str, str | None], Reason | None] = {}
        """`pipeline.with_nodes`' refusals per (scheduling constraints, node), valid while no node changes."""
        self._units: dict[str, Unit] = {}
        """Units resolved for pods left out, by name (retried when room is released)."""
        self._strict: tuple[bool, bool, bool] | None = None
        self._strict_next: tuple[bool, bool, bool] | None = None
        self._naming: Naming | None = None
        """Which pods of `cluster` name which objects (`changes.Naming`), kept across updates."""
        self._shapes: dict[str, tuple[Pod | None, Shape]] = {}
        """Each pod's claim shape (`local.shape_of`), with the Pod it was read from."""
        self._models = ModelMemo()
        """The local re-solve's single-node answers (`patterns.ModelMemo`), valid while only
        pods change."""

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def outcome(self) -> PlanOutcome | None:
        return self._outcome

    @property
    def bound(self) -> int:
        """A valid upper bound of the weight of any plan of `cluster` (after `plan()`)."""
        return self._bound

    def plan(self) -> PlanOutcome:
        """A fresh plan of the cluster (`pipeline.plan` with the options), kept for `update`."""
        with fewer_collections():  # as a plan runs (`planners.run`), warming the updates too
            return self._plan()

    def _plan(self) -> PlanOutcome:
        started = time.perf_counter()
        # The plan's single-node answers (caps, device allocations) stay for the local re-solves
        # of the updates to come: their regions are nodes and pods of the same kinds.
        self._models = ModelMemo()
        outcome = _planned(self._cluster, Options.of(self._options, memo=self._models))
        total = _total(outcome.pods)
        bound = None if outcome.verdict is None else outcome.verdict.bound
        self._bound = min(bound, total) if bound is not None else total
        out = _finish(outcome, self._bound, {}, "fresh plan", started)
        self._keep(self._cluster, out)
        self._naming = Naming.of(self._cluster)
        self._strict = _strict_flags(self._cluster._identities.values())
        self._prepare(out)
        return with_held(out, split_held(self._cluster, None)[1])

    def _prepare(self, out: PlanOutcome) -> None:
        """Prepare a new first-fit run for the updates to come (`Resumable.warm`: answers per
        shape, the nodes that refuse each kind of pod left out, with its reasons), counted in
        `stats["warm_seconds"]`: done when the run is built (by `plan()`, or by an update
        that re-planned beyond pods), so that a pods-only update costs what it changes."""
        assert self._run is not None
        warmed = time.perf_counter()
        left = self._left_units(self._cluster, out.pods, set())
        shapes = self._run.warm((p.claims for p in out.pods), left)
        out.stats["warm_shapes"], out.stats["warm_seconds"] = shapes, round(time.perf_counter() - warmed, 3)

    def update(
        self, add: Iterable[TypeMeta | dict[str, Any]] = (), remove: Iterable[Ref] = ()
    ) -> PlanOutcome:
        """The plan of the cluster with `add` added and `remove` ((kind, namespace, name))
        removed. Raises InputError naming the object for a bad update, and then nothing
        changes (not the cluster, not the plan)."""
        if self._outcome is None:
            raise InputError("update before plan(): plan the cluster first")
        with fewer_collections():  # as a plan runs (`planners.run`): a cluster's heap is large
            return self._update(add, remove)

    def _update(self, add: Iterable[TypeMeta | dict[str, Any]], remove: Iterable[Ref]) -> PlanOutcome:
        started = time.perf_counter()
        changes = apply_changes(self._cluster, list(add), list(remove), self._naming)
        prev = self._outcome
        assert prev is not None  # `update` asked
        try:
            out = self._fast(changes, prev, started) if self._fast_applies(changes, prev) else None
            incremental = out is not None
            if out is None:
                out = self._slow(changes, prev, started)
            improved = self._improve(changes.cluster, prev, out, started)
            incremental &= improved.pods is out.pods  # the first-fit run holds `out`'s placements
            # Node resources where pods arrived (elsewhere pods only left, or the change's
            # nodes were re-checked with their kept pods: `_still_valid`).
            was = _nodes_of(prev)
            arrived = {p.node for p in improved.pods if p.placed and was.get(p.name, "\0") != p.node}
            verify_resources(
                _bound_on(changes.cluster, arrived),
                [p for p in improved.pods if p.placed and p.node in arrived],
                self._options.feature_gates,  # devices' node-allocatable amounts (KEP-5517)
            )
        except BaseException:
            self._run, self._units = None, {}  # they may hold part of this update: rebuilt
            raise
        self._keep(changes.cluster, improved, run=self._run if incremental else None)
        self._naming = changes.naming
        if not incremental:
            self._units = {}  # resolved on the last cluster and its nodes
            self._prepare(improved)
        improved = with_held(improved, split_held(self._cluster, None)[1])
        record(improved.stats, self._options.deadline)  # stats["cut_short_by_timeout"]: it fired
        return improved

    def _improve(self, after: Cluster, prev: PlanOutcome, out: PlanOutcome, started: float) -> PlanOutcome:
        """Moving for weight: an update not proven optimal on a small instance (pods x nodes at
        most SMALL) is compared with a fresh plan of the changed cluster, which is taken only
        when it places more weight; its proven bound tightens the update's either way."""
        size = len(out.pods) * max(1, len(resolve_nodes(after, None)))
        if proven(out) or size > SMALL:
            return out
        fresh = _planned(after, self._options)
        bound = _bound_of(out)
        fresh_bound = None if fresh.verdict is None else fresh.verdict.bound
        if fresh_bound is not None:
            bound = min(bound, fresh_bound)
        before = _nodes_of(prev)
        if fresh.weight > out.weight:
            stats: Stats = {"update": "a fresh plan, which places more weight (pods may move)"}
            return _finish(
                PlanOutcome(fresh.pods, out.allocator, stats), bound, before, "fresh plan", started
            )
        return _finish(out, bound, before, _told(out).bound_from, started)

    # --- state ------------------------------------------------------------------------------

    def _keep(self, cluster: Cluster, outcome: PlanOutcome, run: Resumable | None = None) -> None:
        """Make `outcome` the plan of `cluster`, and the first-fit run its state (`run`: one
        that is in that state already, else a new one on the cluster with the plan bound)."""
        if cluster is not self._cluster:
            self._strict = self._strict_next if self._strict_next is not None else None
        self._strict_next = None
        self._cluster, self._outcome = cluster, outcome
        self._bound = _bound_of(outcome)
        self._nodes = resolve_nodes(cluster, None)
        if run is None:
            pinned = _pinned(cluster, [p for p in outcome.pods if p.placed])
            run = Resumable(make_job(pinned, (), self._nodes, self._options))
        self._run = run

    # --- pods only ----------------------------------------------------------------------------

    def _fast_applies(self, changes: Changes, prev: PlanOutcome) -> bool:
        """Whether the change is pending pods (and their unallocated claims) only, on a plan
        of Pods without gangs or DRA-served extended resources."""
        after = changes.cluster
        if changes.everywhere or changes.nodes or self._run is None:
            return False
        if after.pod_groups or not after.pods:
            return False
        by_name = {p.name: p for p in prev.pods}
        return not any(p.extended for p in prev.pods if p.placed) and all(
            f"{ns}/{n}" not in by_name or by_name[f"{ns}/{n}"].pod is not None for ns, n in changes.pods
        )

    def _fast(self, changes: Changes, prev: PlanOutcome, started: float) -> PlanOutcome | None:
        after, gates = changes.cluster, self._options.feature_gates
        run = self._run
        assert run is not None
        by_name = {p.name: p for p in prev.pods}
        touched = {f"{ns}/{n}" for ns, n in changes.pods}
        present = [f"{ns}/{n}" for (ns, n) in after.pods if f"{ns}/{n}" in touched]
        units = join_shared(resolve_units(after, present, None, gates)) if present else []
        known = self._cluster.claims
        if any(len(u.members) > 1 or any(c.key in known for c in u.claims) for u in units):
            return None  # a pod sharing a claim with another (or may: the claim is not new): the general path
        for name in touched:
            self._shapes.pop(name, None)
        released: set[str | None] = set()
        for name in sorted(touched & by_name.keys()):
            was = by_name[name]
            if was.placed and was.pod is not None:
                run.release(was.claims, was.node, Needs.of(was.pod).demand)
                released.add(was.node)
        nodes: list[str | None] = list(self._nodes)
        units = all_with_nodes(after, units, nodes, self._memo, gates)
        # The pods the last plan left out are tried on the released nodes only
        # (`Resumable.place_on`): nothing was freed elsewhere. After first fit they fit
        # nowhere else; a CP-SAT plan that was not proven may have left room it did not use.
        retry = self._left_units(after, prev.pods, touched) if released else []
        queue = units + retry
        # The scheduler's queue: higher priority first, then the order of the cluster's pods
        # (the pods left out before the pods added), as a fresh first fit would take them.
        at = {f"{ns}/{n}": i for i, (ns, n) in enumerate(after.pods)}
        first = [min(at.get(m.name, len(at)) for m in u.members) if u.members else len(at) for u in queue]
        order = sorted(range(len(queue)), key=lambda i: (-queue[i].priority, first[i]))
        plans: dict[int, PodPlan] = {}
        for i in order:
            if i < len(units):
                plans[i] = run.place(queue[i])
            elif (got := _retried(run, queue[i], released)) is not None:
                plans[i] = got
        done_units = [queue[i] for i in sorted(plans)]
        done_plans = [plans[i] for i in sorted(plans)]
        done = per_pod(after, done_units, PlanOutcome(done_plans, "reference"), gates)
        new = {p.name: p for p in done.pods}
        for u in done_units:
            self._units.pop(u.name, None)
        pods = _in_order(after, by_name, new, touched)
        may = sum(u.weight for u in units if any(n not in u.blocked for n in nodes))
        bound = min(self._bound + may, _total(pods)) if self._chains(changes) else _total(pods)
        stats: Stats = {
            "update": "pods only: released, then first fit on what is free",
            "retried": len(retry),
        }
        if sum(_weight(p) for p in pods if p.placed) < bound:
            seeds = released | {p.node for p in done.pods if p.placed}
            waiting = [p for p in (new.get(u.name) for u in units) if p is not None and not p.placed]
            last = {n for n, p in by_name.items() if p.placed and n not in touched}
            pods = self._local(after, pods, seeds, _queue(waiting), last, stats)
        if self._options.allocator != "reference":  # first fit's words depend on the queue too
            _worded_as_before(pods, units, self._units)
        before = _nodes_of(prev)
        return _finish(PlanOutcome(pods, self._options.allocator, stats), bound, before, "pods only", started)

    def _local(
        self,
        after: Cluster,
        pods: list[PodPlan],
        seeds: set[str | None],
        waiting: Sequence[PodPlan],
        last: set[str],
        stats: Stats,
    ) -> list[PodPlan]:
        """The local re-solve (`local.resolve`) of the nodes the update reached, after first
        fit: its plan of those nodes' pods when it places more weight, recorded in the
        first-fit run (the pods it changed released, their new claims held), so that the run
        stays in the state of the plan returned. Only with the CP-SAT allocator (first fit
        re-solving its own placements gains nothing) and without slices lacking a node name
        (the region is then independent of the nodes outside it but for the claims in use)."""
        if self._options.allocator == "reference" or any(not s.spec.node_name for s in after.slices):
            return pods
        solved = time.perf_counter()
        area = region(pods, seeds, waiting, self._nodes)
        queue = _queue([p for p in pods if not p.placed and p.pod is not None])
        got = resolve(after, pods, area, queue, self._shape, self._options, self._models, last)
        stats["local_nodes"] = len(area)
        stats["local_seconds"] = round(time.perf_counter() - solved, 3)
        if got is None or not got.pods:
            stats["local_gain"] = 0
            if got is not None:
                stats["local_status"] = got.status
            return pods
        run = self._run
        assert run is not None
        was = {p.name: p for p in pods}
        for name in sorted(got.pods):
            old = was[name]
            if old.placed and old.pod is not None:
                run.release(old.claims, old.node, Needs.of(old.pod).demand)
        for name in sorted(got.pods):
            q = got.pods[name]
            if q.placed and q.pod is not None:
                run.hold(q.claims, q.node, Needs.of(q.pod).demand)
                self._units.pop(name, None)
        stats["local_gain"], stats["local_status"] = got.gain, got.status
        stats["local_changed"] = len(got.pods)
        return [got.pods.get(p.name, p) for p in pods]

    def _shape(self, p: PodPlan) -> Shape:
        """The pod's claim shape (`local.shape_of`), kept per pod object between updates."""
        known = self._shapes.get(p.name)
        if known is None or known[0] is not p.pod:
            known = self._shapes[p.name] = (p.pod, shape_of(p.claims))
        return known[1]

    def _left_units(self, after: Cluster, pods: Sequence[PodPlan], touched: set[str]) -> list[Unit]:
        """The units of the pods in `pods` that were left out and that the update does not
        touch, in their order, each with the nodes it may not use (all nodes: valid while no
        node changes, as the pods-only path requires). Kept in `_units` between updates, so a
        pod is resolved once, not per update."""
        gates = self._options.feature_gates
        for name, u in list(self._units.items()):
            if any(m.name in touched for m in u.members):
                del self._units[name]
        unit_of = {m.name: u for u in self._units.values() for m in u.members}
        left = [p.name for p in pods if not p.placed and p.pod is not None and p.name not in touched]
        missing = [n for n in left if n not in unit_of]
        if missing:
            nodes: list[str | None] = list(self._nodes)
            more = all_with_nodes(
                after, join_shared(resolve_units(after, missing, None, gates)), nodes, self._memo, gates
            )
            for u in more:
                self._units[u.name] = u
                unit_of.update((m.name, u) for m in u.members)
        waiting = set(left)
        out: list[Unit] = []
        seen: set[str] = set()
        for name in left:
            u = unit_of[name]
            if u.name not in seen and all(m.name in waiting for m in u.members):
                seen.add(u.name)
                out.append(u)
        return out

    # --- everything else ----------------------------------------------------------------------

    def _slow(self, changes: Changes, prev: PlanOutcome, started: float) -> PlanOutcome:
        after, opts = changes.cluster, self._options
        self._units, self._shapes, self._models = {}, {}, ModelMemo()
        if changes.nodes or changes.everywhere:
            self._memo = {}
        nodes = set(resolve_nodes(after, None))
        touched = {f"{ns}/{n}" for ns, n in changes.pods}
        changed = {identity(o) for o in (*changes.added, *changes.removed)}

        def same(p: PodPlan) -> bool:
            """The pod (or, for a pod of plain claims, each claim) is the one the last plan placed."""
            if p.pod is not None:
                return p.name not in touched and after.pods.get(p.pod.key) is p.pod
            return all(c.key in after.claims and identity(c) not in changed for c in p.claims)

        kept = [p for p in prev.pods if p.placed and p.node in nodes and same(p)]
        reach = nodes if changes.everywhere else changes.nodes
        kept = _still_valid(after, kept, reach, opts)
        pinned = _pinned(after, kept)
        kept_names = {p.name for p in kept}
        sub = _planned(pinned, opts) if _has_pending(after, kept_names) else None
        new = {p.name: p for p in sub.pods} if sub is not None else {}
        by_name = {p.name: p for p in prev.pods}
        pods = _in_order(after, {n: p for n, p in by_name.items() if n in kept_names}, new, set())
        bound = self._slow_bound(changes, prev, pods, sub)
        stats: Stats = {"update": f"re-planned around {len(kept)} kept pods"}
        if sub is not None:
            stats["replanned"] = len(sub.pods)
        return _finish(PlanOutcome(pods, opts.allocator, stats), bound, _nodes_of(prev), "kept", started)

    def _chains(self, changes: Changes) -> bool:
        """Whether the last bound may be chained (module docstring): no pod the joint models
        judge more strictly than upstream (`bounds.sequential_units`: adminAccess, or All
        with a multi-allocatable device) exists before or after — dropping other pods from a
        plan leaves such a pod's allocation valid only for exclusive devices. Kept per cluster
        (`_strict`): added objects can only add such pods; removals are not credited."""
        if self._strict is None:
            self._strict = _strict_flags(self._cluster._identities.values())
        admin, all_mode, multi = self._strict
        more = _strict_flags(changes.added)
        self._strict_next = (admin or more[0], all_mode or more[1], multi or more[2])
        admin, all_mode, multi = self._strict_next
        return not admin and not (all_mode and multi)

    def _slow_bound(
        self, changes: Changes, prev: PlanOutcome, pods: Sequence[PodPlan], sub: PlanOutcome | None
    ) -> int:
        """The update's bound before any fresh plan: the chain bound of the module docstring
        where it is valid, else the pods' total weight."""
        total = _total(pods)
        before, after = self._cluster, changes.cluster
        if changes.everywhere or any(not s.spec.node_name for c in (before, after) for s in c.slices):
            return total
        if before.pod_groups or after.pod_groups or not self._chains(changes):
            return total
        gates = self._options.feature_gates
        nodes: list[str | None] = list(resolve_nodes(after, None))
        units = [
            with_nodes(after, u, nodes, {}, gates)
            for u in join_shared(resolve_units(after, None, None, gates))
        ]
        touched = {f"{ns}/{n}" for ns, n in changes.pods}
        reach = changes.nodes
        extra = 0
        for u in units:
            free = [n for n in nodes if n not in u.blocked]
            if not free:
                continue
            if any(m.name in touched for m in u.members) or any(n in reach for n in free):
                extra += u.weight
        return min(self._bound + extra, total)


# --- helpers --------------------------------------------------------------------------------


def _strict_flags(objects: Iterable[TypeMeta]) -> tuple[bool, bool, bool]:
    """(a request with adminAccess, a request in allocationMode All, a multi-allocatable device)
    among `objects` (claims, templates, slices)."""
    admin = all_mode = multi = False
    for obj in objects:
        if isinstance(obj, ResourceSlice):
            multi = multi or any(d.allow_multiple_allocations for d in obj.spec.devices)
            continue
        if isinstance(obj, ResourceClaim):
            requests = obj.spec.devices.requests
        elif isinstance(obj, ResourceClaimTemplate):
            requests = obj.spec.spec.devices.requests
        else:
            continue
        for r in requests:
            options = [r.exactly] if r.exactly is not None else list(r.first_available or ())
            admin = admin or any(bool(getattr(o, "admin_access", False)) for o in options)
            all_mode = all_mode or any(o.allocation_mode == "All" for o in options)
    return admin, all_mode, multi


def _queue(pods: Sequence[PodPlan]) -> list[PodPlan]:
    """`pods` (in the cluster's order) in the scheduler's queue order: priority first."""
    return sorted(pods, key=lambda p: -p.priority)


def _total(pods: Sequence[PodPlan]) -> int:
    """The weight of every pod placed: a bound of any plan of them."""
    return sum(_weight(p) for p in pods)


def _weight(p: PodPlan) -> int:
    return claim_weight(p.priority)


def _nodes_of(outcome: PlanOutcome) -> dict[str, str | None]:
    return {p.name: p.node for p in outcome.pods if p.placed}


def _told(outcome: PlanOutcome) -> Verdict:
    """The verdict of a plan `_finish` returned (it always has one)."""
    if outcome.verdict is None:
        raise ValueError("an update's plan without a verdict")
    return outcome.verdict


def _bound_of(outcome: PlanOutcome) -> int:
    """The bound of a plan `_finish` returned (its verdict's: the update's bound)."""
    bound = _told(outcome).bound
    if bound is None:
        raise ValueError("an update's plan without a bound")
    return bound


def _finish(
    outcome: PlanOutcome, bound: int, before: Mapping[str, str | None], how: str, started: float
) -> PlanOutcome:
    """The outcome with the update's verdict: its bound and status (OPTIMAL only
    when the weight reaches the bound; a bound below the plan was none: the total weight then,
    never raised to meet the plan), and `moved`: pods placed in both plans on other nodes."""
    weight = outcome.weight
    total = _total(outcome.pods)
    told = verdict(
        weight, bound, how, beaten=(total, f"pods that may be placed ({how}: the bound {bound} was beaten)")
    )
    moved = sum(1 for p in outcome.pods if p.placed and p.name in before and before[p.name] != p.node)
    stats: Stats = {
        **outcome.stats,
        "moved": moved,
        "update_seconds": round(time.perf_counter() - started, 3),
    }
    return PlanOutcome(
        outcome.pods, outcome.allocator, stats, outcome.added_nodes, outcome.added_slices, told
    )


def _worded_as_before(pods: Sequence[PodPlan], added: Sequence[Unit], left: Mapping[str, Unit]) -> None:
    """The added pods first fit leaves out (`Kind.NO_NODE`) worded as an identical pod the
    plan left out is (`left`: the units of those pods): its reason (the plan's crowding,
    `planners.crowding`) with their own claim names. Why: `plan --watch` groups the pods left
    out by their reasons, and identical pods worded two ways (first fit's per-node words, the
    plan's "fits on n1 alone, but ...") read as two causes. Identical: the same claim specs,
    refused nodes, node-resource demand and priority — what decides the crowding's words up
    to the claim names under CP-SAT (`Solo.key`; not under first fit, whose words also name
    the pods ahead in its queue: the caller asks only under CP-SAT). A pod no identical pod
    precedes keeps first fit's words; so does one whose twin's words name claims of a node's
    own (`_claims_by_node`), as another pod's claims cannot be put in there."""
    by_name = {p.name: p for p in pods}
    words: dict[Hashable, PodPlan] = {}
    for name, u in left.items():
        p = by_name.get(name)
        if p is not None and not p.placed and p.why is not None and p.why.is_(Kind.CROWDED):
            if p.why.texts("claims") and len(u.members) <= 1:
                words.setdefault(_twin_key(u), p)
    if not words:
        return
    for u in added:
        p = by_name.get(u.name)
        twin = words.get(_twin_key(u)) if p is not None and p.is_(Kind.NO_NODE) else None
        if p is None or twin is None or twin.why is None or _claims_by_node(twin):
            continue
        refs = [c.namespaced_name for c in u.claims]
        p.because(twin.why.about(u.name, claims=tuple(refs)))
        if isinstance(twin.node_reasons, NodeReasons):
            p.node_reasons = twin.node_reasons.of_claims(refs)


def _claims_by_node(p: PodPlan) -> bool:
    """Whether `p`'s reasons name claims of some node's own (`Kind.WITH_CLAIMS`: a special claim
    for DRA-served extended resources), which another pod's claim refs do not replace."""
    whys = p.node_reasons.whys if isinstance(p.node_reasons, NodeReasons) else {}
    return any(w.is_(Kind.WITH_CLAIMS) for w in whys.values())


def _twin_key(u: Unit) -> Hashable:
    """What makes two pods identical for the words of `_worded_as_before`."""
    specs = tuple((c.metadata.ns, json.dumps(c.spec.dump(), sort_keys=True, default=str)) for c in u.claims)
    return specs, frozenset(u.blocked.items()), tuple(sorted(demand_total(u.needs).items())), u.priority


def _in_order(
    after: Cluster, kept: Mapping[str, PodPlan], new: Mapping[str, PodPlan], touched: set[str]
) -> list[PodPlan]:
    """The plan's pods in the cluster's order: a re-planned pod's new PodPlan, else the kept one
    (touched pods never keep theirs)."""
    out: list[PodPlan] = []
    seen: set[str] = set()
    names = [f"{ns}/{n}" for (ns, n) in after.pods] or [*kept, *new]
    for name in names:
        if name in new:
            out.append(new[name])
        elif name in kept and name not in touched:
            out.append(kept[name])
        else:
            continue
        seen.add(name)
    for name, p in new.items():  # pods of plain claims
        if name not in seen:
            out.append(p)
    return out


def _pinned(cluster: Cluster, placed: Sequence[PodPlan]) -> Cluster:
    """`cluster` with the `placed` pods bound to their nodes and their claims allocated, as
    the cluster after the plan has them (`planning.snapshot`): what every later plan must
    leave in place."""
    after = Snapshot(cluster)
    after.place_all(placed)
    return after.cluster


def _bound_on(cluster: Cluster, nodes: set[str | None]) -> Cluster:
    """`cluster` with only its pods bound to one of `nodes`: what the node-resource check of
    those nodes reads (`check.check_node_resources` counts bound pods per node), without
    reading every other pod."""
    pods = {k: p for k, p in cluster.pods.items() if p.spec.node_name and p.spec.node_name in nodes}
    return replace(cluster, pods=pods, _identities={})


def _has_pending(after: Cluster, kept: set[str]) -> bool:
    """Whether anything may be left to plan around the kept pods."""
    return not after.pods or any(f"{ns}/{n}" not in kept for ns, n in after.pods)


def _still_valid(after: Cluster, kept: list[PodPlan], reach: Iterable[str], opts: Options) -> list[PodPlan]:
    """The kept pods, less those on a node the change reaches where the checker rejects them
    now (devices, node filters, node resources): such a node's pods are planned again."""
    reach = set(reach)
    on: dict[str, list[PodPlan]] = {}
    for p in kept:
        if p.node in reach:
            on.setdefault(p.node or "", []).append(p)
    if not on:
        return kept
    gates = opts.feature_gates
    stay = [p for p in kept if p.node not in on]
    after_kept = Snapshot(after)  # the nodes checked so far join it as they pass
    after_kept.place_all(stay)
    pinned = after_kept.cluster
    bad: set[str] = set()
    for node in sorted(on):
        pods = on[node]
        claims = [c for p in pods for c in p.claims]
        placed = [PodPlacement(p.pod, node, new=True, extended=p.extended.get(p.name)) for p in pods if p.pod]
        overlay = {c.namespaced_name: c for p in pods for c in (*p.claims, *p.reserved)}
        wrong = (
            check(pinned, claims, node=node, gates=gates)
            or check_placements(pinned, placed, overlay, gates, bound=False)
            or check_node_resources(pinned, [(q.pod, node, frozenset()) for q in placed])
        )
        if wrong:
            bad.add(node)
        else:
            after_kept.place_all(pods)
    return [p for p in kept if p.node not in bad]


__all__ = ["SMALL", "Planner"]
