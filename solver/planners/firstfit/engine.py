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
needs there and the extended resources DRA serves there (`solver.problem.demand`) — is decided in one
place, `_Placing.may_try`, before any device work.

The decisions are exactly those of the per-pod path (`build_problem` + `allocate_reference` on
the cluster with every earlier placement): same node, same devices, same shareIDs, same
per-node reasons; `tests/test_firstfit.py` compares the two on generated clusters.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from ...api.cluster import Cluster
from ...api.models import ResourceClaim, ResourceSlice
from ...check import check, check_or_raise
from ...errors import DRASolverError, FailedOnNode, InvalidPools, SearchAborted
from ...inventory import (
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
from ...planning.job import Job, Unit
from ...planning.ledger import Ledger
from ...planning.outcome import PodPlan
from ...problem.build import problem_from_context
from ...problem.demand import NodeBook, Variant
from ...problem.devices import BuildContext, DeviceMemo, context_from, refresh_context
from ...problem.flat import Assignment, Problem
from ...problem.leftout import may_serve
from ...problem.resources import Amounts
from ...reasons import Fact, Kind, Reason
from ...reasons.words import NODE, claim_placeholder
from ...reasons.words import nowhere as nowhere_facts
from ...reference import DEFAULT_MAX_STEPS, aborted, allocate_reference, invalid_pools
from ...reference.reasons import why_unschedulable
from .words import NodeReasons

ClaimKey = tuple[str, str]
ShapeKey = tuple[tuple[str, str], ...]
"""Per claim of a pod, in order: (namespace, the claim spec as canonical JSON)."""


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
    refusal: Reason | None = None
    """`failure` as a value (`_failure_reason`): upstream's per-node error, said as it says it."""
    _why: Reason | None = None
    _candidates: frozenset[DeviceID] | None = None

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

    def why(self) -> Reason | None:
        """Why the shape does not fit, as a value with placeholders for the claim refs and the
        node name (None: upstream's per-node error says it, `failure`). Found on first use:
        only unplaced pods need it."""
        if self.failure is not None and (self.invalid_helps or not isinstance(self.failure, InvalidPools)):
            return None
        if self._why is None:
            claims = tuple(
                replace(c, namespace="", name=claim_placeholder(i)) for i, c in enumerate(self.problem.claims)
            )
            node = NODE if self.problem.node is not None else None
            self._why = why_unschedulable(replace(self.problem, claims=claims, node=node))
        return self._why

    def said(self) -> Reason:
        """Why the node did not take the shape, as a value with placeholders for the claim refs
        and the node (`reasons.words`): `why`, or upstream's per-node error (`refusal`)."""
        why = self.why()
        if why is not None:
            return why
        assert self.refusal is not None, "an answer without an allocation has a reason"
        return self.refusal


@dataclass
class _Tried:
    """One node an unplaced pod could not use: blocked (a reason) or an Answer."""

    node: NodeState
    blocked: Reason | None = None
    answer: Answer | None = None
    refs: list[str] | None = None
    """The claim refs of the answer's reason on this node (claims that differ by node:
    `Kind.WITH_CLAIMS`); None: the pod's, put in per pod (`NodeReasons`)."""


@dataclass
class _Placing:
    """The state of one first-fit run over `job`: nodes, what is in use, cached answers."""

    job: Job
    ledger: Ledger
    max_steps: int
    worlds_of: _Placing | None = field(default=None, repr=False)
    """A run over the same nodes, slices and gates whose worlds' static parts (pools, slices,
    devices, `DeviceMemo`) this one reads instead of gathering its own (`_shared_nodes`);
    dropped once read."""
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
        tuple[ShapeKey, frozenset[tuple[str | None, Reason]], tuple[tuple[str, int], ...]],
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
        other, self.worlds_of = self.worlds_of, None
        if other is not None and self._same_static(other):
            self.nodes = self._shared_nodes(other)
        else:
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

    def _same_static(self, other: _Placing) -> bool:
        """Whether `other` runs over the same nodes, slices (the same list) and node objects
        with the same gates: then its worlds are this run's, up to what is in use."""
        return (
            other.cluster.slices is self.cluster.slices
            and other.cluster.nodes is self.cluster.nodes
            and other.job.gates == self.job.gates
            and other.job.nodes == self.job.nodes
        )

    def _shared_nodes(self, other: _Placing) -> list[NodeState]:
        """The node states of a run over `other`'s nodes and slices (`_same_static`): worlds
        grouped as `other`'s, each with `other`'s world's pools, slices, pool ids, devices and
        static memo, and its own use (`_count_free`), versions and Problems. Why: what
        `_node_state` gathers per world reads the slices and the node only, and the reasons of
        the pods left out run one first fit on the input's cluster and one on the cluster after
        the plan (`planners.crowding`): at 10,000 nodes with slices of their own, ten thousand
        pools gathered twice. Both runs read the memo's static, never changed, objects."""
        mine: dict[int, World] = {}
        nodes: list[NodeState] = []
        for theirs in other.nodes:
            source = theirs.world
            world = mine.get(source.index)
            if world is None:
                world = mine[source.index] = World(
                    len(self.worlds),
                    source.pools,
                    source.slices,
                    source.pool_ids,
                    source.devices,
                    memo=source.memo,
                )
                self.worlds.append(world)
            world.nodes.append(theirs.index)
            nodes.append(NodeState(theirs.index, theirs.name, theirs.view, world))
        return nodes

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

    def may_try(self, unit: Unit, node: NodeState) -> tuple[Reason | None, Variant | None]:
        """Why `unit` may not use `node` — its scheduling constraints, then the node resources
        it needs there (cpu, memory, pod slots, extended resources) against what is free now —
        or (None, the unit's form on that node): the one place that decides it, before any
        device search."""
        if node.name in unit.blocked:
            return unit.blocked[node.name], None
        variant = self.book.variant(unit.needs, node.name)
        short = self.book.refusal(variant, node.name)
        return (Reason.of(Kind.NODE_SHORT, node=node.name, short=short), None) if short else (None, variant)

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

    def learn(self, shape: ShapeKey, node: NodeState, answer: Answer) -> None:
        """Keep `answer`, found without a search (`Twins`: a node equal up to names in the same
        state refused the shape), as the node's answer for `shape` at its current version, as
        `answer` keeps what it searched. Only an answer without an allocation: an allocation
        is searched on the node placed on."""
        if answer.assignment is not None:
            raise ValueError("learn: only an answer without an allocation is kept unsearched")
        self.answers[(shape, node.world.index)] = answer
        if answer.shareable:
            self._clean.add((shape, node.world.index))
        if answer.final():
            self.fails_for_good(shape, node.index)

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
            why = invalid_pools(problem)
            return Answer(node.version, names, problem, None, exc, shareable, helps, refusal=why)
        except FailedOnNode as exc:  # All mode on a pool not ready: this node only (kubernetes#141898)
            return Answer(node.version, names, problem, None, exc, shareable, refusal=_not_ready(problem))
        except SearchAborted as exc:
            if self.max_steps >= DEFAULT_MAX_STEPS:
                raise
            _raise_candidate_errors(problem)  # never turn a CEL error into "no fit"
            why = aborted(self.max_steps)
            return Answer(node.version, names, problem, None, exc, shareable, refusal=why)
        return Answer(node.version, names, problem, assignment, None, shareable)

    def _invalid_pools_help(self, node: NodeState, claims: Sequence[ResourceClaim]) -> bool:
        """Whether `claims` would fit on `node` with its invalid pools taken as valid: then
        the invalid pool is the cause of "no fit" and upstream's error names it; otherwise the
        reason must name the real shortage (`Answer.why`). Unsure (an error, or a pool left out
        for a problem, whose devices are unknown, unless its driver is not the claims':
        `Pool.left_out`, `problem.leftout`) counts as yes."""
        gates = self.job.gates
        if any(p.left_out and may_serve(self.cluster, claims, p.driver, gates) for p in node.pools.invalid()):
            return True
        pools = replace(node.pools, pools=[replace(p, invalid=None) for p in node.pools.pools])
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
        use: in the ledger's cluster (its snapshot's `allocate`, the one way a plan's claims
        enter the cluster after it), the in-use summary, and the versions of the nodes that
        see the pools they took devices from."""
        self._check(claims, node)
        self.ledger.after.allocate(claims)
        pools: set[PoolID] = set()
        for c in claims:
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

    def took(self, node: NodeState) -> None:
        """Node resources on `node` were taken outside `placed` (a pod held from elsewhere,
        `Resumable.hold`): a change for the cached answers, and a placement for `gone` (what
        only takes keeps what it knows valid)."""
        self._takes_only()
        self.changes.append(node.index)
        self._taken = len(self.changes)

    def release(self, claims: Sequence[ResourceClaim]) -> None:
        """The reverse of `commit`: the allocated `claims` no longer hold devices (taken out of
        the ledger's cluster, its snapshot's `remove`). What is in
        use on their devices is counted again from the claims still holding devices in their
        pools (a shared device may have other holders), and the nodes that see those pools
        are logged as changed (their cached answers are stale; `gone` is forgotten at the
        next use, `_takes_only`: something freed may fit again)."""
        self.ledger.after.remove(claims)
        pools: set[PoolID] = set()
        devices: set[DeviceID] = set()
        for c in claims:
            self._allocated.discard(c.key)
            alloc = c.status.allocation if c.status is not None else None
            for r in alloc.devices.results if alloc is not None else ():
                self._holders.get((r.driver, r.pool), {}).pop(c.key, None)
                pools.add((r.driver, r.pool))
                devices.add((r.driver, r.pool, r.device))
        if not pools:
            return
        in_use = self.in_use
        for dev in devices:
            in_use.dedicated.discard(dev)
            in_use.shared.discard(dev)
            in_use.capacity.pop(dev, None)
        holders = {k: h for pid in pools for k, h in self._holders.get(pid, {}).items()}
        more = in_use_from_claims(holders.values(), self.job.gates)
        in_use.dedicated |= more.dedicated & devices
        in_use.shared |= more.shared & devices
        for dev in devices & more.capacity.keys():
            in_use.capacity[dev] = more.capacity[dev]
        touched = self._touch(pools)
        for world in {id(w): w for pid in pools for w in self._by_pool.get(pid, ())}.values():
            world.free = sum(dev not in in_use.dedicated for dev in world.devices)
        self.changes.extend(touched)

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

    def fork(self) -> dict[str | None, Amounts | None]:
        """Start undoable placements (a gang's tentative ones): a layer of the ledger's
        snapshot (`planning.snapshot.Snapshot.fork`: the claims) and a copy of the node
        resources free, which `revert` puts back and `keep` drops. Why the snapshot's layer
        and not a copy of the claims of its own: one "cluster after a change"; it costs a
        copy of the pods dict more per gang try, which did not show: plain first fit of
        `benchmarks/gang_workloads.py` (64 and 128 nodes), CPU seconds over three runs on a
        busy machine, 1.2-2.0 and 5.4-6.4 with the layer against 1.2-2.2 and 4.8-6.1 with the
        copy of its own — within the noise, same plans)."""
        self.ledger.after.fork()
        return {n: dict(f) if f is not None else None for n, f in self.book.free.items()}

    def revert(self, free: dict[str | None, Amounts | None]) -> None:
        """Undo every placement since the matching `fork` (a gang short of its minCount): the
        claims and node resources as they were, what is in use recounted and every cached
        answer forgotten (the node versions move on, never back, so no stale answer is reused)."""
        self.ledger.after.revert()
        self.book.free = free
        self.recount()

    def keep(self) -> None:
        """Keep the placements since the matching `fork` (its layer joins the one below)."""
        self.ledger.after.commit()

    def collides(self, unit: Unit) -> bool:
        """A claim of the pod has the name of an allocated claim: the per-pod path leaves that
        claim out of what is in use, so this pod takes it (rare; never in valid input)."""
        return any(c.key in self._allocated for c in unit.claims)


@dataclass(frozen=True)
class _Nowhere:
    """Why a pod shape fits on no node at one state of the run, with placeholders for the
    claim refs: shared by every pod of that shape and those scheduling constraints that is
    tried before anything changes (a full cluster turns pod after pod away)."""

    whys: dict[str | None, Reason]
    """Each node's reason, in node order (values with placeholders: `NodeReasons`)."""
    facts: tuple[tuple[str, Fact], ...]
    """`Kind.NO_NODE`'s facts but the claim refs (`reasons.words.nowhere`)."""
    error: DRASolverError | None
    errors: list[DRASolverError | None]
    """Each node's error, in node order: `error` is the last of them."""


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
    tried anew): its reasons kept for every other node, only those nodes' taken anew. Why: a
    full cluster turns a shape away after each change, at 10,000 nodes."""
    if before is None or not len(before.whys) == len(before.errors) == len(tried):  # names unique
        whys = node_whys(tried)
        errors = [t.answer.failure if t.answer is not None else None for t in tried]
    else:
        whys, errors = dict(before.whys), list(before.errors)
        for i in again:
            whys[tried[i].node.name] = _why_on(tried[i])
            answer = tried[i].answer
            errors[i] = answer.failure if answer is not None else None
    error = next((e for e in reversed(errors) if e is not None), None)
    return _Nowhere(whys, nowhere_facts(list(whys.items())), error, errors)


def node_whys(tried: Sequence[_Tried]) -> dict[str | None, Reason]:
    """Per node tried, why it did not take the pod: a value (the node's refusal, or its
    answer's reason with the claim refs and the node as placeholders)."""
    return {t.node.name: _why_on(t) for t in tried}


def _why_on(t: _Tried) -> Reason:
    if t.blocked is not None:  # a refusal names its node where said, "the node" in a group
        return t.blocked
    assert t.answer is not None
    why = t.answer.said()
    if t.refs is not None:  # claims of this node's own (a special claim): their refs now
        return Reason(Kind.WITH_CLAIMS, "", (("why", why), ("claims", tuple(t.refs))))
    return why


def _not_ready(problem: Problem) -> Reason:
    """Upstream's per-node error for allocationMode All on a pool not ready, as a value: the
    first alternative that records it (`Alternative.fatal`), its claim as a placeholder."""
    alt, fatal = next((a, a.fatal) for a in problem.alternatives if a.fatal is not None)
    return fatal.about("/" + claim_placeholder(alt.claim))


def _refs(claims: Sequence[ResourceClaim]) -> list[str]:
    return [c.namespaced_name for c in claims]


def _unplaced(unit: Unit, nowhere: _Nowhere, n_nodes: int) -> PodPlan:
    """The PodPlan of a pod no node takes: one line and every node's reason (`node_reasons`)."""
    refs = _refs(unit.claims)
    return PodPlan(
        unit.name,
        None,
        list(unit.claims),
        None,
        unit.priority,
        error=nowhere.error if n_nodes == 1 else None,
        node_reasons=NodeReasons(nowhere.whys, refs),
        why=Reason(Kind.NO_NODE, unit.name, (*nowhere.facts, ("claims", tuple(refs)))),
    )


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
