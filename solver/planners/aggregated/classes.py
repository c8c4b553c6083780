"""Pod classes and node classes: the kinds of things a plan at scale works on.

Why classes: a cluster is large but has few kinds of things (DESIGN.md, "The plan at scale").
Pods whose facts are identical are interchangeable in any plan, and so are nodes; the plan
model (`solver.planners.aggregated.master`) decides counts per class and expands to objects only at the end.

- A *pod class* groups units (pods) with identical `unit_facts`: the claims' specs (after
  template resolution), the priority and the set of candidate nodes the pod may not use.
- A *node class* groups nodes with identical `node_facts`: the canonical signature of what
  precompute (`problem.build.build_problem`) produces on the node for one representative of
  every pod class — devices, capacities left, counters, candidates, constraint values, with
  node, pool and device names abstracted away (so the node's labels, taints, declared
  features and held devices count exactly as far as they change what the claims may use) —
  and the set of pod classes that may not use the node (scheduling constraints: a pod class's
  blocked nodes split node classes, so a (pod class, node class) pair is compatible on every
  node of the class or on none).

Node resources are such facts: a pod class has one demand (cpu, memory, pod slot, ...), a
node class one free amount per resource (`solver.problem.demand`). A node class is only a class when
its nodes are independent: no device or counter that a candidate uses is visible from two
nodes (`NodeClasses.coupled` says which shared key prevents it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from dra_solver.encoders.model import sorted_values

from ...api.cluster import Cluster
from ...api.models import ResourceClaim
from ...cel import EvalCache
from ...deadline import Deadline, stopping
from ...gates import FeatureGates
from ...inventory import NodeView, node_up_to_name, slices_up_to_names
from ...planning.job import Unit
from ...problem.build import build_problem
from ...problem.demand import demand_total
from ...problem.flat import CompatKey, Problem, Value, ValueSet
from ...problem.resources import Amounts
from ...reasons.words import say


class UnitsByIndex(Protocol):
    """The units a plan reads by index: the job's sequence, or a component's mapping of the
    units it needs (`Unit.slim`, by index)."""

    def __getitem__(self, index: int, /) -> Unit: ...


@dataclass(frozen=True)
class PodClass:
    index: int
    units: tuple[int, ...]
    """Unit indices (into the job's units), in input order."""
    priority: int
    blocked: frozenset[str]
    """Candidate nodes these pods may not use."""
    weight: int
    """The objective weight of one placed unit of the class (the master's w[k]): its units'
    `planning.job.Unit.weight`, the one definition of a pod's weight in every objective."""
    gang: str | None = None
    """The gang (PodGroup `namespace/name`) these pods belong to: pods of different gangs are
    never one class, since the master model counts each gang's placed pods."""

    @property
    def demand(self) -> int:
        return len(self.units)


@dataclass(frozen=True)
class NodeClass:
    index: int
    nodes: tuple[str, ...]
    """In name order (the expansion's order)."""
    allowed: frozenset[int]
    """Pod classes that may use these nodes (scheduling constraints)."""
    signature: str
    """Hex digest of the node's abstracted Problem (`problem_signature`)."""

    @property
    def mult(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class NodeClasses:
    classes: list[NodeClass]
    problems: dict[str, Problem]
    """Node -> its Problem for the representative claims (precompute, kept for reuse); a node
    whose twin was precomputed (`twin_key`) has none."""
    coupled: str | None
    """Why the nodes are not independent (a device or counter seen from two nodes), else None."""
    errors: str | None
    """A CEL runtime error or invalid pool on some node (the exact model reports those)."""
    views: LocalViews
    cut: str | None = None
    """Why the classes stopped before every node (the deadline passed: `node_classes`), else
    None; then they are no classes of the nodes, and no model runs on them."""


class LocalViews:
    """Per node, the part of the cluster its allocations depend on: every slice of a pool that
    has a slice on the node or a slice without a node name (network-attached, selector-scoped),
    and the allocated claims whose results use such a pool.

    Why: precompute and the checker read the whole cluster on every call (pools, devices in
    use), which makes a plan over N nodes cost N x cluster. On independent nodes (no device or
    counter seen from two nodes: what the aggregated plan requires) the view holds every fact
    a node's allocation depends on — its pools whole (completeness counts their slices), and
    every claim holding one of their devices or counters — so both read the view instead.
    Views are indexed once (a view costs what it holds); claims allocated after that are not
    in them, which is sound for the aggregated plan: it commits each node once, and a claim
    placed on one node uses no other node's pools."""

    def __init__(self, cluster: Cluster) -> None:
        self.node_pools: dict[str, set[tuple[str, str]]] = {}
        self.shared: set[tuple[str, str]] = set()
        self.slices: dict[tuple[str, str], list[int]] = {}
        for i, s in enumerate(cluster.slices):
            key = (s.spec.driver, s.spec.pool.name)
            self.slices.setdefault(key, []).append(i)
            if s.spec.node_name:
                self.node_pools.setdefault(s.spec.node_name, set()).add(key)
            else:
                self.shared.add(key)
        self.claims: dict[tuple[str, str], list[tuple[int, tuple[str, str]]]] = {}
        for i, (k, c) in enumerate(cluster.claims.items()):
            alloc = c.status.allocation if c.status else None
            if alloc is not None:
                for pool in {(r.driver, r.pool) for r in alloc.devices.results}:
                    self.claims.setdefault(pool, []).append((i, k))
        self.twins: dict[str, str | None] = {}
        """Node -> its `twin_key`, once computed (node classes, caps and the expansion ask it)."""

    def of(self, cluster: Cluster, node: str) -> Cluster:
        """`cluster` (the one indexed, or a copy with more claims) seen from `node`."""
        pools = self.node_pools.get(node, set()) | self.shared
        slices = sorted(i for p in pools for i in self.slices.get(p, ()))
        keys = sorted({ik for p in pools for ik in self.claims.get(p, ())})
        claims = {k: cluster.claims[k] for _, k in keys}
        return replace(cluster, slices=[cluster.slices[i] for i in slices], claims=claims)


def claim_key(claim: ResourceClaim) -> str:
    """The claim's namespace and spec, canonical (its name and status left out)."""
    spec = claim.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps([claim.metadata.ns, spec], sort_keys=True)


def kind_facts(unit: Unit) -> tuple[Hashable, Hashable]:
    """What a pod asks of a node, names left out: its claims (namespace and spec) and its
    node-resource demand. With the nodes it refuses, a pod's *kind* (`master.pod_kinds`,
    `replan.moves.kind_key`): pods of one kind fit on a node in the same ways."""
    return tuple(claim_key(c) for c in unit.claims), tuple(sorted(demand_total(unit.needs).items()))


def unit_facts(unit: Unit) -> tuple[Hashable, ...]:
    """Everything about a pod that decides where and how it fits — names left out."""
    claims, demand = kind_facts(unit)
    return (claims, unit.priority, unit.weight, frozenset(n for n in unit.blocked if n is not None), demand)


LOOK_EVERY = 64
"""`pod_classes_within` looks at the deadline once per this many units (a unit's facts take
10-30 us: a look per unit would cost more than it saves)."""


def pod_classes(
    units: Sequence[Unit], indices: Sequence[int], gang_of: Mapping[int, str] | None = None
) -> list[PodClass]:
    """Classes of the units `indices`, in order of their first unit; `gang_of`: unit -> its
    gang, which is part of the class (see `PodClass.gang`)."""
    out = pod_classes_within(units, indices, gang_of, None)
    assert out is not None  # no deadline: never cut
    return out


def pod_classes_within(
    units: Sequence[Unit],
    indices: Sequence[int],
    gang_of: Mapping[int, str] | None,
    deadline: Deadline | None,
) -> list[PodClass] | None:
    """`pod_classes`, or None when `deadline` passes (or a stop is requested) before every
    unit is classed: thousands of units' facts take a tenth of a CPU second and more (d,
    4,000 claims), so a model begun just before the deadline stops here instead of past it
    (docs/semantics.md, "Limits and determinism")."""
    gang_of = gang_of or {}
    members: dict[tuple[Hashable, ...], list[int]] = {}
    for n, i in enumerate(indices):
        if n % LOOK_EVERY == 0 and stopping(deadline):
            return None
        members.setdefault((gang_of.get(i), *unit_facts(units[i])), []).append(i)
    out = []
    for k, us in enumerate(members.values()):
        first = units[us[0]]
        blocked = frozenset(n for n in first.blocked if n)
        out.append(PodClass(k, tuple(us), first.priority, blocked, first.weight, gang_of.get(us[0])))
    return out


NodeFacts = tuple[frozenset[int], Hashable, Hashable]
"""`node_facts`: the pod classes a node allows, its devices' signature, its free resources."""


def node_facts(
    cluster: Cluster, problem: Problem, node: str, pods: Sequence[PodClass], free: Amounts | None = None
) -> NodeFacts:
    """Everything about a node that decides which pods fit on it — names left out. The first
    entry is the pod classes that may use it; then the devices as precompute sees them, and
    the node resources free (allocatable minus bound pods; None: not limited)."""
    return (
        frozenset(k.index for k in pods if node not in k.blocked),
        problem_signature(problem),
        tuple(sorted(free.items())) if free is not None else None,
    )


def node_classes(
    cluster: Cluster,
    units: Sequence[Unit],
    pods: Sequence[PodClass],
    nodes: Sequence[str],
    gates: FeatureGates,
    cache: EvalCache,
    free: Mapping[str | None, Amounts | None] | None = None,
    deadline: Deadline | None = None,
) -> NodeClasses:
    """Classes of `nodes` (each in name order, classes in order of their first node by name),
    from one precompute per node of one representative unit per pod class. `free`: each
    node's free node resources (`solver.problem.demand.NodeBook.free`). `deadline`: looked
    at before each node's precompute (a node's takes 0.1-1 ms, a thousand nodes' a tenth of
    a CPU second and more); once it has passed (or a stop is requested) the classes stop
    there, `cut` says so, and no model runs on them."""
    claims = [c for k in pods for c in units[k.units[0]].claims]
    problems: dict[str, Problem] = {}
    members: dict[NodeFacts, list[str]] = {}
    owner: dict[tuple[str, ...], str] = {}
    coupled: str | None = None
    errors: str | None = None
    views = LocalViews(cluster)
    twins: dict[str, Hashable] = {}
    cut: str | None = None
    for done, n in enumerate(sorted(nodes)):
        if stopping(deadline):
            cut = f"the deadline passed while classing the nodes ({done} of {len(nodes)})"
            break
        twin = twin_key(cluster, views, n)
        if twin is not None and twin in twins:  # the same Problem up to names: no precompute
            facts = (frozenset(k.index for k in pods if n not in k.blocked), twins[twin], _free_key(free, n))
            members.setdefault(facts, []).append(n)
            continue
        problem = build_problem(views.of(cluster, n), claims, n, gates, cache=cache)
        problems[n] = problem
        for key in _used_keys(problem):
            other = owner.setdefault(key, n)
            if other != n and coupled is None:
                coupled = f"{'/'.join(key)} is seen from nodes {other} and {n}"
        if coupled is not None:  # no classes then (the model does not apply): stop here
            break
        if errors is None:
            errors = _errors(problem)
        facts = node_facts(cluster, problem, n, pods, (free or {}).get(n))
        if twin is not None:
            twins[twin] = facts[1]
        members.setdefault(facts, []).append(n)
    classes = [
        NodeClass(c, tuple(ns), key[0], hashlib.sha256(repr(key[1:]).encode()).hexdigest()[:16])
        for c, (key, ns) in enumerate(members.items())
    ]
    return NodeClasses(classes, problems, coupled, errors, views, cut)


def _free_key(free: Mapping[str | None, Amounts | None] | None, node: str) -> Hashable:
    amounts = (free or {}).get(node)
    return tuple(sorted(amounts.items())) if amounts is not None else None


def twin_key(cluster: Cluster, views: LocalViews, node: str) -> str | None:
    """What precompute reads of `node`, with the node's and its pools' names taken out, as
    canonical JSON: two nodes with equal keys have equal Problems up to names for any claims
    (so equal `problem_signature`s), and `node_classes` builds one of them only. Why: a
    Problem of one representative of every pod class costs milliseconds per node, a minute
    over 10,000 nodes, while a cluster has few kinds of node.

    Only where names are all that can differ, else None (the node is precomputed): no
    DeviceTaintRules (they select devices by pool and name), no slice without a node name,
    and every slice of the node's pools on this node. Everything else is compared as it is:
    slices (devices, counters, per-device node selection), the claims holding devices in
    those pools (spec and allocation, their names left out), the node's labels (its hostname
    label taken out when it is the node's name) and declared features. Computed once per node
    and kept in `views` (node classes, caps and the expansion ask it): the key reads only what
    the views indexed once."""
    if node not in views.twins:
        views.twins[node] = _twin_key(cluster, views, node)
    return views.twins[node]


def _twin_key(cluster: Cluster, views: LocalViews, node: str) -> str | None:
    if cluster.taint_rules or views.shared:
        return None
    aliases: dict[str, str] = {}
    mine = sorted(i for p in views.node_pools.get(node, ()) for i in views.slices[p])
    slices = slices_up_to_names((cluster.slices[i] for i in mine), node, aliases)
    if slices is None:
        return None
    held = []
    for _, key in sorted({ik for p in views.node_pools.get(node, ()) for ik in views.claims.get(p, ())}):
        claim = cluster.claims[key]
        dump = claim.model_dump(mode="json", by_alias=True, exclude_none=True)
        dump["metadata"] = {"namespace": claim.metadata.ns}
        for r in dump.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            r["pool"] = aliases.get(r["pool"], r["pool"])
        held.append(dump)
    view = NodeView.of(node, cluster.nodes)
    assert view is not None
    return json.dumps([slices, held, *node_up_to_name(view)], sort_keys=True)


def problem_signature(problem: Problem) -> Hashable:
    """The Problem up to names: what the allocators read, devices renamed by their rank among
    the devices some candidate uses (unused devices cannot change whether pods fit), and each
    constraint's values by their first appearance (`_renamed`).

    Two nodes with equal signatures accept exactly the same sets of pods: every allocator
    decision depends on these facts and on indices only."""
    used = sorted({cand.device for alt in problem.alternatives for cand in alt.candidates})
    ctr_used = sorted({i for d in used for i in problem.devices[d].counter_use})
    if not ctr_used:
        used = _canonical_order(problem, used)
    return _signature(problem, used, ctr_used)


def index_signature(problem: Problem) -> tuple[Hashable, tuple[int, ...]]:
    """`problem_signature` with the used devices ranked in index order (no canonical order),
    and those devices: two Problems with equal index signatures are the same Problem up to
    names *and* device order, so an allocation of one, its devices mapped rank for rank
    (`used[rank]`), is an allocation of the other, whatever decided it. Cheaper than
    `problem_signature` (no sort by role): what lets the expansion of an aggregated plan
    decide a pattern once per node class instead of once per node (`patterns.allocate_node`)."""
    used = sorted({cand.device for alt in problem.alternatives for cand in alt.candidates})
    ctr_used = sorted({i for d in used for i in problem.devices[d].counter_use})
    return _signature(problem, used, ctr_used), tuple(used)


def _signature(problem: Problem, used: list[int], ctr_used: list[int]) -> Hashable:
    """The facts of `problem_signature`, devices ranked in the order of `used`."""
    rank = {d: r for r, d in enumerate(used)}
    ctr_rank = {i: r for r, i in enumerate(ctr_used)}
    # KEP-5963 counter sets by first appearance among the used devices, with their baseline.
    set_rank: dict[CompatKey, int] = {}
    for d in used:
        for cset, _ in problem.devices[d].compat:
            set_rank.setdefault(cset, len(set_rank))
    devices = tuple(_device_facts(problem, d, ctr_rank, set_rank) for d in used)
    compat = tuple((cset[0], cset[2], problem.compat_baseline.get(cset)) for cset in set_rank)
    counters = tuple(
        (
            problem.counters[i].driver,
            problem.counters[i].counter_set,
            problem.counters[i].name,
            problem.counters[i].available,
        )
        for i in ctr_used
    )
    alternatives = tuple(
        (
            a.claim,
            a.request,
            a.position,
            a.mode,
            a.count,
            a.admin,
            a.all_blocked is not None,  # the reason names a device: only whether it is blocked counts
            a.fatal is not None,
            tuple(
                sorted(
                    (
                        (rank[c.device], _sorted_items(c.consumed), None if c.error is None else str(c.error))
                        for c in a.candidates
                    ),
                    key=lambda t: t[0],
                )
            ),
        )
        for a in problem.alternatives
    )
    constraints = tuple(
        (
            k.claim,
            k.kind,
            k.attribute,
            tuple(sorted(k.alternatives)),
            _renamed(
                sorted((((a, rank[d]), v) for (a, d), v in k.values.items() if d in rank), key=lambda t: t[0])
            ),
        )
        for k in problem.constraints
    )
    invalid = len(problem.invalid_pools) - len(problem.left_out_pools)  # left out: as absent (`_errors`)
    return (devices, counters, alternatives, constraints, invalid, compat)


def _renamed(
    values: list[tuple[tuple[int, int], ValueSet | None]],
) -> tuple[tuple[tuple[int, int], tuple[int, ...] | None], ...]:
    """One constraint's values per (alternative, device rank), in that order, each value named
    by its first appearance. Why: a constraint only compares values — match keeps those in
    common, distinct refuses a repeat (`problem.kinds`) — so renaming them one to one changes
    no allocation, and two nodes whose devices differ only in what the values are called
    (each network-attached pool's own `slice` index, issue #40) take the same pods."""
    names: dict[Value, int] = {}
    return tuple(
        (key, None if v is None else tuple(sorted(names.setdefault(x, len(names)) for x in sorted_values(v))))
        for key, v in values
    )


def _canonical_order(problem: Problem, used: list[int]) -> list[int]:
    """`used` sorted by everything the model knows of each device: its facts, the
    alternatives it is a candidate of (with what it consumes) and its constraint values.

    Why: which of 8 identical GPUs a running claim holds must not split a node class.
    Devices with equal keys are interchangeable (swapping them maps the Problem onto itself),
    so equal sorted keys mean isomorphic Problems whatever the order among ties. Only without
    counters: devices sharing a counter are related in a way a per-device key cannot see."""
    roles: dict[int, list[object]] = {d: [] for d in used}
    for alt in problem.alternatives:
        for c in alt.candidates:
            roles[c.device].append(("alt", alt.index, _sorted_items(c.consumed), str(c.error)))
    for k in problem.constraints:
        for (a, d), v in sorted(k.values.items(), key=lambda t: t[0]):
            if d in roles:
                roles[d].append(("con", k.index, a, None if v is None else tuple(sorted_values(v))))
    key = {d: repr((_device_facts(problem, d, {}), roles[d])) for d in used}
    return sorted(used, key=lambda d: (key[d], d))


def _device_facts(
    problem: Problem, d: int, ctr_rank: dict[int, int], set_rank: dict[CompatKey, int] | None = None
) -> Hashable:
    """`set_rank`: KEP-5963 counter sets by rank; None names them by driver and set only."""
    dev = problem.devices[d]
    compat: tuple[tuple[Hashable, frozenset[str]], ...]
    if set_rank is None:
        compat = tuple(((cset[0], cset[2]), groups) for cset, groups in dev.compat)
    else:
        compat = tuple((set_rank[cset], groups) for cset, groups in dev.compat)
    return (
        dev.driver,
        dev.multi,
        dev.busy,
        _sorted_items(dev.capacity),
        _sorted_items(dev.in_use),
        dev.shared_in_use,
        tuple(sorted((ctr_rank[i], v) for i, v in dev.counter_use.items())),
        dev.counters_blocked,
        dev.node_scope[0],
        dev.binds_to_node,
        dev.skip_node_operations,
        dev.binding_conditions,
        dev.binding_failure_conditions,
        tuple(sorted(compat, key=repr)),
    )


def _sorted_items(d: Mapping[str, object] | None) -> tuple[tuple[str, object], ...] | None:
    return None if d is None else tuple(sorted(d.items()))


def _used_keys(problem: Problem) -> set[tuple[str, ...]]:
    """Identities of the devices candidates use and of the counters they consume."""
    used = {cand.device for alt in problem.alternatives for cand in alt.candidates}
    keys: set[tuple[str, ...]] = set()
    for d in used:
        dev = problem.devices[d]
        keys.add((dev.driver, dev.pool, dev.name))
        for i in dev.counter_use:
            c = problem.counters[i]
            keys.add((c.driver, c.pool, c.counter_set, c.name))
        for cset, _ in dev.compat:
            keys.add(("compatibility-groups", *cset))
    return keys


def _errors(problem: Problem) -> str | None:
    # A pool left out for a problem places as an absent one (its devices are unknown, none is
    # used): only the reasons of the pods first fit then leaves out name it.
    invalid = [p for p in problem.invalid_pools if p not in problem.left_out_pools]
    if invalid:
        return f"invalid pools: {', '.join(map(say, invalid))}"
    for alt in problem.alternatives:
        if alt.fatal is not None:  # allocationMode All on a pool not ready: this node fails the pod
            return say(alt.fatal)
        for cand in alt.candidates:
            if cand.error is not None:
                return str(cand.error)
    return None


__all__ = [
    "LocalViews",
    "NodeClass",
    "NodeClasses",
    "PodClass",
    "UnitsByIndex",
    "claim_key",
    "index_signature",
    "kind_facts",
    "node_classes",
    "node_facts",
    "pod_classes",
    "pod_classes_within",
    "problem_signature",
    "twin_key",
    "unit_facts",
]
