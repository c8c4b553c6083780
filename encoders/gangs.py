"""Gangs: a PodGroup's pods are placed all or nothing (KEP-4671 `gang.minCount`).

Why a family of its own: upstream's scheduler places a gang's pods one after the other and
never revisits an earlier pod's devices, so it fails gangs that have a joint allocation
(kubernetes#138765); here the gang is one decision next to its pods' devices.

Active when `Problem.gangs` is non-empty (`solver.planners.policy` fills it from the PodGroups).

Math (booleans), for every gang G with groups (pod forms) g and their pod counts k[g], and
`need` = minCount less the pods that are placed whenever the gang is:
- on[G]: the gang is placed;
- flag[g] <= on[G] for every g in G — no pod of an unplaced gang is placed, where flag[g] is
  placed[first claim of g] or pod_placed[g] for a bare group (the pod's placed flag, as in
  `encoders.resources`);
- sum_{g in G} k[g] * flag[g] >= need * on[G] — a placed gang places at least `need` of
  its pods (one form per pod at most, `encoders.resources`, so the sum counts pods).
A pod in two gangs (pods sharing a claim, joined) is bounded by both.

Topology (KEP-5732, `GangInfo.domains` D_1..D_K: node sets, one per value of the gang's node
label), multi-node Problems:
- z[G, k]: the gang's pods run in domain k;
- sum_k z[G, k] = on[G] — a placed gang has exactly one domain, an unplaced one none;
- y[g, n] <= z[G, k(n)] for every group g of G and allowed node n, where k(n) is the domain
  holding n (y[g, n] = 0 when none does) — a pod's node lies in the chosen domain.
Since the domains are disjoint, this is y[g, n] <= sum_{k: n in D_k} z[G, k]. Single-node
Problems have one node, so at most one domain: the gang is off when the node is in none.
Reads no device facts.
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import Problem

from .model import Allowed, Cover, IntVar, Model, total, weighted
from .nodes import allowed_nodes, pod_flags


def add(m: Model) -> None:
    """on[G] per gang; its pods only with it, and at least `need` of them when it is on."""
    p, cp = m.problem, m.cp
    if not p.gangs:
        return
    flag_of = pod_flags(m)
    for i, gang in enumerate(p.gangs):
        on = cp.new_bool_var(f"gang_on[{i}]")
        m.gang_on[i] = on
        terms: list[tuple[int, IntVar]] = []
        for g, pods in gang.groups:
            flag = flag_of[g]
            cp.add(flag <= on)
            terms.append((pods, flag))
        if gang.need > 0:
            cp.add(weighted(terms) >= gang.need * on)
        if gang.domains:
            _domains(m, i, [g for g, _ in gang.groups], on)


def _domains(m: Model, i: int, groups: list[int], on: IntVar) -> None:
    """z[G, k], one domain per placed gang, its pods' nodes inside it (module docstring)."""
    p, cp = m.problem, m.cp
    domains = p.gangs[i].domains
    if not p.nodes:
        if not any(p.node in d for d in domains):
            cp.add(on == 0)
        return
    zs = [cp.new_bool_var(f"gang_domain[{i},{k}]") for k in range(len(domains))]
    cp.add(total(zs) == on)
    where = {n: k for k, d in enumerate(domains) for n in d}
    for g in groups:
        for n in allowed_nodes(p, g):
            y = m.node_y.get((g, n))
            if y is None:
                continue
            k = where.get(n)
            if k is None:
                cp.add(y == 0)
            else:
                cp.add(y <= zs[k])


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """No device facts: this family constrains pods only."""
    return ()
