"""The planner's bound and OPTIMAL against an exhaustive enumeration (issue #27 §5).

Why an enumerator written here: a bound is an upper bound of the objective over *every*
valid plan under upstream's semantics — pods one after another, each pod's claims allocated
by upstream's first fit on the node the scheduler picked, against everything allocated
before. The enumerator walks every such history on small generated clusters (every order
of the pods, every node for each, or leaving it out), allocating each pod with the public
`dra_solver.allocate(..., allocator="reference")` — the upstream oracle, not the models —
and keeps the best priority weight. It shares no code with the CP-SAT models, the master
or their bounds. Then, for the per-device model, the aggregated model, the default path and a
partitioned plan: `bound >= best` and `status == OPTIMAL => objective == best`.

The instances are where the models are stricter than upstream: allocationMode All and
adminAccess over multi-allocatable (consumable capacity) devices, pods sharing a claim,
firstAvailable, priorities, gangs; 1-3 nodes, at most 5 pods. Only input errors are filtered
(`strategies.INPUT_ERRORS`); a failed check (`CheckFailed`) fails the test.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from example_counts import sized
from strategies import INPUT_ERRORS

from dra_solver import allocate, plan
from dra_solver.api.cluster import Cluster
from dra_solver.cel.checks import validate_all
from dra_solver.gates import FeatureGates
from dra_solver.planners.policy import TABLES
from dra_solver.planning.snapshot import Snapshot
from dra_solver.problem.flat import claim_weight

DRIVER = "gpu.example.com"
GATES = FeatureGates.of("DRAConsumableCapacity=true,DRAAdminAccess=true")
CASES = sized(30, 600)
"""Seeds: 30 under the `ci` profile, 600 under `long`."""


def _device(rng: random.Random, node: int, i: int) -> dict[str, Any]:
    dev: dict[str, Any] = {"name": f"d{node}-{i}"}
    if rng.random() < 0.6:
        dev["allowMultipleAllocations"] = True
        if rng.random() < 0.8:
            dev["capacity"] = {"memory": {"value": f"{rng.choice([30, 40, 60])}Gi"}}
    elif rng.random() < 0.3:
        dev["capacity"] = {"memory": {"value": "40Gi"}}
    return dev


def _request(rng: random.Random) -> dict[str, Any]:
    req: dict[str, Any] = {"deviceClassName": "gpu"}
    kind = rng.choice(["one", "one", "all", "admin"])
    if kind == "all":
        req["allocationMode"] = "All"
    else:
        req["count"] = 1
    if kind == "admin":
        req["adminAccess"] = True
    if rng.random() < 0.7:
        req["capacity"] = {"requests": {"memory": f"{rng.choice([10, 20, 30])}Gi"}}
    return req


def _device_request(rng: random.Random) -> dict[str, Any]:
    """One request `r`: mostly `exactly`, sometimes two firstAvailable subrequests (no
    adminAccess there: the API has none on subrequests)."""
    if rng.random() < 0.2:
        subs = []
        for name in ("a", "b"):
            sub = _request(rng)
            sub.pop("adminAccess", None)
            subs.append({"name": name, **sub})
        return {"name": "r", "firstAvailable": subs}
    return {"name": "r", "exactly": _request(rng)}


Instance = tuple[
    list[dict[str, Any]], list[list[str]], list[str], list[int], dict[str, tuple[int, list[int]]]
]


def instance(seed: int) -> Instance:
    """(objects, pods as lists of claim names, nodes, priorities, gangs): 1-3 nodes of 1-2
    devices, 2-5 pods of 1-2 claims, some claims shared by two pods. In about a third of the
    instances the pods are Pod objects (`p0`, `p1`, ...; their priority in spec.priority) and
    two or three of them form a gang (a PodGroup with minCount 2): gangs -> (minCount, pods)."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    ]
    nodes = [f"n{n}" for n in range(rng.randint(1, 3))]
    for n, name in enumerate(nodes):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpus"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [_device(rng, n, i) for i in range(rng.randint(1, 2))],
                },
            }
        )
    n_pods = rng.randint(2, 5 if len(nodes) < 3 else 4)
    claims: list[str] = []
    pods: list[list[str]] = []
    for _ in range(n_pods):
        mine = []
        if claims and rng.random() < 0.2:
            mine.append(rng.choice(claims))  # a claim shared with an earlier pod
        for _ in range(rng.randint(0 if mine else 1, 1)):
            name = f"c{len(claims)}"
            claims.append(name)
            mine.append(name)
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"devices": {"requests": [_device_request(rng)]}},
                }
            )
        pods.append(mine)
    prios = [rng.choice([0, 0, 1, 3]) for _ in pods]
    gangs: dict[str, tuple[int, list[int]]] = {}
    if rng.random() < 0.35:
        members = sorted(rng.sample(range(len(pods)), min(len(pods), rng.randint(2, 3))))
        gangs["default/gang"] = (2, members)
        objs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1alpha2",
                "kind": "PodGroup",
                "metadata": {"name": "gang", "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
            }
        )
        for p, names in enumerate(pods):
            spec: dict[str, Any] = {
                "priority": prios[p],
                "resourceClaims": [{"name": c, "resourceClaimName": c} for c in names],
            }
            if p in members:
                spec["schedulingGroup"] = {"podGroupName": "gang"}
            pod = {"name": f"p{p}", "namespace": "default"}
            objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": pod, "spec": spec})
    return objs, pods, nodes, prios, gangs


