"""Between CP-SAT values and Assignments: decoding a solution and hinting a known one.

Decoding: a placement for every x[a, d] = 1; each group g hands out its devices lowest index
first, alternative after alternative in index order, n[a, g] devices each (the group's
devices are interchangeable, so any split is as good; lowest-first is deterministic). A claim
is in the Assignment iff placed[c] = 1; its placements are ordered like upstream's results:
request order, then alternative (subrequest position), then device index.

Hinting is the inverse: every variable gets the value the given Assignment implies (pairs the
model does not allow are ignored — CP-SAT then repairs or drops the hint).
"""

from __future__ import annotations

from collections.abc import Callable

from dra_solver.problem.flat import Assignment, Placement

from .model import IntVar, Model, sorted_values


def decode(m: Model, value: Callable[[IntVar], int]) -> Assignment:
    """The Assignment of a solution; `value` reads a variable's value in that solution."""
    p = m.problem
    by_claim: dict[int, list[Placement]] = {c.index: [] for c in p.claims}
    for (a, d), v in m.x.items():
        if value(v):
            by_claim[p.alternatives[a].claim].append(Placement(p.alternatives[a].claim, a, d))
    for g in m.groups:
        nxt = 0
        for a, v in sorted(m.n_by_group.get(g.index, []), key=lambda t: t[0]):
            k = value(v)
            for d in g.devices[nxt : nxt + k]:
                by_claim[p.alternatives[a].claim].append(Placement(p.alternatives[a].claim, a, d))
            nxt += k
    out: Assignment = {}
    for c in p.claims:
        if value(m.placed[c.index]):
            out[c.index] = sorted(by_claim[c.index], key=lambda pl: result_key(m, pl))
    return out


def result_key(m: Model, pl: Placement) -> tuple[int, int, int]:
    """Upstream result order: request, then subrequest position, then device."""
    alt = m.problem.alternatives[pl.alternative]
    return (alt.request, alt.position, pl.device)


def hint_values(m: Model, assignment: Assignment) -> list[tuple[IntVar, int]]:
    """A value for every variable, as implied by `assignment`."""
    p = m.problem
    pairs = {(pl.alternative, pl.device) for pls in assignment.values() for pl in pls}
    out: list[tuple[IntVar, int]] = []
    for c in p.claims:
        out.append((m.placed[c.index], int(c.index in assignment)))
    hinted_alts = {a for a, _ in pairs}
    for a, v in m.chosen.items():
        out.append((v, int(a in hinted_alts)))
    for key, v in m.x.items():
        out.append((v, int(key in pairs)))
    counts: dict[tuple[int, int], int] = {}
    for a, d in pairs:
        g = m.group_of.get(d)
        if g is not None and (a, g) in m.n:
            counts[(a, g)] = counts.get((a, g), 0) + 1
    for key, v in m.n.items():
        out.append((v, counts.get(key, 0)))
    used_devs = {d for _, d in pairs}
    for d, v in m.used.items():
        if len(m.x_by_dev[d]) > 1:  # otherwise used[d] is the x itself
            out.append((v, int(d in used_devs)))
    for g, v in m.group_used.items():
        u = min(sum(counts.get((a, g), 0) for a, _ in m.n_by_group.get(g, [])), len(m.groups[g].devices))
        out.append((v, u))
        if g in m.group_order_cost:
            out.append((m.group_order_cost[g], m.group_prefix[g][u]))
    for (_, a, g), b in m.match_b.items():
        out.append((b, int(counts.get((a, g), 0) > 0)))
    for k, ys in m.match_y.items():
        cons = p.constraints[k]
        sets = [cons.values.get(pair) or frozenset() for pair in pairs if pair[0] in cons.alternatives]
        common = frozenset.intersection(*sets) if sets else frozenset()
        viable = [v for v in sorted_values(common) if v in ys]
        pick = viable[0] if viable else None
        for val, y in ys.items():
            out.append((y, int(val == pick)))
    return out
