"""Every gang rule of a plan, in one place: which gangs a run has (`resolve_gangs`), their
topology domains (`in_domains`, `domain_choices`, `in_domain`), how many pods each must still
place (`gang_needs`, `gang_counts`), which pods without claims follow their gang
(`always_placed`, `free_units`), the per-device model's gang rows (`gang_infos`) and why a
gang's pods are left out (`gang_reason`, `no_domain`).

Why one module: first fit (`solver.planners.firstfit`), the per-device model (`policy.Cpsat`), the
aggregated model (`solver.planners.aggregated.master`) and the pipeline each apply these rules; written
once here, they cannot drift apart. The gangs themselves are `planning.job.Gang` (KEP-4671
minCount, KEP-5732 topology); the model's rows are `encoders.gangs`, the checker's reading
`check.gangs`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..api.cluster import Cluster
from ..api.models import PodGroup
from ..api.strict import suggest
from ..errors import InputError
from ..gates import FeatureGates
from ..problem.flat import GangInfo
from ..problem.resources import DONE_PHASES
from ..reasons import Kind, Reason
from .job import Gang, Job, Unit, book_limits
from .outcome import PlanOutcome, PodPlan


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
    (`firstfit.batch.FirstFit` still places its pods together, in the PodGroup cycle's order).

    A CompositePodGroup hierarchy (`spec.parentCompositePodGroupName`, 1.37 alpha) is refused
    rather than ignored: its minGroupCount would change which pods may be placed."""
    if not gates.GenericWorkload:
        return {}
    gangs: dict[str, Gang] = {}
    sizes: Counter[tuple[str, str]] | None = None
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
            sizes = _sizes(cluster) if sizes is None else sizes
            held = tuple(
                (h.name, h.reason)
                for h in cluster.held.values()
                if h.pod is not None
                and not h.pod.spec.node_name
                and h.pod.spec.scheduling_group is not None
                and h.pod.spec.scheduling_group.pod_group_name == name
                and h.pod.metadata.ns == ns
            )
            gangs[m.group] = Gang(
                m.group,
                min_count,
                len(bound_nodes),
                key,
                domains,
                basic=basic,
                held=held,
                size=sizes[(ns, name)],
            )
    return gangs


def _sizes(cluster: Cluster) -> Counter[tuple[str, str]]:
    """How many pods of the input name each PodGroup (namespace, name) and may still run
    (pending, held or bound, not finished), in one pass: fewer than minCount and no plan places
    the gang, whatever the devices — the gang's reason says so (`Gang.short`) rather than
    reading as if the others did not fit."""
    keys: dict[tuple[str, str], tuple[str, str]] = {}
    for key, pod in cluster.pods.items():
        group = pod.spec.scheduling_group
        if group is not None and not (pod.status and pod.status.phase in DONE_PHASES):
            keys[key] = (pod.metadata.ns, group.pod_group_name)
    for key, h in cluster.held.items():
        group = h.pod.spec.scheduling_group if h.pod is not None else None
        if h.pod is not None and group is not None:
            keys[key] = (h.pod.metadata.ns, group.pod_group_name)
    return Counter(keys.values())


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
        mine = unit.gang_pods(gangs)
        if not any(gangs[g].topology is not None for g in mine):
            out.append(unit)  # nothing to add: no copy of its blocked nodes (pods x nodes)
            continue
        blocked = dict(unit.blocked)
        for g in mine:
            gang = gangs[g]
            if gang.topology is None:
                continue
            for n in nodes:
                if n not in blocked and gang.domain_of(n) is None:
                    blocked[n] = Reason.of(
                        Kind.NO_TOPOLOGY, node=n, gang=g, label=gang.topology, held=_held(gang)
                    )
        out.append(replace(unit, blocked=blocked) if len(blocked) != len(unit.blocked) else unit)
    return out


def _held(gang: Gang) -> str | None:
    """Where the gang's bound pods are, in words (None: it has none)."""
    if not gang.bound:
        return None
    if not gang.domains:
        return "its bound pods span domains"
    return f"its bound pods are in {gang.domains[0][0]}"


def always_placed(job: Job, modelled: set[int], first: PlanOutcome | None) -> set[int]:
    """Units the model leaves out that are placed whenever their gang is (or always, outside
    gangs): no claims and a node without node limits they may use (`open_node`). First fit
    places such a unit unless its gang failed (`first`: its plan; None: not known)."""
    return {
        i
        for i, u in enumerate(job.units)
        if i not in modelled
        and not u.claims
        and ((first is not None and first.pods[i].placed) or open_node(job, u) is not None)
    }


def open_node(job: Job, unit: Unit) -> str | None:
    """The first node the unit may use that limits no node resources (None: there is none)."""
    return next((n for n in job.nodes if n not in unit.blocked and not book_limits(job, [n])), None)


def claimed_units(job: Job) -> set[int]:
    """The units with claims: those the aggregated model places (others follow their gangs)."""
    return {i for i, u in enumerate(job.units) if u.claims}


def gang_needs(job: Job, modelled: set[int], first: PlanOutcome | None) -> dict[str, int]:
    """Gang -> `need`: its minCount less the pods placed whenever it is (bound, or outside the
    model `modelled`: no claims and no node limits, `always_placed`)."""
    sure = gang_counts(job, always_placed(job, modelled, first))
    return {g: gang.min_count - sure[g] for g, gang in job.gangs.items()}


def gang_counts(job: Job, counted: Iterable[int]) -> dict[str, int]:
    """Gang -> its pods placed by the units `counted`, plus those already bound."""
    out = {g: gang.bound for g, gang in job.gangs.items()}
    for i in counted:
        for g, k in job.units[i].gang_pods(job.gangs).items():
            out[g] += k
    return out


