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
from collections.abc import Sequence

from ..api.models import ResourceClaim
from .context import Context
from .keys import DeviceKey, claim_id, dev_id
from .pools import Dev
from .results import Placed
from .violations import Violation, violation


def check_share_fields(ctx: Context, p: Placed, dev: Dev) -> None:
    """A share carries a shareID (and consumedCapacity if the device has capacities).

    A result on a dedicated device carries neither.
    """
    r = p.result
    cid, req = p.claim_id, r.request
    d = dev.device
    if ctx.world.multi(d):
        if not r.share_id:
            ctx.report(
                cid, req, "share", f"multi-allocatable device {dev_id(dev.key)}: the result has no shareID"
            )
        if bool(d.capacity) and r.consumed_capacity is None:
            ctx.report(
                cid,
                req,
                "share",
                f"multi-allocatable device {dev_id(dev.key)}: the result has no consumedCapacity",
            )
    elif r.share_id or r.consumed_capacity:
        ctx.report(
            cid,
            req,
            "share",
            f"dedicated device {dev_id(dev.key)}: the result must not carry shareID/consumedCapacity",
        )


def check_busy(ctx: Context, placed: list[Placed]) -> None:
    """A dedicated device serves one non-admin request; a shared device has no dedicated user."""
    by_dev: dict[DeviceKey, list[Placed]] = defaultdict(list)
    for p in placed:
        if p.dev is not None:
            by_dev[p.key].append(p)
    for key, users in by_dev.items():
        dev = users[0].dev
        assert dev is not None
        existing = ctx.world.existing_on(key)
        if not existing and len(users) == 1:
            continue  # one new user and no holder: nothing to share (the common case, checked cheaply)
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


def check_admin_then_normal(call: Sequence[ResourceClaim]) -> list[Violation]:
    """Upstream's rule within one allocation call (one pod's unallocated claims, in the pod's
    order): a dedicated device given with adminAccess to a claim is in use for the normal
    requests of the later claims of the call (docs/semantics.md, "Admin access").

    Read from the results alone — a result without shareID is a dedicated placement (`share`
    reports a result on a multi-allocatable device that lacks one) — so that the same rule serves
    one allocator answer (`check(..., one_call=True)`) and a whole plan, where the calls are
    the placed pods' claims (`check_placements`). One violation per device and later claim.
    """
    first_admin: dict[DeviceKey, str] = {}
    out: list[Violation] = []
    for claim in call:
        cid = claim_id(claim)
        allocation = claim.status.allocation if claim.status is not None else None
        if allocation is None:
            continue
        mine: list[DeviceKey] = []
        reported: set[DeviceKey] = set()
        for r in allocation.devices.results:
            if r.share_id:
                continue
            key = (r.driver, r.pool, r.device)
            if r.admin_access:
                mine.append(key)
                continue
            holder = first_admin.get(key)
            if holder is not None and key not in reported:
                reported.add(key)
                out.append(
                    violation(
                        cid,
                        r.request,
                        "busy",
                        f"dedicated device {dev_id(key)} was given with adminAccess to the earlier claim "
                        f"{holder} of the same call: it is in use for the later claims' normal requests",
                    )
                )
        for key in mine:
            first_admin.setdefault(key, cid)
    return out


def check_share_ids(ctx: Context, placed: list[Placed]) -> None:
    """A shareID identifies one share of one device: no two results of a device share one."""
    seen: dict[tuple[DeviceKey, str], str] = {}
    for key in dict.fromkeys(p.key for p in placed if p.result.share_id):
        for c, r in ctx.world.existing_on(key):
            if r.share_id:
                seen.setdefault((key, r.share_id), f"claim {c} (existing)")
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
