"""Independent claims on one node: place as many as possible.

Why: platform engineers ask "how many of these jobs fit on this node?" — each claim is its
own pod, so claims may be left out. The reference answers as the scheduler would, placing
the claims one after the other with first fit; the CP-SAT allocator places the set that
maximises the (priority-weighted) number of claims, hinted with the reference's answer so
it is never worse. This is the single-node building block of batch planning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from dra_solver.allocate import AllocatorName, resolve_claims
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.cel import EvalCache
from dra_solver.check import check_or_raise
from dra_solver.errors import InputError
from dra_solver.explain import explain_unschedulable
from dra_solver.gates import FeatureGates
from dra_solver.problem import build_problem
from dra_solver.problem_types import Assignment, Placement, Problem, claim_weight
from dra_solver.reference import allocate_reference
from dra_solver.results import ShareIDs, assignment_claims


@dataclass
class BatchOutcome:
    claims: list[ResourceClaim]
    """Copies of the claims in input order; placed ones carry status.allocation."""
    placed: list[bool]
    reasons: dict[str, str] = field(default_factory=dict)
    """ns/name -> why the reference could not place it (claims left out)."""
    allocator: str = "cpsat"
    stats: dict[str, object] = field(default_factory=dict)

    @property
    def placed_count(self) -> int:
        return sum(self.placed)


def _key(claim: ResourceClaim) -> tuple[str, str]:
    return (claim.metadata.namespace or "default", claim.metadata.name)


def place_one_by_one(
    cluster: Cluster,
    claims: Sequence[ResourceClaim],
    node: str | None,
    gates: FeatureGates,
    cache: EvalCache,
    seed: int = 0,
) -> tuple[list[ResourceClaim | None], dict[str, str]]:
    """The scheduler's way: claim after claim, each seeing what the earlier ones took."""
    current = replace(cluster, claims=dict(cluster.claims))
    share_ids = ShareIDs(seed)
    out: list[ResourceClaim | None] = []
    reasons: dict[str, str] = {}
    for claim in claims:
        problem = build_problem(current, [claim], node, gates, cache=cache)
        assignment = allocate_reference(problem)
        if assignment is None:
            out.append(None)
            reasons["/".join(_key(claim))] = explain_unschedulable(problem)
            continue
        done = assignment_claims(problem, current, [claim], assignment, share_ids=share_ids)[0]
        check_or_raise(current, [done], node=node, gates=gates)
        current.claims[_key(claim)] = done
        out.append(done)
    return out, reasons


def _weight(placed: list[bool], priorities: Sequence[int] | None) -> int:
    """Priority-weighted number of placed claims, as the CP-SAT objective counts them."""
    return sum(claim_weight(priorities[i] if priorities else 0) for i, p in enumerate(placed) if p)


def _as_hint(problem: Problem, done: list[ResourceClaim | None]) -> Assignment:
    """The one-by-one answer in the combined problem's indices."""
    devices = {(d.driver, d.pool, d.name): d.index for d in problem.devices}
    alts = {(a.claim, a.name): a.index for a in problem.alternatives}
    hint: Assignment = {}
    for ci, claim in enumerate(done):
        if claim is None or claim.status is None or claim.status.allocation is None:
            continue
        hint[ci] = [
            Placement(ci, alts[(ci, r.request)], devices[(r.driver, r.pool, r.device)])
            for r in claim.status.allocation.devices.results
        ]
    return hint


def place_independent(
    cluster: Cluster,
    claims: Sequence[str | ResourceClaim] | None = None,
    node: str | None = None,
    allocator: AllocatorName = "cpsat",
    feature_gates: FeatureGates | Mapping[str, bool] | str | None = None,
    seed: int = 0,
    *,
    strategy: Literal["pack", "spread"] = "pack",
    time_limit: float = 10.0,
    priorities: Sequence[int] | None = None,
    cache: EvalCache | None = None,
) -> BatchOutcome:
    """Place independent claims on `node`, as many as possible (each claim all or none)."""
    if allocator not in ("reference", "cpsat"):
        raise InputError(f"unknown allocator {allocator!r}; use reference or cpsat")
    gates = FeatureGates.of(feature_gates)
    chosen = resolve_claims(cluster, claims)
    cache = cache or EvalCache()
    done, reasons = place_one_by_one(cluster, chosen, node, gates, cache, seed)
    stats: dict[str, object] = {"reference_placed": sum(c is not None for c in done)}
    one_by_one = BatchOutcome(
        [c if c is not None else orig for c, orig in zip(done, chosen, strict=True)],
        [c is not None for c in done],
        reasons,
        "reference",
        stats,
    )
    if allocator == "reference":
        return one_by_one

    from dra_solver.cpsat import solve

    problem = build_problem(cluster, chosen, node, gates, cache=cache, priorities=priorities)
    outcome = solve(
        problem,
        mode="free",
        strategy=strategy,
        time_limit=time_limit,
        seed=seed,
        hint=_as_hint(problem, done),
    )
    stats.update(
        {"cpsat_status": outcome.status, "cpsat_placed": outcome.placed, "cpsat_wall_time": outcome.wall_time}
    )
    assignment = outcome.assignment or {}
    placed = [i in assignment for i in range(len(chosen))]
    if _weight(placed, priorities) < _weight(one_by_one.placed, priorities):
        # Placing claims together is not always the same as one by one: a later claim's
        # All-set leaves out shared devices an earlier claim filled, and an admin-access
        # placement stops counting (capacity, counters) once it is allocated.
        stats["fallback"] = "reference one by one"
        one_by_one.allocator = "cpsat"
        return one_by_one
    result = assignment_claims(problem, cluster, chosen, assignment, seed)
    check_or_raise(cluster, [c for i, c in enumerate(result) if i in assignment], node=node, gates=gates)
    left = {}
    for i, claim in enumerate(chosen):
        if not placed[i]:
            ref = "/".join(_key(claim))
            left[ref] = reasons.get(ref, f"left out so that more claims fit ({outcome.placed} placed in all)")
    return BatchOutcome(result, placed, left, "cpsat", stats)
