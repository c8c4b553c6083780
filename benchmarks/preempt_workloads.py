"""A full cluster for `plan --preempt` (issue #31): every GPU held by running pods of mixed
priorities, PodDisruptionBudgets over a third of them, pending pods of higher priorities.

Seeded, so the same seed gives the same cluster; built with `tests/preempt_cases`' shapes
(node-local GPUs, one claim per running pod, one cpu per pod) as plain dicts.
"""

from __future__ import annotations

import os
import random
from typing import Any

from benchmarks.workloads import GPU, _class, _slice
from dra_solver.preempt import PreemptOutcome

PRIORITIES = (0, 10, 100, 1000)
PENDING_PRIORITIES = (500, 2000, 5000)


def _gpu_node(name: str, gpus: int) -> list[dict[str, Any]]:
    """A Node (64 cpus, 512Gi, 110 pods) and its node-local slice of `gpus` GPUs, its own pool:
    the node both generators build."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }
    return [node, _slice(f"{name}-gpus", GPU, name, [{"name": f"gpu-{g}"} for g in range(gpus)], pool=name)]


def full_cluster(nodes: int, gpus: int, pending: int, seed: int) -> list[dict[str, Any]]:
    """`nodes` nodes of `gpus` GPUs each, all held by running pods (1-4 GPUs each, apps a/b/c;
    budgets `disruptionsAllowed: 1` over app a, a third of the pods), and `pending` pods asking
    for 1-4 GPUs at priorities above most running ones."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [_class("gpu", GPU)]
    k = 0
    for i in range(nodes):
        n = f"node-{i:03d}"
        docs += _gpu_node(n, gpus)
        at = 0
        while at < gpus:
            take = min(rng.randint(1, 4), gpus - at)
            name = f"run-{k:05d}"
            k += 1
            docs.append(gpu_claim(name, take, n, list(range(at, at + take))))
            docs.append(_pod(name, rng.choice(PRIORITIES), n, rng.choice("abc")))
            at += take
    for j in range(pending):
        name = f"job-{j:04d}"
        docs.append(gpu_claim(name, rng.randint(1, 4), None, []))
        docs.append(_pod(name, rng.choice(PENDING_PRIORITIES), None, "job"))
    docs.append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "app-a", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}},
            "status": {"disruptionsAllowed": 1},
        }
    )
    return docs


def busy_cluster(
    nodes: int, pending: int, seed: int, gpus: int = 8, pods_per_node: int = 8
) -> list[dict[str, Any]]:
    """Issue #31's full cluster: `nodes` nodes of `gpus` GPUs, every GPU held, `pods_per_node`
    running pods on each (GPU pods of 1-2 GPUs until the GPUs are held, then cpu-only pods of
    8 cpus), priorities 0/10/100/1000; ten services `svc-0`..`svc-9` under
    PodDisruptionBudgets (status.disruptionsAllowed 0-3) cover a third of the running pods;
    `pending` pods of priorities 500/2000/5000 ask for 1-4 GPUs and 4 cpus per GPU.

    Why a second generator: `full_cluster` packs 1-4 GPU pods, about three a node; the issue
    asks for 4,000 running pods on 500 nodes, and mixes pod sizes so that which pods to evict
    is a packing question, not only a count."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = [_class("gpu", GPU)]
    k = 0
    for i in range(nodes):
        n = f"node-{i:03d}"
        docs += _gpu_node(n, gpus)
        at = 0
        for slot in range(pods_per_node):
            left_pods = pods_per_node - slot
            take = min(rng.randint(1, 2), gpus - at)
            if gpus - at >= left_pods * 2:  # the GPUs must be held by the pods left
                take = 2
            name = f"run-{k:05d}"
            k += 1
            app = f"svc-{rng.randrange(10)}" if rng.random() < 1 / 3 else rng.choice(("batch", "web"))
            if take:
                docs.append(gpu_claim(name, take, n, list(range(at, at + take))))
                docs.append(_pod(name, rng.choice(PRIORITIES), n, app, cpu=str(4 * take)))
            else:
                docs.append(_pod(name, rng.choice(PRIORITIES), n, app, cpu="8", claim=False))
            at += take
        assert at == gpus, "the generator leaves no GPU free"
    for j in range(pending):
        name = f"job-{j:04d}"
        count = rng.randint(1, 4)
        docs.append(gpu_claim(name, count, None, []))
        docs.append(_pod(name, rng.choice(PENDING_PRIORITIES), None, "job", cpu=str(4 * count)))
    for s in range(10):
        docs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"svc-{s}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": f"svc-{s}"}}},
                "status": {"disruptionsAllowed": rng.randint(0, 3)},
            }
        )
    return docs


MODELS = ("a100", "h100")
"""The two GPU models of `two_model_cluster`."""


def two_model_cluster(nodes: int, pending: int, seed: int) -> list[dict[str, Any]]:
    """`busy_cluster` with two GPU models: on every other node GPUs 0-3 are `a100` and 4-7
    `h100`, on the rest all eight are `a100` (attribute `model`); each pending pod's request
    selects one model by a CEL selector (h100 one pod in three). Why: issue #31's reach — a
    node whose devices differ for the pending pods; the counting model answers it with two
    device groups on the mixed nodes (`solver/preempt/counting.py`)."""
    docs = busy_cluster(nodes, pending, seed)
    rng = random.Random(f"two-models-{seed}")
    for d in docs:
        if d["kind"] == "ResourceSlice":
            mixed = int(d["spec"]["nodeName"].rsplit("-", 1)[1]) % 2 == 0
            for i, dev in enumerate(d["spec"]["devices"]):
                model = MODELS[1] if mixed and i >= 4 else MODELS[0]
                dev["attributes"] = {"model": {"string": model}}
        if d["kind"] == "ResourceClaim" and "status" not in d:
            model = MODELS[1] if rng.random() < 1 / 3 else MODELS[0]
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
                {"cel": {"expression": f'device.attributes["{GPU}"].model == "{model}"'}}
            ]
    return docs


def gpu_template(size: int) -> dict[str, Any]:
    """The ResourceClaimTemplate `gpu-<size>` (a request of `size` GPUs of class gpu) that
    movable running pods' claims come from. Shared with the moves and defrag benchmarks."""
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": size}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"gpu-{size}", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def owned(pod: dict[str, Any], replica_set: str, size: int) -> None:
    """Make the running `pod` (a dict) a ReplicaSet's, its claim `<pod>-gpu` from the template
    `gpu-<size>` (recorded in status.resourceClaimStatuses): a pod `--allow-moves` may move."""
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": replica_set,
            "uid": f"uid-{replica_set}",
            "controller": True,
        }
    ]
    name = pod["metadata"]["name"]
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": f"gpu-{size}"}]
    pod["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]


def gpu_claim(pod: str, count: int, node: str | None, gpus: list[int]) -> dict[str, Any]:
    """Pod `pod`'s claim of `count` GPUs of class gpu; with `node`, allocated there (devices
    `gpus`) and reserved for the pod (a running pod's claim). Shared with
    `test_bench_preempt_moves`."""
    doc: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"{pod}-gpu", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]}
        },
    }
    if node is not None:
        doc["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": f"gpu-{g}"}
                        for g in gpus
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}],
        }
    return doc


