"""Gang minimums: a plan places either none of a gang's pods or at least its minCount,
read again from the PodGroup and Pod objects (KEP-4671).

Why a second reading: the allocators learn gangs from `pipeline.resolve_gangs` and their
own bookkeeping (first fit's rollback, `encoders.gangs`); this module checks the finished
plan from the raw objects alone. For every PodGroup with `gang.minCount` that a placed pod
names (`spec.schedulingGroup.podGroupName`, same namespace), it counts the pods the plan
places and the pods of the group already bound to a node (not Succeeded/Failed, not in the
plan) and reports the gang when that sum is below minCount.
"""

from __future__ import annotations

from collections.abc import Sequence

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Pod
from dra_solver.check.violations import Violation


def _key(pod: Pod) -> tuple[str, str]:
    return (pod.metadata.namespace or "default", pod.metadata.name)


def _group(pod: Pod) -> tuple[str, str] | None:
    group = pod.spec.scheduling_group
    return (pod.metadata.namespace or "default", group.pod_group_name) if group is not None else None


def check_gangs(cluster: Cluster, placed: Sequence[Pod]) -> list[Violation]:
    """Every gang the plan places below its minCount. `placed`: the pods the plan places."""
    planned = {_key(p) for p in placed}
    count: dict[tuple[str, str], int] = {}
    for pod in placed:
        g = _group(pod)
        if g is not None:
            count[g] = count.get(g, 0) + 1
    for pod in cluster.pods.values():
        g = _group(pod)
        phase = pod.status.phase if pod.status else None
        running = pod.spec.node_name and phase not in ("Succeeded", "Failed")
        if g in count and running and _key(pod) not in planned:
            count[g] += 1
    out: list[Violation] = []
    for (ns, name), n in sorted(count.items()):
        group = cluster.pod_groups.get((ns, name))
        gang = group.spec.scheduling_policy.gang if group is not None else None
        if gang is not None and n < gang.min_count:
            ref = f"{ns}/{name}"
            why = f"PodGroup {ref} has {n} pods placed or bound, fewer than its gang minCount"
            why += f" {gang.min_count}"
            out.append(Violation(ref, None, "gang", why))
    return out
