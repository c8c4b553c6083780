"""The one run: resolve pods and nodes → first fit → allocator → results → check.

Why one pipeline: "allocate these claims on this node", "how many of these independent
claims fit on this node" and "where do these pods go on this cluster" are the same question
asked of different pods and nodes. `plan()` is the engine; `allocate()` is a plan of one pod
(its claims together, all or none) over the candidate nodes; independent claims on one node
are a plan in which every claim is its own pod (`plan(cluster, [[c] for c in claims], [node])`).

Every run goes the same way (`run`):
1. resolve the pods (`Unit`s: claims to place, priority, the nodes the pod may use) and nodes;
2. first fit (`firstfit.batch.FirstFit`): pod after pod, the first node that fits — what the
   scheduler would do, and the floor and hint of every other allocator;
3. the chosen allocator (`Options.allocator`) improves on it (`policy.Cpsat`), never
   placing less weight than first fit; when first fit already placed every pod that may be
   placed, its plan is proven optimal and no model runs. At scale the aggregated model runs
   before first fit, and first fit only when the model does not prove its plan optimal
   (`Cpsat.without_first_fit`: a proven optimum places at least first fit's weight);
4. every placement is turned into `status.allocation` (`solver.results`) and verified by the
   independent checker (`solver.check`) before it is returned; the plan's pods are checked
   against the nodes' allocatable resources (`check.node_resources`).

Pods also take node resources (cpu, memory, pod slots: `solver.problem.demand`); pods without
claims take part in a plan for that reason, and a pod's extended resources may become a
special claim on nodes where DRA serves them (KEP-5004).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .api.cluster import Cluster
from .api.load import load_lenient
from .api.models import AllocationResult, Pod, ResourceClaim
from .api.templates import NodeTemplate
from .cel.checks import validate_all
from .errors import CelError, InputError, ValidationErrors
from .gates import FeatureGates
from .planners.bounds import checked
from .planners.partition import plan_partitioned
from .planners.run import fewer_collections, run
from .planners.whatif import Pending, plan_with_templates
from .planning.finish import leaving_the_check, per_pod, with_held
from .planning.job import Member, Options, Unit
from .planning.outcome import PlanOutcome, PodPlan, Stats, Verdict
from .planning.resolve import (
    PodInput,
    check_nodes_known,
    known_nodes,
    pending,
    pod_group_ref,
    resolve_claims,
    resolve_nodes,
    unallocated,
    units_for,
    with_nodes,
)
from .planning.triage import held_for_cel_error, split_held, triage, triaged
from .problem.demand import Needs
from .problem.nodealloc import FootprintBook
from .problem.pods import pod_claims
from .reasons.words import say

DEFAULT_MAX_NEW_NODES: int | None = None
"""What-if plans' cap on copies of each node template: None derives it from the pending pods
(`planners.whatif.copies_needed`: no optimal plan adds more), so no default cuts an answer short."""


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
    stats: Stats = field(default_factory=lambda: Stats())
    plan: PodPlan | None = None
    """The one-pod plan behind this outcome, as `plan()` returns it (the Pod, its extended
    resources' status), for output that shows the Pod; None when decided before planning
    (nothing to allocate, or the only node refused the pod)."""
    verdict: Verdict | None = None
    """What the plan proved (`PlanOutcome.verdict`); None without a CP-SAT plan."""

    def allocation(self, name: str) -> AllocationResult | None:
        for c in self.claims:
            if c.metadata.name == name or f"{c.metadata.namespace}/{c.metadata.name}" == name:
                return c.status.allocation if c.status else None
        raise KeyError(name)


def load(
    paths: Iterable[str | Path],
    *,
    validate: bool = True,
    strict: bool = True,
    feature_gates: FeatureGates | str | None = None,
    ignore_scheduling_gates: bool = False,
) -> Cluster:
    """Load files, directories or `-` (stdin) into a Cluster and, by default, validate it.

    `strict` (the default, as `dra-solver validate`): any problem raises ValidationErrors
    with every problem (API rules, references, CEL compilation). `strict=False`, as `plan`,
    `explain`, `check` and `allocate` read their input: a problem in one object costs only
    what depends on it (docs/semantics.md, "Messy clusters") — the pods that depend on it are
    held (`cluster.held`: listed by every plan as not placed, with the problem as the reason),
    each problem is one line of `cluster.warnings`, the rest is planned; only input that is not
    Kubernetes at all still raises. `Cluster.from_paths` loads without validating."""
    if strict:
        cluster = Cluster.from_paths(paths)
        if validate:
            errors = validate_all(cluster, gates=FeatureGates.of(feature_gates) if feature_gates else None)
            if errors:
                raise ValidationErrors(errors)
        return cluster
    pairs, warnings, unread = load_lenient(paths)
    cluster = Cluster.from_objects(obj for obj, _ in pairs)
    cluster.warnings.extend(warnings)
    cluster.unread = unread
    gates = FeatureGates.of(feature_gates)
    done = triage(
        cluster,
        validate_all(cluster, gates=gates) if validate else [],
        gates,
        ignore_scheduling_gates=ignore_scheduling_gates,
    )
    if done.fatal:
        raise ValidationErrors(done.fatal)
    done.cluster.warnings.extend(done.warnings)
    return done.cluster


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
    could use, derived), fewest unplaced pods first, then least cost (`solver.planners.whatif`);
    `outcome.added_nodes` / `added_slices` are the copies added; a cap that binds is reported
    in `stats["whatif_cap"]`."""
    with fewer_collections():
        return _plan(
            cluster, pods, nodes, Options.of(options, **changes), priorities, node_templates, max_new_nodes
        )


def _plan(
    cluster: Cluster,
    pods: Sequence[PodInput] | None,
    nodes: Sequence[str] | None,
    opts: Options,
    priorities: Sequence[int] | None,
    node_templates: Sequence[NodeTemplate | str | Path] | None,
    max_new_nodes: int | None,
) -> PlanOutcome:
    """`plan` with its options resolved, inside `fewer_collections` (resolving the pods and
    the per-pod output allocate as much as the run). The pods the scheduler would leave
    pending whatever the plan (`planning.triage`: a problem they depend on, scheduling gates,
    bound without allocated claims) are listed, not planned (`with_held`)."""
    cluster = triaged(cluster, opts.feature_gates, ignore_scheduling_gates=opts.ignore_scheduling_gates)
    asked, held = split_held(cluster, pods)
    if priorities is not None and pods is not None and held and len(priorities) == len(pods):
        kept = {id(p) for p in asked or ()}
        priorities = [prio for p, prio in zip(pods, priorities, strict=True) if id(p) in kept]
    pods = cast("Sequence[PodInput] | None", asked)
    if node_templates is not None:  # the templates' copies may be the only nodes
        existing = resolve_nodes(cluster, nodes) if nodes is not None or known_nodes(cluster) else []
        return with_held(
            _what_if(cluster, pods, existing, opts, priorities, node_templates, max_new_nodes), held
        )
    node_list = resolve_nodes(cluster, nodes)
    units = units_for(cluster, pods, priorities, node_list, opts.feature_gates, opts.deadline)
    while True:
        search = leaving_the_check(opts, units)  # --timeout: the check's time is not the search's
        try:
            if opts.partitions > 1:
                outcome = plan_partitioned(cluster, units, node_list, search)
            else:
                outcome = run(cluster, units, node_list, search)
        except CelError as exc:  # one pod's runtime error costs that pod, not the plan
            fewer = held_for_cel_error(units, exc)
            if fewer is None:
                raise
            units, more = fewer
            held = [*held, *more]
            continue
        break
    with fewer_collections():  # freezes what the plan built: the per-pod output only reads it
        done = per_pod(cluster, units, outcome, opts.feature_gates, opts.deadline)
    return with_held(checked(done, outcome.verdict), held)


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
    outcome, added, units, expanded = plan_with_templates(
        cluster, Pending(pods, priorities, opts), node_list, templates, max_new_nodes
    )
    result = checked(per_pod(expanded, units, outcome, opts.feature_gates, opts.deadline), outcome.verdict)
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
        cluster = triaged(cluster, opts.feature_gates, ignore_scheduling_gates=opts.ignore_scheduling_gates)
        pod_obj = cluster.pod(pod) if isinstance(pod, str) else pod
        held = cluster.held.get((pod_obj.metadata.ns, pod_obj.metadata.name))
        if held is not None:
            return AllocationOutcome(False, [], held.reason, opts.allocator, pod_obj.spec.node_name)
        node = node if node is not None else pod_obj.spec.node_name
        chosen = unallocated(pod_claims(cluster, pod_obj, opts.feature_gates))
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
    members = (Member(name, pod_obj, refs, pod_group_ref(pod_obj) if pod_obj else None),)
    # KEP-5517: what the pod's devices add to its node resources (none with the gate off).
    dra = None
    if pod_obj is not None and pending(pod_obj):
        dra = FootprintBook(cluster, opts.feature_gates).footprint(pod_obj)
    needs = (Needs.of(pod_obj, dra),) if pod_obj is not None else ()
    unit = Unit(name, tuple(chosen), 0, members=members, needs=needs)
    unit = with_nodes(cluster, unit, candidates, gates=opts.feature_gates)
    if not chosen and not unit.blocked and not any(n.demand for n in needs):
        return AllocationOutcome(True, [], allocator=opts.allocator, node=candidates[0])
    if len(candidates) == 1 and unit.blocked:
        return AllocationOutcome(False, [], say(unit.blocked[candidates[0]]), opts.allocator, candidates[0])
    planned = run(cluster, [unit], candidates, opts)
    outcome = checked(per_pod(cluster, [unit], planned, opts.feature_gates, opts.deadline), planned.verdict)
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
        outcome.verdict,
    )


def _template_pods(cluster: Cluster) -> list[str]:
    pods = cluster.pods.values()
    uses_template = (p for p in pods if any(e.resource_claim_template_name for e in p.spec.resource_claims))
    return [p.namespaced_name for p in uses_template]


__all__ = [
    "AllocationOutcome",
    "allocate",
    "load",
    "plan",
]
