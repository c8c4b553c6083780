"""The one place a `Reason` becomes words (`say`).

Why one module: the same fact was worded in several places, and the seams showed — a prefix
said twice (`request gpu: gpu:`, `not placed: not placed`), a placeholder left in. Every kind's
sentence is here, once, and its callers choose only whether the node is named (`where`: a line
that already names its node, or groups nodes, leaves it out).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from . import Fact, Kind, Reason

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


def _node(r: Reason, where: bool) -> str:
    """The node a refusal is about: `node NAME`, or `the node` when the line names it already
    or groups nodes (`where=False`)."""
    return f"node {r.text('node')}" if where else "the node"


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


def _crowded(r: Reason) -> str:
    """`no node fits the pod (0 of N nodes): fits on a alone, but ... : on a, ...; the other
    nodes' words`, the claim refs put in."""
    total, fitting = r.fact("total"), r.fact("fitting")
    line = no_node_head(total if isinstance(total, int) else 0) + crowd_line(
        r.texts("fits"), fitting if isinstance(fitting, int) else 0, r.texts("rooms"), r.text("relation")
    )
    return with_refs("; ".join([line, *r.texts("others")]), list(r.texts("claims")))


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
    if r.fact("held") is not None:  # a pod of the group no plan places (`Gang.held`)
        more = r.fact("held_more")
        others = f" (and {more} more of its pods)" if isinstance(more, int) and more > 0 else ""
        text += f"; its pod {r.text('held')} is left pending{others}: {r.text('held_why')}"
    return text


WITH_PLAN = "with the plan's other pods (what `dra-solver plan` does with this input):"
"""The head of `explain --with-plan`'s lines on the plan (`Kind.PLAN_COUNT`, `Kind.PLAN_FAILS`)."""

UNDECIDED = "CP-SAT neither found an allocation nor proved there is none within its budget"


def gave_up(r: Reason) -> str:
    """That the reference search gave up (after `steps`, the explain's bound)."""
    steps = r.fact("steps")
    after = f"after {steps:,} steps" if isinstance(steps, int) else "at its step limit"
    return f"the reference search (upstream's first fit) gave up {after}"


def _invalid_cause(r: Reason) -> str:
    pools = r.texts("pools")
    if r.fact("unknown"):  # left out for a problem (`planning.leftpools`): its devices unread
        its = "its devices are" if len(pools) == 1 else "their devices are"
        return "; ".join(pools) + f"; {its} not read, and with them the claims might fit"
    skipped = "upstream skips the pool" if len(pools) == 1 else "upstream skips these pools"
    its = "its" if len(pools) == 1 else "their"
    return "; ".join(pools) + f"; {skipped}, and with {its} devices the claims would fit"


