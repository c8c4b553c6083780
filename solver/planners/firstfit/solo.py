"""Where a pod would fit alone: each node's answer before any pod of the plan (`Solo`).

Why: the reasons of pods left out separate nodes where only the plan's other pods stand in
the way (`planners.crowding`) from nodes that never take the pod.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ...api.models import ResourceClaim
from ...inventory import DeviceID, PoolID
from ...planning.job import Job, Unit
from ...planning.ledger import Ledger
from ...problem.demand import demand_total
from ...reasons import Reason
from .engine import Answer, NodeState, ShapeKey, _Placing, _refs, _shape, _Tried, node_whys
from .twins import Twins


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

    def __init__(self, job: Job, max_steps: int, like: Solo | None = None) -> None:
        """`like`: a Solo over the same nodes and slices (the cluster before a plan, this one
        after it), whose nodes' static parts this one shares (`_Placing.worlds_of`, `like`)."""
        self._run: _Placing = _Placing(job, Ledger(job), max_steps, like._run if like is not None else None)
        self._by_name = {n.name: n for n in self._run.nodes}
        self._seen: dict[Hashable, tuple[list[Alone], dict[str | None, Reason]]] = {}
        self._fit: dict[tuple[ShapeKey, str | None], bool] = {}
        self._twins = Twins(self._run)
        """Answers shared between nodes equal up to names (none of the plan's pods is placed
        here: a node's twins stay its twins)."""
        if like is not None:
            self.like(like)

    def like(self, other: Solo) -> Solo:
        """This Solo, sharing with `other` the nodes' twin keys up to what is in use (slices and
        node facts up to names, `Twins.share_static`) when both are over the same nodes and
        the same slices — a cluster before and after a plan; returns self. Why: the reasons of
        the pods left out ask both (`planners.crowding`), and each key is the node's slices
        written as JSON: computed once per node instead of twice."""
        mine, theirs = self._run, other._run
        if mine.job.nodes == theirs.job.nodes and mine.cluster.slices is theirs.cluster.slices:
            self._twins.share_static(other._twins)
        return self

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

    def nodes(self, unit: Unit) -> tuple[list[Alone], dict[str | None, Reason]]:
        """Where `unit` fits alone, and every other node's reason there (as `PodPlan.node_reasons`
        holds it: values with the claim refs as placeholders, `NodeReasons`). Pods of one
        shape, scheduling constraints and demand share the answer, as first fit's `_Nowhere`
        is shared."""
        key = self.key(unit)
        seen = self._seen.get(key) if key is not None else None
        if seen is None:
            seen = self._nodes(unit, _shape(unit.claims))
            if key is not None:
                self._seen[key] = seen
        return seen

    def _nodes(self, unit: Unit, base: ShapeKey) -> tuple[list[Alone], dict[str | None, Reason]]:
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
            answer = self._answer(claims, shape, node, twins=not variant.claims)
            if answer.assignment is None:
                tried.append(_Tried(node, None, answer, _refs(claims) if variant.claims else None))
                continue
            fits.append(Alone(node.name, answer.candidate_devices(), node.pool_ids))
        return fits, node_whys(tried)

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
            answer = (
                None if not claims else self._answer(claims, shape, self._by_name[node], not variant.claims)
            )
            fit = answer is None or answer.assignment is not None
            if uniform:
                self._fit[(base, node)] = fit
            if fit:
                out.add(node)
        return out

    def _answer(
        self, claims: Sequence[ResourceClaim], shape: ShapeKey, node: NodeState, twins: bool
    ) -> Answer:
        """The reference search's answer for `claims` on `node` (`_Placing.answer`), or, on a
        node equal up to names to one already asked, that node's answer with the names of this
        one (`Twins`). Why: a solo answer is asked of every node for every pod shape left out,
        before and after the plan, while a cluster has few kinds of node. `twins`: the claims
        are the same on every node (no claim of an extended resource)."""
        if not twins:
            return self._run.answer(claims, shape, node)
        return self._twins.answer(claims, shape, node)
