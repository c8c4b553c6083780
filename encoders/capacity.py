"""Consumable capacity of multi-allocatable devices (KEP-5075).

Math: for every multi device d and every capacity k of d,
    sum_a consumed[a, d, k] * x[a, d] <= (capacity[d, k] - in_use[d, k]) * used[d]
over all alternatives (admin included). Multiplying by used[d] changes no integer solution
(x[a, d] => used[d]) but ties the LP relaxation of the "devices" stage to the capacity:
fewer than total demand / capacity devices is then cut off at the root.
`consumed` is Candidate.consumed, already rounded by the request policy. Quantities are
exact Fractions: every capacity name k is scaled to
integers by the lcm of all denominators seen for k (capacities, in-use sums, consumptions),
and each constraint is divided by the gcd of its coefficients (rhs rounded down, exact for
integer variables; used[d] is boolean, so the product stays exact) so CP-SAT sees small
coefficients. A multi device without capacities is
unlimited. A placement that alone exceeds what is left is excluded statically (`forbidden`),
which also covers over-committed devices (in_use > capacity).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction

from dra_solver.problem.flat import Alternative, Candidate, Problem

from .model import Allowed, Cover, IntVar, Model, lcm_of_denominators, upper_bound, weighted


def _left(problem: Problem, d: int, k: str) -> Fraction:
    dev = problem.devices[d]
    return Fraction(dev.capacity[k]) - Fraction(dev.in_use.get(k, 0))


def forbidden(problem: Problem, alt: Alternative, cand: Candidate) -> bool:
    """One placement alone does not fit what is left of some capacity."""
    dev = problem.devices[cand.device]
    if not dev.multi or not dev.capacity:
        return False
    consumed = cand.consumed or {}
    return any(Fraction(consumed.get(k, 0)) > _left(problem, cand.device, k) for k in dev.capacity)


def scales(problem: Problem) -> dict[str, int]:
    """Per capacity name: the lcm of every denominator involved."""
    seen: dict[str, list[Fraction]] = {}
    for dev in problem.devices:
        if dev.multi:
            for k, v in dev.capacity.items():
                seen.setdefault(k, []).extend([Fraction(v), Fraction(dev.in_use.get(k, 0))])
    for alt in problem.alternatives:
        for cand in alt.candidates:
            for k, v in (cand.consumed or {}).items():
                seen.setdefault(k, []).append(Fraction(v))
    return {k: lcm_of_denominators(vs) for k, vs in seen.items()}


def add(m: Model) -> None:
    """One linear constraint per (multi device, capacity name) that can bind."""
    p = m.problem
    scale = scales(p)
    for d, pairs in m.x_by_dev.items():
        dev = p.devices[d]
        if not dev.multi or not dev.capacity:
            continue
        for k in sorted(dev.capacity):
            terms = []
            for a, v in pairs:
                consumed = m.allowed[a][d].consumed or {}
                terms.append((Fraction(consumed.get(k, 0)), v))
            _add_linked(m, terms, _left(p, d, k), scale[k], m.used[d])


def _add_linked(
    m: Model, terms: list[tuple[Fraction, IntVar]], left: Fraction, scale: int, used: IntVar
) -> None:
    """sum c * x <= left * used, scaled to integers and divided by the gcd (as add_scaled_le);
    skipped when it can never bind (every x at its upper bound fits)."""
    ints = [(int(c * scale), v) for c, v in terms if c != 0]
    if not ints:
        return
    g = math.gcd(*(c for c, _ in ints))
    limit_frac = left * scale
    limit = (limit_frac.numerator // limit_frac.denominator) // g
    ints = [(c // g, v) for c, v in ints]
    if sum(c * upper_bound(v) for c, v in ints) <= limit:
        return
    m.cp.add(weighted(ints) <= limit * used)


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): the consumption per alternative."""
    return tuple(tuple(sorted((allowed[a][d].consumed or {}).items())) for a in alts)
