"""Answers shared between nodes equal up to names (`Twins`).

Why: the words of a pod no node takes ask every node, and a first-fit run asks the reference
search on each (a Problem built, searched and explained per node), while a cluster has few
kinds of node and a full cluster few states of them: `Solo` (where a pod fits alone, before
and after a plan) and `Resumable` (a kind of pod only ever placed before, worded on every node
of a full cluster) ask the first node of each kind and state, and read its answer, with the
names put in, on its twins.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ...api.models import ResourceClaim
from ...errors import FailedOnNode, InvalidPools
from ...inventory import node_up_to_name, slices_up_to_names
from ...reasons import Reason, names_places, renamed
from .engine import Answer, NodeState, ShapeKey, _Placing

_Names = tuple[str, ...]
_Static = tuple[str, dict[str, str], _Names]
"""A world's static twin key (`Twins._static_key`), its pools' aliases and its slices' names."""
_Key = tuple[str, str, dict[str, str], _Names]
"""A world's twin key now: the static part, what is in use, its pools' aliases, its slices' names."""


class Twins:
    """The answers of one first-fit run's nodes shared up to names (the module docstring): a
    node's *twin key* is what its answers read with its name and its pools' names taken out —
    its slices, its labels (the hostname label taken out when it is the node's name) and
    declared features, and what is in use of its pools' devices; precompute reads nothing else
    of a node (`problem.devices.context_from`). Only for a node whose world holds its own
    slices and nothing else, without DeviceTaintRules (they select devices by pool and name),
    as `aggregated.classes.twin_key`. The part without what is in use is kept per world (slices
    and nodes do not change during a run); the whole key per world version (a placement or a
    release in its pools makes a new one)."""

    def __init__(self, run: _Placing) -> None:
        self._run = run
        self._static: dict[int, _Static | None] = {}
        """World -> its slices and node facts up to names, as canonical JSON, its pools'
        aliases and its slices' names in order; None: no twin (`_static_key`)."""
        self._keys: dict[int, tuple[int, _Key | None]] = {}
        """World -> (its version, its twin key then: the static part, what is in use, aliases,
        slice names)."""
        self._answers: dict[tuple[ShapeKey, str, str], tuple[Answer, dict[str, str], str | None, _Names]] = {}
        """(shape, twin key) -> the answer of the first such node, with its pools' aliases,
        when its reason names the node, a pool or a slice (`reasons.names_places`), the node's
        name, and its slices' names (a twin's slices correspond one to one, in order)."""

    def share_static(self, other: Twins) -> None:
        """Keep the worlds' static parts with `other`'s (both fill one dict): for a run over
        the same nodes and slices as `other`'s, whose worlds are then the same, in the same
        order (`_Placing._node_state`), only what is in use differs (`Solo.like`)."""
        self._static = other._static

    def prepare(self) -> int:
        """Compute every world's static part now (the run's owner does it ahead of the calls
        that must be quick, `Resumable.warm`); returns how many worlds may have twins."""
        return sum(self._static_of(node) is not None for node in self._run.nodes)

    def answer(self, claims: Sequence[ResourceClaim], shape: ShapeKey, node: NodeState) -> Answer:
        """The reference search's answer for `claims` (the same on every node: no claim of an
        extended resource) on `node` (`_Placing.answer`), or, on a node equal up to names to one
        already asked (the class docstring), that node's answer with the names of this one.
        An answer is shared only when it holds with the names put in (`_portable`)."""
        twin = self._key(node)
        if twin is None:
            return self._run.answer(claims, shape, node)
        static, used, aliases, names = twin
        kept = self._answers.get((shape, static, used))
        if kept is not None:
            source, theirs, named, their_names = kept
            nodes = {named: str(node.name)} if named is not None else None
            slices = dict(zip(their_names, names, strict=True))
            answer = _renamed(source, theirs, aliases, node.version, nodes, slices)
            if answer.assignment is None:  # kept as searched there (cached, the node passed over)
                self._run.learn(shape, node, answer)
            return answer
        answer = self._run.answer(claims, shape, node)
        if _portable(answer):
            why = answer.said() if answer.assignment is None else None
            named = node.name if why is not None and names_places(why) else None
            self._answers[(shape, static, used)] = (answer, aliases, named, names)
        return answer

    def _key(self, node: NodeState) -> _Key | None:
        world = node.world
        kept = self._keys.get(world.index)
        if kept is not None and kept[0] == world.version:
            return kept[1]
        static = self._static_of(node)
        key = None if static is None else (static[0], self._used(node, static[1]), static[1], static[2])
        self._keys[world.index] = (world.version, key)
        return key

    def _static_of(self, node: NodeState) -> _Static | None:
        world = node.world
        if world.index not in self._static:
            self._static[world.index] = self._static_key(node)
        return self._static[world.index]

    def _static_key(self, node: NodeState) -> _Static | None:
        """Besides the slices up to names, what their names decide in a reason (their order
        by name: which of two slices listing a device is named first) and a left-out slice's
        problem but its name (`planning.leftpools`): twins' reasons then differ in the names
        alone, each slice's the one at its place in the other's list."""
        run, name = self._run, node.name
        if name is None or run.cluster.taint_rules or not node.slices or len(node.world.nodes) != 1:
            return None
        aliases: dict[str, str] = {}
        slices = slices_up_to_names(node.slices, name, aliases)
        if slices is None or node.view is None:
            return None
        names = tuple(s.metadata.name for s in node.slices)
        rank = {n: i for i, n in enumerate(sorted(names))}
        left = [repr(s.left_out.without("slice")) if s.left_out is not None else "" for s in node.slices]
        key = [slices, [rank[n] for n in names], left, *node_up_to_name(node.view)]
        return json.dumps(key, sort_keys=True), aliases, names

    def _used(self, node: NodeState, aliases: dict[str, str]) -> str:
        """What is in use of the node's devices now, its pools' names taken out. Nothing in use
        anywhere (the input's cluster, before a plan: `Solo`) is the empty list at once,
        without a look at each of the node's devices."""
        in_use = self._run.in_use
        dedicated, shared, consumed = in_use.dedicated, in_use.shared, in_use.capacity
        if not (dedicated or shared or consumed):
            return "[]"  # json.dumps([]): what the loop below gives when nothing is allocated
        used = []
        for sl in node.slices:
            driver, pool = sl.spec.driver, sl.spec.pool.name
            for d in sl.spec.devices or ():
                dev = (driver, pool, d.name)
                if dev in dedicated or dev in shared or dev in consumed:  # `InUse.allocated`
                    capacity = sorted((k, str(v)) for k, v in consumed.get(dev, {}).items())
                    used.append([driver, aliases[pool], d.name, dev in dedicated, dev in shared, capacity])
        return json.dumps(sorted(used))


