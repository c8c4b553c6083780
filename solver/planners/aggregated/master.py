"""The aggregated plan model: how many nodes of each class take which pattern.

Why: the per-device model of a whole cluster has a variable per (claim, node, device group)
and does not scale; a cluster has few node classes and pod classes (`aggregated.classes`), and a
node of class c can take any feasible pattern p (`aggregated.patterns`). Configuration /
cutting-stock form, per connected component of the (pod class x node class) compatibility
graph (a pod class k is compatible with node class c when k may use c's nodes and cap[c,k]
>= 1):

    z[c,p] in Z>=0   nodes of class c that take pattern p
    y[k]   in Z>=0   pods of class k placed
    sum_p z[c,p]            <= mult[c]                     (mu[c])
    y[k] - sum_{c,p} p[k] z[c,p] <= 0,   y[k] <= demand[k]  (pi[k])
    maximise sum_k w[k] y[k],  w[k] = the weight of one unit of k (`PodClass.weight`: each
                               pod of the unit with claim_weight(its priority))

Gangs (PodGroups with minCount, `encoders.gangs`): a gang's pods are pod classes of their own
(`PodClass.gang`), all in one component, and the master adds, per gang G with `need` = minCount
less the pods placed whenever G is (bound already, or without claims):

    on[G] in {0, 1};   y[k] <= demand[k] * on[G]  (k in G);   sum_{k in G} y[k] >= need * on[G]

and maximises (1 + #gangs) * sum_k w[k] y[k] + sum_G on[G]: the placed weight first, then the
gangs run (the per-device model's "gangs" stage). The LP relaxation has the same rows with
on[G] in [0, 1].

A pattern is an upper bound on what a node takes (feasibility is downward closed), so the
model is exact over all feasible patterns. Patterns are generated (column generation): the
LP relaxation (GLOP) gives duals pi, mu; for each node class the pricing problem max_p
sum_k pi[k] p[k] is the single-node exact model (`patterns.NodeModel`); a pattern with
value > mu[c] enters. For any pi >= 0 the Lagrangian bound

    UB = sum_k demand[k] * max(0, w[k] - pi[k]) + sum_c mult[c] * max_p sum_k pi[k] p[k]

(a gang's classes contribute max(0, the best sum_{k in G} (w[k] - pi[k]) y[k] with at least
`need` pods) instead of their separate terms: `_pod_value`) bounds every plan (CP-SAT's
proven pricing bound stands in for the max), and equals the LP
value when no column prices out. The integer model over the generated columns (plus the
patterns of the first-fit plan, so it never starts below first fit) is then solved by CP-SAT;
the plan is proven optimal when its value reaches floor(UB).

What-if (`NodeCosts`, `solver.planners.whatif`): the nodes a plan may add are copies of node
templates, each with a cost; node classes split by origin (existing nodes at cost 0, each
template's copies one class at cost[t], mult = its copies). The objective becomes

    maximise  M * sum_k w[k] y[k]  -  sum_{c,p} cost[c] z[c,p],   M = sum_c cost[c] mult[c] + 1

M exceeds any total cost, so the one objective is lexicographic: weight first, then cost. A
pattern enters class c when pi.p > mu[c] + cost[c] (its reduced cost), and the Lagrangian
bound reads

    UB = sum_k demand[k] max(0, M w[k] - pi[k]) + sum_c mult[c] max(0, max_p pi.p - cost[c])

(without costs: M = 1, cost = 0, the bound above). A plan with weight W and cost C has
objective M W - C; if it reaches floor(UB) it is proven: no plan has more weight (that would
be worth >= M(W+1) - (M-1) > M W - C), and none with weight W costs less. Otherwise the plan
reports the weight bound ceil(UB / M) and the cost bound max(0, M W - UB). When a component
does not reach floor(UB) — the LP relaxation's fractional nodes are cheaper than any integer
plan, as when pod sizes divide the node's devices — and the caps are proven, every maximal
pattern of its node classes is listed where there are few (`solver.planners.aggregated.allpatterns`);
the integer model over them is the whole problem, so CP-SAT's OPTIMAL over it proves the plan
(cost bound = cost). Then, as without costs, the patterns a better plan could use are
enumerated by their reduced cost.

Expansion is deterministic: node classes in order, each class's nodes in name order take the
chosen patterns (columns in generation order), and each class's pods, in input order, fill
the patterns' slots up to y[k]. The devices of each node are then chosen by the single-node
allocator and checked (`policy.Cpsat`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from ortools.sat.python.cp_model_helper import CpSolverStatus  # not cp_model: `encoders.model`

from dra_solver.encoders.model import new_cp_model

from ... import interrupt
from ...api.cluster import Cluster
from ...cel import EvalCache
from ...cpsat import cp_solver, found, work_done
from ...deadline import Deadline, passed
from ...executors import run_units
from ...gates import FeatureGates
from ...planning.gangs import claimed_units, gang_needs
from ...planning.job import Job, Unit, book_limits
from ...planning.outcome import PlanOutcome, Stats, Status
from ...problem.resources import Amounts
from ..bounds import aggregated_status
from .allpatterns import enumerate_classes
from .classes import (
    NodeClass,
    NodeClasses,
    PodClass,
    UnitsByIndex,
    kind_facts,
    node_classes,
    pod_classes_within,
    twin_key,
    unit_facts,
)
from .patterns import (
    MAX_COPIES,
    Feasibility,
    ModelContext,
    ModelMemo,
    NodeModel,
    Pattern,
    cap,
)

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

MAX_CLASS_SHARE = 0.5
"""Aggregate when node classes are at most this share of the nodes, or pod classes of the pods."""
PER_DEVICE_MAX = 20_000
"""Pods x nodes up to which the per-device model is small enough to plan a job alone (when pods
hardly repeat) or to close an aggregated plan's gap (`policy.Cpsat`); `Options.per_device_max` replaces it
for a run."""
MAX_ROUNDS = 200
"""Column-generation rounds per component."""
EPS = 1e-6


@dataclass
class AggregatedPlan:
    """Which pods go to which node (devices are chosen at expansion), with the model's facts."""

    placements: dict[str, list[int]]
    """Node -> unit indices placed there, nodes in name order within their class (a template's
    copies: in copy-number order)."""
    ctx: ModelContext
    status: Status
    """The model's own (`aggregated_status`): OPTIMAL (value = floor(UB)) or FEASIBLE (a gap
    remains). The plan's is its expansion's verdict."""
    objective: int
    """The placed weight (sum_k w[k] y[k]; without the cost of added nodes)."""
    bound: int
    """No plan places more weight (what-if: ceil(UB / M), module docstring)."""
    stats: Stats = field(default_factory=lambda: Stats())
    bound_proven: bool = True
    """Whether `bound` bounds every plan of the exact single-node models: False when a cap
    stopped at MAX_COPIES (a node may take more pods of a class than any pattern holds) or an
    integer solution beat a component's bound (then it was no bound)."""
    cost: int = 0
    """What-if: the cost of the nodes the plan adds (sum cost[c] z[c, p])."""


@dataclass(frozen=True)
class NodeCosts:
    """What-if plans (`solver.planners.whatif`): per node a plan may add, its cost and the
    template it copies; an existing node is in neither (cost 0). Node classes never mix the
    copies of two templates, or copies and existing nodes, and a template's copies are
    expanded in copy-number order (`name-1, name-2, ...`), so the copies a plan uses are a
    prefix of each template's."""

    cost: Mapping[str, int]
    template: Mapping[str, int]
    """Node -> the index of the template it is a copy of."""


@dataclass
class _Component:
    pods: list[int]
    nodes: list[int]


