"""Pods and nodes in: the input's pods as `Unit`s, the candidate nodes, and `make_job`.

The first stage of every run (`solver.pipeline`): which pods a plan places (`resolve_units`:
each Pod's unallocated claims, or claims given as a pod, with their priorities), pods sharing
an unallocated claim joined into one unit (`join_shared`), the nodes each unit may not use and
why (`with_nodes`), and the `Job` every planner reads (`make_job`, with the gangs of
`solver.planning.gangs`). Nothing here decides a placement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..api.strict import suggest
from ..cel import EvalCache
from ..deadline import Deadline, passed
from ..errors import CutShort, InputError
from ..gates import FeatureGates
from ..problem.demand import Needs, NodeBook
from ..problem.nodealloc import FootprintBook
from ..problem.pods import node_conflict, pod_claims, uses_allocated_claim
from ..problem.resources import DONE_PHASES
from ..problem.scheduling import node_refusal, pod_priority
from ..reasons import Kind, Reason
from .gangs import in_domains, resolve_gangs
from .job import Job, Member, Options, Unit

PodInput = str | Pod | Sequence[str | ResourceClaim]
"""A pod to place: a Pod name (`name` or `namespace/name`), a Pod object, or a list of claims
(names or objects) that form one pod."""


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
        options.deadline,
        options.models,
        options.memo,
        options.per_device_max,
    )


# --- resolving pods and nodes ---------------------------------------------------------------


def resolve_claims(cluster: Cluster, claims: Sequence[str | ResourceClaim] | None) -> list[ResourceClaim]:
    """Default: every claim without status.allocation, in input order."""
    if claims is None:
        return cluster.unallocated_claims()
    out = []
    for c in claims:
        held = cluster.held_claim(c) if isinstance(c, str) else None
        if held is not None:  # left out for a problem (`planning.triage`): that problem, not "not found"
            raise InputError(f"left out of the plan: {held.reason}", obj=f"ResourceClaim {held.name}")
        claim = c if isinstance(c, ResourceClaim) else cluster.claim(c)
        if claim.status is not None and claim.status.allocation is not None:
            raise InputError("claim is already allocated", obj=claim.ref, field="status.allocation")
        out.append(claim)
    return out


RESOLVE_CHUNK = 128
"""Pods resolved between two looks at the run's deadline (`stop_if_passed`)."""


def stop_if_passed(deadline: Deadline | None, done: int, total: int) -> None:
    """Raise `CutShort` when `deadline` has passed while the pods are resolved (`done` of
    `total`). Why: before the search there is no plan to keep, and resolving 5,000 pods takes
    most of a second — past a deadline that the reading left nearly spent (docs/semantics.md,
    "Limits and determinism")."""
    if passed(deadline) and deadline is not None:
        kept = deadline.kept_for()
        why = f" ({kept})" if kept else ""
        raise CutShort(
            f"cut short by --timeout after {deadline.elapsed():.1f} s{why} while resolving the pods "
            f"({done} of {total}), before the search: no plan"
        )


def resolve_units(
    cluster: Cluster,
    pods: Sequence[PodInput] | None,
    priorities: Sequence[int] | None,
    gates: FeatureGates | None = None,
    deadline: Deadline | None = None,
) -> list[Unit]:
    """The pods of a plan, in input order, each with the unallocated claims it needs (`gates`
    decide whether a PodGroup's template entry is one claim for the group; None: defaults).

    Priority: `priorities` when given (one per pod), else each Pod's (spec.priority, its
    PriorityClass, the global default). Pods that share an unallocated claim become one unit
    (the claim is allocated once; see `Unit.members`), at the highest of their priorities."""
    units: list[Unit] = []
    book = FootprintBook(cluster, FeatureGates.of(gates))
    if pods is None:
        if cluster.pods or cluster.held:  # with every Pod held, still no claim is a pod of its own
            for i, (key, pod) in enumerate(cluster.pods.items()):
                if i % RESOLVE_CHUNK == 0:
                    stop_if_passed(deadline, i, len(cluster.pods))
                if key in cluster.held:
                    continue  # bound without allocated claims (`planning.triage`): never planned
                claims = unallocated(pod_claims(cluster, pod, gates))
                if claims or pending(pod):
                    units.append(_pod_unit(cluster, pod, claims, book))
        else:
            units = [_claims_unit(c.namespaced_name, [c]) for c in cluster.unallocated_claims()]
    else:
        for i, item in enumerate(pods):
            if isinstance(item, str | Pod):
                pod = cluster.pod(item) if isinstance(item, str) else item
                units.append(_pod_unit(cluster, pod, unallocated(pod_claims(cluster, pod, gates)), book))
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


