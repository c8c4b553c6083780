"""What `plan` and `allocate` print: the Pods as the scheduler leaves them, next to their claims.

Why: the pod -> node mapping of a plan belongs in the output, in the form Kubernetes writes
it, so the output reads (and can be applied) like the cluster after scheduling: a placed pod
gets `spec.nodeName` and the condition `PodScheduled=True` (as the binding sets them; a stale
`PodScheduled=False` from an earlier attempt is replaced) and, when DRA serves its extended
resources, `status.extendedResourceClaimStatus`; a pod left out gets the `PodScheduled=False` condition
with reason `Unschedulable` and the message, as the scheduler writes it. Input objects are
never modified: each Pod is copied from its dump.

Two forms (`OutputMode`): `changed` is what the plan changes (its Pods and their claims, a
shared claim once); `full` is the whole cluster after the plan — every input object, with the
plan's Pods and claims replaced by their new versions and the claims the plan creates
(template instances, special extended-resource claims) added. Only `full` can be fed back as
input on its own: `changed` repeats input objects with different content, which the loader
refuses (an object defined twice), so it is meant to be applied, read or diffed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from ..api.cluster import Cluster
from ..api.models import Pod, TypeMeta
from ..planning.outcome import PlanSummary, PodPlan, number_text
from ..planning.snapshot import Snapshot


class OutputMode(StrEnum):
    changed = "changed"
    """The plan's Pods and their claims."""
    full = "full"
    """Every input object after the plan: valid input for the next run."""


def pod_after(plan: PodPlan) -> dict[str, Any] | None:
    """The plan's Pod as the scheduler would leave it (None for a pod of plain claims): as the
    one "cluster after a change" writes it (`planning.snapshot.Snapshot.record`)."""
    if plan.pod is None:
        return None
    after = Snapshot(Cluster())
    after.record(plan)
    return _written(after.cluster.pods.get(plan.pod.key, plan.pod), plan.pod)


ADDED = {"spec": ("nodeName",), "status": ("phase", "conditions", "extendedResourceClaimStatus")}
"""The fields scheduling adds to a Pod, in the order they are written after the input's own."""


def _written(pod: Pod, before: Pod) -> dict[str, Any]:
    """`pod` dumped with the input's keys in their places and the ones scheduling added
    (`ADDED`) after them, so that the output diffs against its input line for line (a model
    dumps its declared fields first, in declaration order)."""
    obj = pod.dump()
    for part, added in ADDED.items():
        written = obj.get(part)
        if not written:
            continue
        had = _keys_set(getattr(before, part))
        for key in added:
            if key in written and key not in had:
                written[key] = written.pop(key)
    return obj


def _keys_set(part: BaseModel | None) -> set[str]:
    """The keys a model part dumps (with `exclude_unset`): its fields set and its extra keys."""
    if part is None:
        return set()
    fields = type(part).model_fields
    named = {fields[n].alias or n for n in part.model_fields_set if n in fields}
    return named | set(part.model_extra or {})


ANNOTATION = "dra-solver.io/"
"""The prefix of the annotations a run puts on its output List (`plan_annotations`)."""


def plan_annotations(
    summary: PlanSummary, plans: Sequence[PodPlan], interrupted: bool = False, cut_short: bool = False
) -> dict[str, str]:
    """What `plan -o yaml|json` says of itself, on the List's `metadata.annotations`, so that a
    script reads it from stdout instead of parsing stderr: the numbers of the summary line
    (`solver.planning.outcome.PlanSummary`) and why each pod not placed is not, as JSON (`namespace/name`
    -> reason; a Pod's own condition says it too, a pod of plain claims has no Pod). Values are
    strings, as annotations are; the planning time is left out, so that the same input and
    seed give the same output."""
    out = {
        "allocator": summary.allocator,
        "status": None if summary.status is None else summary.status.value,
        "placed": summary.placed,
        "pods": summary.total,
        "objective": summary.objective,
        "bound": summary.bound,
        "gap": summary.gap,
        "first-fit-placed": summary.first_fit_placed,
        "fallback": summary.fallback,
        "interrupted": "true" if interrupted else None,
        # --timeout ended the run: the answer depends on the machine's speed
        "cut-short-by-timeout": "true" if cut_short else None,
    }
    notes = {
        ANNOTATION + k: v if isinstance(v, str) else number_text(v) for k, v in out.items() if v is not None
    }
    reasons = {p.name: p.reason or "" for p in plans if not p.placed}
    notes[ANNOTATION + "not-placed"] = json.dumps(reasons, sort_keys=False)
    return notes