def not_aggregated(job: Job) -> str | None:
    """Why the aggregated model does not take this job, or None: a gang with a topology
    constraint, pods of a gang that share a claim or have none (it counts placed units as
    the gang's pods, and its objective has no term for pods that follow their gang), a pod
    asking for an extended resource a DeviceClass maps (DRA may serve it, so its claims
    depend on the node), pods without claims under node limits."""
    if any(g.topology for g in job.gangs.values()):
        return "a gang has a topology constraint"
    if any(u.gang_pods(job.gangs) and (len(u.members) > 1 or not u.claims) for u in job.units):
        return "pods of a gang share a claim or have none"
    mapping = job.book.mapping
    if any(r in mapping for u in job.units for n in u.needs for r in n.demand):
        return "a pod asks for an extended resource DRA may serve"
    if book_limits(job, job.nodes) and any(not u.claims for u in job.units):
        return "pods without claims take node resources"
    return None


def _asked(job: Job, what_if: bool) -> tuple[list[str], list[int]] | str:
    """The nodes and the pods with claims the model would plan (those some node does not
    refuse), or why there are too few for it to pay: fewer than two of either (what-if
    plans even one pod on one node: its other path is greedy), or a node that is not one."""
    if any(n is None for n in job.nodes) or (len(job.nodes) < 2 and not what_if):
        return "fewer than two nodes, or no node"
    names = [n for n in job.nodes if n is not None]
    todo = [i for i, u in enumerate(job.units) if u.claims and any(n not in u.blocked for n in names)]
    if not todo:
        return "no pod with claims may be placed"
    if len(todo) < 2 and not what_if:  # one pod: its node and devices follow the strategy's preferences
        return "fewer than two pods may be placed"
    return names, todo


def aggregate(
    job: Job,
    first: PlanOutcome | None,
    cost: NodeCosts | None = None,
    *,
    force: bool = False,
    bound_only: bool = False,
    first_fits: bool = False,
) -> AggregatedPlan | str:
    """The aggregated plan of `job`, or why it does not apply (then the exact per-device model
    plans, or what-if's greedy). One model for every caller: `policy.Cpsat` (the plan),
    `planners.partition` (`bound_only`: column generation only, no placements — the proven
    upper bound a partitioned plan's gap is measured to) and `planners.whatif` (`cost`: the
    nodes a plan may add, with their cost; module docstring, "What-if").

    `first`: the first-fit plan, whose node patterns seed the columns and hint the integer
    model, and which tells the pods without claims that follow their gang (`gang_needs`);
    None: no plan yet. The budget is `job.time_limit` of CP-SAT work in deterministic seconds
    (`patterns.ModelContext.budget`: the same input and seed give the same plan); the wall clock
    only through an explicit `job.deadline` (`solver.deadline`). `force`: aggregate whatever the
    number of classes (tests). Components run on `job.executor` (None: here, one after another) — the plan is
    the same either way.

    With `cost` the model applies whenever it can (no test of whether it pays: the other
    what-if path is greedy, not the exact per-device model), also to one pod or one node.

    `job.memo` (`Options.memo`): single-node answers kept across runs on one cluster
    (`patterns.ModelMemo`: the caps' searches and device allocations, keyed by what decides
    them, their work charged again: the same plan as without it, for less CPU), for a caller
    that plans parts of it again and again (`replan.planner.Planner`). `first_fits`: every node's pods in
    `first` are known to fit together in the exact model (a checked plan of pods no model judges
    more strictly than upstream, `planners.bounds.sequential_units`: `replan.local`), so its patterns
    are columns without a search."""
    start = time.perf_counter()  # for the statistics only
    if (why := not_aggregated(job)) is not None:
        return f"{why} (not aggregated yet)"
    what_if = cost is not None
    asked = _asked(job, what_if)
    if isinstance(asked, str):
        return asked
    names, todo = asked
    units = job.units
    gang_of = {i: g for i, u in enumerate(units) for g in u.gang_pods(job.gangs)}
    # Cut by the deadline (None): the node classes stop at their first look too, and say so.
    pods = pod_classes_within(units, todo, gang_of, job.deadline) or []
    small = len(todo) * len(names) <= (PER_DEVICE_MAX if job.per_device_max is None else job.per_device_max)
    pays = force or bound_only or what_if
    if not pays and small and len(pods) > MAX_CLASS_SHARE * len(todo):
        # Pods hardly repeat, so classes save little, and the per-device model over every pod
        # and node is small: it plans alone (an unconverged column generation would spend the
        # budget first, then hand it a gap to close).
        return f"{len(pods)} pod classes / {len(todo)} pods: the per-device model is small enough"
    found = node_classes(job.cluster, units, pods, names, job.gates, job.cache, job.book.free, job.deadline)
    classes = _planned_classes(found, cost, force, len(pods), len(todo), len(names))
    if isinstance(classes, str):
        return classes
    ncls, costs = classes
    ctx = ModelContext(
        job.cluster,
        units,
        pods,
        job.gates,
        job.cache,
        job.seed,
        job.time_limit,
        job.deadline,
        views=found.views,
        free=dict(job.book.free),
        memo=job.memo if isinstance(job.memo, ModelMemo) else None,
    )
    if (cut := _cut_before_a_plan(job, ctx, first, cost, bound_only)) is not None:
        return cut
    caps, caps_proven = _caps(ctx, units, pods, ncls)
    if (cut := _cut_before_a_plan(job, ctx, first, cost, bound_only)) is not None:
        return cut
    t_classes = time.perf_counter() - start
    feas = Feasibility(ctx)
    columns: dict[int, list[Pattern]] = {c.index: [] for c in ncls}
    first_nodes = {} if first is None else first.placed_nodes()
    first_fit_columns(ncls, pods, first_nodes, feas, columns, known=first_fits)
    placements: dict[str, list[int]] = {}
    total_obj, total_ub, proven, bound_ok = 0, 0, caps_proven, caps_proven
    weight, spent, integer_proven = 0, 0, True
    comps = _components(pods, ncls, caps)
    needs = {g: v for g, v in gang_needs(job, claimed_units(job), first).items() if v > 0}
    # M of the module docstring: more than any total cost, so weight comes first (1: no cost)
    live = {c for (c, _), v in caps.items() if v > 0}
    scale = Scale(costs, sum(costs[c] * ncls[c].mult for c in live) + 1)
    shared = _Shared(ctx, ncls, columns, caps, first_nodes, bound_only, needs, scale, caps_proven)
    tasks = [_task(shared, comp) for comp in comps]
    rounds = 0
    enumerated: list[int] = []
    for comp, done in zip(comps, run_units(job.executor, solve_component, tasks), strict=True):
        columns.update(done.columns)
        rounds += done.rounds
        ctx.solves += done.solves
        ctx.charge(done.spent)
        if done.cut_short and ctx.deadline is not None:
            ctx.deadline.fire()
        total_obj += done.objective
        total_ub += done.bound
        bound_ok &= done.objective <= done.bound  # else the "bound" was none: not raised to fit
        if done.all_patterns is not None:
            enumerated.append(done.all_patterns)
        if bound_only:
            continue
        proven &= done.objective >= done.bound
        integer_proven &= done.integer_proven
        weight += sum(pods[k].weight * n for k, n in done.y.items())
        spent += sum(costs[c] * n for (c, _), n in done.z.items())
        placements.update(expand_patterns(pods, ncls, columns, done.z, done.y, comp.pods, comp.nodes))
    stats: Stats = {
        "pod_classes": len(pods),
        "node_classes": len(ncls),
        "components": len(comps),
        "columns": sum(len(v) for v in columns.values()),
        "rounds": rounds,
        "single_node_solves": ctx.solves,
        "classes_time": round(t_classes, 3),
        "model_time": round(time.perf_counter() - start, 3),
    }
    if cost is None:
        status = aggregated_status(total_obj, proven)
        return AggregatedPlan(placements, ctx, status, total_obj, total_ub, stats, bound_proven=bound_ok)
    # What-if: the objective is M * weight - cost; a plan reaching floor(UB) is proven (no plan
    # has more weight, none with as much costs less), else weight <= ceil(UB / M) and a plan of
    # weight W costs at least M * W - UB (module docstring, "What-if").
    stats["whatif_model"] = "aggregated (template multiplicities as variables)"
    big = scale.big
    stats["cost_bound"] = spent if proven else max(0, big * weight - total_ub)
    if enumerated:
        stats["whatif_patterns"] = f"all {sum(enumerated)} maximal patterns"
    if not integer_proven and not proven:
        stats["whatif_integer"] = "not proven over the generated columns"
    weight_bound = weight if proven else (total_ub + big - 1) // big
    status = aggregated_status(weight, proven)
    return AggregatedPlan(
        placements, ctx, status, weight, weight_bound, stats, bound_proven=bound_ok, cost=spent
    )


