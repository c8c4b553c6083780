"""Capacity: consumable capacity (KEP-5075) is recorded exactly and never overcommitted.

Why a module: these are the rules of amounts on one device — a share's consumedCapacity
must be exactly the requestPolicy rounding for every capacity (`rounding`), a dedicated
device must have enough of what the request asks for (`capacity`), and the shares placed
on a multi-allocatable device, with those already there, must fit (`capacity`). Admin
access results consume nothing.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from ..api.quantity import Quantity
from .amounts import Consumption, capacity_requests, consumption, fmt, frac
from .context import Context
from .keys import DeviceKey, dev_id, fqn
from .pools import Dev
from .results import Placed


def check_consumed(
    ctx: Context, p: Placed, dev: Dev, cons: Consumption | None, requests: dict[str, Quantity]
) -> None:
    """One result's amounts: a share's rounding, or a dedicated device's capacity (gate on)."""
    r = p.result
    cid, req = p.claim_id, r.request
    d = dev.device
    if ctx.world.multi(d):
        if cons is not None and r.consumed_capacity is not None:
            check_rounding(ctx, p, dev, cons)
    elif cons is not None:
        for name, amount in cons.amounts.items():
            if fqn(name, dev.key[0]) in {fqn(k, dev.key[0]) for k in requests}:
                value = frac(d.capacity[name].value)
                if amount > value:
                    ctx.report(
                        cid,
                        req,
                        "capacity",
                        f"dedicated device {dev_id(dev.key)}: capacity {name} is {fmt(value)}, "
                        f"the request needs {fmt(amount)}",
                    )
        for name, refusal in cons.refused.items():
            ctx.report(
                cid, req, "capacity", f"dedicated device {dev_id(dev.key)}: capacity {name}: {refusal}"
            )


def check_rounding(ctx: Context, p: Placed, dev: Dev, cons: Consumption) -> None:
    """consumedCapacity must be exactly the requestPolicy rounding, for every capacity."""
    r = p.result
    did = dev_id(dev.key)
    driver = dev.key[0]
    recorded = {fqn(k, driver): (k, frac(v)) for k, v in (r.consumed_capacity or {}).items()}
    names = {fqn(k, driver): k for k in dev.device.capacity}
    for full, (orig, _) in sorted(recorded.items()):
        if full not in names:
            ctx.report(p.claim_id, r.request, "rounding", f"device {did} has no capacity {orig} to consume")
    for full, name in sorted(names.items()):
        if name in cons.refused:
            ctx.report(
                p.claim_id,
                r.request,
                "rounding",
                f"device {did}: capacity {name}: the request is not allowed by the requestPolicy: "
                f"{cons.refused[name]}",
            )
            continue
        expected = cons.amounts[name]
        got = recorded.get(full)
        if got is None:
            ctx.report(
                p.claim_id,
                r.request,
                "rounding",
                f"device {did}: consumedCapacity lacks {name} (expected {fmt(expected)}; every capacity "
                "must be listed, zeros included)",
            )
        elif got[1] != expected:
            ctx.report(
                p.claim_id,
                r.request,
                "rounding",
                f"device {did}: consumedCapacity {name} is {fmt(got[1])}, the requestPolicy gives "
                f"{fmt(expected)}",
            )


def check_capacity(ctx: Context, placed: list[Placed]) -> None:
    """Multi-allocatable devices: existing + new consumption <= value, per capacity. New
    admin-access placements count (inside one call they use capacity like any other); existing
    admin results do not (they never consume anything once allocated)."""
    by_dev: dict[DeviceKey, list[Placed]] = defaultdict(list)
    for p in placed:
        if p.dev is not None and ctx.world.multi(p.dev.device) and p.dev.device.capacity:
            by_dev[p.key].append(p)
    for key, users in by_dev.items():
        dev = users[0].dev
        assert dev is not None
        driver = key[0]
        used = ctx.world.existing_use(key, driver)
        new: dict[str, Fraction] = defaultdict(Fraction)
        for p in users:
            amounts: dict[str, Fraction]
            if p.result.consumed_capacity is not None:
                amounts = {fqn(k, driver): frac(v) for k, v in p.result.consumed_capacity.items()}
            elif p.alt is not None:
                gate = ctx.gates.DRAFractionalCapacityRange
                cons = consumption(dev.device, driver, capacity_requests(p.alt), fractional=gate)
                amounts = {fqn(k, driver): v for k, v in cons.amounts.items()}
            else:
                continue
            for k, v in amounts.items():
                new[k] += v
        for name, cap in dev.device.capacity.items():
            full = fqn(name, driver)
            value = frac(cap.value)
            before = used.get(full, Fraction(0))
            total = before + new.get(full, Fraction(0))
            if total > value:
                p = users[-1]
                ctx.report(
                    p.claim_id,
                    p.result.request,
                    "capacity",
                    f"device {dev_id(key)} capacity {name}: {fmt(before)} already in use + "
                    f"{fmt(new.get(full, Fraction(0)))} new > {fmt(value)} "
                    f"(new shares: {', '.join(sorted({q.claim_id for q in users}))})",
                )
