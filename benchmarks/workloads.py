"""Workload generators for the benchmarks: plain resource.k8s.io/v1 dicts, deterministic.

Why generators and not fixture files: the sizes in the issues (1,000 nodes x 8 GPUs) make
files large, and the shapes are easier to read as code.
"""

from __future__ import annotations

import random
from typing import Any

GPU = "gpu.example.com"
NIC = "nic.example.com"


def _class(name: str, driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def _slice(
    name: str, driver: str, node: str, devices: list[dict[str, Any]], pool: str | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": pool or name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def resource_claim(
    name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A ResourceClaim `default/name` of `requests` (and `constraints`): the claim builder of
    every benchmark workload (public: `scale_smoke`, `gang_workloads` and the explain
    benchmark build theirs with it)."""
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": devices},
    }


NIC_NUMA = f'int(device.attributes["{NIC}"].topology.split("-")[0].replace("numa", ""))'
MODELS = ("a100", "h100", "l40s")
MEMORY = ("40Gi", "80Gi")

FLEET_SELECTORS = (
    f'device.attributes["{GPU}"].model == "h100"',
    f'device.capacity["{GPU}"].memory.compareTo(quantity("64Gi")) >= 0',
    f'"numa" in device.attributes["{GPU}"] && device.attributes["{GPU}"].numa < 2',
    f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("1.2.0"))',
)
FLEET_DERIVED = (
    ("tier", f'device.capacity["{GPU}"].memory.compareTo(quantity("64Gi")) >= 0 ? "large" : "small"'),
    ("numa-key", f'device.attributes["{GPU}"].numa'),
)


def gpu_fleet(nodes: int = 1000, gpus_per_node: int = 8) -> list[dict[str, Any]]:
    """Issue 3's fleet: nodes x 8 GPUs (3 models, 2 memory sizes) + one NIC per node."""
    objs: list[dict[str, Any]] = [_class("gpu", GPU), _class("nic", NIC)]
    for n in range(nodes):
        node = f"node-{n}"
        gpus = [
            {
                "name": f"gpu-{i}",
                "attributes": {
                    "model": {"string": MODELS[(n + i) % 3]},
                    "numa": {"int": i // 4},
                    "index": {"int": i},
                    "uuid": {"string": f"GPU-{n:04d}-{i}"},
                    "driverVersion": {"version": "1.3.0"},
                },
                "capacity": {"memory": {"value": MEMORY[(n // 3 + i) % 2]}},
            }
            for i in range(gpus_per_node)
        ]
        objs.append(_slice(f"{node}-gpu", GPU, node, gpus))
        objs.append(
            _slice(f"{node}-nic", NIC, node, [{"name": "eth0", "attributes": {"numaNode": {"int": 0}}}])
        )
    return objs


def one_big_claim(gpus: int = 8) -> list[dict[str, Any]]:
    """(a) one claim for all 8 GPUs of a node."""
    devs = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(gpus)]
    return [
        _class("gpu", GPU),
        _slice("node-1-gpu", GPU, "node-1", devs),
        resource_claim("train", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": gpus}}]),
    ]


def shared_memory(claims: int = 100, devices: int = 16, seed: int = 7) -> list[dict[str, Any]]:
    """(b) many claims sharing multi-allocatable GPUs: 80Gi, step 10Gi, requests 10-40Gi."""
    rng = random.Random(seed)
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    devs = [
        {
            "name": f"gpu-{i}",
            "allowMultipleAllocations": True,
            "capacity": {"memory": {"value": "80Gi", "requestPolicy": policy}},
        }
        for i in range(devices)
    ]
    objs: list[dict[str, Any]] = [_class("gpu", GPU), _slice("node-1-gpu", GPU, "node-1", devs)]
    for c in range(claims):
        amount = rng.choice([10, 15, 20, 25, 30, 35, 40])
        objs.append(
            resource_claim(
                f"job-{c:03d}",
                [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "capacity": {"requests": {"memory": f"{amount}Gi"}},
                        },
                    }
                ],
            )
        )
    return objs


def numa_alignment(gpus: int = 8, nics: int = 8) -> list[dict[str, Any]]:
    """(c) GPU+NIC NUMA alignment through derived attributes on a 16-device node.

    GPUs publish `numa`, NICs embed it in a topology string; only NUMA 3 has enough free GPUs."""
    gdevs = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i % 4}}} for i in range(gpus)]
    ndevs = [
        {"name": f"eth{i}", "attributes": {"topology": {"string": f"numa{i % 4}-pcie{i}"}}}
        for i in range(nics)
    ]
    busy = [
        {"request": "gpu", "driver": GPU, "pool": "node-1-gpu", "device": f"gpu-{i}"}
        for i in range(gpus)
        if i % 4 != 3 and i >= 4
    ]
    old = resource_claim("old", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": len(busy)}}])
    old["status"] = {"allocation": {"devices": {"results": busy}}}
    claim = resource_claim(
        "aligned",
        [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": "gpu",
                    "count": 2,
                    "derivedAttributes": [{"name": "numa", "expression": f'device.attributes["{GPU}"].numa'}],
                },
            },
            {
                "name": "nic",
                "exactly": {
                    "deviceClassName": "nic",
                    "derivedAttributes": [
                        {
                            "name": "numa",
                            "expression": NIC_NUMA,
                        }
                    ],
                },
            },
        ],
        [{"requests": ["gpu", "nic"], "matchAttribute": "numa"}],
    )
    return [
        _class("gpu", GPU),
        _class("nic", NIC),
        _slice("node-1-gpu", GPU, "node-1", gdevs),
        _slice("node-1-nic", NIC, "node-1", ndevs),
        old,
        claim,
    ]


