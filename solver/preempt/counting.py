"""The batch preemption model by counts, for clusters whose devices on each node fall into
groups of interchangeable devices (docs/semantics.md, "Preemption", "Which model").

Why a second model: the per-device model (`preempt.model`) decides every device of every
candidate victim and every pending pod; at 50 nodes it no longer proves its last stage, and
its merged Problem (every claim evaluated on every node) grows as claims x nodes. When, on
every node, the devices the pending pods may take form groups whose devices are as good as
one another for every pending request (below), a plan is only *how many* pods of each kind go
to each node and which victims stay; which devices they take is then any free ones of the
right group. That model has a few integer variables per (kind, node) and one literal per
victim, and CP-SAT proves its stages on 500 nodes.

When it applies (`prepare` returns None otherwise, and the per-device model answers), per
node n, from a single-node Problem of one pod per claim shape (`classes.claim_key`):
- every pending pod's claim asks ExactCount of one alternative per request (no
  firstAvailable), without adminAccess or claim constraints;
- with the static rules applied (selectors, taints, busy devices), the groups U_n^1..U_n^m
  are the devices that lie in the same device sets the pending requests may take on n, so
  each request may take all of some groups and nothing else of the node (e.g. two GPU models,
  each pod selecting one; GPUs and NICs asked by different requests: one group per request;
  one pod asking fast GPUs, another any GPU: two groups, the second request *spread* over
  both — the node's devices differ for the pending requests); no device of a group is
  multi-allocatable, has shared counters, capacity in use or a CEL error, and each is
  node-local to n (so nodes share no device);
- each moved pod's replacement has one form (no extended resource that DRA serves on some
  nodes and a node advertises on others); a pending pod with several forms is a kind whose
  shapes and node demand depend on the node (`Kind.parts`: x[K, n] counts its form on n),
  the running pods fit their nodes as the input has them.
Then a pod of a kind needs on n need[j] = the sum of the counts of its requests that take
group j alone, and a kept releasable claim h occupies occ[h][j] = |its devices ∩ U_n^j|.

Exactness (`tests/test_preempt_counting*.py` compare both models on generated cases, one and
two GPU models per node, fast-only requests beside any-GPU ones, topology gangs, DRA-served
extended resources). (a) Every per-device plan satisfies the rows below: in group j the
requests placed there take need[j] distinct devices per pod (devices are exclusive), all in
U_n^j, none held by a kept claim, so sum need[j] x + sum occ[h][j] held[h] <= |U_n^j|. (b)
Every solution of the rows is a per-device plan: per group, the devices not held by kept
claims number at least sum need[j] x; give each request its count of them, distinct — every
request taking group j may take every device of U_n^j (its allowed set is U_n^j), a device
has no counters, capacity or constraint to respect, so any distinct choice is valid. Devices
outside every group are taken by no pending request, so they need no row.

Math, per kind K (pending pods with the same claim shapes, priority, preemption level,
weight, nodes, node demand and gangs; queue order inside), node n, group j, victim v,
releasable claim h:
- x[K, n] integer in [0, min(|K|, min_j |U_n^j| // need[K, n, j])]; sum_n x[K, n] <= |K|;
- kept[v], held[h] booleans; held[h] >= kept[v] for each user v of h, held[h] <= sum kept;
- devices, per group: sum_K need[K, n, j] x[K, n] + sum_h occ[h][j] held[h] <= |U_n^j|;
- node resources r: sum_K demand[K, r] x[K, n] + sum_{v on n} demand[v, r] kept[v] <= free[n, r];
- justification: 1 - kept[v] <= sum of x[K, n(v)] over kinds K whose level > priority(v);
- spread requests a on n (`_flows`): f[n, a, j] integer per group j it may take, sum_j
  f[n, a, j] = count(a) x (the pods of its shape on n, pending and moved), f counted in group
  j's device row — integral flows exist iff the pods' devices do (transportation problem),
  and each pod takes count(a) of them, group by group (`decode`);
- gangs: X_K = sum_n x[K, n] <= |K| on[G], sum_K pods[K] X_K >= need[G] on[G]; with a
  topology constraint (`_topology`), z[G, k] per domain, sum_k z[G, k] <= 1, x[K, n] <=
  top(x[K, n]) z[G, k(n)] for the kinds with pods of G;
- moves (`--allow-moves`, issue #43), per mover kind M (movable victims whose replacements
  have the same claim shapes, demand and nodes) and node n: moved[v] boolean, kept[v] +
  moved[v] <= 1; into[M, n] integer, counted in n's device and resource rows like x; T_M =
  sum_{v in M} moved[v] = sum_n into[M, n]; into[M, o] + sum_{v in M on o} moved[v] <= T_M
  (exactly when the moved pods can be matched to the slots none on its own node: `_moves`,
  `match_moves`);
- dominance (an optimal plan of this form always exists): on one node, for victims a, b
  each the only user of its releasable claims, in the same budgets, with the same node
  demand, priority(a) <= priority(b), devices freed(a) >= freed(b) in every group and
  (priority, -total freed, index) of a before b: kept[a] <= kept[b] — swapping b's eviction
  for a's frees as much in every group, keeps the justification and the PDB count, and
  lowers or keeps criteria 3-5; each swap moves an eviction earlier in that order, so
  swapping ends, at an optimal plan that meets every such row.
The objective stages are `preempt.model`'s (`objective`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from ortools.sat.python.cp_model_helper import IntVar  # not cp_model: `encoders.model`

from dra_solver.encoders.model import new_cp_model
from dra_solver.encoders.variables import allowed_candidates

from ..api.models import ResourceClaim
from ..planners.aggregated.classes import LocalViews, claim_key
from ..planners.perdevice import PodForm, Without
from ..planning.gangs import gang_infos
from ..planning.job import Job
from ..planning.outcome import PlanOutcome, PodPlan
from ..problem.build import build_problem
from ..problem.flat import Assignment, Placement, Problem
from ..reasons import Kind as ReasonKind
from ..reasons import Reason
from .setting import Setting
from .victims import Budget

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


@dataclass
class Kind:
    """Interchangeable pending pods: their units (queue order), one form each."""

    units: list[int]
    forms: list[int]
    spec: int
    """Index of its claim shapes (`Counting.specs`)."""
    level: int | None
    weight: int
    demand: dict[str, int]
    nodes: frozenset[str]
    gangs: tuple[tuple[str, int], ...]
    """(gang, pods one unit places in it)."""
    parts: tuple[tuple[int, dict[str, int]], ...] = ()
    """A pod with several forms (an extended resource a DeviceClass serves on some nodes and
    a node advertises on others, `perdevice.pod_forms`): its other forms' (shape, node
    demand); `spec` and `demand` are its first form's."""
    part_of: dict[str, int] = field(default_factory=dict)
    """Node -> 1 + the index in `parts` of the form the pods have there (absent: the first)."""
    more_forms: list[tuple[int, ...]] = field(default_factory=list)
    """Per unit, with `parts`: the form of each of them (`forms` holds the first)."""

    def spec_at(self, n: str) -> int:
        """The claim shapes of the kind's pods on node n."""
        p = self.part_of.get(n, 0)
        return self.parts[p - 1][0] if p else self.spec

    def demand_at(self, n: str) -> dict[str, int]:
        """The node demand of the kind's pods on node n."""
        p = self.part_of.get(n, 0)
        return self.parts[p - 1][1] if p else self.demand

    def form_at(self, j: int, n: str) -> int:
        """The form of the kind's j-th unit on node n."""
        p = self.part_of.get(n, 0)
        return self.more_forms[j][p - 1] if p else self.forms[j]


@dataclass
class MoverKind:
    """Interchangeable movable victims (`--allow-moves`): their replacements have the same claim
    shapes, node demand and nodes, so only how many of them land on each node matters."""

    victims: list[int]
    """Victim indices (`Setting.victims`), in victim order."""
    forms: list[int]
    """Per victim: the form of its replacement."""
    spec: int
    demand: dict[str, int]
    nodes: frozenset[str]
    """Where a replacement of the kind may go — each victim's own node included when only its
    leaving it keeps it from there (rows `moved from o + into o <= moved`, module docstring)."""


