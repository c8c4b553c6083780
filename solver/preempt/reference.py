"""Upstream's answer: preemption one pod at a time (docs/semantics.md, "Preemption").

Why: it is the baseline the batch model is measured against (`benchmarks/test_bench_preempt.py`)
and, on small inputs, a check of it (`tests/test_preempt_differential.py`: the batch plan never
places less weight, and never evicts worse, than this answer when it is a valid plan).

The pending pods go in the scheduler's queue order (priority, highest first, then input order).
Each is first placed without preemption (first fit, `pipeline.plan` with the reference
allocator). If that fails and the pod may preempt, every node it may use is tried as
DefaultPreemption does: remove every running pod of lower priority, check that the pod fits,
then reprieve the removed pods — PDB-violating ones first, then the others, each group by
importance (priority, highest first; then the earliest `status.startTime`; then input order) —
keeping each one whose return still leaves room. The node is chosen by the five criteria
(fewest PDB violations, lowest highest victim priority, smallest sum of priorities + 2^31,
fewest victims, the latest start among its highest-priority victims — a pod without a
startTime counts as started now — then node order); its victims are evicted and the pod
placed there at once (upstream nominates it and binds it in a later cycle). Budgets are
charged as pods are evicted (the disruption controller's view once it has caught up). Gangs
are not held together here — upstream preempts pod by pod — so a gang may evict and still not
start: its pods are then reported not placed, and the plan is no longer a valid one
(`ReferenceOutcome.valid`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api.cluster import Cluster
from ..api.models import Pod
from ..check import check_gangs
from ..pipeline import plan
from ..planning.job import Options, Unit
from ..planning.outcome import PodPlan
from ..planning.snapshot import Snapshot
from ..problem.flat import claim_weight
from ..problem.scheduling import pod_priority
from .model import setting
from .setting import Setting
from .victims import Budget, pdb_violations, running_pods, start_order, terminating

SHIFT = 2**31


@dataclass
class ReferenceOutcome:
    """What one-pod-at-a-time preemption does with the batch."""

    placed: dict[str, str | None]
    """Pending pod -> its node, for the pods placed (in placement order)."""
    evicted: list[tuple[str, str, int]]
    """(pod, node, priority) of the evicted pods, in eviction order."""
    weight: int
    """Placed pending weight (as `PlanOutcome.weight`)."""
    pdb_violations: int
    """Over the whole plan, as the batch model counts them (`victims.pdb_violations`)."""
    valid: bool
    """Every eviction is justified by a pod placed at the end on its node, and every gang met
    its minCount: the answer is a plan the batch model could return."""
    by: dict[str, str] = field(default_factory=dict)
    """Evicted pod -> the pod it was evicted for."""

    @property
    def criteria(self) -> tuple[int, int, int, int]:
        """(PDB violations, highest evicted priority, sum of priorities + 2^31, evicted pods);
        the highest is the smallest int when nothing is evicted."""
        prios = [p for _, _, p in self.evicted]
        high = max(prios) if prios else -(2**63)
        return (self.pdb_violations, high, sum(p + SHIFT for p in prios), len(prios))


def reference_preempt(
    cluster: Cluster,
    pods: Sequence[Any] | None = None,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    **changes: Any,
) -> ReferenceOutcome:
    """One pod after the other, each preempting as DefaultPreemption does (module docstring)."""
    opts = Options.of(options, **changes)
    opts = Options.of(opts, allocator="reference")
    s = setting(cluster, pods, nodes, opts)
    return _run(s, opts)


@dataclass
class _Evictions:
    """What the run evicted so far: (pod, node, priority) in order, who for, budgets charged."""

    evicted: list[tuple[str, str, int]] = field(default_factory=list)
    by: dict[str, str] = field(default_factory=dict)
    charged: dict[str, int] = field(default_factory=dict)

    def add(self, s: Setting, victims: list[Pod], node: str, preemptor: str) -> None:
        for v in victims:
            self.evicted.append((v.namespaced_name, node, pod_priority(s.cluster, v)))
            self.by[v.namespaced_name] = preemptor
            for b in s.budgets:
                if v.namespaced_name in b.pods:
                    self.charged[b.name] = self.charged.get(b.name, 0) + 1


def _run(s: Setting, opts: Options) -> ReferenceOutcome:
    after = Snapshot(s.cluster, opts.feature_gates)  # the cluster as the pods go: placed, evicted
    order = sorted(range(len(s.pending)), key=lambda i: -s.pending[i].priority)
    placed: dict[str, str | None] = {}
    prio_of: dict[str, int] = {}
    gone = _Evictions()
    for i in order:
        unit = s.pending[i]
        members = [m.pod for m in unit.members if m.pod is not None]
        if not members:
            continue
        done = _place(after, members, s.nodes, opts)
        level = s.levels[i]
        if done is None and level is not None:
            done = _preempt(after, s, unit, members, level or 0, gone, opts)
        for p in done or ():
            placed[p.name] = p.node
            prio_of[p.name] = p.priority
    valid = _gangs_kept(s, after.cluster, placed, opts)
    for victim, node, _ in gone.evicted:
        q = gone.by[victim]
        if q not in placed or placed[q] != node:
            valid = False
    weight = sum(claim_weight(prio_of[n]) for n in placed)
    gone_all = [v for v, _, _ in gone.evicted]
    return ReferenceOutcome(placed, gone.evicted, weight, pdb_violations(s.budgets, gone_all), valid, gone.by)


def _preempt(
    after: Snapshot, s: Setting, unit: Unit, members: list[Pod], level: int, gone: _Evictions, opts: Options
) -> list[PodPlan] | None:
    """DefaultPreemption for one pod that fits nowhere as it is: the node by the five criteria
    (module docstring), its victims evicted in `after` and the pod placed there; None when no
    node would make room."""
    best = None
    for n in s.nodes:
        if n in unit.blocked:
            continue
        found = _victims_on(after, members, n, level, s.budgets, gone.charged, opts)
        if found is None:
            continue
        victims, violating = found
        prios = [pod_priority(s.cluster, v) for v in victims]
        key = (
            violating,
            max(prios),
            sum(p + SHIFT for p in prios),
            len(prios),
            _latest_start(after.cluster, victims),
        )
        if best is None or key < best[0]:
            best = (key, n, victims)
    if best is None:
        return None
    _, n, victims = best
    after.evict({v.namespaced_name for v in victims})
    gone.add(s, victims, n, unit.name)
    return _place(after, members, [n], opts)


def _gangs_kept(s: Setting, state: Cluster, placed: dict[str, str | None], opts: Options) -> bool:
    """Whether every gang met its minCount; the pods of one that did not are taken out of
    `placed` (upstream preempts pod by pod: a gang may evict and still not start)."""
    if not (opts.feature_gates.GenericWorkload and s.cluster.pod_groups):
        return True
    short = check_gangs(s.cluster, [state.pods[s.cluster.pod(name).key] for name in placed])
    if not short:
        return True
    failed = {v.claim for v in short}
    for name in list(placed):
        g = s.cluster.pod(name).spec.scheduling_group
        if g is not None and f"{s.cluster.pod(name).metadata.ns}/{g.pod_group_name}" in failed:
            del placed[name]
    return False


def _place(after: Snapshot, members: list[Pod], nodes: Sequence[str], opts: Options) -> list[PodPlan] | None:
    """First fit of the pod (pods sharing a claim: together) on `nodes`; on success, placed in
    `after` (bound, its claims allocated and the allocated ones it shares reserved)."""
    current = [after.cluster.pods[m.key] for m in members]
    outcome = plan(after.cluster, current, list(nodes), opts)
    if not all(p.placed for p in outcome.pods):
        return None
    after.place_all(outcome.pods)
    return outcome.pods


def _victims_on(
    after: Snapshot,
    members: list[Pod],
    node: str,
    level: int,
    budgets: list[Budget],
    charged: dict[str, int],
    opts: Options,
) -> tuple[list[Pod], int] | None:
    """DefaultPreemption's SelectVictimsOnNode: the victims on `node` and how many of them
    violate a budget; None when no pod of lower priority is there or the pod does not fit even
    without all of them. Each try is a layer of `after`, reverted."""
    state = after.cluster
    potential = [
        p for p in running_pods(state, [node]) if pod_priority(state, p) < level and not terminating(p)
    ]
    if not potential:
        return None
    removed = {p.namespaced_name for p in potential}
    if not _fits(after, members, node, removed, opts):
        return None
    order = {p.namespaced_name: i for i, p in enumerate(state.pods.values())}
    potential.sort(key=lambda p: (-pod_priority(state, p), start_order(p), order[p.namespaced_name]))
    left = {b.name: b.allowed - charged.get(b.name, 0) for b in budgets}
    violating: list[Pod] = []
    fine: list[Pod] = []
    for p in potential:
        bad = False
        for b in budgets:
            if p.namespaced_name in b.pods:
                left[b.name] -= 1
                bad = bad or left[b.name] < 0
        (violating if bad else fine).append(p)
    victims: list[Pod] = []
    count = 0
    for group, is_bad in ((violating, True), (fine, False)):
        for p in group:
            removed.discard(p.namespaced_name)
            if not _fits(after, members, node, removed, opts):
                removed.add(p.namespaced_name)
                victims.append(p)
                count += is_bad
    victims.sort(key=lambda p: (-pod_priority(state, p), start_order(p), order[p.namespaced_name]))
    return victims, count


def _latest_start(state: Cluster, victims: list[Pod]) -> tuple[int, int]:
    """Criterion (5) as a key to minimise: the earliest start among the node's victims of the
    highest priority (upstream `GetEarliestPodStartTime`), negated so that the node where that
    start is the latest sorts first."""
    top = max(pod_priority(state, v) for v in victims)
    flag, when = min(start_order(v) for v in victims if pod_priority(state, v) == top)
    return (-flag, -when)


def _fits(after: Snapshot, members: list[Pod], node: str, removed: set[str], opts: Options) -> bool:
    """Whether the pod fits on `node` once the pods named `removed` are evicted (tried in a
    layer of `after`, dropped again)."""
    after.fork()
    try:
        after.evict(removed)
        current = [after.cluster.pods[m.key] for m in members]
        return all(p.placed for p in plan(after.cluster, current, [node], opts).pods)
    finally:
        after.revert()


__all__ = ["ReferenceOutcome", "reference_preempt"]
