"""PRECOMPUTE: from objects to the flat Problem (solver.problem_types).

Why here and only here: every CEL evaluation, every requestPolicy rounding and every
static check (gates, taints, capacity against existing use) happens once, per request and
device, before any search. The allocators below see integer indices and exact numbers.

Upstream evaluates CEL lazily in search order (docs/semantics.md, "CEL errors: lazy, as
upstream"): an expression that fails on a device the search never reaches is never
reported. We evaluate eagerly but keep a runtime error on the candidate it belongs to; the
reference allocator raises it only when its search reaches that device, exactly as
upstream does. The CP-SAT allocator runs the reference first and so reports the same
errors. Errors that upstream raises while preparing a request (compile errors, missing
class, All-mode enumeration) raise here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..cel import EvalCache
from ..errors import DRASolverError, FailedOnNode, InputRefused
from ..gates import FeatureGates
from ..inventory import Pool
from ..reasons import Kind, Reason
from .constraints import build_constraints
from .devices import (
    BuildContext,
    attribute_value_set,
    build_context,
    context_from,
    device_view,
)
from .flat import (
    MAX_RESULTS_PER_CLAIM,
    Alternative,
    ClaimInfo,
    ConstraintInfo,
    Problem,
    RequestInfo,
    ValueSet,
)
from .requests import NODE_FEATURE, Seen, build_alternative, derived_value_set, request_specs

__all__ = [
    "NODE_FEATURE",
    "BuildContext",
    "attribute_value_set",
    "build_context",
    "build_problem",
    "context_from",
    "derived_value_set",
    "device_view",
    "problem_from_context",
]


def build_problem(
    cluster: Cluster,
    claims: Sequence[ResourceClaim],
    node: str | None,
    gates: FeatureGates,
    *,
    cache: EvalCache | None = None,
    priorities: Sequence[int] | None = None,
    groups: Sequence[int] | None = None,
) -> Problem:
    """Precompute one allocation call: `claims` together, for `node`.

    `priorities` and `groups` (one per claim) mark claims of several pods: claims of one
    group are placed together or not at all (`encoders.nodes`), weighted by priority."""
    ctx = build_context(cluster, claims, node, gates, cache)
    return problem_from_context(ctx, claims, priorities=priorities, groups=groups)


def problem_from_context(
    ctx: BuildContext,
    claims: Sequence[ResourceClaim],
    *,
    priorities: Sequence[int] | None = None,
    groups: Sequence[int] | None = None,
) -> Problem:
    """`build_problem` on a BuildContext built beforehand (`devices.context_from`): the incremental
    first fit reuses one node's gathered pools for every pod it tries there.

    An allocationMode All request on an incomplete or invalid pool is a per-node failure
    recorded on its alternative (`Alternative.fatal`); a later claim's fatal error does not
    replace it, as upstream validates the requests in order (docs/semantics.md,
    "allocationMode All")."""
    alternatives: list[Alternative] = []
    try:
        return _problem_from_context(ctx, claims, priorities, groups, alternatives)
    except DRASolverError as exc:
        first = next((a.fatal for a in alternatives if a.fatal is not None), None)
        if first is None:
            raise
        raise FailedOnNode(first) from exc


def _problem_from_context(
    ctx: BuildContext,
    claims: Sequence[ResourceClaim],
    priorities: Sequence[int] | None,
    groups: Sequence[int] | None,
    alternatives: list[Alternative],
) -> Problem:
    gates = ctx.gates
    node = ctx.node.name if ctx.node is not None else None
    claim_infos: list[ClaimInfo] = []
    constraints: list[ConstraintInfo] = []
    derived_values: dict[tuple[int, int], dict[str, ValueSet]] = {}
    seen: Seen = {}
    for ci, claim in enumerate(claims):
        ref = claim.namespaced_name
        requests: list[RequestInfo] = []
        min_devices = 0
        for req_index, (req_name, has_subs, specs) in enumerate(request_specs(claim, gates)):
            alt_ids = []
            for spec in specs:
                alt = build_alternative(
                    ctx, len(alternatives), ci, req_index, ref, spec, derived_values, seen
                )
                alternatives.append(alt)
                alt_ids.append(alt.index)
            requests.append(RequestInfo(req_name, tuple(alt_ids), has_subs))
            min_devices += min(alternatives[a].count for a in alt_ids)
        if min_devices > MAX_RESULTS_PER_CLAIM:
            raise InputRefused(
                f"claim {ref}: number of requested devices {min_devices} exceeds the claim limit of "
                f"{MAX_RESULTS_PER_CLAIM}"
            )
        cons_ids = build_constraints(ctx, claim, ci, ref, requests, alternatives, derived_values, constraints)
        prio = priorities[ci] if priorities is not None else 0
        claim_infos.append(
            ClaimInfo(
                ci,
                claim.metadata.ns,
                claim.metadata.name,
                tuple(requests),
                tuple(cons_ids),
                prio,
                groups[ci] if groups is not None else None,
            )
        )
    return Problem(
        node=node,
        gates=gates,
        devices=tuple(ctx.devices),
        counters=tuple(ctx.counters),
        alternatives=tuple(alternatives),
        claims=tuple(claim_infos),
        constraints=tuple(constraints),
        compat_baseline=dict(ctx.compat),
        invalid_pools=tuple(invalid_pool(p) for p in ctx.pools.invalid()),
        left_out_pools=tuple(invalid_pool(p) for p in ctx.pools.invalid() if p.left_out),
        incomplete_pools=tuple(ctx.pools.incomplete_why[pid] for pid in ctx.pools.incomplete),
    )


def invalid_pool(pool: Pool) -> Reason:
    """The invalid pool as a fact (`Kind.POOL_INVALID`: the pool, the problem and what to fix),
    as every reason that names an invalid pool holds it (allocate, plan, explain)."""
    return Reason.of(
        Kind.POOL_INVALID, driver=pool.driver, pool=pool.name, generation=pool.generation, why=pool.invalid
    )