@dataclass
class NodeFacts:
    """What the counting model needs of one node."""

    problem: Problem
    """Single-node Problem of one claim set per shape (results are built with it)."""
    groups: list[list[int]]
    """U_n^1..U_n^m: the distinct device sets (indices of `problem`, in device order) the
    pending requests may take on n, pairwise disjoint, ordered by their first device."""
    need: dict[int, tuple[int, ...]]
    """Shape -> devices of each group one pod of it takes; shapes missing cannot use the node."""
    ids: dict[tuple[str, str, str], int]
    """(driver, pool, device) -> index in `problem`, for the groups' devices."""
    group_of: dict[int, int]
    """Device index (of the groups' devices) -> its group."""
    alt_group: dict[int, int] = field(default_factory=dict)
    """Alternative index (of `problem`) -> the group its request takes devices from (the
    requests that may take one group only)."""
    spread: dict[int, tuple[tuple[int, int, tuple[int, ...]], ...]] = field(default_factory=dict)
    """Shape -> its requests that may take devices of several groups on n, each as
    (alternative index, count, those groups): the node's devices differ for the pending
    requests (one asks for some GPUs, another for any), and the model splits each such
    request's devices over its groups with flow variables (`_flows`). `need` counts the
    shape's other requests only."""

    def most(self, spec: int, cap: int) -> int:
        """Upper bound on the pods of `spec` the node takes (at most `cap`): per group the
        fixed need, per spread request the devices of its groups."""
        tops = [cap] + [len(g) // k for g, k in zip(self.groups, self.need[spec], strict=True) if k]
        tops += [sum(len(self.groups[j]) for j in gs) // k for _, k, gs in self.spread.get(spec, ())]
        return min(tops)

    def takes(
        self, spec: int, free: Sequence[int]
    ) -> tuple[Sequence[int], Sequence[tuple[int, int, int]]] | None:
        """The devices of each group one more pod of `spec` takes where `free` are free, and
        its spread requests' part of them as (alternative, group, devices); None when it does
        not fit. A spread request takes from its groups fewest-wanted first (the groups fewer
        of the node's requests may take), then most free — a heuristic for the greedy hint,
        exact whenever the shape has no spread request."""
        fixed = self.need[spec]
        if any(f < k for f, k in zip(free, fixed, strict=True)):
            return None
        if spec not in self.spread:
            return fixed, ()  # no allocation: the greedy asks this of many nodes
        vec = list(fixed)
        pieces: list[tuple[int, int, int]] = []
        for a, k, gs in self.spread.get(spec, ()):
            for j in sorted(gs, key=lambda j: (self.wanted[j], -(free[j] - vec[j]), j)):
                got = min(k, free[j] - vec[j])
                if got > 0:
                    vec[j] += got
                    k -= got
                    pieces.append((a, j, got))
            if k:
                return None
        return vec, pieces

    @cached_property
    def wanted(self) -> list[int]:
        """Per group: how many of the node's request shapes may take it."""
        out = [0] * len(self.groups)
        for j in self.alt_group.values():
            out[j] += 1
        for reqs in self.spread.values():
            for _, _, gs in reqs:
                for j in gs:
                    out[j] += 1
        return out

    def total(self, spec: int) -> int:
        """The devices one pod of `spec` takes on n, all groups together."""
        return sum(self.need[spec]) + sum(k for _, k, _ in self.spread.get(spec, ()))


@dataclass
class Counting:
    """The facts of the counting model (`prepare`)."""

    kinds: list[Kind]
    specs: list[tuple[str, ...]]
    spec_offset: list[int]
    """Shape -> index of its first claim in every node's Problem."""
    facts: dict[str, NodeFacts]
    occ: list[list[int]]
    """Per releasable claim (`Setting.holders` order): indices (in its node's Problem) of the
    groups' devices it holds."""
    held_per_group: list[tuple[int, ...]]
    """Per releasable claim: how many devices of each group of its node it holds (occ[h])."""
    victim_demand: list[dict[str, int]]
    free: dict[str, dict[str, int]]
    gang_need: dict[str, int] = field(default_factory=dict)
    movers: list[MoverKind] = field(default_factory=list)
    """With `--allow-moves`: the movable victims by kind of replacement."""
    domains: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per gang with a topology constraint (KEP-5732): node -> the index of its domain
    (`Gang.domains`); a node in none is absent (its pods are blocked there already,
    `planning.gangs.in_domains`)."""
    ceiling: int | None = None
    """Only the candidates of priority at most this may be evicted (`merged`); the others are
    kept by `build_model` (or moved, when movable) and passed over by `greedy_hint`. None:
    every candidate may go."""

    def movable(self) -> dict[int, int]:
        """Victim index -> its mover kind."""
        return {k: mi for mi, m in enumerate(self.movers) for k in m.victims}


def prepare(
    s: Setting, job: Job, forms: list[PodForm], P: int, H: int, movers: Sequence[int] = ()
) -> Counting | str:
    """The counting model's facts, or why it does not apply (module docstring) — the reason
    the per-device model answers, which the plan's stats carry (`preempt_model_reason`).
    `movers`: the victim index of each replacement unit from P + H + len(victims) on."""
    units = job.units
    V = P + H + len(s.victims)
    by_unit: dict[int, list[int]] = {}
    for g, f in enumerate(forms):
        by_unit.setdefault(f.unit, []).append(g)
    why = _pods_not_counted(job, by_unit, P)
    if why is not None:
        return why
    groups, mover_kinds, rep_claims, specs = _kinds(s, job, forms, by_unit, P, V, movers)
    kinds = list(groups.values())
    spec_offset, at = [], 0
    claims: list[ResourceClaim] = []
    for cs in rep_claims:
        spec_offset.append(at)
        at += len(cs)
        claims.extend(cs)
    wanted = (
        {n for k in kinds for n in k.nodes}
        | {node for _, node, _ in s.holders.values()}
        | {n for m in mover_kinds.values() for n in m.nodes}
    )
    found = _facts_and_held(s, job, claims, spec_offset, wanted)
    if isinstance(found, str):
        return found
    facts, occ = found
    victim_forms = {f.unit - P - H: g for g, f in enumerate(forms) if P + H <= f.unit < V}
    victim_demand = []
    for k in range(len(s.victims)):
        vg = victim_forms.get(k)
        victim_demand.append(dict(forms[vg].variant.demand) if vg is not None else {})
    free = {n: dict(job.book.free.get(n) or {}) for n in s.nodes}
    why = _over_committed(s, victim_demand, free)
    if why is not None:
        return why
    empty = PlanOutcome([PodPlan(u.name, None, [], None, u.priority) for u in units])
    gang_need = {gi.name: gi.need for gi in gang_infos(job, [f.unit for f in forms], empty)}
    return Counting(
        kinds,
        specs,
        spec_offset,
        facts,
        occ,
        _held_per_group(s, facts, occ),
        victim_demand,
        free,
        gang_need,
        list(mover_kinds.values()),
        {
            name: {n: k for k, (_, ns) in enumerate(gang.domains) for n in ns}
            for name, gang in job.gangs.items()
            if gang.topology is not None
        },
    )


def _pods_not_counted(job: Job, by_unit: Mapping[int, list[int]], P: int) -> str | None:
    """Why the pods are not counted (module docstring), or None: a running pod's replacement
    of several forms, or a pending pod whose claim is allocated already. The checks `prepare`
    starts with, apart so that it reads as the counting."""
    units = job.units
    if any(len(gs) > 1 for i, gs in by_unit.items() if i >= P):
        return (
            "a running pod's replacement has several forms (an extended resource DRA serves on some "
            "nodes only)"
        )
    for i in range(P):
        for c in units[i].claims:
            if c.status is not None and c.status.allocation is not None:
                return f"pending pod {units[i].name} uses claim {c.ref}, allocated already"
    return None


def _kinds(
    s: Setting,
    job: Job,
    forms: list[PodForm],
    by_unit: Mapping[int, list[int]],
    P: int,
    V: int,
    movers: Sequence[int],
) -> tuple[
    dict[Hashable, Kind], dict[Hashable, MoverKind], list[tuple[ResourceClaim, ...]], list[tuple[str, ...]]
]:
    """The pending pods by kind (`Kind`; a pod of several forms: `_several`) and the movable
    victims' replacements by mover kind (`MoverKind`), each in order of first sight, with the
    claim shapes they have (`Counting.specs`) and one form's claims per shape (the nodes'
    Problems are built over them)."""
    units = job.units
    specs: list[tuple[str, ...]] = []
    rep_claims: list[tuple[ResourceClaim, ...]] = []
    spec_index: dict[tuple[str, ...], int] = {}
    groups: dict[Hashable, Kind] = {}

    def spec_of(f: PodForm) -> int:
        key_claims = tuple(claim_key(c) for c in f.claims)
        if key_claims not in spec_index:
            spec_index[key_claims] = len(specs)
            specs.append(key_claims)
            rep_claims.append(f.claims)
        return spec_index[key_claims]

    mover_kinds: dict[Hashable, MoverKind] = {}
    for g, f in enumerate(forms):
        if f.unit >= V:
            k = movers[f.unit - V]
            nodes = _mover_nodes(f.nodes, s.victims[k].node, s.movers[k].blocked.get(s.victims[k].node))
            mkey = (spec_of(f), tuple(sorted(f.variant.demand.items())), nodes)
            mk = mover_kinds.get(mkey)
            if mk is None:
                mk = mover_kinds[mkey] = MoverKind([], [], mkey[0], dict(f.variant.demand), nodes)
            mk.victims.append(k)
            mk.forms.append(g)
            continue
        if f.unit >= P or len(by_unit[f.unit]) > 1:
            continue
        u = units[f.unit]
        key_claims = tuple(claim_key(c) for c in f.claims)
        spec_of(f)
        nodes = frozenset(filter(None, f.nodes))
        demand = dict(f.variant.demand)
        gangs = tuple(sorted(u.gang_pods(job.gangs).items()))
        key = (key_claims, s.levels[f.unit], u.weight, nodes, tuple(sorted(demand.items())), gangs)
        kind = groups.get(key)
        if kind is None:
            kind = groups[key] = Kind(
                [], [], spec_index[key_claims], s.levels[f.unit], u.weight, demand, nodes, gangs
            )
        kind.units.append(f.unit)
        kind.forms.append(g)
    for i in range(P):
        if len(by_unit.get(i, ())) > 1:
            _several(i, by_unit[i], forms, spec_of, groups, s.levels[i], units[i].weight, job)
    return groups, mover_kinds, rep_claims, specs


def _facts_and_held(
    s: Setting, job: Job, claims: list[ResourceClaim], spec_offset: list[int], wanted: set[str]
) -> tuple[dict[str, NodeFacts], list[list[int]]] | str:
    """Each `wanted` node's facts (`_node_facts`) and, per releasable claim (`Setting.holders`
    order), the groups' devices it holds (`Counting.occ`); or why a node's devices are not
    counted (one of them held by two claims: not the input's state to model)."""
    held_on: dict[str, list[int]] = {}
    holder_claims = [c for c, _, _ in s.holders.values()]
    for h, (_, (_, node, _)) in enumerate(s.holders.items()):
        held_on.setdefault(node, []).append(h)
    facts: dict[str, NodeFacts] = {}
    occ: list[list[int]] = [[] for _ in s.holders]
    views = LocalViews(job.cluster)
    for n in s.nodes:
        if n not in wanted:
            continue
        nf = _node_facts(job, claims, spec_offset, n, views)
        if isinstance(nf, str):
            return f"on node {n}, {nf}"
        facts[n] = nf
        taken: set[int] = set()
        for h in held_on.get(n, []):
            claim = holder_claims[h]
            alloc = claim.status.allocation if claim.status is not None else None
            for r in alloc.devices.results if alloc is not None else ():
                if r.admin_access:
                    continue
                d = nf.ids.get((r.driver, r.pool, r.device))
                if d is None:
                    continue
                if d in taken:  # two claims hold one device: not the input's state to model
                    return f"on node {n}, device {r.device} is held by two claims"
                taken.add(d)
                occ[h].append(d)
    return facts, occ


def _over_committed(
    s: Setting, victim_demand: Sequence[Mapping[str, int]], free: Mapping[str, Mapping[str, int]]
) -> str | None:
    """Why the running pods do not fit their nodes' resources as the input has them (a node
    over-committed on one), or None."""
    held_res: dict[str, dict[str, int]] = {}
    for k, wants in enumerate(victim_demand):
        mine = held_res.setdefault(s.victims[k].node, {})
        for resource, a in wants.items():
            mine[resource] = mine.get(resource, 0) + a
    for n in s.nodes:
        for resource, limit in free[n].items():
            if held_res.get(n, {}).get(resource, 0) > limit:
                return f"node {n} is over-committed on {resource} as the input has it"
    return None


def _held_per_group(
    s: Setting, facts: Mapping[str, NodeFacts], occ: list[list[int]]
) -> list[tuple[int, ...]]:
    """Per releasable claim: how many devices of each group of its node it holds
    (`Counting.held_per_group`)."""
    per_group = []
    for h, (_, (_, node, _)) in enumerate(s.holders.items()):
        hf = facts.get(node)
        counts = [0] * (len(hf.groups) if hf is not None else 0)
        for d in occ[h]:
            counts[hf.group_of[d]] += 1  # type: ignore[union-attr]  # occ[h] is empty without facts
        per_group.append(tuple(counts))
    return per_group


def _several(
    i: int,
    gs: list[int],
    forms: list[PodForm],
    spec_of: Callable[[PodForm], int],
    groups: dict[Hashable, Kind],
    level: int | None,
    weight: int,
    job: Job,
) -> None:
    """Pending unit i, of several forms `gs` (one per set of nodes, `perdevice.pod_forms`),
    filed under its kind (`Kind.parts`): the pods whose forms have the same shapes, demands
    and nodes, level, weight and gangs."""
    parts = [
        (spec_of(forms[g]), dict(forms[g].variant.demand), frozenset(filter(None, forms[g].nodes)))
        for g in gs
    ]
    gangs = tuple(sorted(job.units[i].gang_pods(job.gangs).items()))
    key = ("forms", tuple((sp, tuple(sorted(d.items())), ns) for sp, d, ns in parts), level, weight, gangs)
    kind = groups.get(key)
    if kind is None:
        kind = groups[key] = Kind(
            [],
            [],
            parts[0][0],
            level,
            weight,
            parts[0][1],
            frozenset().union(*(ns for _, _, ns in parts)),
            gangs,
            tuple((sp, d) for sp, d, _ in parts[1:]),
            {n: p for p, (_, _, ns) in enumerate(parts) if p for n in ns},
        )
    kind.units.append(i)
    kind.forms.append(gs[0])
    kind.more_forms.append(tuple(gs[1:]))


def _mover_nodes(nodes: Sequence[str | None], home: str, why: Reason | None) -> frozenset[str]:
    """Where a replacement of a mover kind may go (`MoverKind.nodes`): its form's nodes, and
    its own node when only its leaving keeps it from there. A replacement's form shares its
    scheduling key's nodes (`perdevice.Without`), which then is the set whenever the own node
    is among them: one set per key, not one of 10,000 nodes per moved pod."""
    from_here = why is not None and why.is_(ReasonKind.MOVES_FROM)
    if isinstance(nodes, Without) and from_here and None not in nodes.nodes_set:
        return cast(frozenset[str], nodes.nodes_set)  # no None among them: a set of node names
    out = frozenset(n for n in nodes if n is not None)
    return out | {home} if from_here else out


def merged(s: Setting, c: Counting, ceiling: int | None = None) -> Counting:
    """The same facts with the kinds that differ only by weight and by a level no candidate's
    priority separates merged into one kind of weight 1 per pod — for a model in which every
    pending pod is placed (`build_model(all_placed=True)`), where the weights no longer tell
    plans apart. Why: on a full cluster the pending pods come in a few priorities, and each
    (shape, priority) kind on each node is an integer variable; kinds that are the same to
    every row multiply the plans that are one plan, and CP-SAT's search walks them all (issue
    #31's 500-node benchmark: 12 kinds per node, about 3x the time of 4).

    Two levels l1 < l2 are the same to every row when no candidate has a priority p with
    l1 <= p < l2: a victim is justified by a pod of level l iff l > p. The merged kind keeps
    the smallest level of its part (None: its pods may not preempt) and its units in queue
    order. `ceiling`: only the candidates of priority at most that may be evicted
    (`Counting.ceiling`), so only their priorities separate levels — and those of the movable
    candidates, which may still move above it (a move is justified as an eviction is)."""
    movable = c.movable()
    prios = sorted(
        {
            v.priority
            for k, v in enumerate(s.victims)
            if ceiling is None or v.priority <= ceiling or k in movable
        }
    )
    groups: dict[Hashable, list[Kind]] = {}
    for kind in c.kinds:
        cls = None if kind.level is None else bisect.bisect_left(prios, kind.level)
        key: tuple[Hashable, ...] = (
            kind.spec,
            cls,
            kind.nodes,
            tuple(sorted(kind.demand.items())),
            kind.gangs,
        )
        if kind.parts:
            several = tuple((sp, tuple(sorted(d.items()))) for sp, d in kind.parts)
            key = (*key, several, tuple(sorted(kind.part_of.items())))
        groups.setdefault(key, []).append(kind)
    kinds = []
    for part in groups.values():
        triples = sorted(
            (u, g, kind.more_forms[j] if kind.parts else ())
            for kind in part
            for j, (u, g) in enumerate(zip(kind.units, kind.forms, strict=True))
        )
        levels = [k.level for k in part if k.level is not None]
        first = part[0]
        kinds.append(
            Kind(
                [u for u, _, _ in triples],
                [g for _, g, _ in triples],
                first.spec,
                min(levels) if levels else None,
                1,
                first.demand,
                first.nodes,
                first.gangs,
                first.parts,
                first.part_of,
                [more for _, _, more in triples] if first.parts else [],
            )
        )
    return replace(c, kinds=kinds, ceiling=ceiling)


def _node_facts(
    job: Job, claims: list[ResourceClaim], offsets: list[int], n: str, views: LocalViews
) -> NodeFacts | str:
    """The node's device groups and each shape's need per group, or why the node's devices are
    not interchangeable group by group (module docstring). Built on the node's view of the
    cluster (`aggregate.classes.LocalViews`: its pools, the shared ones, the claims holding
    their devices): the same Problem, without reading every slice and claim once per node."""
    problem = build_problem(views.of(job.cluster, n), claims, n, job.gates, cache=job.cache)
    why = _requests_not_counted(problem)
    if why is not None:
        return why
    allowed, impossible = allowed_candidates(problem)
    takes = {
        a.index: frozenset(allowed[a.index]) if a.index not in impossible else frozenset()
        for a in problem.alternatives
    }
    # The groups: the devices alike for every request (in the same allowed sets). Where the
    # allowed sets are pairwise equal or disjoint, they are the sets; where two overlap, a
    # request may take several groups (`NodeFacts.spread`).
    distinct = {t for t in takes.values() if t}
    by_sig: dict[frozenset[frozenset[int]], set[int]] = {}
    for d in frozenset().union(*distinct):
        by_sig.setdefault(frozenset(t for t in distinct if d in t), set()).add(d)
    sets = sorted((frozenset(ds) for ds in by_sig.values()), key=min)
    group_of = {d: j for j, t in enumerate(sets) for d in t}
    why = _devices_not_counted(problem, group_of, n)
    if why is not None:
        return why
    alt_groups = {i: tuple(sorted({group_of[d] for d in t})) for i, t in takes.items() if t}
    alt_group = {i: gs[0] for i, gs in alt_groups.items() if len(gs) == 1}
    need: dict[int, tuple[int, ...]] = {}
    spread: dict[int, tuple[tuple[int, int, tuple[int, ...]], ...]] = {}
    bounds = [*offsets, len(problem.claims)]
    for spec in range(len(offsets)):
        total = [0] * len(sets)
        wide: list[tuple[int, int, tuple[int, ...]]] = []
        fits = True
        for c in problem.claims[bounds[spec] : bounds[spec + 1]]:
            for r in c.requests:
                a = problem.alternatives[r.alternatives[0]]
                if a.index not in alt_groups:
                    fits = False
                elif a.index in alt_group:
                    total[alt_group[a.index]] += a.count
                else:
                    wide.append((a.index, a.count, alt_groups[a.index]))
        if fits:
            need[spec] = tuple(total)
            if wide:
                spread[spec] = tuple(wide)
    ids = {(problem.devices[d].driver, problem.devices[d].pool, problem.devices[d].name): d for d in group_of}
    return NodeFacts(problem, [sorted(t) for t in sets], need, ids, group_of, alt_group, spread)


def _requests_not_counted(problem: Problem) -> str | None:
    """Why a node's requests cannot be counted group by group (module docstring): a
    constraint, allocationMode All, adminAccess, a CEL error or firstAvailable alternatives
    make a request's devices depend on more than how many a group has free; None when they
    can. The checks `_node_facts` starts with, apart so that it reads as the counting."""
    if problem.constraints:
        return "a claim has a constraint (matchAttribute)"
    for a in problem.alternatives:
        if a.mode != "ExactCount" or a.admin:
            return "a request asks allocationMode All or adminAccess"
        if any(c.error is not None for c in a.candidates):
            return "a selector has a CEL error on some device"
    for c in problem.claims:
        if any(len(r.alternatives) != 1 or r.first_available for r in c.requests):
            return "a request has firstAvailable alternatives"
    return None


def _devices_not_counted(problem: Problem, group_of: Mapping[int, int], n: str) -> str | None:
    """Why the devices of node `n`'s groups are not interchangeable (module docstring): one
    that several claims may share, with shared counters (or their compatibility groups) or
    capacity in use, or not the node's own; None when they are."""
    for d in group_of:
        dev = problem.devices[d]
        if (
            dev.multi
            or dev.counter_use
            or dev.compat
            or dev.in_use
            or dev.shared_in_use
            or dev.node_scope != ("node", n)
        ):
            return (
                f"device {dev.name} is multi-allocatable, has shared counters (or their compatibility "
                "groups) or capacity in use, "
                "or is not node-local"
            )
    return None


@dataclass
class Built:
    """The counting model's CP-SAT model and its variables."""

    cp: cp_model.CpModel
    x: dict[tuple[int, str], IntVar]
    kept: list[IntVar]
    held: list[IntVar]
    weight: cp_model.LinearExprT
    moved: dict[int, IntVar] = field(default_factory=dict)
    """Movable victim index -> moved (its replacement placed on another node)."""
    into: dict[tuple[int, str], IntVar] = field(default_factory=dict)
    """(mover kind, node) -> how many replacements of the kind the node takes."""
    totals: list[IntVar] = field(default_factory=list)
    """Per mover kind: how many of its victims move."""
    tops: dict[int, int] = field(default_factory=dict)
    """Index of each x and into variable -> its upper bound (read back from CP-SAT's proto,
    a bound costs a copy of its domain)."""
    flows: dict[tuple[str, int, int], IntVar] = field(default_factory=dict)
    """(node, alternative, group) -> devices of the group the request takes there (`_flows`)."""


def build_model(s: Setting, c: Counting, budgets: Sequence[Budget], all_placed: bool = False) -> Built:
    """Variables and rows (module docstring); the objective stages are added by the caller.
    `all_placed`: every pending pod is placed (sum_n x[K, n] = |K|; the caller knows a plan
    that places them all, so the first stage's optimum does). The candidates above
    `c.ceiling` are kept (kept[v] = 1)."""
    cp = new_cp_model()
    tops: dict[int, int] = {}
    """Variable index -> its upper bound, for the integer variables (booleans: 1)."""
    x = _placed(cp, c, tops)
    by_kind: dict[int, list[IntVar]] = {}
    by_node: dict[str, list[tuple[int, IntVar]]] = {}
    for (ki, n), v in x.items():
        by_kind.setdefault(ki, []).append(v)
        by_node.setdefault(n, []).append((ki, v))
    for ki, vs in by_kind.items():
        if all_placed:
            cp.add(sum(vs) == len(c.kinds[ki].units))
        elif len(vs) > 1:
            cp.add(sum(vs) <= len(c.kinds[ki].units))
    kept = [cp.new_bool_var(f"kept[{k}]") for k in range(len(s.victims))]
    held = [cp.new_bool_var(f"held[{h}]") for h in range(len(s.holders))]
    moved, into, totals = _moves(cp, s, c, kept, tops)
    into_node: dict[str, list[tuple[int, IntVar]]] = {}
    for (mi, n), v in into.items():
        into_node.setdefault(n, []).append((mi, v))
    for h, (_, (_, _, users)) in enumerate(s.holders.items()):
        for p in users:
            cp.add(held[h] >= kept[p])
        cp.add(held[h] <= sum(kept[p] for p in users))
    holders_on: dict[str, list[int]] = {}
    for h, (_, (_, node, _)) in enumerate(s.holders.items()):
        holders_on.setdefault(node, []).append(h)
    flows = _flows(cp, c, by_node, into_node, tops)
    rows = _Rows(cp, c, by_node, into_node, tops)
    _device_rows(rows, flows, held, holders_on)
    _resource_rows(rows, s, kept)
    _justified(rows, s, kept, moved)
    _gangs(cp, c, by_kind)
    _topology(cp, c, x, tops)
    _dominance(cp, s, c, kept, budgets, moved)
    _whole(cp, c, x, held, holders_on, tops)
    weight = sum(c.kinds[ki].weight * v for (ki, _), v in x.items())
    return Built(cp, x, kept, held, weight, moved, into, totals, tops, flows)


def _placed(cp: cp_model.CpModel, c: Counting, tops: dict[int, int]) -> dict[tuple[int, str], IntVar]:
    """x[K, n]: the pods of kind K placed on node n, for each node of the kind whose facts take
    its shape at least once (`NodeFacts.most`), each bound filed in `tops`."""
    x: dict[tuple[int, str], IntVar] = {}
    for ki, kind in enumerate(c.kinds):
        for n in sorted(kind.nodes):
            nf = c.facts.get(n)
            if nf is None:
                continue
            if kind.spec_at(n) not in nf.need:
                continue
            top = nf.most(kind.spec_at(n), len(kind.units))
            if top > 0:
                x[(ki, n)] = cp.new_int_var(0, top, f"x[{ki},{n}]")
                tops[x[(ki, n)].index] = top
    return x


@dataclass(frozen=True)
class _Rows:
    """What the per-node rows of `build_model` read: the model, the facts, the pods placed on
    each node (x by node; into by node: the moved pods that land there) and the variables'
    bounds. Why one value: the device, resource and justification rows each read most of it."""

    cp: cp_model.CpModel
    c: Counting
    by_node: dict[str, list[tuple[int, IntVar]]]
    into_node: dict[str, list[tuple[int, IntVar]]]
    tops: dict[int, int]


def _device_rows(
    rows: _Rows,
    flows: dict[tuple[str, int, int], IntVar],
    held: list[IntVar],
    holders_on: dict[str, list[int]],
) -> None:
    """Per node and group: the devices the pods placed there take (fixed needs and the spread
    requests' flows) and those the kept claims hold, at most the group's size — added only
    where the variables' bounds could exceed it."""
    cp, c, by_node, into_node, tops = rows.cp, rows.c, rows.by_node, rows.into_node, rows.tops
    flows_at: dict[tuple[str, int], list[IntVar]] = {}
    for (n, _, j), f in flows.items():
        flows_at.setdefault((n, j), []).append(f)
    for n, nf in c.facts.items():
        for j, group in enumerate(nf.groups):
            terms = [(nf.need[c.kinds[ki].spec_at(n)][j], v) for ki, v in by_node.get(n, [])]
            terms += [(nf.need[c.movers[mi].spec][j], v) for mi, v in into_node.get(n, [])]
            terms += [(1, v) for v in flows_at.get((n, j), [])]
            terms += [(c.held_per_group[h][j], held[h]) for h in holders_on.get(n, [])]
            terms = [(a, v) for a, v in terms if a]
            if sum(a * tops.get(v.index, 1) for a, v in terms) > len(group):
                cp.add(sum(a * v for a, v in terms) <= len(group))


def _resource_rows(rows: _Rows, s: Setting, kept: list[IntVar]) -> None:
    """Per node and resource with a limit: the demand of the pods placed there and of the
    victims kept there, at most the free amount — added only where the bounds could exceed it."""
    cp, c, by_node, into_node, tops = rows.cp, rows.c, rows.by_node, rows.into_node, rows.tops
    victims_on: dict[str, list[int]] = {}
    for k, victim in enumerate(s.victims):
        victims_on.setdefault(victim.node, []).append(k)
    for n in s.nodes:
        for r, limit in sorted(c.free.get(n, {}).items()):
            rterms = [(c.kinds[ki].demand_at(n).get(r, 0), v) for ki, v in by_node.get(n, [])]
            rterms += [(c.movers[mi].demand.get(r, 0), v) for mi, v in into_node.get(n, [])]
            rterms += [(c.victim_demand[k].get(r, 0), kept[k]) for k in victims_on.get(n, [])]
            rterms = [(a, v) for a, v in rterms if a]
            if sum(a * tops.get(v.index, 1) for a, v in rterms) > limit:
                cp.add(sum(a * v for a, v in rterms) <= limit)


def _justified(rows: _Rows, s: Setting, kept: list[IntVar], moved: dict[int, IntVar]) -> None:
    """The justification rows: a victim leaves only for a pod placed on its node whose level
    is above its priority; one above `Counting.ceiling` is kept (or moved, when movable)."""
    cp, c, by_node, ceiling = rows.cp, rows.c, rows.by_node, rows.c.ceiling
    for k, victim in enumerate(s.victims):
        if ceiling is not None and victim.priority > ceiling:
            if k in moved:  # not evicted; it may still move
                cp.add(kept[k] + moved[k] == 1)
            else:
                cp.add(kept[k] == 1)
                continue
        by = [
            var
            for ki, var in by_node.get(victim.node, [])
            if c.kinds[ki].level is not None and (c.kinds[ki].level or 0) > victim.priority
        ]
        if by:
            cp.add(1 - kept[k] <= sum(by))
        else:
            cp.add(kept[k] == 1)


def _flows(
    cp: cp_model.CpModel,
    c: Counting,
    by_node: dict[str, list[tuple[int, IntVar]]],
    into_node: dict[str, list[tuple[int, IntVar]]],
    tops: dict[int, int],
) -> dict[tuple[str, int, int], IntVar]:
    """On a node where a request may take several groups (`NodeFacts.spread`): f[n, a, j],
    the devices of group j that request a takes for all the pods of its shape placed on n
    (pending pods and moved ones), with sum_j f[n, a, j] = count(a) x (those pods). Exact:
    the requests' devices are exclusive and any device of a group is as good as another to
    every request that may take the group, so the pods fit iff such integral flows exist with
    each group's row (fixed needs, flows, held devices) within its size — a transportation
    problem, integral for integral supplies — and `decode` gives each pod its request's
    count out of the flows, group by group."""
    flows: dict[tuple[str, int, int], IntVar] = {}
    for n, nf in sorted(c.facts.items()):
        if not nf.spread:
            continue
        pods: dict[int, list[tuple[int, IntVar]]] = {}
        for ki, v in by_node.get(n, []):
            pods.setdefault(c.kinds[ki].spec_at(n), []).append((tops.get(v.index, 1), v))
        for mi, v in into_node.get(n, []):
            pods.setdefault(c.movers[mi].spec, []).append((tops.get(v.index, 1), v))
        for spec, reqs in sorted(nf.spread.items()):
            if spec not in pods:
                continue
            most = sum(t for t, _ in pods[spec])
            for a, k, gs in reqs:
                fs = []
                for j in gs:
                    top = min(k * most, len(nf.groups[j]))
                    f = flows[(n, a, j)] = cp.new_int_var(0, top, f"f[{n},{a},{j}]")
                    tops[f.index] = top
                    fs.append(f)
                cp.add(sum(fs) == k * sum(v for _, v in pods[spec]))
    return flows


def _moves(
    cp: cp_model.CpModel, s: Setting, c: Counting, kept: list[IntVar], tops: dict[int, int]
) -> tuple[dict[int, IntVar], dict[tuple[int, str], IntVar], list[IntVar]]:
    """moved[k] per movable victim (kept + moved <= 1) and into[M, n] per mover kind and node
    it may go to: sum_n into[M, n] = sum_{k in M} moved[k] = T_M, and per node o of the kind,
    into[M, o] + sum_{k in M on o} moved[k] <= T_M. Why that row and not one destination per
    pod: the moved pods of M must be matched to the destination slots, none to its own node —
    a transportation problem with the diagonal forbidden, which (max-flow, min-cut: a set of
    two or more origins reaches every slot) has a solution iff, for every node o, the pods
    leaving o and the slots on o add up to at most T_M. `decode` builds the matching."""
    moved: dict[int, IntVar] = {}
    into: dict[tuple[int, str], IntVar] = {}
    totals: list[IntVar] = []
    for mi, mk in enumerate(c.movers):
        for k in mk.victims:
            moved[k] = cp.new_bool_var(f"moved[{k}]")
            cp.add(kept[k] + moved[k] <= 1)
        total = cp.new_int_var(0, len(mk.victims), f"moves[{mi}]")
        totals.append(total)
        cp.add(total == sum(moved[k] for k in mk.victims))
        leaving: dict[str, list[int]] = {}
        for k in mk.victims:
            leaving.setdefault(s.victims[k].node, []).append(k)
        slots = []
        for n in sorted(mk.nodes):
            nf = c.facts.get(n)
            if nf is None or mk.spec not in nf.need:
                continue
            top = nf.most(mk.spec, len(mk.victims))
            if top <= 0:
                continue
            v = into[(mi, n)] = cp.new_int_var(0, top, f"into[{mi},{n}]")
            tops[v.index] = top
            slots.append(v)
            if n in leaving:
                cp.add(v + sum(moved[k] for k in leaving[n]) <= total)
        cp.add(sum(slots) == total)
    return moved, into, totals


def _whole(
    cp: cp_model.CpModel,
    c: Counting,
    x: dict[tuple[int, str], IntVar],
    held: list[IntVar],
    holders_on: dict[str, list[int]],
    tops: dict[int, int],
) -> None:
    """x[K, n] + held[h] <= 1 where one pod of K leaves no room in a group for the devices h
    holds there (need + held > the group's size) and x[K, n] is 0 or 1 — implied by the device
    rows, but CP-SAT's relaxation does not see it: without it, an 8-GPU pod's node is half
    emptied in the LP by moving one 2-GPU pod, and the bound on moves is half the truth."""
    for (ki, n), v in x.items():
        if tops[v.index] != 1:
            continue
        nf = c.facts[n]
        need = nf.need[c.kinds[ki].spec_at(n)]
        for h in holders_on.get(n, []):
            if any(
                q and q + o > len(g) for q, o, g in zip(need, c.held_per_group[h], nf.groups, strict=True)
            ):
                cp.add(v + held[h] <= 1)


def greedy_hint(s: Setting, c: Counting, built: Built, hosts: Mapping[str, int] | None = None) -> int:
    """A complete solution as the hint: the pending pods in queue order (highest level first),
    each on the node where it fits at least damage (PDB members last; movable victims moved
    before any is evicted; then lowest priority, most devices freed first), justified by
    itself — upstream's one-pod-at-a-time idea on the counts, with each moved pod sent to the
    fullest other node it fits on (best fit, as a consolidating scheduler would). Only victims
    that alone hold their releasable claims leave here. Why: from "nothing placed" one CP-SAT
    worker climbs slowly on 500 nodes; from this, the first stage is usually at its bound at
    once. Returns the hint's placed weight.

    `hosts` (node -> pending pods): the pending pods go only there, at most that many per node,
    and no moved pod lands there — the nodes `clearing.clearing` chose to clear, whose cost
    would grow with each pod moved onto them. None: any node."""
    greedy = _Greedy(s, c, built, hosts)
    for ki in sorted(range(len(c.kinds)), key=lambda ki: -(c.kinds[ki].level or -(2**40))):
        greedy.place(ki)
    greedy.hint(built)
    return sum(c.kinds[ki].weight * m for (ki, _), m in greedy.count.items())


_Option = tuple[Any, ...]
"""Where one more pod of a kind goes on a node (`_Greedy.option`): (rank, node, victims,
devices, resources, (need, pieces))."""


class _Greedy:
    """The greedy hint's state as it places the pending pods (`greedy_hint`): what each node
    has free (devices per group, `room`; node resources, `left`), the victims still kept and
    the claims still held, the moved victims' destinations, the pods placed per (kind, node),
    the spread requests' devices and each topology gang's domain.

    Why a class: each step reads and changes most of that state; as one function with its
    steps as closures it was past any reading (complexity 50)."""

    def __init__(self, s: Setting, c: Counting, built: Built, hosts: Mapping[str, int] | None) -> None:
        self.s, self.c, self.hosts = s, c, hosts
        self.sole, shared = _sole_users(s)
        members = set().union(*(b.pods for b in s.budgets)) if s.budgets else set()
        self.protected = [v.pod.namespaced_name in members for v in s.victims]
        self.movable = c.movable()
        self.kept = [1] * len(s.victims)
        self.held = [1] * len(s.holders)
        self.went: dict[int, str] = {}
        """Moved victim -> its destination."""
        self.room = _room(s, c)
        self.left, on = _left_and_on(s, c)
        self.count: dict[tuple[int, str], int] = {}
        self.tops = {key: built.tops[v.index] for key, v in built.x.items()}
        self.freed: list[list[int]] = []
        for k, v in enumerate(s.victims):
            got = [0] * len(c.facts[v.node].groups) if v.node in c.facts else []
            for h in self.sole.get(k, []):
                got = _plus(got, c.held_per_group[h])
            self.freed.append(got)
        self.ranked = {n: self._ranked(ks, shared) for n, ks in on.items()}
        self.flowed: dict[tuple[str, int, int], int] = {}
        """(node, alternative, group) -> the spread requests' devices placed there (`_flows`)."""
        self.domain: dict[str, int] = {}
        """Gang with a topology constraint -> the domain its first placed pod chose: the rest
        follow it (`_topology`)."""
        # Each mover kind's destinations by free devices then name (`Destinations`): the fullest
        # node a moved pod fits on is found without visiting every node.
        slots = {(mi, n) for mi, n in built.into}
        avoid = hosts or {}
        self.dests_of = [
            Destinations(
                sorted(d for d in mk.nodes if (mi, d) in slots and d not in avoid),
                self.room,
                self.left,
                {d: c.facts[d] for d in mk.nodes if (mi, d) in slots and d not in avoid},
                mk.demand,
                mk.spec,
            )
            for mi, mk in enumerate(c.movers)
        ]
        self.hosted: dict[str, int] = {}

    def _ranked(self, ks: list[int], shared: set[int]) -> list[int]:
        """A node's victims in the order they leave (`greedy_hint`): those that may go (evicted,
        or moved when movable) and share no claim, PDB members last, movable ones first, then
        lowest priority, most devices freed."""
        s, protected, movable, freed = self.s, self.protected, self.movable, self.freed
        return sorted(
            (k for k in ks if k not in shared and (self.evictable(k) or k in movable)),
            key=lambda k: (protected[k], k not in movable, s.victims[k].priority, -sum(freed[k]), k),
        )

    def evictable(self, k: int) -> bool:
        """Victim k may be evicted (at most `Counting.ceiling`)."""
        return self.c.ceiling is None or self.s.victims[k].priority <= self.c.ceiling

    def outside(self, ki: int, n: str) -> bool:
        """A pod of kind ki on n would leave a domain its gang has chosen (or n is in none)."""
        for g, _ in self.c.kinds[ki].gangs:
            where = self.c.domains.get(g)
            if where is not None and (where.get(n) is None or self.domain.get(g, where[n]) != where[n]):
                return True
        return False

    def option(self, ki: int, n: str) -> _Option | None:
        """Where one more pod of kind ki goes on n: (rank, n, victims, devices, resources) —
        the victims each to be moved (when movable) or evicted."""
        s, c, kept, movable, protected = self.s, self.c, self.kept, self.movable, self.protected
        kind = c.kinds[ki]
        lv = kind.level
        top = self.tops.get((ki, n))
        if top is None or self.count.get((ki, n), 0) >= top or self.outside(ki, n):
            return None
        if self.hosts is not None and self.hosted.get(n, 0) >= self.hosts.get(n, 0):
            return None
        nf = c.facts[n]
        spec, demand = kind.spec_at(n), kind.demand_at(n)
        free_dev = list(self.room[n])
        res = dict(self.left[n])
        chosen: list[int] = []
        for k in self.ranked.get(n, []):
            if _fits_on(nf, spec, free_dev, res, demand) is not None:
                break
            if not kept[k] or lv is None or s.victims[k].priority >= lv:
                continue
            chosen.append(k)
            free_dev = _plus(free_dev, self.freed[k])
            for r, a in c.victim_demand[k].items():
                if r in res:
                    res[r] += a
        took = _fits_on(nf, spec, free_dev, res, demand)
        if took is None:
            return None
        gone = [s.victims[k].priority for k in chosen if k not in movable]
        rank = (
            sum(protected[k] for k in chosen),
            max(gone, default=-(2**63)),
            len(gone),
            sum(gone),
            len(chosen) - len(gone),
            n,
        )
        return (rank, n, chosen, free_dev, res, took)

    def destination(self, k: int, n: str, extra: dict[str, list[int]]) -> str | None:
        """The fullest node other than n where victim k's replacement fits (`extra`: devices
        already promised there in this step)."""
        return self.dests_of[self.movable[k]].fullest(n, extra)

    def changed(self, d: str, before: list[int]) -> None:
        """Node d's room changed (it was `before`): re-file it with every mover kind."""
        for ds in self.dests_of:
            ds.moved(d, sum(before))

    def place(self, ki: int) -> None:
        """Kind ki's pods one after another, each where its option ranks best, until all are
        placed or none fits."""
        kind = self.c.kinds[ki]
        # A node's option changes only when a pod is placed there or a moved pod lands there:
        # each is worked out once per kind and again only for the nodes that changed.
        options = {n: self.option(ki, n) for n in sorted(kind.nodes)}
        placed = 0
        while placed < len(kind.units):
            best = min((o for o in options.values() if o is not None), default=None, key=lambda o: o[0])
            if best is None:
                break  # the next pods of this kind fit no better
            n, chosen, pieces = best[1], best[2], best[5][1]
            sent = self.send(chosen, n, pieces)
            if sent is None:
                options[n] = None
                continue
            extra = self.take(ki, best, sent)
            placed += 1
            chose = [g for g, _ in kind.gangs if g in self.c.domains and g not in self.domain]
            for g in chose:
                self.domain[g] = self.c.domains[g][n]
            for m in options if chose else {n, *extra}:
                if m in options:
                    options[m] = self.option(ki, m)

    def send(
        self, chosen: list[int], n: str, pieces: Sequence[tuple[int, int, int]]
    ) -> tuple[dict[int, str], dict[str, list[int]], list[tuple[str, int, int, int]]] | None:
        """Where the movable victims of `chosen` go (the fullest other node each fits on; the
        others are evicted), with the devices promised on each destination and the spread
        requests' devices of the step (`pieces`: the pod's own on n); None, the resources given
        back, when a victim that may not be evicted has nowhere to go."""
        c, left, room, movable = self.c, self.left, self.room, self.movable
        dests: dict[int, str] = {}
        extra: dict[str, list[int]] = {}
        spread = [(n, a, j, got) for a, j, got in pieces]
        usable = True
        for k in chosen:
            d = self.destination(k, n, extra) if k in movable else None
            if d is None:
                if not self.evictable(k):
                    usable = False
                    break
                continue
            dests[k] = d
            fit = c.facts[d].takes(
                c.movers[movable[k]].spec, _plus(room[d], extra[d], -1) if d in extra else room[d]
            )
            assert fit is not None  # `fullest` found that it fits
            q, more = fit
            spread += [(d, a, j, g) for a, j, g in more]
            extra[d] = _plus(extra[d], q) if d in extra else list(q)
            left[d] = {r: a - c.movers[movable[k]].demand.get(r, 0) for r, a in left[d].items()}
        if not usable:
            for k, d in dests.items():
                left[d] = {r: a + c.movers[movable[k]].demand.get(r, 0) for r, a in left[d].items()}
            return None
        return dests, extra, spread

    def take(
        self,
        ki: int,
        option: _Option,
        sent: tuple[dict[int, str], dict[str, list[int]], list[tuple[str, int, int, int]]],
    ) -> dict[str, list[int]]:
        """One pod of kind ki placed as `option` says, its victims moved as `sent` says or
        evicted: the state after the step. Returns the devices promised on the destinations."""
        _, n, chosen, free_dev, res, (need, _) = option
        dests, extra, spread = sent
        room = self.room
        for k in chosen:
            self.kept[k] = 0
            for h in self.sole.get(k, []):
                self.held[h] = 0
        for k, d in dests.items():
            self.went[k] = d
        for d, took in extra.items():
            before, room[d] = room[d], _plus(room[d], took, -1)
            self.changed(d, before)
        before, room[n] = room[n], _plus(free_dev, need, -1)
        self.changed(n, before)
        for d, a, j, got in spread:
            self.flowed[(d, a, j)] = self.flowed.get((d, a, j), 0) + got
        kind = self.c.kinds[ki]
        self.left[n] = {r: a - kind.demand_at(n).get(r, 0) for r, a in res.items()}
        self.count[(ki, n)] = self.count.get((ki, n), 0) + 1
        self.hosted[n] = self.hosted.get(n, 0) + 1
        return extra

    def hint(self, built: Built) -> None:
        """The placed state as the model's hint (any hint before it cleared)."""
        movable, went = self.movable, self.went
        cp = built.cp
        cp.clear_hints()
        for k, var in enumerate(built.kept):
            cp.add_hint(var, self.kept[k])
        for h, var in enumerate(built.held):
            cp.add_hint(var, self.held[h])
        for key, var in built.x.items():
            cp.add_hint(var, self.count.get(key, 0))
        into: dict[tuple[int, str], int] = {}
        for k, d in went.items():
            into[(movable[k], d)] = into.get((movable[k], d), 0) + 1
        for k, var in built.moved.items():
            cp.add_hint(var, int(k in went))
        for key, var in built.into.items():
            cp.add_hint(var, into.get(key, 0))
        for mi, var in enumerate(built.totals):
            cp.add_hint(var, sum(1 for k in went if movable[k] == mi))
        for fkey, var in built.flows.items():
            cp.add_hint(var, self.flowed.get(fkey, 0))


def _sole_users(s: Setting) -> tuple[dict[int, list[int]], set[int]]:
    """Victim -> the releasable claims it alone uses, and the victims that share a claim."""
    sole: dict[int, list[int]] = {}
    shared: set[int] = set()
    for h, (_, (_, _, users)) in enumerate(s.holders.items()):
        if len(users) == 1:
            sole.setdefault(users[0], []).append(h)
        else:
            shared.update(users)
    return sole, shared


def _room(s: Setting, c: Counting) -> dict[str, list[int]]:
    """Per node with facts: each group's devices not held by a releasable claim."""
    room = {n: [len(g) for g in nf.groups] for n, nf in c.facts.items()}
    for h, (_, (_, node, _)) in enumerate(s.holders.items()):
        if node in room:
            room[node] = _plus(room[node], c.held_per_group[h], -1)
    return room


def _left_and_on(s: Setting, c: Counting) -> tuple[dict[str, dict[str, int]], dict[str, list[int]]]:
    """Per node: its resources left with every victim kept, and its victims."""
    left = {n: dict(lim) for n, lim in c.free.items()}
    on: dict[str, list[int]] = {}
    for k, v in enumerate(s.victims):
        on.setdefault(v.node, []).append(k)
        for r, a in c.victim_demand[k].items():
            if r in left.get(v.node, {}):
                left[v.node][r] -= a
    return left, on


class Destinations:
    """Where one mover kind's replacements may go in `greedy_hint`, by free devices (the sum
    over the node's groups) then name: `fullest` is the first that fits. Why: the hint sends
    each moved pod to the fullest node it fits on, and asking every node of the kind for each
    moved pod grew as moves x nodes (1,200 moves on issue #43's 10,000 nodes). `room` and
    `left` are the hint's own maps, read as they change; `moved` re-files a node whose room
    changed."""

    def __init__(
        self,
        nodes: list[str],
        room: dict[str, list[int]],
        left: dict[str, dict[str, int]],
        need: dict[str, NodeFacts],
        demand: dict[str, int],
        spec: int,
    ) -> None:
        self.room, self.left, self.need, self.demand, self.spec = room, left, need, demand, spec
        self.by_free: dict[int, list[str]] = {}
        for d in nodes:  # sorted: each bucket in name order
            self.by_free.setdefault(sum(room[d]), []).append(d)
        self.least = min((nf.total(spec) for nf in need.values()), default=0)

    def moved(self, d: str, before: int) -> None:
        """Node d's room changed (it held `before` free devices)."""
        if d not in self.need or sum(self.room[d]) == before:
            return
        self.by_free[before].remove(d)
        bisect.insort(self.by_free.setdefault(sum(self.room[d]), []), d)

    def fullest(self, n: str, extra: dict[str, list[int]]) -> str | None:
        """The node with the fewest free devices, then the first name, other than n where one
        more replacement fits (`extra`: devices promised on some nodes already)."""
        best: tuple[int, str] | None = None
        for d, took in extra.items():  # few: their room is less than filed
            if d != n and d in self.need:
                free_d = _plus(self.room[d], took, -1)
                if _fits_on(self.need[d], self.spec, free_d, self.left[d], self.demand) is not None and (
                    best is None or (sum(free_d), d) < best
                ):
                    best = (sum(free_d), d)
        for free in sorted(self.by_free):
            if free < self.least or (best is not None and free > best[0]):
                continue
            for d in self.by_free[free]:
                if d == n or d in extra:
                    continue
                if _fits_on(self.need[d], self.spec, self.room[d], self.left[d], self.demand) is not None:
                    if best is None or (free, d) < best:
                        best = (free, d)
                    break
        return best[1] if best is not None else None


def _fits_on(
    nf: NodeFacts, spec: int, devices: Sequence[int], left: dict[str, int], demand: dict[str, int]
) -> tuple[Sequence[int], Sequence[tuple[int, int, int]]] | None:
    """What one more pod of `spec` takes on the node (`NodeFacts.takes`) where `devices` are
    free and `left` of its resources, or None when it does not fit."""
    if any(left[r] < demand.get(r, 0) for r in left):
        return None
    return nf.takes(spec, devices)


def _plus(a: Sequence[int], b: Sequence[int], sign: int = 1) -> list[int]:
    """a + sign * b, per group."""
    return [x + sign * y for x, y in zip(a, b, strict=True)]


def _gangs(cp: cp_model.CpModel, c: Counting, by_kind: dict[int, list[IntVar]]) -> None:
    names = sorted({g for k in c.kinds for g, _ in k.gangs})
    for name in names:
        on = cp.new_bool_var(f"gang_on[{name}]")
        terms = []
        for ki, kind in enumerate(c.kinds):
            pods = dict(kind.gangs).get(name)
            if pods is None or ki not in by_kind:
                continue
            placed = sum(by_kind[ki])
            cp.add(placed <= len(kind.units) * on)
            terms.append(pods * placed)
        need = c.gang_need.get(name, 0)
        if need > 0:
            cp.add(sum(terms) >= need * on)


def _topology(
    cp: cp_model.CpModel, c: Counting, x: dict[tuple[int, str], IntVar], tops: dict[int, int]
) -> None:
    """A gang with a topology constraint runs in one domain (`encoders.gangs`' rows on the
    counts): z[G, k] booleans, sum_k z[G, k] <= 1, and x[K, n] <= top(x) z[G, k(n)] for each
    kind K with pods of G — the same rule the per-device model puts on its node flags, since
    a pod of K on n is a pod of G on n."""
    for name in sorted(c.domains):
        where = c.domains[name]
        mine = {ki for ki, kind in enumerate(c.kinds) if name in dict(kind.gangs)}
        if not mine:
            continue
        zs = [cp.new_bool_var(f"gang_domain[{name},{k}]") for k in range(max(where.values(), default=-1) + 1)]
        cp.add(sum(zs) <= 1)
        for (ki, n), v in x.items():
            if ki not in mine:
                continue
            k = where.get(n)
            if k is None:
                cp.add(v == 0)
            else:
                cp.add(v <= tops[v.index] * zs[k])


def _dominance(
    cp: cp_model.CpModel,
    s: Setting,
    c: Counting,
    kept: list[IntVar],
    budgets: Sequence[Budget],
    moved: dict[int, IntVar] | None = None,
) -> None:
    """kept[a] <= kept[b] where evicting a instead of b is never worse (module docstring).
    With moves (`moved`), only where b cannot move: "a kept, b not" is then "a kept, b
    evicted", and the swap is as before; a movable b might be moved, and evicting a instead
    would cost an eviction. Two movable victims alike in every respect (same node, priority,
    budgets, demand, devices freed, kind of replacement) are interchangeable: the first is
    kept whenever the second is, and evicted only when the second is."""
    moved = moved or {}
    movable = c.movable()
    sole: dict[int, tuple[int, ...]] = {}
    shared: set[int] = set()
    for h, (_, (_, _, users)) in enumerate(s.holders.items()):
        if len(users) == 1:
            was = sole.get(users[0], (0,) * len(c.held_per_group[h]))
            sole[users[0]] = tuple(_plus(was, c.held_per_group[h]))
        else:
            shared.update(users)
    on: dict[str, list[int]] = {}
    for k, v in enumerate(s.victims):
        if k not in shared:
            on.setdefault(v.node, []).append(k)
    for ks in on.values():
        facts = {
            k: (
                s.victims[k].priority,
                sole.get(
                    k, (0,) * len(c.facts[s.victims[k].node].groups) if s.victims[k].node in c.facts else ()
                ),
                tuple(sorted(c.victim_demand[k].items())),
                frozenset(b.name for b in budgets if s.victims[k].pod.namespaced_name in b.pods),
            )
            for k in ks
        }
        for a in ks:
            pa, fa, da, ba = facts[a]
            for b in ks:
                pb, fb, db, bb = facts[b]
                if (
                    a == b
                    or da != db
                    or ba != bb
                    or pa > pb
                    or any(x < y for x, y in zip(fa, fb, strict=True))
                ):
                    continue
                if b in moved:
                    if a < b and a in moved and (pa, fa) == (pb, fb) and movable[a] == movable[b]:
                        cp.add(kept[a] >= kept[b])
                        cp.add(kept[a] + moved[a] >= kept[b] + moved[b])
                    continue
                if (pa, -sum(fa), a) < (pb, -sum(fb), b):
                    cp.add(kept[a] <= kept[b])


Placed = dict[int, tuple[int, str, Problem, Assignment]]


def decode(
    s: Setting, c: Counting, built: Built, values: list[int], forms: list[PodForm]
) -> tuple[list[int], Placed, Placed]:
    """Evicted victims; per placed pending unit (form, node, the node's Problem, the unit's
    claims' placements in it): the kinds' counts given to their units in queue order, each
    request taking the first free devices of its group on the node; and the same per moved
    victim, its replacement matched to a destination slot of its kind (`match_moves`)."""

    def val(v: IntVar) -> int:
        return int(values[v.index])

    evicted = [
        k for k, v in enumerate(built.kept) if not val(v) and not (k in built.moved and val(built.moved[k]))
    ]
    held_devices: dict[str, set[int]] = {}
    for h, (_, (_, node, _)) in enumerate(s.holders.items()):
        if val(built.held[h]):
            held_devices.setdefault(node, set()).update(c.occ[h])
    free_of = {
        n: [[d for d in g if d not in held_devices.get(n, set())] for g in nf.groups]
        for n, nf in c.facts.items()
    }

    flow = {key: val(v) for key, v in built.flows.items()}
    """(node, alternative, group) -> devices still to give the spread request there."""

    def take(g: int, spec: int, n: str) -> tuple[int, str, Problem, Assignment]:
        return (g, n, c.facts[n].problem, _take(c, len(forms[g].claims), spec, n, free_of[n], flow))

    chosen: Placed = {}
    at = dict.fromkeys(range(len(c.kinds)), 0)
    for n in s.nodes:
        for ki, kind in enumerate(c.kinds):
            v = built.x.get((ki, n))
            if v is None:
                continue
            for _ in range(val(v)):
                j = at[ki]
                at[ki] += 1
                chosen[kind.units[j]] = take(kind.form_at(j, n), kind.spec_at(n), n)
    moved: Placed = {}
    for mi, mk in enumerate(c.movers):
        going = [k for k in mk.victims if val(built.moved[k])]
        slots = {n: val(v) for (m, n), v in built.into.items() if m == mi and val(v)}
        form = dict(zip(mk.victims, mk.forms, strict=True))
        for k, n in match_moves([(k, s.victims[k].node) for k in going], slots):
            moved[k] = take(form[k], mk.spec, n)
    return evicted, chosen, moved


def _take(
    c: Counting, claims: int, spec: int, n: str, free: list[list[int]], flow: dict[tuple[str, int, int], int]
) -> Assignment:
    """One pod of `spec` on n (`decode`): each request the first free devices of its group
    (`free`, per group, is updated), a spread request its count out of the flows."""
    nf = c.facts[n]
    local: Assignment = {}
    first = c.spec_offset[spec]
    for ci in range(claims):
        places: list[Placement] = []
        for r in nf.problem.claims[first + ci].requests:
            a = nf.problem.alternatives[r.alternatives[0]]
            if a.index in nf.alt_group:
                parts = [(nf.alt_group[a.index], a.count)]
            else:
                parts = _from_flows(flow, n, a.index, a.count, len(nf.groups))
            for grp, k in parts:
                got, free[grp] = free[grp][:k], free[grp][k:]
                places += [Placement(ci, a.index, d) for d in got]
        local[ci] = places
    return local


def _from_flows(
    flow: dict[tuple[str, int, int], int], n: str, a: int, count: int, groups: int
) -> list[tuple[int, int]]:
    """One pod's spread request `a` on n: (group, devices) taking its `count` out of what
    the flows still give it there, group by group (`flow` is updated). The flows add up to
    the count times the pods (`_flows`' row), so each pod finds its count."""
    parts = []
    for j in range(groups):
        got = min(count, flow.get((n, a, j), 0))
        if got:
            parts.append((j, got))
            flow[(n, a, j)] -= got
            count -= got
    assert not count  # the flows add up to the pods' counts
    return parts


def match_moves(pods: Sequence[tuple[int, str]], slots: dict[str, int]) -> list[tuple[int, str]]:
    """Each (pod, its node) matched to a destination slot on another node; `slots`: node ->
    slots, as many in all as pods. Exists iff on every node o the pods leaving o and the slots
    on o are at most the total (`_moves`' row); built greedily, each step taking a pod from the
    node with most pods plus slots and giving it a slot on the other node with most: after a
    step the total drops by one, and each node at the total (at most two; they hold every pod
    and slot then) is one of the two that dropped, so the condition holds to the end. Ties by
    node name, then pods in order: deterministic."""
    left: dict[str, list[int]] = {}
    for k, o in pods:
        left.setdefault(o, []).append(k)
    slots = dict(slots)
    if sum(slots.values()) != len(pods):
        raise ValueError("as many slots as moved pods")
    out: list[tuple[int, str]] = []
    for _ in range(len(pods)):

        def load(n: str) -> tuple[int, str]:
            return (len(left.get(n, ())) + slots.get(n, 0), n)

        o = max((n for n, ks in left.items() if ks), key=lambda n: (load(n)[0], [-ord(ch) for ch in n]))
        d = max(
            (n for n, q in slots.items() if q and n != o),
            key=lambda n: (load(n)[0], [-ord(ch) for ch in n]),
            default=None,
        )
        if d is None:
            raise ValueError(f"no slot off node {o} for its moved pods")
        out.append((left[o].pop(0), d))
        slots[d] -= 1
    return sorted(out)


__all__ = [
    "Built",
    "Counting",
    "Kind",
    "MoverKind",
    "NodeFacts",
    "build_model",
    "decode",
    "match_moves",
    "merged",
    "greedy_hint",
    "prepare",
]
