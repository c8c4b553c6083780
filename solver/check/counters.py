"""Counters: shared counters of a pool (DRAPartitionableDevices) are never overcommitted.

Why a module: counters are pool-wide — every allocated device of the pool (each once,
existing and new, on any node) consumes from the pool's counter sets — so this rule
reads whole pools rather than single devices. As upstream, once a pool has any
over-committed counter no newly charged counter-consuming device of it may be placed;
existing admin-access results are not charged, new admin placements are.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from .amounts import fmt, frac
from .context import Context
from .keys import PoolKey, dev_id
from .results import Placed


def check_counters(ctx: Context, placed: list[Placed]) -> None:
    """Per pool: consumption of every allocated device (each once) <= each counter's value."""
    if not ctx.gates.DRAPartitionableDevices:
        return
    world = ctx.world
    existing_devs: dict[PoolKey, set[str]] = defaultdict(set)
    for _, r in world.existing:
        if not r.admin_access:
            existing_devs[(r.driver, r.pool)].add(r.device)
    new_by_pool: dict[PoolKey, list[Placed]] = defaultdict(list)
    for p in placed:
        if p.dev is not None and p.dev.device.consumes_counters:
            new_by_pool[(p.key[0], p.key[1])].append(p)
    for pk, users in new_by_pool.items():
        charged_now = [p for p in users if p.key[2] not in existing_devs[pk]]
        if not charged_now:
            continue  # only devices already charged: nothing new is consumed
        devices = world.inv.pool_devices.get(pk, {})
        in_use = existing_devs[pk] | {p.key[2] for p in users}
        total: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
        for name in in_use:
            d = devices.get(name)
            if d is None:
                continue
            for use in d.consumes_counters:
                for cname, c in use.counters.items():
                    total[(use.counter_set, cname)] += frac(c.value)
        for set_name, counters in sorted(world.inv.pool_counters.get(pk, {}).items()):
            for cname, value in sorted(counters.items()):
                amount = total.get((set_name, cname), Fraction(0))
                if amount > value:
                    p = charged_now[-1]
                    ctx.report(
                        p.claim_id,
                        p.result.request,
                        "counters",
                        f"pool {pk[0]}/{pk[1]} counter {set_name}/{cname}: allocated devices consume "
                        f"{fmt(amount)} > {fmt(value)} (placing "
                        f"{', '.join(sorted({dev_id(q.key) for q in charged_now}))})",
                    )
