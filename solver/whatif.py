"""What-if plans: which node templates to add, how many of each, so that the pods fit.

The question: given the pods, the existing nodes and node templates (`solver.templates`),
add copies of the templates so that, in this order, (1) the priority-weighted number of
unplaced pods is least, (2) the total cost of the added nodes is least, (3) the strategy
decides the rest (pack/spread, in the single-node allocators). At most `max_new_nodes`
copies of each template are added.

Each template is materialised `max_new_nodes` times (`templates.with_copies`); the copies
are ordinary candidate nodes. Which plan is used when:

- **reference** allocator: first fit (the scheduler's order) over the existing nodes, then the
  copies — templates by cost, cheapest first, copies `-1, -2, ...` in order. A pod fits on
  a fresh copy exactly when it fits on the next fresh copy, so the copies used are a prefix
  `-1..-m` of each template; the others are dropped. Like the cluster autoscaler's
  simulation, it is not minimal.
- **cpsat**, when the aggregated model applies (independent nodes, no precompute error, no
  DRA-served extended resources, no claim-less pods under node limits): the master model of
  `solver.master` with the template classes' multiplicities as variables. With node classes
  c (existing ones at cost 0, each template's copies one class at cost[t], mult = max_new_nodes)
  and patterns p:

      z[c,p] in Z>=0,  y[k] in Z>=0
      sum_p z[c,p] <= mult[c]                          (mu[c]: nodes of class c; for a
                                                        template class, copies added)
      y[k] <= sum_{c,p} p[k] z[c,p],  y[k] <= demand[k] (pi[k])
      maximise  M * sum_k w[k] y[k]  -  sum_{c,p} cost[c] z[c,p],   M = sum_c cost[c] mult[c] + 1

  M exceeds any total cost, so the one objective is lexicographic: weight first, then cost.
  Columns are generated on the LP relaxation: a pattern enters class c when pi.p > mu[c] +
  cost[c] (its reduced cost), priced by the single-node exact model (`patterns.NodeModel`).
  For any pi >= 0 the Lagrangian bound

      UB = sum_k demand[k] max(0, M w[k] - pi[k]) + sum_c mult[c] max(0, max_p pi.p - cost[c])

  bounds every plan's objective. A plan with weight W and cost C has objective M W - C; if it
  reaches floor(UB) it is proven: no plan has more weight (that would be worth >= M(W+1) -
  (M-1) > M W - C), and none with weight W costs less. Otherwise the plan reports the
  weight bound floor((UB + M - 1) / M) and the cost bound max(0, M W - UB). When the plan does
  not reach floor(UB) — the LP relaxation's fractional nodes are cheaper than any integer plan,
  as when pod sizes divide the node's devices — and the caps are proven, every maximal pattern
  of every node class is listed where there are few (`solver.allpatterns`); the integer model
  over them is the whole problem, so CP-SAT's OPTIMAL over it proves the plan (cost bound =
  cost). Expansion puts the
  chosen patterns on each class's nodes in order, copies by number, so the copies used are
  `-1..-m`.
- **cpsat**, otherwise: the per-device planner, adding copies one at a time (greedy): first
  the plan with every copy gives the weight to reach; then, starting from no copies, the
  template whose next copy gains the most weight per cost is added until that weight is
  reached. Correct (every plan checked), not proven minimal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from dra_solver.allocators import ALLOCATORS, Cpsat, Job, Ledger, PlanOutcome, Unit, not_aggregated
from dra_solver.allpatterns import enumerate_classes
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Node, ResourceSlice
from dra_solver.classes import NodeClass, PodClass, node_classes, pod_classes
from dra_solver.errors import InputError
from dra_solver.firstfit import FirstFit
from dra_solver.master import (
    AggregatedPlan,
    add_column,
    expand_patterns,
    first_fit_columns,
    integer_master,
    restricted_lp,
)
from dra_solver.patterns import Context, Feasibility, NodeModel, Pattern, cap
from dra_solver.templates import NodeTemplate, with_copies

EPS = 1e-6
MAX_ROUNDS = 200
"""Column-generation rounds."""


@dataclass
class Added:
    """The copies a what-if plan adds: per template, how many, and the objects."""

    counts: dict[str, int] = field(default_factory=dict)
    """Template node name -> copies added (templates in input order, zeros included)."""
    cost: int = 0
    nodes: list[Node] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)

    def summary(self) -> str:
        """`add 5 × gpu-8x, 1 × cpu-big` or `add no nodes`."""
        parts = [f"{n} × {t}" for t, n in self.counts.items() if n]
        return "add " + ", ".join(parts) if parts else "add no nodes"


def plan_with_templates(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    options: Any,
    templates: Sequence[NodeTemplate],
    max_new_nodes: int,
) -> tuple[PlanOutcome, Added, list[Unit], Cluster]:
    """The what-if plan (see the module docstring). `job_for(cluster, node_list)` is the run
    on a cluster with the copies: its pods resolved and its gangs (`pipeline.make_job`, which
    `pipeline.plan` passes: this module cannot import the pipeline that imports it).
    Returns the plan (per unit), what is added, the units and the cluster with every copy."""
    if max_new_nodes < 0:
        raise InputError(f"--max-new-nodes must be >= 0, got {max_new_nodes}")
    if not templates:
        raise InputError("no node templates given")
    expanded, copies = with_copies(cluster, templates, [max_new_nodes] * len(templates))
    order = sorted(range(len(templates)), key=lambda t: (templates[t].cost, t))
    node_list = [*nodes, *(n for t in order for n in copies[t])]
    job = job_for(expanded, node_list)
    units = list(job.units)
    first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=options.progress).plan(job)
    if options.allocator == "reference":
        outcome = replace(first, allocator="reference")
    else:
        cost_of = {n: templates[t].cost for t in range(len(templates)) for n in copies[t]}
        origin = {n: t for t in range(len(templates)) for n in copies[t]}
        agg = template_aggregate(job, first, origin, cost_of, options.time_limit)
        if isinstance(agg, AggregatedPlan):
            outcome = Cpsat()._expand(job, first, agg, Ledger(job), dict(first.stats))
            outcome.stats.update(agg.stats)
        else:
            return _greedy(cluster, job_for, nodes, options, templates, copies, max_new_nodes, agg)
    if job.book.warnings:
        outcome.stats["warnings"] = list(job.book.warnings)
    return outcome, _added(expanded, outcome, templates, copies), units, expanded


def _added(
    cluster: Cluster, outcome: PlanOutcome, templates: Sequence[NodeTemplate], copies: list[list[str]]
) -> Added:
    """Per template, the copies up to the last one a placed pod uses (a prefix `-1..-m`)."""
    used = {p.node for p in outcome.pods if p.placed and p.node is not None}
    out = Added()
    for t, names in zip(templates, copies, strict=True):
        m = max((i + 1 for i, n in enumerate(names) if n in used), default=0)
        out.counts[t.name] = m
        out.cost += m * t.cost
        keep = set(names[:m])
        out.nodes.extend(cluster.nodes[n] for n in names[:m])
        out.slices.extend(s for s in cluster.slices if s.spec.node_name in keep)
    outcome.stats["added"] = out.summary()
    outcome.stats["added_cost"] = out.cost
    return out


def _greedy(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    options: Any,
    templates: Sequence[NodeTemplate],
    copies: list[list[str]],
    max_new_nodes: int,
    why: str,
) -> tuple[PlanOutcome, Added, list[Unit], Cluster]:
    """The per-device fallback: copies added one at a time, the best weight gain per cost
    first, until the weight of the plan with every copy is reached. When no single copy adds
    weight before that (a gang that needs several nodes at once), it starts again from every
    copy and removes them, costliest template first, while the weight stays — fewest unplaced
    pods come before cost."""

    def attempt(counts: list[int]) -> tuple[PlanOutcome, list[Unit], Cluster]:
        c, _ = with_copies(cluster, templates, counts)
        names = [*nodes, *(n for t, k in enumerate(counts) for n in copies[t][:k])]
        job = job_for(c, names)
        first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=options.progress).plan(job)
        return ALLOCATORS[options.allocator].improve(job, first), list(job.units), c

    full = [max_new_nodes] * len(templates)
    target = attempt(full)[0].weight
    counts = [0] * len(templates)
    best = attempt(counts)
    while best[0].weight < target:
        trials = []
        for t in range(len(templates)):
            if counts[t] < max_new_nodes:
                more = list(counts)
                more[t] += 1
                got = attempt(more)
                gain = got[0].weight - best[0].weight
                trials.append((-(gain / max(templates[t].cost, EPS)), t, got, more))
        trials = [x for x in trials if x[0] < 0]
        if not trials:
            break
        _, _, got, counts = min(trials, key=lambda x: (x[0], x[1]))
        best = got
    if best[0].weight < target:  # no single copy helps (a gang needs several at once): trim down
        counts, best = list(full), attempt(full)
        for t in sorted(range(len(templates)), key=lambda t: (-templates[t].cost, t)):
            while counts[t] > 0:
                fewer = list(counts)
                fewer[t] -= 1
                got = attempt(fewer)
                if got[0].weight < target:
                    break
                counts, best = fewer, got
    outcome, units, c = best
    outcome.stats["aggregated"] = f"no: {why}; copies added one at a time (greedy)"
    named = [copies[t][: counts[t]] for t in range(len(templates))]
    return outcome, _added(c, outcome, templates, named), units, c


@dataclass
class _Classes:
    classes: list[NodeClass]
    cost: list[int]


def template_aggregate(
    job: Job,
    first: PlanOutcome,
    origin: Mapping[str, int],
    cost_of: Mapping[str, int],
    time_limit: float,
) -> AggregatedPlan | str:
    """The what-if master model (module docstring), or why it does not apply."""
    start = time.perf_counter()
    units = job.units
    if (why := not_aggregated(job)) is not None:
        return why
    names = [n for n in job.nodes if n is not None]
    todo = [i for i, u in enumerate(units) if u.claims and any(n not in u.blocked for n in names)]
    if not todo:
        return "no pod with claims may be placed"
    pods = pod_classes(units, todo)
    found = node_classes(job.cluster, units, pods, names, job.gates, job.cache, job.book.free)
    if found.coupled:
        return f"nodes are not independent: {found.coupled}"
    if found.errors:
        return f"precompute reports an error: {found.errors}"
    split = _split(found.classes, origin, cost_of)
    ncls = split.classes
    ctx = Context(
        job.cluster,
        units,
        pods,
        job.gates,
        job.cache,
        job.seed,
        start + time_limit,
        views=found.views,
        free=dict(job.book.free),
    )
    caps = {(c.index, k): cap(ctx, c.nodes[0], k) for c in ncls for k in sorted(c.allowed)}
    caps_proven = all(p for _, p in caps.values())
    capn = {key: v for key, (v, _) in caps.items()}
    feas = Feasibility(ctx)
    columns: dict[int, list[Pattern]] = {c.index: [] for c in ncls}
    for (c, k), v in capn.items():
        if v > 0:
            pat = tuple(v if j == k else 0 for j in range(len(pods)))
            feas.record(c, pat, True)
            add_column(columns[c], pat)
    first_nodes = {i: p.node for i, p in enumerate(first.pods) if p.placed and p.node is not None}
    first_fit_columns(ncls, pods, first_nodes, feas, columns)
    live_pods = sorted({k for (c, k), v in capn.items() if v > 0})
    live_nodes = sorted({c for (c, k), v in capn.items() if v > 0})
    big = sum(split.cost[c] * ncls[c].mult for c in live_nodes) + 1
    models = {
        c: NodeModel(ctx, ncls[c].nodes[0], {k: capn.get((c, k), 0) for k in live_pods}) for c in live_nodes
    }
    ub, rounds, converged = _generate(ctx, pods, ncls, split.cost, columns, models, feas, live_pods, big)
    solve = partial(
        integer_master, ctx, pods, ncls, columns, ub, live_pods, live_nodes, cost=split.cost, big=big
    )
    z, y, obj, optimal = solve()
    proven = caps_proven and converged and obj >= ub
    enumerated = None
    if caps_proven and not proven and ctx.left() > 0:
        enumerated = _all_patterns(ctx, ncls, live_nodes, live_pods, capn, feas)
        if enumerated is not None:
            for c, pats in enumerated.items():
                for pat in pats:
                    add_column(columns[c], pat)
            z, y, obj, optimal = solve()
            proven = optimal  # over every maximal pattern: the integer master is the whole problem
    weight = sum(pods[k].weight * y.get(k, 0) for k in live_pods)
    cost = sum(split.cost[c] * n for (c, _), n in z.items())
    placements = expand_patterns(pods, ncls, columns, z, y, live_pods, live_nodes)
    stats: dict[str, object] = {
        "pod_classes": len(pods),
        "node_classes": len(ncls),
        "columns": sum(len(v) for v in columns.values()),
        "rounds": rounds,
        "single_node_solves": ctx.solves,
        "model_time": round(time.perf_counter() - start, 3),
        "cost_bound": cost if proven else max(0, big * weight - ub),
        "whatif_model": "aggregated (template multiplicities as variables)",
    }
    if enumerated is not None:
        stats["whatif_patterns"] = f"all {sum(len(v) for v in enumerated.values())} maximal patterns"
    if not optimal and not proven:
        stats["whatif_integer"] = "not proven over the generated columns"
    weight_bound = weight if proven else (ub + big - 1) // big
    return AggregatedPlan(placements, ctx, "OPTIMAL" if proven else "FEASIBLE", weight, weight_bound, stats)


def _all_patterns(
    ctx: Context,
    ncls: list[NodeClass],
    live_nodes: list[int],
    live_pods: list[int],
    capn: Mapping[tuple[int, int], int],
    feas: Feasibility,
) -> dict[int, list[Pattern]] | None:
    """Every maximal pattern of each live node class (`solver.allpatterns`), or None; classes
    with the same abstracted node, free resources and caps (an existing node and a template's
    copies, often) are enumerated once."""
    reps = {c: ncls[c].nodes[0] for c in live_nodes}
    caps = {(c, k): capn.get((c, k), 0) for c in live_nodes for k in live_pods}
    keys = {
        c: (
            ncls[c].signature,
            tuple(sorted((ctx.free.get(reps[c]) or {}).items())),
            tuple(caps[(c, k)] for k in live_pods),
        )
        for c in live_nodes
    }
    return enumerate_classes(ctx, reps, caps, keys, feas.known)


def _split(classes: list[NodeClass], origin: Mapping[str, int], cost_of: Mapping[str, int]) -> _Classes:
    """Node classes split by origin (existing nodes; each template's copies), template copies
    in copy-number order (so the expansion uses `-1..-m`)."""
    out: list[NodeClass] = []
    costs: list[int] = []
    for c in classes:
        groups: dict[int, list[str]] = {}
        for n in c.nodes:
            groups.setdefault(origin.get(n, -1), []).append(n)
        for o in sorted(groups):
            ns = groups[o]
            if o >= 0:
                ns.sort(key=lambda n: int(n.rsplit("-", 1)[1]))
            out.append(NodeClass(len(out), tuple(ns), c.allowed, c.signature))
            costs.append(cost_of.get(ns[0], 0))
    return _Classes(out, costs)


def _generate(
    ctx: Context,
    pods: list[PodClass],
    ncls: list[NodeClass],
    cost: list[int],
    columns: dict[int, list[Pattern]],
    models: dict[int, NodeModel],
    feas: Feasibility,
    live_pods: list[int],
    big: int,
) -> tuple[int, int, bool]:
    """Column generation (module docstring): floor of the best Lagrangian bound, rounds, and
    whether it converged with every pricing problem proven (then UB is the LP optimum)."""
    ub = float(sum(pods[k].demand * big * pods[k].weight for k in live_pods))
    rounds = 0
    converged = False
    for _ in range(MAX_ROUNDS):
        if ctx.left() <= 0:
            break
        rounds += 1
        pi, mu, _ = restricted_lp(pods, ncls, columns, live_pods, list(models), cost, big)
        lag = sum(pods[k].demand * max(0.0, big * pods[k].weight - pi[k]) for k in live_pods)
        weights = [pi.get(k, 0.0) for k in range(len(pods))]
        added, proven = False, True
        for c, model in models.items():
            got = model.best(weights, ctx.left())
            proven &= got.proven
            lag += ncls[c].mult * max(0.0, got.bound - cost[c])
            if got.value > mu[c] + cost[c] + EPS * max(1.0, mu[c] + cost[c]):
                feas.record(c, got.pattern, True)
                added |= add_column(columns[c], got.pattern)
        ub = min(ub, lag)
        if not added:
            converged = proven
            break
    return int(ub + EPS * max(1.0, abs(ub))), rounds, converged


__all__ = ["Added", "plan_with_templates", "template_aggregate"]
