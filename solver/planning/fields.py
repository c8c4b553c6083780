"""The pod fields a kube-scheduler plugin reads that the plan does not model: one warning per
field and input, naming how many pending pods set it and what the plan assumes
(docs/semantics.md, "The fields the scheduler reads").

Why warnings and not errors: such a pod is valid and the scheduler places it; the plan still
says where it fits by every rule it does model. Why one warning per field, not per pod: a
Deployment's 500 replicas share their spec, and 500 identical lines hide the other warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..api.models import Pod

DEFAULT_SCHEDULER = "default-scheduler"


def _extra(obj: Any) -> Mapping[str, Any]:
    """The fields a loose model keeps as written (camelCase), not interpreted."""
    return getattr(obj, "model_extra", None) or {}


def _preferred_node_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    return bool(na is not None and na.preferred_during_scheduling_ignored_during_execution)


def _pod_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return aff is not None and bool(aff.pod_affinity or aff.pod_anti_affinity)


def _spread(pod: Pod) -> bool:
    return bool(_extra(pod.spec).get("topologySpreadConstraints"))


def _host_ports(pod: Pod) -> bool:
    for c in [*pod.spec.containers, *pod.spec.init_containers]:
        for port in _extra(c).get("ports") or []:
            if isinstance(port, Mapping) and port.get("hostPort"):
                return True
    return False


def _volumes(pod: Pod) -> bool:
    return any(
        isinstance(v, Mapping) and "persistentVolumeClaim" in v for v in _extra(pod.spec).get("volumes") or []
    )


def _nominated(pod: Pod) -> bool:
    return bool(_extra(pod.status).get("nominatedNodeName")) if pod.status is not None else False


def _other_scheduler(pod: Pod) -> bool:
    return pod.spec.scheduler_name not in (None, "", DEFAULT_SCHEDULER)


UNMODELLED: tuple[tuple[str, Callable[[Pod], bool], str], ...] = (
    (
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        _preferred_node_affinity,
        "preferences are not scored: the plan may use any node the required terms allow",
    ),
    (
        "spec.affinity.podAffinity/podAntiAffinity",
        _pod_affinity,
        "inter-pod (anti-)affinity is not modelled: the plan may put these pods together or apart against it",
    ),
    (
        "spec.topologySpreadConstraints",
        _spread,
        "topology spread is not modelled: the plan may place these pods unevenly",
    ),
    (
        "containers[].ports[].hostPort",
        _host_ports,
        "host-port conflicts are not checked: two such pods may be planned on one node",
    ),
    (
        "spec.volumes[].persistentVolumeClaim",
        _volumes,
        "volumes are not modelled (binding, zones, attach limits): the plan assumes every node can "
        "mount them",
    ),
    (
        "status.nominatedNodeName",
        _nominated,
        "not read: the plan decides these pods' nodes anew (the scheduler tries the nominated node "
        "first and holds its room for the pod against lower-priority pods)",
    ),
    (
        "spec.schedulerName",
        _other_scheduler,
        "pods of another scheduler are planned as if the default scheduler placed them",
    ),
)
"""(field, whether a pod sets it, what the plan assumes) for each field not modelled."""


def unmodelled_field_warnings(pods: Iterable[Pod]) -> list[str]:
    """One warning per field of `UNMODELLED` that any of `pods` (the pods a plan places) sets."""
    pods = list(pods)
    out: list[str] = []
    for name, sets, assumption in UNMODELLED:
        using = [p.namespaced_name for p in pods if sets(p)]
        if not using:
            continue
        shown = ", ".join(using[:3]) + (f" and {len(using) - 3} more" if len(using) > 3 else "")
        many = "s" if len(using) > 1 else ""
        out.append(f"{name} set by {len(using)} pending pod{many} ({shown}): {assumption}")
    return out


__all__ = ["UNMODELLED", "unmodelled_field_warnings"]
