"""The one place a `Reason` becomes words (`say`).

Why one module: the same fact was worded in several places, and the seams showed — a prefix
said twice (`request gpu: gpu:`, `not placed: not placed`), a placeholder left in. Every kind's
sentence is here, once, and its callers choose only whether the node is named (`where`: a line
that already names its node, or groups nodes, leaves it out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import RENAMED, Fact, Kind, Reason, names_places

INTERRUPTED = "not tried: the run was stopped (Ctrl-C, SIGTERM or --timeout) before this pod's turn"
UNWORDED = "the run was stopped (Ctrl-C, SIGTERM or --timeout) before its reason was worded"
LEFT_OUT = "left out so that more (or higher-priority) pods fit"


def say(reason: Reason, *, where: bool = True) -> str:
    """`reason` in words; `where=False` leaves out the node it was found on (not the pools
    that were not searched there)."""
    return _SAY[reason.kind](reason, where)


_PLACED = frozenset({Kind.REQUEST, Kind.RUNS_OUT, Kind.CONSTRAINTS, Kind.NOT_TOGETHER, Kind.CANNOT})
"""The kinds whose `node` fact says where a claim search ran (`_where`): None is a search
without a node (allNodes devices only), which their words say even of any node."""


@lru_cache(maxsize=1 << 16)
def _said(reason: Reason) -> str:
    return say(reason)


def node_words(node: str | None, reason: Reason) -> str:
    """`reason` in words as said of `node` (its placeholder `NODE` replaced by the name).
    Cached per reason: the nodes of a kind share one (first fit, crowding)."""
    return _said(reason).replace(NODE, str(node))


@lru_cache(maxsize=1 << 16)
def anywhere(reason: Reason) -> str:
    """`reason` said of any node: without the node it was found on, so that nodes refused
    alike say it alike (a search without a node still says so)."""
    return say(reason, where=reason.kind in _PLACED and reason.fact("node") is None)


def _where(r: Reason, where: bool) -> str:
    """On which node, and which pools were not searched there ('' without either)."""
    node = r.fact("node")
    parts = []
    if where:
        parts.append(f"on node {node}" if node else "without a node (allNodes devices only)")
    skipped = r.parts("skipped")
    if skipped:
        parts.append("not searched: " + "; ".join(map(say, skipped)))
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
    rejected = r.counted("rejected")
    text = f"needs {count} device(s), {matching} match the selectors"
    if rejected:
        text += "; of those " + ", ".join(f"{n} {say(why)}" for why, n in rejected)
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
    rooms = [say(room) for room in r.parts("rooms")]
    line = no_node_head(total if isinstance(total, int) else 0) + crowd_line(
        r.texts("fits"), fitting if isinstance(fitting, int) else 0, rooms, r.text("relation")
    )
    over = r.part("others")
    return with_refs("; ".join([line, *([say(over)] if over is not None else [])]), list(r.texts("claims")))


def _gang_short(r: Reason, where: bool) -> str:
    if r.fact("basic"):
        text = f"PodGroup {r.subject} not placed: none of its pods fit"
    else:
        placed, goal = r.fact("placed"), r.text("goal")
        text = f"PodGroup {r.subject} not placed: {placed} of its pods fit, fewer than {goal}"
        if r.fact("size") is not None:  # the group has too few pods for any plan (`Gang.size`)
            size = r.fact("size")
            text += f" (the input has only {size} pod{'' if size == 1 else 's'} of the group)"
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


def _part(r: Reason, name: str) -> str:
    """The fact `name` (a reason) in words ('' when it is absent)."""
    part = r.part(name)
    return "" if part is None else say(part)


def _pool(r: Reason) -> str:
    return f"{r.text('driver')}/{r.text('pool')}"


def _device(r: Reason) -> str:
    return f"{_pool(r)}/{r.text('device')}"


def _incomplete(r: Reason, where: bool) -> str:
    count = r.text("count")
    text = (
        f"pool {_pool(r)} generation {r.text('generation')} is incomplete: {r.text('published')} of its "
        f"{count} slices are published (resourceSliceCount {count})"
    )
    ignored = r.texts("ignored")
    if ignored:
        text += (
            f"; ignored: {', '.join(ignored)} (compatibilityGroups need feature gate "
            "DRADeviceCompatibilityGroups, --feature-gates DRADeviceCompatibilityGroups=true)"
        )
    return text


def _needed(r: Reason) -> str:
    """What a request consumes of a capacity (`Kind.TOO_SMALL`)."""
    if r.fact("asked") is None:
        return f"the {r.text('consumed')} its requestPolicy consumes by default"
    rounded = f" (rounded up to {r.text('consumed')} by its requestPolicy)" if r.fact("rounded") else ""
    return f"the {r.text('asked')} asked{rounded}"


def _taint(shown: str, effect: str) -> str:
    """`key=value:Effect` as kubectl writes a taint; a taint without an effect (which the API
    server refuses, docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)")
    said as such, not as `key:`."""
    return f"{shown}:{effect}" if effect else f"{shown} (without an effect, counted as blocking)"


def _device_taint(r: Reason, where: bool) -> str:
    value = f"={r.text('value')}" if r.fact("value") else ""
    source = f" (DeviceTaintRule {r.text('rule')})" if r.fact("rule") else ""
    taint = _taint(f"{r.text('key')}{value}", r.text("effect")) + source
    return f"have the taint {taint}, which the request does not tolerate"


MUST = {"match": "must all have the same value of", "distinct": "must all have different values of"}
"""How a claim constraint's kind (`Kind.ATTRIBUTE_RULE`'s `rule`) says what it asks of the devices."""


def in_order(rejected: Mapping[Reason, int]) -> tuple[tuple[Reason, int], ...]:
    """A request's rejections (why, how many) in the order they are listed: by their words,
    as they always were (one order for every node and every run)."""
    return tuple(sorted(rejected.items(), key=lambda kv: _said(kv[0])))


WITH_PLAN = "with the plan's other pods (what `dra-solver plan` does with this input):"
"""The head of `explain --with-plan`'s lines on the plan (`Kind.PLAN_COUNT`, `Kind.PLAN_FAILS`)."""

