"""Who may be evicted, who may evict, and what a PodDisruptionBudget allows
(docs/semantics.md, "Preemption").

Why a module of its own: the batch model (`preempt.model`), upstream's one-pod-at-a-time
answer (`preempt.reference`), the checker's preemption rules and the reasons all read the same
three facts of the input — a pod's preemption policy, which running pods are candidates, and
how many disruptions each budget allows — and must read them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..api.cluster import Cluster
from ..api.models import LABEL_OPERATORS, LabelSelector, Pod, PodDisruptionBudget
from ..api.times import rfc3339_nanos
from ..errors import InputError
from ..inventory import requirement_matches
from ..problem.resources import holds_node
from ..problem.scheduling import default_priority_class, pod_priority

NEVER = "Never"
PREEMPT_LOWER = "PreemptLowerPriority"


def preemption_policy(cluster: Cluster, pod: Pod) -> str:
    """The pod's preemptionPolicy: its own, else its PriorityClass's (the global default's when
    it names none), else PreemptLowerPriority (the API server's admission copies the class's
    policy into the pod on create; a dump has it either way)."""
    policy = pod.spec.preemption_policy
    if policy is None:
        name = pod.spec.priority_class_name
        pc = cluster.priority_classes.get(name) if name else default_priority_class(cluster)
        policy = pc.preemption_policy if pc is not None else None
    policy = policy or PREEMPT_LOWER
    if policy not in (NEVER, PREEMPT_LOWER):
        raise InputError(
            f"unknown preemptionPolicy {policy!r}; use {PREEMPT_LOWER} or {NEVER}",
            obj=pod.ref,
            field="spec.preemptionPolicy",
        )
    return policy


def terminating(pod: Pod) -> bool:
    """A pod whose deletion has begun: it still holds its node and devices until it is gone."""
    return pod.metadata.deletion_timestamp is not None


def start_time(pod: Pod) -> int | None:
    """The pod's `status.startTime` in nanoseconds since the epoch; None when it has none — a
    pod bound but not started yet."""
    text = pod.status.start_time if pod.status is not None else None
    if text is None:
        return None
    try:
        return rfc3339_nanos(text)
    except ValueError as exc:
        raise InputError(str(exc), obj=pod.ref, field="status.startTime") from None


def start_order(pod: Pod) -> tuple[int, int]:
    """Sorts pods by start time, earliest first, a pod without one last: upstream reads a
    missing startTime as "now" (`GetPodStartTime`), later than every start recorded in the
    input (a recorded start after the planning moment would be clock skew)."""
    t = start_time(pod)
    return (1, 0) if t is None else (0, t)


def running_pods(cluster: Cluster, nodes: Iterable[str | None]) -> list[Pod]:
    """The pods bound to one of `nodes` that hold their resources and are not terminating, in
    input order: the pods a preemption may evict. A terminating pod is not a candidate (it is
    leaving already; its resources are counted as held until it is gone)."""
    wanted = {n for n in nodes if n is not None}
    return [
        p
        for p in cluster.pods.values()
        if holds_node(p) and p.spec.node_name in wanted and not terminating(p)
    ]


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str], where: str = "") -> bool:
    """metav1.LabelSelector semantics, except that a nil or empty selector matches nothing — as
    the scheduler reads a PodDisruptionBudget's selector (upstream `filterPodsWithPDBViolation`).
    An operator other than In, NotIn, Exists, DoesNotExist is an InputError naming `where` and
    the field: the API server would have refused the object, and guessing would be wrong either
    way (a match evicts past a budget, no match ignores it)."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return False
    for i, r in enumerate(selector.match_expressions):
        if r.operator not in LABEL_OPERATORS:
            raise InputError(
                f"unknown label selector operator {r.operator!r}; use one of {', '.join(LABEL_OPERATORS)}",
                obj=where,
                field=f"spec.selector.matchExpressions[{i}].operator",
            )
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    return all(
        requirement_matches(r.key, r.operator, r.values, labels, where) for r in selector.match_expressions
    )


@dataclass(frozen=True)
class Budget:
    """One PodDisruptionBudget as preemption reads it: the running pods it covers and how many
    of them may be disrupted (`allowed`)."""

    name: str
    """`namespace/name`."""
    allowed: int
    pods: frozenset[str]
    """`namespace/name` of the running pods of the input its selector matches."""
    from_status: bool
    """`allowed` is the budget's status.disruptionsAllowed (else computed from the spec)."""

    def over(self, evicted: Iterable[str]) -> int:
        """How many evictions of `evicted` this budget does not allow."""
        return max(0, len(self.pods.intersection(evicted)) - self.allowed)


def budgets(cluster: Cluster, running: Sequence[Pod], warnings: list[str] | None = None) -> list[Budget]:
    """Every PodDisruptionBudget of the input, with the running pods it matches (same
    namespace, selector; not those its status.disruptedPods lists: their eviction is counted
    already, and upstream does not charge them again) and its allowed disruptions:
    status.disruptionsAllowed when the dump has it, else computed from the spec over the
    matching running pods of the input, all counted healthy (docs/semantics.md, "Preemption").
    A budget whose selector matches no pod of the input protects nothing here: it is left out,
    with a line in `warnings` naming it (a live cluster often has budgets of workloads scaled
    to zero, so this is no error). The pods a budget may match are looked up by its first
    matchLabels pair where it has one (`_LabelIndex`): a budget per Deployment over 50,000
    pods otherwise reads every pod once per budget."""
    out = []
    index = _LabelIndex(running)
    for key, pdb in cluster.pdbs.items():
        ns = key[0]
        disrupted = set(pdb.status.disrupted_pods) if pdb.status is not None else set()
        matched = frozenset(
            p.namespaced_name
            for p in index.candidates(ns, pdb.spec.selector)
            if p.metadata.name not in disrupted
            and selector_matches(pdb.spec.selector, p.metadata.labels, pdb.ref)
        )
        if not matched and not _matches_any(cluster, pdb):
            if warnings is not None:
                warnings.append(_unmatched(pdb))
            continue
        status = pdb.status.disruptions_allowed if pdb.status is not None else None
        if status is not None:
            out.append(Budget(pdb.namespaced_name, max(status, 0), matched, True))
        else:
            out.append(Budget(pdb.namespaced_name, _allowed(pdb, len(matched)), matched, False))
    return out


