"""Incremental first fit: the scheduler's pod-after-pod plan without rebuilding the world per pod.

Why: first fit is the reference answer, the floor of every other allocator and the hint of
CP-SAT, and it ran at 8 pods/s because every (pod, node) try re-read every slice and claim of
the cluster (`build_problem`) and every placement re-checked against the whole cluster. Its
decisions are cheap to reuse, because they depend on far less than the whole cluster:

- what a node sees (its pools, devices, CEL views) never changes during a plan, so it is
  gathered once per node (`NodeState`), from the slices that can matter to that node only
  (its own, the ones without a node name, and the rest of their pools);
- what is in use changes only where a pod is placed: every placement bumps the `version` of
  the nodes that see one of the pools it took devices from (node-local pools: that node);
- the answer of the reference search for one pod on one node depends on the pod's claim specs
  (its *shape*: requests, selectors, constraints, classes) and the node's state, not on the
  claims' names; so it is computed once per (shape, node, version) and reused by every pod of
  that shape, and a pod scans only from the first node its shape has not already failed on;
- the checker runs on the node's slices and the claims holding devices in its pools, which is
  everything `solver.check` reads for that node (the check stays the independent one);
- a count pre-filter (a request needs more distinct devices than the node has free) skips a
  node without building its Problem, as the scheduler's PreFilter/Filter skip nodes.

Whether a pod may use a node at all — its scheduling constraints, then the node resources it
needs there and the extended resources DRA serves there (`solver.demand`) — is decided in one
place, `_Placing.may_try`, before any device work.

The decisions are exactly those of the per-pod path (`build_problem` + `allocate_reference` on
the cluster with every earlier placement): same node, same devices, same shareIDs, same
per-node reasons; `tests/test_firstfit.py` compares the two on generated clusters.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from . import interrupt
from .api.cluster import Cluster
from .api.models import ResourceClaim, ResourceSlice
from .check import check, check_or_raise
from .demand import Needs, NodeBook, Variant, demand_total
from .errors import DRASolverError, InvalidPools, SearchAborted
from .explain.reasons import explain_unschedulable
from .inventory import (
    DeviceID,
    InUse,
    NodeView,
    PoolID,
    Pools,
    gather_pools,
    in_use_from_claims,
    selector_reads,
    visible_devices,
)
from .planning.gangs import domain_choices, gang_counts, in_domain, no_domain, short_gangs
from .planning.job import INTERRUPTED, Job, PlanOutcome, PodPlan, Progress, Unit
from .planning.ledger import Ledger
from .problem.build import build_problem, problem_from_context
from .problem.devices import BuildContext, DeviceMemo, context_from, refresh_context
from .problem.flat import Assignment, Problem
from .problem.resources import Amounts, take
from .reference import DEFAULT_MAX_STEPS, allocate_reference

ClaimKey = tuple[str, str]
ShapeKey = tuple[tuple[str, str], ...]
"""Per claim of a pod, in order: (namespace, the claim spec as canonical JSON)."""
_Key = tuple[ShapeKey, frozenset[tuple[str | None, str]], tuple[tuple[str, int], ...]]
"""(shape, refused nodes, node-resource demand): pods of one key get the same answers."""


@dataclass(frozen=True)
class _Open:
    """`Resumable`: at change `at` of the run's log, the nodes (indices) not known to refuse a
    pod of one key; every other node refused one then."""

    at: int
    nodes: tuple[int, ...]


DETAIL_NODES = 4
"""Up to this many candidate nodes, an unplaced pod's reason names every node's reason; above
it, the reason is one line of counts by reason (the per-node detail is `PodPlan.node_reasons`)."""

_CLAIM = "\x00claim{}\x00"
_NODE = "\x00node\x00"
"""Placeholders for names in a reason computed once per (shape, node, version)."""


@dataclass(eq=False)
class World:
    """What every node of a group sees alike during a first-fit run: the same pools, devices
    and node facts precompute reads (`_Placing._world_key`), so one context, one in-use
    count and one answer per claim shape serve them all. A node with slices of its own is a
    world alone; nodes that see only network-attached pools (nodeSelector, allNodes) and
    agree on the labels those slices select by are one world. Why: with pools every node
    sees, a placement changes what every node sees, and per-node copies made a plan cost
    pods x nodes x devices (issue #40)."""

    index: int
    pools: Pools
    slices: list[ResourceSlice]
    """The slices that can matter to its nodes: their own, those without a node name, and
    every slice of their pools (completeness is counted over a whole pool)."""
    pool_ids: frozenset[PoolID]
    """The pools of `slices`: a placement in one of them may change the world's answers."""
    devices: tuple[DeviceID, ...]
    """The devices its nodes see (of its valid pools), as precompute lists them."""
    nodes: list[int] = field(default_factory=list)
    """Its nodes' indices, in node order."""
    free: int = 0
    """How many of `devices` no claim holds as dedicated: the pre-filter's count."""
    version: int = 0
    memo: DeviceMemo = field(default_factory=DeviceMemo)
    """The static part of the world's contexts (`problem.devices.DeviceMemo`)."""
    _context: tuple[int, BuildContext] | None = None
    _stale: set[PoolID] | None = field(default_factory=set)
    """Pools whose use changed since `_context` was counted (None: every pool)."""
    problems: dict[ShapeKey, tuple[int, Problem, _Sensitive]] = field(default_factory=dict)
    """Per claim shape, its last Problem here and the version it was built at: after
    placements in pools its candidates do not depend on, it is refreshed, not rebuilt."""
    changed_at: dict[PoolID, int] = field(default_factory=dict)
    """Pool -> the version at which its use last changed (`touch`)."""

    def touch(self, pools: Iterable[PoolID] | None) -> None:
        """What is in use changed in `pools` (None: anywhere): a new version."""
        self.version += 1
        if pools is None:
            self._stale = None
            self.problems.clear()
            return
        for pid in pools:
            self.changed_at[pid] = self.version
            if self._stale is not None:
                self._stale.add(pid)

    def context(self, run: _Placing, view: NodeView | None) -> BuildContext:
        """Precompute's BuildContext at the world's current version: counted again only in the
        pools whose use changed (`problem.devices.refresh_context`)."""
        if self._context is None or self._stale is None:
            ctx = context_from(
                run.cluster, view, self.pools, run.in_use, run.job.gates, run.job.cache, self.memo
            )
            self._context, self._stale = (self.version, ctx), set()
        elif self._context[0] != self.version:
            ctx = self._context[1]
            ctx.in_use = run.in_use
            refresh_context(ctx, self._stale, self.memo)
            self._context, self._stale = (self.version, ctx), set()
        return self._context[1]

    def problem(
        self, run: _Placing, view: NodeView | None, claims: Sequence[ResourceClaim], shape: ShapeKey
    ) -> Problem:
        """The Problem of `claims` (of `shape`) here now: the last one of the shape with the
        devices and counters counted anew when no pool whose use changed since holds a
        candidate whose static checks read that use (`_Sensitive`), else built again."""
        ctx = self.context(run, view)
        kept = self.problems.get(shape)
        if kept is not None:
            at, problem, sensitive = kept
            if at == self.version:
                return problem
            if not sensitive.all_mode and not any(
                self.changed_at.get(pid, 0) > at for pid in sensitive.pools
            ):
                problem = replace(problem, devices=tuple(ctx.devices), counters=tuple(ctx.counters))
                self.problems[shape] = (self.version, problem, sensitive)
                return problem
        problem = problem_from_context(ctx, claims)
        if any(c.error is not None for a in problem.alternatives for c in a.candidates):
            self.problems.pop(shape, None)  # a CEL error names the claim: not for other claims
        else:
            self.problems[shape] = (self.version, problem, _Sensitive.of(problem))
        return problem


@dataclass(frozen=True)
class _Sensitive:
    """What of a Problem's candidate lists depends on what is in use (`problem.requests`): an
    alternative in allocationMode All (busy devices block it) and multi-allocatable devices
    (their capacity left decides whether they are candidates), by pool — every such device
    the node sees, a candidate now or not (a release may make one a candidate again).
    Everything else of a candidate list is static."""

    all_mode: bool
    pools: frozenset[PoolID]

    @classmethod
    def of(cls, problem: Problem) -> _Sensitive:
        pools = frozenset((d.driver, d.pool) for d in problem.devices if d.multi)
        return cls(any(a.mode == "All" for a in problem.alternatives), pools)


@dataclass(eq=False)
class NodeState:
    """One candidate node during a first-fit run: its name and view, and its world (what it
    sees, gathered once, shared with the nodes that see the same)."""

    index: int
    name: str | None
    view: NodeView | None
    world: World

    @property
    def pools(self) -> Pools:
        return self.world.pools

    @property
    def slices(self) -> list[ResourceSlice]:
        return self.world.slices

    @property
    def pool_ids(self) -> frozenset[PoolID]:
        return self.world.pool_ids

    @property
    def devices(self) -> tuple[DeviceID, ...]:
        return self.world.devices

    @property
    def free(self) -> int:
        return self.world.free

    @property
    def version(self) -> int:
        return self.world.version

    def context(self, run: _Placing) -> BuildContext:
        """Precompute's BuildContext of this node at its current version."""
        return self.world.context(run, self.view)


@dataclass
class Answer:
    """The reference search for one shape on one node at one version. `problem` carries the
    claim names of the pod that asked first; other pods of the shape rename it (`_named`)."""

    version: int
    names: tuple[ClaimKey, ...]
    problem: Problem
    assignment: Assignment | None
    failure: DRASolverError | None = None
    """InvalidPools / SearchAborted (below the full budget): no fit, with upstream's per-node error."""
    shareable: bool = True
    """False when a candidate carries a CEL error: its message names the claim, so the answer
    is not reused for other claims."""
    invalid_helps: bool = True
    """With InvalidPools: whether the invalid pools' devices would make the claims fit. When
    they would not (an invalid pool of another driver), the reason is the real shortage, with
    the invalid pools beside it, not upstream's error alone."""
    _reason: str | None = None
    _candidates: frozenset[DeviceID] | None = None
    texts: tuple[str | None, str, str] | None = None
    """(node, its text, its template) as `_node_texts` words the reason (claim refs as
    placeholders): an unchanged answer is worded once, however often a full cluster is
    reported pod after pod."""

    def candidate_devices(self) -> frozenset[DeviceID]:
        """The devices some request of the Problem may use (kept: the nodes of a world share
        one answer, and with it this set)."""
        if self._candidates is None:
            problem = self.problem
            self._candidates = frozenset(
                (d.driver, d.pool, d.name)
                for alt in problem.alternatives
                for c in alt.candidates
                for d in (problem.devices[c.device],)
            )
        return self._candidates

    def final(self) -> bool:
        """No allocation, found by a search that tried every one the node offered: no step
        budget cut it short (SearchAborted) and no candidate carries a CEL error (which the
        search raises when it reaches it, so it may end a later search differently)."""
        return self.assignment is None and self.shareable and not isinstance(self.failure, SearchAborted)

    def reason(self) -> str:
        """Why the shape does not fit, with placeholders for claim refs and the node name
        (computed on first use: only unplaced pods need it)."""
        if self._reason is None:
            if self.failure is not None and (
                self.invalid_helps or not isinstance(self.failure, InvalidPools)
            ):
                self._reason = str(self.failure)
            else:
                claims = tuple(
                    replace(c, namespace="", name=_CLAIM.format(i)) for i, c in enumerate(self.problem.claims)
                )
                node = _NODE if self.problem.node is not None else None
                self._reason = explain_unschedulable(replace(self.problem, claims=claims, node=node))
        return self._reason


@dataclass
class _Tried:
    """One node an unplaced pod could not use: blocked (a reason) or an Answer."""

    node: NodeState
    blocked: str | None = None
    answer: Answer | None = None
    refs: list[str] | None = None
    """The claim refs to put into the answer's reason now (claims that differ by node); None:
    later, per pod (`NodeReasons`)."""


@dataclass
class _Placing:
    """The state of one first-fit run over `job`: nodes, what is in use, cached answers."""

    job: Job
    ledger: Ledger
    max_steps: int
    cluster: Cluster = field(init=False)
    book: NodeBook = field(init=False)
    in_use: InUse = field(init=False)
    nodes: list[NodeState] = field(init=False)
    answers: dict[tuple[ShapeKey, int], Answer] = field(default_factory=dict)
    """(shape, world) -> the reference search's answer there at the world's version then."""
    floors: dict[ShapeKey, tuple[int, int]] = field(default_factory=dict)
    """Shape -> (first node not known to fail for it, len(changes) when that was known)."""
    changes: list[int] = field(default_factory=list)
    """Indices of nodes whose version changed, in order: lowers the floors lazily."""
    gone: dict[ShapeKey, dict[int, int]] = field(default_factory=dict)
    """Shape -> nodes it can no longer fit on, each pointing to a later node that may still
    take it (`next_try`, `fails_for_good`). Valid while the run only takes (`_takes_only`)."""
    nowhere: dict[
        tuple[ShapeKey, frozenset[tuple[str | None, str]], tuple[tuple[str, int], ...]],
        tuple[int, _Nowhere, list[_Tried]],
    ] = field(default_factory=dict)
    """(shape, blocked nodes, node-resource demand) -> (len(changes) then, why no node took it,
    each node's try): reused until a change, then only the changed nodes are tried again."""

    def __post_init__(self) -> None:
        self.cluster = self.job.cluster
        self.book = self.job.book.fresh()
        allocated = [c for c in self.cluster.claims.values() if c.status is not None and c.status.allocation]
        self.in_use = in_use_from_claims(allocated, self.job.gates)
        self._allocated: set[ClaimKey] = {c.key for c in allocated}
        self._holders: dict[PoolID, dict[ClaimKey, ResourceClaim]] = {}
        for c in allocated:
            self._hold(c)
        self._index_slices()
        self.worlds: list[World] = []
        self._world_of: dict[Hashable, World] = {}
        self.nodes = [self._node_state(i, n) for i, n in enumerate(self.job.nodes)]
        self._by_pool: dict[PoolID, list[World]] = {}
        self._seen_by: dict[DeviceID, list[World]] = {}
        for world in self.worlds:
            for pid in world.pool_ids:
                self._by_pool.setdefault(pid, []).append(world)
            for dev in world.devices:
                self._seen_by.setdefault(dev, []).append(world)
        self._count_free()
        self._needs: dict[ShapeKey, int] = {}
        self._clean: set[tuple[ShapeKey, int]] = set()
        """(shape, world) whose Problem had no CEL error on any candidate when it was built."""
        self._taken = 0
        """len(changes) after the last placement, when every change before it was a placement."""

    # --- what each node sees ----------------------------------------------------------------

    def _index_slices(self) -> None:
        self._common: list[int] = []
        self._own: dict[str, list[int]] = {}
        self._pool_slices: dict[PoolID, list[int]] = {}
        for i, s in enumerate(self.cluster.slices):
            if s.spec.node_name is None:
                self._common.append(i)
            else:
                self._own.setdefault(s.spec.node_name, []).append(i)
            self._pool_slices.setdefault((s.spec.driver, s.spec.pool.name), []).append(i)
        self._reads = selector_reads([self.cluster.slices[i] for i in self._common])

    def _node_state(self, index: int, name: str | None) -> NodeState:
        view = NodeView.of(name, self.cluster.nodes)
        key = self._world_key(name, view)
        world = self._world_of.get(key) if key is not None else None
        if world is None:
            near = self._common + (self._own.get(name, []) if name is not None else [])
            pool_ids = frozenset(
                (self.cluster.slices[i].spec.driver, self.cluster.slices[i].spec.pool.name) for i in near
            )
            chosen = sorted({i for pid in pool_ids for i in self._pool_slices[pid]})
            slices = [self.cluster.slices[i] for i in chosen]
            pools = gather_pools(slices, view, self.job.gates)
            devices = tuple(
                (pool.driver, pool.name, d.name)
                for pool in pools.valid()
                for _, d in visible_devices(pool, view)
            )
            world = World(len(self.worlds), pools, slices, pool_ids, devices)
            self.worlds.append(world)
            if key is not None:
                self._world_of[key] = world
        world.nodes.append(index)
        return NodeState(index, name, view, world)

    def _world_key(self, name: str | None, view: NodeView | None) -> Hashable | None:
        """What precompute reads of a node that has no slice of its own: the labels the
        network-attached slices select by (`inventory.selector_reads`), and its name where a slice
        selects by name or words a rejection with it (skipNodeOperations). Nodes with equal
        keys see the same pools and devices and get the same Problems up to the node's name
        (which the reasons hold as a placeholder and the results take from the node placed
        on). None: the node is a world alone (slices of its own, or no node)."""
        if name is None or view is None or name in self._own:
            return None
        keys, by_name = self._reads
        if by_name:
            return ("name", name)
        return tuple(sorted((k, v) for k, v in view.labels.items() if k in keys))

    def _count_free(self) -> None:
        for world in self.worlds:
            world.free = sum(dev not in self.in_use.dedicated for dev in world.devices)

    def _touch(self, pools: Iterable[PoolID] | None) -> list[int]:
        """What is in use changed in `pools` (None: anywhere): the worlds that see one of them
        get a new version; returns their nodes (indices, in order), for `changes`."""
        if pools is None:
            worlds = list(self.worlds)
        else:
            pools = set(pools)
            worlds = sorted(
                {id(w): w for pid in pools for w in self._by_pool.get(pid, ())}.values(),
                key=lambda w: w.index,
            )
        for w in worlds:
            w.touch(None if pools is None else pools & w.pool_ids)
        return sorted(i for w in worlds for i in w.nodes)

    def may_try(self, unit: Unit, node: NodeState) -> tuple[str | None, Variant | None]:
        """Why `unit` may not use `node` — its scheduling constraints, then the node resources
        it needs there (cpu, memory, pod slots, extended resources) against what is free now —
        or (None, the unit's form on that node): the one place that decides it, before any
        device search."""
        if node.name in unit.blocked:
            return unit.blocked[node.name], None
        variant = self.book.variant(unit.needs, node.name)
        short = self.book.refusal(variant, node.name)
        return (short, None) if short else (None, variant)

    def uniform(self, unit: Unit) -> bool:
        """The unit asks for no extended resource that DRA may serve: its claims are the same
        on every node, so floors and shared reasons apply (otherwise a node without the
        device plugin adds a special claim, KEP-5004)."""
        mapping = self.book.mapping
        return not any(k in mapping for n in unit.needs for k in n.demand)

    def placed(self, variant: Variant, node: NodeState) -> None:
        """The node resources a placed unit takes; a change for the cached reasons."""
        self.book.take(variant, node.name)
        self._takes_only()
        self.changes.append(node.index)
        self._taken = len(self.changes)

    # --- answers ----------------------------------------------------------------------------

    def hopeless(self, shape: ShapeKey, claims: Sequence[ResourceClaim], node: NodeState) -> bool:
        """The pre-filter (the scheduler's PreFilter/Filter idea): the shape cannot fit on the
        node because one of its requests needs more distinct devices than the node has free —
        decided from a count, without building the Problem. Only where skipping the search
        cannot hide an error the search would raise: requests in ExactCount mode without admin
        access, and either no free device at all (the search stops at "busy" before it reads a
        CEL error) or a build of this shape on this node without CEL errors (selectors read the
        device, not its use, so none appear later)."""
        need = self._needs.get(shape)
        if need is None:
            need = self._needs[shape] = _least_devices(claims)
        if node.free >= need:
            return False
        if node.free == 0 or (shape, node.world.index) in self._clean:
            self.fails_for_good(shape, node.index)  # free devices only get fewer
            return True
        return False

    def answer(self, claims: Sequence[ResourceClaim], shape: ShapeKey, node: NodeState) -> Answer:
        """The reference search for a pod's `claims` on `node` now, reused when the shape was
        tried there at the node's current version."""
        names = tuple(c.key for c in claims)
        world = node.world
        cached = self.answers.get((shape, world.index))
        if (
            cached is not None
            and cached.version == world.version
            and (cached.shareable or cached.names == names)
        ):
            answer = cached
        else:
            problem = world.problem(self, node.view, claims, shape)
            answer = self._search(problem, node, names, claims)
            self.answers[(shape, world.index)] = answer
            if answer.shareable:
                self._clean.add((shape, world.index))
        if answer.final():
            self.fails_for_good(shape, node.index)
        return answer

    def _search(
        self,
        problem: Problem,
        node: NodeState,
        names: tuple[ClaimKey, ...],
        claims: Sequence[ResourceClaim] = (),
    ) -> Answer:
        shareable = not any(c.error is not None for a in problem.alternatives for c in a.candidates)
        try:
            assignment = allocate_reference(problem, max_steps=self.max_steps)
        except InvalidPools as exc:
            helps = self._invalid_pools_help(node, claims) if claims else True
            return Answer(node.version, names, problem, None, exc, shareable, invalid_helps=helps)
        except SearchAborted as exc:
            if self.max_steps >= DEFAULT_MAX_STEPS:
                raise
            _raise_candidate_errors(problem)  # never turn a CEL error into "no fit"
            return Answer(node.version, names, problem, None, exc, shareable)
        return Answer(node.version, names, problem, assignment, None, shareable)

    def _invalid_pools_help(self, node: NodeState, claims: Sequence[ResourceClaim]) -> bool:
        """Whether `claims` would fit on `node` with its invalid pools taken as valid: then
        the invalid pool is the cause of "no fit" and upstream's error names it; otherwise the
        reason must name the real shortage (`Answer.reason`). Unsure (an error) counts as yes."""
        pools = Pools([replace(p, invalid=None) for p in node.pools.pools], list(node.pools.incomplete))
        ctx = context_from(self.cluster, node.view, pools, self.in_use, self.job.gates, self.job.cache)
        try:
            return allocate_reference(problem_from_context(ctx, claims), max_steps=self.max_steps) is not None
        except DRASolverError:
            return True

    # --- nodes a shape no longer fits on ----------------------------------------------------

    def fails_for_good(self, shape: ShapeKey, index: int) -> None:
        """Record that `shape` does not fit on node `index` now, and never will while the run
        only places pods: a placement only takes (devices, their capacity and counters, node
        resources), and a search that found no allocation (no step budget cut it short, no
        candidate with a CEL error) searched every allocation the node offered, of which
        taking more leaves a subset. So the node answers the same for the rest of the run,
        and first fit passes over it without asking (`next_try`): without this, each pod
        walks every full node since the lowest changed one (quadratic at 10,000 nodes)."""
        self._takes_only()
        self.gone.setdefault(shape, {})[index] = index + 1

    def next_try(self, shape: ShapeKey, index: int) -> int:
        """The first node from `index` on that `shape` is not known to fail on for good
        (`len(nodes)` when none): the nodes passed over form chains to the next candidate,
        shortened as they are walked (a union-find), so a pod skips a full stretch at once."""
        self._takes_only()
        gone = self.gone.get(shape)
        if not gone:
            return index
        end = index
        while end in gone:
            end = gone[end]
        while index != end:
            gone[index], index = end, gone[index]
        return end

    def _takes_only(self) -> None:
        """Forget what `gone` knows when anything but a placement changed the run since the
        last placement (`recount`, or a caller releasing claims or node resources: something
        freed may fit again); every such change is an entry in `changes`."""
        if self._taken != len(self.changes):
            self.gone.clear()
            self._taken = len(self.changes)

    def floor(self, shape: ShapeKey) -> int:
        """The first node that is not known to fail for `shape` at its current version."""
        at, seen = self.floors.get(shape, (0, 0))
        for i in self.changes[seen:]:
            at = min(at, i)
        self.floors[shape] = (at, len(self.changes))
        return at

    # --- placements -------------------------------------------------------------------------

    def commit(self, claims: list[ResourceClaim], node: NodeState) -> None:
        """Verify `claims` (placed together on `node`) with the checker and record them as in
        use: in the ledger's cluster, the in-use summary, and the versions of the nodes that
        see the pools they took devices from."""
        self._check(claims, node)
        pools: set[PoolID] = set()
        for c in claims:
            self.ledger.cluster.claims[c.key] = c
            self._allocated.add(c.key)
            pools |= self._hold(c)
        more = in_use_from_claims(claims, self.job.gates)
        for dev in more.dedicated - self.in_use.dedicated:
            for world in self._seen_by.get(dev, ()):
                world.free -= 1
        _merge(self.in_use, more)
        touched = self._touch(pools)
        self._takes_only()
        self.changes.extend(touched)
        self._taken = len(self.changes)

    def _check(self, claims: list[ResourceClaim], node: NodeState) -> None:
        """`solver.check` on the part of the cluster the placement depends on: every slice of
        the pools its devices come from and the claims holding devices in those pools — all
        that the checker reads to judge them (a device's visibility from the node, its pool's
        completeness and validity, its counters, capacity and who else holds it are facts of
        its pool). Not the node's whole view: a node that sees every network-attached pool
        would be checked against all of them per placement. On a failure the check runs again
        on the whole cluster so that the error reads exactly as it always does."""
        pools = sorted(
            {
                (r.driver, r.pool)
                for c in claims
                if c.status is not None and c.status.allocation is not None
                for r in c.status.allocation.devices.results
            }
        )
        holders: dict[ClaimKey, ResourceClaim] = {}
        for pid in pools:
            holders.update(self._holders.get(pid, {}))
        slices = [
            self.cluster.slices[i]
            for i in sorted({i for pid in pools for i in self._pool_slices.get(pid, ())})
        ]
        part = replace(self.ledger.cluster, slices=slices, claims=holders)
        # One pod's claims, in the order of the call that allocated them: the rules of one
        # call apply (`check`'s `one_call`).
        if check(part, claims, node=node.name, gates=self.job.gates, one_call=True):
            check_or_raise(self.ledger.cluster, claims, node=node.name, gates=self.job.gates, one_call=True)
            raise AssertionError("the checker rejected a placement on the node's part of the cluster only")

    def _hold(self, claim: ResourceClaim) -> set[PoolID]:
        alloc = claim.status.allocation if claim.status is not None else None
        pools = {(r.driver, r.pool) for r in alloc.devices.results} if alloc is not None else set()
        for pid in pools:
            self._holders.setdefault(pid, {})[claim.key] = claim
        return pools

    def recount(self) -> None:
        """Rebuild what is in use from the ledger's cluster and forget every answer (after a
        placement that replaced an allocated claim of the same name)."""
        allocated = [
            c for c in self.ledger.cluster.claims.values() if c.status is not None and c.status.allocation
        ]
        self.in_use = in_use_from_claims(allocated, self.job.gates)
        self._allocated = {c.key for c in allocated}
        self._holders = {}
        for c in allocated:
            self._hold(c)
        self._touch(None)
        self.changes.extend(range(len(self.nodes)))
        self._takes_only()  # what was in use may be free again
        self._count_free()

    def snapshot(self) -> _Snapshot:
        """What a gang's tentative placements change, to undo them (`restore`)."""
        free = {n: dict(f) if f is not None else None for n, f in self.book.free.items()}
        return _Snapshot(dict(self.ledger.cluster.claims), free)

    def restore(self, snap: _Snapshot) -> None:
        """Undo every placement since `snap` (a gang short of its minCount): the claims and
        node resources as they were, what is in use recounted and every cached answer
        forgotten (the node versions move on, never back, so no stale answer is reused)."""
        self.ledger.cluster.claims = snap.claims
        self.book.free = snap.free
        self.recount()

    def collides(self, unit: Unit) -> bool:
        """A claim of the pod has the name of an allocated claim: the per-pod path leaves that
        claim out of what is in use, so this pod takes it (rare; never in valid input)."""
        return any(c.key in self._allocated for c in unit.claims)


@dataclass(frozen=True)
class _Snapshot:
    claims: dict[ClaimKey, ResourceClaim]
    free: dict[str | None, Amounts | None]


@dataclass(frozen=True)
class FirstFit:
    """The scheduler's way: pod after pod (higher priority first, then input order), each on
    the first node, in the given order, where all its claims fit — each pod seeing what the
    earlier pods took. `max_steps` bounds each search: past it the search is aborted, which is
    an error (upstream's filter timeout) at the full budget and a per-node reason below it.

    Gangs (`Job.gangs`) as upstream's PodGroup scheduling cycle: when the queue reaches a
    gang's first pod, all its pods are placed tentatively, one after the other in queue order,
    each by first fit on what the earlier ones took and never revisited; if fewer than
    minCount fit (counting its pods already bound), every tentative placement is undone and
    each pod of the gang says why (`_place_gang`). Pods above minCount that do not fit stay
    unplaced while the others keep their places. The pods of a PodGroup with the basic policy
    are placed together too, where the queue reaches the first of them (`_cycle_order`), each
    kept where it fits.

    Incremental (see the module docstring); `progress` is told (pods decided, pods)."""

    max_steps: int = DEFAULT_MAX_STEPS
    progress: Progress | None = field(default=None, compare=False)

    def plan(self, job: Job) -> PlanOutcome:
        started = time.perf_counter()
        run = _Placing(job, Ledger(job), self.max_steps)
        out: list[PodPlan | None] = [None] * len(job.units)
        order = _cycle_order(job, sorted(range(len(job.units)), key=lambda i: -job.units[i].priority))
        gang_of = [u.gang_pods(job.gangs) for u in job.units]
        done = 0
        for i in order:
            if out[i] is not None:
                continue  # placed with its gang
            block = _gang_block(order, i, gang_of) if gang_of[i] else [i]
            if len(block) > 1 or gang_of[i]:
                placed = self._place_gang(run, job, block, gang_of)
            else:
                placed = {i: self._place_one(run, job.units[i])}
            for j, p in placed.items():
                out[j] = p
            done += len(placed)
            if self.progress is not None:
                self.progress(done, len(order))
        plans = [p for p in out if p is not None]
        pods = [max(len(u.members), 1) for u in job.units]  # pods sharing a claim are one unit
        stats: dict[str, object] = {
            "nodes": len(job.nodes),
            "pods": sum(pods),
            "reference_placed": sum(k for k, p in zip(pods, plans, strict=True) if p.placed),
            "first_fit_seconds": round(time.perf_counter() - started, 3),
        }
        return PlanOutcome(plans, "reference", stats)

    def _place_one(self, run: _Placing, unit: Unit) -> PodPlan:
        if interrupt.requested():  # Ctrl-C: the pods placed so far are kept
            return PodPlan(unit.name, None, list(unit.claims), INTERRUPTED, unit.priority)
        return self._place(run, unit)

    def _place_gang(
        self, run: _Placing, job: Job, block: list[int], gang_of: list[dict[str, int]]
    ) -> dict[int, PodPlan]:
        """The units of one or more gangs (joined by shared claims), all or nothing: each
        placed by first fit in queue order on what the earlier ones took; if a gang ends
        short of its minCount, the block is undone and every pod says why — the gang, how
        many fit, and the first pod that did not with its own reason.

        Topology constraints (KEP-5732) as upstream's placement cycle: one candidate placement
        per domain (per combination of domains when the block holds several constrained gangs),
        in order of label value; the block is placed tentatively in each, restricted to the
        domain's nodes, and undone; among the placements where every gang reaches minCount the
        one placing most of the block's gang pods is taken (upstream's PodGroupPodsCount score;
        its NodeResourcesFit placement score is not modelled, so ties go to the first domain),
        and the block is placed there again."""
        choices = domain_choices(job, block, gang_of)
        if len(choices) == 1:
            return self._try_block(run, job, block, gang_of, choices[0], undo_short=True)[0]
        best: tuple[int, dict[str, str]] | None = None
        tried: list[tuple[dict[str, str], dict[int, PodPlan], int]] = []
        for choice in choices:
            snap = run.snapshot()
            plans, ok = self._try_block(run, job, block, gang_of, choice, undo_short=False)
            run.restore(snap)
            score = sum(k for j in block if plans[j].placed for k in gang_of[j].values())
            tried.append((choice, plans, score))
            if ok and (best is None or score > best[0]):
                best = (score, choice)
        if best is not None:
            return self._try_block(run, job, block, gang_of, best[1], undo_short=True)[0]
        return no_domain(job, block, gang_of, tried)

    def _try_block(
        self,
        run: _Placing,
        job: Job,
        block: list[int],
        gang_of: list[dict[str, int]],
        choice: Mapping[str, str],
        undo_short: bool,
    ) -> tuple[dict[int, PodPlan], bool]:
        """Place the block's units (restricted to the domains of `choice`: gang -> label
        value); whether every gang reaches minCount. Short and `undo_short`: undone, and each
        pod says why."""
        snap = run.snapshot()
        plans = {j: self._place_one(run, in_domain(job, job.units[j], choice)) for j in block}
        count = gang_counts(job, [j for j in block if plans[j].placed])
        short = short_gangs(job, count, {g for j in block for g in gang_of[j]})
        if not short or not undo_short:
            return plans, not short
        run.restore(snap)
        why = job.gangs[short[0]].short(count[short[0]])
        if choice:
            why += " in " + ", ".join(f"{job.gangs[g].topology}={v}" for g, v in sorted(choice.items()))
        blocker = next((plans[j] for j in block if not plans[j].placed), None)
        out: dict[int, PodPlan] = {}
        for j in block:
            p, unit = plans[j], job.units[j]
            if p.placed:
                tail = f"; {blocker.name} did not fit: {blocker.reason}" if blocker is not None else ""
                out[j] = PodPlan(unit.name, None, list(unit.claims), why + tail, unit.priority)
            else:
                out[j] = replace(p, reason=f"{why}; {p.reason}")
        return out, False

    def _place(self, run: _Placing, unit: Unit) -> PodPlan:
        if run.collides(unit):
            return self._place_slowly(run, unit)
        base = _shape(unit.claims)
        uniform = run.uniform(unit)
        at = run.floor(base) if uniform else 0
        known = uniform  # every node before this one fails for the shape at its current version
        while at < len(run.nodes):
            if uniform:  # the claims are the same on every node: skip those they never fit
                at = run.next_try(base, at)
                if at == len(run.nodes):
                    break
            node = run.nodes[at]
            at += 1
            why, variant = run.may_try(unit, node)
            if variant is None:
                known = False
                continue
            placed, shape = _fit_on(run, unit, variant, node, base)
            if placed is not None:
                return placed
            if known:
                run.floors[shape] = (node.index + 1, len(run.changes))
        key = (base, frozenset(unit.blocked.items()), tuple(sorted(demand_total(unit.needs).items())))
        seen = run.nowhere.get(key) if uniform else None
        if seen is None or seen[0] != len(run.changes):
            # Only the nodes changed since the last answer can answer differently (a node's
            # version and its free node resources change only with an entry in `changes`).
            again = range(len(run.nodes)) if seen is None else sorted(set(run.changes[seen[0] :]))
            tried = list(seen[2]) if seen is not None else [_Tried(node) for node in run.nodes]
            for i in again:
                tried[i] = self._try(run, unit, base, run.nodes[i])
            before = seen[1] if seen is not None else None
            seen = (len(run.changes), _nowhere(tried, before, again), tried)
            if uniform:
                run.nowhere[key] = seen
        return _unplaced(unit, seen[1], len(run.nodes))

    @staticmethod
    def _try(run: _Placing, unit: Unit, base: ShapeKey, node: NodeState) -> _Tried:
        """Why `node` does not take `unit` now: a refusal, or the reference search's answer."""
        why, variant = run.may_try(unit, node)
        if variant is None:
            return _Tried(node, why)
        claims = (*unit.claims, *variant.claims)
        shape = _shape(claims) if variant.claims else base
        refs = _refs(claims) if variant.claims else None
        return _Tried(node, None, run.answer(claims, shape, node), refs)

    def _place_slowly(self, run: _Placing, unit: Unit) -> PodPlan:
        """The per-pod path (a fresh Problem from the whole cluster per node), for the rare pod
        whose claim names collide with allocated claims."""
        tried = []
        for node in run.nodes:
            why, variant = run.may_try(unit, node)
            if variant is None:
                tried.append(_Tried(node, why))
                continue
            claims = (*unit.claims, *variant.claims)
            if not claims:
                run.placed(variant, node)
                return PodPlan(unit.name, node.name, [], None, unit.priority, placed=True)
            problem = build_problem(run.ledger.cluster, claims, node.name, run.job.gates, cache=run.job.cache)
            answer = run._search(problem, node, tuple(c.key for c in claims), claims)
            if answer.assignment is not None:
                done = run.ledger.results(problem, claims, answer.assignment)
                run.commit(done, node)
                run.recount()
                run.placed(variant, node)
                return PodPlan(
                    unit.name, node.name, done, None, unit.priority, placed=True, extended=variant.statuses
                )
            tried.append(_Tried(node, None, answer, _refs(claims)))
        return _unplaced(unit, _nowhere(tried), len(run.nodes))


_KEY_CACHE = 1 << 18
"""`Resumable._key`'s caches are emptied past this many entries (a planner updated for days)."""


class Resumable:
    """A first-fit run kept between calls (`dra_solver.replan`): place more pods, or release
    the claims of pods that are gone, on the state the earlier placements left.

    Why: re-planning after a small change must not gather every node's pools again nor
    re-search every pod. The run's per-node states, cached answers and floors stay valid
    across calls; releasing claims recounts what is in use in their pools only and bumps the
    versions of the nodes that see those pools (their cached answers are stale, and every
    shape's floor drops to the first of them), exactly as a placement does. `job.cluster`
    carries the placements to start from as allocated claims and bound pods.

    Which nodes to try: a cluster fuller than its pods turns many pods away, and first fit
    would scan, for each, every node after the first that changed. A node answers a pod
    differently only after an entry of its own in the run's change log (`_Placing.changes`: a
    placement or a release on it or in a pool it sees; its version and its free node
    resources change nowhere else). So the run keeps, per (shape, refused nodes, node-resource
    demand) — `_Key`: pods of one key get the same answers — the nodes not known to refuse
    such a pod (`_Open`: the length of the log then, and the nodes still untried then); every
    other node refused one at that point of the log, and still does unless logged since. The
    first node that takes a pod of the key now is the first, in node order, among the open
    nodes and the nodes logged since: `place` and `place_on` try only those — the node first
    fit over every node (over the nodes given, for `place_on`) picks."""

    def __init__(self, job: Job, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self._first_fit = FirstFit(max_steps=max_steps)
        self._run = _Placing(job, Ledger(job), max_steps)
        self._index: dict[str | None, int] = {}
        self._open: dict[_Key, _Open] = {}
        """`place`: per key, the nodes not known to refuse it (over every node)."""
        self._open_on: dict[_Key, tuple[_Open, Collection[str | None]]] = {}
        """`place_on`: per key, the same over the nodes given (kept with them: valid for the
        same collection only)."""
        self._shapes: dict[int, tuple[tuple[ResourceClaim, ...], ShapeKey]] = {}
        self._blocked: dict[int, tuple[Mapping[str | None, str], frozenset[tuple[str | None, str]]]] = {}
        self._demands: dict[int, tuple[tuple[Needs, ...], tuple[tuple[str, int], ...]]] = {}
        self._units: dict[int, tuple[Unit, ShapeKey, _Key, bool]] = {}
        """Per-object caches of `_key`'s parts (by id, holding the object so the id stays its
        own): a unit kept by the caller and re-used across calls is keyed once (`_units`:
        with whether it is uniform)."""
        """`_nowhere`: per key, its last answer's per-node templates (node order)."""
        self._within_of: tuple[Collection[str | None], set[int]] | None = None

    def place(self, unit: Unit) -> PodPlan:
        """First fit of one more pod (the scheduler's: the first node, in order, that takes it):
        over every node, or — for a key seen before — over its open nodes and the nodes
        changed since (the class docstring), with the same result."""
        run = self._run
        if interrupt.requested() or run.collides(unit) or not run.uniform(unit):
            return self._first_fit._place_one(run, unit)
        base, key = self._known(unit)
        was = self._open.get(key)
        if was is None:
            now = len(run.changes)
            got = self._first_fit._place_one(run, unit)
            if not got.placed:
                self._open[key] = _Open(now, ())
            else:  # every node before the one that took it refused it (or its shape)
                self._open[key] = _Open(now, tuple(range(self._indices()[got.node] + 1, len(run.nodes))))
            return got
        placed, self._open[key] = self._first_open(unit, base, was, range(len(run.nodes)))
        if placed is not None:
            return placed
        return _unplaced(unit, self._nowhere(unit, base, key), len(run.nodes))

    def _first_open(
        self, unit: Unit, base: ShapeKey, was: _Open, within: Collection[int]
    ) -> tuple[PodPlan | None, _Open]:
        """First fit of `unit` over the nodes of `within` (indices) that are open in `was` or
        logged since, in node order; with what is open after it: the nodes after the one that
        took it (the log from before the placement: the nodes it changed are logged there)."""
        run = self._run
        now = len(run.changes)
        todo = sorted({i for i in (*was.nodes, *run.changes[was.at :]) if i in within})
        for k, i in enumerate(todo):
            node = run.nodes[i]
            _, variant = run.may_try(unit, node)
            if variant is None:
                continue
            placed, _ = _fit_on(run, unit, variant, node, base)
            if placed is not None:
                return placed, _Open(now, tuple(todo[k + 1 :]))
        return None, _Open(now, ())

    def _known(self, unit: Unit) -> tuple[ShapeKey, _Key]:
        """`_key`, kept per unit object (with whether the unit is uniform, `_uniform`)."""
        known = self._units.get(id(unit))
        if known is None or known[0] is not unit:
            base, key = self._key(unit)
            known = self._units[id(unit)] = (unit, base, key, self._run.uniform(unit))
        return known[1], known[2]

    def _uniform(self, unit: Unit) -> bool:
        self._known(unit)
        return self._units[id(unit)][3]

    def _nowhere(self, unit: Unit, base: ShapeKey, key: _Key) -> _Nowhere:
        """Why no node takes `unit` now, from `run.nowhere` (the entry `FirstFit._place` keeps
        for the same key), the nodes changed since it was worded tried and worded again — only
        those: the other nodes' words are kept (`_nowhere` with the earlier answer), so a full
        cluster that turns away pod after pod costs the changed nodes per pod, not every node."""
        run = self._run
        seen = run.nowhere.get(key)
        if seen is not None and seen[0] == len(run.changes):
            return seen[1]
        again = range(len(run.nodes)) if seen is None else sorted(set(run.changes[seen[0] :]))
        tried = list(seen[2]) if seen is not None else [_Tried(node) for node in run.nodes]
        for i in again:
            tried[i] = FirstFit._try(run, unit, base, run.nodes[i])
        nowhere = _nowhere(tried, seen[1] if seen is not None else None, again)
        run.nowhere[key] = (len(run.changes), nowhere, tried)
        return nowhere

    def _key(self, unit: Unit) -> tuple[ShapeKey, _Key]:
        """The unit's shape and its key (shape, refused nodes, node-resource demand): the key
        `FirstFit._place` files its reasons under."""
        if len(self._shapes) + len(self._blocked) + len(self._demands) + len(self._units) > _KEY_CACHE:
            self._shapes, self._blocked, self._demands = {}, {}, {}  # a long-lived run: start again
            self._units = {}
        shape = self._shapes.get(id(unit.claims))
        if shape is None or shape[0] is not unit.claims:
            shape = self._shapes[id(unit.claims)] = (unit.claims, _shape(unit.claims))
        blocked = self._blocked.get(id(unit.blocked))
        if blocked is None or blocked[0] is not unit.blocked:
            blocked = self._blocked[id(unit.blocked)] = (unit.blocked, frozenset(unit.blocked.items()))
        demand = self._demands.get(id(unit.needs))
        if demand is None or demand[0] is not unit.needs:
            demand = self._demands[id(unit.needs)] = (
                unit.needs,
                tuple(sorted(demand_total(unit.needs).items())),
            )
        return shape[1], (shape[1], blocked[1], demand[1])

    def warm(self, pods: Iterable[Sequence[ResourceClaim]], units: Iterable[Unit] = ()) -> int:
        """Work a planner does ahead of its updates, so that an update reuses answers instead
        of building Problems node after node: search every node once for each distinct claim
        shape among `pods` (the answers are cached per node version); and for each key among
        `units` (pods left out, say), record the nodes not known to refuse it (`place` then
        tries only those and the nodes changed since) — when no node takes it, with every
        node's reason. Returns the number of shapes and keys warmed."""
        run = self._run
        seen: set[ShapeKey] = set()
        for claims in pods:
            if not claims:
                continue
            shape = _shape(claims)
            if shape in seen:
                continue
            seen.add(shape)
            for node in run.nodes:
                if not run.hopeless(shape, claims, node):
                    run.answer(claims, shape, node)
        keys: set[_Key] = set()
        for unit in units:
            if run.collides(unit) or not run.uniform(unit) or not unit.claims:
                continue
            base, key = self._known(unit)  # kept: the caller tries these units again later
            if key in keys or key in self._open:
                continue
            keys.add(key)
            first = next((node.index for node in run.nodes if self._takes(unit, base, node)), None)
            if first is None:
                self._open[key] = _Open(len(run.changes), ())
                self._nowhere(unit, base, key)
            else:  # the nodes before `first` refuse it
                self._open[key] = _Open(len(run.changes), tuple(range(first, len(run.nodes))))
        return len(seen) + len(keys)

    def _takes(self, unit: Unit, base: ShapeKey, node: NodeState) -> bool:
        """Whether `node` takes `unit` now (nothing is committed)."""
        run = self._run
        _, variant = run.may_try(unit, node)
        if variant is None:
            return False
        return not run.hopeless(base, unit.claims, node) and (
            run.answer(unit.claims, base, node).assignment is not None
        )

    def place_on(self, unit: Unit, nodes: Collection[str | None]) -> PodPlan | None:
        """First fit of one more pod over `nodes` only (in the run's node order), None when none
        takes it. For a pod known not to fit on the other nodes (left out by the last plan,
        where nothing was released since): no reason is computed for it. A key tried on the
        same `nodes` before is tried on its open nodes and those changed since (the class
        docstring): pods of a key that failed since the last change fail at once."""
        run = self._run
        base, key = self._known(unit)
        if not self._uniform(unit):
            if run.collides(unit):
                return None
            for node in self._states(nodes):
                _, variant = run.may_try(unit, node)
                if variant is not None and (placed := _fit_on(run, unit, variant, node, base)[0]) is not None:
                    return placed
            return None
        within = self._within(nodes)
        was = self._open_on.get(key)
        if was is not None and was[1] is nodes:
            start = was[0]
            if not start.nodes and not any(i in within for i in run.changes[start.at :]):
                self._open_on[key] = (_Open(len(run.changes), ()), nodes)
                return None  # refused by every node of `nodes`, none changed since
        else:
            start = _Open(len(run.changes), tuple(sorted(within)))
        if run.collides(unit):
            return None
        placed, now = self._first_open(unit, base, start, within)
        self._open_on[key] = (now, nodes)
        return placed

    def _within(self, nodes: Collection[str | None]) -> set[int]:
        """The indices of `nodes` (kept for the last collection asked about)."""
        if self._within_of is None or self._within_of[0] is not nodes:
            index = self._indices()
            self._within_of = (nodes, {index[n] for n in nodes if n in index})
        return self._within_of[1]

    def _indices(self) -> dict[str | None, int]:
        """Node name -> its index in the run."""
        if not self._index:
            self._index = {s.name: s.index for s in self._run.nodes}
        return self._index

    def _states(self, nodes: Collection[str | None]) -> list[NodeState]:
        index = self._indices()
        return [self._run.nodes[i] for i in sorted(index[n] for n in nodes if n in index)]

    def hold(self, claims: Sequence[ResourceClaim], node: str | None, demand: Mapping[str, int]) -> None:
        """Record a pod placed outside the run (the planner's local re-solve, `replan.local`),
        the reverse of `release`: its allocated `claims` hold devices — verified by the checker
        on the node's part of the cluster first, as every placement of the run is — and its
        node resources `demand` on `node` are taken. The nodes that see the pools (and `node`)
        are logged as changed, so no cached answer outlives it."""
        run = self._run
        states = self._states([node])
        if not states:
            raise ValueError(f"hold: node {node!r} is not one of the run's nodes")
        if claims:
            run.commit(list(claims), states[0])
        if demand:
            take(run.book.free.get(node), demand)
            run._takes_only()
            run.changes.append(states[0].index)
            run._taken = len(run.changes)  # a placement: what `gone` knows stays valid

    def release(self, claims: Sequence[ResourceClaim], node: str | None, demand: Mapping[str, int]) -> None:
        """Forget a placed pod: its allocated `claims` no longer hold devices, and its node
        resources `demand` on `node` are free again."""
        run = self._run
        pools: set[PoolID] = set()
        devices: set[DeviceID] = set()
        for c in claims:
            run.ledger.cluster.claims.pop(c.key, None)
            run._allocated.discard(c.key)
            alloc = c.status.allocation if c.status is not None else None
            for r in alloc.devices.results if alloc is not None else ():
                run._holders.get((r.driver, r.pool), {}).pop(c.key, None)
                pools.add((r.driver, r.pool))
                devices.add((r.driver, r.pool, r.device))
        if pools:
            # What is in use on the released devices: counted again from the claims still
            # holding devices in their pools (a shared device may have other holders).
            in_use = run.in_use
            for dev in devices:
                in_use.dedicated.discard(dev)
                in_use.shared.discard(dev)
                in_use.capacity.pop(dev, None)
            holders = {k: h for pid in pools for k, h in run._holders.get(pid, {}).items()}
            more = in_use_from_claims(holders.values(), run.job.gates)
            in_use.dedicated |= more.dedicated & devices
            in_use.shared |= more.shared & devices
            for dev in devices & more.capacity.keys():
                in_use.capacity[dev] = more.capacity[dev]
            touched = run._touch(pools)
            for world in {id(w): w for pid in pools for w in run._by_pool.get(pid, ())}.values():
                world.free = sum(dev not in in_use.dedicated for dev in world.devices)
            run.changes.extend(touched)
        if demand:
            for state in self._states([node]):
                run.book.give(demand, node)
                run.changes.append(state.index)


@dataclass(frozen=True)
class _Nowhere:
    """Why a pod shape fits on no node at one state of the run, with placeholders for the
    claim refs: shared by every pod of that shape and those scheduling constraints that is
    tried before anything changes (a full cluster turns pod after pod away)."""

    texts: dict[str | None, str]
    summary: str
    error: DRASolverError | None
    templates: list[str]
    """Each node's reason with its name taken out, in node order (`reason_groups`)."""
    errors: list[DRASolverError | None]
    """Each node's error, in node order: `error` is the last of them."""


@dataclass(frozen=True)
class Alone:
    """A node where a pod fits alone on the cluster as the input has it (`Solo.nodes`)."""

    node: str | None
    devices: frozenset[DeviceID]
    """The devices the pod's requests may use there (candidates of its Problem)."""
    pools: frozenset[PoolID]
    """The pools the node sees: another pod's devices there may be ones this pod needs."""


class Solo:
    """Each node's answer for one pod alone on the cluster as the input has it — none of the
    plan's pods placed, node resources as the bound pods leave them. Why: a reason for a pod
    the plan leaves out must tell the nodes where only the plan's other pods stand in the way
    (change nothing, place fewer pods) from those where the pod or the cluster must change.
    Answers are cached per (claim shape, node), as in a first-fit run that places nothing."""

    def __init__(self, job: Job, max_steps: int) -> None:
        self._run = _Placing(job, Ledger(job), max_steps)
        self._by_name = {n.name: n for n in self._run.nodes}
        self._seen: dict[Hashable, tuple[list[Alone], dict[str | None, str], list[str]]] = {}
        self._fit: dict[tuple[ShapeKey, str | None], bool] = {}

    def key(self, unit: Unit) -> Hashable:
        """What decides `nodes(unit)` up to the claim names: the claims' shape, the scheduling
        constraints and the node-resource demand (None: the pod asks for an extended resource
        DRA may serve, so its claims differ by node and no answer is shared)."""
        if not self._run.uniform(unit):
            return None
        return (
            _shape(unit.claims),
            frozenset(unit.blocked.items()),
            tuple(sorted(demand_total(unit.needs).items())),
        )

    def nodes(self, unit: Unit, raw: bool = False) -> tuple[list[Alone], dict[str | None, str], list[str]]:
        """Where `unit` fits alone, and every other node's reason there (as `PodPlan.node_reasons`
        words it) with its template (node and claim names taken out, for `reason_groups`).
        Pods of one shape, scheduling constraints and demand share the answer (with their own
        claim names put in; `raw`: shared pods' texts as they are, the claim refs as
        placeholders that `with_refs` replaces), as first fit's `_Nowhere` is shared."""
        base = _shape(unit.claims)
        key = self.key(unit)
        seen = self._seen.get(key) if key is not None else None
        if seen is None:
            seen = self._nodes(unit, base)
            if key is not None:
                self._seen[key] = seen
        fits, texts, templates = seen
        if raw and key is not None:
            return fits, texts, templates
        refs = _refs(unit.claims)
        return (
            fits,
            {n: with_refs(t, refs) for n, t in texts.items()},
            [with_refs(t, refs) for t in templates],
        )

    def _nodes(self, unit: Unit, base: ShapeKey) -> tuple[list[Alone], dict[str | None, str], list[str]]:
        run = self._run
        fits: list[Alone] = []
        tried: list[_Tried] = []
        for node in run.nodes:
            why, variant = run.may_try(unit, node)
            if variant is None:
                tried.append(_Tried(node, why))
                continue
            claims = (*unit.claims, *variant.claims)
            if not claims:
                fits.append(Alone(node.name, frozenset(), node.pool_ids))
                continue
            shape = _shape(claims) if variant.claims else base
            answer = run.answer(claims, shape, node)
            if answer.assignment is None:
                tried.append(_Tried(node, None, answer, _refs(claims) if variant.claims else None))
                continue
            fits.append(Alone(node.name, answer.candidate_devices(), node.pool_ids))
        texts, templates, _ = _node_texts(tried)
        return fits, texts, templates

    def devices_fit(self, unit: Unit, nodes: Sequence[str | None]) -> set[str | None]:
        """Those of `nodes` where the unit's claims find devices (node resources aside)."""
        run, base = self._run, _shape(unit.claims)
        uniform = run.uniform(unit)
        out: set[str | None] = set()
        for node in nodes:
            if uniform and (base, node) in self._fit:
                if self._fit[(base, node)]:
                    out.add(node)
                continue
            variant = run.book.variant(unit.needs, node)
            claims = (*unit.claims, *variant.claims)
            shape = _shape(claims) if variant.claims else base
            fit = not claims or run.answer(claims, shape, self._by_name[node]).assignment is not None
            if uniform:
                self._fit[(base, node)] = fit
            if fit:
                out.add(node)
        return out


def _fit_on(
    run: _Placing, unit: Unit, variant: Variant, node: NodeState, base: ShapeKey
) -> tuple[PodPlan | None, ShapeKey]:
    """One first-fit step: `unit` (in its form `variant`) on `node` — the PodPlan placing it
    there, committed to the run, or None when the node does not take it — with the claims'
    shape tried. The one step `FirstFit` and `Resumable` share, so both decide alike."""
    claims = (*unit.claims, *variant.claims)
    if not claims:  # a pod without claims: node resources only
        run.placed(variant, node)
        return PodPlan(unit.name, node.name, [], None, unit.priority, placed=True), base
    shape = _shape(claims) if variant.claims else base
    if run.hopeless(shape, claims, node):
        return None, shape
    answer = run.answer(claims, shape, node)
    if answer.assignment is None:
        return None, shape
    problem = _named(answer.problem, claims, answer.names)
    if problem.node != node.name:  # an answer of the node's world, found on another of its nodes
        problem = replace(problem, node=node.name)
    done = run.ledger.results(problem, claims, answer.assignment)
    run.commit(done, node)
    run.placed(variant, node)
    plan_ = PodPlan(unit.name, node.name, done, None, unit.priority, placed=True, extended=variant.statuses)
    return plan_, shape


def _nowhere(tried: list[_Tried], before: _Nowhere | None = None, again: Sequence[int] = ()) -> _Nowhere:
    """Why no node takes the pod, from each node's try (one per node, in node order). With
    `before` (the same pods' answer at an earlier state, when only the nodes `again` were
    tried anew): its words kept for every other node, only those nodes worded again. Why: a
    full cluster turns a shape away after each change, and at 10,000 nodes wording every node
    each time was the larger part of first fit."""
    if before is None or not len(before.templates) == len(before.texts) == len(tried):  # names unique
        texts, templates, error = _node_texts(tried)
        errors = [t.answer.failure if t.answer is not None else None for t in tried]
        return _Nowhere(texts, why_not(list(texts.items()), templates), error, templates, errors)
    new_texts, new_templates, _ = _node_texts([tried[i] for i in again])
    texts, templates, errors = dict(before.texts), list(before.templates), list(before.errors)
    for k, i in enumerate(again):
        texts[tried[i].node.name] = new_texts[tried[i].node.name]
        templates[i] = new_templates[k]
        answer = tried[i].answer
        errors[i] = answer.failure if answer is not None else None
    error = next((e for e in reversed(errors) if e is not None), None)
    return _Nowhere(texts, why_not(list(texts.items()), templates), error, templates, errors)


def _node_texts(tried: list[_Tried]) -> tuple[dict[str | None, str], list[str], DRASolverError | None]:
    """Per node tried, why it did not take the pod, and the same text as a template (the node
    name taken out, so that equal reasons on different nodes group); the last per-node error."""
    texts: dict[str | None, str] = {}
    templates: list[str] = []
    error: DRASolverError | None = None
    for t in tried:
        name = t.node.name
        if t.blocked is not None:
            text = t.blocked
            template = text.replace(f"node {name}", "the node").replace(name, "the node") if name else text
        else:
            assert t.answer is not None
            if t.refs is None and t.answer.texts is not None and t.answer.texts[0] == name:
                text, template = t.answer.texts[1:]  # this node's words, from an earlier pass
            else:
                template = t.answer.reason()
                if t.refs is not None:
                    template = with_refs(template, t.refs)
                text = template.replace(_NODE, str(name))
                template = template.replace(f" (on node {_NODE})", "").replace(_NODE, "the node")
                if t.refs is None:
                    t.answer.texts = (name, text, template)
            if t.answer.failure is not None:
                error = t.answer.failure
        texts[name] = text
        templates.append(template)
    return texts, templates, error


class NodeReasons(Mapping[str | None, str]):
    """`PodPlan.node_reasons` of a pod first fit could not place: node -> why that node did not
    take it. The texts are shared by the pods of one shape; each pod's claim refs are put in
    when a text is read, so that a full cluster costs no per-pod, per-node strings."""

    def __init__(self, texts: dict[str | None, str], refs: list[str]) -> None:
        self._texts = texts
        self._refs = refs

    def __getitem__(self, node: str | None) -> str:
        return with_refs(self._texts[node], self._refs)

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return repr(dict(self))


def _cycle_order(job: Job, order: list[int]) -> list[int]:
    """The queue order with the pods of each PodGroup (whatever its policy) moved up to where
    the first of them is, in their queue order; units joined by a shared claim join their
    groups. Why: upstream sends every pod that names a PodGroup to the PodGroup cycle, which
    takes all the group's pending pods when the queue reaches one of them, sorted by priority
    then queue time (pkg/scheduler/schedule_one.go ScheduleOne, schedule_one_podgroup.go
    podGroupInfoForPod); a plain pod between two of them in the queue comes after the group."""
    if not job.gates.GenericWorkload:
        return order
    root: dict[str, str] = {}

    def find(g: str) -> str:
        while root.setdefault(g, g) != g:
            g = root[g]
        return g

    groups = [sorted({m.group for m in job.units[i].members if m.group}) for i in range(len(job.units))]
    for gs in groups:
        for g in gs[1:]:
            root[find(g)] = find(gs[0])
    by_root: dict[str, list[int]] = {}
    for i in order:
        if groups[i]:
            by_root.setdefault(find(groups[i][0]), []).append(i)
    out: list[int] = []
    taken: set[str] = set()
    for i in order:
        if not groups[i]:
            out.append(i)
        elif (r := find(groups[i][0])) not in taken:
            taken.add(r)
            out.extend(by_root[r])
    return out


def _gang_block(order: list[int], first: int, gang_of: list[dict[str, int]]) -> list[int]:
    """The units placed together with `first` (in queue order): every unit of its gangs, and
    of the gangs those units belong to in turn (units joined by a shared claim)."""
    gangs = set(gang_of[first])
    while True:
        block = [j for j in order if gangs & gang_of[j].keys()]
        more = {g for j in block for g in gang_of[j]} - gangs
        if not more:
            return block
        gangs |= more


def _refs(claims: Sequence[ResourceClaim]) -> list[str]:
    return [c.namespaced_name for c in claims]


def _unplaced(unit: Unit, nowhere: _Nowhere, n_nodes: int) -> PodPlan:
    """The PodPlan of a pod no node takes: one line and every node's reason (`node_reasons`)."""
    refs = _refs(unit.claims)
    return PodPlan(
        unit.name,
        None,
        list(unit.claims),
        with_refs(nowhere.summary, refs),
        unit.priority,
        error=nowhere.error if n_nodes == 1 else None,
        node_reasons=NodeReasons(nowhere.texts, refs),
    )


def why_not(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str] | None = None) -> str:
    """One line for a pod that fits nowhere: the node's reason when there is one node, every
    node's reason when there are few, else the counts of the two most common reasons
    (`templates`: the reasons with node names taken out, so that equal reasons group)."""
    if len(reasons) == 1:
        return reasons[0][1]
    if len(reasons) <= DETAIL_NODES or templates is None:
        return "no node fits the pod: " + "; ".join(f"{n}: {r}" for n, r in reasons)
    return f"no node fits the pod (0 of {len(reasons)} nodes): " + "; ".join(
        reason_groups(reasons, templates)
    )


def reason_groups(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str]) -> list[str]:
    """The parts of `why_not`'s line over many nodes: the two most common reasons with their
    node counts, then how many nodes are left for how many other reasons."""
    return counted_groups(template_counts(templates), len(reasons))


