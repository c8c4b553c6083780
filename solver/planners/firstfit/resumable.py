"""First fit kept between calls: place, hold and release pods one at a time (`Resumable`).

Why: `replan.planner.Planner.update` re-plans a changed cluster from the state a plan left, asking
only the nodes not already known to refuse a pod of the same key.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ... import interrupt
from ...api.models import ResourceClaim
from ...errors import CelError
from ...planning.job import Job, Unit
from ...planning.ledger import Ledger
from ...planning.outcome import PodPlan
from ...problem.demand import Needs, demand_total
from ...problem.resources import take
from ...reasons import Reason
from ...reference import DEFAULT_MAX_STEPS
from .batch import FirstFit
from .engine import NodeState, ShapeKey, _fit_on, _Nowhere, _nowhere, _Placing, _shape, _Tried, _unplaced
from .twins import Twins

_KEY_CACHE = 1 << 18
"""`Resumable._key`'s caches are emptied past this many entries (a planner updated for days)."""


_Key = tuple[ShapeKey, frozenset[tuple[str | None, Reason]], tuple[tuple[str, int], ...]]
"""(shape, refused nodes, node-resource demand): pods of one key get the same answers."""


@dataclass(frozen=True)
class _Open:
    """`Resumable`: at change `at` of the run's log, the nodes (indices) not known to refuse a
    pod of one key; every other node refused one then."""

    at: int
    nodes: tuple[int, ...]


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
        self._blocked: dict[
            int, tuple[Mapping[str | None, Reason], frozenset[tuple[str | None, Reason]]]
        ] = {}
        self._demands: dict[int, tuple[tuple[Needs, ...], tuple[tuple[str, int], ...]]] = {}
        self._units: dict[int, tuple[Unit, ShapeKey, _Key, bool]] = {}
        """Per-object caches of `_key`'s parts (by id, holding the object so the id stays its
        own): a unit kept by the caller and re-used across calls is keyed once (`_units`:
        with whether it is uniform)."""
        self._within_of: tuple[Collection[str | None], set[int]] | None = None
        self._twins = Twins(self._run)
        """The answers of `_nowhere`'s tries, shared between nodes equal up to names."""

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
            tried[i] = self._try(unit, base, run.nodes[i])
        nowhere = _nowhere(tried, seen[1] if seen is not None else None, again)
        run.nowhere[key] = (len(run.changes), nowhere, tried)
        return nowhere

    def _try(self, unit: Unit, base: ShapeKey, node: NodeState) -> _Tried:
        """`FirstFit._try` (why `node` does not take `unit` now), its answer shared with the
        nodes equal up to names in the same state (`Twins`). Why: a kind of pod first left
        out by an update, on a full cluster, is worded on every node, and most nodes of a full
        cluster are one of a few kinds in one of a few states."""
        run = self._run
        why, variant = run.may_try(unit, node)
        if variant is None:
            return _Tried(node, why)
        if variant.claims or not unit.claims:
            return FirstFit._try(run, unit, base, node)
        answer = self._twins.answer(unit.claims, base, node)
        if answer.assignment is not None:  # not expected (no node takes it): asked of the node
            answer = run.answer(unit.claims, base, node)
        return _Tried(node, None, answer)

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
        node's reason; and what makes nodes equal up to names (`Twins.prepare`), so that the
        words of a pod left out are asked once per kind and state of node. Returns the number
        of shapes and keys warmed."""
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
        self._twins.prepare()
        keys: set[_Key] = set()
        for unit in units:
            if run.collides(unit) or not run.uniform(unit) or not unit.claims:
                continue
            base, key = self._known(unit)  # kept: the caller tries these units again later
            if key in keys or key in self._open:
                continue
            keys.add(key)
            try:
                first = next((node.index for node in run.nodes if self._takes(unit, base, node)), None)
            except CelError:  # its claim errors where the search meets a device: the plan holds
                continue  # the pod with it (`triage.held_for_cel_error`); nothing to prepare
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
            run.took(states[0])

    def release(self, claims: Sequence[ResourceClaim], node: str | None, demand: Mapping[str, int]) -> None:
        """Forget a placed pod: its allocated `claims` no longer hold devices, and its node
        resources `demand` on `node` are free again."""
        run = self._run
        run.release(claims)
        if demand:
            for state in self._states([node]):
                run.book.give(demand, node)
                run.changes.append(state.index)