UNDECIDED = "CP-SAT neither found an allocation nor proved there is none within its budget"


def gave_up(r: Reason) -> str:
    """That the reference search gave up (after `steps`, the explain's bound)."""
    steps = r.fact("steps")
    after = f"after {steps:,} steps" if isinstance(steps, int) else "at its step limit"
    return f"the reference search (upstream's first fit) gave up {after}"


def _invalid_cause(r: Reason) -> str:
    pools = [say(p) for p in r.parts("pools")]
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
    parts += [f"{n} {say(why)}" for why, n in r.counted("rejected")]
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
    Kind.ALL_BLOCKED: lambda r, w: f"allocationMode All, but {_part(r, 'why')}",
    Kind.NODE_NAMED: lambda r, w: _part(r, "why"),
    Kind.SHORT: _short,
    Kind.RUNS_OUT: lambda r, w: (
        f"claim {r.subject}: its requests cannot all be served at once{_inline(r, w)} "
        "(devices, capacity or shared counters run out)"
    ),
    Kind.CONSTRAINTS: lambda r, w: (
        f"claim {r.subject}: constraints cannot be satisfied{_inline(r, w)}: "
        + "; ".join(map(say, r.parts("constraints")))
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
    Kind.NODE_RESOURCES: lambda r, w: f"node resources: {insufficient(r.texts('short'))}",
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
        f"{_node(r, w)} has the taint {_taint(r.text('taint'), r.text('effect'))}, which the pod "
        "does not tolerate"
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
    Kind.NODE_SHORT: lambda r, w: insufficient(r.texts("short")),
    Kind.OVER_NODES: lambda r, w: _over_nodes(r),
    Kind.TAKEN: lambda r, w: _taken(r),
    Kind.WITH_CLAIMS: lambda r, w: with_refs(
        say(r.part("why") or Reason(Kind.NOTHING)) if w else anywhere(r.part("why") or Reason(Kind.NOTHING)),
        list(r.texts("claims")),
    ),
    Kind.INVALID_POOLS: lambda r, w: (
        "invalid resource pools were encountered: " + "; ".join(map(say, r.parts("pools")))
    ),
    Kind.SEARCH_ABORTED: lambda r, w: (
        f"filter operation aborted: the search exceeded {r.text('steps')} steps "
        "(upstream would hit its filter timeout)"
    ),
    Kind.NOT_READY: lambda r, w: (
        f"claim {r.subject}: request {r.text('request')}: asks for all devices, but " + _part(r, "why")
    ),
    Kind.POOL_UNSEEN: lambda r, w: "no node it may use sees this pool",
    Kind.POOL_INVALID: lambda r, w: (
        f"pool {_pool(r)} generation {r.text('generation')} is invalid: " + _part(r, "why")
    ),
    Kind.POOL_INCOMPLETE: _incomplete,
    Kind.POOL_UPDATING: lambda r, w: f"resource pool {_pool(r)} is currently being updated",
    Kind.POOL_NOT_VALID: lambda r, w: f"resource pool {_pool(r)} is currently invalid",
    Kind.LISTED_TWICE: lambda r, w: (
        f"{r.text('what')} {r.text('name')} listed by slices "
        + (
            f"{r.text('first')} (twice)"
            if r.fact("first") == r.fact("second")
            else f"{r.text('first')} and {r.text('second')}"
        )
    ),
    Kind.UNKNOWN_COUNTER_SET: lambda r, w: (
        f"device {r.text('device')} consumes unknown counter set {r.text('set')}"
    ),
    Kind.UNKNOWN_COUNTER: lambda r, w: (
        f"device {r.text('device')} consumes unknown counter {r.text('counter')} of set {r.text('set')}"
    ),
    Kind.SLICES_LEFT_OUT: lambda r, w: (
        "; ".join(map(say, r.parts("problems"))) or "a slice of it was left out for a problem"
    ),
    Kind.SLICE_NOT_VALID: lambda r, w: f"ResourceSlice {r.text('slice')} is not valid: {r.text('problems')}",
    Kind.SLICE_UNREAD: lambda r, w: f"ResourceSlice {r.text('slice')} could not be read ({r.text('error')})",
    Kind.SLICE_WITH_POOL: lambda r, w: f"ResourceSlice {r.text('slice')} is left out with its pool",
    Kind.LACKS_CAPACITY: lambda r, w: f"lack capacity {', '.join(r.texts('names'))}",
    Kind.REFUSES_CAPACITY: lambda r, w: "refuse the capacity request (requestPolicy)",
    Kind.TOO_SMALL: lambda r, w: f"have {r.text('name')} {r.text('total')}, less than {_needed(r)}",
    Kind.NO_CAPACITY_LEFT: lambda r, w: "have not enough capacity left",
    Kind.COUNTERS_OFF: lambda r, w: "consume counters but DRAPartitionableDevices is disabled",
    Kind.SKIP_OFF: lambda r, w: (
        "come from a skipNodeOperations slice but DRAOptionalNodePreparation is disabled"
    ),
    Kind.SKIP_UNDECLARED: lambda r, w: (
        "come from a skipNodeOperations slice; "
        + ("the node" if r.fact("node") == NODE else f"node {r.text('node')}")
        + f" does not declare {r.text('feature')}"
    ),
    Kind.DEVICE_TAINT: _device_taint,
    Kind.DEVICE_BUSY: lambda r, w: f"device {_device(r)} is already allocated",
    Kind.DEVICE_FULL: lambda r, w: f"device {_device(r)}: has not enough capacity left",
    Kind.DEVICE_REFUSED: lambda r, w: f"device {_device(r)}: {_part(r, 'why')}",
    Kind.ATTRIBUTE_RULE: lambda r, w: (
        f"{r.text('field')} {r.text('attribute')} (the devices {MUST.get(r.text('rule'), 'must meet')} it)"
    ),
    Kind.COMPAT_GROUPS: lambda r, w: (
        f"compatibilityGroups on counter set {r.text('set')} of pool {_pool(r)} (its devices must share "
        'a group, docs/semantics.md, "Device compatibility groups (KEP-5963)")'
    ),
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
NODE = "\x00node\x00"
"""Placeholders for names in a reason found once per (shape, node, version) and shared: the
pod's i-th claim (its ref `/` + `_CLAIM.format(i)`, `with_refs` puts the pod's in) and the
node (`node_words` puts it in)."""


def of_node(fact: Reason, node: str | None) -> Reason:
    """`Kind.NODE_NAMED`: `fact` (a pool's or a device's, `why`) found on `node`, the node a
    fact. Its names are facts too (`reasons.RENAMED`: pools, slices), never searched for the
    node's name: nodes whose facts differ only in their names (a pool named after its node,
    or named otherwise) are one cause where nodes are grouped (`over_nodes`, `alike_names`),
    and a twin re-makes them with its own (`reasons.renamed`)."""
    return Reason(Kind.NODE_NAMED, "", (("why", fact), ("node", node)))


def claim_placeholder(index: int) -> str:
    """The name that stands for a pod's `index`-th claim in a shared reason (`with_refs`)."""
    return _CLAIM.format(index)


@lru_cache(maxsize=1 << 16)
def _alike_anywhere(reason: Reason) -> Reason:
    """`reason` as the key of its group over nodes: a refusal's node (a fact naming it) as the
    placeholder, and the names of the places it was found in (`RENAMED`: the node, pools,
    slices) as aliases in order of first appearance, so that nodes refused alike are one
    value: one invalid pool seen from many nodes, or each node's own pool alike, is one cause
    (said as the first node's, `_group_words`)."""
    if reason.kind not in _PLACED and reason.fact("node") is not None:
        facts = tuple((k, NODE if k == "node" else v) for k, v in reason.facts)
        reason = Reason(reason.kind, reason.subject, facts)
    return alike_names(reason)


def _aliased(reason: Reason, seen: dict[str, str]) -> Reason:
    """`reason` with its `RENAMED` facts' names as aliases (`seen`: name -> alias, shared by
    the reason's parts, so that a name said twice is one alias)."""
    names = dict(RENAMED.get(reason.kind, ()))

    def alias(v: Fact) -> Fact:
        if isinstance(v, str):
            return v if v == NODE else seen.setdefault(v, f"\x00name{len(seen)}\x00")
        if isinstance(v, tuple):
            return tuple(seen.setdefault(str(x), f"\x00name{len(seen)}\x00") for x in v)
        return v

    if names:
        reason = Reason(
            reason.kind, reason.subject, tuple((k, alias(v) if k in names else v) for k, v in reason.facts)
        )
    return reason.with_parts(lambda part: _aliased(part, seen))


def alike_said(reason: Reason) -> Reason:
    """`reason` as its words over nodes say it (`_unsaid`), without the node a fact was found
    on (`Kind.NODE_NAMED`: not said): two nodes' reasons equal so differ in nothing said."""
    if reason.kind is Kind.NODE_NAMED:
        return reason.without("node").with_parts(alike_said)
    return _unsaid(reason).with_parts(alike_said)


def alike_names(reason: Reason) -> Reason:
    """`reason` with the names of the places it was found in (`RENAMED`: the node, pools,
    slices) as aliases in order of first appearance: nodes whose reasons differ only in
    those names (each its own pool) give one value (`explain`'s groups, `over_nodes`)."""
    return _aliased(reason, {}) if names_places(reason) else reason


def _group_words(example: Reason, first: str, size: int, varied: bool) -> str:
    """The words of a group of `size` nodes refused alike, said of any node as on its
    `first` (`example`, that node's reason); when their names differ (`varied`: each its own
    pools and slices, `_alike_anywhere`), so said."""
    return anywhere(example) + (alike_note(first, size) if varied else "")


def alike_note(first: str | None, size: int) -> str:
    """What a group of `size` nodes worded as its `first` adds when the nodes' reasons are
    alike in their own names (a pool named after its node, each node's own): that the others'
    words differ in those ('' for one node)."""
    if size < 2:
        return ""
    other = "other" if size == 2 else f"other {size - 1}"
    return f" (as on {first}; on the {other} alike, in {'its' if size == 2 else 'their'} own names)"


def over_nodes(pairs: Sequence[tuple[str | None, Reason]], *, one: bool = True) -> Reason:
    """`Kind.OVER_NODES` of each node's reason (`pairs`, in node order): listed when there are
    at most `DETAIL_NODES` (`one`: a single node said with its name), else the distinct
    reasons said of any node with their node counts (grouped by value: `_alike_anywhere`),
    each with its first node (`firsts`), that node's reason (`examples`) and whether the
    group's names differ (`varied`)."""
    if one and len(pairs) == 1:
        node, why = pairs[0]
        return Reason(Kind.OVER_NODES, "", (("nodes", (str(node),)), ("whys", (why,)), ("one", 1)))
    if len(pairs) <= DETAIL_NODES:
        nodes = tuple(str(n) for n, _ in pairs)
        return Reason(Kind.OVER_NODES, "", (("nodes", nodes), ("whys", tuple(w for _, w in pairs))))
    counts: dict[Reason, int] = {}
    firsts: dict[Reason, tuple[str, Reason]] = {}
    varied: dict[Reason, int] = {}
    for node, why in pairs:
        key = _alike_anywhere(why)
        counts[key] = counts.get(key, 0) + 1
        first = firsts.setdefault(key, (str(node), why))
        if first[1] is not why and not varied.get(key) and alike_said(why) != alike_said(first[1]):
            varied[key] = 1
    return Reason(
        Kind.OVER_NODES,
        "",
        (
            ("whys", tuple(counts)),
            ("counts", tuple(counts.values())),
            ("total", len(pairs)),
            ("grouped", 1),
            ("firsts", tuple(n for n, _ in firsts.values())),
            ("examples", tuple(w for _, w in firsts.values())),
            ("varied", tuple(varied.get(key, 0) for key in counts)),
        ),
    )


def _over_nodes(r: Reason) -> str:
    whys = r.parts("whys")
    if r.fact("grouped"):
        total = r.fact("total")
        examples = r.parts("examples") or whys
        firsts = r.texts("firsts") or ("",) * len(whys)
        varied = r.ints("varied") or (0,) * len(whys)
        return "; ".join(
            _grouped(whys, r.ints("counts"), total if isinstance(total, int) else 0, examples, firsts, varied)
        )
    nodes = r.texts("nodes")
    if r.fact("one"):
        return node_words(nodes[0], whys[0])
    # nodes refused in the same words are one cause, named once with its nodes (was: the words
    # once per node); a few nodes' reasons alike in their own names are each said
    alike: dict[Reason, list[tuple[str, Reason]]] = {}
    for n, w in zip(nodes, whys, strict=True):
        alike.setdefault(alike_said(w), []).append((n, w))
    return "; ".join(f"{_and([n for n, _ in ms])}: {anywhere(ms[0][1])}" for ms in alike.values())


def _and(names: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@lru_cache(maxsize=1 << 12)
def _grouped(
    whys: tuple[Reason, ...],
    counts: tuple[int, ...],
    total: int,
    examples: tuple[Reason, ...],
    firsts: tuple[str, ...],
    varied: tuple[int, ...],
) -> tuple[str, ...]:
    """The parts of a line over many nodes (`counted_parts`) from the distinct reasons (their
    keys, `_alike_anywhere`), their node counts, and each one's first node, its reason there
    and whether the names differ: reasons equal but for their numbers are one group
    (`_numberless`: which facts are numbers, and which numbers change the sentence, is the
    kind's), said once as on its first node with the numbers that vary as ranges
    (`_ranged`)."""
    groups: dict[Reason, list[int]] = {}
    for i, why in enumerate(whys):
        groups.setdefault(_numberless(_unsaid(why)), []).append(i)
    sized = [
        _Group(
            sum(counts[i] for i in members),
            [_unsaid(examples[i]) for i in members],
            firsts[members[0]],
            any(varied[i] for i in members)
            or len({_numberless(alike_said(examples[i])) for i in members}) > 1,
        )
        for members in groups.values()
    ]
    return tuple(counted_parts(sized, total))


@dataclass(frozen=True)
class _Group:
    """A group of nodes over which a line counts a reason (`counted_parts`)."""

    size: int
    members: Sequence[Reason]
    """The group's distinct reasons, each as on its first node (numbers that vary: ranges)."""
    first: str
    varied: bool
    """Whether the nodes' reasons differ in names (their own pools and slices)."""


def counted_parts(groups: Sequence[_Group], total: int) -> list[str]:
    """A line over many nodes in parts, from its groups (in order of first appearance) over
    `total` nodes: the two largest with their node counts (ties in node order), said with
    their numbers as ranges, then how many nodes are left for how many other reasons."""
    top = sorted(groups, key=lambda g: g.size, reverse=True)[:2]  # stable: ties in node order
    parts = [f"{_nodes(g.size)}: {_group_words(_ranged(g.members), g.first, g.size, g.varied)}" for g in top]
    rest = total - sum(g.size for g in top)
    if rest:
        others = len(groups) - len(top)
        parts.append(f"{rest} more node{'s' if rest != 1 else ''} for {others} other reason(s)")
    return parts


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


NUMBERS: dict[Kind, tuple[str, ...]] = {
    Kind.SHORT: ("count", "matching", "usable", "candidates"),
    Kind.SEARCH_ABORTED: ("steps",),
    Kind.POOL_INVALID: ("generation",),
    Kind.POOL_INCOMPLETE: ("generation", "published", "count"),
}
"""Per kind, the facts that are numbers its sentence says as they are (a number that differs
between nodes is said as a range, `low-high`), besides the counts of a request's rejections
(`rejected`). Any other fact — a name, even one with digits in it — tells reasons apart."""

_SHAPE: dict[Kind, Callable[[Reason], Fact]] = {
    Kind.SHORT: lambda r: (int(r.fact("usable") == 1), int(r.fact("usable") == r.fact("candidates"))),
}
"""Per kind, the numbers' bearing on its sentence (`_short`: `1 ... is free` or `N ... are
free`; the free count said only when some candidates are taken): reasons whose numbers give
another sentence are other groups."""


def _unsaid(reason: Reason) -> Reason:
    """`reason` without what `anywhere` does not say: the node it was found on (the
    placeholder `NODE`), also of the reason a `Kind.WITH_CLAIMS` holds, and the node a
    skipNodeOperations slice's rejection names (said "the node" of a group of nodes)."""
    if reason.fact("node") is not None:
        reason = reason.about(reason.subject, node=NODE)
    return reason.with_parts(_unsaid if reason.kind is Kind.WITH_CLAIMS else _unsaid_part)


def _unsaid_part(reason: Reason) -> Reason:
    """A part of a reason over nodes: a skipNodeOperations slice's node as `NODE`."""
    if reason.kind is Kind.SKIP_UNDECLARED:
        return reason.about(reason.subject, node=NODE)
    return reason.with_parts(_unsaid_part)


def _numberless(reason: Reason) -> Reason:
    """`reason` as the key of its group by value (`_grouped`): its numbers (`NUMBERS`, and
    the counts of its rejections) as None, their bearing on the sentence (`_SHAPE`) kept."""
    numbers = NUMBERS.get(reason.kind, ())
    facts: list[tuple[str, Fact]] = [(k, None if k in numbers else _less(v)) for k, v in reason.facts]
    shape = _SHAPE.get(reason.kind)
    if shape is not None:
        facts.append(("shape", shape(reason)))
    return Reason(reason.kind, reason.subject, tuple(facts))


def _less(value: Fact) -> Fact:
    if isinstance(value, Reason):
        return _numberless(value)
    if isinstance(value, tuple) and value and isinstance(value[0], Reason | tuple):
        out: list[object] = []
        for v in value:
            if isinstance(v, Reason):
                out.append(_numberless(v))
            elif isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], Reason):
                out.append((_numberless(v[0]), None))  # a rejection: its count a number
            else:
                out.append(v)
        return tuple(out)  # type: ignore[return-value]  # the shape given, numbers as None
    return value