def template_counts(templates: Iterable[str]) -> dict[str, int]:
    """Each distinct template with the number of nodes that have it, in order of first
    appearance: all that `reason_groups` reads of the node-ordered list (`counted_groups`)."""
    counts: dict[str, int] = {}
    for text in templates:
        counts[text] = counts.get(text, 0) + 1
    return counts


def counted_groups(counts: Mapping[str, int], total: int) -> list[str]:
    """`reason_groups` from the distinct templates and their node counts (`template_counts`)
    over `total` nodes. Why: a group's size, its first text and its distinct texts in order of
    first appearance are all the wording uses, so pods that share the templates but not the
    claim names put their names into the few distinct texts, not into every node's."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for text, n in counts.items():  # reasons that differ only in numbers group, numbers as ranges
        groups.setdefault(_numberless(text), []).append((text, n))
    sized = [(sum(n for _, n in members), members) for members in groups.values()]
    top = sorted(sized, key=lambda g: g[0], reverse=True)[:2]  # stable: ties in node order
    parts = [
        f"{size} node{'s' if size != 1 else ''}: {_ranges([t for t, _ in members])}" for size, members in top
    ]
    rest = total - sum(size for size, _ in top)
    if rest:
        others = len(groups) - len(top)
        parts.append(f"{rest} more node{'s' if rest != 1 else ''} for {others} other reason(s)")
    return parts


_TOKENS = re.compile(r"\x00claim\d+\x00|\d+")
"""A claim placeholder (`_CLAIM`, kept whole: its index names a claim, it is no count) or a
number. Why: two claims' reasons that differ only in their numbers are different reasons;
grouped as one, they printed the placeholder itself and mixed the claims' counts."""


