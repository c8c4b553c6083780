"""Issue #11's explain benchmark: why a pod's claim fits on none of 1,000 nodes, in ≤ 5 s.

Workload `explain_fleet`: 1,000 nodes x 8 GPUs (`model` and `numa` attributes; 4 GPUs per NUMA
node) and one pending Pod whose claim asks for 4 H100 GPUs on one NUMA node (selector +
matchAttribute), with a nodeSelector `pool=train`. Every node fails, for one of five reasons
in turn (node index mod 5):
0. the GPUs are A100s: the selector rejects them;
1. the H100s are held by an allocated claim of the node (`held-<node>`): releasing it helps;
2. the node has a taint the pod does not tolerate;
3. the node lacks the `pool=train` label (nodeSelector);
4. the node has 4 H100s, but 2 per NUMA node: selector and matchAttribute interact (a minimal
   blocking set: the claim + its matchAttribute).
`dra_solver.why(cluster, pod=...)` end to end (every node, detail lines, blocking sets and
fixes), one round; the benchmark checks the answer names each reason. Run:
`pytest benchmarks/test_bench_explain.py`.
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks.workloads import GPU, _class, _gpus, _node, _slice, resource_claim
from dra_solver import Cluster, why

NODES, GPUS = 1000, 8
SELECTOR = {"cel": {"expression": f'device.attributes["{GPU}"].model == "h100"'}}


def _gpu(i: int, model: str, numa: int) -> dict[str, Any]:
    return {"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "numa": {"int": numa}}}


def explain_fleet(nodes: int = NODES) -> list[dict[str, Any]]:
    """The cluster and the pending pod (see the module docstring)."""
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(nodes):
        name, kind = f"node-{n:04d}", n % 5
        node = _node(name)
        if kind != 3:
            node["metadata"]["labels"]["pool"] = "train"
        if kind == 2:
            node["spec"] = {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}
        model = "a100" if kind == 0 else "h100"
        if kind == 4:  # H100s 0, 1 on NUMA 0 and 4, 5 on NUMA 1; the rest A100s
            gpus = [_gpu(i, "h100" if i % 4 < 2 else "a100", i // 4) for i in range(GPUS)]
        else:
            gpus = [_gpu(i, model, i // 4) for i in range(GPUS)]
        objs += [node, _slice(f"{name}-gpu", GPU, name, gpus)]
        if kind == 1:  # GPUs 0 and 4 held: no NUMA node keeps 4 free H100s
            held = resource_claim(f"held-{name}", _gpus(2))
            pool = f"{name}-gpu"
            results = [{"request": "gpu", "driver": GPU, "pool": pool, "device": f"gpu-{i}"} for i in (0, 4)]
            held["status"] = {"allocation": {"devices": {"results": results}}}
            objs.append(held)
    train = resource_claim(
        "train",
        [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4, "selectors": [SELECTOR]}}],
        [{"matchAttribute": f"{GPU}/numa"}],
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "default", "uid": "uid-trainer"},
        "spec": {
            "nodeSelector": {"pool": "train"},
            "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpus"}]}}],
            "resourceClaims": [{"name": "gpus", "resourceClaimName": "train"}],
        },
    }
    return [*objs, train, pod]


def test_explain_1000_nodes(benchmark) -> None:
    cluster = Cluster.from_objects(explain_fleet())
    benchmark.group = "explain"
    out = benchmark.pedantic(lambda: why(cluster, pod="trainer"), rounds=1, iterations=1)
    text = out.text()
    assert not out.fits and len(out.nodes) == NODES
    for words in (
        "rejects 8",
        "held (by default/held-node-0001)",
        "taint",
        "nodeSelector pool=train",
        "minimal blocking set: claim default/train + claim default/train: matchAttribute",
    ):
        assert words in text, words
    benchmark.extra_info.update(
        {
            "nodes": NODES,
            "groups": len(out.groups()),
            "lines": len(text.splitlines()),
            "load": round(os.getloadavg()[0], 1),
        }
    )
