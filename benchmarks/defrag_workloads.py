"""Issue #43's fragmented GPU cluster, and the greedy consolidation it is measured against.

`defrag_cluster(nodes, seed)`: mostly 8-GPU nodes, one in ten a 4-GPU node; 60-80 % of the
GPUs held by 1- and 2-GPU pods (priority 0 or 100) spread unevenly — free GPUs per node exponential,
every node holding at least one pod: most are full or nearly, a tail nearly empty, no 8-GPU
node free. The running pods
belong to Deployments (`dep-NN`, a ReplicaSet controlling each pod, its claim from the
ResourceClaimTemplate `gpu-1` or `gpu-2`: movable), except one in twenty, a bare pod with its
own ResourceClaim (only evictable). PodDisruptionBudgets cover one Deployment in five
(`status.disruptionsAllowed` 0-2). Pending, at priority 1000: single 8-GPU pods (3.5 % of the
node count, at least 2: 35 at 1,000 nodes) and gangs of 8-GPU pods (a PodGroup of 2-4 pods with
`minCount` its size; one per 300 nodes, at least 1). Two cpus per GPU, nodes of 64 cpus: node
resources never bind. Seeded: the same seed gives the same cluster.

`consolidate(d)`: the heuristic answer — KAI-scheduler's consolidation idea (pods are moved,
never evicted, to make room for a pending job): the pending pods in queue order (a gang's pods
together, all or none); one that fits somewhere as things are goes to the fullest node it fits
on; otherwise the emptiest node that can host it (fewest GPUs held; most GPUs) is cleared by
moving its pods, largest first, each to the fullest other node with room (best fit), skipping
nodes where a pod is not movable or its budget has no disruption left; a node whose pods cannot
all be placed elsewhere is passed over (nothing is moved for it). It never evicts, so where the
batch plan evicts to place more, the baseline places less.

Both read the same `Defrag` description; `docs(d)` turns it into the objects `plan` reads.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.preempt_workloads import _pod, gpu_claim, gpu_template, owned
from benchmarks.workloads import GPU, _class, _slice

PENDING_PRIORITY = 1000


@dataclass
class Run:
    """A running pod: its node, the GPUs it holds (indices), priority, Deployment (None: a
    bare pod, not movable)."""

    name: str
    node: str
    gpus: list[int]
    priority: int
    deployment: str | None


@dataclass
class Defrag:
    nodes: dict[str, int]
    """Node -> its GPUs."""
    running: list[Run]
    pending: list[str]
    """Pending 8-GPU pods, queue order (gang members after the single pods)."""
    gangs: dict[str, list[str]] = field(default_factory=dict)
    """PodGroup -> its pods (minCount: all of them)."""
    budgets: dict[str, int] = field(default_factory=dict)
    """Deployment -> status.disruptionsAllowed of its PodDisruptionBudget."""


def defrag_cluster(nodes: int, seed: int, utilisation: tuple[float, float] = (0.6, 0.8)) -> Defrag:
    """The cluster of the module docstring."""
    rng = random.Random(seed)
    target = rng.uniform(*utilisation)
    sizes = {f"node-{i:05d}": (4 if rng.random() < 0.1 else 8) for i in range(nodes)}
    deployments = [f"dep-{i:02d}" for i in range(max(5, nodes // 20))]
    running: list[Run] = []
    for n, gpus in sizes.items():
        # Free GPUs exponential with the mean the target leaves, at most all but one: most
        # nodes full or nearly, a long tail of nearly empty ones, none empty.
        fill = gpus - min(gpus - 1, round(rng.expovariate(1 / ((1 - target) * gpus))))
        at = 0
        while at < fill:
            take = min(rng.choice((1, 1, 2)), fill - at)
            dep = rng.choice(deployments) if rng.random() >= 0.05 else None
            running.append(
                Run(f"run-{len(running):06d}", n, list(range(at, at + take)), rng.choice((0, 100)), dep)
            )
            at += take
    singles = max(2, round(nodes * 0.035))
    pending = [f"train-{j:04d}" for j in range(singles)]
    gangs: dict[str, list[str]] = {}
    for g in range(max(1, nodes // 300)):
        members = [f"gang-{g:02d}-{p}" for p in range(rng.randint(2, 4))]
        gangs[f"gang-{g:02d}"] = members
        pending += members
    budgets = {dep: rng.randint(0, 2) for dep in deployments if rng.random() < 0.2}
    return Defrag(sizes, running, pending, gangs, budgets)


def docs(d: Defrag) -> list[dict[str, Any]]:
    """The objects of `d` as plain dicts (what `kubectl get -o yaml` would show)."""
    out: list[dict[str, Any]] = [_class("gpu", GPU)]
    out += [gpu_template(size) for size in (1, 2)]
    for n, gpus in d.nodes.items():
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
            }
        )
        out.append(_slice(f"{n}-gpus", GPU, n, [{"name": f"gpu-{g}"} for g in range(gpus)], pool=n))
    for r in d.running:
        out.append(gpu_claim(r.name, len(r.gpus), r.node, r.gpus))
        pod = _pod(r.name, r.priority, r.node, r.deployment or "bare", cpu=str(2 * len(r.gpus)))
        if r.deployment is not None:
            owned(pod, f"{r.deployment}-rs", len(r.gpus))
        out.append(pod)
    group_of = {p: g for g, ps in d.gangs.items() for p in ps}
    for g, ps in d.gangs.items():
        out.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": g, "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": len(ps)}}},
            }
        )
    for p in d.pending:
        out.append(gpu_claim(p, 8, None, []))
        pod = _pod(p, PENDING_PRIORITY, None, "train", cpu="16")
        if p in group_of:
            pod["spec"]["schedulingGroup"] = {"podGroupName": group_of[p]}
        out.append(pod)
    for dep, allowed in d.budgets.items():
        out.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": dep, "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": dep}}, "maxUnavailable": allowed},
                "status": {"disruptionsAllowed": allowed},
            }
        )
    return out


@dataclass
class Consolidation:
    """The baseline's answer: pending pods placed (name -> node), moves (pod, from, to)."""

    placed: dict[str, str]
    moves: list[tuple[str, str, str]]


