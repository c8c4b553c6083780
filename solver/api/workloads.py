"""Workloads (Deployment, ReplicaSet, StatefulSet, Job) expanded into the Pods they create.

Why: users describe what they run as workloads, not as Pods, and a plan for "my
Deployment of 16 replicas" must place 16 pods. The expansion is done on raw objects
before validation, deterministically, so the same input always gives the same pod names:

* StatefulSet: `<name>-<ordinal>`, ordinals 0..replicas-1, as upstream; the pods carry
  upstream's `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index` labels.
* Deployment, ReplicaSet, Job: `<name>-<i>`, i = 0..n-1. Upstream appends random
  suffixes (and a Deployment's pods belong to a ReplicaSet); a plan needs stable names,
  so this scheme replaces them. The pod's owner is the workload itself.
* How many: Deployment/ReplicaSet/StatefulSet `spec.replicas` (default 1); Job
  `spec.parallelism` (default 1), capped by `spec.completions` when that is set — the
  number of pods a Job runs at once.
* Each pod: the workload's namespace, the template's labels and annotations, a deep copy
  of the template's spec (resourceClaims referring to templates included), and one
  `ownerReferences` entry (apiVersion, kind, name, uid when known, controller: true) so
  the engine can group the pods of one workload.

Pods with only `metadata.generateName` get `<generateName><k>`, k = 0, 1, ... counting
the pods with the same namespace and generateName in input order.

DaemonSet and CronJob are not expanded (a warning says so): a DaemonSet has one pod per
eligible node, which needs node matching (selectors, affinity, taints) that belongs to
the engine, and a CronJob has no pods until its schedule fires.
"""

from __future__ import annotations

import copy
from typing import Any

from ..errors import InputError
from .convert import object_ref

EXPANDED_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")

NOT_EXPANDED: dict[str, str] = {
    "DaemonSet": "DaemonSet pods are not expanded: a DaemonSet runs one pod per eligible node, "
    "which needs node matching; list its pods (kubectl get pods -o yaml) instead",
    "CronJob": "CronJob pods are not expanded: a CronJob creates Jobs on a schedule; "
    "give the Job (or its pods) instead",
}


def _count(doc: dict[str, Any], spec: dict[str, Any], source: str) -> int:
    """How many pods the workload runs (see the module docstring)."""

    def number(field: str, default: int | None) -> int | None:
        value = spec.get(field, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(
                f"must be a non-negative integer, got {value!r}",
                obj=object_ref(doc),
                field=f"spec.{field}",
                source=source,
            )
        return value

    if doc["kind"] == "Job":
        parallelism = number("parallelism", 1)
        completions = number("completions", None)
        assert parallelism is not None
        return parallelism if completions is None else min(parallelism, completions)
    replicas = number("replicas", 1)
    assert replicas is not None
    return replicas


def _mapping(value: object) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (a missing or malformed metadata)."""
    return value if isinstance(value, dict) else {}


def expand_workload(doc: dict[str, Any], source: str = "") -> list[dict[str, Any]]:
    """The Pod objects (raw dicts) the workload creates; the input is not modified."""
    kind = doc["kind"]
    meta = _mapping(doc.get("metadata"))
    name = meta.get("name")
    if not name:
        raise InputError(
            "required: the workload must have a name",
            obj=object_ref(doc),
            field="metadata.name",
            source=source,
        )
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        raise InputError(
            "required: the workload must have a spec", obj=object_ref(doc), field="spec", source=source
        )
    template = spec.get("template")
    if not isinstance(template, dict):
        raise InputError(
            "required: a pod template", obj=object_ref(doc), field="spec.template", source=source
        )
    count = _count(doc, spec, source)
    tmeta = _mapping(template.get("metadata"))
    owner: dict[str, Any] = {
        "apiVersion": doc.get("apiVersion", "apps/v1" if kind != "Job" else "batch/v1"),
        "kind": kind,
        "name": name,
    }
    if meta.get("uid"):
        owner["uid"] = meta["uid"]
    owner["controller"] = True
    pods: list[dict[str, Any]] = []
    for i in range(count):
        pod_name = f"{name}-{i}"
        pod_meta: dict[str, Any] = {"name": pod_name}
        if meta.get("namespace"):
            pod_meta["namespace"] = meta["namespace"]
        labels = dict(tmeta.get("labels") or {})
        if kind == "StatefulSet":
            labels["statefulset.kubernetes.io/pod-name"] = pod_name
            labels["apps.kubernetes.io/pod-index"] = str(i)
        if labels:
            pod_meta["labels"] = labels
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        pod_meta["ownerReferences"] = [dict(owner)]
        pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta}
        if "spec" in template:
            pod["spec"] = copy.deepcopy(template["spec"])
        pods.append(pod)
    return pods


class GeneratedNames:
    """Deterministic names for pods that only have `metadata.generateName`."""

    def __init__(self) -> None:
        self._next: dict[tuple[str, str], int] = {}

    def name(self, doc: dict[str, Any]) -> dict[str, Any]:
        """`doc` itself when it has a name (or no generateName), else a copy named
        `<generateName><k>` (see the module docstring)."""
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or meta.get("name") or not meta.get("generateName"):
            return doc
        prefix = str(meta["generateName"])
        key = (str(meta.get("namespace") or "default"), prefix)
        k = self._next.get(key, 0)
        self._next[key] = k + 1
        out = dict(doc)
        out["metadata"] = {**meta, "name": f"{prefix}{k}"}
        return out
