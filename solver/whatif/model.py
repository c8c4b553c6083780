"""What-if plans: which node templates to add, how many of each, so that the pods fit.

The question: given the pods, the existing nodes and node templates (`solver.whatif.templates`),
add copies of the templates so that, in this order, (1) the priority-weighted number of
unplaced pods is least, (2) the total cost of the added nodes is least, (3) the strategy
decides the rest (pack/spread, in the single-node allocators). At most a cap of copies of
each template are added: by default one derived from the pending pods (`copies_needed`: no
optimal plan adds more — a default must never cut an answer short); a user's `max_new_nodes`
below it is checked against the plan with the derived caps, and reported when it binds
(`_judge_cap`). What each status and bound proves, per path, is `docs/semantics.md`, "What a
status proves", "What-if".

Each template is materialised cap times (`templates.with_copies`); the copies are ordinary
candidate nodes. Which plan is used when:

- **reference** allocator: first fit (the scheduler's order) over the existing nodes, then the
  copies — templates by cost, cheapest first, copies `-1, -2, ...` in order. A pod fits on
  a fresh copy exactly when it fits on the next fresh copy, so the copies used are a prefix
  `-1..-m` of each template; the others are dropped. Like the cluster autoscaler's
  simulation, it is not minimal.
- **cpsat**, when the aggregated model applies (independent nodes, no precompute error, no
  DRA-served extended resources, no claim-less pods under node limits): the master model of
  `solver.aggregate.master` with the template classes' multiplicities as variables. With node classes
  c (existing ones at cost 0, each template's copies one class at cost[t], mult = its cap)
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
  of every node class is listed where there are few (`solver.aggregate.allpatterns`); the integer model
  over them is the whole problem, so CP-SAT's OPTIMAL over it proves the plan (cost bound =
  cost). Expansion puts the
  chosen patterns on each class's nodes in order, copies by number, so the copies used are
  `-1..-m`.
- **cpsat**, otherwise: the per-device planner, adding copies one at a time (greedy): first
  the plan with every copy gives the weight to reach; then, starting from no copies, the
  template whose next copy gains the most weight per cost is added until that weight is
  reached. Correct (every plan checked), not minimal in general: its status is FEASIBLE
  with the weight bound of the plan with every copy and the LP-relaxation cost bound of
  `_cost_floor`, OPTIMAL only when the plan meets both.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from dra_solver.aggregate.allpatterns import enumerate_classes
from dra_solver.aggregate.classes import NodeClass, PodClass, node_classes, pod_classes
from dra_solver.aggregate.master import (
    AggregatedPlan,
    add_column,
    expand_patterns,
    first_fit_columns,
    integer_master,
    restricted_lp,
)
from dra_solver.aggregate.patterns import Context, Feasibility, NodeModel, Pattern, cap
from dra_solver.allocators import ALLOCATORS, Cpsat, not_aggregated
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Node, ResourceSlice
from dra_solver.errors import InputError
from dra_solver.firstfit import FirstFit
from dra_solver.planning.job import Job, PlanOutcome, Unit, placed_weight
from dra_solver.planning.ledger import Ledger
from dra_solver.whatif.templates import NodeTemplate, with_copies

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


@dataclass
class _Run:
    """One what-if plan under per-template caps: the plan, what it adds, its units, the cluster
    with every copy."""

    outcome: PlanOutcome
    added: Added
    units: list[Unit]
    cluster: Cluster

    @property
    def weight(self) -> int:
        """The plan's objective, each pod with its own weight (`placed_weight`: the outcome
        has one PodPlan per unit, and pods joined by a shared claim are one unit)."""
        return placed_weight(self.units, self.outcome.pods)


def plan_with_templates(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    options: Any,
    templates: Sequence[NodeTemplate],
    max_new_nodes: int | None = None,
) -> tuple[PlanOutcome, Added, list[Unit], Cluster]:
    """The what-if plan (see the module docstring). `job_for(cluster, node_list)` is the run
    on a cluster with the copies: its pods resolved and its gangs (`planning.resolve.make_job`, which
    `pipeline.plan` passes: this module cannot import the pipeline that imports it).
    `max_new_nodes`: the most copies of each template; None (the default) derives, per
    template, a number no optimal plan exceeds (`copies_needed`), so that no default cuts the
    answer short. A user's cap below that number is checked against the plan without it and
    reported when it binds (`stats["whatif_cap"]`; OPTIMAL then holds only within the cap).
    Returns the plan (per unit), what is added, the units and the cluster with every copy."""
    if max_new_nodes is not None and max_new_nodes < 0:
        raise InputError(f"--max-new-nodes must be >= 0, got {max_new_nodes}")
    if not templates:
        raise InputError("no node templates given")
    needed = copies_needed(cluster, job_for, nodes, templates)
    caps = list(needed) if max_new_nodes is None else [min(max_new_nodes, n) for n in needed]
    run = _plan_capped(cluster, job_for, nodes, options, templates, caps)
    stats = run.outcome.stats
    stats["whatif_caps"] = {t.name: c for t, c in zip(templates, caps, strict=True)}
    if max_new_nodes is None:
        stats["whatif_caps_source"] = "derived from the pending pods (no optimal plan adds more)"
    elif caps != needed:
        free = _plan_capped(cluster, job_for, nodes, options, templates, needed)
        _judge_cap(run, free, templates, max_new_nodes)
    return run.outcome, run.added, run.units, run.cluster


def copies_needed(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    templates: Sequence[NodeTemplate],
) -> list[int]:
    """Per template, the number of pending pods (units: pods placed together count once) that
    its copy does not refuse by scheduling constraints — a number of copies no optimal plan
    exceeds. Why it is enough: template slices are node-local, so a copy that holds no pod
    changes nothing and an optimal plan (least cost, cost >= 0) need not keep it; every copy it
    keeps holds at least one pod that may go there, and each pod is on one node."""
    probe, copies = with_copies(cluster, templates, [1] * len(templates))
    job = job_for(probe, [*nodes, *(c[0] for c in copies)])
    return [sum(1 for u in job.units if c[0] not in u.blocked) for c in copies]


def _judge_cap(run: _Run, free: _Run, templates: Sequence[NodeTemplate], cap: int) -> None:
    """Compare the plan under the user's cap with the plan under the derived caps (which no
    optimal plan exceeds) and say in `stats["whatif_cap"]` whether the cap binds and what it
    costs; the capped plan's OPTIMAL becomes "OPTIMAL within the cap" unless the plan without
    the cap proves the capped one optimal overall."""
    stats, other = run.outcome.stats, free.outcome.stats
    at_cap = [f"{n} × {t}" for t, n in run.added.counts.items() if n >= cap]
    reached = f"cap reached: {', '.join(at_cap)}" if at_cap else f"cap --max-new-nodes {cap}"
    unplaced = _unplaced(run)
    needed = max(free.added.counts.values(), default=0)
    weight, free_weight = run.weight, free.weight
    free_bound = _int(other.get("bound"))
    free_cost_bound = _int(other.get("cost_bound"))
    proven_overall = (
        stats.get("status") == "OPTIMAL"
        and free_bound is not None
        and weight >= free_bound
        and free_cost_bound is not None
        and run.added.cost <= free_cost_bound
    )
    if free_weight > weight:
        free_unplaced = _unplaced(free)
        if free_unplaced == 0:
            more = f"--max-new-nodes {needed} places all"
        elif free_bound is not None and free_weight >= free_bound:
            more = f"--max-new-nodes {needed} places all that can be placed ({free_unplaced} cannot)"
        else:
            more = f"--max-new-nodes {needed} leaves {free_unplaced} unplaced; raise --max-new-nodes"
        note = f"{reached}; {_pods(unplaced)} still unplaced; {more}"
    elif free_weight == weight and free.added.cost < run.added.cost:
        note = (
            f"{reached}; the same pods cost {free.added.cost} instead of {run.added.cost} "
            f"with --max-new-nodes {needed}"
        )
    elif proven_overall:
        note = ""
    else:
        note = (
            f"{reached}; without the cap the plan found is no better (not proven that the cap does not bind)"
        )
    if note:
        stats["whatif_cap"] = note
    if stats.get("status") == "OPTIMAL" and not proven_overall:
        stats["status"] = "OPTIMAL within the cap"


def _pods(n: int) -> str:
    return f"{n} pod" if n == 1 else f"{n} pods"


def _unplaced(run: _Run) -> int:
    """Pods (not units: pods that share a claim are one unit) the run leaves unplaced."""
    return sum(
        max(1, len(u.members)) for u, p in zip(run.units, run.outcome.pods, strict=True) if not p.placed
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plan_capped(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    options: Any,
    templates: Sequence[NodeTemplate],
    caps: Sequence[int],
) -> _Run:
    """The what-if plan with at most `caps[t]` copies of template t (module docstring)."""
    expanded, copies = with_copies(cluster, templates, caps)
    order = sorted(range(len(templates)), key=lambda t: (templates[t].cost, t))
    node_list = [*nodes, *(n for t in order for n in copies[t])]
    job = job_for(expanded, node_list)
    units = list(job.units)
    first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=options.progress).plan(job)
    if options.allocator == "reference":
        outcome = replace(first, allocator="reference")
        outcome.stats["whatif_model"] = "first fit over the existing nodes, then the copies (not minimal)"
    else:
        cost_of = {n: templates[t].cost for t in range(len(templates)) for n in copies[t]}
        origin = {n: t for t in range(len(templates)) for n in copies[t]}
        agg = template_aggregate(job, first, origin, cost_of, options.time_limit)
        if not isinstance(agg, AggregatedPlan):
            return _greedy(cluster, job_for, nodes, options, templates, copies, caps, agg)
        outcome = Cpsat()._expand(job, first, agg, Ledger(job), dict(first.stats))
        outcome.stats.update(agg.stats)
        if outcome.stats.get("fallback"):  # first fit's copies: the model's cost proof is not this plan's
            outcome.stats["cost_bound"] = 0
    if job.book.warnings:
        outcome.stats["warnings"] = _template_warnings(job.book.warnings, templates, copies)
    run = _Run(outcome, _added(expanded, outcome, templates, copies), units, expanded)
    cost_bound = _int(outcome.stats.get("cost_bound"))
    if outcome.stats.get("status") == "OPTIMAL" and (cost_bound is None or cost_bound < run.added.cost):
        # the weight is proven, the least cost is not (first fit's copies, an unproven pricing)
        outcome.stats["status"] = "FEASIBLE"
    return run


def _template_warnings(
    warnings: Sequence[str], templates: Sequence[NodeTemplate], copies: list[list[str]]
) -> list[str]:
    """The run's warnings with each candidate copy's warning said once of its template: the
    copies are as many as the pods could use, and one line per copy would flood stderr."""
    of = {n: t.name for t, names in zip(templates, copies, strict=True) for n in names}
    out: dict[str, None] = {}
    for w in warnings:
        words = w.split(" ")
        if len(words) > 1 and words[0] == "node" and words[1] in of:
            w = " ".join(["node template", of[words[1]], *words[2:]])
        out[w] = None
    return list(out)


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
    caps: Sequence[int],
    why: str,
) -> _Run:
    """The per-device fallback: copies added one at a time, the best weight gain per cost
    first, until the weight of the plan with every copy is reached. When no single copy adds
    weight before that (a gang that needs several nodes at once), it starts again from every
    copy and removes them, costliest template first, while the weight stays — fewest unplaced
    pods come before cost. Greedy is not minimal (a big copy that gains most per cost first can
    leave a remainder that a second copy must cover, where two mid copies were cheaper), so its
    status comes from bounds, not from the last per-device solve: the weight bound of the plan
    with every copy, and the cost bound of `_cost_floor`; OPTIMAL only when both are met."""

    def attempt(counts: list[int]) -> _Run:
        c, _ = with_copies(cluster, templates, counts)
        names = [*nodes, *(n for t, k in enumerate(counts) for n in copies[t][:k])]
        job = job_for(c, names)
        first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=options.progress).plan(job)
        return _Run(ALLOCATORS[options.allocator].improve(job, first), Added(), list(job.units), c)

    full = list(caps)
    whole = attempt(full)
    target = whole.weight
    weight_bound = max(target, _weight_bound(whole.outcome, whole.units))
    counts = [0] * len(templates)
    best = attempt(counts)
    while best.weight < target:
        trials = []
        for t in range(len(templates)):
            if counts[t] < caps[t]:
                more = list(counts)
                more[t] += 1
                got = attempt(more)
                gain = got.weight - best.weight
                trials.append((-(gain / max(templates[t].cost, EPS)), t, got, more))
        trials = [x for x in trials if x[0] < 0]
        if not trials:
            break
        _, _, best, counts = min(trials, key=lambda x: (x[0], x[1]))
    if best.weight < target:  # no single copy helps (a gang needs several at once): trim down
        counts, best = list(full), attempt(full)
        for t in sorted(range(len(templates)), key=lambda t: (-templates[t].cost, t)):
            while counts[t] > 0:
                fewer = list(counts)
                fewer[t] -= 1
                got = attempt(fewer)
                if got.weight < target:
                    break
                counts, best = fewer, got
    outcome, units, c = best.outcome, best.units, best.cluster
    named = [copies[t][: counts[t]] for t in range(len(templates))]
    added = _added(c, outcome, templates, named)
    floor = _cost_floor(cluster, job_for, nodes, options, templates, caps, target)
    stats = outcome.stats
    weight = best.weight
    weight_bound = max(weight_bound, weight)
    proven = weight >= weight_bound and added.cost <= floor
    stats.update(
        {
            "aggregated": f"no: {why}; copies added one at a time (greedy)",
            "whatif_model": "greedy (copies one at a time); bounds: the plan with every copy (weight), "
            "an LP relaxation over the templates (cost)",
            "status": "OPTIMAL" if proven else "FEASIBLE",
            "objective": weight,
            "bound": weight_bound,
            "gap": weight_bound - weight,
            "cost_bound": added.cost if proven else min(floor, added.cost),
        }
    )
    return _Run(outcome, added, units, c)


def _weight_bound(outcome: PlanOutcome, units: Sequence[Unit]) -> int:
    """An upper bound on the weight of every plan of the run's `units`: the allocator's proven
    bound, else the weight of every pod (the reference and an interrupted search prove
    nothing) — each pod with its own weight (`Unit.weight`), as the allocators' bounds count."""
    bound = _int(outcome.stats.get("bound"))
    if bound is not None and outcome.allocator != "reference":
        return bound
    return sum(u.weight for u in units)


