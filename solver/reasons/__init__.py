"""Why a pod or a claim is not placed, as a value: `Reason(kind, subject, facts)`.

Why values, not sentences: a reason is found in many places (the reference's why-not, first fit,
the models' expansion, gangs, preemption, re-planning), and code decides on it (a pod the
aggregated model dropped keeps its reason; a pod a model left out is worded on the plan). When
those decisions compared text, a reworded sentence changed behaviour, and one sentence spelled in
three places drifted apart. Here the finder states the facts; `reasons.words` is the one module
that turns them into words, and code branches on `Reason.kind` only.

The ground floor: imports nothing of the package, so every layer that finds a reason may make one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeAlias


class Kind(Enum):
    """What kind of fact keeps the subject out; each has one wording (`reasons.words.say`)."""

    INTERRUPTED = "interrupted"
    """The run was stopped before the pod's turn."""
    UNWORDED = "unworded"
    """The run was stopped after the plan, before the pod's reason was worded."""
    LEFT_OUT = "left out"
    """A model left the pod out so that more (or higher-priority) pods fit (worded on the plan
    by `planners.crowding`)."""
    DROPPED = "dropped"
    """The aggregated model put the pod on a node (`node`) whose exact device allocation did not
    take it: kept as it is (it says more than the pod's other nodes)."""
    LEFT_FOR_WEIGHT = "left for weight"
    """The update's local re-solve took the pod off `node` for pods of more weight."""
    REQUEST = "request"
    """A request (`claim`, `request`) lacks devices: `parts`, one reason per alternative (kinds
    ALL_NONE, ALL_BLOCKED, SHORT, each with the alternative's name as subject)."""
    ALL_NONE = "all none"
    """allocationMode All, and no device matches."""
    ALL_BLOCKED = "all blocked"
    """allocationMode All, but some matching device cannot be had (`why`: a `NODE_NAMED`)."""
    SHORT = "short"
    """Fewer usable devices than `count`: `matching` match the selectors, `rejected` ((why,
    how many) each) of them are filtered out, `usable` of the remaining `candidates` are free."""
    RUNS_OUT = "runs out"
    """A claim's requests cannot all be served at once (devices, capacity, counters)."""
    CONSTRAINTS = "constraints"
    """A claim's constraints cannot be satisfied (`constraints`: `ATTRIBUTE_RULE` or
    `COMPAT_GROUPS` each)."""
    NOT_TOGETHER = "not together"
    """The claims (`claims`) fit each alone but not together."""
    CANNOT = "cannot"
    """A claim cannot be allocated (nothing narrower found)."""
    NOTHING = "nothing"
    """Nothing to allocate."""
    GANG_SHORT = "gang short"
    """A PodGroup (`gang`) placed fewer pods (`placed`) than its goal (`goal`)."""
    NO_DOMAIN = "no domain"
    """Gangs with a topology fit in no single domain (`gangs`, `goal`, `tried`, `closest`,
    `score`; `blocker`, `blocked`: the pod that did not fit there and why)."""
    NO_NODE = "no node"
    """First fit found no node for the pod: `total` nodes tried, and `others`, the nodes'
    reasons (an `OVER_NODES`: the one node's, each node's when few, else (`grouped`) counted
    by value; `reasons.words.nowhere`), with the claim refs as placeholders
    (`reasons.words.with_refs`; pods of one shape share them); `claims`, the pod's claim refs
    put in. Per-node reasons: `PodPlan.node_reasons`."""
    OVER_NODES = "over nodes"
    """Why each of many nodes refused a pod (`reasons.words.over_nodes`): the nodes (`nodes`)
    with their reasons (`whys`, one each) when they are few (`one`: a single node, its
    reason said with the node named), else (`grouped`) the distinct reasons said of any node
    (`whys`) with how many of the `total` nodes gave each (`counts`), in order of first
    appearance. The node a reason was found on is a fact (or, in a shared answer, the
    placeholder `reasons.words.NODE`), never part of a text."""
    TAKEN = "taken"
    """What the plan's pods take on a node where the pod fits alone (`planners.crowding`):
    `devices`, the pods holding devices it could use; `short`, the node resources it lacks
    after the plan (resource names, as `NODE_SHORT`), beside the pods `beside` on the node;
    neither: the search found no way there beside the plan's pods."""
    WITH_CLAIMS = "with claims"
    """`why` (a reason with claim placeholders) on a node where the pod's claims differ (a
    special claim for DRA-served extended resources), with those claims' refs (`claims`)."""
    NODE_NAMED = "node named"
    """A fact found where a pool's problem was found on a node (`why`: an invalid or
    incomplete pool's, a device's of it), the node a fact (`node`; `reasons.words.of_node`
    makes it). Its names are facts (`RENAMED`), never searched for the node's: nodes whose
    facts differ only in names are one cause where nodes are grouped
    (`reasons.words.alike_names`)."""
    INVALID_POOLS = "invalid pools"
    """Upstream's per-node error: no allocation, and pools of the node are invalid (`pools`:
    `POOL_INVALID` each, as `problem.build.invalid_pool` makes it, in a `NODE_NAMED`)."""
    SEARCH_ABORTED = "search aborted"
    """The reference search gave up past its budget of `steps` (upstream: the filter timeout)."""
    NOT_READY = "not ready"
    """Upstream's per-node error: `request` of claim (subject) asks for all devices, but a pool
    is not ready (`why`: which, and how)."""
    CROWDED = "crowded"
    """The pod fits alone on some nodes, but the plan's other pods take the room there
    (`planners.crowding`): `total` nodes tried, `fitting` of them where it fits alone, the
    first of those (`fits`, at most `reasons.words.DETAIL_NODES`) with what the plan's pods
    take on each (`rooms`), why the plan placed those pods rather than it (`relation`, a key
    of `reasons.words.PRIORITY`), the other nodes' words (`others`), and `claims` as for
    NO_NODE (the claim refs put into `others`' placeholders; absent when they are in place)."""
    # why a pod may not use a node before any device search (`Unit.blocked`): found where the
    # scheduling's rules, a gang's domain or a model's own nodes refuse it; `node` names the
    # node, so that the words can say it or not (`say(where=False)`: "the node")
    BOUND = "bound"
    """The pod is bound (spec.nodeName) to another node, `bound`."""
    NO_NODE_OBJECT = "no node object"
    """The node has no Node object, and the pod selects nodes by label."""
    NODE_SELECTOR = "node selector"
    """The node's label `key` is not `value`, as the pod's nodeSelector asks."""
    NODE_AFFINITY = "node affinity"
    """The node does not match the pod's required node affinity."""
    UNSCHEDULABLE = "unschedulable"
    """The node is unschedulable (spec.unschedulable), and the pod does not tolerate it."""
    TAINT = "taint"
    """The node has a taint (`taint`, `effect`) the pod does not tolerate."""
    CLAIM_ELSEWHERE = "claim elsewhere"
    """A claim (subject) of `pod` is allocated with a node selector that excludes the node."""
    MEMBER = "member"
    """A pod (subject) of a unit of many is refused the node (`parts`: why)."""
    NO_TOPOLOGY = "no topology"
    """The node is in no topology domain (label `label`; `held`: the bound pods' domain, in
    words) of PodGroup `gang`."""
    OUTSIDE_DOMAIN = "outside domain"
    """The node is not in `label`=`value`, the domain tried for PodGroup `gang`."""
    HELD_HERE = "held here"
    """An allocated claim stays on its node (the preemption model's claim units)."""
    RUNS_ELSEWHERE = "runs elsewhere"
    """A running pod stays on its node (the preemption model's pod units)."""
    MOVES_FROM = "moves from"
    """A moved pod's replacement may not go on the node it moves from (`preempt.moves`)."""
    NETWORK_ONLY = "network only"
    """A pod of network-attached devices goes to its pool's node in the model, not a real one."""
    NODE_SHORT = "node short"
    """The node's free resources are short of the pod's (`short`: the resources short, as
    `problem.resources.shortfalls` names them; worded as the scheduler's `Insufficient cpu`)."""
    NODE_ONLY = "node only"
    """A pod of no network-attached device may not use a pool node."""
    POOL_OTHERS = "pool others"
    """The pod is not one of those the network-attached pools' own model places."""
    POOL_UNSEEN = "pool unseen"
    """No node the pod may use sees the pool."""

    PREEMPT_NEVER = "preempt never"
    """No room, and the pod's preemptionPolicy is Never (`plain`: a pod of plain claims)."""
    PREEMPT_NO_VICTIM = "preempt no victim"
    """No room, and no lower-priority pod to evict on the nodes it may use."""
    PREEMPT_NOT_ENOUGH = "preempt not enough"
    """Evicting every lower-priority pod would not make room (beside the plan's other pods)."""

    # explain's answers per node (`explain.diagnosis`); `node`, `example` and `device` facts
    # name where, and nodes whose answers differ only in them are one group
    NODE_CONSTRAINTS = "node constraints"
    """The node's constraints refuse the pod (`parts`: the refusal, e.g. `TAINT`)."""
    NODE_RESOURCES = "node resources"
    """The node lacks the pod's node resources (`short`, as `NODE_SHORT`)."""
    NOT_DECIDED = "not decided"
    """Neither the reference search (`steps`) nor CP-SAT could tell whether the claims fit."""
    SEARCH_GAVE_UP = "search gave up"
    """The claims fit by CP-SAT's word only: the reference search gave up after `steps`."""
    INVALID_CAUSE = "invalid cause"
    """Invalid pools (`pools`: `POOL_INVALID` each, in a `NODE_NAMED`) hold the devices that would make
    the claims fit."""
    FUNNEL = "funnel"
    """A request's devices on the node (claim: subject): `request`, `count` (or "all"),
    `devices` on the node, `skipped` in invalid pools, the `selectors` (SELECTOR each), the
    static rejections (`rejected`: (why, how many)), the shared devices whose capacity is short
    (`capacity`: CAPACITY_LEFT each), `held` matching devices with their `holders`, `usable`."""
    SELECTOR = "selector"
    """A selector (`label`, `expression`) that `rejects` devices (`example` one), `left` after."""
    CAPACITY_LEFT = "capacity left"
    """A shared `device` has `left` of the capacity `name` the request `needs`."""
    ALONE = "alone"
    """A claim (subject) by itself on the node: `fits` 1 (yes), 0 (its own blocker) or None
    (not decided, `steps`)."""
    BLOCKING_SET = "blocking set"
    """The minimal blocking set: `claims`, a BLOCKING_CLAIM each."""
    BLOCKING_CLAIM = "blocking claim"
    """A claim (subject) of the minimal blocking set: its `requests` (1: in the set) and its
    constraints in it (`rules`: a RULE each)."""
    RULE = "rule"
    """A constraint (`rule`: matchAttribute or distinctAttribute) over `attribute`, with the
    `values` the candidate devices carry."""
    PLAN_PLACES = "plan places"
    """`explain --with-plan`: the plan places the subject on `node`."""
    PLAN_LEAVES = "plan leaves"
    """`explain --with-plan`: the plan leaves the subject out (`parts`: why; or `words`, a
    reason the plan has in words only)."""
    PLAN_FAILS = "plan fails"
    """`explain --with-plan`: planning failed (`why`: the error's words)."""
    PLAN_COUNT = "plan count"
    """`explain --with-plan`'s head: the plan places `placed` of `pods` pending pods."""
    # facts found where a pool, a device or a constraint is read (`inventory`, `problem/`):
    # parts of the reasons above (`skipped`, `why`, `rejected`, `pools`, `constraints`), made
    # of names and numbers, worded in `reasons.words` alone
    POOL_INVALID = "pool invalid"
    """Pool `driver`/`pool` of `generation` is invalid (`why`: LISTED_TWICE, UNKNOWN_COUNTER_SET,
    UNKNOWN_COUNTER or SLICES_LEFT_OUT)."""
    POOL_INCOMPLETE = "pool incomplete"
    """Pool `driver`/`pool` of `generation` has `published` of its `count` slices (`ignored`:
    the slices left out because they declare compatibility groups with the gate off)."""
    POOL_UPDATING = "pool updating"
    """allocationMode All: pool `driver`/`pool` is incomplete (upstream: being updated)."""
    POOL_NOT_VALID = "pool not valid"
    """allocationMode All: pool `driver`/`pool` is invalid."""
    LISTED_TWICE = "listed twice"
    """A `what` (device, counter set) `name` listed by the slices `first` and `second`."""
    UNKNOWN_COUNTER_SET = "unknown counter set"
    """Device `device` consumes a counter set `set` no slice of its pool lists."""
    UNKNOWN_COUNTER = "unknown counter"
    """Device `device` consumes counter `counter` that its set `set` lacks."""
    SLICES_LEFT_OUT = "slices left out"
    """The pool's slices are stand-ins for slices left out for `problems` (SLICE_NOT_VALID or
    SLICE_UNREAD each)."""
    SLICE_NOT_VALID = "slice not valid"
    """ResourceSlice `slice` is left out: it is not valid (`problems`: the input errors' own
    words, `field: reason; ...`, as `validate` says them)."""
    SLICE_UNREAD = "slice unread"
    """ResourceSlice `slice` is left out: it could not be read (`error`: the reader's own words)."""
    SLICE_WITH_POOL = "slice with pool"
    """ResourceSlice `slice` is left out only because its pool is (another slice's problem)."""
    LACKS_CAPACITY = "lacks capacity"
    """Devices lack the capacities `names` the request asks for."""
    REFUSES_CAPACITY = "refuses capacity"
    """Devices' requestPolicy refuses the capacity request."""
    TOO_SMALL = "too small"
    """Devices whose whole capacity `name` (`total`) is less than the request consumes: the
    amount `asked` (None: the requestPolicy's default, `consumed`), `rounded` up to `consumed`
    by the requestPolicy; amounts as the device publishes them."""
    NO_CAPACITY_LEFT = "no capacity left"
    """Shared devices have not enough capacity left."""
    COUNTERS_OFF = "counters off"
    """Devices consume counters, and DRAPartitionableDevices is disabled."""
    SKIP_OFF = "skip off"
    """Devices come from a skipNodeOperations slice, and DRAOptionalNodePreparation is disabled."""
    SKIP_UNDECLARED = "skip undeclared"
    """Devices come from a skipNodeOperations slice, and `node` does not declare `feature`."""
    DEVICE_TAINT = "device taint"
    """Devices have the taint `key` (`value`, `effect`; put by DeviceTaintRule `rule`) that the
    request does not tolerate."""
    DEVICE_BUSY = "device busy"
    """allocationMode All: device `device` of pool `driver`/`pool` is allocated already."""
    DEVICE_FULL = "device full"
    """allocationMode All: shared device `device` (of `driver`/`pool`) has not enough capacity left."""
    DEVICE_REFUSED = "device refused"
    """allocationMode All: device `device` (of `driver`/`pool`) is refused by a static check
    (`why`: one of the rejections above)."""
    ATTRIBUTE_RULE = "attribute rule"
    """A claim constraint (`rule`: match or distinct; `field`, its API field) over `attribute`."""
    COMPAT_GROUPS = "compat groups"
    """KEP-5963's compatibility groups on counter set `set` of pool `driver`/`pool`."""
    FEWER_DEVICES = "fewer devices"
    """A fix: `request` of claim (subject) with `count` devices."""
    RELEASED = "released"
    """A fix: the allocated claim (subject) released."""