def _funnel(r: Reason) -> str:
    """`claim c: request r: needs N device(s); K on the node; ...; U usable`: how a request's
    devices on a node narrow down, step by step (`Kind.FUNNEL`)."""
    on_node = f"{r.text('devices')} on the node"
    if r.fact("skipped"):  # not candidates at all: say so rather than let "0 on the node" mislead
        on_node += f" outside invalid pools ({r.text('skipped')} in them)"
    parts = [f"needs {r.text('count')} device(s); {on_node}"]
    parts += [say(s) for s in r.parts("selectors")]
    parts += [f"{n} {why}" for why, n in r.counts("rejected")]
    parts += [say(c) for c in r.parts("capacity")]
    if r.fact("held"):
        parts.append(
            f"{r.text('held')} of the matching devices are held (by {', '.join(r.texts('holders'))})"
        )
    parts.append(f"{r.text('usable')} usable")
    return f"claim {r.subject}: request {r.text('request')}: " + "; ".join(parts)


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
    Kind.NO_NODE: lambda r, w: _no_node(r),
    Kind.CROWDED: lambda r, w: _crowded(r),
    Kind.NODE_CONSTRAINTS: lambda r, w: (
        "node constraints: " + "; ".join(say(p, where=w) for p in r.parts("parts"))
    ),
    Kind.NODE_RESOURCES: lambda r, w: f"node resources: {r.text('short')}",
    Kind.NOT_DECIDED: lambda r, w: f"not decided: {gave_up(r)}, and {UNDECIDED}",
    Kind.SEARCH_GAVE_UP: lambda r, w: f"{gave_up(r)}; CP-SAT finds an allocation",
    Kind.INVALID_CAUSE: lambda r, w: _invalid_cause(r),
    Kind.FUNNEL: lambda r, w: _funnel(r),
    Kind.SELECTOR: lambda r, w: (
        f"{r.text('label')} `{r.text('expression')}` rejects {r.text('rejects')} "
        f"(e.g. {r.text('example')}), {r.text('left')} left"
    ),
    Kind.CAPACITY_LEFT: lambda r, w: (
        f"needs {r.text('needs')} {r.text('name')}, {r.text('left')} left on {r.text('device')}"
    ),
    Kind.ALONE: lambda r, w: (
        f"claim {r.subject} alone: "
        + (
            "fits"
            if r.fact("fits") == 1
            else "does not fit (its own blocker)"
            if r.fact("fits") == 0
            else f"not decided ({gave_up(r)}, and {UNDECIDED})"
        )
    ),
    Kind.BLOCKING_SET: lambda r, w: "minimal blocking set: " + " + ".join(say(c) for c in r.parts("claims")),
    Kind.BLOCKING_CLAIM: lambda r, w: (
        f"claim {r.subject}"
        if not r.parts("rules")
        else f"claim {r.subject}: "
        + " and ".join([*(["its requests"] if r.fact("requests") else []), *map(say, r.parts("rules"))])
    ),
    Kind.RULE: lambda r, w: f"{r.text('rule')} {r.text('attribute')} (values available: {r.text('values')})",
    Kind.PLAN_PLACES: lambda r, w: f"{r.subject}: the plan places it on {r.text('node')}",
    Kind.PLAN_LEAVES: lambda r, w: (
        f"{r.subject}: the plan does not place it: "
        + ("; ".join(say(p) for p in r.parts("parts")) or r.text("words"))
    ),
    Kind.PLAN_FAILS: lambda r, w: f"the plan fails: {r.text('why')}",
    Kind.PLAN_COUNT: lambda r, w: (
        f"{WITH_PLAN} the plan places {r.text('placed')} of {r.text('pods')} pending pods"
    ),
    Kind.FEWER_DEVICES: lambda r, w: (
        f"fewer devices: request {r.text('request')} of claim {r.subject} with count {r.text('count')}"
    ),
    Kind.RELEASED: lambda r, w: f"claim {r.subject} released",
    Kind.BOUND: lambda r, w: f"the pod is bound to node {r.text('bound')} (spec.nodeName)",
    Kind.NO_NODE_OBJECT: lambda r, w: (
        f"{_node(r, w)} has no Node object in the input, so its labels are unknown, and the pod "
        "selects nodes by label (nodeSelector / node affinity)"
    ),
    Kind.NODE_SELECTOR: lambda r, w: (
        f"{_node(r, w)} does not match the pod's nodeSelector {r.text('key')}={r.text('value')}"
    ),
    Kind.NODE_AFFINITY: lambda r, w: f"{_node(r, w)} does not match the pod's required node affinity",
    Kind.UNSCHEDULABLE: lambda r, w: f"{_node(r, w)} is unschedulable (spec.unschedulable)",
    Kind.TAINT: lambda r, w: (
        f"{_node(r, w)} has the taint {r.text('taint')}:{r.text('effect')}, which the pod does not tolerate"
    ),
    Kind.CLAIM_ELSEWHERE: lambda r, w: (
        f"claim {r.subject} of {r.text('pod')} is allocated with a node selector excluding "
        + (_node(r, w) if r.fact("node") is not None else "no node")
    ),
    Kind.MEMBER: lambda r, w: f"{r.subject}: " + "; ".join(say(p, where=w) for p in r.parts("parts")),
    Kind.NO_TOPOLOGY: lambda r, w: (
        f"{_node(r, w)} is in no topology domain of PodGroup {r.text('gang')} "
        f"(label {r.text('label')}{'; ' + r.text('held') if r.fact('held') else ''})"
    ),
    Kind.OUTSIDE_DOMAIN: lambda r, w: (
        f"{_node(r, w)} is not in {r.text('label')}={r.text('value')}, "
        f"the domain tried for PodGroup {r.text('gang')}"
    ),
    Kind.HELD_HERE: lambda r, w: "held",
    Kind.RUNS_ELSEWHERE: lambda r, w: "running elsewhere",
    Kind.MOVES_FROM: lambda r, w: "the node it moves from",
    Kind.NETWORK_ONLY: lambda r, w: "uses network-attached devices: runs where its pool is seen",
    Kind.NODE_ONLY: lambda r, w: "uses no network-attached device",
    Kind.NODE_SHORT: lambda r, w: r.text("short"),
    Kind.POOL_UNSEEN: lambda r, w: "no node it may use sees this pool",
    Kind.POOL_OTHERS: lambda r, w: "may not be placed",
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


# --- a pod's reasons over many nodes (first fit, crowding) ---------------------------------