class _LabelIndex:
    """Pods by (namespace, label key, value), and by namespace: the pods a selector may match
    (`selector_matches` still decides)."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.by_ns: dict[str, list[Pod]] = {}
        self.by_label: dict[tuple[str, str, str], list[Pod]] = {}
        for p in pods:
            ns = p.metadata.ns
            self.by_ns.setdefault(ns, []).append(p)
            for k, v in p.metadata.labels.items():
                self.by_label.setdefault((ns, k, v), []).append(p)

    def candidates(self, ns: str, selector: LabelSelector | None) -> list[Pod]:
        if selector is not None and selector.match_labels:
            k, v = next(iter(selector.match_labels.items()))
            return self.by_label.get((ns, k, v), [])
        return self.by_ns.get(ns, [])


def _matches_any(cluster: Cluster, pdb: PodDisruptionBudget) -> bool:
    ns = pdb.metadata.ns
    return any(
        p.metadata.ns == ns and selector_matches(pdb.spec.selector, p.metadata.labels, pdb.ref)
        for p in cluster.pods.values()
    )


def _unmatched(pdb: PodDisruptionBudget) -> str:
    return (
        f"{pdb.ref}: spec.selector matches no pod of the input (an empty selector matches none): "
        "it protects nothing here"
    )


def unmatched_budgets(cluster: Cluster) -> list[str]:
    """A warning line per PodDisruptionBudget whose selector matches no pod of the input (the
    lines `budgets` adds to its warnings), for `dra-solver validate`."""
    return [_unmatched(pdb) for pdb in cluster.pdbs.values() if not _matches_any(cluster, pdb)]


def _allowed(pdb: PodDisruptionBudget, pods: int) -> int:
    """The disruption controller's count with every matched pod healthy: `pods - minAvailable`
    or `maxUnavailable`; percentages of the matched pods rounded up, as upstream does."""
    spec = pdb.spec
    if spec.min_available is not None and spec.max_unavailable is not None:
        raise InputError("minAvailable and maxUnavailable are both set; set one", obj=pdb.ref, field="spec")
    if spec.min_available is not None:
        return max(0, pods - _scaled(pdb, "spec.minAvailable", spec.min_available, pods))
    if spec.max_unavailable is not None:
        return max(0, _scaled(pdb, "spec.maxUnavailable", spec.max_unavailable, pods))
    raise InputError(
        "neither minAvailable nor maxUnavailable is set, and status.disruptionsAllowed is absent",
        obj=pdb.ref,
        field="spec",
    )


def _scaled(pdb: PodDisruptionBudget, field: str, value: int | str, pods: int) -> int:
    """An int-or-percent of `pods`, refused as `dra-solver validate` refuses it (for callers
    of the Python API that skip validation)."""
    if isinstance(value, int):
        if value < 0:
            raise InputError(f"must not be negative, got {value}", obj=pdb.ref, field=field)
        return value
    text = value.strip()
    if not text.endswith("%") or not text[:-1].isdigit():
        raise InputError(f"not an integer or a percentage (like 50%): {value!r}", obj=pdb.ref, field=field)
    if int(text[:-1]) > 100:
        raise InputError(f"must not be more than 100%, got {value}", obj=pdb.ref, field=field)
    return math.ceil(int(text[:-1]) * pods / 100)


def pdb_violations(budgets_: Sequence[Budget], evicted: Iterable[str]) -> int:
    """Evictions the budgets do not allow, summed over the budgets (docs/semantics.md,
    "Preemption": a whole plan's count, where upstream counts per preempting pod)."""
    gone = set(evicted)
    return sum(b.over(gone) for b in budgets_)


@dataclass(frozen=True)
class Candidate:
    """A running pod a preemption may evict: lower priority than some pending pod that may
    preempt (`may_preempt`)."""

    pod: Pod
    node: str
    priority: int


def candidates(cluster: Cluster, running: Sequence[Pod], preemptors: Sequence[int]) -> list[Candidate]:
    """The running pods of priority lower than the highest of `preemptors` (the priorities of
    the pending pods that may preempt), in input order."""
    top = max(preemptors, default=None)
    if top is None:
        return []
    out = []
    for pod in running:
        prio = pod_priority(cluster, pod)
        if prio < top:
            out.append(Candidate(pod, pod.spec.node_name or "", prio))
    return out


__all__ = [
    "NEVER",
    "PREEMPT_LOWER",
    "Budget",
    "Candidate",
    "budgets",
    "candidates",
    "pdb_violations",
    "preemption_policy",
    "running_pods",
    "selector_matches",
    "start_order",
    "start_time",
    "terminating",
    "unmatched_budgets",
]
