"""Counters: shared counters of a pool (DRAPartitionableDevices) are never overcommitted.

Why a module: counters are pool-wide — every allocated device of the pool (each once,
existing and new, on any node) consumes from the pool's counter sets — so this rule
reads whole pools rather than single devices. As upstream, once a pool has any
over-committed counter no newly charged counter-consuming device of it may be placed;
existing admin-access results are not charged, new admin placements are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from typing import NamedTuple

from ..api.models import Device
from .amounts import fmt, frac
from .context import Context
from .keys import PoolKey, dev_id
from .results import Placed


class _Joined(NamedTuple):
    """A pool that new placements of counter-consuming devices join."""

    pool: PoolKey
    held: set[str]
    """The devices existing non-admin results hold."""
    users: list[Placed]
    """The new placements of devices that consume counters."""
    joining: list[Placed]
    """Those of `users` whose device no existing result holds (charged now, or joining a
    counter set): never empty."""
    devices: dict[str, Device]
    """The pool's devices by name."""


def _pools_joined(ctx: Context, placed: list[Placed]) -> Iterator[_Joined]:
    """Per pool that a new placement joins (both rules read the same pools: each device once,
    existing and new): what is held there, and what joins."""
    new_by_pool: dict[PoolKey, list[Placed]] = defaultdict(list)
    for p in placed:
        if p.dev is not None and p.dev.device.consumes_counters:
            new_by_pool[(p.key[0], p.key[1])].append(p)
    for pk, users in new_by_pool.items():
        held = {r.device for _, r in ctx.world.existing_in(pk) if not r.admin_access}
        joining = [p for p in users if p.key[2] not in held]
        if joining:  # only devices already charged: nothing new is consumed or joins
            yield _Joined(pk, held, users, joining, ctx.world.inv.pool_devices.get(pk, {}))


def check_counters(ctx: Context, placed: list[Placed]) -> None:
    """Per pool: consumption of every allocated device (each once) <= each counter's value."""
    if not ctx.gates.DRAPartitionableDevices:
        return
    for pk, held, users, charged_now, devices in _pools_joined(ctx, placed):
        total = _consumed(devices, held | {p.key[2] for p in users})
        for set_name, counters in sorted(ctx.world.inv.pool_counters.get(pk, {}).items()):
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


def _consumed(devices: dict[str, Device], in_use: set[str]) -> dict[tuple[str, str], Fraction]:
    """(counter set, counter) -> what the devices `in_use` consume of it, exactly. Why whole
    numbers apart: counter amounts are nearly always integers, and adding them as `Fraction`s
    (a gcd and a new object per addition) was most of this rule's time on a 10,000-node plan;
    the integers are summed as ints and the rest as fractions, the same exact sum."""
    whole: dict[tuple[str, str], int] = defaultdict(int)
    parts: dict[tuple[str, str], Fraction] = {}
    for name in in_use:
        d = devices.get(name)
        if d is None:
            continue
        for use in d.consumes_counters:
            for cname, c in use.counters.items():
                key = (use.counter_set, cname)
                amount = frac(c.value)
                if amount.denominator == 1:
                    whole[key] += amount.numerator
                else:
                    parts[key] = parts.get(key, Fraction(0)) + amount
    return {key: Fraction(whole.get(key, 0)) + parts.get(key, 0) for key in whole.keys() | parts.keys()}


def check_compatibility_groups(ctx: Context, placed: list[Placed]) -> None:
    """KEP-5963 (docs/semantics.md, "Device compatibility groups (KEP-5963)"): per counter set,
    the devices drawing from it, allocated and new (each once), either all declare no groups,
    or all declare groups and one group is common to all of them. Allocated devices that
    already break the rule (only a changed slice can do that) are folded as upstream folds
    them, in the pool's order, and only the new devices must fit what they leave."""
    if not (ctx.gates.DRADeviceCompatibilityGroups and ctx.gates.DRAPartitionableDevices):
        return
    for pk, held, _, joining, devices in _pools_joined(ctx, placed):
        old = [(n, d) for n, d in devices.items() if n in held]
        new = [(p.key[2], devices[p.key[2]]) for p in joining if p.key[2] in devices]
        for set_name, problem in _group_problems(old, new):
            p = joining[-1]
            ctx.report(
                p.claim_id,
                p.result.request,
                "compatibility",
                f"pool {pk[0]}/{pk[1]} counter set {set_name}: {problem}",
            )


def _group_problems(old: list[tuple[str, Device]], new: list[tuple[str, Device]]) -> list[tuple[str, str]]:
    """(counter set, what breaks) for each counter set the new devices cannot join."""
    state: dict[str, frozenset[str] | None] = {}  # set -> common groups (None: only members without)
    seen: dict[str, list[str]] = defaultdict(list)
    out: list[tuple[str, str]] = []
    for i, (name, d) in enumerate(old + new):
        for use in d.consumes_counters:
            groups = frozenset(use.compatibility_groups or ())
            words = f"{name}: {', '.join(sorted(groups)) or 'none'}"
            if use.counter_set not in state:
                state[use.counter_set] = groups or None
            else:
                common = state[use.counter_set]
                fits = not groups if common is None else bool(common & groups)
                if not fits and i >= len(old):
                    members = "; ".join(seen[use.counter_set] + [words])
                    out.append((use.counter_set, f"the devices' compatibility groups share none ({members})"))
                if common is not None and groups:
                    state[use.counter_set] = common & groups
            seen[use.counter_set].append(words)
    return sorted(set(out))