Fact: TypeAlias = (
    "str | int | tuple[str, ...] | tuple[int, ...] | tuple[tuple[str, int], ...]"
    " | Reason | tuple[Reason, ...] | tuple[tuple[Reason, int | str], ...] | None"
)


@dataclass(frozen=True)
class Reason:
    """Why `subject` (a pod, a claim, a PodGroup) is not placed: a kind and the facts its words
    need, by name (`fact`). Frozen and hashable: equal facts are one reason, whatever the node."""

    kind: Kind
    subject: str = ""
    facts: tuple[tuple[str, Fact], ...] = ()

    _hash: int = field(default=0, init=False, repr=False, compare=False)
    """The hash, once computed (`__hash__`)."""

    def __hash__(self) -> int:
        """Kept once computed: a node's refusal is part of the key of first fit's answer shared
        by the pods it leaves out (their blocked nodes), hashed far more often than made."""
        if not self._hash:
            object.__setattr__(self, "_hash", hash((self.kind, self.subject, self.facts)))  # frozen: a cache
        return self._hash

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the cached hash: another process hashes strings with another seed."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @classmethod
    def of(cls, kind: Kind, subject: str = "", **facts: Fact) -> Reason:
        return cls(kind, subject, tuple(facts.items()))

    def fact(self, name: str, default: Fact = None) -> Fact:
        return next((v for k, v in self.facts if k == name), default)

    def text(self, name: str) -> str:
        """The fact `name` as a string ('' when it is absent)."""
        value = self.fact(name)
        return "" if value is None else str(value)

    def texts(self, name: str) -> tuple[str, ...]:
        """The fact `name` as strings (a tuple of names or words; () when it is absent)."""
        value = self.fact(name)
        return tuple(str(v) for v in value) if isinstance(value, tuple) else ()

    def parts(self, name: str) -> tuple[Reason, ...]:
        """The fact `name` as reasons (the parts of a reason; () when it is absent)."""
        value = self.fact(name)
        return tuple(v for v in value if isinstance(v, Reason)) if isinstance(value, tuple) else ()

    def part(self, name: str) -> Reason | None:
        """The fact `name` as one reason (None when it is absent)."""
        value = self.fact(name)
        return value if isinstance(value, Reason) else None

    def ints(self, name: str) -> tuple[int, ...]:
        """The fact `name` as numbers (() when it is absent)."""
        value = self.fact(name)
        return tuple(v for v in value if isinstance(v, int)) if isinstance(value, tuple) else ()

    def counted(self, name: str) -> tuple[tuple[Reason, int | str], ...]:
        """The fact `name` as (reason, how many) pairs (a request's rejections; how many: a
        number, or a range of them in words, `low-high`; () when it is absent)."""
        value = self.fact(name)
        if not isinstance(value, tuple):
            return ()
        return tuple(
            (v[0], v[1])
            for v in value
            if isinstance(v, tuple)
            and len(v) == 2
            and isinstance(v[0], Reason)
            and isinstance(v[1], int | str)
        )

    def inner(self) -> list[Reason]:
        """The reasons among the facts (a fact, one in a tuple, the first of a (reason, how
        many) pair: parts, a request's rejections, a fact's `why`)."""
        out: list[Reason] = []
        for _, value in self.facts:
            if isinstance(value, Reason):
                out.append(value)
            elif isinstance(value, tuple):
                for v in value:
                    if isinstance(v, Reason):
                        out.append(v)
                    elif isinstance(v, tuple) and v and isinstance(v[0], Reason):
                        out.append(v[0])
        return out

    def with_parts(self, f: Callable[[Reason], Reason]) -> Reason:
        """The same reason with `f` applied to each reason among its facts (`inner`)."""

        def put(value: object) -> object:
            if isinstance(value, Reason):
                return f(value)
            if isinstance(value, tuple) and value and isinstance(value[0], Reason | tuple):
                return tuple(
                    f(v)
                    if isinstance(v, Reason)
                    else (f(v[0]), v[1])
                    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], Reason)
                    else v
                    for v in value
                )
            return value

        facts = tuple((k, put(v)) for k, v in self.facts)
        return Reason(self.kind, self.subject, facts)  # type: ignore[arg-type]  # each fact keeps its shape

    def without(self, *names: str) -> Reason:
        """The same reason without the facts `names` (e.g. the node, for reasons grouped over
        nodes that name their nodes in the group's head)."""
        return Reason(self.kind, self.subject, tuple((k, v) for k, v in self.facts if k not in names))

    def about(self, subject: str, **facts: Fact) -> Reason:
        """The same reason of another subject, with `facts` replaced (an identical pod's reason
        with its own claim refs)."""
        kept = tuple((k, v) for k, v in self.facts if k not in facts)
        return Reason(self.kind, subject, kept + tuple(facts.items()))

    def is_(self, *kinds: Kind) -> bool:
        return self.kind in kinds

    def alike(self) -> Reason:
        """The reason without what makes it one pod's own (`OWN`): its subject (a pod, a
        claim; not a PodGroup, which its pods share), its claim refs, and for `CROWDED` the
        nodes it would fit on alone and who takes the room there. Pods with alike reasons are
        blocked for the same reason (`plan --watch` counts them together); what they ask for
        and why it is refused still tell reasons apart."""
        subject = self.subject if self.kind in (Kind.GANG_SHORT, Kind.NO_DOMAIN) else ""
        own = OWN.get(self.kind, ("claims",))
        return Reason(self.kind, subject, tuple((k, v) for k, v in self.facts if k not in own))


