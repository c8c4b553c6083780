"""Claim constraints: matchAttribute and distinctAttribute over typed value sets.

For constraint k, the covered placements are (a, d) with a in k.alternatives; values[(a, d)]
is a set of typed values (scalars are singletons, KEP-5491 lists their elements) or None.
- None: the device lacks the attribute, x[a, d] = 0 (static, `forbidden`).
- match: the intersection of the value sets of all covered placements is non-empty. One
  boolean y[v] per *viable* value v, sum_v y[v] <= 1, and x[a, d] => OR_{v in values[(a, d)]} y[v]
  (x[a, d] = 0 when none of its values is viable). For a group g: b[a, g] >= n[a, g] / |g|
  (b = "n >= 1") and b => OR y[v].
  Viable values (`viable_values`, a necessary condition for v to be the common value of a
  placed claim): take the requests of the claim whose alternatives are all covered; for each,
  the alternatives that can be served with v alone (ExactCount: at least `count` allowed
  devices carrying v; All: every member carries v), need_r = the least device count among
  them, U = the union of their allowed devices carrying v. v is viable iff every such
  request has one, and, when U holds only dedicated devices, |U| >= sum_r need_r (one claim
  never takes a dedicated device twice). An unplaced claim needs no y at all, so dropping the
  other values keeps every solution; it spares CP-SAT's presolve from rediscovering them
  (`benchmarks.workloads.hard_list_match`: 47 values, 1 viable).
- distinct: value sets pairwise disjoint over covered placements: for each value v,
  sum_{(a, d): v in values[(a, d)]} x[a, d] + sum_{(a, g) likewise} n[a, g] <= 1.
  (A multi device placed by two covered alternatives shares its values with itself, so it is
  rejected like upstream would.)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from dra_solver.problem.flat import Alternative, Candidate, ConstraintInfo, Problem, Value, ValueSet

from .model import (
    Allowed,
    Cover,
    IntVar,
    Model,
    sorted_values,
    total,
    upper_bound,
    value_key,
    viable_all_sets,
)


def covering(problem: Problem) -> dict[int, list[int]]:
    """alternative -> indices of the constraints covering it."""
    out: dict[int, list[int]] = {}
    for k in problem.constraints:
        for a in sorted(k.alternatives):
            out.setdefault(a, []).append(k.index)
    return out


def forbidden(problem: Problem, alt: Alternative, cand: Candidate, cover: dict[int, list[int]]) -> bool:
    """The device lacks a constrained attribute (missing entries count as lacking)."""
    key = (alt.index, cand.device)
    return any(problem.constraints[k].values.get(key) is None for k in cover.get(alt.index, []))


# A covered placement variable: its value set, the variable, and (alternative, group) for counts.
_Item = tuple[ValueSet, IntVar, tuple[int, int] | None]


def add(m: Model) -> None:
    """Encode every match/distinct constraint over the variables of its covered alternatives."""
    p = m.problem
    for k in p.constraints:
        items: list[_Item] = []
        for a in sorted(k.alternatives):
            for d, v in m.x_by_alt.get(a, []):
                items.append((_values(k.values, a, d), v, None))
            for g, v in m.n_by_alt.get(a, []):
                items.append((_values(k.values, a, m.groups[g].devices[0]), v, (a, g)))
        ENCODINGS[k.kind](m, k, items)


def viable_values(m: Model, k: ConstraintInfo) -> set[Value]:
    """The values that can be the common value of match constraint `k` (module docstring)."""
    p = m.problem
    carrying: dict[int, dict[Value, list[int]]] = {}
    seen: set[Value] = set()
    for a in sorted(k.alternatives):
        per = carrying.setdefault(a, {})
        for d in m.allowed.get(a, {}):
            for v in k.values.get((a, d)) or ():
                per.setdefault(v, []).append(d)
                seen.add(v)
    requests = [r for r in p.claims[k.claim].requests if all(a in k.alternatives for a in r.alternatives)]
    out = set()
    for v in seen:
        need, ok = 0, True
        union: set[int] = set()
        for r in requests:
            counts = []
            for a in r.alternatives:
                alt, devs = p.alternatives[a], carrying.get(a, {}).get(v, [])
                if a in m.impossible:
                    continue
                if alt.mode == "All" and alt.all_sets is not None:
                    sets = [s for s in viable_all_sets(alt, m.allowed[a]).values() if set(s) <= set(devs)]
                    if not sets:
                        continue
                    counts.append(min(len(s) for s in sets))
                    union.update(d for s in sets for d in s)
                    continue
                if alt.mode == "All" and len(devs) == len(m.allowed[a]):
                    counts.append(len(devs))
                elif alt.mode != "All" and len(devs) >= alt.count:
                    counts.append(alt.count)
                else:
                    continue
                union.update(devs)
            if not counts:
                ok = False
                break
            need += min(counts)
        if ok and (any(p.devices[d].multi for d in union) or len(union) >= need):
            out.add(v)
    return out


def _values(values: dict[tuple[int, int], ValueSet | None], a: int, d: int) -> ValueSet:
    vs = values.get((a, d))
    assert vs is not None, "placements lacking the attribute are excluded statically"
    return vs


def _match(m: Model, k: int, items: list[_Item], viable: set[Value]) -> None:
    if len(items) < 2 and all(ag is None for _, _, ag in items):
        return  # a single boolean placement always matches itself
    all_values = sorted_values(frozenset().union(*(s for s, _, _ in items)) & viable)
    ys = {v: m.cp.new_bool_var(f"y[{k},{i}]") for i, v in enumerate(all_values)}
    m.match_y[k] = ys
    if len(ys) > 1:
        m.cp.add_at_most_one(list(ys.values()))
    for values, var, ag in items:
        lits = [ys[v] for v in sorted_values(values) if v in ys]
        if not lits:
            m.cp.add(var == 0)  # no viable value: this placement never matches
        elif ag is None:
            m.cp.add_bool_or(lits).only_enforce_if(var)
        else:
            a, g = ag
            b = m.cp.new_bool_var(f"b[{k},{a},{g}]")
            m.match_b[(k, a, g)] = b
            m.cp.add(var <= len(m.groups[g].devices) * b)
            m.cp.add_bool_or(lits).only_enforce_if(b)


def _match_kind(m: Model, k: ConstraintInfo, items: list[_Item]) -> None:
    _match(m, k.index, items, viable_values(m, k))


def _distinct_kind(m: Model, k: ConstraintInfo, items: list[_Item]) -> None:
    _distinct(m, items)


def _distinct(m: Model, items: list[_Item]) -> None:
    by_value: dict[Value, list[IntVar]] = {}
    for values, var, _ in items:
        for v in values:
            by_value.setdefault(v, []).append(var)
    for v in sorted_values(set(by_value)):
        vs = by_value[v]
        if len(vs) > 1 or upper_bound(vs[0]) > 1:
            m.cp.add(total(vs) <= 1)


ENCODINGS: dict[str, Callable[[Model, ConstraintInfo, list[_Item]], None]] = {
    "match": _match_kind,
    "distinct": _distinct_kind,
}
"""Constraint kind (`dra_solver.problem.kinds.KINDS`) -> its CP-SAT encoding."""


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): per alternative, the value set of
    every constraint covering it."""
    out = []
    for a in alts:
        for k in cover.get(a, []):
            vs = problem.constraints[k].values.get((a, d))
            out.append(tuple(sorted(value_key(v) for v in vs)) if vs is not None else None)
    return tuple(out)
