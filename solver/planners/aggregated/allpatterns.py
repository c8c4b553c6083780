"""Every maximal pattern of a node class, when there are few: what lets a what-if plan prove its minimum.

Why: column generation (`solver.planners.whatif`) bounds a plan by the LP relaxation, and the integer
master it then solves is optimal only over the columns generated so far. With pods whose
sizes divide the node's devices, the LP bound sits below every integer plan (fractional nodes
are cheaper), so the gap never closes. When the box of candidate patterns of a node class (0
to cap[c, k] pods of each pod class k) is small, every maximal feasible pattern can be listed
instead; the integer master over them is then the whole problem (a plan uses a pattern as an
upper bound on what a node takes, and feasibility is downward closed, so maximal patterns
suffice), and CP-SAT's OPTIMAL over it is a global optimum.

Enumeration climbs from the empty pattern one pod at a time; a pattern is tried only when
each pattern with one pod fewer fits (downward closure), and every answer must be proven:
yes by the reference first fit or an allocation of the exact single-node model (mode "all"),
no by that model answering INFEASIBLE. An answer not proven within the budget, a box larger
than MAX_BOX or more than MAX_PATTERNS feasible patterns: None (not enumerated; the plan
keeps the generated columns and says its bound is not proven).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ...cpsat import SearchStatus, solve
from ...errors import SearchAborted
from ...problem.build import build_problem
from ...reference import allocate_reference
from .patterns import FAST_STEPS, ModelContext, Pattern

MAX_BOX = 20_000
"""Most candidate patterns (product of cap + 1 over the pod classes) a node class may have."""
MAX_PATTERNS = 2_000
"""Most feasible patterns enumerated per node class."""


def maximal_patterns(
    ctx: ModelContext, node: str, caps: Mapping[int, int], known: Mapping[Pattern, bool] | None = None
) -> list[Pattern] | None:
    """The maximal feasible patterns on `node` over the pod classes of `caps` (class -> how
    many alone fit, all of them proven), in enumeration order; None when not enumerable
    (module docstring). `known`: answers already proven (feasible patterns the pricing found)."""
    live = sorted(k for k, v in caps.items() if v > 0)
    if math.prod(caps[k] + 1 for k in live) > MAX_BOX:
        return None
    width = len(ctx.pods)
    empty: Pattern = (0,) * width
    answers: dict[Pattern, bool] = {p: ok for p, ok in (known or {}).items() if ok}
    answers[empty] = True
    feasible = [empty]
    level = [empty]
    seen = {empty}
    while level:
        grown: list[Pattern] = []
        for p in level:
            for k in live:
                q = _plus(p, k)
                if q in seen or q[k] > caps[k]:
                    continue
                seen.add(q)
                if not all(answers.get(_plus(q, j, -1), False) for j in live if q[j] > 0):
                    continue  # a pattern one pod smaller does not fit: neither does q
                ok = answers.get(q)
                if ok is None:
                    ok = _fits(ctx, node, q)
                    if ok is None:
                        return None
                    answers[q] = ok
                if ok:
                    grown.append(q)
        feasible += grown
        if len(feasible) > MAX_PATTERNS:
            return None
        level = grown
    return [p for p in feasible if any(p) and not any(answers.get(_plus(p, k), False) for k in live)]


def _plus(p: Pattern, k: int, n: int = 1) -> Pattern:
    return tuple(v + n if j == k else v for j, v in enumerate(p))


def _fits(ctx: ModelContext, node: str, pattern: Pattern) -> bool | None:
    """Do the pods of `pattern` fit together on `node`: True, False, or None (not proven)."""
    counts = {k: n for k, n in enumerate(pattern) if n}
    if not ctx.resources_fit(node, counts):
        return False
    claims, group_of, _ = ctx.claims(counts)
    problem = build_problem(ctx.local(node), claims, node, ctx.gates, cache=ctx.cache, groups=group_of)
    try:
        if allocate_reference(problem, max_steps=FAST_STEPS) is not None:
            return True
    except SearchAborted:
        pass
    if ctx.left() <= 0:
        return None
    ctx.solves += 1
    budget = ctx.left()
    out = solve(problem, mode="all", time_limit=budget, seed=ctx.seed, deadline=ctx.deadline)
    ctx.charge(out.deterministic_time)
    if out.assignment is not None:
        return True
    return False if out.status == SearchStatus.INFEASIBLE else None


def enumerate_classes(
    ctx: ModelContext,
    representatives: Mapping[int, str],
    caps: Mapping[tuple[int, int], int],
    keys: Mapping[int, object],
    known: Mapping[tuple[int, Pattern], bool],
) -> dict[int, list[Pattern]] | None:
    """`maximal_patterns` of every node class c (its node `representatives[c]`), once per
    `keys[c]` (classes with equal keys — same abstracted node and caps — share their patterns);
    None as soon as one class is not enumerable."""
    out: dict[int, list[Pattern]] = {}
    done: dict[object, list[Pattern]] = {}
    for c, node in representatives.items():
        if keys[c] not in done:
            mine = {k: v for (cc, k), v in caps.items() if cc == c}
            seen = {p: ok for (cc, p), ok in known.items() if cc == c}
            got = maximal_patterns(ctx, node, mine, seen)
            if got is None:
                return None
            done[keys[c]] = got
        out[c] = done[keys[c]]
    return out


__all__ = ["MAX_BOX", "MAX_PATTERNS", "enumerate_classes", "maximal_patterns"]
