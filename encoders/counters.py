"""Shared counters of partitionable devices (DRAPartitionableDevices).

Math: a device is *charged* when it has counter use and its counters are not already charged
by existing allocations — i.e. it is neither busy (existing dedicated allocation, only admin
placements can reach it) nor a multi device with existing shares (`shared_in_use`); the
Problem's `available` already subtracts those. used[d] = 1 iff d has any
placement in this call (admin included; for a group: the number of its devices used). For
every counter i:
    sum_{d charged} counter_use[d][i] * used[d] <= counters[i].available
with the same exact Fraction scaling as capacities (lcm of denominators per counter, then the
gcd of the coefficients). A charged device of a pool with an over-committed counter
(`counters_blocked`), or whose use alone exceeds a counter, is never placed (`forbidden`).
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction

from dra_solver.problem.flat import Alternative, Candidate, DeviceInfo, Problem

from .model import Allowed, Cover, Model, add_scaled_le, lcm_of_denominators


def charged(dev: DeviceInfo) -> bool:
    """Using the device charges its counter use in this call."""
    return bool(dev.counter_use) and not (dev.busy or dev.shared_in_use)


def forbidden(problem: Problem, alt: Alternative, cand: Candidate) -> bool:
    """Charged device that upstream would always reject on counters."""
    dev = problem.devices[cand.device]
    if not charged(dev):
        return False
    if dev.counters_blocked:
        return True
    counters = problem.counters
    return any(Fraction(amount) > Fraction(counters[i].available) for i, amount in dev.counter_use.items())


def add(m: Model) -> None:
    """One linear constraint per counter that can bind."""
    p = m.problem
    terms: dict[int, list] = {}
    for d, used in m.used.items():
        dev = p.devices[d]
        if charged(dev):
            for i, amount in dev.counter_use.items():
                terms.setdefault(i, []).append((Fraction(amount), used))
    for g in m.groups:
        dev = p.devices[g.devices[0]]  # members share counter use
        if charged(dev):
            for i, amount in dev.counter_use.items():
                terms.setdefault(i, []).append((Fraction(amount), m.group_used[g.index]))
    for i in sorted(terms):
        available = Fraction(p.counters[i].available)
        scale = lcm_of_denominators([available] + [c for c, _ in terms[i]])
        add_scaled_le(m.cp, terms[i], available, scale)


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): its counter use and blocking."""
    dev = problem.devices[d]
    return (tuple(sorted(dev.counter_use.items())), dev.counters_blocked)
