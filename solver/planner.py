"""Batch planning: many pods over many nodes, as many (priority-weighted) pods as possible.

Why: "which of these pods fit on this cluster, and where?" The reference answers as the
scheduler would: pods one after the other (higher priority first, then input order), each on
the first node, in the given order, where all its unallocated claims fit — every pod seeing
what the earlier pods took. The CP-SAT planner builds one model over every pod and node
(`solver.problem.merge` + `encoders.nodes`: a pod's claims land together on one node, all or
none), maximises the priority-weighted number of placed pods, and is hinted with the
reference plan so it is never worse (if it places less weight, the reference plan is kept).

Every placed claim is verified with `solver.check` node by node: the claims of each node are
checked against the cluster plus the claims placed on the nodes before it, so devices shared
between nodes (allNodes / nodeSelector slices) are never double-booked unnoticed.

allocationMode All: its set depends on the node; the merged Problem keeps one set per node
and the CP-SAT planner takes exactly the set of the pod's node.

Placing pods together is not always the same as one after the other (an earlier pod's share
of a device shrinks a later All-set; an allocated admin-access placement stops counting
against capacity), which is why the reference plan is the floor, not only the hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from dra_solver.allocate import AllocatorName, pod_node_conflict, resolve_claims
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Pod, ResourceClaim
from dra_solver.cel import EvalCache
from dra_solver.check import check_or_raise
from dra_solver.errors import InputError, InvalidPools
from dra_solver.explain import explain_unschedulable
from dra_solver.gates import FeatureGates
from dra_solver.pods import pod_claims
from dra_solver.problem import build_problem
from dra_solver.problem.merge import build_multi_node_problem
from dra_solver.problem_types import Assignment, Placement, Problem, claim_weight
from dra_solver.reference import allocate_reference
from dra_solver.results import ShareIDs, assignment_claims

PodInput = str | Pod | Sequence[str | ResourceClaim]


@dataclass
class PodPlan:
    """One pod of the plan."""

    name: str
    node: str | None
    """Where the pod's claims are allocated; None when not placed."""
    claims: list[ResourceClaim]
    """Copies of the pod's unallocated claims; with status.allocation when placed."""
    reason: str | None = None
    """Why the pod is not placed."""
    priority: int = 0


@dataclass
class PlanOutcome:
    pods: list[PodPlan]
    """In input order."""
    allocator: str = "cpsat"
    stats: dict[str, object] = field(default_factory=dict)

    @property
    def placed(self) -> int:
        return sum(p.node is not None for p in self.pods)

    @property
    def weight(self) -> int:
        """Priority-weighted number of placed pods (the CP-SAT objective)."""
        return sum(claim_weight(p.priority) for p in self.pods if p.node is not None)

    def pod(self, name: str) -> PodPlan:
        for p in self.pods:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass
class _Spec:
    name: str
    claims: list[ResourceClaim]
    pod: Pod | None
    priority: int


def _pod_name(pod: Pod) -> str:
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"


def _key(claim: ResourceClaim) -> tuple[str, str]:
    return (claim.metadata.namespace or "default", claim.metadata.name)


def _unallocated(claims: list[ResourceClaim]) -> list[ResourceClaim]:
    return [c for c in claims if c.status is None or c.status.allocation is None]


def _resolve_pods(
    cluster: Cluster, pods: Sequence[PodInput] | None, priorities: Sequence[int] | None
) -> list[_Spec]:
    specs: list[_Spec] = []
    if pods is None:
        if cluster.pods:
            for pod in cluster.pods.values():
                claims = _unallocated(pod_claims(cluster, pod))
                if claims:
                    specs.append(_Spec(_pod_name(pod), claims, pod, 0))
        else:
            for c in cluster.unallocated_claims():
                specs.append(_Spec("/".join(_key(c)), [c], None, 0))
    else:
        for i, item in enumerate(pods):
            if isinstance(item, str | Pod):
                pod = cluster.pod(item) if isinstance(item, str) else item
                specs.append(_Spec(_pod_name(pod), _unallocated(pod_claims(cluster, pod)), pod, 0))
            else:
                claims = resolve_claims(cluster, list(item))
                name = ",".join("/".join(_key(c)) for c in claims) or f"pod-{i}"
                specs.append(_Spec(name, claims, None, 0))
    if priorities is not None:
        if len(priorities) != len(specs):
            raise InputError(f"{len(priorities)} priorities given for {len(specs)} pods")
        for spec, prio in zip(specs, priorities, strict=True):
            spec.priority = int(prio)
    seen: dict[tuple[str, str], int] = {}
    for i, spec in enumerate(specs):
        for c in spec.claims:
            other = seen.setdefault(_key(c), i)
            if other != i:
                raise InputError(
                    f"the claim is used by two planned pods: {specs[other].name} and {spec.name}",
                    obj="/".join(_key(c)),
                )
    return specs


