"""The local re-solve's second stage (`replan.local`): the region's plan an update takes —
the most weight among the plans that pay for the pods they disturb, then the fewest pods of
the last plan moved or left out.

Why: the aggregated model maximizes weight and does not count moves; its plan may reshuffle
the region (27 nodes, 62 pods moved for a gain of 1 on `workloads.mixed_cluster`, 1 % churn)
where a plan of the same weight leaves one pod out and moves none. Putting back, afterwards,
the groups of nodes that gain nothing (`local.revert`, `local.home`) cannot undo a reshuffle
whose groups each gain a little. And a user of `Planner.update` runs pods where the last plan
put them: an update that moves many of them to place one more pod of priority 0 disturbs
more than it gains. So the rule (docs/semantics.md, "Re-planning"): a pod of the last plan is
moved or left out only where the update gains at least `PRICE` of weight (one pod of priority
0) per pod it so disturbs; among the plans that keep the rule, the most weight, then the
fewest disturbed. The last plan keeps it (it gains 0 and disturbs none), so there is always
one. A caller who wants the most weight whatever moves plans afresh (`dra_solver.plan`).

The model: every pod of the region or offered has a *kind* — its claims (namespace and spec),
its node-resource demand and the region nodes it may not use (`kind_key`): pods of one kind
fit on a node in the same ways, so which pods a node can hold depends on how many of each
kind, not on which (the aggregated model's `master.pod_kinds`, with the same key). A node's
*pattern* is its count per kind. Each region node takes one pattern (or none) from those that
the last plan or the model's plan put on a node alike to it (`local._alike`: the same
devices, attributes, labels but the hostname, resources and taints, no pod bound to it in the
input) and that none of its kinds refuses — each held by a node exactly like it, so valid
there: the last plan's checked, the model's as valid as the model's own plan (the expansion
then chooses devices and checks them; `local.resolve` checks the rule again on the plan it
returns). Counts of pods per kind and priority fill the patterns' slots; a pod *stays* when
it fills a slot of its kind on the node it had. One CP-SAT model: the rule as a constraint
(`PRICE` x (held - staying) <= weight - had), the objective (held + 1) x weight + staying,
hinted with the model's plan.

What it proves: the best plan under the rule among the plans made of those patterns, not
among every plan of the region (a plan needing a pattern neither plan shows is not seen).
Deterministic: one worker, the seed, `LIMIT` deterministic seconds (`cpsat.cp_solver`); cut
short it keeps the best plan found, which keeps the rule."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..cpsat import cp_solver, found, new_cp_model
from ..planners.aggregated.classes import kind_facts
from ..planning.job import Unit
from ..planning.outcome import PodPlan
from ..problem.flat import claim_weight

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

LIMIT = 0.2
"""CP-SAT budget of the stage, in deterministic seconds (its model is a few hundred counts)."""
PRICE = 1
"""The weight an update must gain per pod of the last plan it moves or leaves out: the weight
of one pod of priority 0 (`claim_weight`). docs/semantics.md, "Re-planning"."""

Pattern = tuple[tuple[int, int], ...]
"""A node's pods as (kind, count) pairs, sorted: what decides whether they fit there."""
Stay = tuple[int, int, str, bool]
"""Pods that may stay: (kind, priority, their node, placed there by the last plan)."""


def kind_key(unit: Unit, inside: set[str]) -> Hashable:
    """What decides whether a pod fits on a region node: its claims (namespace and spec), its
    node-resource demand and the region nodes it may not use (`aggregated.master.pod_kinds`'
    key, nodes outside the region left out: the stage places pods inside it only)."""
    refused = frozenset(n for n in unit.blocked if n is not None and n in inside)
    return (*kind_facts(unit), refused)


@dataclass(frozen=True)
class _Region:
    """What the stage reads of the region: the units (`was`: their current plans), each one's
    kind, the node of each placed one (`home`), those placed by the last plan (`kept`), the
    units per (kind, priority) and the nodes in order."""

    units: Sequence[Unit]
    was: Sequence[PodPlan]
    kind: Sequence[int]
    home: Mapping[int, str]
    kept: Collection[int]
    members: Mapping[tuple[int, int], list[int]]
    area: Sequence[str]


@dataclass(frozen=True)
class _Solution:
    """The model's answer: each node's pattern, the pods placed per (kind, priority), and how
    many stay per `Stay`."""

    chosen: Mapping[str, Pattern]
    counts: Mapping[tuple[int, int], int]
    staying: Mapping[Stay, int]