def _state_key(claims: dict[tuple[str, str], Any], placed: frozenset[int]) -> tuple[object, ...]:
    """A history's state for `best_sequential` (the pods placed, the allocations made): two
    histories that reach the same state place the same afterwards, so it is walked once."""
    rows = []
    for key, c in sorted(claims.items()):
        alloc = c.status.allocation if c.status else None
        if alloc is not None:
            results = tuple(
                (r.request, r.pool, r.device, tuple(sorted((r.consumed_capacity or {}).items())))
                for r in alloc.devices.results
            )
            rows.append((key, results))
    return (placed, tuple(rows))


def best_sequential(
    cluster: Cluster,
    pods: list[list[str]],
    nodes: list[str],
    prios: list[int],
    gangs: dict[str, tuple[int, list[int]]],
) -> int:
    """The most priority weight any history of upstream decisions places: pods one after
    another in any order, each on any node (or left out), its unallocated claims allocated by
    the reference allocator against everything allocated before; a pod whose claims another
    pod's allocation holds already goes to that node. A history counts only where each gang
    has none or at least its minCount of pods placed."""
    weights = [claim_weight(p) for p in prios]
    best = 0
    calls = [0]
    seen: set[tuple[object, ...]] = set()

    def gangs_ok(placed: frozenset[int]) -> bool:
        return all(len(placed & set(ms)) in (0, *range(k, len(ms) + 1)) for k, ms in gangs.values())

    def walk(current: Cluster, at: dict[str, str], placed: frozenset[int], weight: int) -> None:
        nonlocal best
        if gangs_ok(placed):
            best = max(best, weight)
        key = _state_key(current.claims, placed)
        if key in seen or best == sum(weights):
            return
        seen.add(key)
        for p, names in enumerate(pods):
            if p in placed:
                continue
            for node in nodes:
                if any(at.get(c, node) != node for c in names):
                    continue  # a shared claim is allocated on another node
                todo = [c for c in names if c not in at]
                if not todo:
                    walk(current, at, placed | {p}, weight + weights[p])
                    continue
                calls[0] += 1  # a fresh seed per call: shareIDs differ between calls
                out = allocate(current, todo, node, allocator="reference", feature_gates=GATES, seed=calls[0])
                if not out.allocated:
                    continue
                after = Snapshot(current)
                after.allocate(out.claims)
                walk(after.cluster, {**at, **dict.fromkeys(todo, node)}, placed | {p}, weight + weights[p])

    walk(cluster, {}, frozenset(), 0)
    return best


def _cases() -> Iterator[int]:
    yield from range(CASES)


@pytest.mark.parametrize("seed", list(_cases()))
def test_bound_covers_every_sequential_plan_and_optimal_is_the_best(seed: int) -> None:
    objs, pods, nodes, prios, gangs = instance(seed)
    cluster = Cluster.from_objects(objs)
    if validate_all(cluster):
        pytest.skip("generated input is invalid")
    try:
        best = best_sequential(cluster, pods, nodes, prios, gangs)
    except INPUT_ERRORS as exc:  # CheckFailed (a wrong answer) propagates
        pytest.skip(f"input error: {exc}")
    runs = [(mode, 1) for mode in ("never", "always", "auto")]
    if len(nodes) > 1:
        runs.append(("auto", 2))  # two parts and a repair pass (`solver.planners.partition`)
    for mode, parts in runs:
        opts = {"feature_gates": GATES, "time_limit": 5.0, "partitions": parts, "models": TABLES[mode]}
        if gangs:  # the Pod objects, their priorities and their PodGroup
            out = plan(cluster, None, nodes, **opts)
        else:
            out = plan(cluster, pods, nodes, priorities=prios, **opts)
        s = out.verdict
        assert s is not None and s.objective == out.weight, (mode, s)
        assert out.weight <= best, (mode, s, best)  # the plan is one of upstream's histories
        assert s.bound is not None and s.bound >= best, (mode, s, best)
        if s.status == "OPTIMAL":
            assert out.weight == best, (mode, s, best)
