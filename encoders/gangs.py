"""Gangs: a PodGroup's pods are placed all or nothing (KEP-4671 `gang.minCount`).

Why a family of its own: upstream's scheduler places a gang's pods one after the other and
never revisits an earlier pod's devices, so it fails gangs that have a joint allocation
(kubernetes#138765); here the gang is one decision next to its pods' devices.

Active when `Problem.gangs` is non-empty (`solver.allocators` fills it from the PodGroups).

Math (booleans), for every gang G with groups (pod forms) g and their pod counts k[g], and
`need` = minCount less the pods that are placed whenever the gang is:
- on[G]: the gang is placed;
- flag[g] <= on[G] for every g in G — no pod of an unplaced gang is placed, where flag[g] is
  placed[first claim of g] or pod_placed[g] for a bare group (the pod's placed flag, as in
  `encoders.resources`);
- sum_{g in G} k[g] * flag[g] >= need * on[G] — a placed gang places at least `need` of
  its pods (one form per pod at most, `encoders.resources`, so the sum counts pods).
A pod in two gangs (pods sharing a claim, joined) is bounded by both. Reads no device facts.
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import Problem

from .model import Allowed, Cover, IntVar, Model, weighted
from .nodes import group_claims


def add(m: Model) -> None:
    """on[G] per gang; its pods only with it, and at least `need` of them when it is on."""
    p, cp = m.problem, m.cp
    if not p.gangs:
        return
    first = {g: cs[0] for g, cs in group_claims(p).items()}
    for i, gang in enumerate(p.gangs):
        on = cp.new_bool_var(f"gang_on[{i}]")
        m.gang_on[i] = on
        terms: list[tuple[int, IntVar]] = []
        for g, pods in gang.groups:
            flag = m.pod_placed[g] if g in m.pod_placed else m.placed[first[g]]
            cp.add(flag <= on)
            terms.append((pods, flag))
        if gang.need > 0:
            cp.add(weighted(terms) >= gang.need * on)


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """No device facts: this family constrains pods only."""
    return ()