def hard_list_match(devices: int = 64, requests: int = 32, values: int = 47) -> list[dict[str, Any]]:
    """Upstream's hardest published shape: 64 devices, 32 one-device requests in one claim,
    matchAttribute over list-valued attributes with 47 distinct values, where the first 32
    devices (the ones first fit tries first) do not lead to a match.

    The trap: devices 0..requests-2 share value 1 (one device too few for every request),
    device requests-1 and the rest share value 0. First fit fills request after request
    from the trap devices and only fails at the last request, then backtracks through
    permutations of the trap devices — exponential. Every device also carries one more
    value out of 2..values-1, so no two devices are interchangeable."""
    devs = []
    for i in range(devices):
        common = 1 if i < requests - 1 else 0
        devs.append(
            {"name": f"dev-{i:02d}", "attributes": {"links": {"ints": [common, 2 + i % (values - 2)]}}}
        )
    reqs = [{"name": f"r{j}", "exactly": {"deviceClassName": "gpu"}} for j in range(requests)]
    return [
        _class("gpu", GPU),
        _slice("node-1-gpu", GPU, "node-1", devs),
        resource_claim("wide", reqs, [{"matchAttribute": f"{GPU}/links"}]),
    ]


def pods_over_nodes(
    nodes: int = 20, gpus_per_node: int = 8, pods: int = 60, seed: int = 3
) -> list[dict[str, Any]]:
    """Batch planning: single-claim pods asking for 1-6 GPUs over nodes with 8 GPUs each;
    more GPUs are asked for than exist, so the plan decides which pods fit (bin packing)."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(nodes):
        devs = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i // 4}}} for i in range(gpus_per_node)]
        objs.append(_slice(f"node-{n}-gpu", GPU, f"node-{n}", devs))
    for p in range(pods):
        count = rng.choice([1, 2, 3, 5, 6])
        objs.append(
            resource_claim(
                f"job-{p:03d}", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]
            )
        )
    return objs


# --- plans at cluster scale (issue 10) -------------------------------------------------------


def _node(name: str) -> dict[str, Any]:
    """A Node object as `kubectl get nodes` prints it (labels, allocatable): pods without
    cpu/memory requests take a pod slot each, 110 per node as kubelet's default."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def _gpu_nodes(nodes: int, gpus: int) -> list[dict[str, Any]]:
    """Node objects and one node-local slice of `gpus` plain GPUs each (`node-0000`, ...)."""
    objs: list[dict[str, Any]] = []
    for n in range(nodes):
        node = f"node-{n:04d}"
        objs.append(_node(node))
        objs.append(_slice(f"{node}-gpu", GPU, node, [{"name": f"gpu-{i}"} for i in range(gpus)]))
    return objs


def _gpus(count: int) -> list[dict[str, Any]]:
    return [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]


