"""The lexicographic objective, as an ordered list of stages.

Why stages instead of one weighted sum: the levels have very different ranges (priorities up to
1e9, device-order ranks up to D^2/2), and nested weights overflow or blur CP-SAT's bounds.
`solver.cpsat` optimises the stages one after the other, each time fixing the previous
stage's value (`expr >= best` / `expr <= best`) and hinting the previous solution — exactly
lexicographic, with small coefficients at every level.

Stages, in priority order:
1. "placed" (max): sum_c placed[c] * (max(priority[c], 0) + 1), a group of claims (one pod,
   `ClaimInfo.group`) counted once, by its first claim, with `Problem.group_weight` when
   the group places several pods (each pod its own weight). Only optimised in mode
   "free"; in mode "all" every claim is placed (a negative priority counts as 0, so placing a
   claim is never worse than not placing it).
1b. "gangs" (max): sum_G on[G] — among plans of the same placed weight, the one that runs the
   most gangs (PodGroups, `encoders.gangs`) whole: a gang's pods placed to their minCount are
   worth more than the same pods spread over partial gangs beyond it. Mode "free" only; the
   stage exists only when the Problem has gangs (basic-policy groups do not count).
2. "first_available" (min): sum_a chosen[a] * position[a] — earlier subrequests first.
3. "first_available_order" (min): among answers with the same sum, upstream's search order —
   the earlier request's earlier subrequest. Requests r_1 < r_2 < ... (claim index, then request
   index; only those with firstAvailable) have radix b_i = 1 + their last position and position
   p_i = sum_{a of r_i} chosen[a] * position[a] in [0, b_i - 1]. With mixed-radix weights
   w_k = 1, w_i = w_{i+1} * b_{i+1}, the value V = sum_i w_i * p_i orders answers exactly
   lexicographically by (p_1, p_2, ...): the later requests together add at most
   sum_{j>i} w_j * (b_j - 1) = w_i - 1 < w_i, less than one step of p_i. V < prod_i b_i, so
   the requests are cut, in order, into chunks whose radix product stays <= ORDER_WEIGHT_LIMIT
   (2^40: no int64 overflow in CP-SAT's sums, and bounds it can still reason with); a chunk is
   one stage, the first named "first_available_order", the next "first_available_order.2",
   ... — stages are lexicographic, so chunks are too. A claim with 32 requests of 8
   subrequests needs 3 chunks.
4. "devices": pack (min) — devices opened by this call: used[d] over devices that are not
   multi devices with existing shares (those are already open: packing onto them is free, so
   in-use multi devices are preferred), plus group_used[g]; spread (max) — distinct devices
   used, all devices counted.
5. "order" (min): sum_d rank[d] * used[d] (+ per group the ranks of its first group_used[g]
   devices, exact via an element constraint over prefix sums). Ranks order the devices:
   pack — multi devices with existing shares first, then least remaining capacity (best fit,
   least stranded), then device index; spread — fresh devices first, most remaining capacity
   first, then device index. Deterministic tie-break; with dedicated devices it reproduces
   upstream's "earliest devices first".
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from dra_solver.problem.flat import DeviceInfo, Problem, claim_weight

from .model import IntVar, LinearExpr, Model, weighted


@dataclass(frozen=True)
class Stage:
    """One level of the lexicographic objective."""

    name: str
    terms: tuple[tuple[int, IntVar], ...]
    maximize: bool
    optimise: bool = True
    """False when the level is fixed by the mode (placed in mode "all")."""

    @property
    def expr(self) -> LinearExpr:
        return weighted(self.terms)

    @property
    def constant(self) -> bool:
        return not any(c for c, _ in self.terms)


ORDER_WEIGHT_LIMIT = 2**40
"""Largest radix product (hence coefficient bound) of one "first_available_order" stage."""


def order_stage_name(chunk: int) -> str:
    """Name of the `chunk`-th (0-based) "first_available_order" stage."""
    return "first_available_order" if chunk == 0 else f"first_available_order.{chunk + 1}"


def request_order_weights(problem: Problem) -> list[dict[int, int]]:
    """Chunks of the "first_available_order" stages: alternative -> the mixed-radix weight w_i
    of its request (every alternative of a request has the same weight; the stage's coefficient
    is w_i * position). Always at least one chunk (empty without firstAvailable): the stage
    "first_available_order" exists for every Problem, later chunks only when needed."""
    chunks: list[list[tuple[tuple[int, ...], int]]] = [[]]
    product = 1
    for c in problem.claims:
        for req in c.requests:
            radix = 1 + max((problem.alternatives[a].position for a in req.alternatives), default=0)
            if not req.first_available or radix < 2:
                continue
            if product * radix > ORDER_WEIGHT_LIMIT and chunks[-1]:
                chunks.append([])
                product = 1
            chunks[-1].append((req.alternatives, radix))
            product *= radix
    out = []
    for chunk in chunks:
        weights: dict[int, int] = {}
        w = 1
        for alts, radix in reversed(chunk):
            weights.update(dict.fromkeys(alts, w))
            w *= radix
        out.append(weights)
    return out


def remaining_fraction(dev: DeviceInfo) -> Fraction:
    """Mean share of capacity still free on a multi device (1 for others and unlimited ones)."""
    if not dev.multi or not dev.capacity:
        return Fraction(1)
    parts = []
    for k, cap in dev.capacity.items():
        cap = Fraction(cap)
        parts.append((cap - Fraction(dev.in_use.get(k, 0))) / cap if cap > 0 else Fraction(0))
    return sum(parts, Fraction(0)) / len(parts)


def device_ranks(problem: Problem, strategy: str) -> dict[int, int]:
    """device -> rank (1 = preferred) for the "order" stage."""

    def key(dev: DeviceInfo) -> tuple:
        open_multi = dev.multi and dev.shared_in_use
        if strategy == "pack":
            return (0 if open_multi else 1, remaining_fraction(dev), dev.index)
        return (1 if open_multi else 0, -remaining_fraction(dev), dev.index)

    return {dev.index: i + 1 for i, dev in enumerate(sorted(problem.devices, key=key))}


def opens(dev: DeviceInfo) -> bool:
    """Using the device opens it (multi devices with existing shares are already open)."""
    return not (dev.multi and dev.shared_in_use)


def stages(m: Model, strategy: str) -> list[Stage]:
    """Build the stages for `strategy`; call once per model (it adds the group tie-break
    auxiliaries to the model)."""
    if strategy not in ("pack", "spread"):
        raise ValueError(f"unknown strategy {strategy!r}")
    p = m.problem
    # Claims of one group (pod) are placed together: the group counts once, by its first claim.
    seen: set[int] = set()
    placed_terms = []
    for c in p.claims:
        if c.group is not None:
            if c.group in seen:
                continue
            seen.add(c.group)
        weight = claim_weight(c.priority)
        if c.group is not None:
            weight = p.group_weight.get(c.group, weight)
        placed_terms.append((weight, m.placed[c.index]))
    for g, prio in sorted(p.bare_groups.items()):
        placed_terms.append((p.group_weight.get(g, claim_weight(prio)), m.pod_placed[g]))
    placed = tuple(placed_terms)
    first = tuple(
        (alt.position, m.chosen[alt.index])
        for alt in p.alternatives
        if alt.position > 0 and alt.index not in m.impossible
    )
    order_stages = []
    for i, weights in enumerate(request_order_weights(p)):
        terms = tuple(
            (weights[alt.index] * alt.position, m.chosen[alt.index])
            for alt in p.alternatives
            if alt.position > 0 and alt.index not in m.impossible and alt.index in weights
        )
        order_stages.append(Stage(order_stage_name(i), terms, maximize=False))
    groups = tuple((1, m.group_used[g.index]) for g in m.groups)
    if strategy == "pack":
        devices = tuple((1, u) for d, u in m.used.items() if opens(p.devices[d])) + groups
    else:
        devices = tuple((1, u) for u in m.used.values()) + groups
    gangs = tuple((1, on) for i, on in sorted(m.gang_on.items()) if p.gangs[i].counted)
    ranks = device_ranks(p, strategy)
    order = tuple((ranks[d], u) for d, u in m.used.items()) + tuple(
        (1, _group_order_cost(m, g.index, ranks)) for g in m.groups
    )
    return [
        Stage("placed", placed, maximize=True, optimise=m.mode == "free"),
        *([Stage("gangs", gangs, maximize=True, optimise=m.mode == "free")] if gangs else []),
        Stage("first_available", first, maximize=False),
        *order_stages,
        Stage("devices", devices, maximize=strategy == "spread"),
        Stage("order", order, maximize=False),
    ]


def _group_order_cost(m: Model, g: int, ranks: dict[int, int]) -> IntVar:
    """cost[g] = prefix[group_used[g]]: the decoder takes the lowest device indices first."""
    prefix = [0]
    for d in m.groups[g].devices:
        prefix.append(prefix[-1] + ranks[d])
    cost = m.cp.new_int_var(0, prefix[-1], f"order_cost[{g}]")
    m.cp.add_element(m.group_used[g], prefix, cost)
    m.group_order_cost[g] = cost
    m.group_prefix[g] = prefix
    return cost