def _portable(answer: Answer) -> bool:
    """Whether `answer` holds for a node equal up to names (`Twins`) with the names put in: no
    error but upstream's per-node ones (an invalid pool, a pool not ready: their reasons are
    values; a step budget cut short, a CEL error's words are not), and a reason (or the
    error's, `refusal`) whose names are placeholders (the claims, the node) or facts naming
    the node, a pool or a slice, which the twin re-makes with its own names
    (`reasons.renamed`: a skipNodeOperations slice's node, a pool's, a device's, KEP-5963's
    pools, the slices of an invalid or incomplete pool, a left-out slice). Decided from the
    reason's facts, not by searching its words."""
    if not answer.shareable or not isinstance(answer.failure, InvalidPools | FailedOnNode | None):
        return False
    return answer.assignment is not None or answer.why() is not None or answer.refusal is not None


def _renamed(
    source: Answer,
    aliases: dict[str, str],
    mine: dict[str, str],
    version: int,
    nodes: dict[str, str] | None,
    slices: dict[str, str],
) -> Answer:
    """`source` (a `_portable` answer on a node whose pools have `aliases`) on a node equal up
    to names whose pools have `mine`: the same decision and words, its candidate devices in
    this node's pools, at this node's `version`; its reason's facts naming the node, a pool or
    a slice re-made with this node's (`nodes`: the other node's name to this one's, None when
    none names a place; `slices`: the other node's slices to this one's). Its assignment is
    the other node's: read whether there is one, never place by it (a placement's devices
    are searched on the node itself)."""
    pools = {alias: pool for pool, alias in mine.items()}
    by_pool = {pool: pools[alias] for pool, alias in aliases.items()}

    def put(why: Reason | None) -> Reason | None:
        return renamed(why, nodes, by_pool, slices) if why is not None and nodes is not None else why

    if source.assignment is not None:
        out = Answer(version, source.names, source.problem, source.assignment, None, True)
    else:  # upstream's per-node error too: its reason re-made (the error itself is read on one node only)
        refusal = put(source.refusal)
        out = Answer(
            version, source.names, source.problem, None, source.failure, True, source.invalid_helps, refusal
        )
    if source.assignment is None:
        out._why = put(source.why())
    else:
        out._candidates = frozenset(
            (driver, pools[aliases[pool]], dev) for driver, pool, dev in source.candidate_devices()
        )
    return out


__all__ = ["Twins"]
