"""Symmetry breaking between interchangeable alternatives of one claim.

Why: a claim with 32 identical one-device requests has 32! equivalent placements for every
set of devices, and CP-SAT proves a bound only after refuting each of them (more than 10 s
on `benchmarks.workloads.hard_list_match`, bound still open). Ordering the interchangeable
alternatives keeps one representative per orbit.

Keys. Every device d has a column weight w(d) >= 1: the rank of its column (its own x, or
its group's n, see `encoders.groups`) by lowest device index, so the members of a group
share a weight. The key of an alternative a is the weighted sum of the columns it takes:
    key[a] = sum_d w(d) * x[a, d] + sum_g w(g) * n[a, g].

Interchangeable alternatives. a ~ b when they belong to the same claim c, both are the only
alternative of their request (no firstAvailable, so chosen[a] = chosen[b] = placed[c] and
both have position 0), neither is impossible, both are ExactCount with the same count and the
same admin flag, they have the same allowed candidates (after every static exclusion) with
the same consumed amounts, and for every constraint of c either both are uncovered or both are
covered with the same value set on every allowed device. Then swapping the placements of a
and b maps every solution to a solution: every encoder sees a and b with the same
coefficients, bounds and value sets (requests: same count and chosen; exclusive: same admin
flag, same claim; capacity: same consumed; counters and "used": the same devices are used;
constraints: same values; result limit: same claim total). Every objective stage has the same
value (placed and firstAvailable positions are unchanged — a and b have no firstAvailable, so
they do not appear in the "first_available_order" stages either — "devices" and "order" read only
which devices are used). For a class a_1 < ... < a_k (alternative index order) we add
    key[a_i] <= key[a_{i+1}],
strict — key[a_i] + chosen[a_i] <= key[a_{i+1}] — when count = 1 and every allowed candidate
is a dedicated device kept on its own (no multi device, no group): one claim never takes a
dedicated device twice, so the keys of two chosen alternatives differ (both are 0 when the
claim is not placed).

Why no optimal solution is lost: take any optimal solution and sort the rows of every class
by key (a permutation of interchangeable alternatives, hence a solution with the same stage
values); with count = 1 on dedicated single devices the keys are distinct, so the sorted rows
satisfy the strict form. Hence every orbit keeps a member, optimal orbits included.
`canonical` applies exactly this sort to a hint (stable), so a valid hint stays valid.

With count = 1 this is the usual "increasing device index" order, which is also the order the
reference's first fit returns for identical requests. Keys are linear expressions over
existing variables: no variable is added.

Not ordered (measured, not needed for correctness): interchangeable *claims*. Ordering them
by key made `benchmarks.workloads.shared_memory` 300x slower to prove its placed-claims
optimum (CP-SAT's LP bound does that in 0.02 deterministic seconds unaided).
"""

from __future__ import annotations

from fractions import Fraction

from dra_solver.problem.flat import Assignment, Placement

from .model import IntVar, LinearExpr, Model, value_key, weighted


def weights(m: Model) -> dict[int, int]:
    """device -> column weight (1-based rank of its column by lowest device index)."""
    reps: dict[int, int] = {}
    for dev in m.problem.devices:
        g = m.group_of.get(dev.index)
        reps[dev.index] = m.groups[g].devices[0] if g is not None else dev.index
    order = {r: i + 1 for i, r in enumerate(sorted(set(reps.values())))}
    return {d: order[r] for d, r in reps.items()}


def _allowed_sig(m: Model, a: int) -> tuple:
    """The allowed candidates of `a` with their consumed amounts."""
    out = []
    for d in sorted(m.allowed.get(a, {})):
        consumed = m.allowed[a][d].consumed
        out.append((d, tuple(sorted((k, Fraction(v)) for k, v in consumed.items())) if consumed else None))
    return tuple(out)