def consolidate(d: Defrag) -> Consolidation:
    """The greedy consolidation of the module docstring."""
    used = dict.fromkeys(d.nodes, 0)
    pods_on: dict[str, list[Run]] = {n: [] for n in d.nodes}
    for r in d.running:
        used[r.node] += len(r.gpus)
        pods_on[r.node].append(r)
    budget = dict(d.budgets)
    placed: dict[str, str] = {}
    moves: list[tuple[str, str, str]] = []
    group_of = {p: g for g, ps in d.gangs.items() for p in ps}
    done: set[str] = set()
    for p in d.pending:
        if p in done:
            continue
        unit = d.gangs[group_of[p]] if p in group_of else [p]
        done.update(unit)
        # A gang is tried on a copy of the state and kept only when every pod is placed.
        state = ({n: list(rs) for n, rs in pods_on.items()}, dict(used), dict(budget))
        got: dict[str, str] = {}
        tried: list[tuple[str, str, str]] = []
        for q in unit:
            n = _place(d, q, pods_on, used, budget, tried)
            if n is None:
                break
            got[q] = n
        if len(got) == len(unit):
            placed.update(got)
            moves += tried
        else:
            pods_on, used, budget = state
    return Consolidation(placed, moves)


def _place(
    d: Defrag,
    pod: str,
    pods_on: dict[str, list[Run]],
    used: dict[str, int],
    budget: dict[str, int],
    moves: list[tuple[str, str, str]],
) -> str | None:
    """Place one 8-GPU pod: as things are on the fullest node with room, else by clearing the
    emptiest node that can be cleared. Updates the state; returns the node or None."""
    need = 8
    fits = [n for n, g in d.nodes.items() if g - used[n] >= need]
    if fits:
        n = min(fits, key=lambda n: (d.nodes[n] - used[n], n))
        used[n] += need
        return n
    hosts = sorted((n for n, g in d.nodes.items() if g >= need), key=lambda n: (used[n], -d.nodes[n], n))
    for n in hosts:
        plan = _clear(d, n, need, pods_on, used, budget)
        if plan is None:
            continue
        for r, to in plan:
            pods_on[n].remove(r)
            used[n] -= len(r.gpus)
            r2 = Run(r.name, to, r.gpus, r.priority, r.deployment)
            pods_on[to].append(r2)
            used[to] += len(r.gpus)
            if r.deployment in budget:
                budget[r.deployment] -= 1
            moves.append((r.name, n, to))
        used[n] += need
        return n
    return None


def _clear(
    d: Defrag, n: str, need: int, pods_on: dict[str, list[Run]], used: dict[str, int], budget: dict[str, int]
) -> list[tuple[Run, str]] | None:
    """The moves (pod, destination) that free `need` GPUs on n, largest pods first, each to the
    fullest other node with room; None when some pod to move is not movable, its budget is
    spent, or has nowhere to go."""
    room = {m: d.nodes[m] - used[m] for m in d.nodes}
    spent: dict[str, int] = {}
    out: list[tuple[Run, str]] = []
    free = d.nodes[n] - used[n]
    for r in sorted(pods_on[n], key=lambda r: (-len(r.gpus), r.name)):
        if free >= need:
            break
        if r.deployment is None:
            return None
        if r.deployment in budget and budget[r.deployment] - spent.get(r.deployment, 0) <= 0:
            return None
        to = [m for m in d.nodes if m != n and room[m] >= len(r.gpus)]
        if not to:
            return None
        dest = min(to, key=lambda m: (room[m], m))
        room[dest] -= len(r.gpus)
        if r.deployment in budget:
            spent[r.deployment] = spent.get(r.deployment, 0) + 1
        out.append((r, dest))
        free += len(r.gpus)
    return out if free >= need else None


__all__ = ["Consolidation", "Defrag", "Run", "consolidate", "defrag_cluster", "docs"]