def fewest_moves(
    units: Sequence[Unit],
    was: Sequence[PodPlan],
    placements: Mapping[str, list[int]],
    area: Sequence[str],
    alike: Callable[[str], str],
    seed: int,
    kept: Collection[int],
) -> dict[str, list[int]] | None:
    """The region's placements (node -> units, `area`'s order) of the most weight among those
    that pay for what they disturb, then the fewest pods of the last plan moved or left out,
    then the fewest of the others `was` places (module docstring), over the patterns of `was`
    and of `placements` (the model's plan); the placements of `was` when nothing gains under
    that rule. `kept`: the units `was` places where the last plan did (the others were placed
    by this update's first fit: no one runs them yet, moving them disturbs nothing). None when
    the stage does not apply (a pod of several members, a node refusing the pods it holds) or
    its search finds no plan."""
    if any(len(u.members) > 1 for u in units):
        return None
    inside = set(area)
    keys: dict[Hashable, int] = {}
    kind = [keys.setdefault(kind_key(u, inside), len(keys)) for u in units]
    members: dict[tuple[int, int], list[int]] = {}
    for i, u in enumerate(units):
        members.setdefault((kind[i], u.priority), []).append(i)
    home = {i: p.node for i, p in enumerate(was) if p.placed and p.node is not None and p.node in inside}
    region = _Region(units, was, kind, home, kept, members, area)
    choices = _choices(region, placements, alike)
    if choices is None:
        return None
    solution = _solve(region, placements, choices, seed)
    return None if solution is None else _assign(region, solution)


def _choices(
    region: _Region, placements: Mapping[str, list[int]], alike: Callable[[str], str]
) -> dict[str, list[Pattern]] | None:
    """Each node's patterns: those of `was` and of `placements` on the nodes alike to it that
    none of their kinds refuses there; None when a plan's own pattern is refused on its node
    (a pod a plan put where it may not go: not the plans this stage reads)."""
    inside = set(region.area)
    refused: dict[int, frozenset[str]] = {}
    for i, u in enumerate(region.units):
        refused.setdefault(region.kind[i], frozenset(n for n in u.blocked if n is not None and n in inside))
    on: dict[str, list[int]] = {}
    for i, node in region.home.items():
        on.setdefault(node, []).append(i)
    held = _patterns({n: on.get(n, []) for n in region.area}, region.kind)
    model = _patterns({n: list(placements.get(n, ())) for n in region.area}, region.kind)
    pool: dict[str, list[Pattern]] = {}
    group = {n: alike(n) for n in region.area}
    for n in region.area:
        mine = pool.setdefault(group[n], [])
        for pat in (held[n], model[n]):
            if pat and pat not in mine:
                mine.append(pat)
    choices = {n: [p for p in pool[group[n]] if all(n not in refused[k] for k, _ in p)] for n in region.area}
    if any(pat and pat not in choices[n] for n in region.area for pat in (held[n], model[n])):
        return None
    return choices


def _solve(
    region: _Region, placements: Mapping[str, list[int]], choices: Mapping[str, list[Pattern]], seed: int
) -> _Solution | None:
    """The CP-SAT model of the module docstring, hinted with the model's plan (the last plan,
    placing what it had and disturbing nothing, is a solution too: the search always has one)."""
    area, home, kept, members = region.area, region.home, region.kept, region.members
    cp = new_cp_model()
    pick = {(n, j): cp.new_bool_var("") for n in area for j in range(len(choices[n]))}
    slots: dict[tuple[int, str], list[tuple[int, cp_model.IntVar]]] = {}
    for n in area:
        cp.add(sum(pick[(n, j)] for j in range(len(choices[n]))) <= 1)
        for j, pat in enumerate(choices[n]):
            for k, c in pat:
                slots.setdefault((k, n), []).append((c, pick[(n, j)]))
    placed = {g: cp.new_int_var(0, len(idxs), "") for g, idxs in members.items()}
    stays = _stays(cp, region, slots)
    for g in members:
        own = [v for key, v in stays.items() if key[:2] == g]
        if own:
            cp.add(sum(own) <= placed[g])
    for k in sorted({k for k, _ in members}):
        room = [c * v for (kk, _), terms in slots.items() if kk == k for c, v in terms]
        cp.add(sum(v for (kk, _), v in placed.items() if kk == k) <= sum(room))
        for n in area:
            here = [v for key, v in stays.items() if key[0] == k and key[2] == n]
            if here:
                cp.add(sum(here) <= sum(c * v for c, v in slots[(k, n)]))
    weight = sum(claim_weight(prio) * v for (_, prio), v in placed.items())
    had = sum(claim_weight(region.units[i].priority) for i in home)
    last = sum(v for key, v in stays.items() if key[3])
    others = sum(v for key, v in stays.items() if not key[3])
    cp.add(PRICE * (sum(1 for i in home if i in kept) - last) <= weight - had)  # the rule
    step = len(home) + 1
    cp.maximize(step * step * weight + step * last + others)
    model = _patterns({n: list(placements.get(n, ())) for n in area}, region.kind)
    for (n, j), v in pick.items():
        cp.add_hint(v, choices[n][j] == model[n])
    _hint(cp, region, placements, placed, stays)
    solver = cp_solver(seed, LIMIT)
    if not found(solver.solve(cp)):
        return None
    return _Solution(
        {n: choices[n][j] for (n, j), v in pick.items() if solver.value(v)},
        {g: int(solver.value(v)) for g, v in placed.items()},
        {key: int(solver.value(v)) for key, v in stays.items()},
    )