def _pod(
    name: str, priority: int, node: str | None, app: str, cpu: str = "1", claim: bool = True
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"priority": priority}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
        resources["claims"] = [{"name": "gpu"}]
    spec["containers"] = [{"name": "main", "resources": resources}]
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": app}},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def batch_info(out: PreemptOutcome, cpu: float) -> dict[str, object]:
    """A batch plan's facts as a preemption benchmark records them (`extra_info`): placed
    weight and pods, status per stage, the model that answered, deterministic and CPU seconds
    (`cpu`: the process's, measured by the caller), the 1-minute load, victims (count, sum of
    priorities, highest), moves and PDB violations."""
    prios = [v.priority for v in out.victims]
    return {
        "weight": out.weight,
        "placed": sum(p.placed for p in out.pods),
        "status": out.stats["status"],
        "stage_status": out.stats.get("stage_status"),
        "model": out.stats.get("preempt_model"),
        "deterministic_s": out.stats.get("deterministic_s"),
        "cpu_s": round(cpu, 2),
        "load_1min": round(os.getloadavg()[0], 2),
        "pdb_violations": out.stats["pdb_violations"],
        "evicted": len(prios),
        "priority_sum": sum(prios),
        "highest": max(prios, default=None),
        "moves": len(out.moves),
    }


def served_as_extended(
    objs: list[dict[str, Any]],
    wants: dict[str, int],
    advertised: dict[str, int],
    resource: str = "example.com/gpu",
) -> list[dict[str, Any]]:
    """`objs` with every DeviceClass serving `resource` (KEP-5004), each pending pod of `wants`
    asking for that many of it in its container instead of its claim `<pod>-gpu` (dropped), and
    the nodes of `advertised` advertising that many of it (a device plugin's): on a node that
    does not, the pod gets its special claim. Shared by `test_bench_defrag_mixed` and
    `tests/test_preempt_counting_mixed.py`."""
    out = []
    for o in objs:
        name = o["metadata"]["name"]
        if o["kind"] == "Node" and name in advertised:
            o["status"]["allocatable"][resource] = str(advertised[name])
        if o["kind"] == "DeviceClass":
            o["spec"]["extendedResourceName"] = resource
        if o["kind"] == "ResourceClaim" and name.removesuffix("-gpu") in wants and "status" not in o:
            continue
        if o["kind"] == "Pod" and name in wants:
            del o["spec"]["resourceClaims"]
            res = o["spec"]["containers"][0]["resources"]
            res.pop("claims", None)
            res["requests"][resource] = str(wants[name])
            res["limits"] = {resource: str(wants[name])}
        out.append(o)
    return out
