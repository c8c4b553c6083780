"""What-if plans: which node templates to add, how many of each, so that the pods fit.

The question: given the pods, the existing nodes and node templates (`solver.api.templates`),
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
  DRA-served extended resources, no claim-less pods under node limits, no gang with a
  topology constraint or whose pods share a claim): the plan's own aggregated model
  (`aggregated.expansion.plan_aggregated` → `aggregated.master.aggregate`) with a cost per node
  (`NodeCosts`: each copy its template's cost, existing nodes 0), so the template classes'
  multiplicities are variables and the objective is weight first, then cost
  (`aggregated.master`, "What-if"). It has everything a plan has: connected components (on
  the run's executor), gang rows, capacities computed once per pod kind. Expansion puts the
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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..api.cluster import Cluster
from ..api.models import Node, ResourceSlice
from ..api.templates import NodeTemplate, with_copies
from ..errors import InputError
from ..planning.job import Job, Options, Unit, placed_weight
from ..planning.outcome import PlanOutcome, proven, record
from ..planning.resolve import PodInput, make_job, units_for
from .aggregated.expansion import plan_aggregated
from .aggregated.master import NodeCosts
from .bounds import verdict
from .firstfit.batch import FirstFit
from .policy import ALLOCATORS, Cpsat

EPS = 1e-6


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
class _WhatIfRun:
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


@dataclass(frozen=True)
class Pending:
    """The pods a what-if plan places, as `pipeline.plan` was given them, and the run's options:
    what it takes to make the run on a cluster with copies (`job`)."""

    pods: Sequence[PodInput] | None
    priorities: Sequence[int] | None
    options: Options

    def job(self, cluster: Cluster, nodes: list[str]) -> Job:
        """The run on `cluster` (with copies) over `nodes`: the pods resolved there, their
        gangs and the nodes' resources (`planning.resolve.make_job`)."""
        gates = self.options.feature_gates
        return make_job(
            cluster, units_for(cluster, self.pods, self.priorities, nodes, gates), nodes, self.options
        )


def plan_with_templates(
    cluster: Cluster,
    pending: Pending,
    nodes: Sequence[str],
    templates: Sequence[NodeTemplate],
    max_new_nodes: int | None = None,
) -> tuple[PlanOutcome, Added, list[Unit], Cluster]:
    """The what-if plan (see the module docstring) of the `pending` pods over `nodes` and the
    copies of `templates`.
    `max_new_nodes`: the most copies of each template; None (the default) derives, per
    template, a number no optimal plan exceeds (`copies_needed`), so that no default cuts the
    answer short. A user's cap below that number is checked against the plan without it and
    reported when it binds (`stats["whatif_cap"]`; OPTIMAL then holds only within the cap).
    Returns the plan (per unit), what is added, the units and the cluster with every copy."""
    if max_new_nodes is not None and max_new_nodes < 0:
        raise InputError(f"--max-new-nodes must be >= 0, got {max_new_nodes}")
    if not templates:
        raise InputError("no node templates given")
    needed = copies_needed(cluster, pending, nodes, templates)
    caps = list(needed) if max_new_nodes is None else [min(max_new_nodes, n) for n in needed]
    run = _plan_capped(cluster, pending, nodes, templates, caps)
    stats = run.outcome.stats
    stats["whatif_caps"] = {t.name: c for t, c in zip(templates, caps, strict=True)}
    if max_new_nodes is None:
        stats["whatif_caps_source"] = "derived from the pending pods (no optimal plan adds more)"
    elif caps != needed:
        free = _plan_capped(cluster, pending, nodes, templates, needed)
        _judge_cap(run, free, templates, max_new_nodes)
    return run.outcome, run.added, run.units, run.cluster


def copies_needed(
    cluster: Cluster,
    pending: Pending,
    nodes: Sequence[str],
    templates: Sequence[NodeTemplate],
) -> list[int]:
    """Per template, the number of pending pods (units: pods placed together count once) that
    its copy does not refuse by scheduling constraints — a number of copies no optimal plan
    exceeds. Why it is enough: template slices are node-local, so a copy that holds no pod
    changes nothing and an optimal plan (least cost, cost >= 0) need not keep it; every copy it
    keeps holds at least one pod that may go there, and each pod is on one node."""
    probe, copies = with_copies(cluster, templates, [1] * len(templates))
    job = pending.job(probe, [*nodes, *(c[0] for c in copies)])
    return [sum(1 for u in job.units if c[0] not in u.blocked) for c in copies]


