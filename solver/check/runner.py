"""Runner: the device rules of one allocation call, in a fixed order.

Why a module: `check` (one allocator answer) and `check_cluster` (every allocated claim of a
cluster, grouped by node) run the same rules the same way — per result, then per claim, then
across claims — so the violations always come out in the same order.
"""

from __future__ import annotations

from ..api.models import ResourceClaim
from .amounts import capacity_requests, consumption
from .capacity import check_capacity, check_consumed
from .constraints import check_constraints
from .context import Context
from .copies import check_copies
from .counters import check_compatibility_groups, check_counters
from .counts import check_counts, check_duplicates
from .feature_gates import check_device_gates, check_request_gates
from .keys import Alt, claim_id
from .nodes import check_node_selector, check_skip_node_operations
from .results import Placed, check_admin, check_limit, check_one_subrequest, lookup, resolve
from .selectors import check_capacity_names, check_selectors
from .sharing import check_admin_then_normal, check_busy, check_share_fields, check_share_ids
from .tolerations import check_taints
from .violations import Violation


def run_context(ctx: Context) -> list[Violation]:
    """Every device rule the claims of `ctx.allocated` break, in the fixed order."""
    placed: list[Placed] = []
    per_claim: list[tuple[ResourceClaim, list[Placed]]] = []
    for claim in ctx.allocated:
        mine = _check_results(ctx, claim)
        per_claim.append((claim, mine))
        placed.extend(mine)
    for claim, mine in per_claim:
        check_counts(ctx, claim, mine)
        check_duplicates(ctx, claim, mine)
        check_constraints(ctx, claim, mine)
        check_node_selector(ctx, claim, mine)
    check_busy(ctx, placed)
    check_capacity(ctx, placed)
    check_share_ids(ctx, placed)
    check_counters(ctx, placed)
    check_compatibility_groups(ctx, placed)
    if ctx.one_call:
        ctx.violations += check_admin_then_normal(ctx.allocated)
    return ctx.violations


def _check_results(ctx: Context, claim: ResourceClaim) -> list[Placed]:
    """Read every result of one claim and check the rules that concern each alone."""
    cid = claim_id(claim)
    allocation = claim.status.allocation if claim.status is not None else None
    if allocation is None:
        ctx.report(cid, None, "count", "the claim has no status.allocation")
        return []
    results = allocation.devices.results
    check_limit(ctx, cid, results)
    mine: list[Placed] = []
    for r in results:
        top, alt = resolve(ctx, claim, cid, r.request)
        dev = lookup(ctx, claim, cid, r)
        p = Placed(cid, claim, r, top, alt, dev)
        mine.append(p)
        if alt is not None:
            _check_result(ctx, p, alt)
    check_one_subrequest(ctx, cid, mine)
    return mine


def _check_result(ctx: Context, p: Placed, alt: Alt) -> None:
    """Rules that concern one result alone: gates, admin, selectors, taints, share, rounding."""
    requests = capacity_requests(alt)
    check_request_gates(ctx, p, alt, requests)
    check_admin(ctx, p, alt)
    dev = p.dev
    if dev is None:
        return
    check_device_gates(ctx, p, dev)
    check_skip_node_operations(ctx, p, dev)
    check_selectors(ctx, p, alt, dev)
    cons = (
        consumption(dev.device, dev.key[0], requests, fractional=ctx.gates.DRAFractionalCapacityRange)
        if ctx.gates.DRAConsumableCapacity
        else None
    )
    check_capacity_names(ctx, p, dev, cons)
    check_taints(ctx, p, alt, dev)
    check_copies(ctx, p, alt, dev)
    check_share_fields(ctx, p, dev)
    check_consumed(ctx, p, dev, cons, requests)
