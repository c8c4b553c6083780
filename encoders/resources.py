"""Node resources and one form per pod: what the scheduler's NodeResourcesFit filter adds.

Active for multi-node Problems with `Problem.node_limits` / `Problem.exclusive_groups`
(`solver.planners.policy` fills them from `solver.problem.demand`).

Math (booleans y[g, n] from `encoders.nodes`; demand[g, r] and free[n, r] integers):
- for every node n and resource r that n limits:
  sum_g demand[g, r] * y[g, n] <= free[n, r] — the pods placed on a node fit in what its
  allocatable leaves after the pods already bound there (cpu in millicores, memory in
  bytes, `pods` counts pods); written only when the pods that may go there could exceed it;
- for every set E of `Problem.exclusive_groups`: sum_{g in E} placed[g] <= 1, where
  placed[g] is placed[first claim of g] or pod_placed[g] for a bare group — one pod in its
  forms for different nodes is placed at most once;
- for consecutive pods a, b of a class of `Problem.ordered_pods` (interchangeable pods in
  queue order): sum_{g in a} placed[g] >= sum_{g in b} placed[g] — symmetry breaking that
  keeps the queue order among identical pods (any plan can be permuted into this form).
Reads no device facts.
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import Problem

from .model import Allowed, Cover, IntVar, Model, total, weighted
from .nodes import pod_flags


def add(m: Model) -> None:
    """Node capacity per resource; at most one form of each pod."""
    p, cp = m.problem, m.cp
    for n, limits in p.node_limits.items():
        for r, free in sorted(limits.items()):
            terms = [
                (p.group_demand[g].get(r, 0), y)
                for (g, node), y in m.node_y.items()
                if node == n and g in p.group_demand and p.group_demand[g].get(r, 0) > 0
            ]
            if sum(c for c, _ in terms) > free:
                cp.add(weighted(terms) <= free)
    if p.exclusive_groups:
        flag = pod_flags(m)
        for forms in p.exclusive_groups:
            flags: list[IntVar] = [flag[g] for g in forms]
            if len(flags) > 1:
                cp.add(total(flags) <= 1)
    _queue_order(m)


def _queue_order(m: Model) -> None:
    """An earlier pod of a class of interchangeable pods is placed whenever a later one is."""
    p = m.problem
    if not p.ordered_pods:
        return
    flag = pod_flags(m)
    for pods in p.ordered_pods:
        for a, b in zip(pods, pods[1:], strict=False):
            fa, fb = [flag[g] for g in a if g in flag], [flag[g] for g in b if g in flag]
            if fa and fb:
                m.cp.add(total(fa) >= total(fb))


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """No device facts: this family constrains pods and nodes only."""
    return ()
