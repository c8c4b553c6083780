"""Exclusive use of dedicated devices, busy devices, and admin access.

Math (x over the placements each device can get):
- busy device d (existing dedicated allocation): x[a, d] = 0 for every non-admin a
  (static, see `forbidden`; the variable is never created);
- dedicated device d (multi == False): sum_{a non-admin} x[a, d] <= 1 — one non-admin
  placement over all alternatives of all claims; for a group g: sum_a n[a, g] <= |g|, which
  is the domain of group_used[g] (groups never hold admin placements);
- admin alternatives ignore busy devices and other claims' placements, but one claim never
  takes a dedicated device twice: for every claim c and dedicated device d,
  sum_{a of c} x[a, d] <= 1 (admin or not — as the reference allocator and the checker,
  and upstream, whose per-claim "being placed" set holds every dedicated placement);
- as upstream, a dedicated device an admin alternative of claim c takes is in use for the
  non-admin alternatives of the later claims of the same call (pod): for such c and d,
  sum_{a of c} x[a, d] + sum_{b non-admin, claim of b after c, same group} x[b, d] <= 1
  (docs/semantics.md, "Admin access"; the reference and the checker read the same rule);
- multi-allocatable devices are not restricted here (only by `encoders.capacity`); one
  alternative never takes a device twice because x is boolean.
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import Alternative, Candidate, Problem

from .model import Allowed, Cover, IntVar, Model


def forbidden(problem: Problem, alt: Alternative, cand: Candidate) -> bool:
    """A busy device is never placed by a non-admin alternative."""
    return problem.devices[cand.device].busy and not alt.admin


def add(m: Model) -> None:
    """At most one non-admin placement per dedicated device, one per claim and device, and none
    in a later claim of the pod after an admin placement."""
    p = m.problem
    for d, pairs in m.x_by_dev.items():
        if p.devices[d].multi or len(pairs) < 2:
            continue
        plain = [v for a, v in pairs if not p.alternatives[a].admin]
        if len(plain) > 1:
            m.cp.add_at_most_one(plain)
        by_claim: dict[int, list[IntVar]] = {}
        admin_claims: set[int] = set()
        for a, v in pairs:
            alt = p.alternatives[a]
            by_claim.setdefault(alt.claim, []).append(v)
            if alt.admin:
                admin_claims.add(alt.claim)
        for c in sorted(admin_claims):  # without admin, the non-admin at-most-one covers it
            group = p.claims[c].group
            later = [
                v
                for a, v in pairs
                if not p.alternatives[a].admin
                and p.alternatives[a].claim > c
                and p.claims[p.alternatives[a].claim].group == group
            ]
            if len(by_claim[c]) + len(later) > 1:
                m.cp.add_at_most_one(by_claim[c] + later)


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): None — never grouped — for shared,
    busy or in-use devices and devices an admin alternative may take (admin placements may
    overlap non-admin ones, so "devices used" would differ from "placements")."""
    dev = problem.devices[d]
    if dev.multi or dev.busy or dev.shared_in_use or any(dev.in_use.values()):
        return None
    if any(problem.alternatives[a].admin for a in alts):
        return None
    return ()
