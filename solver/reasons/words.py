"""The one place a `Reason` becomes words (`say`).

Why one module: the same fact was worded in several places, and the seams showed — a prefix
said twice (`request gpu: gpu:`, `not placed: not placed`), a placeholder left in. Every kind's
sentence is here, once, and its callers choose only whether the node is named (`where`: a line
that already names its node, or groups nodes, leaves it out).
"""

from __future__ import annotations

from collections.abc import Callable

from . import Kind, Reason

INTERRUPTED = "not tried: the run was stopped (Ctrl-C, SIGTERM or --timeout) before this pod's turn"
UNWORDED = "the run was stopped (Ctrl-C, SIGTERM or --timeout) before its reason was worded"
LEFT_OUT = "left out so that more (or higher-priority) pods fit"


def say(reason: Reason, *, where: bool = True) -> str:
    """`reason` in words; `where=False` leaves out the node it was found on (not the pools
    that were not searched there)."""
    return _SAY[reason.kind](reason, where)


def _where(r: Reason, where: bool) -> str:
    """On which node, and which pools were not searched there ('' without either)."""
    node = r.fact("node")
    parts = []
    if where:
        parts.append(f"on node {node}" if node else "without a node (allNodes devices only)")
    skipped = r.texts("skipped")
    if skipped:
        parts.append("not searched: " + "; ".join(skipped))
    return "; ".join(parts)


def _paren(r: Reason, where: bool) -> str:
    text = _where(r, where)
    return f" ({text})" if text else ""


def _inline(r: Reason, where: bool) -> str:
    text = _where(r, where)
    return f" {text}" if text else ""


def _request(r: Reason, where: bool) -> str:
    request = r.text("request")
    parts = []
    for part in r.parts("parts"):
        words = say(part)
        # an alternative named as its request (no subrequests) is not named twice
        parts.append(words if part.subject == request else f"{part.subject}: {words}")
    return f"claim {r.subject}: request {request}: " + "; ".join(parts) + _paren(r, where)


def _short(r: Reason, where: bool) -> str:
    count, matching, usable, candidates = (r.fact(k) for k in ("count", "matching", "usable", "candidates"))
    rejected = r.counts("rejected")
    text = f"needs {count} device(s), {matching} match the selectors"
    if rejected:
        text += "; of those " + ", ".join(f"{n} {why}" for why, n in rejected)
    if usable != candidates:  # "remaining" only when some were filtered out
        among = f"the remaining {candidates}" if rejected else f"{candidates}"
        text += f"; {usable} of {among} {'is' if usable == 1 else 'are'} free"
    return text


def _no_domain(r: Reason, where: bool) -> str:
    gangs, tried = r.text("gangs"), r.fact("tried")
    if not tried:
        return f"{gangs} not placed: no node of the plan is in one of its topology domains"
    text = (
        f"{gangs} not placed: no single topology domain fits {r.text('goal')} "
        f"({tried} tried; in {r.text('closest')}, the closest, {r.fact('score')} of its pods fit)"
    )
    if r.fact("blocker") is not None:
        text += f"; there {r.text('blocker')} did not fit: {r.text('blocked')}"
    return text


def _gang_short(r: Reason, where: bool) -> str:
    if r.fact("basic"):
        text = f"PodGroup {r.subject} not placed: none of its pods fit"
    else:
        placed, goal = r.fact("placed"), r.text("goal")
        text = f"PodGroup {r.subject} not placed: {placed} of its pods fit, fewer than {goal}"
    if r.fact("domain"):
        text += f" in {r.text('domain')}"
    if r.fact("blocker") is not None:
        text += f"; {r.text('blocker')} did not fit: {r.text('blocked')}"
    if r.fact("own") is not None:
        text += f"; {r.text('own')}"
    return text


_SAY: dict[Kind, Callable[[Reason, bool], str]] = {
    Kind.INTERRUPTED: lambda r, w: INTERRUPTED,
    Kind.UNWORDED: lambda r, w: UNWORDED,
    Kind.LEFT_OUT: lambda r, w: LEFT_OUT,
    Kind.DROPPED: lambda r, w: (
        f"the plan model put it on node {r.text('node')}, but the exact device allocation there "
        "found no devices for it beside that node's other pods"
    ),
    Kind.LEFT_FOR_WEIGHT: lambda r, w: (
        f"left out on {r.text('node')} for pods of more weight (the update's local re-solve)"
    ),
    Kind.REQUEST: _request,
    Kind.ALL_NONE: lambda r, w: "no device matches (allocationMode All needs at least one)",
    Kind.ALL_BLOCKED: lambda r, w: f"allocationMode All, but {r.text('why')}",
    Kind.SHORT: _short,
    Kind.RUNS_OUT: lambda r, w: (
        f"claim {r.subject}: its requests cannot all be served at once{_inline(r, w)} "
        "(devices, capacity or shared counters run out)"
    ),
    Kind.CONSTRAINTS: lambda r, w: (
        f"claim {r.subject}: constraints cannot be satisfied{_inline(r, w)}: "
        + "; ".join(r.texts("constraints"))
    ),
    Kind.NOT_TOGETHER: lambda r, w: (
        f"claims {', '.join(r.texts('claims'))} can each be allocated alone but not together{_inline(r, w)}"
    ),
    Kind.CANNOT: lambda r, w: f"claim {r.subject} cannot be allocated{_inline(r, w)}",
    Kind.NOTHING: lambda r, w: "nothing to allocate",
    Kind.GANG_SHORT: _gang_short,
    Kind.NO_DOMAIN: _no_domain,
    Kind.PREEMPT_NEVER: lambda r, w: (
        "no node has room for it (plain claims never preempt pods)"
        if r.fact("plain")
        else "its preemptionPolicy is Never, so it may not evict other pods, and no node has room for it"
    ),
    Kind.PREEMPT_NO_VICTIM: lambda r, w: (
        "no node it may use has room for it, and no running pod there has a lower priority to evict"
    ),
    Kind.PREEMPT_NOT_ENOUGH: lambda r, w: (
        "evicting every lower-priority pod on the nodes it may use would not make room for it "
        "beside the plan's other pods (or would cost a higher-priority pending pod its place)"
    ),
}

__all__ = ["INTERRUPTED", "LEFT_OUT", "UNWORDED", "say"]
