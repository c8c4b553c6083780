"""Why a set of claims cannot be allocated on a node: a reason naming claim and request.

Why separate from the allocators: the search only says "no"; users need to know which
claim and which request blocked. We narrow down with cheap re-runs of the reference search
on smaller problems (one claim alone, one request without constraints) built from the
same precomputed Problem.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import CelError, SearchAborted
from ..problem.flat import Alternative, ClaimInfo, Problem
from ..problem.kinds import KINDS
from . import search


def _usable(problem: Problem, alt: Alternative) -> int:
    """Candidates that are not already taken by existing allocations."""
    return sum(
        1
        for c in alt.candidates
        if c.error is None
        and (alt.admin or problem.devices[c.device].multi or not problem.devices[c.device].busy)
    )


def _only(problem: Problem, claim: ClaimInfo, *, constraints: bool) -> Problem:
    """The problem restricted to one claim (renumbered to index 0)."""
    alts = [replace(a, claim=0) for a in problem.alternatives]
    cons = (
        tuple(replace(c, claim=0) for c in problem.constraints if c.claim == claim.index)
        if constraints
        else ()
    )
    cons = tuple(replace(c, index=i) for i, c in enumerate(cons))
    one = replace(claim, index=0, constraints=tuple(range(len(cons))))
    return replace(problem, alternatives=tuple(alts), claims=(one,), constraints=cons)


def _fails(problem: Problem) -> bool:
    """The smaller problem has no allocation (False when the bounded search cannot tell, or
    meets a CEL runtime error the whole problem's search never reached: lazy, as upstream)."""
    try:
        return search(problem, max_steps=200_000) is None
    except (SearchAborted, CelError):
        return False


def _request_reason(problem: Problem, claim: ClaimInfo) -> str | None:
    for req in claim.requests:
        reasons = []
        for a in req.alternatives:
            alt = problem.alternatives[a]
            if alt.mode == "All":
                if not alt.candidates:
                    reasons.append(f"{alt.name}: no device matches (allocationMode All needs at least one)")
                elif alt.all_blocked:
                    reasons.append(f"{alt.name}: allocationMode All, but {alt.all_blocked}")
                else:
                    reasons = []
                    break
                continue
            usable = _usable(problem, alt)
            if usable < alt.count:
                matching = len(alt.candidates) + sum(n for _, n in alt.rejected)
                text = f"{alt.name}: needs {alt.count} device(s), {matching} match the selectors"
                if alt.rejected:
                    text += "; of those " + ", ".join(f"{n} {why}" for why, n in alt.rejected)
                if usable != len(alt.candidates):  # "remaining" only when some were filtered out
                    among = (
                        f"the remaining {len(alt.candidates)}" if alt.rejected else f"{len(alt.candidates)}"
                    )
                    text += f"; {usable} of {among} {'is' if usable == 1 else 'are'} free"
                reasons.append(text)
            else:
                reasons = []
                break
        if reasons:
            return f"claim {claim.ref}: request {req.name}: " + "; ".join(reasons)
    return None


def explain_unschedulable(problem: Problem) -> str:
    """A one-line reason, naming the claim and request that blocked, where it can tell."""
    node = f"on node {problem.node}" if problem.node else "without a node (allNodes devices only)"
    skipped = [*problem.invalid_pools, *problem.incomplete_pools]  # each names pool and why
    if skipped:  # (`problem.build`)
        node += "; not searched: " + "; ".join(skipped)
    for claim in problem.claims:
        reason = _request_reason(problem, claim)
        if reason:
            return f"{reason} ({node})"
    for claim in problem.claims:
        if _fails(_only(problem, claim, constraints=False)):
            return (
                f"claim {claim.ref}: its requests cannot all be served at once {node} "
                "(devices, capacity or shared counters run out)"
            )
        if claim.constraints and _fails(_only(problem, claim, constraints=True)):
            names = "; ".join(_constraint_words(problem, c) for c in claim.constraints)
            return f"claim {claim.ref}: constraints cannot be satisfied {node}: {names}"
    if len(problem.claims) > 1:
        refs = ", ".join(c.ref for c in problem.claims)
        return f"claims {refs} can each be allocated alone but not together {node}"
    return (
        f"claim {problem.claims[0].ref} cannot be allocated {node}"
        if problem.claims
        else "nothing to allocate"
    )


def _constraint_words(problem: Problem, c: int) -> str:
    con = problem.constraints[c]
    kind = KINDS[con.kind]
    return f"{kind.wire_field} {con.attribute} (the devices {kind.words} it)"