def _cut_before_a_plan(
    job: Job, ctx: ModelContext, first: PlanOutcome | None, cost: NodeCosts | None, bound_only: bool
) -> AggregatedPlan | None:
    """A plan placing nothing, its bound unproven, when the deadline (`--timeout`) has passed
    before the model of a plan without first fit's (`first` None: `policy.Cpsat.
    without_first_fit`) solved its components; else None. Why: the caps and the single-node
    models of thousands of nodes take seconds, and such a plan is dropped anyway (first fit
    runs next, in the time left)."""
    if first is not None or cost is not None or bound_only or not passed(job.deadline):
        return None
    stats: Stats = {"aggregated_cut": "the deadline passed before the model had a plan"}
    return AggregatedPlan({}, ctx, Status.FEASIBLE, 0, 0, stats, bound_proven=False)


def _planned_classes(
    found: NodeClasses, cost: NodeCosts | None, force: bool, pods: int, todo: int, names: int
) -> tuple[list[NodeClass], list[int]] | str:
    """The node classes the model plans and each one's cost (what-if's split by origin,
    `_split`; else none), or why the model does not apply: nodes not independent, an error
    in the precompute, or (unless `force` or what-if) classes that save little for pods and
    nodes alike (`pods` pod classes of `todo` pods, the classes of `names` nodes)."""
    if found.cut:
        return found.cut
    if found.coupled:
        return f"nodes are not independent: {found.coupled}"
    if found.errors:
        return f"precompute reports an error: {found.errors}"
    ncls = found.classes
    if cost is not None:
        return _split(ncls, cost)
    if not force and len(ncls) > MAX_CLASS_SHARE * names and pods > MAX_CLASS_SHARE * todo:
        return f"{pods} pod classes / {todo} pods, {len(ncls)} node classes / {names} nodes"
    return ncls, [0] * len(ncls)


def _split(classes: list[NodeClass], cost: NodeCosts) -> tuple[list[NodeClass], list[int]]:
    """Node classes split by origin (existing nodes; each template's copies), template copies
    in copy-number order (so the expansion uses `-1..-m`), and each class's cost."""
    out: list[NodeClass] = []
    costs: list[int] = []
    for c in classes:
        groups: dict[int, list[str]] = {}
        for n in c.nodes:
            groups.setdefault(cost.template.get(n, -1), []).append(n)
        for o in sorted(groups):
            ns = groups[o]
            if o >= 0:
                ns.sort(key=lambda n: int(n.rsplit("-", 1)[1]))
            out.append(NodeClass(len(out), tuple(ns), c.allowed, c.signature))
            costs.append(cost.cost.get(ns[0], 0))
    return out, costs


@dataclass(frozen=True)
class Scale:
    """The objective's scale: maximise M * sum_k w[k] y[k] - sum_c cost[c] z[c, p] (module
    docstring); without node costs M = 1 and every cost is 0, the plain placed weight."""

    cost: list[int]
    """Per node class, what one of its nodes costs (0: an existing node)."""
    big: int = 1
    """M: more than any total cost, so weight comes first."""

    def floor(self, ub: float) -> int:
        """floor(ub), forgiving the LP's float error: absolute without costs, relative to the
        bound with them (the objective is then scaled by M)."""
        return int(ub + (EPS if self.big == 1 else EPS * max(1.0, abs(ub))))

    @property
    def costs(self) -> list[int] | None:
        """The per-class costs for the LP and the integer model (None: no costs)."""
        return self.cost if self.big > 1 else None


@dataclass(frozen=True)
class Master:
    """One component's master problem as the functions that build its models read it: the
    run's single-node context, the pod and node classes, the component's own (`pod_ids`,
    `node_ids`), the objective's scale and the component's gangs (gang -> need).

    Why one value: column generation (`_generate`), the enumeration (`_enumerate`), the integer
    master and its hint each read most of these, and passed one by one they took up to a
    dozen arguments (in OR-tools' samples' style: small model-building functions over one
    description of the problem)."""

    ctx: ModelContext
    pods: list[PodClass]
    ncls: list[NodeClass]
    pod_ids: Sequence[int]
    node_ids: Sequence[int]
    scale: Scale
    gangs: Mapping[str, int] = field(default_factory=dict)


def _caps(
    ctx: ModelContext,
    units: Sequence[Unit],
    pods: list[PodClass],
    ncls: list[NodeClass],
) -> tuple[dict[tuple[int, int], int], bool]:
    """cap[c, k] for every node class c and pod class k it allows, and whether all are proven.
    Pod classes that differ only in their gang have the same pods: the cap is computed once,
    for the one with the largest demand, and cut to each one's demand. With `ctx.memo`, each
    search is keyed by the node's view up to names (`classes.twin_key`, where there is one) and
    free node resources, and the pod class's claims and node-resource demand
    (`patterns.ModelMemo`); else within this call by node class, so that classes of one kind
    (`pod_kinds`: priorities of one shape) share the searches their doublings have in common,
    each charged its work as if searched again (the same caps and budget left as without it)."""
    facts = [unit_facts(units[k.units[0]]) for k in pods]
    rep: dict[Hashable, int] = {}
    for k in pods:
        if facts[k.index] not in rep or pods[rep[facts[k.index]]].demand < k.demand:
            rep[facts[k.index]] = k.index
    rep_of = {k.index: rep[facts[k.index]] for k in pods}
    twins: dict[int, Hashable] = {}
    if ctx.memo is not None and ctx.views is not None:
        for c in ncls:
            twin = twin_key(ctx.cluster, ctx.views, c.nodes[0])
            if twin is not None:
                free = ctx.free.get(c.nodes[0])
                twins[c.index] = (twin, tuple(sorted(free.items())) if free is not None else None)
    seen: dict[tuple[int, int], tuple[int, bool]] = {}
    caps: dict[tuple[int, int], int] = {}
    proven = True
    local = ModelMemo()
    for c in ncls:
        for ki in sorted(c.allowed):
            key = (c.index, rep_of[ki])
            if key not in seen:
                r = rep_of[ki]
                if c.index in twins:
                    seen[key] = cap(ctx, c.nodes[0], r, (twins[c.index], facts[r][0], facts[r][4]))
                else:
                    seen[key] = cap(ctx, c.nodes[0], r, (c.index, facts[r][0], facts[r][4]), local)
            caps[(c.index, ki)] = min(seen[key][0], pods[ki].demand)
            proven &= seen[key][1]
    return caps, proven