def _ranged(members: Sequence[Reason]) -> Reason:
    """Reasons of one group (`_numberless`), as one: the first, each of its numbers that
    differs between them as the range `low-high` (the others' facts are theirs)."""
    first = members[0]
    if len(members) == 1:
        return first
    facts = tuple((k, _range([m.facts[i][1] for m in members])) for i, (k, _) in enumerate(first.facts))
    return Reason(first.kind, first.subject, facts)


def _range(values: Sequence[object]) -> Fact:
    first = values[0]
    if isinstance(first, Reason):
        return _ranged([v for v in values if isinstance(v, Reason)])
    if isinstance(first, tuple):
        return tuple(_range([v[i] for v in values if isinstance(v, tuple)]) for i in range(len(first)))  # type: ignore[return-value]  # the shape given
    if isinstance(first, int) and not all(v == first for v in values):
        ints = [v for v in values if isinstance(v, int)]
        return f"{min(ints)}-{max(ints)}"
    return first  # type: ignore[return-value]  # a fact as given


def nowhere(pairs: Sequence[tuple[str | None, Reason]]) -> tuple[tuple[str, Fact], ...]:
    """The facts of `Kind.NO_NODE` (but the claim refs) for a pod that fits nowhere, from each
    node's reason (in node order): how many nodes (`total`), and `others` (`over_nodes`)."""
    others = over_nodes(pairs)
    if others.fact("grouped"):
        return (("total", len(pairs)), ("grouped", 1), ("others", others))
    return (("total", len(pairs)), ("others", others))