def _judge_cap(run: _WhatIfRun, free: _WhatIfRun, templates: Sequence[NodeTemplate], cap: int) -> None:
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
    free_bound = None if free.outcome.verdict is None else free.outcome.verdict.bound
    free_cost_bound = _int(other.get("cost_bound"))
    proven_overall = (
        proven(run.outcome)
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
    if proven(run.outcome) and not proven_overall:
        _told_again(run.outcome, capped=True)


def _told_again(outcome: PlanOutcome, *, capped: bool = False, proven: bool = True) -> None:
    """The plan's verdict again (`bounds.verdict`) with what what-if adds to the weight's
    proof: under the user's cap (`capped`), or with the least cost not proven (`proven`).
    Only the status changes."""
    was = outcome.verdict
    assert was is not None  # called on an OPTIMAL plan
    told = verdict(
        was.objective, was.bound, was.bound_from, capped=capped, proven=proven, cut_short=was.cut_short
    )
    outcome.verdict = told


def _pods(n: int) -> str:
    return f"{n} pod" if n == 1 else f"{n} pods"


def _unplaced(run: _WhatIfRun) -> int:
    """Pods (not units: pods that share a claim are one unit) the run leaves unplaced."""
    return sum(
        max(1, len(u.members)) for u, p in zip(run.units, run.outcome.pods, strict=True) if not p.placed
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plan_capped(
    cluster: Cluster,
    pending: Pending,
    nodes: Sequence[str],
    templates: Sequence[NodeTemplate],
    caps: Sequence[int],
) -> _WhatIfRun:
    """The what-if plan with at most `caps[t]` copies of template t (module docstring)."""
    expanded, copies = with_copies(cluster, templates, caps)
    order = sorted(range(len(templates)), key=lambda t: (templates[t].cost, t))
    node_list = [*nodes, *(n for t in order for n in copies[t])]
    job = pending.job(expanded, node_list)
    units = list(job.units)
    first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=pending.options.progress).plan(job)
    if pending.options.allocator == "reference":
        outcome = replace(first, allocator="reference")
        outcome.stats["whatif_model"] = "first fit over the existing nodes, then the copies (not minimal)"
    else:
        cost = NodeCosts(
            {n: templates[t].cost for t in range(len(templates)) for n in copies[t]},
            {n: t for t in range(len(templates)) for n in copies[t]},
        )
        planned = plan_aggregated(job, first, cost)
        if isinstance(planned, str):
            return _greedy(cluster, pending, nodes, templates, copies, caps, planned)
        outcome = planned
        if outcome.stats.get("fallback"):  # first fit's copies: the model's cost proof is not this plan's
            outcome.stats["cost_bound"] = 0
    if job.book.warnings:
        outcome.stats["warnings"] = _template_warnings(job.book.warnings, templates, copies)
    record(outcome.stats, pending.options.deadline)  # stats["cut_short_by_timeout"]: it fired
    run = _WhatIfRun(outcome, _added(expanded, outcome, templates, copies), units, expanded)
    cost_bound = _int(outcome.stats.get("cost_bound"))
    if proven(outcome) and (cost_bound is None or cost_bound < run.added.cost):
        # the weight is proven, the least cost is not (first fit's copies, an unproven pricing)
        _told_again(outcome, proven=False)
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
    pending: Pending,
    nodes: Sequence[str],
    templates: Sequence[NodeTemplate],
    copies: list[list[str]],
    caps: Sequence[int],
    why: str,
) -> _WhatIfRun:
    """The per-device fallback: copies added one at a time, the best weight gain per cost
    first, until the weight of the plan with every copy is reached. When no single copy adds
    weight before that (a gang that needs several nodes at once), it starts again from every
    copy and removes them, costliest template first, while the weight stays — fewest unplaced
    pods come before cost. Greedy is not minimal (a big copy that gains most per cost first can
    leave a remainder that a second copy must cover, where two mid copies were cheaper), so its
    status comes from bounds, not from the last per-device solve: the weight bound of the plan
    with every copy, and the cost bound of `_cost_floor`; OPTIMAL only when both are met."""

    def attempt(counts: list[int]) -> _WhatIfRun:
        c, _ = with_copies(cluster, templates, counts)
        names = [*nodes, *(n for t, k in enumerate(counts) for n in copies[t][:k])]
        job = pending.job(c, names)
        first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=pending.options.progress).plan(job)
        return _WhatIfRun(
            ALLOCATORS[pending.options.allocator].improve(job, first), Added(), list(job.units), c
        )

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
    floor = _cost_floor(cluster, pending, nodes, templates, caps, target)
    stats = outcome.stats
    weight = best.weight
    weight_bound = max(weight_bound, weight)
    told = verdict(weight, weight_bound, "the plan with every copy", proven=added.cost <= floor)
    outcome.verdict = told
    least = proven(outcome)  # the weight and the least cost
    stats.update(
        {
            "aggregated": f"no: {why}; copies added one at a time (greedy)",
            "whatif_model": "greedy (copies one at a time); bounds: the plan with every copy (weight), "
            "an LP relaxation over the templates (cost)",
            "cost_bound": added.cost if least else min(floor, added.cost),
        }
    )
    return _WhatIfRun(outcome, added, units, c)


def _weight_bound(outcome: PlanOutcome, units: Sequence[Unit]) -> int:
    """An upper bound on the weight of every plan of the run's `units`: the allocator's proven
    bound, else the weight of every pod (the reference and an interrupted search prove
    nothing) — each pod with its own weight (`Unit.weight`), as the allocators' bounds count."""
    bound = None if outcome.verdict is None else outcome.verdict.bound
    if bound is not None and outcome.allocator != "reference":
        return bound
    return sum(u.weight for u in units)


def _cost_floor(
    cluster: Cluster,
    pending: Pending,
    nodes: Sequence[str],
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
        job = pending.job(c, [*existing, *(n for ns in names for n in ns)])
        job = replace(job, gangs={})
        first = FirstFit(max_steps=Cpsat.first_fit_steps, progress=pending.options.progress).plan(job)
        improved = ALLOCATORS[pending.options.allocator].improve(job, first)
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


__all__ = ["Added", "Pending", "copies_needed", "plan_with_templates"]