@dataclass(frozen=True)
class ComponentTask:
    """One connected component of the aggregated model as plain, picklable data: everything
    `solve_component` reads, and nothing of the rest of the cluster.

    `views` holds, per node class of the component, its representative node's view of the
    cluster (`classes.LocalViews`); `units` the first pods of each pod class (as many as a
    single-node model may take); `seconds` the budget of deterministic work; `deadline` the
    caller's explicit one (it travels as the seconds it has left: a worker's clock is its own)."""

    comp: _Component
    pods: list[PodClass]
    ncls: list[NodeClass]
    columns: dict[int, list[Pattern]]
    caps: dict[tuple[int, int], int]
    first_nodes: dict[int, str]
    units: dict[int, Unit]
    views: dict[str, Cluster]
    free: dict[str | None, Amounts | None]
    gates: FeatureGates
    seed: int
    seconds: float
    scale: Scale
    """The objective's node costs and M (what-if; else the placed weight alone)."""
    bound_only: bool = False
    """Stop after column generation: the bound, no integer solution."""
    gangs: dict[str, int] = field(default_factory=dict)
    """The component's gangs (those of its pod classes) -> need (`aggregate`)."""
    caps_proven: bool = False
    """Every cap of the run is proven (what-if: then every maximal pattern may be listed)."""
    deadline: Deadline | None = None


@dataclass(frozen=True)
class ComponentResult:
    """What one component decided: its node classes' columns (the pool the choices index),
    the integer solution, its value and proven bound, and the work done (stats)."""

    columns: dict[int, list[Pattern]]
    z: dict[tuple[int, int], int]
    y: dict[int, int]
    objective: int
    bound: int
    rounds: int
    solves: int
    spent: float = 0.0
    """CP-SAT work done, in deterministic seconds (`patterns.ModelContext.budget`)."""
    all_patterns: int | None = None
    """What-if: how many maximal patterns were listed (`aggregated.allpatterns`), if they were."""
    integer_proven: bool = True
    """Whether CP-SAT proved the integer model optimal over the columns it was given."""
    cut_short: bool = False
    """The explicit deadline passed in this component (`solver.deadline`)."""


@dataclass(frozen=True)
class _Shared:
    """What every component's task is cut from (`_task`): the run's context and node classes,
    the columns so far, the caps, the first-fit plan's nodes, the gangs' needs, the objective's
    scale and the run's flags (`ComponentTask`). Why: `aggregate` cuts one task per component
    out of the same parts."""

    ctx: ModelContext
    ncls: list[NodeClass]
    columns: dict[int, list[Pattern]]
    caps: dict[tuple[int, int], int]
    first_nodes: Mapping[int, str]
    bound_only: bool
    gangs: Mapping[str, int]
    scale: Scale
    caps_proven: bool


def _task(shared: _Shared, comp: _Component) -> ComponentTask:
    """The component's part of the run, cut out of `shared.ctx` (see `ComponentTask`)."""
    ctx, ncls, columns, caps, gangs = shared.ctx, shared.ncls, shared.columns, shared.caps, shared.gangs
    pods = list(ctx.pods)
    units: dict[int, Unit] = {}
    for k in comp.pods:
        for i in pods[k].units[:MAX_COPIES]:
            units[i] = ctx.units[i].slim()
    mine = {i for k in comp.pods for i in pods[k].units}
    reps = [ncls[c].nodes[0] for c in comp.nodes]
    return ComponentTask(
        comp,
        pods,
        ncls,
        {c: list(columns[c]) for c in comp.nodes},
        {(c, k): v for (c, k), v in caps.items() if c in comp.nodes},
        {i: n for i, n in shared.first_nodes.items() if i in mine},
        units,
        {n: _shipped(ctx.local(n), n) for n in reps},
        {n: ctx.free.get(n) for n in reps},
        ctx.gates,
        ctx.seed,
        ctx.left(),
        shared.scale,
        shared.bound_only,
        {g: v for g, v in gangs.items() if any(pods[k].gang == g for k in comp.pods)},
        shared.caps_proven,
        ctx.deadline,
    )


def _shipped(view: Cluster, node: str) -> Cluster:
    """A node's view as a component takes it to its worker: what its single-node models read
    (the view's slices and the claims holding their devices, DeviceClasses, taint rules, the
    node itself and the pods bound to it), without the rest of the cluster's pods and nodes
    and the index of every object — which a view shares with the cluster, and an executor
    would otherwise pickle once per node class (at 50,000 pods, most of a plan's shipping)."""
    return replace(
        view,
        pods={k: p for k, p in view.pods.items() if p.spec.node_name == node},
        nodes={node: view.nodes[node]} if node in view.nodes else {},
        _identities={},
    )


_Solution = tuple[dict[tuple[int, int], int], dict[int, int], int, bool]
"""The integer master's answer (`integer_master`): z, y, the objective and whether it is proven."""


def solve_component(task: ComponentTask) -> ComponentResult:
    """Column generation, the integer master and (when a gap remains) pattern enumeration for
    one component — a pure function of `task`, so it may run on any executor.

    Why it is self-contained: components share no node class and no pod class, so their
    models never interact; each gets a fresh CEL cache (it never changes results) and its own
    budget of `task.seconds`."""
    comp, pods, ncls, caps = task.comp, task.pods, task.ncls, task.caps
    ctx = _worker_context(task)
    master = Master(ctx, pods, ncls, comp.pods, comp.nodes, task.scale, task.gangs)
    columns = {c: list(v) for c, v in task.columns.items()}
    feas = Feasibility(ctx)
    _single_class_columns(master, caps, columns, feas)
    models = {
        c: NodeModel(ctx, ncls[c].nodes[0], {k: caps.get((c, k), 0) for k in comp.pods}) for c in comp.nodes
    }
    ub, rounds, converged = _generate(master, columns, models, feas)
    cut = ctx.deadline is not None and ctx.deadline.fired
    if task.bound_only:
        return ComponentResult(columns, {}, {}, 0, ub, rounds, ctx.solves, ctx.spent, cut_short=cut)
    solve = partial(integer_master, master, columns, first_nodes=task.first_nodes)
    kinds = pod_kinds(pods, comp.pods, task.units)
    if kinds:
        # The columns hold the patterns the LP wanted, each with its own mix of the priorities
        # of one shape, and the best plan may need another mix of the same shapes. The master
        # counts the slots per kind (`kind_master`): every mix of the columns' shapes, so at
        # least the plan of the master over the columns as they are, and the same proofs —
        # without first spending a budget on that master, which cannot close such a gap
        # (`replan.local`: 0.5 deterministic seconds of a 1 s update, for a plan the kind
        # master then finds in a hundredth of that).
        solve = partial(solve, kind_of=kinds)
    best = solve(ub)
    best, ub, listed = _every_pattern(master, task, solve, columns, feas, best, ub)
    known: Mapping[int, list[Pattern]] = columns
    if best[2] < ub and converged is not None and kinds:
        # Enumerate kind patterns, not class patterns: one per mix of shapes instead of one per
        # split of each shape among its priorities (`_kind_pricing`).
        priced = _kind_pricing(master, task, columns, kinds, feas)
        if priced is not None:
            ub = min(ub, priced[2])
            if priced[1] is not None:  # else the class patterns are enumerated, as before
                models, converged = priced[0], priced[1]
                known = _kind_columns(columns, comp.nodes, kinds)
    if best[2] < ub and converged is not None:
        best, ub = _enumerate_patterns(master, solve, columns, models, converged, known, best, ub)
    cut = ctx.deadline is not None and ctx.deadline.fired
    z, y, obj, optimal = best
    return ComponentResult(columns, z, y, obj, ub, rounds, ctx.solves, ctx.spent, listed, optimal, cut)