def _resolve_nodes(cluster: Cluster, nodes: Sequence[str] | None) -> list[str]:
    if nodes is None:
        if cluster.nodes:
            out = list(cluster.nodes)
        else:
            out = []
            for s in cluster.slices:
                if s.spec.node_name and s.spec.node_name not in out:
                    out.append(s.spec.node_name)
    else:
        out = list(nodes)
    if not out:
        raise InputError("no candidate nodes: give nodes, Node objects or node-local ResourceSlices")
    if len(set(out)) != len(out):
        raise InputError("candidate nodes must be distinct")
    return out


def plan(
    cluster: Cluster,
    pods: Sequence[PodInput] | None = None,
    nodes: Sequence[str] | None = None,
    allocator: AllocatorName = "cpsat",
    feature_gates: FeatureGates | Mapping[str, bool] | str | None = None,
    seed: int = 0,
    strategy: Literal["pack", "spread"] = "pack",
    time_limit: float = 10.0,
    priorities: Sequence[int] | None = None,
    *,
    cache: EvalCache | None = None,
) -> PlanOutcome:
    """Place as many (priority-weighted) pods as possible, each on one of `nodes`.

    `pods`: pod names, Pod objects, or lists of claims (names or objects) that form one pod;
    default: every Pod with unallocated claims, or (no Pods in the input) every unallocated
    claim as its own pod. `nodes`: default the Node objects, else the slices' nodeNames.
    `priorities`: one per pod. Inputs are never modified."""
    if allocator not in ("reference", "cpsat"):
        raise InputError(f"unknown allocator {allocator!r}; use reference or cpsat")
    if strategy not in ("pack", "spread"):
        raise InputError(f"unknown strategy {strategy!r}; use pack or spread")
    gates = FeatureGates.of(feature_gates)
    specs = _resolve_pods(cluster, pods, priorities)
    node_list = _resolve_nodes(cluster, nodes)
    cache = cache or EvalCache()
    ref = _reference_plan(cluster, specs, node_list, gates, cache, seed)
    ref.stats["reference_placed"] = ref.placed
    if allocator == "reference":
        return ref
    return _cpsat_plan(cluster, specs, node_list, gates, cache, seed, strategy, time_limit, ref)


def _reference_plan(
    cluster: Cluster, specs: list[_Spec], nodes: list[str], gates: FeatureGates, cache: EvalCache, seed: int
) -> PlanOutcome:
    """The scheduler's way: pod after pod (priority first), first node that fits."""
    current = replace(cluster, claims=dict(cluster.claims))
    share_ids = ShareIDs(seed)
    out: list[PodPlan | None] = [None] * len(specs)
    order = sorted(range(len(specs)), key=lambda i: -specs[i].priority)
    for i in order:
        spec = specs[i]
        if not spec.claims:
            out[i] = PodPlan(spec.name, None, [], "the pod has no unallocated claims", spec.priority)
            continue
        reasons: list[str] = []
        placed: PodPlan | None = None
        for n in nodes:
            if spec.pod is not None:
                blocked = pod_node_conflict(current, spec.pod, n)
                if blocked:
                    reasons.append(f"{n}: {blocked}")
                    continue
            problem = build_problem(current, spec.claims, n, gates, cache=cache)
            try:
                assignment = allocate_reference(problem)
            except InvalidPools as exc:
                reasons.append(f"{n}: {exc}")
                continue
            if assignment is None:
                reasons.append(f"{n}: {explain_unschedulable(problem)}")
                continue
            done = assignment_claims(problem, current, spec.claims, assignment, share_ids=share_ids)
            check_or_raise(current, done, node=n, gates=gates)
            for c in done:
                current.claims[_key(c)] = c
            placed = PodPlan(spec.name, n, done, None, spec.priority)
            break
        out[i] = placed or PodPlan(
            spec.name, None, list(spec.claims), f"no node fits the pod: {'; '.join(reasons)}", spec.priority
        )
    stats: dict[str, object] = {"nodes": len(nodes), "pods": len(specs)}
    return PlanOutcome([p for p in out if p is not None], "reference", stats)