DETAIL_NODES = 4
"""Up to this many candidate nodes, an unplaced pod's reason names every node's reason; above
it, the reason is one line of counts by reason (the per-node detail is `PodPlan.node_reasons`)."""


_CLAIM = "\x00claim{}\x00"
_NODE = "\x00node\x00"
"""Placeholders for names in a reason computed once per (shape, node, version)."""


def why_not(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str] | None = None) -> str:
    """One line for a pod that fits nowhere (`nowhere`'s facts, worded as `Kind.NO_NODE`)."""
    return say(Reason(Kind.NO_NODE, "", nowhere(reasons, templates)))


def nowhere(
    reasons: Sequence[tuple[str | None, str]], templates: Sequence[str] | None = None
) -> tuple[tuple[str, Fact], ...]:
    """The facts of `Kind.NO_NODE` (but the claim refs) for a pod that fits nowhere: how many
    nodes (`total`), and `others`, the node's reason when there is one node, every node's
    reason when there are few (`listed`), else (`grouped`) the two most common reasons with
    their node counts (`reason_groups`). `templates`: the reasons said of any node,
    `say(where=False)`, so that equal reasons group, and a node listed by name is not named
    again in its words."""
    if len(reasons) == 1:
        return (("total", 1), ("others", (reasons[0][1],)))
    if len(reasons) <= DETAIL_NODES or templates is None:
        return (("total", len(reasons)), ("others", tuple(listed(reasons, templates))))
    return (("total", len(reasons)), ("grouped", 1), ("others", tuple(reason_groups(reasons, templates))))


def _no_node(r: Reason) -> str:
    """`nowhere`'s facts in a line, the claim refs put in: the one node's words, `no node fits
    the pod: n1: ...; n2: ...`, or `no node fits the pod (0 of N nodes): K nodes: ...`."""
    total, others = r.fact("total"), "; ".join(r.texts("others"))
    if total == 1:
        line = others
    elif r.fact("grouped"):
        line = no_node_head(total if isinstance(total, int) else 0) + others
    else:
        line = "no node fits the pod: " + others
    return with_refs(line, list(r.texts("claims")))


def listed(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str] | None) -> list[str]:
    """Each node's reason after its name (`node_said`): its words said of any node where they
    are known (`templates`, in the order of `reasons`), so that the node is named once (was
    `n1: node n1 has the taint ...`)."""
    if templates is None:
        return [node_said(n, r) for n, r in reasons]
    return [node_said(n, t) for (n, _), t in zip(reasons, templates, strict=True)]


def node_said(node: str | None, text: str) -> str:
    """`node: text` for a line that lists nodes, the node named once: its text's own `(on node
    n1)` left out (was `n1: claim c: ... (on node n1)`)."""
    return f"{node}: {text.replace(f' (on node {node})', '')}"


def reason_groups(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str]) -> list[str]:
    """The parts of `why_not`'s line over many nodes: the two most common reasons with their
    node counts, then how many nodes are left for how many other reasons."""
    return counted_groups(template_counts(templates), len(reasons))


def template_counts(templates: Iterable[str]) -> dict[str, int]:
    """Each distinct template with the number of nodes that have it, in order of first
    appearance: all that `reason_groups` reads of the node-ordered list (`counted_groups`)."""
    counts: dict[str, int] = {}
    for text in templates:
        counts[text] = counts.get(text, 0) + 1
    return counts


def counted_groups(counts: Mapping[str, int], total: int) -> list[str]:
    """`reason_groups` from the distinct templates and their node counts (`template_counts`)
    over `total` nodes. Why: a group's size, its first text and its distinct texts in order of
    first appearance are all the wording uses, so pods that share the templates but not the
    claim names put their names into the few distinct texts, not into every node's."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for text, n in counts.items():  # reasons that differ only in numbers group, numbers as ranges
        groups.setdefault(_numberless(text), []).append((text, n))
    sized = [(sum(n for _, n in members), members) for members in groups.values()]
    top = sorted(sized, key=lambda g: g[0], reverse=True)[:2]  # stable: ties in node order
    parts = [
        f"{size} node{'s' if size != 1 else ''}: {_ranges([t for t, _ in members])}" for size, members in top
    ]
    rest = total - sum(size for size, _ in top)
    if rest:
        others = len(groups) - len(top)
        parts.append(f"{rest} more node{'s' if rest != 1 else ''} for {others} other reason(s)")
    return parts


_TOKENS = re.compile(r"\x00claim\d+\x00|\d+")
"""A claim placeholder (`_CLAIM`, kept whole: its index names a claim, it is no count) or a
number. Why: two claims' reasons that differ only in their numbers are different reasons;
grouped as one, they printed the placeholder itself and mixed the claims' counts."""


