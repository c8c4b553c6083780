"""Gang minimums: a plan places either none of a gang's pods or at least its minCount,
read again from the PodGroup and Pod objects (KEP-4671).

Why a second reading: the allocators learn gangs from `planning.gangs.resolve_gangs` and their
own bookkeeping (first fit's rollback, `encoders.gangs`); this module checks the finished
plan from the raw objects alone. For every PodGroup with `gang.minCount` that a placed pod
names (`spec.schedulingGroup.podGroupName`, same namespace), it counts the pods the plan
places and the pods of the group already bound to a node (not Succeeded/Failed, not in the
plan) and reports the gang when that sum is below minCount.

Topology (KEP-5732, `spec.schedulingConstraints.topology[0].key`, with `topology` on), for
a PodGroup of either policy (upstream's placement cycle reads the constraint, not the policy):
the placed pods (at the nodes of `nodes`) and the group's bound pods must all run on nodes
whose Node objects carry that label with one value; a node without the label, or two values,
is a violation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..api.cluster import Cluster
from ..api.models import Pod
from .violations import Violation


def _group(pod: Pod) -> tuple[str, str] | None:
    group = pod.spec.scheduling_group
    return (pod.metadata.ns, group.pod_group_name) if group is not None else None


def check_gangs(
    cluster: Cluster,
    placed: Sequence[Pod],
    nodes: Mapping[tuple[str, str], str | None] | None = None,
    topology: bool = True,
) -> list[Violation]:
    """Every gang the plan places below its minCount, and (`topology`, with `nodes`: placed
    pod (namespace, name) -> its node) every gang whose pods are in more than one topology
    domain. `placed`: the pods the plan places."""
    planned = {p.key for p in placed}
    count: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for pod in placed:
        g = _group(pod)
        if g is not None:
            count[g] = count.get(g, 0) + 1
            if nodes is not None:
                where.setdefault(g, []).append((pod.metadata.name, nodes.get(pod.key)))
    for pod in cluster.pods.values():
        g = _group(pod)
        phase = pod.status.phase if pod.status else None
        running = pod.spec.node_name and phase not in ("Succeeded", "Failed")
        if g in count and running and pod.key not in planned:
            count[g] += 1
            where.setdefault(g, []).append((pod.metadata.name, pod.spec.node_name))
    out: list[Violation] = []
    if topology and nodes is not None:
        out += _topology(cluster, where)
    for (ns, name), n in sorted(count.items()):
        group = cluster.pod_groups.get((ns, name))
        gang = group.spec.scheduling_policy.gang if group is not None else None
        if gang is not None and n < gang.min_count:
            ref = f"{ns}/{name}"
            why = f"PodGroup {ref} has {n} pods placed or bound, fewer than its gang minCount"
            why += f" {gang.min_count}"
            out.append(Violation(ref, None, "gang", why))
    return out


def _topology(
    cluster: Cluster, where: Mapping[tuple[str, str], list[tuple[str, str | None]]]
) -> list[Violation]:
    """PodGroups with a topology key whose placed and bound pods do not share one label value."""
    out: list[Violation] = []
    for (ns, name), pods in sorted(where.items()):
        group = cluster.pod_groups.get((ns, name))
        sc = group.spec.scheduling_constraints if group is not None else None
        if group is None or sc is None or not sc.topology:
            continue
        key = sc.topology[0].key
        values: dict[str | None, str] = {}
        for pod, node in pods:
            obj = cluster.nodes.get(node) if node is not None else None
            values.setdefault(obj.metadata.labels.get(key) if obj is not None else None, f"{pod} on {node}")
        if len(values) > 1 or None in values:
            seen = "; ".join(f"{key}={v if v is not None else '(none)'}: {p}" for v, p in values.items())
            why = f"PodGroup {ns}/{name} must run in one topology domain of label {key}, but: {seen}"
            out.append(Violation(f"{ns}/{name}", None, "gang-topology", why))
    return out
