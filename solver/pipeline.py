"""The one run: resolve pods and nodes → first fit → allocator → results → check.

Why one pipeline: "allocate these claims on this node", "how many of these independent
claims fit on this node" and "where do these pods go on this cluster" are the same question
asked of different pods and nodes. `plan()` is the engine; `allocate()` is a plan of one pod
(its claims together, all or none) over the candidate nodes; independent claims on one node
are a plan in which every claim is its own pod (`plan(cluster, [[c] for c in claims], [node])`).

Every run goes the same way (`run`):
1. resolve the pods (`Unit`s: claims to place, priority, the nodes the pod may use) and nodes;
2. first fit (`firstfit.FirstFit`): pod after pod, the first node that fits — what the
   scheduler would do, and the floor and hint of every other allocator;
3. the chosen allocator (`Options.allocator`) improves on it (`allocators.Cpsat`), never
   placing less weight than first fit;
4. every placement is turned into `status.allocation` (`solver.results`) and verified by the
   independent checker (`solver.check`) before it is returned; the plan's pods are checked
   against the nodes' allocatable resources (`check.node_resources`).

Pods also take node resources (cpu, memory, pod slots: `solver.demand`); pods without
claims take part in a plan for that reason, and a pod's extended resources may become a
special claim on nodes where DRA serves them (KEP-5004).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from dra_solver.aggregate.partition import plan_partitioned
from dra_solver.allocators import ALLOCATORS, Gang, Job, Member, PlanOutcome, PodPlan, Unit
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import AllocationResult, Pod, PodGroup, ResourceClaim
from dra_solver.api.strict import suggest
from dra_solver.cel import EvalCache
from dra_solver.cel.checks import validate_all
from dra_solver.check import CheckFailed, PodPlacement, check_gangs, check_node_resources, check_placements
from dra_solver.demand import Needs, NodeBook
from dra_solver.errors import InputError, ValidationErrors
from dra_solver.explain.crowding import crowded_reasons
from dra_solver.firstfit import FirstFit, Progress
from dra_solver.gates import FeatureGates
from dra_solver.output.summary import PlanSummary
from dra_solver.problem.pods import node_conflict, pod_claims, pod_group_of
from dra_solver.problem.resources import DONE_PHASES
from dra_solver.problem.scheduling import node_refusal, pod_priority
from dra_solver.results import with_reservations
from dra_solver.whatif.model import plan_with_templates
from dra_solver.whatif.templates import NodeTemplate

AllocatorName = Literal["reference", "cpsat"]
Strategy = Literal["pack", "spread"]
DEFAULT_MAX_NEW_NODES: int | None = None
"""What-if plans' cap on copies of each node template: None derives it from the pending pods
(`whatif.copies_needed`: no optimal plan adds more), so no default cuts an answer short."""
PodInput = str | Pod | Sequence[str | ResourceClaim]
"""A pod to place: a Pod name (`name` or `namespace/name`), a Pod object, or a list of claims
(names or objects) that form one pod."""


@dataclass(frozen=True)
class Options:
    """How to run: one value instead of loose keyword arguments, passed down unchanged.

    `feature_gates` accepts FeatureGates, a mapping or `Name=true,Other=false`. `cache` (a
    CEL EvalCache) may be shared across runs on the same cluster; it never changes results;
    nor does `progress`."""

    allocator: AllocatorName = "cpsat"
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    seed: int = 0
    strategy: Strategy = "pack"
    time_limit: float = 10.0
    cache: EvalCache | None = field(default=None, compare=False, repr=False)
    progress: Progress | None = field(default=None, compare=False, repr=False)
    """Told (pods decided, pods) as first fit works (the CLI's progress bar); never changes results."""
    executor: Executor | None = field(default=None, compare=False, repr=False)
    """Where a plan's independent units run (`solver.executors`: any concurrent.futures
    Executor, e.g. a process pool or `RayExecutor`); None: in this process. Never changes results."""
    partitions: int = 1
    """Split the plan into this many random parts of pods and nodes, each solved alone, then a
    repair pass (`solver.aggregate.partition`); 1: one plan."""
    repair: AllocatorName = "reference"
    """A partitioned plan's repair pass: first fit (reference) or the CP-SAT plan (cpsat)."""

    def __post_init__(self) -> None:
        if self.allocator not in ALLOCATORS:
            raise InputError(f"unknown allocator {self.allocator!r}; use {' or '.join(ALLOCATORS)}")
        if self.strategy not in ("pack", "spread"):
            raise InputError(f"unknown strategy {self.strategy!r}; use pack or spread")
        if self.partitions < 1:
            raise InputError(f"partitions must be at least 1, got {self.partitions}")
        if self.repair not in ALLOCATORS:
            raise InputError(f"unknown repair {self.repair!r}; use {' or '.join(ALLOCATORS)}")
        if not self.time_limit > 0:
            raise InputError(f"time limit must be positive, got {self.time_limit}")
        gates: Any = self.feature_gates
        object.__setattr__(self, "feature_gates", FeatureGates.of(gates))

    @classmethod
    def of(cls, options: Options | None = None, **changes: Any) -> Options:
        """`options` (default: the defaults) with the given fields changed."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        base = options or cls()
        values = {f.name: getattr(base, f.name) for f in fields(cls)}
        values.update(changes)
        return cls(**values)


@dataclass
class AllocationOutcome:
    """What `allocate()` decided for one pod's claims."""

    allocated: bool
    claims: list[ResourceClaim]
    """Copies of the requested claims, in order; with status.allocation when allocated."""
    reason: str | None = None
    """Why the claims could not be allocated (names claim and request where it can)."""
    allocator: str = "reference"
    node: str | None = None
    stats: dict[str, object] = field(default_factory=dict)
    plan: PodPlan | None = None
    """The one-pod plan behind this outcome, as `plan()` returns it (the Pod, its extended
    resources' status), for output that shows the Pod; None when decided before planning
    (nothing to allocate, or the only node refused the pod)."""

    def allocation(self, name: str) -> AllocationResult | None:
        for c in self.claims:
            if c.metadata.name == name or f"{c.metadata.namespace}/{c.metadata.name}" == name:
                return c.status.allocation if c.status else None
        raise KeyError(name)


def load(paths: Iterable[str | Path], *, validate: bool = True) -> Cluster:
    """Load files, directories or `-` (stdin) into a Cluster and, by default, validate it as the
    CLI does (API rules, references, CEL compilation): raises ValidationErrors with every
    problem. `Cluster.from_paths` loads without validating."""
    cluster = Cluster.from_paths(paths)
    if validate:
        errors = validate_all(cluster)
        if errors:
            raise ValidationErrors(errors)
    return cluster


def plan(
    cluster: Cluster,
    pods: Sequence[PodInput] | None = None,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    *,
    priorities: Sequence[int] | None = None,
    node_templates: Sequence[NodeTemplate | str | Path] | None = None,
    max_new_nodes: int | None = DEFAULT_MAX_NEW_NODES,
    **changes: Any,
) -> PlanOutcome:
    """Place as many (priority-weighted) pods as possible, each on one of `nodes`.

    `pods`: default every Pod with unallocated claims, or (no Pods in the input) every
    unallocated claim as its own pod. `nodes`: default the Node objects, else the slices'
    nodeNames. `priorities`: one per pod. Options fields may also be given as keywords
    (`plan(cluster, allocator="reference")`). Inputs are never modified.

    `node_templates` (NodeTemplate objects or template files): a what-if plan that may also
    add up to `max_new_nodes` copies of each template (default: as many as the pending pods
    could use, derived), fewest unplaced pods first, then least cost (`solver.whatif.model`);
    `outcome.added_nodes` / `added_slices` are the copies added; a cap that binds is reported
    in `stats["whatif_cap"]`."""
    opts = Options.of(options, **changes)
    if node_templates is not None:  # the templates' copies may be the only nodes
        existing = resolve_nodes(cluster, nodes) if nodes is not None or known_nodes(cluster) else []
        return _what_if(cluster, pods, existing, opts, priorities, node_templates, max_new_nodes)
    node_list = resolve_nodes(cluster, nodes)
    gates = opts.feature_gates
    resolved = resolve_units(cluster, pods, priorities, gates)
    units = join_shared(resolved)
    memo: dict[tuple[str, str | None], str | None] = {}
    units = [with_nodes(cluster, u, node_list, memo, gates) for u in units]
    if opts.partitions > 1:
        split = plan_partitioned(cluster, units, node_list, opts, run, make_job)
        return _per_pod(cluster, units, split, opts.feature_gates)
    return _per_pod(cluster, units, run(cluster, units, node_list, opts), opts.feature_gates)


def _what_if(
    cluster: Cluster,
    pods: Sequence[PodInput] | None,
    node_list: list[str],
    opts: Options,
    priorities: Sequence[int] | None,
    node_templates: Sequence[NodeTemplate | str | Path],
    max_new_nodes: int | None,
) -> PlanOutcome:
    """`plan` with node templates: the pods resolved on the cluster with the copies."""
    templates = [t if isinstance(t, NodeTemplate) else NodeTemplate.from_path(t) for t in node_templates]

    def job_for(c: Cluster, names: list[str]) -> Job:
        resolved = resolve_units(c, pods, priorities, opts.feature_gates)
        units = join_shared(resolved)
        memo: dict[tuple[str, str | None], str | None] = {}  # copies: one check per pod kind and node
        return make_job(c, [with_nodes(c, u, names, memo, opts.feature_gates) for u in units], names, opts)

    outcome, added, units, expanded = plan_with_templates(
        cluster, job_for, node_list, opts, templates, max_new_nodes
    )
    result = _per_pod(expanded, units, outcome, opts.feature_gates)
    result.added_nodes, result.added_slices = added.nodes, added.slices
    return result


def allocate(
    cluster: Cluster,
    claims: Sequence[str | ResourceClaim] | None = None,
    node: str | Sequence[str] | None = None,
    options: Options | None = None,
    *,
    pod: str | Pod | None = None,
    **changes: Any,
) -> AllocationOutcome:
    """Allocate `claims` together on `node`: all of them or none — a plan of one pod.

    With `pod`, the claims are the pod's unallocated claims (templates instantiated) and the
    node defaults to the pod's `spec.nodeName`. `node=None`: no node (allNodes devices only).
    With several candidate nodes the reference takes the first that fits (the scheduler's
    filter) and CP-SAT the best; `outcome.node` says which. Raises InputError / CelError /
    AllocationError for invalid input and upstream's fatal errors (on a single node also the
    per-node ones: invalid pools, an aborted search); returns `allocated=False` with a reason
    when the claims do not fit."""
    opts = Options.of(options, **changes)
    pod_obj: Pod | None = None
    if pod is not None:
        if claims is not None:
            raise InputError("give either claims or a pod, not both")
        pod_obj = cluster.pod(pod) if isinstance(pod, str) else pod
        node = node if node is not None else pod_obj.spec.node_name
        chosen = _unallocated(pod_claims(cluster, pod_obj, opts.feature_gates))
        name = pod_obj.namespaced_name
    else:
        chosen = resolve_claims(cluster, claims)
        name = ",".join(c.namespaced_name for c in chosen)
    candidates: list[str | None] = [node] if node is None or isinstance(node, str) else list(node)
    if not candidates:
        raise InputError("no candidate nodes given")
    check_nodes_known(cluster, candidates)
    if pod is None and claims is None and not chosen and (waiting := _template_pods(cluster)):
        raise InputError(
            "no ResourceClaims to allocate: the input's pods ask for claims from ResourceClaimTemplates "
            f"({', '.join(waiting[:3])}); allocate one pod with --pod NAME "
            "(Python: pod=...), or place them all with `dra-solver plan`"
        )
    refs = tuple(c.namespaced_name for c in chosen)
    members = (Member(name, pod_obj, refs, _group(pod_obj) if pod_obj else None),)
    needs = (Needs.of(pod_obj),) if pod_obj is not None else ()
    unit = Unit(name, tuple(chosen), 0, members=members, needs=needs)
    unit = with_nodes(cluster, unit, candidates, gates=opts.feature_gates)
    if not chosen and not unit.blocked and not any(n.demand for n in needs):
        return AllocationOutcome(True, [], allocator=opts.allocator, node=candidates[0])
    if len(candidates) == 1 and unit.blocked:
        return AllocationOutcome(False, [], unit.blocked[candidates[0]], opts.allocator, candidates[0])
    outcome = _per_pod(cluster, [unit], run(cluster, [unit], candidates, opts), opts.feature_gates)
    placed = outcome.pods[0]
    if not placed.placed and placed.error is not None and len(candidates) == 1:
        raise placed.error
    return AllocationOutcome(
        placed.placed,
        placed.claims,
        placed.reason,
        opts.allocator,
        placed.node if placed.placed else (candidates[0] if len(candidates) == 1 else None),
        outcome.stats,
        placed,
    )


def run(
    cluster: Cluster, units: Sequence[Unit], nodes: Sequence[str | None], options: Options
) -> PlanOutcome:
    """The one run every entry point goes through: first fit, then the chosen allocator."""
    allocator = ALLOCATORS[options.allocator]
    job = make_job(cluster, units, nodes, options)
    first = FirstFit(max_steps=allocator.first_fit_steps, progress=options.progress).plan(job)
    outcome = crowded_reasons(job, allocator.improve(job, first))
    if job.book.warnings:
        outcome.stats["warnings"] = list(job.book.warnings)
    return outcome


def make_job(cluster: Cluster, units: Sequence[Unit], nodes: Sequence[str | None], options: Options) -> Job:
    """What the allocators see of one run (a fresh CEL cache unless the options carry one).
    Pods of a gang with a topology constraint may not use nodes outside its domains
    (`in_domains`)."""
    cache = options.cache if options.cache is not None else EvalCache()
    gangs = resolve_gangs(cluster, units, options.feature_gates, nodes)
    return Job(
        cluster,
        tuple(in_domains(units, gangs, nodes)),
        tuple(nodes),
        options.feature_gates,
        cache,
        options.seed,
        options.strategy,
        options.time_limit,
        NodeBook(cluster, nodes, options.feature_gates),
        gangs,
        options.executor,
    )


def resolve_gangs(
    cluster: Cluster, units: Sequence[Unit], gates: FeatureGates, nodes: Sequence[str | None] = ()
) -> dict[str, Gang]:
    """The gangs the units' pods belong to: PodGroups with `gang.minCount`, and PodGroups with
    the basic policy and a topology constraint (minCount 1, `Gang.basic`); none when the
    GenericWorkload gate is off. A pod naming a PodGroup that is not in the input is an error
    naming it (`validate` reports it with a did-you-mean; upstream keeps the pod pending).
    A topology constraint (KEP-5732) gives the gang its domains among `nodes` (`Gang.domains`).

    Why a basic group with a topology key is a gang of minCount 1: upstream schedules every
    pod that names a PodGroup in the PodGroup cycle, whatever the policy (ScheduleOne in
    pkg/scheduler/schedule_one.go: `genericWorkloadEnabled && pod.Spec.SchedulingGroup != nil`);
    the topology plugin makes one placement per label value for any PodGroup with the
    constraint (topologyaware/topology_placement.go, GeneratePlacements: it reads
    `spec.schedulingConstraints`, not the policy), and a placement is feasible once one pod
    fits (gangscheduling.go, getMinCount: "For basic groups it returns 1"). So the group's
    placed pods share one domain, and the domain placing most of them wins — a gang whose
    all-or-nothing is vacuous. A basic group without the constraint adds nothing to place
    (`firstfit.FirstFit` still places its pods together, in the PodGroup cycle's order).

    A CompositePodGroup hierarchy (`spec.parentCompositePodGroupName`, 1.37 alpha) is refused
    rather than ignored: its minGroupCount would change which pods may be placed."""
    if not gates.GenericWorkload:
        return {}
    gangs: dict[str, Gang] = {}
    members = {m.name for u in units for m in u.members}
    seen: set[str] = set()
    for unit in units:
        for m in unit.members:
            if m.group is None or m.group in seen:
                continue
            seen.add(m.group)
            ns, name = m.group.split("/", 1)
            group = cluster.pod_groups.get((ns, name))
            if group is None:
                near = suggest(name, [n for (gns, n) in cluster.pod_groups if gns == ns])
                hint = f"; did you mean {near!r}?" if near else ""
                raise InputError(
                    f"PodGroup {m.group} not found in the input{hint}",
                    obj=f"Pod {m.name}",
                    field="spec.schedulingGroup.podGroupName",
                )
            if group.spec.parent_composite_pod_group_name is not None:
                raise InputError(
                    "a PodGroup in a CompositePodGroup hierarchy is not modelled by dra-solver "
                    "(its parent's minGroupCount decides which groups are placed)",
                    obj=group.ref,
                    field="spec.parentCompositePodGroupName",
                )
            key = _topology_key(group, gates)
            if group.min_count is None and key is None:
                continue  # basic policy: nothing to hold the pods together
            bound_nodes = [
                pod.spec.node_name
                for pod in cluster.pods.values()
                if pod.spec.scheduling_group is not None
                and pod.spec.scheduling_group.pod_group_name == name
                and pod.metadata.ns == ns
                and pod.namespaced_name not in members
                and pod.spec.node_name
                and not (pod.status and pod.status.phase in DONE_PHASES)
            ]
            domains = _domains(cluster, key, nodes, bound_nodes) if key is not None else ()
            min_count = group.min_count if group.min_count is not None else 1
            basic = group.min_count is None
            gangs[m.group] = Gang(m.group, min_count, len(bound_nodes), key, domains, basic=basic)
    return gangs


def group_claim_owners(cluster: Cluster, pod: Pod, gates: FeatureGates) -> dict[str, PodGroup]:
    """KEP-5729: the pod's claims (`namespace/name`) that are its PodGroup's group-level claims
    — the pod's `spec.resourceClaims` entry matches the PodGroup's exactly (same name, same
    resourceClaimName or resourceClaimTemplateName) — with that PodGroup. Such a claim is
    allocated once for the group and reserved for the PodGroup; pods sharing it are joined
    like pods sharing any claim (`join_shared`: one allocation, one node)."""
    group = pod_group_of(cluster, pod, gates)
    if group is None:
        return {}
    ns = pod.metadata.ns
    out: dict[str, PodGroup] = {}
    for e in pod.spec.resource_claims:
        if group.claim_entry(e) is None:
            continue
        name = e.resource_claim_name or group.generated_claim_name(e.name)
        out[f"{ns}/{name}"] = group
    return out


def _topology_key(group: PodGroup, gates: FeatureGates) -> str | None:
    """The PodGroup's topology label key (None: no constraint, or the gate is off). Upstream
    allows one constraint per PodGroup."""
    sc = group.spec.scheduling_constraints
    if not gates.TopologyAwareWorkloadScheduling or sc is None or not sc.topology:
        return None
    if len(sc.topology) > 1:
        raise InputError(
            f"{len(sc.topology)} topology constraints given; at most one is allowed",
            obj=group.ref,
            field="spec.schedulingConstraints.topology",
        )
    return sc.topology[0].key


def _domains(
    cluster: Cluster, key: str, nodes: Sequence[str | None], bound_nodes: Sequence[str | None]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The gang's topology domains over the run's `nodes`: per value of the node label `key`
    (sorted), the nodes carrying it. As upstream, pods added to a gang whose pods are already
    bound go to the bound pods' domain (none if those are in several or lack the label)."""
    by_value: dict[str, list[str]] = {}
    for n in nodes:
        node = cluster.nodes.get(n) if n is not None else None
        value = (node.metadata.labels or {}).get(key) if node is not None else None
        if n is not None and value is not None:
            by_value.setdefault(value, []).append(n)
    if bound_nodes:
        held = set()
        for n in bound_nodes:
            node = cluster.nodes.get(n) if n is not None else None
            held.add((node.metadata.labels or {}).get(key) if node is not None else None)
        if len(held) != 1 or None in held:
            return ()
        by_value = {v: ns for v, ns in by_value.items() if v in held}
    return tuple((v, tuple(by_value[v])) for v in sorted(by_value))


def in_domains(units: Sequence[Unit], gangs: dict[str, Gang], nodes: Sequence[str | None]) -> list[Unit]:
    """Units of gangs with a topology constraint, with every node outside all of the gang's
    domains blocked (a node without the label, or outside the bound pods' domain): which one
    domain the gang takes is the allocators' choice (`FirstFit`, `encoders.gangs`)."""
    out = []
    for unit in units:
        blocked = dict(unit.blocked)
        for g in unit.gang_pods(gangs):
            gang = gangs[g]
            if gang.topology is None:
                continue
            for n in nodes:
                if n not in blocked and gang.domain_of(n) is None:
                    blocked[n] = (
                        f"node {n} is in no topology domain of PodGroup {g} "
                        f"(label {gang.topology}{_held(gang)})"
                    )
        out.append(replace(unit, blocked=blocked) if len(blocked) != len(unit.blocked) else unit)
    return out


def _held(gang: Gang) -> str:
    if not gang.bound:
        return ""
    if not gang.domains:
        return "; its bound pods span domains"
    return f"; its bound pods are in {gang.domains[0][0]}"


# --- resolving pods and nodes ---------------------------------------------------------------


def resolve_claims(cluster: Cluster, claims: Sequence[str | ResourceClaim] | None) -> list[ResourceClaim]:
    """Default: every claim without status.allocation, in input order."""
    if claims is None:
        return cluster.unallocated_claims()
    out = []
    for c in claims:
        claim = c if isinstance(c, ResourceClaim) else cluster.claim(c)
        if claim.status is not None and claim.status.allocation is not None:
            raise InputError("claim is already allocated", obj=claim.ref, field="status.allocation")
        out.append(claim)
    return out


def resolve_units(
    cluster: Cluster,
    pods: Sequence[PodInput] | None,
    priorities: Sequence[int] | None,
    gates: FeatureGates | None = None,
) -> list[Unit]:
    """The pods of a plan, in input order, each with the unallocated claims it needs (`gates`
    decide whether a PodGroup's template entry is one claim for the group; None: defaults).

    Priority: `priorities` when given (one per pod), else each Pod's (spec.priority, its
    PriorityClass, the global default). Pods that share an unallocated claim become one unit
    (the claim is allocated once; see `Unit.members`), at the highest of their priorities."""
    units: list[Unit] = []
    if pods is None:
        if cluster.pods:
            for pod in cluster.pods.values():
                claims = _unallocated(pod_claims(cluster, pod, gates))
                if claims or pending(pod):
                    units.append(_pod_unit(cluster, pod, claims))
        else:
            units = [_claims_unit(c.namespaced_name, [c]) for c in cluster.unallocated_claims()]
    else:
        for i, item in enumerate(pods):
            if isinstance(item, str | Pod):
                pod = cluster.pod(item) if isinstance(item, str) else item
                units.append(_pod_unit(cluster, pod, _unallocated(pod_claims(cluster, pod, gates))))
            else:
                claims = resolve_claims(cluster, list(item))
                units.append(_claims_unit(",".join(c.namespaced_name for c in claims) or f"pod-{i}", claims))
    if priorities is not None:
        if len(priorities) != len(units):
            raise InputError(f"{len(priorities)} priorities given for {len(units)} pods")
        units = [replace(u, priority=int(p)) for u, p in zip(units, priorities, strict=True)]
    return units


def pending(pod: Pod) -> bool:
    """A pod still to be scheduled: not bound to a node, not finished."""
    return not pod.spec.node_name and not (pod.status and pod.status.phase in DONE_PHASES)


def _pod_unit(cluster: Cluster, pod: Pod, claims: list[ResourceClaim]) -> Unit:
    member = Member(pod.namespaced_name, pod, tuple(c.namespaced_name for c in claims), _group(pod))
    prio = pod_priority(cluster, pod)
    return Unit(member.name, tuple(claims), prio, members=(member,), needs=(Needs.of(pod),))


def _group(pod: Pod) -> str | None:
    """The PodGroup a pod names, `namespace/name` (the pod's namespace)."""
    group = pod.spec.scheduling_group
    return f"{pod.metadata.ns}/{group.pod_group_name}" if group is not None else None


def _claims_unit(name: str, claims: list[ResourceClaim]) -> Unit:
    refs = tuple(c.namespaced_name for c in claims)
    return Unit(name, tuple(claims), 0, members=(Member(name, None, refs),))


def join_shared(units: Sequence[Unit]) -> list[Unit]:
    """Units that share an unallocated claim, joined into one (in order of their first member):
    the claim is allocated once, and node-local devices would tie its pods to one node anyway.
    A joined unit keeps every member pod (`Unit.members`, each with its own pod's priority:
    each counts with its own weight, `Unit.weight`) and queues at the highest priority."""
    parent = list(range(len(units)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, unit in enumerate(units):
        for c in unit.claims:
            j = owner.setdefault(c.namespaced_name, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(units)):
        groups.setdefault(root(i), []).append(i)
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append(units[members[0]])
            continue
        parts = [units[i] for i in members]
        claims = {c.namespaced_name: c for u in parts for c in u.claims}
        out.append(
            Unit(
                parts[0].name,
                tuple(claims.values()),
                max(u.priority for u in parts),
                members=tuple(
                    replace(m, priority=u.priority) if len(u.members) == 1 else m
                    for u in parts
                    for m in u.members
                ),
                needs=tuple(n for u in parts for n in u.needs),
            )
        )
    return out


def resolve_nodes(cluster: Cluster, nodes: Sequence[str] | None) -> list[str]:
    """Given nodes, else the Node objects, else the nodes named by node-local slices."""
    if nodes is None:
        out = list(cluster.nodes) or known_nodes(cluster)
    else:
        out = list(nodes)
        check_nodes_known(cluster, out)
    if not out:
        raise InputError("no candidate nodes: give nodes, Node objects or node-local ResourceSlices")
    if len(set(out)) != len(out):
        raise InputError("candidate nodes must be distinct")
    return out


def known_nodes(cluster: Cluster) -> list[str]:
    """Node names the input knows: Node objects, then nodes named by node-local slices."""
    from_slices = (s.spec.node_name for s in cluster.slices if s.spec.node_name)
    return list(dict.fromkeys([*cluster.nodes, *from_slices]))


def check_nodes_known(cluster: Cluster, nodes: Sequence[str | None]) -> None:
    """With Node objects in the input (a `kubectl get nodes` dump: the list of nodes), a node not
    among them is a typo, not a node without devices: say so, with a did-you-mean, instead of
    reporting that no device matches. Without Node objects any name is accepted (a node with
    no ResourceSlice is a real node without DRA devices)."""
    if not cluster.nodes:
        return
    known = known_nodes(cluster)
    for n in nodes:
        if n is not None and n not in known:
            near = suggest(n, known)
            hint = f"; did you mean {near}?" if near else f"; known: {', '.join(known[:10])}"
            raise InputError(f"unknown node {n}: the input's Node objects do not include it{hint}")


def with_nodes(
    cluster: Cluster,
    unit: Unit,
    nodes: Sequence[str | None],
    memo: dict[tuple[str, str | None], str | None] | None = None,
    gates: FeatureGates | None = None,
) -> Unit:
    """The unit with the candidate nodes its pods may not use, and why: scheduling constraints
    (`problem.scheduling`) and claims already allocated elsewhere (`problem.pods`).

    `memo` (one per plan) keeps each refusal per (the pod's scheduling fields, node): the
    pods of one Deployment share them, so 5,000 pods on 500 nodes cost 500 checks, not 2.5
    million. The refusal's words name the node, never the pod."""
    pods = [(m.pod, pod_claims(cluster, m.pod, gates)) for m in unit.members if m.pod is not None]
    if not pods:
        return unit  # a list of claims: no scheduling constraints (and no loop over the nodes)
    memo = {} if memo is None else memo
    blocked: dict[str | None, str] = {}
    for pod, claims in pods:
        key = _scheduling_key(pod)
        held = [c for c in claims if c.status is not None and c.status.allocation is not None]
        for n in nodes:
            if n in blocked:
                continue
            if (key, n) not in memo:
                memo[(key, n)] = node_refusal(cluster, pod, n)
            why = memo[(key, n)] or (node_conflict(cluster, pod, held, n) if held else None)
            if why:
                blocked[n] = why if len(pods) == 1 else f"{pod.namespaced_name}: {why}"
    return replace(unit, blocked={n: blocked[n] for n in nodes if n in blocked})


def _scheduling_key(pod: Pod) -> str:
    """What `node_refusal` reads of a pod, canonical."""
    spec = pod.spec
    parts = {
        "nodeName": spec.node_name,
        "nodeSelector": spec.node_selector,
        "affinity": spec.affinity.dump() if spec.affinity else None,
        "tolerations": [t.dump() for t in spec.tolerations],
    }
    return json.dumps(parts, sort_keys=True, default=str)


def _per_pod(
    cluster: Cluster,
    units: Sequence[Unit],
    outcome: PlanOutcome,
    gates: FeatureGates,
) -> PlanOutcome:
    """One PodPlan per pod again (joined units split into their members, each with its own
    priority, `Member.priority`), with each placed
    claim's `status.reservedFor` naming the Pods that use it; the placed pods verified against
    the nodes' allocatable resources (`check.check_node_resources`), the scheduler's node
    filters and their claims' allocation and reservations (`check.check_placements`) and the
    gang minimums (`check.check_gangs`). The stats then describe this realized plan
    (`solver.output.summary`): objective, placed, pods, status and gap count the pods returned, not
    the model's units."""
    pods: list[PodPlan] = []
    for unit, plan_ in zip(units, outcome.pods, strict=True):
        by_ref = {c.namespaced_name: c for c in plan_.claims}
        refs = {m.name: _member_refs(m, plan_) for m in unit.members}
        if plan_.placed:
            owners: dict[str, dict[str, PodGroup]] = {
                m.name: group_claim_owners(cluster, m.pod, gates) for m in unit.members if m.pod is not None
            }
            users = {
                r: [
                    m.pod
                    for m in unit.members
                    if m.pod is not None and r in refs[m.name] and r not in owners[m.name]
                ]
                for r in by_ref
            }
            groups = {r: list({o[r].ref: o[r] for o in owners.values() if r in o}.values()) for r in by_ref}
            by_ref = {
                r: with_reservations(c, users[r], groups[r]) if users[r] or groups[r] else c
                for r, c in by_ref.items()
            }
        for m in unit.members:
            ext = {m.name: plan_.extended[m.name]} if m.name in plan_.extended else {}
            claims = [by_ref[r] for r in refs[m.name]]
            prio = m.priority if len(unit.members) > 1 else plan_.priority  # each pod its own weight
            pods.append(replace(plan_, name=m.name, claims=claims, extended=ext, pod=m.pod, priority=prio))
    pods = _reserve_held(cluster, pods, gates)
    _verify_resources(cluster, units, pods)
    _verify_placements(cluster, pods, gates)
    if gates.GenericWorkload and cluster.pod_groups:
        done = [p for p in pods if p.placed and p.pod is not None]
        violations = check_gangs(
            cluster,
            [p.pod for p in done if p.pod is not None],
            {p.pod.key: p.node for p in done if p.pod},
            topology=gates.TopologyAwareWorkloadScheduling,
        )
        if violations:
            raise CheckFailed(violations)
    realized = PlanSummary.of(PlanOutcome(pods, outcome.allocator, outcome.stats))
    return PlanOutcome(pods, outcome.allocator, {**outcome.stats, **realized.stats()})


per_pod = _per_pod
"""`_per_pod` for the incremental planner (`dra_solver.replan`), which finishes the pods it
re-planned the same way: one PodPlan per pod, reservations, the checker."""


def _verify_resources(cluster: Cluster, units: Sequence[Unit], pods: list[PodPlan]) -> None:
    objs = {m.name: m.pod for u in units for m in u.members if m.pod is not None}
    placed = []
    for p in pods:
        pod = objs.get(p.name)
        if pod is None or not p.placed or p.node is None:
            continue
        status = p.extended.get(p.name)
        served = frozenset(m.resource_name for m in status.request_mappings) if status else frozenset()
        placed.append((pod, p.node, served))
    violations = check_node_resources(cluster, placed)
    if violations:
        raise CheckFailed(violations)


def _reserve_held(cluster: Cluster, pods: list[PodPlan], gates: FeatureGates) -> list[PodPlan]:
    """Each placed pod with `PodPlan.reserved`: the claims the input had already allocated that
    it uses, reserved for it (and for its PodGroup, for a group-level claim). Why: the scheduler
    adds every pod it binds to each of its claims' `reservedFor`, not only to the claims it
    allocates; a plan's output without it would show a running pod on a claim that does not
    name it (the checker's `pod-claim-reserved`). A claim several placed pods use is copied
    once, naming all of them, and every one of those pods carries that same copy."""
    planned = {c.namespaced_name for p in pods if p.placed for c in p.claims}
    pods_of: dict[str, list[Pod]] = {}
    groups_of: dict[str, dict[str, PodGroup]] = {}
    held: dict[str, ResourceClaim] = {}
    refs: dict[str, list[str]] = {}
    for p in pods:
        if not p.placed or p.pod is None:
            continue
        owners = group_claim_owners(cluster, p.pod, gates)
        for c in pod_claims(cluster, p.pod, gates):
            ref = c.namespaced_name
            if ref in planned or c.status is None or c.status.allocation is None:
                continue
            held[ref] = c
            refs.setdefault(p.name, []).append(ref)
            if ref in owners:
                groups_of.setdefault(ref, {})[owners[ref].ref] = owners[ref]
            else:
                pods_of.setdefault(ref, []).append(p.pod)
    if not held:
        return pods
    copies = {
        r: with_reservations(c, pods_of.get(r, []), list(groups_of.get(r, {}).values()))
        for r, c in held.items()
    }
    return [replace(p, reserved=[copies[r] for r in refs[p.name]]) if p.name in refs else p for p in pods]


def _verify_placements(cluster: Cluster, pods: list[PodPlan], gates: FeatureGates) -> None:
    """The checker's placement rules on the pods this plan places (the input's bound pods are
    not the plan's doing and are not held against it), with the plan's claims and the
    reservations it adds to claims the input had allocated (`_reserve_held`)."""
    placed = [
        PodPlacement(p.pod, p.node, new=True, extended=p.extended.get(p.name))
        for p in pods
        if p.placed and p.pod is not None and p.node is not None
    ]
    claims = {c.namespaced_name: c for p in pods if p.placed for c in (*p.claims, *p.reserved)}
    violations = check_placements(cluster, placed, claims, gates, bound=False)
    if violations:
        raise CheckFailed(violations)


def _member_refs(member: Member, plan_: PodPlan) -> tuple[str, ...]:
    """The member's claims, with its special extended-resource claim when it was placed with one."""
    status = plan_.extended.get(member.name) if plan_.placed else None
    if status is None:
        return member.claims
    ns = member.name.split("/", 1)[0]
    return (*member.claims, f"{ns}/{status.resource_claim_name}")


def _template_pods(cluster: Cluster) -> list[str]:
    pods = cluster.pods.values()
    uses_template = (p for p in pods if any(e.resource_claim_template_name for e in p.spec.resource_claims))
    return [p.namespaced_name for p in uses_template]


def _unallocated(claims: list[ResourceClaim]) -> list[ResourceClaim]:
    return [c for c in claims if c.status is None or c.status.allocation is None]


__all__ = [
    "AllocationOutcome",
    "Options",
    "PlanOutcome",
    "PodPlan",
    "Unit",
    "allocate",
    "join_shared",
    "load",
    "make_job",
    "pending",
    "per_pod",
    "plan",
    "resolve_claims",
    "resolve_gangs",
    "resolve_nodes",
    "resolve_units",
    "run",
    "with_nodes",
]
