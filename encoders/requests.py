"""Claims, requests, alternatives, allocation modes and the per-claim result limit.

Math:
- mode "all": placed[c] = 1 for every claim (one pod's claims: all or none — the Problem is
  infeasible otherwise); mode "free": placed[c] free (maximised by the objective);
- every request r of claim c: sum_{a in r} chosen[a] = placed[c] (one alternative; a request
  without firstAvailable has exactly one);
- impossible alternatives (see `encoders.variables`): chosen[a] = 0;
- ExactCount: sum_d x[a, d] + sum_g n[a, g] = count * chosen[a];
- All: x[a, d] = chosen[a] for every member, n[a, g] = |g| * chosen[a];
- per claim: sum of all its placements <= MAX_RESULTS_PER_CLAIM (32);
- an alternative with `fatal` (allocationMode All on a pool not ready, upstream's per-node
  failure): placed[c] = 0 for every claim of its pod (its group; every claim without groups),
  whatever the pod's other requests (mode "all" is then infeasible; the reference search,
  which every call runs, raises the error itself).
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import MAX_RESULTS_PER_CLAIM, Problem

from .model import Allowed, Cover, Model, total


def add(m: Model) -> None:
    """Claims placed per mode, one alternative per request, counts, All-sets, result limit."""
    p, cp = m.problem, m.cp
    failed = {p.claims[alt.claim].group for alt in p.alternatives if alt.fatal is not None}
    for c in p.claims:
        if c.group in failed:
            cp.add(m.placed[c.index] == 0)
        if m.mode == "all":
            cp.add(m.placed[c.index] == 1)
        for r in c.requests:
            cp.add(total([m.chosen[a] for a in r.alternatives]) == m.placed[c.index])
    for alt in p.alternatives:
        a = alt.index
        if a in m.impossible:
            cp.add(m.chosen[a] == 0)
            continue
        if alt.mode == "All" and alt.all_sets is not None:
            continue  # multi-node: the set depends on the pod's node (`encoders.nodes`)
        if alt.mode == "All":
            for _, v in m.x_by_alt[a]:
                cp.add(v == m.chosen[a])
            for g, v in m.n_by_alt[a]:
                cp.add(v == len(m.groups[g].devices) * m.chosen[a])
        else:
            cp.add(m.alt_count(a) == alt.count * m.chosen[a])
    for c in p.claims:
        alts = [a for r in c.requests for a in r.alternatives]
        # Only one alternative per request is chosen: the claim takes at most this many devices.
        most = sum(max((_most(m, a) for a in r.alternatives), default=0) for r in c.requests)
        if most > MAX_RESULTS_PER_CLAIM:
            cp.add(total([v for a in alts for v in m.alt_vars(a)]) <= MAX_RESULTS_PER_CLAIM)


def _most(m: Model, a: int) -> int:
    """Most devices alternative `a` can take."""
    if a in m.impossible:
        return 0
    alt = m.problem.alternatives[a]
    return m.alt_max(a) if alt.mode == "All" else min(alt.count, m.alt_max(a))


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): nothing — counts only."""
    return ()