NODE_NAME, POOL_NAME, SLICE_NAME = "node", "pool", "slice"
"""What a `RENAMED` fact names: the node, a pool, a slice (one name, or a tuple of them)."""

RENAMED: dict[Kind, tuple[tuple[str, str], ...]] = {
    Kind.NODE_NAMED: (("node", NODE_NAME),),
    Kind.SKIP_UNDECLARED: (("node", NODE_NAME),),
    Kind.POOL_INVALID: (("pool", POOL_NAME),),
    Kind.POOL_INCOMPLETE: (("pool", POOL_NAME), ("ignored", SLICE_NAME)),
    Kind.POOL_UPDATING: (("pool", POOL_NAME),),
    Kind.POOL_NOT_VALID: (("pool", POOL_NAME),),
    Kind.DEVICE_BUSY: (("pool", POOL_NAME),),
    Kind.DEVICE_FULL: (("pool", POOL_NAME),),
    Kind.DEVICE_REFUSED: (("pool", POOL_NAME),),
    Kind.COMPAT_GROUPS: (("pool", POOL_NAME),),
    Kind.LISTED_TWICE: (("first", SLICE_NAME), ("second", SLICE_NAME)),
    Kind.SLICE_NOT_VALID: (("slice", SLICE_NAME),),
    Kind.SLICE_UNREAD: (("slice", SLICE_NAME),),
    Kind.SLICE_WITH_POOL: (("slice", SLICE_NAME),),
}
"""Per kind, the facts that name the node, a pool or a slice where the fact was found, and
which: on a node equal up to names (`planners.firstfit.twins`: its slices one to one, in
order, equal but for their names) the same fact holds with that node's names, re-made by
`renamed`."""


