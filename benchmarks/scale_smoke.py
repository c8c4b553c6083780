"""Issue #40 §1: a "scale smoke" — clusters that combine our features at 200 nodes, to find the
next shape that blows up before a user does (`benchmarks/test_bench_scale_smoke.py` draws the
combinations with Hypothesis and fails when a plan takes more than 30 s of CPU).

`smoke_cluster(features, nodes, seed)` builds one cluster. Every cluster has `nodes` Nodes
(cpu, memory, pods; a `rack` label, 20 nodes a rack) and pending Pods of three kinds, about
2 per node; each feature adds its objects and turns some pods into its users:

- `netpools`: network-attached pools, one per rack, a slice with a label `nodeSelector` on the
  rack (20 nodes see each pool) of 8 FPGA devices; some pods ask for 1-2 FPGAs of one pool
  (`matchAttribute` on the pool's index when `match` is on too);
- `counters`: the node GPUs are partitionable — a whole GPU and two halves per GPU, sharing a
  memory counter (KEP-4815) — and some pods ask for a half;
- `capacity`: each node has a NIC shared by many claims (`allowMultipleAllocations`) with 100
  units of bandwidth (KEP-5075); some pods ask for 10-40 units;
- `all`: some pods ask for every NIC of their node (`allocationMode: All`);
- `first_available`: some pods ask for 4 GPUs, else 2 (`firstAvailable`, KEP-4816);
- `match`: GPU+NIC pods ask for one NUMA node (`matchAttribute`) — every node has two NUMA
  nodes, 4 GPUs and a NIC each;
- `distinct`: some pods ask for 2 GPUs of distinct models (`distinctAttribute`), on nodes
  with two models;
- `gangs`: a third of the GPU pods are in PodGroups of 4-8 pods, all or none (KEP-4671);
- `extended`: the GPU class serves the extended resource `example.com/gpu` (KEP-5004); some
  pods ask for it in their containers, no claim.

Deterministic: the same arguments give the same objects. One point in a fresh process:
`python -m benchmarks.scale_smoke FEATURE,FEATURE NODES SEED` prints a JSON line (the plan's
CPU and wall seconds, CP-SAT's deterministic seconds where reported, its numbers).
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import verdict_info
from benchmarks.workloads import resource_claim

ROOT = Path(__file__).resolve().parents[1]
GPU = "gpu.example.com"
NIC = "nic.example.com"
FPGA = "fpga.example.com"
FEATURES = (
    "netpools",
    "counters",
    "capacity",
    "all",
    "first_available",
    "match",
    "distinct",
    "gangs",
    "extended",
)
RACK = 20
"""Nodes per rack; a network-attached pool serves a rack."""


def device_class(name: str, driver: str, extended: str | None = None) -> dict[str, Any]:
    """A DeviceClass selecting `driver`'s devices, serving `extended` when given (also the
    builder of `tests/test_racks_and_served.py`)."""
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def _node(name: str, rack: int) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "rack": f"rack-{rack}"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def resource_slice(name: str, driver: str, devices: list[dict[str, Any]], **where: Any) -> dict[str, Any]:
    """A one-slice pool `name` of `devices`; `where`: nodeName, nodeSelector..."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
    }
    spec.update(where)
    spec["devices"] = devices
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def _gpus(node: str, n: int, f: frozenset[str]) -> list[dict[str, Any]]:
    """Node `n`'s 8 GPUs (two NUMA nodes of 4); with `counters`, each a whole and two halves
    sharing its memory counter; with `distinct`, every other node has two models."""
    devices: list[dict[str, Any]] = []
    counters: list[dict[str, Any]] = []
    for g in range(8):
        model = "b200" if "distinct" in f and n % 2 and g % 2 else "h100"
        attrs = {"numa": {"int": g // 4}, "model": {"string": model}, "size": {"string": "whole"}}
        if "counters" not in f:
            devices.append({"name": f"gpu-{g}", "attributes": attrs})
            continue
        counters.append({"name": f"gpu-{g}-mem", "counters": {"memory": {"value": "2"}}})

        def uses(amount: str, g: int = g) -> list[dict[str, Any]]:
            return [{"counterSet": f"gpu-{g}-mem", "counters": {"memory": {"value": amount}}}]

        devices.append({"name": f"gpu-{g}", "attributes": attrs, "consumesCounters": uses("2")})
        for h in range(2):
            half = {**attrs, "size": {"string": "half"}}
            devices.append({"name": f"gpu-{g}-half-{h}", "attributes": half, "consumesCounters": uses("1")})
    out = resource_slice(f"{node}-gpu", GPU, devices, nodeName=node)
    if not counters:
        return [out]
    # Since Kubernetes 1.34 the counter sets are a slice of their own in the pool.
    sets = resource_slice(f"{node}-gpu-counters", GPU, [], nodeName=node)
    del sets["spec"]["devices"]
    sets["spec"]["sharedCounters"] = counters
    for part in (out, sets):
        part["spec"]["pool"] = {"name": f"{node}-gpu", "generation": 1, "resourceSliceCount": 2}
    return [sets, out]


def _nics(node: str, f: frozenset[str]) -> dict[str, Any]:
    """Two NICs, one per NUMA node; with `capacity`, each shared by many claims with 100 units
    of bandwidth."""
    devices = []
    for i in range(2):
        dev: dict[str, Any] = {"name": f"nic-{i}", "attributes": {"numa": {"int": i}}}
        if "capacity" in f:
            dev["allowMultipleAllocations"] = True
            dev["capacity"] = {"bandwidth": {"value": "100"}}
        devices.append(dev)
    return resource_slice(f"{node}-nic", NIC, devices, nodeName=node)


def _fpga_pool(rack: int) -> dict[str, Any]:
    devices = [{"name": f"fpga-{i}", "attributes": {"pool": {"int": rack}}} for i in range(8)]
    selector = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": [f"rack-{rack}"]}]}
        ]
    }
    return resource_slice(f"fpga-rack-{rack}", FPGA, devices, nodeSelector=selector)