def why_not(pairs: Sequence[tuple[str | None, Reason]]) -> str:
    """One line for a pod that fits nowhere (`nowhere`'s facts, worded as `Kind.NO_NODE`)."""
    return say(Reason(Kind.NO_NODE, "", nowhere(pairs)))


def _no_node(r: Reason) -> str:
    """`nowhere`'s facts in a line, the claim refs put in: the one node's words, `no node fits
    the pod: n1: ...; n2: ...`, or `no node fits the pod (0 of N nodes): K nodes: ...`."""
    total, over = r.fact("total"), r.part("others")
    others = say(over) if over is not None else ""
    if total == 1:
        line = others
    elif r.fact("grouped"):
        line = no_node_head(total if isinstance(total, int) else 0) + others
    else:
        line = "no node fits the pod: " + others
    return with_refs(line, list(r.texts("claims")))


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


NAMED_PODS = 3
"""At most this many pods are named per node that fits alone (then "and K more")."""


def insufficient(short: Sequence[str]) -> str:
    """The scheduler's words for the node resources short (`problem.resources.shortfalls`'
    names: `pods` is `Too many pods`, any other `Insufficient NAME`)."""
    return ", ".join("Too many pods" if name == "pods" else f"Insufficient {name}" for name in short)


def _taken(r: Reason) -> str:
    """What the plan's pods take on a node where the pod fits alone (`Kind.TAKEN`): the
    devices it could use (`devices_taken`) and the node resources (`node_short`), or that the
    search found no way there."""
    parts = []
    devices, beside = r.texts("devices"), r.texts("beside")
    if devices:
        parts.append(devices_taken(some_named(devices, NAMED_PODS)))
    if r.fact("short"):
        takers = some_named(beside, NAMED_PODS) if beside else None
        parts.append(node_short(takers, insufficient(r.texts("short"))))
    return room(parts)


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
    "NAMED_PODS",
    "NODE",
    "UNDECIDED",
    "WITH_PLAN",
    "gave_up",
    "in_order",
    "MUST",
    "INTERRUPTED",
    "LEFT_OUT",
    "UNWORDED",
    "PRIORITY",
    "anywhere",
    "claim_placeholder",
    "counted_parts",
    "crowd_line",
    "devices_taken",
    "insufficient",
    "no_node_head",
    "node_short",
    "node_words",
    "of_node",
    "over_nodes",
    "alike_names",
    "alike_note",
    "alike_said",
    "room",
    "some_named",
    "say",
    "nowhere",
    "why_not",
    "with_refs",
]