def _pod_unit(cluster: Cluster, pod: Pod, claims: list[ResourceClaim], book: FootprintBook) -> Unit:
    """`book`: what the pod's devices add to its node resources (KEP-5517), for a pod to place."""
    member = Member(pod.namespaced_name, pod, tuple(c.namespaced_name for c in claims), pod_group_ref(pod))
    prio = pod_priority(cluster, pod)
    dra = book.footprint(pod) if pending(pod) else None
    return Unit(member.name, tuple(claims), prio, members=(member,), needs=(Needs.of(pod, dra),))


def pod_group_ref(pod: Pod) -> str | None:
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


def units_for(
    cluster: Cluster,
    pods: Sequence[PodInput] | None,
    priorities: Sequence[int] | None,
    nodes: Sequence[str | None],
    gates: FeatureGates,
    deadline: Deadline | None = None,
) -> list[Unit]:
    """The plan's units over `nodes`: the pods (`resolve_units`), those sharing a claim joined
    (`join_shared`), each with the nodes it may not use (`with_nodes`, one memo per plan).
    `deadline`: `CutShort` once it passed (`stop_if_passed`)."""
    units = join_shared(resolve_units(cluster, pods, priorities, gates, deadline))
    return all_with_nodes(cluster, units, nodes, {}, gates, deadline)


def all_with_nodes(
    cluster: Cluster,
    units: Sequence[Unit],
    nodes: Sequence[str | None],
    memo: dict[tuple[str, str | None], Reason | None],
    gates: FeatureGates,
    deadline: Deadline | None = None,
) -> list[Unit]:
    """`with_nodes` for every unit of a plan (`units_for`). Why not one call each: even with the memo, each
    call visits every node, so 50,000 pods on 10,000 nodes cost 500 million lookups. A pod
    alone in its unit whose claims hold no allocation yet (the pods of one Deployment) is
    refused exactly where its scheduling fields refuse it, in words that name the node, never
    the pod: such pods share one answer per scheduling key, computed once."""
    shared: dict[str, Mapping[str | None, Reason]] = {}
    out: list[Unit] = []
    for i, unit in enumerate(units):
        if i % RESOLVE_CHUNK == 0:
            stop_if_passed(deadline, i, len(units))
        key = _sharing_key(cluster, unit, gates)
        if key is None:
            out.append(with_nodes(cluster, unit, nodes, memo, gates))
        elif key in shared:
            out.append(replace(unit, blocked=shared[key]))
        else:
            done = with_nodes(cluster, unit, nodes, memo, gates)
            shared[key] = done.blocked
            out.append(done)
    return out


def _sharing_key(cluster: Cluster, unit: Unit, gates: FeatureGates | None) -> str | None:
    """The scheduling key of a unit's one pod when its refusals depend on nothing else (no
    claim of it allocated: `node_conflict` reads those); None otherwise."""
    if len(unit.members) != 1 or unit.members[0].pod is None:
        return None
    pod = unit.members[0].pod
    if uses_allocated_claim(cluster, pod, gates):
        return None
    return _scheduling_key(pod)


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
    memo: dict[tuple[str, str | None], Reason | None] | None = None,
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
    blocked: dict[str | None, Reason] = {}
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
                blocked[n] = (
                    why if len(pods) == 1 else Reason.of(Kind.MEMBER, pod.namespaced_name, parts=(why,))
                )
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


def unallocated(claims: list[ResourceClaim]) -> list[ResourceClaim]:
    return [c for c in claims if c.status is None or c.status.allocation is None]
