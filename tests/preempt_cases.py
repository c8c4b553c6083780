"""Small preemption clusters as data: nodes with GPUs, running pods holding some, pending pods
asking for some (`tests/test_preempt*.py`). Each running pod holds one claim of its own (or a
shared one), allocated and reserved for it, as a `kubectl get -o yaml` dump shows it."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_solver.api.cluster import Cluster
from dra_solver.planning.job import Options
from dra_solver.preempt import PreemptOutcome
from dra_solver.preempt.model import setting, solve_setting
from dra_solver.problem.flat import claim_weight

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
            _given(nodeName=r.node),
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
                p.name,
                p.priority,
                f"{p.name}-gpu" if p.gpus else None,
                p.cpu,
                _given(
                    preemptionPolicy=p.policy,
                    schedulingGroup={"podGroupName": p.group} if p.group else None,
                ),
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


def _given(**fields: Any) -> Doc:
    """The fields that have a value (a Pod's optional spec fields, in the order given)."""
    return {k: v for k, v in fields.items() if v}


def _pod(
    name: str,
    priority: int,
    claim: str | None,
    cpu: str,
    more: Doc,
    labels: dict[str, str] | None = None,
    start: str | None = None,
) -> Doc:
    """A Pod asking for `cpu` and, with `claim`, for the ResourceClaim of that name; `more`:
    its other spec fields (`_given`) — running with a `nodeName`, pending without."""
    spec: Doc = {
        "priority": priority,
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu}}}],
    }
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    spec.update(more)
    meta: Doc = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    status: Doc = {"phase": "Running" if spec.get("nodeName") else "Pending"}
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


def most_weight(
    pending: Sequence[Pending],
    gpus: Mapping[str, int],
    cpu: Mapping[str, int],
    gangs: Mapping[str, int],
    gone: Sequence[Running],
) -> int | None:
    """The most pending weight any placement puts on the room left (`gpus`, `cpu` per node,
    in node order), each gang placed whole or not at all, every pod of `gone` justified by a
    placed pending pod on its node of higher priority that may preempt; None when no placement
    justifies them all. The exhaustive enumerators' inner loop (`test_preempt_differential`,
    `test_preempt_moves_exhaustive`): every pending pod on every node or on none."""
    best: int | None = None
    spots: list[str | None] = [None, *gpus]
    for where in itertools.product(spots, repeat=len(pending)):
        need_g: dict[str, int] = {}
        need_c: dict[str, int] = {}
        for p, n in zip(pending, where, strict=True):
            if n is not None:
                need_g[n] = need_g.get(n, 0) + p.gpus
                need_c[n] = need_c.get(n, 0) + 1
        if any(need_g[n] > gpus[n] or need_c[n] > cpu[n] for n in need_g):
            continue
        placed_in = {
            g: sum(1 for p, n in zip(pending, where, strict=True) if p.group == g and n) for g in gangs
        }
        if any(0 < placed_in[g] < k for g, k in gangs.items()):
            continue
        ok = all(
            any(
                n == v.node and p.priority > v.priority and p.policy != "Never"
                for p, n in zip(pending, where, strict=True)
            )
            for v in gone
        )
        if not ok:
            continue
        weight = sum(claim_weight(p.priority) for p, n in zip(pending, where, strict=True) if n is not None)
        if best is None or weight > best:
            best = weight
    return best


def build(*args: Any, **kwargs: Any) -> Cluster:
    return Cluster.from_objects(cluster_docs(*args, **kwargs))


def defrag_docs() -> list[Doc]:
    """Issue #31's defragmentation case: n0 and n1 half full with important work (4 of 8 GPUs,
    priority 1000), n2 two 1-GPU pods of ReplicaSet web (priority 0); the 8-GPU job `train`
    fits only on an emptied node — moving a and b to n0 or n1 empties n2."""
    return cluster_docs(
        {"n0": 8, "n1": 8, "n2": 8},
        [
            Running("big0", "n0", 1000, (0, 1, 2, 3)),
            Running("big1", "n1", 1000, (0, 1, 2, 3)),
            Running("a", "n2", 0, (0,), {"app": "web"}, owner="web"),
            Running("b", "n2", 0, (1,), {"app": "web"}, owner="web"),
        ],
        [Pending("train", 100, 8)],
    )


def both_models(cluster: Cluster, allow_moves: bool = False) -> tuple[PreemptOutcome, PreemptOutcome]:
    """`cluster` planned on the model auto picks, which must be the counting one (auto runs it
    as `model="counts"` does where it applies, and says so: one solve checks both), and on the
    per-device model: the pair the counting-model tables compare."""
    opts = Options.of(None, time_limit=10)
    by_counts = solve_setting(setting(cluster, None, None, opts, allow_moves=allow_moves), opts)
    by_devices = solve_setting(
        setting(cluster, None, None, opts, allow_moves=allow_moves), opts, model="devices"
    )
    assert by_counts.stats["preempt_model"] == "counts", by_counts.stats.get("preempt_model_reason")
    assert by_devices.stats["preempt_model"] == "devices"
    return by_counts, by_devices