def changed_objects(plans: Sequence[PodPlan]) -> list[dict[str, Any]]:
    """The Pods of the plan, then their claims (a claim shared by several pods once)."""
    after = Snapshot(Cluster())
    for p in plans:
        after.record(p)
    pods = [_written(after.cluster.pods[p.pod.key], p.pod) for p in plans if p.pod is not None]
    return [*pods, *(c.dump() for c in after.cluster.claims.values())]


def cluster_after(cluster: Cluster, plans: Sequence[PodPlan]) -> list[dict[str, Any]]:
    """Every object of `cluster` after the plan, kind by kind in input order: the plan's Pods
    and claims replaced, its new claims after the input's. Workloads (Deployments, Jobs...)
    appear as the Pods the loader expanded them into, so that loading the result does not
    expand them a second time. The objects a triage took out of the plan (`Cluster.left_out`,
    `planning.triage`) are written back as they were, after those of their kind — a pod it
    held as the plan lists it (pending, with its reason).

    The claims and pods are those of the one "cluster after a change" (`planning.snapshot`):
    each plan's decision recorded there (`Snapshot.record`: a placed pod bound with its
    PodScheduled condition, its claims allocated and the allocated claims it shares reserved;
    a pod left out with `PodScheduled=False` and the reason, its claims as the plan has them)."""
    after = Snapshot(cluster)
    for p in plans:
        after.record(p)
    pods = {p.pod.key: _written(after.cluster.pods[p.pod.key], p.pod) for p in plans if p.pod is not None}
    left = {(o.kind, *o.key): o for o in cluster.left_out}

    def kind(name: str) -> list[TypeMeta]:
        return [o for o in cluster.left_out if o.kind == name]

    fixed: Iterable[TypeMeta] = (
        *cluster.namespaces.values(),
        *cluster.classes.values(),
        *(s for s in cluster.slices if s.left_out is None),  # a stand-in's slice is in `left_out`
        *cluster.taint_rules.values(),
        *cluster.priority_classes.values(),
        *cluster.nodes.values(),
        *cluster.templates.values(),
        *cluster.workloads.values(),
        *cluster.pod_groups.values(),
        *cluster.pdbs.values(),
    )
    kinds = (
        *("Namespace", "DeviceClass", "ResourceSlice", "DeviceTaintRule", "PriorityClass", "Node"),
        *("ResourceClaimTemplate", "Workload", "PodGroup", "PodDisruptionBudget"),
    )
    claims = after.cluster.claims  # the input's in their places, then the claims the plan creates
    out = [obj.dump() for obj in fixed] + [o.dump() for k in kinds for o in kind(k)]
    out += [c.dump() for key, c in claims.items() if key in cluster.claims and not c.unread]  # unread: below
    out += [o.dump() for o in kind("ResourceClaim")]
    out += [c.dump() for key, c in claims.items() if key not in cluster.claims]
    # A bound pod the triage copied without its broken references is written as the input had it.
    out += [pods.get(key) or left.get(("Pod", *key), p).dump() for key, p in cluster.pods.items()]
    out += [pods.get(o.key) or o.dump() for o in kind("Pod") if o.key not in cluster.pods]
    # Objects that could not be read (`Cluster.unread`) go back exactly as they were written.
    out += [copy.deepcopy(dict(u.doc)) for u in cluster.unread if u.doc]
    return out


__all__ = ["OutputMode", "changed_objects", "cluster_after", "plan_annotations", "pod_after"]
