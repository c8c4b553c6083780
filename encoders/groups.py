"""Model-size reduction: find interchangeable devices.

Why: a node with 64 identical GPUs would otherwise cost 64 booleans per alternative plus 64
"used" indicators, and CP-SAT would explore 64! symmetric solutions. Devices that no rule can
tell apart are merged into one group; the encoders then use one integer `n[a, g]` per
(alternative, group) and the decoder hands out the group's lowest device indices first.

Two devices d, d' are interchangeable (and grouped) when the same alternatives may take them
and every encoder family (`encoders.families`) reads the same facts of both (`device_key`);
today that means all of these hold:
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

from . import constraints
from .families import FAMILIES
from .model import DeviceGroup


def find_groups(
    problem: Problem, allowed: dict[int, dict[int, Candidate]], covering: dict[int, list[int]]
) -> list[DeviceGroup]:
    """Groups (size >= 2) of interchangeable devices, in order of their lowest device index."""
    alts_of: dict[int, list[int]] = {}
    for a in sorted(allowed):
        for d in allowed[a]:
            alts_of.setdefault(d, []).append(a)
    cover = constraints.covering(problem)
    by_signature: dict[tuple, list[int]] = {}
    for dev in problem.devices:
        d = dev.index
        alts = alts_of.get(d)
        if not alts:
            continue
        keys = tuple(f.device_key(problem, d, alts, allowed, cover) for f in FAMILIES)
        if any(k is None for k in keys):
            continue
        by_signature.setdefault((tuple(alts), keys), []).append(d)
    members = sorted((tuple(sorted(ds)) for ds in by_signature.values() if len(ds) >= 2), key=lambda t: t[0])
    return [DeviceGroup(i, ds) for i, ds in enumerate(members)]