def disturbed(was: Sequence[PodPlan], got: Sequence[PodPlan], kept: Collection[int]) -> int:
    """The pods of `kept` (indices of `was`: placed by the last plan) that `got` moves to
    another node or leaves out."""
    return sum(1 for i in kept if not got[i].placed or got[i].node != was[i].node)


def pays(was: Sequence[PodPlan], got: Sequence[PodPlan], kept: Collection[int]) -> bool:
    """Whether `got` gains, over `was`, at least `PRICE` per pod of `kept` it disturbs
    (`disturbed`): the rule of docs/semantics.md, "Re-planning"."""
    gain = sum(claim_weight(g.priority) for g in got if g.placed) - sum(
        claim_weight(w.priority) for w in was if w.placed
    )
    return PRICE * disturbed(was, got, kept) <= gain


def _patterns(on: Mapping[str, list[int]], kind: Sequence[int]) -> dict[str, Pattern]:
    out: dict[str, Pattern] = {}
    for n, idxs in on.items():
        count: dict[int, int] = {}
        for i in idxs:
            count[kind[i]] = count.get(kind[i], 0) + 1
        out[n] = tuple(sorted(count.items()))
    return out


def _stays(
    cp: cp_model.CpModel, region: _Region, slots: Mapping[tuple[int, str], object]
) -> dict[Stay, cp_model.IntVar]:
    """How many pods of each `Stay` keep their node: one count per (kind, priority, node, of
    the last plan or not) where the node may hold that kind, at most the pods there."""
    stays: dict[Stay, cp_model.IntVar] = {}
    for (k, prio), idxs in region.members.items():
        for i in idxs:
            node = region.home.get(i)
            key = (k, prio, node or "", i in region.kept)
            if node is not None and (k, node) in slots and key not in stays:
                there = sum(1 for j in idxs if region.home.get(j) == node and (j in region.kept) == key[3])
                stays[key] = cp.new_int_var(0, there, "")
    return stays


def _hint(
    cp: cp_model.CpModel,
    region: _Region,
    placements: Mapping[str, list[int]],
    placed: Mapping[tuple[int, int], cp_model.IntVar],
    stays: Mapping[Stay, cp_model.IntVar],
) -> None:
    """The counts of the model's plan as the search's hint."""
    node_of = {i: n for n, idxs in placements.items() for i in idxs}
    for g, idxs in region.members.items():
        cp.add_hint(placed[g], sum(1 for i in idxs if i in node_of))
    for (k, prio, n, last_plan), v in stays.items():
        on = [
            i
            for i in region.members[(k, prio)]
            if region.home.get(i) == n and (i in region.kept) == last_plan
        ]
        cp.add_hint(v, sum(1 for i in on if node_of.get(i) == n))


def _assign(region: _Region, solution: _Solution) -> dict[str, list[int]]:
    """The solution as placements: on each node its staying pods (lowest index first), then
    each kind's other placed pods (those `was` placed before the pending ones, each in unit
    order: a pod moves rather than being left out) in the free slots — of its own node first,
    then nodes in `area`'s order; the slots no pod fills stay empty (a pattern's subset fits as
    the pattern does)."""
    home, kept = region.home, region.kept
    on: dict[str, list[int]] = {n: [] for n in region.area}
    free = {n: dict(solution.chosen.get(n, ())) for n in region.area}
    rest: dict[int, list[int]] = {}
    for (k, prio), idxs in region.members.items():
        taken: set[int] = set()
        for (kk, pp, n, last_plan), want in solution.staying.items():
            if (kk, pp) != (k, prio):
                continue
            for i in idxs:
                if want and home.get(i) == n and (i in kept) == last_plan:
                    on[n].append(i)
                    taken.add(i)
                    free[n][k] -= 1
                    want -= 1
        others = sorted((i for i in idxs if i not in taken), key=lambda i: (not region.was[i].placed, i))
        rest.setdefault(k, []).extend(others[: solution.counts[(k, prio)] - len(taken)])
    for k, idxs in sorted(rest.items()):
        idxs.sort(key=lambda i: (-claim_weight(region.units[i].priority), i))
        for i in list(idxs):  # a free slot on its own node: it stays after all
            node = home.get(i)
            if node is not None and free[node].get(k, 0) > 0:
                on[node].append(i)
                free[node][k] -= 1
                idxs.remove(i)
        for n in region.area:
            while idxs and free[n].get(k, 0) > 0:
                on[n].append(idxs.pop(0))
                free[n][k] -= 1
    return {n: sorted(on[n]) for n in region.area if on[n]}


__all__ = ["LIMIT", "PRICE", "disturbed", "fewest_moves", "kind_key", "pays"]