def _request(name: str, cls: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **more}}


def _claim_template(
    name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The claim `benchmarks.workloads` would write, as a ResourceClaimTemplate."""
    claim = resource_claim(name, requests, constraints)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": claim["metadata"],
        "spec": {"spec": claim["spec"]},
    }


def _templates(f: frozenset[str]) -> dict[str, dict[str, Any]]:
    """The claim shapes the features call for, by name."""
    whole = [{"cel": {"expression": f'device.attributes["{GPU}"].size == "whole"'}}]
    half = [{"cel": {"expression": f'device.attributes["{GPU}"].size == "half"'}}]
    shapes: dict[str, dict[str, Any]] = {
        "gpu-1": _claim_template("gpu-1", [_request("gpu", "gpu", count=1, selectors=whole)]),
        "gpu-2": _claim_template("gpu-2", [_request("gpu", "gpu", count=2, selectors=whole)]),
    }
    numa = [{"requests": ["gpu", "nic"], "matchAttribute": f"{GPU}/numa"}] if "match" in f else None
    nic: dict[str, Any] = {"capacity": {"requests": {"bandwidth": "25"}}} if "capacity" in f else {}
    shapes["gpu-nic"] = _claim_template(
        "gpu-nic", [_request("gpu", "gpu", count=2, selectors=whole), _request("nic", "nic", **nic)], numa
    )
    if "counters" in f:
        shapes["half"] = _claim_template("half", [_request("gpu", "gpu", count=1, selectors=half)])
    if "all" in f:
        shapes["all-nics"] = _claim_template("all-nics", [_request("nic", "nic", allocationMode="All")])
    if "first_available" in f:
        shapes["four-else-two"] = _claim_template(
            "four-else-two",
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "four", "deviceClassName": "gpu", "count": 4, "selectors": whole},
                        {"name": "two", "deviceClassName": "gpu", "count": 2, "selectors": whole},
                    ],
                }
            ],
        )
    if "distinct" in f:
        shapes["two-models"] = _claim_template(
            "two-models",
            [_request("gpu", "gpu", count=2, selectors=whole)],
            [{"requests": ["gpu"], "distinctAttribute": f"{GPU}/model"}],
        )
    if "netpools" in f:
        same = [{"requests": ["fpga"], "matchAttribute": f"{FPGA}/pool"}] if "match" in f else None
        shapes["fpga-2"] = _claim_template("fpga-2", [_request("fpga", "fpga", count=2)], same)
    if "capacity" in f:
        shapes["bandwidth"] = _claim_template(
            "bandwidth", [_request("nic", "nic", capacity={"requests": {"bandwidth": "40"}})]
        )
    return shapes


def _pod(name: str, template: str | None, group: str | None = None, extended: int = 0) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": "2", "memory": "8Gi"}
    if extended:
        requests["example.com/gpu"] = str(extended)
    container: dict[str, Any] = {"name": "ctr", "resources": {"requests": dict(requests)}}
    spec: dict[str, Any] = {"containers": [container]}
    if extended:
        container["resources"]["limits"] = {"example.com/gpu": str(extended)}
    if template is not None:
        container["resources"]["claims"] = [{"name": "dev"}]
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


def smoke_cluster(
    features: frozenset[str] | set[str], nodes: int = 200, seed: int = 0
) -> list[dict[str, Any]]:
    """The cluster of `features` at `nodes` nodes (module docstring)."""
    f = frozenset(features)
    unknown = f - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}; known: {', '.join(FEATURES)}")
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [
        device_class("gpu", GPU, "example.com/gpu" if "extended" in f else None),
        device_class("nic", NIC),
        device_class("fpga", FPGA),
    ]
    for n in range(nodes):
        node = f"node-{n:04d}"
        objs += [_node(node, n // RACK), *_gpus(node, n, f), _nics(node, f)]
    if "netpools" in f:
        objs += [_fpga_pool(r) for r in range((nodes + RACK - 1) // RACK)]
    shapes = _templates(f)
    objs += list(shapes.values())
    names = sorted(shapes)
    pods = 2 * nodes
    group: tuple[str, int] | None = None
    for p in range(pods):
        name = f"pod-{p:05d}"
        if "extended" in f and rng.random() < 0.15:
            objs.append(_pod(name, None, extended=rng.choice((1, 2))))
            continue
        shape = rng.choice(names)
        member = None
        if "gangs" in f and shape.startswith("gpu") and rng.random() < 0.33:
            if group is None or group[1] == 0:
                size = rng.randint(4, 8)
                group = (f"gang-{p:05d}", size)
                objs.append(
                    {
                        "apiVersion": "scheduling.k8s.io/v1alpha2",
                        "kind": "PodGroup",
                        "metadata": {"name": group[0], "namespace": "default"},
                        "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
                    }
                )
            member = group[0]
            group = (group[0], group[1] - 1)
        objs.append(_pod(name, shape, member))
    if group is not None and group[1] > 0:  # the last gang's minCount: the pods it got
        for o in objs:
            if o["kind"] == "PodGroup" and o["metadata"]["name"] == group[0]:
                gang = o["spec"]["schedulingPolicy"]["gang"]
                gang["minCount"] -= group[1]
    return objs


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def point(features: frozenset[str], nodes: int, seed: int, time_limit: float = 10.0) -> dict[str, Any]:
    """One plan in this process: the plan's CPU seconds (every thread of this process: CP-SAT's
    too), wall seconds and numbers."""
    from dra_solver import Cluster, plan

    cluster = Cluster.from_objects(smoke_cluster(features, nodes, seed))
    c0, t0 = _cpu(), time.perf_counter()
    out = plan(cluster, time_limit=time_limit)
    cpu, wall = _cpu() - c0, time.perf_counter() - t0
    s = out.stats
    return {
        "features": sorted(features),
        "nodes": nodes,
        "seed": seed,
        "pods": len(out.pods),
        "placed": out.placed,
        "plan_cpu_seconds": round(cpu, 2),
        "plan_seconds": round(wall, 2),
        **{k: v for k, v in verdict_info(out).items() if k != "bound_from"},
        **{k: s.get(k) for k in ("aggregated", "reference_placed")},
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


def run_point(
    features: frozenset[str], nodes: int, seed: int, timeout: float = 1800.0, cpu_limit: float | None = None
) -> dict[str, Any]:
    """`point` in a fresh process; past `cpu_limit` CPU seconds (the child's RLIMIT_CPU: every
    thread counts, whatever the machine's load) or `timeout` wall seconds it is stopped and
    reported as not finished (a blow-up: the plan took longer than the bound allows)."""
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.scale_smoke",
        ",".join(sorted(features)) or "-",
        str(nodes),
        str(seed),
    ]
    unfinished = {"features": sorted(features), "nodes": nodes, "seed": seed, "finished": False}

    def limit() -> None:
        if cpu_limit is not None:
            seconds = int(cpu_limit) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))

    try:
        done = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False, preexec_fn=limit
        )
    except subprocess.TimeoutExpired:
        return {**unfinished, "stopped": f"after {timeout:.0f} wall seconds"}
    if done.returncode < 0 and cpu_limit is not None:  # SIGXCPU, or SIGKILL at the hard limit
        return {**unfinished, "stopped": f"past {cpu_limit:.0f} CPU seconds (signal {-done.returncode})"}
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["finished"] = True
    return out


def main() -> None:
    features = frozenset() if sys.argv[1] == "-" else frozenset(sys.argv[1].split(","))
    print(json.dumps(point(features, int(sys.argv[2]), int(sys.argv[3]))))


if __name__ == "__main__":
    main()
