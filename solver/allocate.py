"""The public allocation call: claims of one pod, one node, reference or CP-SAT.

Why this shape: upstream allocates the unallocated claims of one pod together, for one
node, all or none. `allocate()` does the same; the planner (many pods, many nodes) builds
on it. Every allocation returned here has passed `solver.check` — an independent reading
of the rules — so a bug in precompute or an allocator surfaces as an error, never as a
wrong allocation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import AllocationResult, Pod, ResourceClaim
from dra_solver.cel import EvalCache
from dra_solver.check import check_or_raise
from dra_solver.errors import InputError, InvalidPools, SearchAborted
from dra_solver.explain import explain_unschedulable
from dra_solver.gates import FeatureGates
from dra_solver.inventory import NodeView, node_selector_matches
from dra_solver.pods import pod_claims
from dra_solver.problem import build_problem
from dra_solver.problem_types import Assignment, Problem
from dra_solver.reference import allocate_reference
from dra_solver.results import assignment_claims

AllocatorName = Literal["reference", "cpsat"]
HINT_STEPS = 200_000


@dataclass
class AllocationOutcome:
    """What one allocation call decided."""

    allocated: bool
    claims: list[ResourceClaim]
    """Copies of the requested claims, in order; with status.allocation when allocated."""
    reason: str | None = None
    """Why the claims could not be allocated (names claim and request where it can)."""
    allocator: str = "reference"
    node: str | None = None
    stats: dict[str, object] = field(default_factory=dict)

    def allocation(self, name: str) -> AllocationResult | None:
        for c in self.claims:
            if c.metadata.name == name or f"{c.metadata.namespace}/{c.metadata.name}" == name:
                return c.status.allocation if c.status else None
        raise KeyError(name)


def resolve_claims(cluster: Cluster, claims: Sequence[str | ResourceClaim] | None) -> list[ResourceClaim]:
    """Default: every claim without status.allocation, in input order."""
    if claims is None:
        return cluster.unallocated_claims()
    out = []
    for c in claims:
        claim = c if isinstance(c, ResourceClaim) else cluster.claim(c)
        if claim.status is not None and claim.status.allocation is not None:
            raise InputError("claim is already allocated", obj=claim.ref, field="status.allocation")
        out.append(claim)
    return out


def allocate(
    cluster: Cluster,
    claims: Sequence[str | ResourceClaim] | None = None,
    node: str | Sequence[str] | None = None,
    allocator: AllocatorName = "cpsat",
    feature_gates: FeatureGates | Mapping[str, bool] | str | None = None,
    seed: int = 0,
    *,
    strategy: Literal["pack", "spread"] = "pack",
    time_limit: float = 10.0,
    cache: EvalCache | None = None,
    pod: str | Pod | None = None,
) -> AllocationOutcome:
    """Allocate `claims` together on `node`: all of them or none.

    With `pod`, the claims are the pod's unallocated claims (templates instantiated) and the
    node defaults to the pod's `spec.nodeName`. With several candidate nodes, the claims go
    to one of them (see `_on_nodes`) and `outcome.node` says which. Raises InputError / CelError /
    AllocationError for invalid input and upstream's fatal errors; returns
    `allocated=False` with a reason when the claims do not fit."""
    if allocator not in ("reference", "cpsat"):
        raise InputError(f"unknown allocator {allocator!r}; use reference or cpsat")
    gates = FeatureGates.of(feature_gates)
    pod_obj: Pod | None = None
    if pod is not None:
        if claims is not None:
            raise InputError("give either claims or a pod, not both")
        pod_obj = cluster.pod(pod) if isinstance(pod, str) else pod
        node = node if node is not None else pod_obj.spec.node_name
        chosen = [c for c in pod_claims(cluster, pod_obj) if c.status is None or c.status.allocation is None]
    else:
        chosen = resolve_claims(cluster, claims)
    if not isinstance(node, str) and node is not None:
        return _on_nodes(
            cluster, chosen, list(node), pod_obj, allocator, gates, seed, strategy, time_limit, cache
        )
    if pod_obj is not None:
        blocked = pod_node_conflict(cluster, pod_obj, node)
        if blocked:
            return AllocationOutcome(False, [], blocked, allocator=allocator, node=node)
    if not chosen:
        return AllocationOutcome(True, [], allocator=allocator, node=node)
    problem = build_problem(cluster, chosen, node, gates, cache=cache)
    stats: dict[str, object] = {"devices": len(problem.devices), "alternatives": len(problem.alternatives)}
    if allocator == "reference":
        assignment = allocate_reference(problem)
    else:
        assignment = _cpsat(problem, strategy, time_limit, seed, stats)
    if assignment is None:
        return AllocationOutcome(
            False, list(chosen), explain_unschedulable(problem), allocator=allocator, node=node, stats=stats
        )
    result = assignment_claims(problem, cluster, chosen, assignment, seed)
    check_or_raise(cluster, result, node=node, gates=gates)
    return AllocationOutcome(True, result, allocator=allocator, node=node, stats=stats)


def _on_nodes(
    cluster: Cluster,
    chosen: list[ResourceClaim],
    nodes: list[str],
    pod: Pod | None,
    allocator: AllocatorName,
    gates: FeatureGates,
    seed: int,
    strategy: Literal["pack", "spread"],
    time_limit: float,
    cache: EvalCache | None,
) -> AllocationOutcome:
    """The claims on the best of several nodes, or why no node fits.

    The reference behaves like the scheduler's filter: the first node, in the given order,
    where the claims fit. CP-SAT allocates on every node where they fit and keeps the best
    answer: earliest firstAvailable subrequests, then (pack) fewest devices opened or
    (spread) most; ties go to the earlier node. A node whose pools are invalid is unsuitable
    (upstream's per-node error); fatal errors (CEL, invalid claims) abort, as upstream."""
    if not nodes:
        raise InputError("no candidate nodes given")
    cache = cache or EvalCache()
    reasons: list[str] = []
    best: tuple[tuple[int, int, int], AllocationOutcome] | None = None
    for rank, name in enumerate(nodes):
        blocked = pod_node_conflict(cluster, pod, name) if pod is not None else None
        if blocked:
            reasons.append(f"{name}: {blocked}")
            continue
        try:
            out = allocate(
                cluster,
                chosen,
                name,
                allocator,
                gates,
                seed,
                strategy=strategy,
                time_limit=time_limit,
                cache=cache,
            )
        except InvalidPools as exc:
            reasons.append(f"{name}: {exc}")
            continue
        if not out.allocated:
            reasons.append(f"{name}: {out.reason}")
            continue
        if allocator == "reference":
            return out
        objective = out.stats.get("cpsat_objective")
        if not isinstance(objective, dict):
            objective = {}  # CP-SAT found nothing better than the reference's hint
        devices = objective.get("devices", 0)
        score = (objective.get("first_available", 0), devices if strategy == "pack" else -devices, rank)
        if best is None or score < best[0]:
            best = (score, out)
    if best is not None:
        return best[1]
    return AllocationOutcome(
        False, list(chosen), f"no node fits the claims: {'; '.join(reasons)}", allocator=allocator, stats={}
    )


def pod_node_conflict(cluster: Cluster, pod: Pod, node: str | None) -> str | None:
    """A pod whose claims are already allocated can only run where their node selectors allow."""
    view = NodeView.of(node, cluster.nodes)
    for claim in pod_claims(cluster, pod):
        alloc = claim.status.allocation if claim.status else None
        if alloc is None or alloc.node_selector is None:
            continue
        if view is None or not node_selector_matches(alloc.node_selector, view, claim.ref):
            where = f"node {node}" if node else "no node"
            return f"claim {claim.ref} of {pod.ref} is allocated with a node selector excluding {where}"
    return None


def _cpsat(
    problem: Problem,
    strategy: Literal["pack", "spread"],
    time_limit: float,
    seed: int,
    stats: dict[str, object],
) -> Assignment | None:
    """CP-SAT with the reference answer as hint; never worse than the reference.

    The reference runs first (bounded): it raises the CEL runtime errors upstream would
    raise in its lazy search, and its answer seeds the solver. When the bounded reference
    gives up, CP-SAT still searches, but only if no candidate carries a CEL error (else the
    error is raised: we never turn an error into a silent non-match)."""
    from dra_solver.cpsat import solve

    try:
        hint = allocate_reference(problem, max_steps=HINT_STEPS)
        exhaustive = True
    except SearchAborted:
        hint, exhaustive = None, False
        for alt in problem.alternatives:
            for cand in alt.candidates:
                if cand.error is not None:
                    raise cand.error from None
    if hint is None and exhaustive:
        return None  # the reference search is complete: no allocation exists
    outcome = solve(problem, mode="all", strategy=strategy, time_limit=time_limit, seed=seed, hint=hint)
    stats.update(
        {
            "cpsat_status": outcome.status,
            "cpsat_wall_time": outcome.wall_time,
            "cpsat_objective": outcome.objective,
        }
    )
    if outcome.assignment is None and hint is None:
        if outcome.status != "INFEASIBLE":
            raise SearchAborted(
                f"filter operation aborted: neither the reference search ({HINT_STEPS} steps) nor CP-SAT "
                f"({time_limit} s) found an allocation; CP-SAT status {outcome.status}"
            )
        if problem.invalid_pools:
            raise InvalidPools("invalid resource pools were encountered: " + "; ".join(problem.invalid_pools))
    return outcome.assignment if outcome.assignment is not None else hint