def names_places(reason: Reason) -> bool:
    """Whether `reason` (or a reason among its facts) names the node, a pool or a slice
    where it was found (`RENAMED`). Decided from its facts' kinds, not their text."""
    if any(reason.fact(name) for name, _ in RENAMED.get(reason.kind, ())):
        return True
    return any(names_places(part) for part in reason.inner())


def renamed(
    reason: Reason,
    nodes: Mapping[str, str],
    pools: Mapping[str, str],
    slices: Mapping[str, str] | None = None,
) -> Reason:
    """`reason` with the names of its `RENAMED` facts put as another node's: a node's name
    by `nodes`, a pool's by `pools`, a slice's by `slices` (a name not in them kept)."""
    names = dict(RENAMED.get(reason.kind, ()))
    if names:
        by = {NODE_NAME: nodes, POOL_NAME: pools, SLICE_NAME: slices or {}}

        def put(k: str, v: Fact) -> Fact:
            if k not in names:
                return v
            to = by[names[k]]
            if isinstance(v, str):
                return to.get(v, v)
            if isinstance(v, tuple) and all(isinstance(x, str) for x in v):
                return tuple(to.get(str(x), str(x)) for x in v)
            return v

        reason = Reason(reason.kind, reason.subject, tuple((k, put(k, v)) for k, v in reason.facts))
    return reason.with_parts(lambda part: renamed(part, nodes, pools, slices))


OWN: dict[Kind, tuple[str, ...]] = {Kind.CROWDED: ("claims", "fits", "fitting", "rooms", "others")}
"""Per kind, the facts that make a reason one pod's own (`Reason.alike`); ("claims",) for the
kinds not listed."""


__all__ = [
    "NODE_NAME",
    "OWN",
    "POOL_NAME",
    "RENAMED",
    "SLICE_NAME",
    "Fact",
    "Kind",
    "Reason",
    "names_places",
    "renamed",
]