def _cpsat_plan(
    cluster: Cluster,
    specs: list[_Spec],
    nodes: list[str],
    gates: FeatureGates,
    cache: EvalCache,
    seed: int,
    strategy: Literal["pack", "spread"],
    time_limit: float,
    ref: PlanOutcome,
) -> PlanOutcome:
    from dra_solver.cpsat import solve

    groups = [i for i, s in enumerate(specs) if s.claims]  # model group -> spec index
    group_nodes: dict[int, tuple[str, ...]] = {}
    for g, i in enumerate(groups):
        pod = specs[i].pod
        if pod is not None:
            ok = tuple(n for n in nodes if not pod_node_conflict(cluster, pod, n))
            if len(ok) != len(nodes):
                group_nodes[g] = ok
    problem = build_multi_node_problem(
        cluster,
        [specs[i].claims for i in groups],
        nodes,
        gates,
        cache,
        priorities=[specs[i].priority for i in groups],
        group_nodes=group_nodes,
    )
    offsets = []
    at = 0
    for i in groups:
        offsets.append(at)
        at += len(specs[i].claims)
    hint, hint_nodes = _as_hint(problem, groups, offsets, ref)
    outcome = solve(
        problem,
        mode="free",
        strategy=strategy,
        time_limit=time_limit,
        seed=seed,
        hint=hint,
        hint_nodes=hint_nodes,
    )
    stats = dict(ref.stats)
    stats.update(
        {
            "devices": len(problem.devices),
            "alternatives": len(problem.alternatives),
            "cpsat_status": outcome.status,
            "cpsat_placed": len(outcome.nodes),
            "cpsat_wall_time": outcome.wall_time,
            "cpsat_objective": outcome.objective,
        }
    )
    assignment = outcome.assignment or {}
    weight = sum(claim_weight(specs[groups[g]].priority) for g in outcome.nodes)
    if outcome.assignment is None or weight < ref.weight:
        stats["fallback"] = "reference plan"
        return PlanOutcome(ref.pods, "cpsat", stats)
    share_ids = ShareIDs(seed)
    plans: list[PodPlan] = []
    placed_on: dict[str, list[ResourceClaim]] = {}
    by_spec: dict[int, int] = {i: g for g, i in enumerate(groups)}
    for i, spec in enumerate(specs):
        g = by_spec.get(i)
        node = outcome.nodes.get(g) if g is not None else None
        if node is None:
            reason = ref.pods[i].reason or "left out so that more (or higher-priority) pods fit"
            plans.append(PodPlan(spec.name, None, list(spec.claims), reason, spec.priority))
            continue
        assert g is not None
        local = {k: assignment[offsets[g] + k] for k in range(len(spec.claims))}
        on_node = replace(problem, node=node)  # bindsToNode results name the chosen node
        done = assignment_claims(on_node, cluster, spec.claims, local, share_ids=share_ids)
        placed_on.setdefault(node, []).extend(done)
        plans.append(PodPlan(spec.name, node, done, None, spec.priority))
    current = replace(cluster, claims=dict(cluster.claims))
    for n in nodes:
        mine = placed_on.get(n, [])
        if not mine:
            continue
        check_or_raise(current, mine, node=n, gates=gates)
        for c in mine:
            current.claims[_key(c)] = c
    return PlanOutcome(plans, "cpsat", stats)


def _as_hint(
    problem: Problem, groups: list[int], offsets: list[int], ref: PlanOutcome
) -> tuple[Assignment, dict[int, str]]:
    """The reference plan in the merged problem's indices, and its node per group."""
    devices = {(d.driver, d.pool, d.name): d.index for d in problem.devices}
    alts = {(a.claim, a.name): a.index for a in problem.alternatives}
    hint: Assignment = {}
    hint_nodes: dict[int, str] = {}
    for g, i in enumerate(groups):
        pod = ref.pods[i]
        if pod.node is None:
            continue
        hint_nodes[g] = pod.node
        for k, claim in enumerate(pod.claims):
            ci = offsets[g] + k
            alloc = claim.status.allocation if claim.status else None
            if alloc is None:
                continue
            hint[ci] = [
                Placement(ci, alts[(ci, r.request)], devices[(r.driver, r.pool, r.device)])
                for r in alloc.devices.results
                if (r.driver, r.pool, r.device) in devices
            ]
    return hint, hint_nodes


__all__ = ["PlanOutcome", "PodPlan", "plan"]
