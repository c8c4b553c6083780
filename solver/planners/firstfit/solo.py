"""Where a pod would fit alone: each node's answer before any pod of the plan (`Solo`).

Why: the reasons of pods left out separate nodes where only the plan's other pods stand in
the way (`planners.crowding`) from nodes that never take the pod.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ...api.models import ResourceClaim
from ...inventory import (
    DeviceID,
    PoolID,
    node_up_to_name,
    slices_up_to_names,
)
from ...planning.job import Job, Unit
from ...planning.ledger import Ledger
from ...problem.demand import demand_total
from ...reasons.words import with_refs
from .engine import Answer, NodeState, ShapeKey, _node_texts, _Placing, _refs, _shape, _Tried


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
        self._twin_of: dict[int, tuple[str, dict[str, str]] | None] = {}
        """World -> its key up to names and its pools' aliases (`_twin`), None: no twin."""
        self._twins: dict[tuple[ShapeKey, str], tuple[Answer, dict[str, str]]] = {}
        """(shape, twin key) -> the answer of the first such node, with its pools' aliases."""

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
            answer = self._answer(claims, shape, node, twins=not variant.claims)
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
        node equal up to names to one already asked (`_twin`), that node's answer with the
        names of this one. Why: a solo answer is asked of every node for every pod shape left
        out, before and after the plan, while a cluster has few kinds of node. `twins`: the
        claims are the same on every node (no claim of an extended resource)."""
        twin = self._twin(node) if twins else None
        if twin is None:
            return self._run.answer(claims, shape, node)
        key, aliases = twin
        kept = self._twins.get((shape, key))
        if kept is not None:
            return _renamed(kept[0], kept[1], aliases)
        answer = self._run.answer(claims, shape, node)
        if _portable(answer, node, aliases):
            self._twins[(shape, key)] = (answer, aliases)
        return answer

    def _twin(self, node: NodeState) -> tuple[str, dict[str, str]] | None:
        """What the answers on `node` read, with its name and its pools' names taken out, as
        canonical JSON, and its pools' aliases; None where that is not all (cached per world).
        Read: the node's slices, its labels (the hostname label taken out when it is the node's
        name) and declared features, and what is in use of its pools' devices — precompute
        reads nothing else of a node (`problem.devices.context_from`). Only for a node whose
        world holds its own slices and nothing else, without DeviceTaintRules (they select
        devices by pool and name), as `aggregated.classes.twin_key`."""
        world = node.world
        if world.index in self._twin_of:
            return self._twin_of[world.index]
        self._twin_of[world.index] = out = self._twin_key(node)
        return out

    def _twin_key(self, node: NodeState) -> tuple[str, dict[str, str]] | None:
        run, name = self._run, node.name
        if name is None or run.cluster.taint_rules or not node.slices or len(node.world.nodes) != 1:
            return None
        aliases: dict[str, str] = {}
        slices = slices_up_to_names(node.slices, name, aliases)
        if slices is None or node.view is None:
            return None
        used = []
        in_use = run.in_use
        for sl in node.slices:
            for d in sl.spec.devices or ():
                dev = (sl.spec.driver, sl.spec.pool.name, d.name)
                if in_use.allocated(dev):
                    capacity = sorted((k, str(v)) for k, v in in_use.capacity.get(dev, {}).items())
                    held = [dev in in_use.dedicated, dev in in_use.shared, capacity]
                    used.append([dev[0], aliases[dev[1]], d.name, *held])
        return json.dumps([slices, sorted(used), *node_up_to_name(node.view)], sort_keys=True), aliases


def _portable(answer: Answer, node: NodeState, aliases: dict[str, str]) -> bool:
    """Whether `answer` on `node` holds for a node equal up to names (`Solo._twin`) with the
    names put in: no error (its words may name the node, a pool or a claim) and a reason that
    names neither the node nor one of its pools (as a device's or a slice's name would)."""
    if not answer.shareable or answer.failure is not None:
        return False
    if answer.assignment is not None:
        return True
    words = answer.reason()
    return str(node.name) not in words and not any(pool in words for pool in aliases)


def _renamed(source: Answer, aliases: dict[str, str], mine: dict[str, str]) -> Answer:
    """`source` (a `_portable` answer on a node whose pools have `aliases`) on a node equal up
    to names whose pools have `mine`: the same decision and words, its candidate devices in
    this node's pools."""
    pools = {alias: pool for pool, alias in mine.items()}
    out = Answer(source.version, source.names, source.problem, source.assignment, None, True)
    if source.assignment is None:
        out._reason = source.reason()
    else:
        out._candidates = frozenset(
            (driver, pools[aliases[pool]], dev) for driver, pool, dev in source.candidate_devices()
        )
    return out