def _worker_context(task: ComponentTask) -> ModelContext:
    """The single-node models' context of a component on its worker: the views, units and free
    resources it was shipped, a fresh CEL cache and the task's own budget and deadline."""
    return ModelContext(
        Cluster(),
        task.units,
        task.pods,
        task.gates,
        EvalCache(),
        task.seed,
        task.seconds,
        task.deadline,
        free=task.free,
        fixed_views=task.views,
    )


def _single_class_columns(
    master: Master, caps: Mapping[tuple[int, int], int], columns: dict[int, list[Pattern]], feas: Feasibility
) -> None:
    """Seed each node class's columns with one pattern per pod class it takes: as many of its
    pods as the cap allows, and nothing else (feasible: the cap is what a node takes alone),
    so the first restricted LP has a column for every pod class a node may hold."""
    for c in master.node_ids:
        for k in master.pod_ids:
            if caps.get((c, k), 0) > 0:
                pat = tuple(caps[(c, k)] if j == k else 0 for j in range(len(master.pods)))
                feas.record(c, pat, True)
                add_column(columns[c], pat)


def _every_pattern(
    master: Master,
    task: ComponentTask,
    solve: Callable[[int], _Solution],
    columns: dict[int, list[Pattern]],
    feas: Feasibility,
    best: _Solution,
    ub: int,
) -> tuple[_Solution, int, int | None]:
    """What-if, when the integer plan `best` is below the bound `ub` and every cap is proven:
    every maximal pattern of the component's node classes joins `columns` where there are few,
    and the integer model over them is solved again. Returns the plan, the bound (the plan's
    value when CP-SAT proved it: optimal over every maximal pattern, no plan is worth more) and
    how many patterns were listed (None: not listed).

    Why: what-if's LP relaxation sits below every integer plan when pod sizes divide the
    nodes' devices (fractional nodes are cheaper); the integer model over every maximal
    pattern is the whole problem."""
    ctx = master.ctx
    if master.scale.costs is not None and task.caps_proven and best[2] < ub and ctx.left() > 0:
        every = _all_patterns(ctx, task.comp, master.ncls, task.caps, feas)
        if every is not None:
            for c, pats in every.items():
                for pat in pats:
                    add_column(columns[c], pat)
            listed = sum(len(v) for v in every.values())
            best = solve(ub)
            if best[3]:
                ub = best[2]  # optimal over every maximal pattern: no plan is worth more
            return best, ub, listed
    return best, ub, None


def _enumerate_patterns(
    master: Master,
    solve: Callable[[int], _Solution],
    columns: dict[int, list[Pattern]],
    models: dict[int, NodeModel],
    duals: _Duals,
    known: Mapping[int, list[Pattern]],
    best: _Solution,
    ub: int,
) -> tuple[_Solution, int]:
    """Close the gap between the plan `best` and the bound `ub` by enumeration: the `known`
    patterns forbidden in the pricing `models`, batches of patterns a better plan could use
    (`_enumerate`, from the converged `duals`) join `columns`, and the integer master is solved
    again after each, keeping the best plan. Returns the plan and the bound (its value, once
    every such pattern is in the pool and CP-SAT proved it over them)."""
    done: set[int] = set()
    for c in master.node_ids:
        for pat in known[c]:
            models[c].forbid(pat)
    z, y, obj, optimal = best
    while obj < ub and master.ctx.left() > 0:
        added = _enumerate(master, columns, models, duals, obj, done)
        z2, y2, obj2, restricted = solve(ub)
        if obj2 >= obj:  # a re-solve cut short (budget, deadline) may find less: keep the best
            z, y, obj, optimal = z2, y2, obj2, restricted
        if len(done) == len(master.node_ids) and restricted:
            ub = obj  # every pattern of a better plan is in the pool, and CP-SAT proved obj
        if not added:
            break
    return (z, y, obj, optimal), ub


def kind_pods(pods: Sequence[PodClass], pod_ids: Sequence[int], kind_of: Mapping[int, int]) -> list[PodClass]:
    """`pods` with each kind's first class holding the shipped units (`_task`: a class's first
    MAX_COPIES) of all its classes: the copies of a kind model (`_kind_pricing`)."""
    out = list(pods)
    for r, ks in _by_kind(pod_ids, kind_of).items():
        if len(ks) > 1:
            out[r] = replace(pods[r], units=tuple(i for k in ks for i in pods[k].units[:MAX_COPIES]))
    return out


def _kind_pricing(
    master: Master,
    task: ComponentTask,
    columns: dict[int, list[Pattern]],
    kind_of: Mapping[int, int],
    feas: Feasibility,
) -> tuple[dict[int, NodeModel], _Duals | None, int] | None:
    """Column generation over kind patterns (`pod_kinds`), for the enumeration that closes a
    gap: per node class a pricing model with copies of each kind (its classes' units merged,
    `kind_pods`) and the LP with a row per kind (`restricted_lp`); its kind patterns join
    `columns` (as counts on the kind's first class, which `_kind_columns` keeps). Returns the
    kind models, the final duals when it converged with every pricing problem proven (None
    else), and the floor of its Lagrangian bound (sound like the classes': every class plan is
    a kind plan of the same weight); None when a kind has more copies than a model holds.

    Why: the LP's duals price a kind's classes alike where their weights sit above the kind's
    dual, so enumerating class patterns lists every split of a mix of shapes among the
    priorities (`skewed_cluster` at 1,000 pods: 56 CPU s); the kind master fills a kind's slots
    with any of its classes anyway. Copies of a kind on a node class: the cap of its classes
    (`_caps`: the node's cap, cut to each class's demand) where one is below its demand, else
    the sum of their demands — at least what any plan puts there."""
    ctx, comp, pods, ncls, caps = master.ctx, task.comp, task.pods, task.ncls, task.caps
    groups = _by_kind(comp.pods, kind_of)
    kpods = kind_pods(pods, comp.pods, kind_of)
    models: dict[int, NodeModel] = {}
    for c in comp.nodes:
        copies: dict[int, int] = {}
        for r, ks in groups.items():
            mine = [caps.get((c, k), 0) for k in ks]
            short = [n for n, k in zip(mine, ks, strict=True) if n < pods[k].demand]
            copies[r] = min(short) if short else sum(mine)
            if copies[r] > MAX_COPIES:
                return None
        models[c] = NodeModel(ctx, ncls[c].nodes[0], copies, kpods)
    kcols = _kind_columns(columns, comp.nodes, kind_of)
    ub, _, converged = _generate(master, kcols, models, feas, kind_of)
    for c in comp.nodes:
        for pat in kcols[c]:
            add_column(columns[c], pat)
    return models, converged, ub


def _all_patterns(
    ctx: ModelContext,
    comp: _Component,
    ncls: list[NodeClass],
    caps: Mapping[tuple[int, int], int],
    feas: Feasibility,
) -> dict[int, list[Pattern]] | None:
    """Every maximal pattern of each node class of the component (`aggregated.allpatterns`),
    or None; classes with the same abstracted node, free resources and caps (an existing node
    and a template's copies, often) are enumerated once."""
    reps = {c: ncls[c].nodes[0] for c in comp.nodes}
    mine = {(c, k): caps.get((c, k), 0) for c in comp.nodes for k in comp.pods}
    keys = {
        c: (
            ncls[c].signature,
            tuple(sorted((ctx.free.get(reps[c]) or {}).items())),
            tuple(mine[(c, k)] for k in comp.pods),
        )
        for c in comp.nodes
    }
    return enumerate_classes(ctx, reps, mine, keys, feas.known)