def _is_number(token: str) -> bool:
    return not token.startswith("\x00")


@lru_cache(maxsize=1 << 16)
def _numberless(text: str) -> str:
    """`text` with its numbers as `#` (claim placeholders kept). Cached: the same reason text
    recurs on every node of a kind, for every pod of a shape (first fit words a full cluster
    pod after pod)."""
    return _TOKENS.sub(lambda m: "#" if _is_number(m[0]) else m[0], text)


@lru_cache(maxsize=1 << 16)
def _numbers(text: str) -> tuple[str, ...]:
    """The numbers in `text`, in order, claim placeholders left out (cached as `_numberless`)."""
    return tuple(t for t in _TOKENS.findall(text) if _is_number(t))


def _ranges(texts: list[str]) -> str:
    """Texts equal but for their numbers, as one text: a number that varies becomes `low-high`."""
    numbers = list(zip(*(_numbers(t) for t in dict.fromkeys(texts)), strict=True))
    out, at, i = [], 0, 0
    for m in _TOKENS.finditer(texts[0]):
        out.append(texts[0][at : m.start()])
        at = m.end()
        if not _is_number(m[0]):
            out.append(m[0])
            continue
        values = numbers[i]
        i += 1
        low, high = min(values, key=int), max(values, key=int)
        out.append(values[0] if len(set(values)) == 1 else f"{int(low)}-{int(high)}")
    out.append(texts[0][at:])
    return "".join(out)


