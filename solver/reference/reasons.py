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
from ..reasons import Kind, Reason
from ..reasons.words import of_node, say
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


def _request_reason(
    problem: Problem, claim: ClaimInfo, node: str | None, skipped: tuple[Reason, ...]
) -> Reason | None:
    for req in claim.requests:
        parts: list[Reason] = []
        for a in req.alternatives:
            alt = problem.alternatives[a]
            if alt.mode == "All":
                if alt.fatal is not None and alt.all_blocked:  # a pool not ready: before any device
                    parts.append(Reason.of(Kind.ALL_BLOCKED, alt.name, why=of_node(alt.all_blocked, node)))
                elif not alt.candidates:
                    parts.append(Reason.of(Kind.ALL_NONE, alt.name))
                elif alt.all_blocked:
                    parts.append(Reason.of(Kind.ALL_BLOCKED, alt.name, why=of_node(alt.all_blocked, node)))
                else:
                    parts = []
                    break
                continue
            usable = _usable(problem, alt)
            if usable < alt.count:
                parts.append(
                    Reason.of(
                        Kind.SHORT,
                        alt.name,
                        count=alt.count,
                        matching=len(alt.candidates) + sum(n for _, n in alt.rejected),
                        rejected=tuple(alt.rejected),
                        usable=usable,
                        candidates=len(alt.candidates),
                    )
                )
            else:
                parts = []
                break
        if parts:
            return Reason.of(
                Kind.REQUEST, claim.ref, request=req.name, parts=tuple(parts), node=node, skipped=skipped
            )
    return None


def why_unschedulable(problem: Problem) -> Reason:
    """Why the claims cannot be allocated on the problem's node, naming the claim and request
    that blocked where it can tell (a value: `reasons.words.say` words it)."""
    node = problem.node
    # each names pool and why, a fact made where the pool was read (the node's name a fact)
    skipped = tuple(of_node(fact, node) for fact in (*problem.invalid_pools, *problem.incomplete_pools))
    for claim in problem.claims:
        reason = _request_reason(problem, claim, node, skipped)
        if reason is not None:
            return reason
    for claim in problem.claims:
        alone = _only(problem, claim, constraints=False)
        if _fails(alone):
            groups = _compat_groups(alone)
            if groups and not _fails(_without_compat(alone)):
                return Reason.of(Kind.CONSTRAINTS, claim.ref, constraints=groups, node=node, skipped=skipped)
            return Reason.of(Kind.RUNS_OUT, claim.ref, node=node, skipped=skipped)
        if claim.constraints and _fails(_only(problem, claim, constraints=True)):
            names = tuple(_constraint_words(problem, c) for c in claim.constraints)
            return Reason.of(Kind.CONSTRAINTS, claim.ref, constraints=names, node=node, skipped=skipped)
    if len(problem.claims) > 1:
        refs = tuple(c.ref for c in problem.claims)
        return Reason.of(Kind.NOT_TOGETHER, "", claims=refs, node=node, skipped=skipped)
    if problem.claims:
        return Reason.of(Kind.CANNOT, problem.claims[0].ref, node=node, skipped=skipped)
    return Reason.of(Kind.NOTHING)


def explain_unschedulable(problem: Problem) -> str:
    """A one-line reason, naming the claim and request that blocked, where it can tell."""
    return say(why_unschedulable(problem))


def _compat_groups(problem: Problem) -> tuple[Reason, ...]:
    """The KEP-5963 counter sets the candidates draw from, as constraints (`Kind.COMPAT_GROUPS`,
    docs/semantics.md, "Device compatibility groups (KEP-5963)"; each names its pool)."""
    sets = sorted(
        {
            cset
            for a in problem.alternatives
            for c in a.candidates
            for cset, _ in problem.devices[c.device].compat
        }
    )
    return tuple(Reason.of(Kind.COMPAT_GROUPS, driver=d, pool=p, set=s) for d, p, s in sets)


def _without_compat(problem: Problem) -> Problem:
    """The problem without KEP-5963: does the claim fit but for the compatibility groups?"""
    devices = tuple(replace(d, compat=()) if d.compat else d for d in problem.devices)
    return replace(problem, devices=devices, compat_baseline={})


def _constraint_words(problem: Problem, c: int) -> Reason:
    """The constraint `c` as a fact (`Kind.ATTRIBUTE_RULE`)."""
    con = problem.constraints[c]
    return Reason.of(
        Kind.ATTRIBUTE_RULE, rule=con.kind, field=KINDS[con.kind].wire_field, attribute=con.attribute
    )