def add_column(cols: list[Pattern], pat: Pattern) -> bool:
    """Add a non-empty pattern to a node class's columns unless it is there already."""
    if any(pat) and pat not in cols:
        cols.append(pat)
        return True
    return False


def first_fit_columns(
    ncls: list[NodeClass],
    pods: list[PodClass],
    first_nodes: Mapping[int, str],
    feas: Feasibility,
    columns: dict[int, list[Pattern]],
    known: bool = False,
) -> None:
    """Add to `columns`, per node class, the patterns the first-fit plan uses there that the
    exact model accepts (pods placed one after another do not always fit together: see
    `policy.Cpsat`); `known`: it accepts them all (`aggregate`'s `first_fits`)."""
    class_of_unit = {i: k.index for k in pods for i in k.units}
    node_class = {n: c.index for c in ncls for n in c.nodes}
    counts: dict[str, list[int]] = {}
    for i, n in first_nodes.items():
        if i in class_of_unit and n in node_class:
            counts.setdefault(n, [0] * len(pods))[class_of_unit[i]] += 1
    for n in sorted(counts):
        c = node_class[n]
        pat = tuple(counts[n])
        if known:
            feas.record(c, pat, True)
        if pat not in columns[c] and feas.fits(c, ncls[c].nodes[0], pat):
            columns[c].append(pat)