def _least_devices(claims: Sequence[ResourceClaim]) -> int:
    """The most distinct devices one request of the pod needs (firstAvailable: its smallest
    subrequest): different requests may share a multi-allocatable device, one request may
    not. 0 (no pre-filter) when a request has admin access (it may use allocated devices) or
    asks for All (its preparation can fail with an error on a node)."""
    need = 0
    for claim in claims:
        for req in claim.spec.devices.requests:
            if req.exactly is not None:
                options = [(req.exactly.allocation_mode, req.exactly.count, bool(req.exactly.admin_access))]
            else:
                options = [(s.allocation_mode, s.count, False) for s in req.first_available or ()]
            if not options or any(mode not in (None, "ExactCount") or admin for mode, _, admin in options):
                return 0
            need = max(need, min(count if count is not None else 1 for _, count, _ in options))
    return need


def with_refs(text: str, refs: list[str]) -> str:
    for i, ref in enumerate(refs):
        text = text.replace("/" + _CLAIM.format(i), ref)
    return text


def _named(problem: Problem, claims: Sequence[ResourceClaim], names: tuple[ClaimKey, ...]) -> Problem:
    """The Problem with the claim names of `claims` (the answer was found for other names)."""
    mine = tuple(c.key for c in claims)
    if mine == names:
        return problem
    infos = tuple(
        replace(info, namespace=ns, name=n) for info, (ns, n) in zip(problem.claims, mine, strict=True)
    )
    return replace(problem, claims=infos)


def _shape(claims: Sequence[ResourceClaim]) -> ShapeKey:
    return tuple((c.metadata.ns, json.dumps(c.spec.dump(), sort_keys=True, default=str)) for c in claims)


def _merge(into: InUse, more: InUse) -> None:
    into.dedicated |= more.dedicated
    into.shared |= more.shared
    for dev, sums in more.capacity.items():
        mine = into.capacity.setdefault(dev, {})
        for name, amount in sums.items():
            mine[name] = mine.get(name, Fraction(0)) + amount


def _raise_candidate_errors(problem: Problem) -> None:
    for alt in problem.alternatives:
        for cand in alt.candidates:
            if cand.error is not None:
                raise cand.error from None


__all__ = [
    "DETAIL_NODES",
    "Alone",
    "FirstFit",
    "NodeReasons",
    "NodeState",
    "Resumable",
    "Solo",
    "counted_groups",
    "reason_groups",
    "template_counts",
    "why_not",
    "with_refs",
]
