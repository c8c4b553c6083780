"""Model-size reduction: find interchangeable devices.

Why: a node with 64 identical GPUs would otherwise cost 64 booleans per alternative plus 64
"used" indicators, and CP-SAT would explore 64! symmetric solutions. Devices that no rule can
tell apart are merged into one group; the encoders then use one integer `n[a, g]` per
(alternative, group) and the decoder hands out the group's lowest device indices first.

Two devices d, d' are interchangeable (and grouped) when all of these hold:
- neither is multi-allocatable, busy, shared or has capacity in use (so exclusivity is a plain
  "at most |g| placements over all alternatives" and capacity never applies);
- for every alternative: both are allowed candidates or neither is, with equal `consumed`;
- no alternative that may take them is admin (admin placements may overlap non-admin ones,
  which would make "devices used" differ from "placements");
- for every constraint covering such an alternative, both have the same value set;
- same counter use (same counters, same amounts), same counters_blocked;
- multi-node Problems: the same nodes see them and, per alternative, the same nodes allow them
  (`DeviceInfo.nodes`, `Candidate.nodes`), so `encoders.nodes` treats them alike.
Then any permutation of the group maps a solution to a solution with the same objective
(up to the device-order tie-break, which `encoders.objective` models exactly per group).
"""

from __future__ import annotations

from dra_solver.problem.flat import Candidate, Problem

from .model import DeviceGroup, value_key


def find_groups(
    problem: Problem, allowed: dict[int, dict[int, Candidate]], covering: dict[int, list[int]]
) -> list[DeviceGroup]:
    """Groups (size >= 2) of interchangeable devices, in order of their lowest device index."""
    alts_of: dict[int, list[int]] = {}
    for a in sorted(allowed):
        for d in allowed[a]:
            alts_of.setdefault(d, []).append(a)
    by_signature: dict[tuple, list[int]] = {}
    for dev in problem.devices:
        d = dev.index
        alts = alts_of.get(d)
        if not alts or dev.multi or dev.busy or dev.shared_in_use or any(dev.in_use.values()):
            continue
        if any(problem.alternatives[a].admin for a in alts):
            continue
        per_alt = []
        for a in alts:
            cand = allowed[a][d]
            consumed = tuple(sorted(cand.consumed.items())) if cand.consumed else ()
            values = []
            for k in covering.get(a, []):
                vs = problem.constraints[k].values.get((a, d))
                values.append(tuple(sorted(value_key(v) for v in vs)) if vs is not None else None)
            where = tuple(sorted(cand.nodes)) if cand.nodes is not None else None
            per_alt.append((a, consumed, tuple(values), where))
        seen = tuple(sorted(dev.nodes)) if dev.nodes is not None else None
        signature = (tuple(per_alt), tuple(sorted(dev.counter_use.items())), dev.counters_blocked, seen)
        by_signature.setdefault(signature, []).append(d)
    members = sorted((tuple(sorted(ds)) for ds in by_signature.values() if len(ds) >= 2), key=lambda t: t[0])
    return [DeviceGroup(i, ds) for i, ds in enumerate(members)]
