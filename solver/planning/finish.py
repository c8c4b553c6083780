"""Per-pod plans out: a plan of units split back into one `PodPlan` per pod, reserved and verified.

The last stage of every run (`solver.pipeline`): joined units (pods sharing a claim) become
their member pods again, each placed claim names the Pods (or PodGroup) that use it in
`status.reservedFor`, claims the input had allocated are reserved for the placed pods that use
them, and the whole plan passes the checker's node-resource, placement and gang rules before
it is returned (`per_pod`), with the verdict of that plan (`planning.outcome.Verdict`).

Under a deadline (`--timeout`) the check polls it between pods: a check cut short proves
nothing, so when the deadline (plus `CHECK_GRACE` of it) passes before the check is done, the
plan returned places no pod — every pod `CHECK_CUT_SHORT` — rather than an unchecked plan
(docs/semantics.md, "Limits and determinism"). The search leaves the check its time
(`CHECK_CPU_PER_POD`, `deadline.Deadline.leaving`), so this is the exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from ..api.cluster import Cluster, HeldPod
from ..api.models import Pod, PodGroup, ResourceClaim
from ..check import CheckFailed, PodPlacement, check_gangs, check_node_resources, check_placements
from ..deadline import Deadline
from ..gates import FeatureGates
from ..problem.pods import pod_claims, pod_group_of
from ..results import with_reservations
from .job import Member, Options, Unit
from .outcome import PlanOutcome, PlanSummary, PodPlan, record

CHECK_CPU_PER_POD = 0.00012
"""CPU seconds the final check takes per Pod on the reference machine (its node's resources,
the scheduler's filters, its claims; measured on the overshoot benchmark's inputs, 2 shared
cores at load 9: 91-101 us per Pod with resources, docs/benchmarks.md "Bounded runs"), and
`CHECK_CPU_PER_CLAIMS` per pod given as its claims alone (13-20 us: no Pod to check): what
the search leaves the check, at the run's pace (`Deadline.leaving`)."""
CHECK_CPU_PER_CLAIMS = 0.000025

CHECK_GRACE = 0.05
"""The final check may run this share of the deadline's length past it (half of the 10 % a run
may overshoot) before it gives up: a check nearly done is worth finishing."""

CHECK_CHUNK = 32
"""Pods checked between two looks at the deadline."""

CHECK_CUT_SHORT = (
    "--timeout passed before the plan's final check was done (an unchecked plan is "
    "never returned); a longer --timeout places it"
)


def leaving_the_check(options: Options, units: Sequence[Unit]) -> Options:
    """`options` with a deadline that leaves the final check of `units`' pods its time
    (`CHECK_CPU_PER_POD` each, `CHECK_CPU_PER_CLAIMS` for a pod that is only its claims,
    `Deadline.leaving`); unchanged without a deadline."""
    if options.deadline is None:
        return options
    pods = sum(max(len(u.members), 1) for u in units)
    with_pod = sum(1 for u in units for m in u.members if m.pod is not None)
    seconds = CHECK_CPU_PER_POD * with_pod + CHECK_CPU_PER_CLAIMS * (pods - with_pod)
    return Options.of(options, deadline=options.deadline.leaving(seconds, what=f"checking {pods:,} pods"))


class _CheckCutShort(Exception):
    """The deadline passed while the final check ran."""


def _overdue(deadline: Deadline | None) -> bool:
    """Whether the check's time (the deadline and its grace) is over; fires the deadline."""
    return deadline is not None and deadline.passed(CHECK_GRACE)


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


def per_pod(
    cluster: Cluster,
    units: Sequence[Unit],
    outcome: PlanOutcome,
    gates: FeatureGates,
    deadline: Deadline | None = None,
) -> PlanOutcome:
    """One PodPlan per pod again (joined units split into their members, each with its own
    priority, `Member.priority`), with each placed
    claim's `status.reservedFor` naming the Pods that use it; the placed pods verified against
    the nodes' allocatable resources (`check.check_node_resources`), the scheduler's node
    filters and their claims' allocation and reservations (`check.check_placements`) and the
    gang minimums (`check.check_gangs`). Its verdict must speak of this realized plan
    (`solver.planning.outcome.PlanSummary.of` checks it): the objective counts the pods
    returned, not the model's units. `deadline`: when it passes before the check is done, the plan places no
    pod (module docstring)."""
    try:
        done = _per_pod(cluster, units, outcome, gates, deadline)
    except _CheckCutShort:
        unchecked = [PodPlan(u.name, None, list(u.claims), CHECK_CUT_SHORT, u.priority) for u in units]
        # no verdict: the one made was of the plan not returned (`planners.bounds.checked`)
        nothing = PlanOutcome(unchecked, outcome.allocator, outcome.stats.copy())
        done = _per_pod(cluster, units, nothing, gates, None)
    record(done.stats, deadline)  # stats["cut_short_by_timeout"]: it fired
    return done