def _cost_floor(
    cluster: Cluster,
    job_for: Callable[[Cluster, list[str]], Job],
    nodes: Sequence[str],
    options: Any,
    templates: Sequence[NodeTemplate],
    caps: Sequence[int],
    target: int,
) -> int:
    """A lower bound on the cost of every plan that places weight >= `target` with at most
    `caps[t]` copies of template t — so on the optimum's cost, whose weight is at least the
    greedy's. Why it holds: a plan's weight is the weight on the existing nodes plus the weight
    on each copy; the first is at most W0, the weight bound of the existing nodes alone, each
    copy of t holds at most g[t], the weight bound of one copy of t alone (every pod free to go
    there, shared devices all free), both with gang minimums dropped (a gang's pods may be split
    between existing nodes and copies, so only the relaxation bounds each part). Hence
    sum_t g[t] n[t] >= target - W0, and the least sum_t cost[t] n[t] with 0 <= n[t] <= caps[t]
    real (the LP relaxation: a fractional knapsack, cheapest cost per weight first) is the
    bound, rounded up since costs are integers."""

    def bound_of(counts: list[int], existing: Sequence[str]) -> int:
        c, names = with_copies(cluster, templates, counts)
        job = job_for(c, [*existing, *(n for ns in names for n in ns)])
        job = replace(job, gangs={})
        first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=options.progress).plan(job)
        improved = ALLOCATORS[options.allocator].improve(job, first)
        return max(placed_weight(job.units, first.pods), _weight_bound(improved, job.units))

    need = target - (bound_of([0] * len(templates), nodes) if nodes else 0)
    if need <= 0:
        return 0
    per_copy = []
    for t in range(len(templates)):
        if caps[t] > 0:
            g = bound_of([1 if i == t else 0 for i in range(len(templates))], [])
            if g > 0:
                per_copy.append((templates[t].cost / g, g, t))
    total = 0.0
    for ratio, g, t in sorted(per_copy):
        take = min(need, g * caps[t])
        total += ratio * take
        need -= take
        if need <= 0:
            break
    return math.ceil(total - EPS * max(1.0, total))


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
    """Every maximal pattern of each live node class (`solver.aggregate.allpatterns`), or None; classes
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


__all__ = ["Added", "copies_needed", "plan_with_templates", "template_aggregate"]
