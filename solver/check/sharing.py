"""Sharing: who may use a device at the same time (`busy`, `share`).

Why a module: a dedicated device serves one non-admin request across all claims, a
multi-allocatable device (allowMultipleAllocations with DRAConsumableCapacity) serves
many shares but no dedicated user, and the result fields that mark a share (shareID,
consumedCapacity) must be present exactly on shares, each shareID used once per device.
Admin-access results never make a device busy once allocated; within one call, a dedicated
device given with admin access to a claim is in use for the later claims' normal requests
(upstream's rule).
"""

from __future__ import annotations

from collections import defaultdict

from .context import Context
from .keys import DeviceKey, dev_id
from .pools import Dev
from .results import Placed


def check_share_fields(ctx: Context, p: Placed, dev: Dev) -> None:
    """A share carries a shareID (and consumedCapacity if the device has capacities).

    A result on a dedicated device carries neither.
    """
    r = p.result
    cid, req = p.claim_id, r.request
    d = dev.device
    did = dev_id(dev.key)
    if ctx.world.multi(d):
        if not r.share_id:
            ctx.report(cid, req, "share", f"multi-allocatable device {did}: the result has no shareID")
        if bool(d.capacity) and r.consumed_capacity is None:
            ctx.report(
                cid, req, "share", f"multi-allocatable device {did}: the result has no consumedCapacity"
            )
    elif r.share_id or r.consumed_capacity:
        ctx.report(
            cid,
            req,
            "share",
            f"dedicated device {did}: the result must not carry shareID/consumedCapacity",
        )


def check_busy(ctx: Context, placed: list[Placed]) -> None:
    """A dedicated device serves one non-admin request; a shared device has no dedicated user."""
    by_dev: dict[DeviceKey, list[Placed]] = defaultdict(list)
    order: dict[str, int] = {}
    for p in placed:
        order.setdefault(p.claim_id, len(order))
        if p.dev is not None:
            by_dev[p.key].append(p)
    for key, users in by_dev.items():
        dev = users[0].dev
        assert dev is not None
        existing = ctx.world.existing_on(key)
        did = dev_id(key)
        if ctx.world.multi(dev.device):
            dedicated = sorted({c for c, r in existing if not r.admin_access and not r.share_id})
            if dedicated:
                for p in users:
                    if not p.admin:
                        ctx.report(
                            p.claim_id,
                            p.result.request,
                            "busy",
                            f"multi-allocatable device {did} has a dedicated allocation in claim(s) "
                            f"{', '.join(dedicated)}",
                        )
            continue
        holders = sorted({c for c, r in existing if not r.admin_access})
        groups: dict[tuple[str, str], Placed] = {}
        for p in users:
            groups.setdefault((p.claim_id, p.top), p)
        non_admin = [g for g in groups if not groups[g].admin]
        per_claim: dict[str, list[str]] = defaultdict(list)
        for c, top in groups:
            per_claim[c].append(top)
        names = [f"claim {c} (existing)" for c in holders] + [f"claim {c} request {t}" for c, t in non_admin]
        if non_admin and len(holders) + len(non_admin) > 1:
            first = groups[non_admin[0]]
            ctx.report(
                first.claim_id,
                first.result.request,
                "busy",
                f"dedicated device {did} is allocated more than once: {', '.join(names)}",
            )
            continue
        for c, tops in per_claim.items():
            if len(tops) > 1:
                p = groups[(c, tops[1])]
                ctx.report(
                    c,
                    p.result.request,
                    "busy",
                    f"dedicated device {did} is used by requests {', '.join(tops)} of the same claim",
                )
        if ctx.one_call:
            _check_admin_then_normal(ctx, did, users, order)


def _check_admin_then_normal(ctx: Context, did: str, users: list[Placed], order: dict[str, int]) -> None:
    """Upstream's rule within one call (one pod's claims, in `allocated` order): a dedicated
    device given with adminAccess to a claim is in use for the normal requests of the later
    claims of the call (docs/semantics.md, "Admin access")."""
    admins = [p for p in users if p.admin]
    if not admins:
        return
    first = min(admins, key=lambda p: order[p.claim_id])
    for p in users:
        if not p.admin and order[p.claim_id] > order[first.claim_id]:
            ctx.report(
                p.claim_id,
                p.result.request,
                "busy",
                f"dedicated device {did} was given with adminAccess to the earlier claim "
                f"{first.claim_id} of the same call: it is in use for the later claims' normal requests",
            )
            return


def check_share_ids(ctx: Context, placed: list[Placed]) -> None:
    """A shareID identifies one share of one device: no two results of a device share one."""
    seen: dict[tuple[DeviceKey, str], str] = {}
    for c, r in ctx.world.existing:
        if r.share_id:
            seen.setdefault(((r.driver, r.pool, r.device), r.share_id), f"claim {c} (existing)")
    for p in placed:
        sid = p.result.share_id
        if not sid:
            continue
        other = seen.get((p.key, sid))
        if other is not None:
            ctx.report(
                p.claim_id,
                p.result.request,
                "share",
                f"device {dev_id(p.key)}: shareID {sid} is already used by {other}",
            )
        else:
            seen[(p.key, sid)] = f"claim {p.claim_id} request {p.result.request}"
