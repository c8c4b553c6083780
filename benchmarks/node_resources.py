"""Workload where CPU, not GPUs, binds (issue #18): nodes of 8 GPUs and 32 CPUs, pods of one
GPU (from a ResourceClaimTemplate) and 2-8 CPUs. 8 GPUs per node would take 8 pods, but their
CPUs (5 on average) fill 32 CPUs after about 6: a plan that ignores CPU overfills every node.
"""

from __future__ import annotations

import random
from typing import Any

GPU = "gpu.example.com"


def cpu_bound(nodes: int, pods: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
            },
        },
    ]
    for n in range(nodes):
        name = f"node-{n:04d}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpus"},
                "spec": {
                    "driver": GPU,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}"} for i in range(8)],
                },
            }
        )
    for p in range(pods):
        cpu = rng.choice([2, 4, 6, 8])
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"job-{p:05d}", "namespace": "default"},
                "spec": {
                    "containers": [
                        {
                            "name": "train",
                            "resources": {"requests": {"cpu": str(cpu)}, "claims": [{"name": "gpu"}]},
                        }
                    ],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                },
            }
        )
    return objs