def _per_pod(
    cluster: Cluster,
    units: Sequence[Unit],
    outcome: PlanOutcome,
    gates: FeatureGates,
    deadline: Deadline | None,
) -> PlanOutcome:
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
    if _overdue(deadline):
        raise _CheckCutShort
    verify_resources(cluster, pods, gates)
    _verify_placements(cluster, pods, gates, deadline)
    if _overdue(deadline):
        raise _CheckCutShort
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
    out = PlanOutcome(pods, outcome.allocator, outcome.stats.copy(), verdict=outcome.verdict)
    PlanSummary.of(out)  # raises when the verdict speaks of another plan than the one returned
    return out


Outcome = TypeVar("Outcome", bound=PlanOutcome)


def with_held(outcome: Outcome, held: Sequence[HeldPod]) -> Outcome:
    """The plan with the held pods (`planning.triage`) listed after its own, not placed, each
    with its reason — the scheduler leaves them pending (`PlanSummary` counts them among the
    pods, never among the placed; no plan places them, so the verdict and its bound still hold).
    The outcome's type is kept (a `PreemptOutcome` stays one)."""
    if not held:
        return outcome
    listed = {p.name for p in outcome.pods}
    extra = [
        PodPlan(
            h.name,
            None,
            [h.claim] if h.claim and not h.stub else [],  # a stub is never written as the input's
            h.reason,
            pod=None if h.stub else h.pod,
            unread=h.stub and h.claim is None,
        )
        for h in held
        if h.name not in listed
    ]
    return replace(outcome, pods=[*outcome.pods, *extra])


def verify_resources(cluster: Cluster, pods: Sequence[PodPlan], gates: FeatureGates | None = None) -> None:
    """Every placed pod (its Pod object, `PodPlan.pod`) against its node's allocatable
    resources (`check.check_node_resources`), with the extended resources DRA serves it left
    to its claims, and (`gates`) what its devices add (KEP-5517, from the plan's claims).
    Also the incremental planner's check of what it keeps and adds."""
    placed = []
    for p in pods:
        if p.placed and p.pod is not None and p.node is not None:
            status = p.extended.get(p.name)
            served = frozenset(m.resource_name for m in status.request_mappings) if status else frozenset()
            placed.append((p.pod, p.node, served))
    claims = {c.namespaced_name: c for p in pods if p.placed for c in (*p.claims, *p.reserved)}
    violations = check_node_resources(cluster, placed, gates, claims)
    if violations:
        raise CheckFailed(violations)


def _reserve_held(cluster: Cluster, pods: list[PodPlan], gates: FeatureGates) -> list[PodPlan]:
    """Each placed pod with `PodPlan.reserved`: the claims the input had already allocated that
    it uses, reserved for it (and for its PodGroup, for a group-level claim). Why: the scheduler
    adds every pod it binds to each of its claims' `reservedFor`, not only to the claims it
    allocates; a plan's output without it would show a running pod on a claim that does not
    name it (the checker's `pod-claim-reserved`). A claim several placed pods use is copied
    once, naming all of them, and every one of those pods carries that same copy."""
    if not any(c.status is not None and c.status.allocation is not None for c in cluster.claims.values()):
        # no claim of the input is allocated: none to reserve (a claim made from a template
        # for this plan is not allocated before it), and no pod's claims need resolving again
        return pods
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


def _verify_placements(
    cluster: Cluster, pods: list[PodPlan], gates: FeatureGates, deadline: Deadline | None = None
) -> None:
    """The checker's placement rules on the pods this plan places (the input's bound pods are
    not the plan's doing and are not held against it), with the plan's claims and the
    reservations it adds to claims the input had allocated (`_reserve_held`). Each placement's
    rules concern that pod alone (its node, its claims in the plan's claims), so the pods are
    checked `CHECK_CHUNK` at a time, the deadline looked at in between."""
    placed = [
        PodPlacement(p.pod, p.node, new=True, extended=p.extended.get(p.name))
        for p in pods
        if p.placed and p.pod is not None and p.node is not None
    ]
    claims = {c.namespaced_name: c for p in pods if p.placed for c in (*p.claims, *p.reserved)}
    step = CHECK_CHUNK if deadline is not None else max(len(placed), 1)
    for start in range(0, len(placed), step):
        if _overdue(deadline):
            raise _CheckCutShort
        violations = check_placements(cluster, placed[start : start + step], claims, gates, bound=False)
        if violations:
            raise CheckFailed(violations)


def _member_refs(member: Member, plan_: PodPlan) -> tuple[str, ...]:
    """The member's claims, with its special extended-resource claim when it was placed with one."""
    status = plan_.extended.get(member.name) if plan_.placed else None
    if status is None:
        return member.claims
    ns = member.name.split("/", 1)[0]
    return (*member.claims, f"{ns}/{status.resource_claim_name}")
