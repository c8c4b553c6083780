"""Counts: each request gets the number of devices it asks for (`count`, `duplicate`).

Why a module: ExactCount asks for `count` devices; allocation mode All asks for exactly
the All-set — every visible device that the request selects and that could serve it
unused (room the existing claims took does not leave a device out) — and fails while a
relevant pool is unusable (docs/semantics.md, "allocationMode All"); and one request never
gets the same device twice, not even a multi-allocatable one.
"""

from __future__ import annotations

from collections import defaultdict

from ..api.models import ResourceClaim
from .amounts import capacity_requests, consumption, frac
from .context import Context
from .keys import Alt, DeviceKey, claim_id, dev_id, fqn
from .results import Placed
from .selectors import selects


def check_counts(ctx: Context, claim: ResourceClaim, mine: list[Placed]) -> None:
    """ExactCount: exactly `count` devices; All: exactly the All-set (docs/semantics.md,
    "allocationMode All")."""
    cid = claim_id(claim)
    for request in claim.spec.devices.requests:
        got = [p for p in mine if p.top == request.name]
        if not got:
            ctx.report(cid, request.name, "count", "the request has no device results")
            continue
        alts = {id(p.alt): p for p in got if p.alt is not None}
        if len(alts) != 1 or len(got) != sum(1 for p in got if p.alt is not None):
            continue  # reported as a `request` violation
        alt = got[0].alt
        assert alt is not None
        label = got[0].result.request
        mode = alt.allocation_mode or "ExactCount"
        if mode == "ExactCount":
            want = alt.count if alt.count is not None else 1
            if len(got) != want:
                ctx.report(
                    cid,
                    label,
                    "count",
                    f"ExactCount asks for {want} device(s), the result has {len(got)}",
                )
        elif mode == "All":
            check_all(ctx, cid, label, alt, got)
        else:
            ctx.report(cid, label, "count", f"unsupported allocation mode {mode!r}")


def all_set(ctx: Context, cid: str, label: str, alt: Alt) -> set[DeviceKey]:
    """Every visible device that matches the request and could serve it unused: room taken by
    existing claims does not leave a device out (upstream since kubernetes#140769) — the
    capacity rule then refuses the plan that places it anyway."""
    out: set[DeviceKey] = set()
    requests = capacity_requests(alt)
    for key, dev in ctx.world.inv.devices.items():
        d = dev.device
        if d.binding_conditions and not ctx.gates.binding_and_status:
            continue
        if selects(ctx, alt, dev, cid, label) != []:  # a rejection, or a CEL error (None)
            continue
        if ctx.gates.DRAConsumableCapacity:
            cons = consumption(d, key[0], requests, fractional=ctx.gates.DRAFractionalCapacityRange)
            if cons.lacking or cons.refused:
                continue
            if ctx.world.multi(d):
                if any(a > frac(d.capacity[n].value) for n, a in cons.amounts.items()):
                    continue
            else:
                req_full = {fqn(k, key[0]) for k in requests}
                if any(
                    a > frac(d.capacity[n].value)
                    for n, a in cons.amounts.items()
                    if fqn(n, key[0]) in req_full
                ):
                    continue
        out.add(key)
    return out


def check_all(ctx: Context, cid: str, label: str, alt: Alt, got: list[Placed]) -> None:
    inv = ctx.world.inv
    for pk, problem in sorted(inv.problems.items()):
        if pk not in inv.obsolete:
            ctx.report(cid, label, "count", f"allocation mode All cannot be satisfied: {problem}")
    want = all_set(ctx, cid, label, alt)
    have = {p.key for p in got}
    missing = sorted(want - have)
    extra = sorted(k for k in have - want if k in inv.devices)
    if not want:
        ctx.report(cid, label, "count", "allocation mode All: no device matches the request")
    if missing:
        ctx.report(
            cid,
            label,
            "count",
            "allocation mode All must allocate every matching device; missing "
            + ", ".join(map(dev_id, missing)),
        )
    if extra:
        ctx.report(
            cid,
            label,
            "count",
            "allocation mode All: device(s) "
            f"{', '.join(map(dev_id, extra))} do not belong to the All-set (no match or no room)",
        )


def check_duplicates(ctx: Context, claim: ResourceClaim, mine: list[Placed]) -> None:
    """One request never gets the same device twice (not even a multi-allocatable one)."""
    seen: dict[tuple[str, DeviceKey], int] = defaultdict(int)
    for p in mine:
        seen[(p.top, p.key)] += 1
    for (top, key), n in seen.items():
        if n > 1:
            ctx.report(
                claim_id(claim),
                top,
                "duplicate",
                f"device {dev_id(key)} appears {n} times in one request",
            )
