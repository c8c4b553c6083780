"""The batch preemption plan against an exhaustive enumeration and against upstream's
one-pod-at-a-time answer, on small generated clusters (docs/semantics.md, "Preemption").

The enumerator is written here, from the rules, on the generated clusters' simple shape: every
GPU of a node is interchangeable and node-local, each pod asks for GPUs and one cpu. It tries
every set of victims among the candidates and every placement of the pending pods (a node or
none), keeps those that fit (GPUs not held by a claim some kept pod uses, cpu left by the kept
pods), meet the gangs and justify every eviction, and takes the lexicographic least
(-weight, PDB violations, highest evicted priority, sum of priorities + 2^31, evicted count).
Whenever the model says OPTIMAL its tuple must be that one.

The reference (upstream's one pod at a time) is a valid plan when all its evictions are
justified by pods it places and its gangs start; then the batch plan's tuple is never worse.
"""

from __future__ import annotations

import os
import random

import pytest
from example_counts import examples
from preempt_cases import Pending, Running, build, cluster_docs, most_weight, pdb

from dra_solver.preempt import plan_preempt
from dra_solver.preempt.reference import reference_preempt

SHIFT = 2**31
CPU = 3
CASES = int(os.environ.get("PREEMPT_CASES", examples(60)))


def generate(
    seed: int,
) -> tuple[dict[str, int], list[Running], list[Pending], list[dict[str, object]], dict[str, int]]:
    rng = random.Random(seed)
    nodes = {f"n{i}": rng.randint(1, 4) for i in range(3)}
    free = {n: list(range(k)) for n, k in nodes.items()}
    cpu = dict.fromkeys(nodes, CPU)
    running: list[Running] = []
    for i in range(rng.randint(2, 6)):
        n = rng.choice(list(nodes))
        if not cpu[n]:
            continue
        cpu[n] -= 1
        labels = {"app": rng.choice("ab")}
        prio = rng.choice([0, 5, 10, 50])
        sharable = [r for r in running if r.node == n and r.gpus]
        if sharable and rng.random() < 0.25:
            other = rng.choice(sharable)
            running.append(
                Running(f"r{i}", n, prio, other.gpus, labels, claim=other.claim or f"{other.name}-gpu")
            )
            continue
        k = min(rng.randint(0, 2), len(free[n]))
        gpus = tuple(sorted(rng.sample(free[n], k)))
        free[n] = [g for g in free[n] if g not in gpus]
        running.append(Running(f"r{i}", n, prio, gpus, labels))
    pending = [
        Pending(
            f"p{j}", rng.choice([5, 10, 50, 100]), rng.randint(1, 3), "Never" if rng.random() < 0.2 else None
        )
        for j in range(rng.randint(1, 4))
    ]
    gangs: dict[str, int] = {}
    if len(pending) >= 2 and rng.random() < 0.3:
        gangs = {"g": 2}
        for p in pending[:2]:
            p.group = "g"
    pdbs: list[dict[str, object]] = []
    if rng.random() < 0.5 and any(r.labels.get("app") == "a" for r in running):
        pdbs.append(pdb("keep-a", {"app": "a"}, allowed=rng.choice([0, 1])))
    return nodes, running, pending, pdbs, gangs


def exhaustive(
    nodes: dict[str, int],
    running: list[Running],
    pending: list[Pending],
    pdbs: list[dict[str, object]],
    gangs: dict[str, int],
) -> tuple[int, int, int, int, int]:
    """The lexicographic optimum (-weight, pdb, highest, sum, count) over every plan."""
    levels = [p.priority for p in pending if p.policy != "Never"]
    top = max(levels, default=None)
    cands = [r for r in running if top is not None and r.priority < top]
    claim_of = {r.name: r.claim or f"{r.name}-gpu" for r in running if r.gpus}
    users: dict[str, list[Running]] = {}
    for r in running:
        if r.gpus:
            users.setdefault(claim_of[r.name], []).append(r)
    allowed = [(int(b["status"]["disruptionsAllowed"]), b["spec"]["selector"]["matchLabels"]) for b in pdbs]  # type: ignore[index]
    best: tuple[int, int, int, int, int] | None = None
    for mask in range(1 << len(cands)):
        gone = {cands[k].name for k in range(len(cands)) if mask >> k & 1}
        gpus = dict(nodes)
        cpu = dict.fromkeys(nodes, CPU)
        for us in users.values():
            if not all(u.name in gone for u in us):
                gpus[us[0].node] -= len(us[0].gpus)
        for r in running:
            if r.name not in gone:
                cpu[r.node] -= 1
        victims = [r for r in running if r.name in gone]
        pdb_count = sum(
            max(0, sum(1 for v in victims if all(v.labels.get(k) == x for k, x in sel.items())) - a)
            for a, sel in allowed
        )
        prios = [v.priority for v in victims]
        tail = (pdb_count, max(prios) if prios else -(2**63), sum(p + SHIFT for p in prios), len(prios))
        weight = most_weight(pending, gpus, cpu, gangs, victims)
        if weight is not None and (best is None or (-weight, *tail) < best):
            best = (-weight, *tail)
    assert best is not None  # nothing evicted, nothing placed is always a plan
    return best


def _model_tuple(outcome: object) -> tuple[int, int, int, int, int]:
    from dra_solver.preempt import PreemptOutcome

    assert isinstance(outcome, PreemptOutcome)
    prios = [v.priority for v in outcome.victims]
    return (
        -outcome.weight,
        int(outcome.stats["pdb_violations"]),  # type: ignore[call-overload]
        max(prios) if prios else -(2**63),
        sum(p + SHIFT for p in prios),
        len(prios),
    )


@pytest.mark.parametrize("seed", range(CASES))
def test_the_batch_plan_is_the_exhaustive_optimum_and_never_worse_than_upstream(seed: int) -> None:
    nodes, running, pending, pdbs, gangs = generate(seed)
    cluster = build(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    outcome = plan_preempt(cluster, time_limit=10)
    got = _model_tuple(outcome)
    assert outcome.verdict.status == "OPTIMAL", outcome.stats
    assert got == exhaustive(nodes, running, pending, pdbs, gangs), cluster_docs(
        nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs
    )
    ref = reference_preempt(cluster)
    assert outcome.weight >= ref.weight or not ref.valid
    if ref.valid and outcome.weight == ref.weight:
        assert got[1:] <= ref.criteria
