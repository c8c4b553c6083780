"""Decision variables: placements, chosen alternatives, placed claims, devices used.

Math (all booleans unless noted):
- placed[c]   claim c gets its devices in this call;
- chosen[a]   alternative a is the one used for its request;
- x[a, d]     alternative a takes device d — created only for *allowed* pairs: d is a
              candidate of a without a CEL error and no static rule excludes it (busy for
              non-admin, counters blocked, lacks a constrained attribute, does not fit what is
              left of a capacity); every other pair is fixed to 0 by omission;
- n[a, g]     integer in [0, min(|g|, count)] — devices of group g taken by a (see
              `encoders.groups`); replaces the x of those devices;
- used[d]     d has any placement: x[a, d] => used[d] and used[d] => OR_a x[a, d]
              (the x itself when d has a single one); for a dedicated device that no admin
              alternative may take, used[d] = sum_a x[a, d] (exclusivity allows one
              placement; the equality is the same set of solutions with a tighter LP);
- group_used[g] = sum_a n[a, g]  (integer in [0, |g|]; groups never contain admin placements).
An alternative is *impossible* (chosen[a] = 0, see `encoders.requests`) when it is an All
alternative whose set is blocked, empty or has an excluded member (multi-node: on every
node; the allowed devices are then the union of the usable nodes' sets), or an ExactCount
alternative with fewer allowed candidates than its count.
"""

from __future__ import annotations

from dra_solver.problem.flat import Candidate, Problem

from . import capacity, compat, constraints, counters, exclusive
from .groups import find_groups
from .model import Model, total, viable_all_sets


def allowed_candidates(problem: Problem) -> tuple[dict[int, dict[int, Candidate]], set[int]]:
    """alternative -> device -> candidate after the static exclusions, and the impossible set."""
    cover = constraints.covering(problem)
    allowed: dict[int, dict[int, Candidate]] = {}
    impossible: set[int] = set()
    for alt in problem.alternatives:
        ok: dict[int, Candidate] = {}
        for cand in alt.candidates:
            if cand.error is not None or cand.device in ok:
                continue
            if (
                exclusive.forbidden(problem, alt, cand)
                or counters.forbidden(problem, alt, cand)
                or compat.forbidden(problem, alt, cand)
                or capacity.forbidden(problem, alt, cand)
                or constraints.forbidden(problem, alt, cand, cover)
            ):
                continue
            ok[cand.device] = cand
        if alt.mode == "All" and alt.all_sets is not None:  # multi-node: one set per node
            usable = list(viable_all_sets(alt, ok).values())
            ok = {d: ok[d] for d in sorted({d for s in usable for d in s})}
            bad = alt.all_blocked is not None or not usable
        elif alt.mode == "All":
            bad = alt.all_blocked is not None or not alt.candidates or len(ok) != len(alt.candidates)
        else:
            bad = len(ok) < alt.count
        if bad:
            impossible.add(alt.index)
            ok = {}
        allowed[alt.index] = ok
    return allowed, impossible


def add(m: Model, *, group: bool = True) -> None:
    """Create every decision variable and the device-used indicators."""
    p, cp = m.problem, m.cp
    m.allowed, m.impossible = allowed_candidates(p)
    if group:
        m.groups = find_groups(p, m.allowed, constraints.covering(p))
        m.group_of = {d: g.index for g in m.groups for d in g.devices}
    for c in p.claims:
        m.placed[c.index] = cp.new_bool_var(f"placed[{c.index}]")
    for alt in p.alternatives:
        a = alt.index
        m.chosen[a] = cp.new_bool_var(f"chosen[{a}]")
        m.x_by_alt[a], m.n_by_alt[a] = [], []
        for d in m.allowed[a]:
            g = m.group_of.get(d)
            if g is None:
                v = cp.new_bool_var(f"x[{a},{d}]")
                m.x[(a, d)] = v
                m.x_by_alt[a].append((d, v))
                m.x_by_dev.setdefault(d, []).append((a, v))
            elif (a, g) not in m.n:
                size = len(m.groups[g].devices)
                hi = size if alt.mode == "All" else min(size, alt.count)
                v = cp.new_int_var(0, hi, f"n[{a},{g}]")
                m.n[(a, g)] = v
                m.n_by_alt[a].append((g, v))
                m.n_by_group.setdefault(g, []).append((a, v))
    for d, pairs in m.x_by_dev.items():
        if len(pairs) == 1:
            m.used[d] = pairs[0][1]
            continue
        u = cp.new_bool_var(f"used[{d}]")
        if not p.devices[d].multi and not any(p.alternatives[a].admin for a, _ in pairs):
            cp.add(u == total([v for _, v in pairs]))  # at most one placement: used = the sum
        else:
            for _, v in pairs:
                cp.add_implication(v, u)
            cp.add_bool_or([v for _, v in pairs]).only_enforce_if(u)
        m.used[d] = u
    for grp in m.groups:
        terms = [v for _, v in m.n_by_group.get(grp.index, [])]
        u = cp.new_int_var(0, len(grp.devices), f"group_used[{grp.index}]")
        cp.add(u == total(terms))
        m.group_used[grp.index] = u
