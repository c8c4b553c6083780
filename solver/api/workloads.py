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

A cluster's workloads are not expanded whole: their pods exist already, as Pods. A workload
with a `metadata.uid` (`from_a_cluster`: only the API server gives one — a live read, a
`kubectl get -o yaml` or `dra-solver dump`) is planned for the pods its controller has still
to create, given the pods of the same input (`lacking_pods`), so that a dump plans as the live
read of the same cluster does; one written by hand ("would it fit?") is expanded whole.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
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


# --- a cluster's workloads: the pods they lack ---------------------------------------------


Document = tuple[str, str, dict[str, Any]]
"""(source, position, object dict), as `load.Document` (defined there; load imports this module)."""


def from_a_cluster(doc: dict[str, Any]) -> bool:
    """A workload as an API server serves it — it has a `metadata.uid`, which only the server
    gives — rather than one written to ask "would it fit?": its pods exist already (in the same
    input, when it is a dump), so what is planned of it is what it lacks (`lacking_pods`)."""
    meta = doc.get("metadata")
    return isinstance(meta, dict) and isinstance(meta.get("uid"), str) and bool(meta["uid"])


class PodIndex:
    """What `lacking_pods` needs of the pods of an input, gathered as they are read: each
    controller's active pods (by its uid) and every pod's name."""

    def __init__(self) -> None:
        self.active: dict[str, int] = {}
        self.names: set[tuple[str, str]] = set()

    def add(self, pod: Any) -> None:
        if not isinstance(pod, dict):
            return
        meta = _meta(pod)
        self.names.add((str(meta.get("namespace") or "default"), str(meta.get("name") or "")))
        uid = _controller_uid(pod)
        if uid and _active(pod):
            self.active[uid] = self.active.get(uid, 0) + 1


def workload_pods(workloads: Sequence[Document], pods: Sequence[Document], source: str) -> list[Document]:
    """`lacking_pods` of the workloads, the input's pods given as documents."""
    index = PodIndex()
    for _, _, pod in pods:
        index.add(pod)
    return lacking_pods(workloads, index, source)


def lacking_pods(
    workloads: Sequence[Document], pods: PodIndex, source: str = "", errors: list[InputError] | None = None
) -> list[Document]:
    """The documents of `lacking_by_workload`, one after the other."""
    return [pod for _, made in lacking_by_workload(workloads, pods, source, errors) for pod in made]


def lacking_by_workload(
    workloads: Sequence[Document], pods: PodIndex, source: str = "", errors: list[InputError] | None = None
) -> list[tuple[Document, list[Document]]]:
    """The pods the cluster's workloads will create but have not yet, as documents for the
    loader (named as a file's workload's are: `<name>-<i>`; a StatefulSet's missing ordinals by
    their own names).

    Why not the workloads themselves: on a cluster a workload's pods exist already (as Pods,
    pending or bound), so expanding it as a file's would count every replica twice. What a
    controller has still to create — a ReplicaSet below its replicas, a Job below its
    parallelism, a StatefulSet's missing ordinals, a Deployment that has no ReplicaSet yet — is
    what it lacks: wanted minus its active pods (not finished, not being deleted), matched by
    the controller's uid in their `ownerReferences`. A Deployment with ReplicaSets is left to
    them (they hold its pods); a suspended or finished Job wants none; a paused Deployment
    without a ReplicaSet creates none.

    `source`: how the pods' documents name where they come from ("": each workload's own). A
    workload that cannot be expanded (no name, no template) raises InputError, or with `errors`
    is recorded there and left out."""
    owners = {
        _controller_uid(d) for _, _, d in workloads if isinstance(d, dict) and d.get("kind") == "ReplicaSet"
    }
    out: list[tuple[Document, list[Document]]] = []
    for where, position, doc in workloads:
        if not isinstance(doc, dict) or not isinstance(doc.get("spec"), dict):
            continue  # not a workload the loader could read: the pods' list has what runs
        meta, spec, kind = _meta(doc), doc["spec"], doc.get("kind")
        uid = str(meta.get("uid") or "")
        namespace = str(meta.get("namespace") or "default")
        if kind == "Deployment" and (uid in owners or spec.get("paused") is True):
            continue
        try:
            # Checked as a file's workload is, whatever it lacks: a name, a template, its counts.
            _count(doc, spec, source or where)
            expand_workload({**doc, "spec": {**spec, "replicas": 0, "parallelism": 0}}, source or where)
            if kind == "StatefulSet":
                start = _number(spec.get("ordinals") or {}, "start", 0) or 0
                whole = {**doc, "spec": {**spec, "replicas": start + (_number(spec, "replicas", 1) or 0)}}
                made = expand_workload(whole, source or where)[start:]
                made = [p for p in made if (namespace, p["metadata"]["name"]) not in pods.names]
            else:
                wants = _job_wants(doc) if kind == "Job" else (_number(spec, "replicas", 1) or 0)
                lacks = max(0, wants - pods.active.get(uid, 0)) if uid else wants
                field_ = "parallelism" if kind == "Job" else "replicas"
                rest = {k: v for k, v in spec.items() if k != "completions"}
                made = (
                    expand_workload({**doc, "spec": {**rest, field_: lacks}}, source or where)
                    if lacks
                    else []
                )
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        note = ", a pod it has not created yet"
        documents = [(source or where, f"{position}: {p['metadata']['name']}{note}", p) for p in made]
        if documents:
            out.append(((where, position, doc), documents))
    return out


def _meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _controller_uid(doc: Mapping[str, Any]) -> str:
    """The uid of the object's controller (its `ownerReferences` entry with controller: true)."""
    for ref in _meta(doc).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True and ref.get("uid"):
            return str(ref["uid"])
    return ""


def _active(pod: Mapping[str, Any]) -> bool:
    """A pod its controller counts as running or about to: not finished, not being deleted
    (upstream's `controller.IsPodActive`)."""
    status = pod.get("status")
    phase = status.get("phase") if isinstance(status, dict) else None
    return phase not in ("Succeeded", "Failed") and not _meta(pod).get("deletionTimestamp")


def _number(spec: Mapping[str, Any], name: str, default: int | None) -> int | None:
    value = spec.get(name, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


_JOB_DONE = ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget")
"""A Job condition that, when True, means its controller starts no more pods."""


def _job_wants(job: Mapping[str, Any]) -> int:
    """How many pods a Job runs at once now, as its controller decides: none when suspended or
    finished; else `parallelism`, capped by the completions still to go (with no completions
    set, none once one pod succeeded: a work-queue Job is finishing)."""
    spec = job.get("spec") if isinstance(job.get("spec"), dict) else {}
    status = job.get("status") if isinstance(job.get("status"), dict) else {}
    assert isinstance(spec, dict) and isinstance(status, dict)
    if spec.get("suspend") is True:
        return 0
    for condition in status.get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") in _JOB_DONE:
            if condition.get("status") == "True":
                return 0
    parallelism = _number(spec, "parallelism", 1) or 0
    succeeded = _number(status, "succeeded", 0) or 0
    completions = _number(spec, "completions", None)
    if completions is None:
        return 0 if succeeded else parallelism
    return max(0, min(parallelism, completions - succeeded))
