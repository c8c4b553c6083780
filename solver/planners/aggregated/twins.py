"""The expansion's Problems shared between nodes equal up to names (`Twins`).

Why: expanding an aggregated plan to devices (`expansion._place_nodes`) builds, per node, the
Problem of its pods' claims on its devices, to read the devices its pattern was given — once
per node class and pattern (`patterns.allocate_node`, `ModelContext.decided`) — and to write
the results. Over 10,000 nodes that precompute was most of the expansion, while the nodes
given the same pods are mostly twins: the same Problem with other names.

Two nodes share an expansion when they have equal `classes.twin_key`s (their slices, the
claims holding their devices and the node's labels and features, names taken out), the same
*order* of their slices in the Problem — devices are listed by pool name, then slice name
(`inventory.gather_pools`), names the key leaves out — and pods of the same pod classes in
the same order (`classes.pod_classes`: equal claims up to names, weights). Then the later
node's Problem is the first one's with the node's, pools', slices' and claims' names
replaced, device for device at the same indices: its `index_signature` and used devices are
equal, so `allocate_node` would return the first node's assignment for it (from
`ModelContext.decided`, no search and no work charged) — the plan is the same. The first
node's Problem, renamed (`_renamed`), gives its results by the same code
(`Ledger.results`), share IDs drawn in the same order. Shared only where the Problem holds
no words that name a device, pool or claim (errors, blocked All requests, invalid or
incomplete pools: `_plain`), and none of the pods' claims is allocated already.

Not shared: the checker. Every node's claims are checked against its own view
(`Ledger.commit`), as before — it reads the raw objects, not this module's judgment that two
nodes are twins, so a wrong twin would be a violation, never a wrong allocation.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from ...api.cluster import Cluster
from ...api.models import ResourceClaim
from ...problem.flat import Assignment, DeviceInfo, Problem
from .classes import twin_key
from .patterns import ModelContext


@dataclass
class Twins:
    """One expansion's Problems by twin key (the module docstring): the first node of each
    key (its view, its Problem and assignment), read for the nodes after it."""

    ctx: ModelContext
    kept: dict[Hashable, tuple[Cluster, Problem, Assignment | None]] = field(default_factory=dict)
    _class_of: dict[int, int] | None = None

    def key(
        self, node: str, view: Cluster, units: Sequence[int], claims: Sequence[ResourceClaim]
    ) -> Hashable:
        """What decides `node`'s Problem and assignment for the pods `units` (their `claims`)
        up to names; None: not shared (no twin key, a pod outside the pod classes, a claim
        allocated already)."""
        ctx = self.ctx
        if ctx.views is None or ctx.fixed_views is not None:
            return None
        if any(c.status is not None and c.status.allocation is not None for c in claims):
            return None
        if self._class_of is None:
            self._class_of = {i: k.index for k in ctx.pods for i in k.units}
        kinds = tuple(self._class_of.get(i) for i in units)
        if None in kinds:
            return None
        twin = twin_key(ctx.cluster, ctx.views, node)
        if twin is None:
            return None
        slices = view.slices
        order = tuple(
            sorted(
                range(len(slices)),
                key=lambda i: (
                    slices[i].spec.driver.encode(),
                    slices[i].spec.pool.name.encode(),
                    slices[i].metadata.name,
                ),
            )
        )
        return (twin, order, kinds)

    def known(
        self, key: Hashable, node: str, view: Cluster, claims: Sequence[ResourceClaim]
    ) -> tuple[Problem, Assignment | None] | None:
        """The Problem and assignment of `node` (its `view`, its pods' `claims`) read from the
        first node of `key`, renamed; None: none kept."""
        if key is None or key not in self.kept:
            return None
        source, problem, assignment = self.kept[key]
        return _renamed(problem, source, view, node, claims), assignment

    def keep(self, key: Hashable, view: Cluster, problem: Problem, assignment: Assignment | None) -> None:
        """The first node of `key`: its view, Problem and assignment, for its twins (when
        `_plain`)."""
        if key is not None and _plain(problem):
            self.kept[key] = (view, problem, assignment)


def _plain(problem: Problem) -> bool:
    """No words in the Problem that name a device, pool or claim of its node: no invalid or
    incomplete pool, no blocked or fatal All request, no candidate with an error."""
    if problem.invalid_pools or problem.incomplete_pools:
        return False
    return all(
        a.all_blocked is None and a.fatal is None and all(c.error is None for c in a.candidates)
        for a in problem.alternatives
    )


def _renamed(
    problem: Problem, source: Cluster, target: Cluster, node: str, claims: Sequence[ResourceClaim]
) -> Problem:
    """`problem` (built on the view `source`) as built on its twin's view `target` for `node`
    and `claims`: the node's, pools', slices' and claims' names replaced (slices and pools
    correspond by position in the views, as `twin_key` compares them)."""
    pools: dict[str, str] = {}
    slices: dict[str, str] = {}
    for a, b in zip(source.slices, target.slices, strict=True):
        pools.setdefault(a.spec.pool.name, b.spec.pool.name)
        slices[a.metadata.name] = b.metadata.name

    def device(d: DeviceInfo) -> DeviceInfo:
        return _copy(
            d,
            pool=pools[d.pool],
            slice_name=slices[d.slice_name],
            node_scope=("node", node) if d.node_scope[0] == "node" else d.node_scope,
            compat=tuple(((drv, pools[p], cset), groups) for (drv, p, cset), groups in d.compat),
        )

    return replace(
        problem,
        node=node,
        devices=tuple(device(d) for d in problem.devices),
        counters=tuple(_copy(c, pool=pools[c.pool]) for c in problem.counters),
        claims=tuple(
            _copy(info, namespace=claims[info.index].metadata.ns, name=claims[info.index].metadata.name)
            for info in problem.claims
        ),
        compat_baseline={(drv, pools[p], cset): st for (drv, p, cset), st in problem.compat_baseline.items()},
    )


_T = TypeVar("_T")


def _copy(obj: _T, **changes: object) -> _T:
    """A copy of the frozen dataclass `obj` (plain fields, no `__post_init__`, as `problem.flat`'s)
    with `changes`. Why not `dataclasses.replace`: it calls `__init__` with every field, 30 µs a
    device on a busy core, and a renamed Problem copies every device of the node — the
    renaming would cost a tenth of the precompute it saves."""
    out = object.__new__(type(obj))
    out.__dict__.update(obj.__dict__, **changes)
    return out


__all__ = ["Twins"]