def short_gangs(job: Job, counts: Mapping[str, int], names: Iterable[str] | None = None) -> list[str]:
    """The gangs among `names` (default: every gang of the job), sorted, that `counts` (gang ->
    pods placed, `gang_counts`) leaves below their minCount: the all-or-nothing rule of
    KEP-4671, said once for first fit, the models' expansion and the reasons."""
    return sorted(g for g in (job.gangs if names is None else names) if counts[g] < job.gangs[g].min_count)


def free_units(
    job: Job, modelled: set[int], first: PlanOutcome, chosen: Mapping[int, object]
) -> dict[int, PodPlan]:
    """The PodPlans of the units outside the model that the plan places: every such unit
    whose gangs (if any) are placed — a gang is placed when the chosen pods and these reach
    its minCount (`encoders.gangs` guarantees that none of its pods is chosen otherwise)."""
    always = always_placed(job, modelled, first)
    counts = gang_counts(job, set(chosen) | always)
    out: dict[int, PodPlan] = {}
    for i in sorted(always):
        unit = job.units[i]
        if short_gangs(job, counts, unit.gang_pods(job.gangs)):
            continue
        was = first.pods[i]
        if was.placed:
            out[i] = was
        else:
            out[i] = PodPlan(unit.name, open_node(job, unit), [], None, unit.priority, placed=True)
    return out


def gang_reason(job: Job, unit: Unit, chosen: Iterable[int], free: Iterable[int]) -> Reason:
    """Why a pod of a gang the plan does not place is left out."""
    counts = gang_counts(job, set(chosen) | set(free))
    short = short_gangs(job, counts, unit.gang_pods(job.gangs))
    if short:
        return job.gangs[short[0]].short(counts[short[0]])
    return Reason.of(Kind.LEFT_OUT)


def gang_infos(job: Job, form_units: Sequence[int], first: PlanOutcome) -> tuple[GangInfo, ...]:
    """`Problem.gangs`: per gang with a modelled pod, its forms (`form_units`: the unit of each
    form of the per-device model, `perdevice.PodForm`) and how many pods each places; `need`
    is minCount less the pods placed whenever the gang is (bound, or outside the model: no
    claims and no node limits)."""
    need = gang_needs(job, set(form_units), first)
    groups: dict[str, list[tuple[int, int]]] = {}
    for g, unit in enumerate(form_units):
        for name, k in job.units[unit].gang_pods(job.gangs).items():
            groups.setdefault(name, []).append((g, k))
    return tuple(
        GangInfo(
            name,
            need[name],
            tuple(gs),
            tuple(frozenset(ns) for _, ns in job.gangs[name].domains) if job.gangs[name].topology else (),
            counted=not job.gangs[name].basic,
        )
        for name, gs in sorted(groups.items())
    )


def domain_choices(job: Job, block: list[int], gang_of: list[dict[str, int]]) -> list[dict[str, str]]:
    """The candidate placements of a block: one label value per gang with a topology
    constraint, every combination in order of values ([{}] without such gangs; [] when a
    constrained gang has no domain at all)."""
    names = sorted({g for j in block for g in gang_of[j] if job.gangs[g].topology is not None})
    out: list[dict[str, str]] = [{}]
    for g in names:
        out = [{**c, g: v} for c in out for v, _ in job.gangs[g].domains]
    return out


def in_domain(job: Job, unit: Unit, choice: Mapping[str, str]) -> Unit:
    """The unit restricted to the chosen domains of its gangs: the other nodes blocked."""
    blocked = dict(unit.blocked)
    for g, value in choice.items():
        if g not in unit.gang_pods(job.gangs):
            continue
        gang = job.gangs[g]
        inside = dict(gang.domains)[value]
        for n in job.nodes:
            if n not in blocked and n not in inside:
                blocked[n] = Reason.of(Kind.OUTSIDE_DOMAIN, node=n, gang=g, label=gang.topology, value=value)
    return replace(unit, blocked=blocked) if len(blocked) != len(unit.blocked) else unit


def no_domain(
    job: Job,
    block: list[int],
    gang_of: list[dict[str, int]],
    tried: list[tuple[dict[str, str], dict[int, PodPlan], int]],
) -> dict[int, PodPlan]:
    """Every pod of a block that fits in no single domain: why, with the domain that came
    closest (most of the block's gang pods placed) or that there is no domain at all."""
    names = sorted({g for j in block for g in gang_of[j] if job.gangs[g].topology is not None})
    gangs = ", ".join(f"PodGroup {g} (label {job.gangs[g].topology})" for g in names)
    if not tried:
        why = Reason.of(Kind.NO_DOMAIN, gangs=gangs, tried=0)
    else:
        choice, plans, score = max(tried, key=lambda t: t[2])
        where = ", ".join(f"{job.gangs[g].topology}={v}" for g, v in sorted(choice.items()))
        blocker = next((plans[j] for j in block if not plans[j].placed), None)
        why = Reason.of(
            Kind.NO_DOMAIN,
            gangs=gangs,
            goal=_goals(job, names),
            tried=len(tried),
            closest=where,
            score=score,
            blocker=None if blocker is None else blocker.name,
            blocked=None if blocker is None else blocker.reason,
        )
    return {
        j: PodPlan(job.units[j].name, None, list(job.units[j].claims), None, job.units[j].priority, why=why)
        for j in block
    }


def _goals(job: Job, names: Sequence[str]) -> str:
    """What the gangs `names` must reach, in words (one phrase when they agree)."""
    goals = list(dict.fromkeys(job.gangs[g].goal for g in names))
    return goals[0] if len(goals) == 1 else "their minimums"