def _components(
    pods: list[PodClass], ncls: list[NodeClass], caps: dict[tuple[int, int], int]
) -> list[_Component]:
    """Connected components of the compatibility graph, the pod classes of one gang joined
    (pod classes with no compatible node class are left out: they cannot be placed)."""
    parent = {("p", k.index): ("p", k.index) for k in pods} | {("n", c.index): ("n", c.index) for c in ncls}

    def root(x: tuple[str, int]) -> tuple[str, int]:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: tuple[str, int], b: tuple[str, int]) -> None:
        a, b = root(a), root(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    edges = [(c, k) for (c, k), v in caps.items() if v > 0]
    for c, k in edges:
        union(("n", c), ("p", k))
    first_of: dict[str, int] = {}
    for pc in pods:  # a gang's classes are decided together
        if pc.gang is not None:
            union(("p", first_of.setdefault(pc.gang, pc.index)), ("p", pc.index))
    comps: dict[tuple[str, int], _Component] = {}
    linked_pods = {k for _, k in edges}
    linked_nodes = {c for c, _ in edges}
    for nc in ncls:
        if nc.index in linked_nodes:
            comps.setdefault(root(("n", nc.index)), _Component([], [])).nodes.append(nc.index)
    for pc in pods:
        if pc.index in linked_pods:
            comps.setdefault(root(("p", pc.index)), _Component([], [])).pods.append(pc.index)
    return list(comps.values())


def _generate(
    master: Master,
    columns: dict[int, list[Pattern]],
    models: dict[int, NodeModel],
    feas: Feasibility,
    kind_of: Mapping[int, int] | None = None,
) -> tuple[int, int, _Duals | None]:
    """Column generation on the LP relaxation: (floor of the best Lagrangian bound, rounds,
    the final duals when it converged with every pricing problem proven). The bound holds
    whether or not the pricing problems were solved to optimality (CP-SAT's proven bound
    stands in for their optimum). With node costs (`scale`) a pattern enters class c when
    pi.p > mu[c] + cost[c] (its reduced cost), and class c adds mult[c] * max(0, best - cost[c]).
    `kind_of`: the LP's rows per kind (`restricted_lp`), `columns` and `models` kind patterns
    and kind models (`_kind_pricing`)."""
    ctx, pods, ncls, scale, gangs = master.ctx, master.pods, master.ncls, master.scale, master.gangs
    big, cost = scale.big, scale.cost
    demand_weight = sum(pods[k].demand * big * pods[k].weight for k in master.pod_ids)
    ub = float(demand_weight)
    rounds = 0
    converged: _Duals | None = None
    for _ in range(MAX_ROUNDS):
        if ctx.left() <= 0:
            break
        rounds += 1
        pi, mu, value = restricted_lp(
            pods, ncls, columns, master.pod_ids, master.node_ids, scale, gangs, kind_of
        )
        lag = _pod_value(pods, master.pod_ids, pi, gangs or {}, big)
        added = False
        proven = True
        weights = [pi.get(k, 0.0) for k in range(len(pods))]
        for c in master.node_ids:
            got = models[c].best(weights, ctx.left())
            proven &= got.proven
            lag += ncls[c].mult * max(0.0, got.bound - cost[c])
            if got.value > mu[c] + cost[c] + EPS * max(1.0, mu[c] + cost[c]):
                feas.record(c, got.pattern, True)
                added |= add_column(columns[c], got.pattern)
        ub = min(ub, lag)
        if not added:
            converged = _Duals(weights, mu, value) if proven else None
            break
    return scale.floor(ub), rounds, converged


def _pod_value(
    pods: list[PodClass],
    pod_ids: Sequence[int],
    pi: Mapping[int, float],
    gangs: Mapping[str, int],
    big: int = 1,
) -> float:
    """The pods' part of the Lagrangian bound: max sum_k (M w[k] - pi[k]) y[k] over 0 <= y[k] <=
    demand[k] and the gang rows. Outside gangs each class takes its demand when that pays; a
    gang either places nothing or at least `need` pods — all classes that pay, then the least
    costly others, pod by pod, up to `need` (exact: one cardinality row over boxes) — whichever
    is worth more."""
    value = 0.0
    by_gang: dict[str, list[int]] = {}
    for k in pod_ids:
        g = pods[k].gang
        if g is not None and g in gangs:
            by_gang.setdefault(g, []).append(k)
        else:
            value += pods[k].demand * max(0.0, big * pods[k].weight - pi[k])
    for g, ks in by_gang.items():
        gains = sorted(((big * pods[k].weight - pi[k], pods[k].demand) for k in ks), reverse=True)
        if sum(d for _, d in gains) < gangs[g]:
            continue  # the gang cannot be placed here at all
        best, count = 0.0, 0
        for gain, d in gains:
            take = d if gain > 0 else max(0, min(d, gangs[g] - count))
            best += gain * take
            count += take
        value += max(0.0, best)
    return value


@dataclass(frozen=True)
class _Duals:
    pi: list[float]
    mu: dict[int, float]
    value: float
    """The LP optimum (= the dual objective)."""


ENUMERATE_MAX = 2_000
"""Most patterns per node class."""
ENUMERATE_BATCH = 8
"""Patterns enumerated per node class between two integer solves."""


def _enumerate(
    master: Master,
    columns: dict[int, list[Pattern]],
    models: dict[int, NodeModel],
    duals: _Duals,
    incumbent: int,
    done: set[int],
) -> int:
    """Add up to ENUMERATE_BATCH more patterns per node class that a plan better than
    `incumbent` could use; node classes whose every such pattern is in the pool join `done`.
    Returns how many patterns were added.

    With the LP's duals, every plan's value is at most LP + sum z[c,p] * rc[c,p], where
    rc[c,p] = pi . p - mu[c] - cost[c] <= 0 (reduced costs at the LP optimum); a plan worth at least
    incumbent + 1 only uses patterns with rc >= incumbent + 1 - LP. Those are enumerated by
    pricing with the known patterns forbidden, best first, until the pricing bound falls
    below that threshold (proven). The caller re-solves the integer model between batches:
    a better incumbent raises the threshold."""
    ctx, cost = master.ctx, master.scale.cost
    tau = incumbent + 1 - duals.value - EPS
    added = 0
    for c in master.node_ids:
        if c in done:
            continue
        model = models[c]
        for _ in range(ENUMERATE_BATCH):
            if ctx.left() <= 0 or len(columns[c]) >= ENUMERATE_MAX:
                return added
            got = model.best(duals.pi, ctx.left())
            if got.bound - duals.mu[c] - cost[c] < tau:
                done.add(c)
                break
            if not any(got.pattern) or got.value - duals.mu[c] - cost[c] < tau:
                break  # the best pattern is below the threshold, but not proven: stop here
            columns[c].append(got.pattern)
            model.forbid(got.pattern)
            added += 1
    return added


def restricted_lp(
    pods: list[PodClass],
    ncls: list[NodeClass],
    columns: dict[int, list[Pattern]],
    pod_ids: Sequence[int],
    node_ids: Sequence[int],
    scale: Scale | None = None,
    gangs: Mapping[str, int] | None = None,
    kind_of: Mapping[int, int] | None = None,
) -> tuple[dict[int, float], dict[int, float], float]:
    """Duals (pi per pod class, mu per node class) and value of the restricted LP master
    over the classes `pod_ids` x `node_ids`: maximise sum_k big * w[k] * y[k], less
    sum cost[c] * z[c, j] when node classes have a cost (what-if templates: `scale`); with `gangs`
    (gang -> need) the gang rows of the module docstring, on[G] in [0, 1]. `kind_of`
    (`pod_kinds`): one cover row per kind (its classes' y against the slots of all of them,
    as `integer_master` counts them), each class's pi its kind's dual."""
    from ortools.linear_solver import pywraplp  # the LP solver loads when a master is priced

    cost, big = (None, 1) if scale is None else (scale.costs, scale.big)
    lp = pywraplp.Solver.CreateSolver("GLOP")
    y = {k: lp.NumVar(0, pods[k].demand, f"y{k}") for k in pod_ids}
    z = {(c, j): lp.NumVar(0, ncls[c].mult, f"z{c}_{j}") for c in node_ids for j in range(len(columns[c]))}
    cover = {}
    for r, ks in _by_kind(pod_ids, kind_of).items():
        if len(ks) == 1:
            row = y[r] - sum(columns[c][j][r] * v for (c, j), v in z.items() if columns[c][j][r])
        else:
            slots = ((sum(columns[c][j][k] for k in ks), v) for (c, j), v in z.items())
            row = sum(y[k] for k in ks) - sum(n * v for n, v in slots if n)
        cover[r] = lp.Add(row <= 0)
    conv = {c: lp.Add(sum(v for (cc, _), v in z.items() if cc == c) <= ncls[c].mult) for c in node_ids}
    in_gang = gang_classes(pods, pod_ids, gangs)  # the gang rows, on[G] in [0, 1]
    lp_on = {g: lp.NumVar(0, 1, f"on_{g}") for g in in_gang}
    for k in pod_ids:  # in class order, as the rows were always added
        if (g := pods[k].gang) in lp_on:
            lp.Add(y[k] <= pods[k].demand * lp_on[g])
    for g, ks in in_gang.items():
        lp.Add(sum(y[k] for k in ks) >= (gangs or {})[g] * lp_on[g])
    value = sum(big * pods[k].weight * y[k] for k in pod_ids)
    if cost is not None:
        value -= sum(cost[c] * v for (c, _), v in z.items())
    lp.Maximize(value)
    lp.Solve()
    pi = {k: max(cover[(kind_of or {}).get(k, k)].dual_value(), 0.0) for k in pod_ids}
    mu = {c: max(conv[c].dual_value(), 0.0) for c in node_ids}
    return pi, mu, lp.Objective().Value()


def integer_master(
    master: Master,
    columns: dict[int, list[Pattern]],
    ub: int,
    first_nodes: Mapping[int, str] | None = None,
    kind_of: Mapping[int, int] | None = None,
) -> _Solution:
    """The integer master over the generated columns (CP-SAT), with the objective of
    `restricted_lp` (with `master.gangs`: their rows, and the gangs run as the next level) and,
    given `first_nodes`, the first-fit plan as a hint: z, y, the objective (without the
    gangs level) and whether it is proven optimal over these columns.

    `kind_of` (`pod_kinds`: pod class -> the first class of its kind): the master over the
    columns' kind patterns (`_kind_columns`) — a slot of a kind takes a pod of any of its
    classes — and its choice unfolded into class patterns, added to `columns` (`_unfold`)."""
    ctx, pods, ncls, pod_ids, node_ids = master.ctx, master.pods, master.ncls, master.pod_ids, master.node_ids
    cost, big, gangs = master.scale.costs, master.scale.big, master.gangs
    m = new_cp_model()
    cols = columns if not kind_of else _kind_columns(columns, node_ids, kind_of)
    z = {(c, j): m.new_int_var(0, ncls[c].mult, f"z{c}_{j}") for c in node_ids for j in range(len(cols[c]))}
    y = {k: m.new_int_var(0, pods[k].demand, f"y{k}") for k in pod_ids}
    for r, ks in _by_kind(pod_ids, kind_of).items():
        slots = sum(cols[c][j][r] * v for (c, j), v in z.items() if cols[c][j][r])
        m.add((y[ks[0]] if len(ks) == 1 else sum(y[k] for k in ks)) <= slots)
    for c in node_ids:
        m.add(sum(v for (cc, _), v in z.items() if cc == c) <= ncls[c].mult)
    objective: cp_model.LinearExpr | int = sum(big * pods[k].weight * y[k] for k in pod_ids)
    if cost is not None:
        objective -= sum(cost[c] * v for (c, _), v in z.items())
    m.add(objective <= ub)
    need = gangs or {}
    in_gang = gang_classes(pods, pod_ids, need)  # the gang rows, on[G] in {0, 1}
    on = {g: m.new_bool_var(f"on_{g}") for g in in_gang}
    for k in pod_ids:  # in class order, as the rows were always added
        if (g := pods[k].gang) in on:
            m.add(y[k] <= pods[k].demand * on[g])
    for g, ks in in_gang.items():
        m.add(sum(y[k] for k in ks) >= need[g] * on[g])
    m.maximize((len(on) + 1) * objective + sum(on.values()) if on else objective)
    if first_nodes is not None:
        yh = _hint(m, master, cols, z, y, first_nodes, kind_of)
        for g, v in on.items():
            m.add_hint(v, int(sum(yh[k] for k in pod_ids if pods[k].gang == g) >= need[g]))
    # at least 0.5 s of work: a master cut short finds no plan at all (but for a stop request)
    work = 0.01 if interrupt.requested() else max(ctx.left(), 0.5)
    solver = cp_solver(ctx.seed, work, ctx.deadline)
    if on:
        solver.parameters.linearization_level = 2
    with interrupt.stoppable(solver.stop_search):
        status = solver.solve(m)
    passed(ctx.deadline)  # a call the deadline ended: `fired`
    ctx.charge(work_done(solver))
    if not found(status):
        return {}, {}, 0, False
    zs = {key: int(solver.value(v)) for key, v in z.items()}
    ys = {k: int(solver.value(v)) for k, v in y.items()}
    if kind_of:
        zs = _unfold(pods, columns, cols, node_ids, zs, ys, kind_of)
    return zs, ys, int(solver.value(objective)), status == CpSolverStatus.OPTIMAL


def pod_kinds(pods: Sequence[PodClass], pod_ids: Sequence[int], units: UnitsByIndex) -> dict[int, int]:
    """Pod class -> the first class of its kind, for the classes of `pod_ids` outside gangs;
    empty when no two classes are of one kind. A kind is what decides whether pods fit on a
    node: the claims (namespace and spec), the node-resource demand and the nodes refused —
    `classes.unit_facts` but for the priority and the weight. Why: pods of one kind are
    interchangeable on any node (the single-node model reads their claims and demand only),
    so a pattern is feasible exactly when its counts per kind are, and a plan may fill a
    kind's slots with any of its classes (`integer_master`'s `kind_of`)."""
    first: dict[Hashable, int] = {}
    out: dict[int, int] = {}
    for k in pod_ids:
        pc = pods[k]
        if pc.gang is not None:
            continue
        key = (*kind_facts(units[pc.units[0]]), pc.blocked)
        out[k] = first.setdefault(key, k)
    return out if any(r != k for k, r in out.items()) else {}


def _by_kind(pod_ids: Sequence[int], kind_of: Mapping[int, int] | None) -> dict[int, list[int]]:
    """The first class of each kind -> the kind's classes of `pod_ids`, in order (no `kind_of`:
    each class alone)."""
    out: dict[int, list[int]] = {}
    for k in pod_ids:
        out.setdefault((kind_of or {}).get(k, k), []).append(k)
    return out


def _kind_columns(
    columns: Mapping[int, list[Pattern]], node_ids: Sequence[int], kind_of: Mapping[int, int]
) -> dict[int, list[Pattern]]:
    """Per node class, its columns as kind patterns (each kind's count on its first class),
    once each, in column order: feasible, as the class patterns they come from are."""
    out: dict[int, list[Pattern]] = {}
    for c in node_ids:
        mine: list[Pattern] = []
        for pat in columns[c]:
            counts = [0] * len(pat)
            for k, n in enumerate(pat):
                counts[kind_of.get(k, k)] += n
            add_column(mine, tuple(counts))
        out[c] = mine
    return out


def _unfold(
    pods: Sequence[PodClass],
    columns: dict[int, list[Pattern]],
    kinds: Mapping[int, list[Pattern]],
    node_ids: Sequence[int],
    z: Mapping[tuple[int, int], int],
    y: Mapping[int, int],
    kind_of: Mapping[int, int],
) -> dict[tuple[int, int], int]:
    """The kind master's choice (`z` over `kinds`) as class patterns: node classes in order,
    each chosen kind pattern's nodes in turn, each kind's slots filled with its placed pods
    (`y`), classes in order. Each class pattern has at most its kind pattern's counts, so it
    fits (feasibility is downward closed); it joins `columns` when new. Returns z over `columns`."""
    left = dict(y)
    groups = _by_kind(list(y), kind_of)
    out: dict[tuple[int, int], int] = {}
    for c in node_ids:
        index = _positions(columns[c])
        for j, kind_pat in enumerate(kinds[c]):
            for _ in range(z.get((c, j), 0)):
                pat = [0] * len(pods)
                for r, ks in groups.items():
                    room = kind_pat[r]
                    for k in ks:
                        if not room:
                            break
                        take = min(room, left[k])
                        pat[k] += take
                        left[k] -= take
                        room -= take
                found = tuple(pat)
                if not any(found):
                    continue
                if found not in index:  # `add_column`: a new class pattern joins the columns
                    index[found] = len(columns[c])
                    columns[c].append(found)
                key = (c, index[found])
                out[key] = out.get(key, 0) + 1
    return out


def gang_classes(
    pods: list[PodClass], pod_ids: Sequence[int], gangs: Mapping[str, int] | None
) -> dict[str, list[int]]:
    """Per gang of `gangs` (gang -> need) with a pod class among `pod_ids`, those classes: the
    gang rows of the module docstring (y[k] <= demand[k] * on[G] for each, sum y[k] >=
    need * on[G]) are written over them by the LP (`restricted_lp`, on[G] in [0, 1]) and the
    integer model (`integer_master`, on[G] in {0, 1}), each with its own solver's variables."""
    out: dict[str, list[int]] = {}
    for k in pod_ids:
        g = pods[k].gang
        if g is not None and g in (gangs or {}):
            out.setdefault(g, []).append(k)
    return out


def _positions(columns: Sequence[Pattern]) -> dict[Pattern, int]:
    """Each column's first position, as `list.index` gives it: looked up per node, where
    scanning the list per node was most of the master's Python time at 10,000 nodes."""
    index: dict[Pattern, int] = {}
    for j, col in enumerate(columns):
        index.setdefault(col, j)
    return index


def _hint(
    m: cp_model.CpModel,
    master: Master,
    columns: dict[int, list[Pattern]],
    z: dict[tuple[int, int], cp_model.IntVar],
    y: dict[int, cp_model.IntVar],
    first_nodes: Mapping[int, str],
    kind_of: Mapping[int, int] | None = None,
) -> dict[int, int]:
    """The first-fit plan as a hint: each node's pattern (when it is a column; `kind_of`: its
    kind pattern, `integer_master`) and the pods (returned: pod class -> hinted count)."""
    pod_ids, node_ids, pods, ncls = master.pod_ids, master.node_ids, master.pods, master.ncls
    counts: dict[str, list[int]] = {}
    if first_nodes:
        class_of_unit = {i: k.index for k in pods for i in k.units}
        for i, n in first_nodes.items():
            if i in class_of_unit:
                counts.setdefault(n, [0] * len(pods))[class_of_unit[i]] += 1
    zh = dict.fromkeys(z, 0)
    yh = dict.fromkeys(y, 0)
    empty = (0,) * len(pods)
    for c in node_ids:
        index = _positions(columns[c])
        for n in ncls[c].nodes:
            pat = tuple(counts[n]) if n in counts else empty
            mine = pat
            if kind_of and pat is not empty:
                kind_counts = [0] * len(pods)
                for k, count in enumerate(pat):
                    kind_counts[kind_of.get(k, k)] += count
                mine = tuple(kind_counts)
            if (at := index.get(mine)) is not None:
                zh[(c, at)] += 1
                for k in pod_ids:
                    yh[k] += pat[k]
    for key, v in z.items():
        m.add_hint(v, zh[key])
    for k, v in y.items():
        m.add_hint(v, yh[k])
    return yh


def expand_patterns(
    pods: list[PodClass],
    ncls: list[NodeClass],
    columns: dict[int, list[Pattern]],
    z: dict[tuple[int, int], int],
    y: dict[int, int],
    pod_ids: Sequence[int],
    node_ids: Sequence[int],
) -> dict[str, list[int]]:
    """node -> its units: pods of each class (input order) into the chosen patterns' slots,
    each class's nodes in order."""
    queue = {k: pods[k].units[: y.get(k, 0)] for k in pod_ids}
    taken = dict.fromkeys(pod_ids, 0)  # each queue's head: slicing the rest off per node is quadratic
    placements: dict[str, list[int]] = {}
    for c in node_ids:
        chosen = [columns[c][j] for j in range(len(columns[c])) for _ in range(z.get((c, j), 0))]
        for node, pat in zip(ncls[c].nodes, chosen, strict=False):
            mine: list[int] = []
            for k in pod_ids:
                if pat[k]:
                    head = taken[k]
                    mine.extend(queue[k][head : head + pat[k]])
                    taken[k] = min(head + pat[k], len(queue[k]))
            if mine:
                placements[node] = mine
    return placements


__all__ = [
    "MAX_CLASS_SHARE",
    "PER_DEVICE_MAX",
    "AggregatedPlan",
    "ComponentResult",
    "ComponentTask",
    "Master",
    "Scale",
    "add_column",
    "aggregate",
    "expand_patterns",
    "first_fit_columns",
    "integer_master",
    "kind_pods",
    "pod_kinds",
    "restricted_lp",
    "solve_component",
]