def upstream_5000(
    nodes: int = 500, devices: int = 10, pods: int = 5000, *, template: bool = False
) -> list[dict[str, Any]]:
    """(a) upstream's `5000pods_500nodes` shape: nodes x devices, one-device claims — plain
    claims (each its own pod), or (`template`) Pods that each get a claim from one
    ResourceClaimTemplate."""
    objs: list[dict[str, Any]] = [_class("gpu", GPU), *_gpu_nodes(nodes, devices)]
    if not template:
        objs.extend(resource_claim(f"claim-{p:05d}", _gpus(1)) for p in range(pods))
        return objs
    objs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-device", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": _gpus(1)}}},
        }
    )
    for p in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:05d}", "namespace": "default", "uid": f"uid-{p:05d}"},
                "spec": {
                    "containers": [{"name": "ctr", "resources": {"claims": [{"name": "dev"}]}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "one-device"}],
                },
            }
        )
    return objs


def sized_claims(
    nodes: int = 250,
    gpus_per_node: int = 8,
    claims: int = 1500,
    sizes: tuple[int, ...] = (1, 2, 4, 8),
    held: bool = False,
    seed: int = 10,
    scattered: bool = False,
) -> list[dict[str, Any]]:
    """Issue 10 (b) and (f): one-request claims of `sizes` exclusive GPUs over nodes of
    `gpus_per_node` identical GPUs; with `held`, each node has a running claim holding the
    first 0..gpus_per_node of its GPUs (random), with `scattered` a random subset of that size."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(nodes):
        devs = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(gpus_per_node)]
        objs.append(_slice(f"node-{n}-gpu", GPU, f"node-{n}", devs))
        taken = rng.randint(0, gpus_per_node) if held else 0
        if taken:
            request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": taken}}
            old = resource_claim(f"running-{n}", [request])
            which = sorted(rng.sample(range(gpus_per_node), taken)) if scattered else range(taken)
            results = [
                {"request": "gpu", "driver": GPU, "pool": f"node-{n}-gpu", "device": f"gpu-{i}"}
                for i in which
            ]
            old["status"] = {"allocation": {"devices": {"results": results}}}
            objs.append(old)
    for c in range(claims):
        count = rng.choice(sizes)
        objs.append(
            resource_claim(
                f"job-{c:04d}", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]
            )
        )
    return objs


def shared_gpus(
    nodes: int = 20, gpus_per_node: int = 4, claims: int = 300, seed: int = 11
) -> list[dict[str, Any]]:
    """Issue 10 (c): multi-allocatable 80Gi GPUs (requestPolicy step 10Gi) on every node;
    one-request claims of 10-70Gi (multiples of 10Gi)."""
    rng = random.Random(seed)
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    objs: list[dict[str, Any]] = [_class("gpu", GPU)]
    for n in range(nodes):
        devs = [
            {
                "name": f"gpu-{i}",
                "allowMultipleAllocations": True,
                "capacity": {"memory": {"value": "80Gi", "requestPolicy": policy}},
            }
            for i in range(gpus_per_node)
        ]
        objs.append(_slice(f"node-{n}-gpu", GPU, f"node-{n}", devs))
    for c in range(claims):
        amount = rng.choice([10, 20, 30, 40, 50, 60, 70])
        request = {"deviceClassName": "gpu", "capacity": {"requests": {"memory": f"{amount}Gi"}}}
        objs.append(resource_claim(f"job-{c:04d}", [{"name": "gpu", "exactly": request}]))
    return objs


TOPOLOGY = "topology.example.com/numa"


def numa_gpu_nic(nodes: int = 1000, claims: int = 4000, seed: int = 12) -> list[dict[str, Any]]:
    """Issue 10 (d): nodes of 2 NUMA domains, each with 4 GPUs and one multi-allocatable 100G
    NIC (requestPolicy step 5G); claims ask 1/2/4 GPUs plus 10-50G of NIC bandwidth, matched on
    the NUMA attribute both drivers publish (`topology.example.com/numa`)."""
    rng = random.Random(seed)
    policy = {"default": "5G", "validRange": {"min": "5G", "step": "5G"}}
    objs: list[dict[str, Any]] = [_class("gpu", GPU), _class("nic", NIC)]
    for n in range(nodes):
        gpus = [{"name": f"gpu-{i}", "attributes": {TOPOLOGY: {"int": i // 4}}} for i in range(8)]
        nics = [
            {
                "name": f"nic-{j}",
                "allowMultipleAllocations": True,
                "attributes": {TOPOLOGY: {"int": j}},
                "capacity": {"bandwidth": {"value": "100G", "requestPolicy": policy}},
            }
            for j in range(2)
        ]
        objs.append(_slice(f"node-{n}-gpu", GPU, f"node-{n}", gpus))
        objs.append(_slice(f"node-{n}-nic", NIC, f"node-{n}", nics))
    for c in range(claims):
        gpus, bandwidth = rng.choice([1, 2, 4]), rng.choice([10, 25, 50])
        nic = {"deviceClassName": "nic", "capacity": {"requests": {"bandwidth": f"{bandwidth}G"}}}
        requests = [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": gpus}},
            {"name": "nic", "exactly": nic},
        ]
        match = [{"requests": ["gpu", "nic"], "matchAttribute": TOPOLOGY}]
        objs.append(resource_claim(f"job-{c:04d}", requests, match))
    return objs


# --- the heterogeneous cluster of issue 30 ---------------------------------------------------

ACCEL = "accel.example.com"
SIZE_ATTR = f'device.attributes["{GPU}"].size'
NODE_KINDS = (("gpu8", 25), ("gpu4", 35), ("part", 20), ("accel", 20))
"""Node kinds of `mixed_cluster` and their weights (percent of the nodes, drawn by seed)."""
POD_SHAPES = (
    ("gpu-1", 25),
    ("gpu-2", 15),
    ("gpu-4", 10),
    ("gpu-8", 5),
    ("gpu-2-nic", 10),
    ("gpu-4-numa", 5),
    ("half", 10),
    ("accel-1", 20),
)
"""Pod shapes of `mixed_cluster` (one ResourceClaimTemplate each) and their weights."""


def _gpu(name: str, size: str, numa: int, counters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    dev: dict[str, Any] = {
        "name": name,
        "attributes": {"size": {"string": size}, TOPOLOGY: {"int": numa}},
    }
    if counters is not None:
        dev["consumesCounters"] = counters
    return dev


def _mixed_node(node: str, kind: str) -> list[dict[str, Any]]:
    """The Node and its slices for one node kind of `mixed_cluster`."""
    objs: list[dict[str, Any]] = [_node(node)]
    if kind == "gpu8":  # 8 GPUs on 2 NUMA nodes, one NIC per NUMA node
        gpus = [_gpu(f"gpu-{i}", "whole", i // 4) for i in range(8)]
        nics = [{"name": f"nic-{j}", "attributes": {TOPOLOGY: {"int": j}}} for j in range(2)]
        objs += [_slice(f"{node}-gpu", GPU, node, gpus), _slice(f"{node}-nic", NIC, node, nics)]
    elif kind == "gpu4":
        objs.append(_slice(f"{node}-gpu", GPU, node, [_gpu(f"gpu-{i}", "whole", 0) for i in range(4)]))
    elif kind == "part":  # 4 partitionable GPUs: each the whole device or two halves (counters)
        devices: list[dict[str, Any]] = []
        for i in range(4):

            def uses(amount: str, i: int = i) -> list[dict[str, Any]]:
                return [{"counterSet": f"gpu-{i}-mem", "counters": {"memory": {"value": amount}}}]

            devices.append(_gpu(f"gpu-{i}", "whole", i // 2, uses("2")))
            devices += [_gpu(f"gpu-{i}-half-{h}", "half", i // 2, uses("1")) for h in range(2)]
        # Since Kubernetes 1.34 the counter sets are a slice of their own in the pool.
        pool = {"name": f"{node}-gpu", "generation": 1, "resourceSliceCount": 2}
        counters = _slice(f"{node}-gpu-counters", GPU, node, [], f"{node}-gpu")
        del counters["spec"]["devices"]
        counters["spec"]["sharedCounters"] = [
            {"name": f"gpu-{i}-mem", "counters": {"memory": {"value": "2"}}} for i in range(4)
        ]
        gpus = _slice(f"{node}-gpu", GPU, node, devices)
        counters["spec"]["pool"] = dict(pool)
        gpus["spec"]["pool"] = dict(pool)
        objs += [counters, gpus]
    else:  # one small accelerator
        objs.append(_slice(f"{node}-accel", ACCEL, node, [{"name": "accel-0"}]))
    return objs


def _mixed_template(shape: str) -> dict[str, Any]:
    """The ResourceClaimTemplate of one pod shape of `mixed_cluster`."""
    whole = [{"cel": {"expression": f'{SIZE_ATTR} == "whole"'}}]
    half = [{"cel": {"expression": f'{SIZE_ATTR} == "half"'}}]
    constraints: list[dict[str, Any]] = []
    if shape == "accel-1":
        requests: list[dict[str, Any]] = [{"name": "accel", "exactly": {"deviceClassName": "accel"}}]
    elif shape == "half":
        requests = [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": half}}]
    elif shape == "gpu-2-nic":  # two GPUs and the NIC of their NUMA node
        requests = [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2, "selectors": whole}},
            {"name": "nic", "exactly": {"deviceClassName": "nic"}},
        ]
        constraints = [{"requests": ["gpu", "nic"], "matchAttribute": TOPOLOGY}]
    elif shape == "gpu-4-numa":  # four GPUs on one NUMA node
        requests = [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4, "selectors": whole}}]
        constraints = [{"matchAttribute": TOPOLOGY}]
    else:  # gpu-N: N whole GPUs (gpu-1: a whole GPU or a half, whichever is first)
        count = int(shape.split("-")[1])
        selectors = [] if count == 1 else whole
        requests = [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count, "selectors": selectors}}
        ]
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": shape, "namespace": "default"},
        "spec": {"spec": {"devices": devices}},
    }


def mixed_cluster(nodes: int = 1000, pods: int | None = None, seed: int = 30) -> list[dict[str, Any]]:
    """Issue 30's heterogeneous cluster: `nodes` Nodes of four kinds (`NODE_KINDS`, drawn by
    `seed`) — 8-GPU nodes with a NIC per NUMA node (GPUs and NICs publish
    `topology.example.com/numa`), 4-GPU nodes, nodes of 4 partitionable GPUs (each the whole
    device or two halves, KEP-4815 counters), nodes with one small accelerator — and `pods`
    (default 5 x nodes) pending Pods, each with one claim from a ResourceClaimTemplate of its
    shape (`POD_SHAPES`: 1/2/4/8 GPUs, 2 GPUs + the NIC of their NUMA node and 4 GPUs on one
    NUMA node (matchAttribute), half a GPU, the small accelerator) and a PriorityClass of
    value 0-3. Far more is asked for than exists (about twice the GPUs, five times the
    accelerators), so the plan decides which pods run. Deterministic: the same arguments give
    the same objects."""
    rng = random.Random(seed)
    pods = 5 * nodes if pods is None else pods
    objs: list[dict[str, Any]] = [_class("gpu", GPU), _class("nic", NIC), _class("accel", ACCEL)]
    objs += [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"prio-{p}"},
            "value": p,
        }
        for p in range(4)
    ]
    objs += [_mixed_template(shape) for shape, _ in POD_SHAPES]
    kinds, kind_weights = zip(*NODE_KINDS, strict=True)
    for n, kind in enumerate(rng.choices(kinds, kind_weights, k=nodes)):
        objs += _mixed_node(f"node-{n:05d}", kind)
    shapes, shape_weights = zip(*POD_SHAPES, strict=True)
    for p, shape in enumerate(rng.choices(shapes, shape_weights, k=pods)):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:05d}", "namespace": "default", "uid": f"uid-{p:05d}"},
                "spec": {
                    "priorityClassName": f"prio-{rng.randrange(4)}",
                    "containers": [{"name": "ctr", "resources": {"claims": [{"name": "dev"}]}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": shape}],
                },
            }
        )
    return objs


# --- a second heterogeneous cluster, of other proportions (issue 40) -------------------------

SKEWED_NODE_KINDS = (("gpu8x4", 10), ("gpu4", 15), ("part8", 45), ("accel2", 30))
"""Node kinds of `skewed_cluster` and their weights: mostly partitionable and accelerator nodes."""
SKEWED_POD_SHAPES = (
    ("half", 30),
    ("gpu-1", 25),
    ("accel-1", 20),
    ("gpu-2", 10),
    ("gpu-2-nic", 6),
    ("gpu-4", 4),
    ("gpu-4-numa", 3),
    ("gpu-8", 2),
)
"""Pod shapes of `skewed_cluster` (the templates of `mixed_cluster`) and their weights."""
SKEWED_PRIORITIES = (50, 30, 15, 5)
"""Weights of priorities 0-3 in `skewed_cluster`: most pods low, few high."""


def _skewed_node(node: str, kind: str) -> list[dict[str, Any]]:
    """The Node and its slices for one node kind of `skewed_cluster`."""
    objs: list[dict[str, Any]] = [_node(node)]
    if kind == "gpu8x4":  # 8 GPUs on 4 NUMA nodes, a NIC per NUMA node
        gpus = [_gpu(f"gpu-{i}", "whole", i // 2) for i in range(8)]
        nics = [{"name": f"nic-{j}", "attributes": {TOPOLOGY: {"int": j}}} for j in range(4)]
        objs += [_slice(f"{node}-gpu", GPU, node, gpus), _slice(f"{node}-nic", NIC, node, nics)]
    elif kind == "gpu4":  # 4 GPUs on 2 NUMA nodes
        gpus = [_gpu(f"gpu-{i}", "whole", i // 2) for i in range(4)]
        objs.append(_slice(f"{node}-gpu", GPU, node, gpus))
    elif kind == "part8":  # 8 partitionable GPUs, counters in the devices' own slice
        devices: list[dict[str, Any]] = []
        for i in range(8):

            def uses(amount: str, i: int = i) -> list[dict[str, Any]]:
                return [{"counterSet": f"gpu-{i}-mem", "counters": {"memory": {"value": amount}}}]

            devices.append(_gpu(f"gpu-{i}", "whole", i // 4, uses("2")))
            devices += [_gpu(f"gpu-{i}-half-{h}", "half", i // 4, uses("1")) for h in range(2)]
        pool = {"name": f"{node}-gpu", "generation": 1, "resourceSliceCount": 2}
        counters = _slice(f"{node}-gpu-counters", GPU, node, [], f"{node}-gpu")
        del counters["spec"]["devices"]
        counters["spec"]["sharedCounters"] = [
            {"name": f"gpu-{i}-mem", "counters": {"memory": {"value": "2"}}} for i in range(8)
        ]
        gpus = _slice(f"{node}-gpu", GPU, node, devices)
        counters["spec"]["pool"] = dict(pool)
        gpus["spec"]["pool"] = dict(pool)
        objs += [counters, gpus]
    else:  # two small accelerators
        objs.append(_slice(f"{node}-accel", ACCEL, node, [{"name": f"accel-{a}"} for a in range(2)]))
    return objs


def skewed_cluster(nodes: int = 1000, pods: int | None = None, seed: int = 40) -> list[dict[str, Any]]:
    """A second heterogeneous cluster, so that no single shape is what the scale numbers are
    tuned on (issue 40): the device kinds of `mixed_cluster` in other proportions and layouts —
    10 % 8-GPU nodes with 4 NUMA nodes of 2 GPUs and a NIC each, 15 % 4-GPU nodes on 2 NUMA
    nodes, 45 % nodes of 8 partitionable GPUs (whole or two halves, counters), 30 % nodes with
    two small accelerators (`SKEWED_NODE_KINDS`) — and `pods` (default 5 x nodes) pending Pods
    skewed to small requests (`SKEWED_POD_SHAPES`: half GPUs and single devices first) and to
    low priorities (`SKEWED_PRIORITIES`). Deterministic: the same arguments give the same objects."""
    rng = random.Random(seed)
    pods = 5 * nodes if pods is None else pods
    objs: list[dict[str, Any]] = [_class("gpu", GPU), _class("nic", NIC), _class("accel", ACCEL)]
    objs += [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"prio-{p}"},
            "value": p,
        }
        for p in range(4)
    ]
    objs += [_mixed_template(shape) for shape, _ in SKEWED_POD_SHAPES]
    kinds, kind_weights = zip(*SKEWED_NODE_KINDS, strict=True)
    for n, kind in enumerate(rng.choices(kinds, kind_weights, k=nodes)):
        objs += _skewed_node(f"node-{n:05d}", kind)
    shapes, shape_weights = zip(*SKEWED_POD_SHAPES, strict=True)
    priorities = rng.choices(range(4), SKEWED_PRIORITIES, k=pods)
    for p, shape in enumerate(rng.choices(shapes, shape_weights, k=pods)):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{p:05d}", "namespace": "default", "uid": f"uid-{p:05d}"},
                "spec": {
                    "priorityClassName": f"prio-{priorities[p]}",
                    "containers": [{"name": "ctr", "resources": {"claims": [{"name": "dev"}]}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": shape}],
                },
            }
        )
    return objs
