"""Small preemption clusters as data: nodes with GPUs, running pods holding some, pending pods
asking for some (`tests/test_preempt*.py`). Each running pod holds one claim of its own (or a
shared one), allocated and reserved for it, as a `kubectl get -o yaml` dump shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_solver.api.cluster import Cluster

Doc = dict[str, Any]


@dataclass
class Running:
    name: str
    node: str
    priority: int
    gpus: tuple[int, ...]
    """Indices of the GPUs (on its node) its claim holds."""
    labels: dict[str, str] = field(default_factory=dict)
    claim: str | None = None
    """Name of the claim it uses (default `<name>-gpu`); pods naming the same claim share it."""
    cpu: str = "1"
    start: str | None = None
    """status.startTime (RFC 3339); None: not started yet."""
    owner: str | None = None
    """A ReplicaSet controlling the pod (`--allow-moves`): its claim, if any, then comes from
    the ResourceClaimTemplate `gpu-<count>` (recorded in status.resourceClaimStatuses)."""


@dataclass
class Pending:
    name: str
    priority: int
    gpus: int
    policy: str | None = None
    group: str | None = None
    cpu: str = "1"


def cluster_docs(
    nodes: dict[str, int],
    running: list[Running],
    pending: list[Pending],
    pdbs: list[Doc] | None = None,
    cpu: str = "8",
    gangs: dict[str, int] | None = None,
) -> list[Doc]:
    docs: list[Doc] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for n, count in nodes.items():
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
            }
        )
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-gpus"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}"} for i in range(count)],
                },
            }
        )
    claims: dict[str, Doc] = {}
    templates: dict[str, Doc] = {}
    for r in running:
        cname = r.claim or f"{r.name}-gpu"
        if r.gpus and cname not in claims:
            claims[cname] = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": cname, "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": len(r.gpus)}}
                        ]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "gpu",
                                    "driver": "gpu.example.com",
                                    "pool": r.node,
                                    "device": f"gpu-{i}",
                                }
                                for i in r.gpus
                            ]
                        },
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": [r.node]}
                                    ]
                                }
                            ]
                        },
                    },
                    "reservedFor": [],
                },
            }
        if r.gpus:
            claims[cname]["status"]["reservedFor"].append(
                {"resource": "pods", "name": r.name, "uid": f"uid-{r.name}"}
            )
        pod = _pod(
            r.name,
            r.priority,
            cname if r.gpus else None,
            r.cpu,
            node=r.node,
            labels=r.labels,
            start=r.start,
        )
        if r.owner is not None:
            _owned(pod, r.owner, len(r.gpus), templates)
        docs.append(pod)
    for p in pending:
        if p.gpus:
            docs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"{p.name}-gpu", "namespace": "default"},
                    "spec": {
                        "devices": {
                            "requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": p.gpus}}
                            ]
                        }
                    },
                }
            )
        docs.append(
            _pod(
                p.name, p.priority, f"{p.name}-gpu" if p.gpus else None, p.cpu, policy=p.policy, group=p.group
            )
        )
    docs += list(claims.values())
    docs += list(templates.values())
    for g, k in (gangs or {}).items():
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": g, "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": k}}},
            }
        )
    docs += pdbs or []
    return docs


def _pod(
    name: str,
    priority: int,
    claim: str | None,
    cpu: str,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    policy: str | None = None,
    group: str | None = None,
    start: str | None = None,
) -> Doc:
    spec: Doc = {
        "priority": priority,
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu}}}],
    }
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    if node:
        spec["nodeName"] = node
    if policy:
        spec["preemptionPolicy"] = policy
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta: Doc = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    status: Doc = {"phase": "Running" if node else "Pending"}
    if start:
        status["startTime"] = start
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _owned(pod: Doc, owner: str, gpus: int, templates: dict[str, Doc]) -> None:
    """Make `pod` controlled by ReplicaSet `owner`, its claim (if any) generated from a template."""
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": owner,
            "uid": f"uid-{owner}",
            "controller": True,
        }
    ]
    entries = pod["spec"].get("resourceClaims")
    if not entries:
        return
    name = f"gpu-{gpus}"
    templates.setdefault(
        name,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": gpus}}]
                    }
                }
            },
        },
    )
    claim = entries[0]["resourceClaimName"]
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": name}]
    pod["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim}]


def pdb(
    name: str, labels: dict[str, str], *, allowed: int | None = None, min_available: int | str | None = None
) -> Doc:
    doc: Doc = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": labels}},
    }
    if min_available is not None:
        doc["spec"]["minAvailable"] = min_available
    if allowed is not None:
        doc["status"] = {"disruptionsAllowed": allowed}
    return doc


def build(*args: Any, **kwargs: Any) -> Cluster:
    return Cluster.from_objects(cluster_docs(*args, **kwargs))