def _values_sig(m: Model, k: int, a: int) -> tuple:
    """The value sets constraint `k` sees for `a` on each allowed device."""
    values = m.problem.constraints[k].values
    out = []
    for d in sorted(m.allowed.get(a, {})):
        vs = values.get((a, d))
        out.append(tuple(sorted(value_key(v) for v in vs)) if vs is not None else None)
    return tuple(out)


def alternative_classes(m: Model) -> list[list[int]]:
    """Classes (size >= 2) of interchangeable alternatives, each in index order."""
    p = m.problem
    out: list[list[int]] = []
    for c in p.claims:
        by_sig: dict[tuple, list[int]] = {}
        for r in c.requests:
            if r.first_available or len(r.alternatives) != 1:
                continue
            a = r.alternatives[0]
            alt = p.alternatives[a]
            if a in m.impossible or alt.mode != "ExactCount" or alt.position != 0 or alt.claim != c.index:
                continue
            cover = tuple(
                (k, _values_sig(m, k, a) if a in p.constraints[k].alternatives else None)
                for k in c.constraints
            )
            sig = (alt.count, alt.admin, _allowed_sig(m, a), cover)
            by_sig.setdefault(sig, []).append(a)
        out.extend(sorted(v) for v in by_sig.values() if len(v) >= 2)
    return sorted(out)


def _terms(m: Model, a: int, w: dict[int, int]) -> list[tuple[int, IntVar]]:
    """(weight, variable) terms of key[a]."""
    terms = [(w[d], v) for d, v in m.x_by_alt.get(a, [])]
    return terms + [(w[m.groups[g].devices[0]], v) for g, v in m.n_by_alt.get(a, [])]


def key(m: Model, a: int, w: dict[int, int]) -> LinearExpr:
    """key[a]: the weighted sum of the columns alternative `a` takes."""
    return weighted(_terms(m, a, w))


def strict(m: Model, a: int) -> bool:
    """count = 1 over dedicated devices kept on their own: keys of chosen rows differ."""
    alt = m.problem.alternatives[a]
    return (
        alt.count == 1
        and not m.n_by_alt.get(a)
        and not any(m.problem.devices[d].multi for d, _ in m.x_by_alt.get(a, []))
    )


def add(m: Model) -> None:
    """Order every class of interchangeable alternatives by key (see module docstring)."""
    w = weights(m)
    for cls in alternative_classes(m):
        tight = all(strict(m, a) for a in cls)
        for lo, hi in zip(cls, cls[1:], strict=False):
            if tight:
                m.cp.add(key(m, lo, w) + m.chosen[lo] <= key(m, hi, w))
            else:
                m.cp.add(key(m, lo, w) <= key(m, hi, w))


def canonical(m: Model, assignment: Assignment) -> Assignment:
    """The same allocation with the placements of interchangeable alternatives permuted into
    key order (stable). Placements the model does not allow move with their alternative but do
    not count in its key (hint_values ignores them)."""
    p = m.problem
    w = weights(m)

    def row_key(pls: list[Placement]) -> int:
        return sum(w[pl.device] for pl in pls if pl.device in m.allowed.get(pl.alternative, {}))

    out: Assignment = {c: list(pls) for c, pls in assignment.items()}
    for cls in alternative_classes(m):
        ci = p.alternatives[cls[0]].claim
        if ci not in out:
            continue
        rows = {a: [pl for pl in out[ci] if pl.alternative == a] for a in cls}
        ordered = sorted(cls, key=lambda a: row_key(rows[a]))
        rest = [pl for pl in out[ci] if pl.alternative not in rows]
        moved = [
            Placement(ci, target, pl.device)
            for target, source in zip(cls, ordered, strict=True)
            for pl in rows[source]
        ]
        out[ci] = sorted(
            rest + moved,
            key=lambda pl: (
                p.alternatives[pl.alternative].request,
                p.alternatives[pl.alternative].position,
                pl.device,
            ),
        )
    return out