def _is_number(token: str) -> bool:
    return not token.startswith("\x00")


@lru_cache(maxsize=1 << 16)
def _numberless(text: str) -> str:
    """`text` with its numbers as `#` (claim placeholders kept). Cached: the same reason text
    recurs on every node of a kind, for every pod of a shape (first fit words a full cluster
    pod after pod)."""
    return _TOKENS.sub(lambda m: "#" if _is_number(m[0]) else m[0], text)


@lru_cache(maxsize=1 << 16)
def _numbers(text: str) -> tuple[str, ...]:
    """The numbers in `text`, in order, claim placeholders left out (cached as `_numberless`)."""
    return tuple(t for t in _TOKENS.findall(text) if _is_number(t))


def _ranges(texts: list[str]) -> str:
    """Texts equal but for their numbers, as one text: a number that varies becomes `low-high`."""
    numbers = list(zip(*(_numbers(t) for t in dict.fromkeys(texts)), strict=True))
    out, at, i = [], 0, 0
    for m in _TOKENS.finditer(texts[0]):
        out.append(texts[0][at : m.start()])
        at = m.end()
        if not _is_number(m[0]):
            out.append(m[0])
            continue
        values = numbers[i]
        i += 1
        low, high = min(values, key=int), max(values, key=int)
        out.append(values[0] if len(set(values)) == 1 else f"{int(low)}-{int(high)}")
    out.append(texts[0][at:])
    return "".join(out)


def with_refs(text: str, refs: list[str]) -> str:
    for i, ref in enumerate(refs):
        text = text.replace("/" + _CLAIM.format(i), ref)
    return text


# --- the crowding's words (`planners.crowding`) ------------------------------------------------

PRIORITY = {
    "higher": "they have a higher priority",
    "queue": "first fit: the same or a higher priority, earlier in the queue",
    "before": "first fit: placed before its turn",
    "most": "CP-SAT places the most pods, by priority, that fit together",
}
"""Why the plan placed the pods that take a pod's room rather than it, by relation."""


def no_node_head(total: int) -> str:
    """The head of a line over more than one node."""
    return f"no node fits the pod (0 of {total} nodes): " if total > 1 else ""


def some_named(names: Sequence[str], most: int) -> str:
    """`names`, at most `most` of them named (then "and K more")."""
    if len(names) > most:
        return ", ".join(names[:most]) + f" and {len(names) - most} more"
    return ", ".join(names)


def devices_taken(takers: str) -> str:
    return f"devices it could use go to {takers}"


def node_short(takers: str | None, short: str) -> str:
    """The node resources a node lacks after the plan, beside the pods named (`takers`)."""
    beside = f"beside {takers} " if takers else "after the plan "
    return f"{beside}the node has {short}"


def room(parts: Sequence[str]) -> str:
    """What the plan's pods take on a node where the pod fits alone (`devices_taken`,
    `node_short`), or that the search found no way there."""
    if not parts:
        return "it fits alone, but the search did not find a way beside this plan's pods"
    return ", and ".join(parts)


def crowd_line(fits: Sequence[str], fitting: int, rooms: Sequence[str], relation: str) -> str:
    """The part of a pod's line for the `fitting` nodes where only the plan's other pods stand
    in the way: `fits on a and b alone, but other pods of this plan take the room there (why
    them): on a, ...` (`fits`: the first of them, at least `DETAIL_NODES`; `rooms`: each
    one's `room`, in the order of `fits`)."""
    if fitting > DETAIL_NODES:
        where = ", ".join(fits[:DETAIL_NODES]) + f" and {fitting - DETAIL_NODES} more"
    else:
        where = (
            fits[0] if len(fits) == 1 else ", ".join(fits[:-1]) + " and " + fits[-1] if fits else "some nodes"
        )
    detail = "; ".join(f"on {n}, {r}" for n, r in zip(fits[:DETAIL_NODES], rooms, strict=False))
    why = f" ({PRIORITY[relation]})" if relation in PRIORITY else ""
    return f"fits on {where} alone, but other pods of this plan take the room there{why}: {detail}"


__all__ = [
    "DETAIL_NODES",
    "UNDECIDED",
    "WITH_PLAN",
    "gave_up",
    "INTERRUPTED",
    "LEFT_OUT",
    "UNWORDED",
    "PRIORITY",
    "counted_groups",
    "crowd_line",
    "devices_taken",
    "no_node_head",
    "node_short",
    "room",
    "some_named",
    "listed",
    "node_said",
    "reason_groups",
    "say",
    "template_counts",
    "nowhere",
    "why_not",
    "with_refs",
]
