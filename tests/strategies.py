"""Hypothesis strategies: small random DRA clusters and claims as resource.k8s.io/v1 dicts.

Why dicts: the generated input goes through the same loading, validation and precompute
as user input, so the differential tests exercise the whole path, not a shortcut.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dra_solver.api.quantity import QuantityError
from dra_solver.errors import (
    CelError,
    InputError,
    InputRefused,
    InvalidPools,
    SearchAborted,
    ValidationErrors,
)

INPUT_ERRORS = (
    InputError,
    ValidationErrors,
    CelError,
    QuantityError,
    InputRefused,
    InvalidPools,
    SearchAborted,
)
"""The errors a generated input may cause — invalid, refused as upstream refuses it, or a search
given up — which a property test may filter out. Never `CheckFailed` (a wrong answer of ours,
an AllocationError too): that one always fails the test."""

DRIVER = "gpu.example.com"
GATES = "DRADerivedAttributes=true,DRAListTypeAttributes=true"

SELECTORS = (
    f'device.attributes["{DRIVER}"].numa == 0',
    f'device.attributes["{DRIVER}"].model == "a"',
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0',
    "device.allowMultipleAllocations",
    "!device.allowMultipleAllocations",
)
DERIVED = (
    f'device.attributes["{DRIVER}"].numa',
    f'device.attributes["{DRIVER}"].numa % 2',
    f'device.attributes["{DRIVER}"].model',
    f'[device.attributes["{DRIVER}"].numa, 9]',
)


@st.composite
def devices(draw: st.DrawFn, node: int, count: int, with_counters: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        dev: dict[str, Any] = {
            "name": f"d{node}-{i}",
            "attributes": {
                "numa": {"int": draw(st.integers(0, 2))},
                "model": {"string": draw(st.sampled_from(["a", "b"]))},
            },
        }
        if draw(st.booleans()):
            dev["attributes"]["links"] = {
                "ints": draw(st.lists(st.integers(0, 3), min_size=1, max_size=2, unique=True))
            }
        multi = draw(st.booleans())
        mem = draw(st.sampled_from([40, 80]))
        cap: dict[str, Any] = {"value": f"{mem}Gi"}
        if multi:
            dev["allowMultipleAllocations"] = True
            policy = draw(st.sampled_from(["none", "values", "range"]))
            if policy == "values":
                cap["requestPolicy"] = {"default": "10Gi", "validValues": ["10Gi", "20Gi", f"{mem}Gi"]}
            elif policy == "range":
                cap["requestPolicy"] = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
        if draw(st.booleans()):
            dev["capacity"] = {"memory": cap}
        if draw(st.integers(0, 7)) == 0:
            dev["taints"] = [{"key": "maintenance", "effect": draw(st.sampled_from(["NoSchedule", "None"]))}]
        if with_counters and draw(st.booleans()):
            dev["consumesCounters"] = [
                {"counterSet": "chip", "counters": {"mem": {"value": f"{draw(st.sampled_from([20, 40]))}Gi"}}}
            ]
        out.append(dev)
    return out


@st.composite
def exact(draw: st.DrawFn, class_name: str, admin_ok: bool = False) -> dict[str, Any]:
    req: dict[str, Any] = {"deviceClassName": class_name}
    if admin_ok and draw(st.integers(0, 9)) == 0:
        req["adminAccess"] = True
    if draw(st.integers(0, 3)) == 0:
        req["tolerations"] = [{"key": "maintenance", "operator": "Exists"}]
    if draw(st.integers(0, 9)) == 0:
        req["allocationMode"] = "All"
    else:
        req["count"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        req["selectors"] = [{"cel": {"expression": draw(st.sampled_from(SELECTORS))}}]
    if draw(st.booleans()):
        req["capacity"] = {"requests": {"memory": f"{draw(st.sampled_from([5, 10, 15, 20, 30, 50]))}Gi"}}
    return req


@st.composite
def claim(draw: st.DrawFn, index: int) -> dict[str, Any]:
    requests = []
    for r in range(draw(st.integers(1, 2))):
        if draw(st.integers(0, 3)) == 0:
            subs = []
            for s in range(2):
                sub = draw(exact("gpu"))
                subs.append({"name": f"s{s}", **sub})
            requests.append({"name": f"r{r}", "firstAvailable": subs})
        else:
            requests.append({"name": f"r{r}", "exactly": draw(exact("gpu", admin_ok=True))})
    devices_spec: dict[str, Any] = {"requests": requests}
    kind = draw(st.sampled_from([None, "matchAttribute", "distinctAttribute"]))
    if kind:
        attr = draw(st.sampled_from([f"{DRIVER}/numa", f"{DRIVER}/links", "derived/key"]))
        if attr == "derived/key":
            for r in requests:
                for sub in r.get("firstAvailable", [r.get("exactly")]):
                    sub.setdefault(
                        "derivedAttributes",
                        [{"name": "derived/key", "expression": draw(st.sampled_from(DERIVED))}],
                    )
        devices_spec["constraints"] = [{kind: attr}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"c{index}", "namespace": "default"},
        "spec": {"devices": devices_spec},
    }


@st.composite
def existing(draw: st.DrawFn, node_slice: dict[str, Any]) -> dict[str, Any]:
    """A claim allocated earlier on node n0: a dedicated device, or a share of a device
    without capacities (so no consumedCapacity is needed)."""
    spec = node_slice["spec"]
    dev = draw(st.sampled_from(spec["devices"]))
    result: dict[str, Any] = {
        "request": "r0",
        "driver": DRIVER,
        "pool": spec["pool"]["name"],
        "device": dev["name"],
    }
    if dev.get("allowMultipleAllocations"):
        result["shareID"] = "00000000-0000-4000-8000-000000000001"
        if "capacity" in dev:
            result["consumedCapacity"] = {"memory": "10Gi"}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "old", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {"allocation": {"devices": {"results": [result]}}},
    }


@st.composite
def scenario(draw: st.DrawFn, max_claims: int = 3) -> tuple[list[dict[str, Any]], list[str]]:
    """(objects, names of the claims to allocate) for node n0."""
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    ]
    total = draw(st.integers(1, 12))
    nodes = draw(st.integers(1, 3))
    with_counters = draw(st.booleans())
    per_node = [total // nodes + (1 if n < total % nodes else 0) for n in range(nodes)]
    for n, count in enumerate(per_node):
        devs = draw(devices(n, count, with_counters))
        spec: dict[str, Any] = {
            "driver": DRIVER,
            "nodeName": f"n{n}",
            "pool": {"name": f"n{n}", "generation": 1, "resourceSliceCount": 2 if with_counters else 1},
            "devices": devs,
        }
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"n{n}-devices"},
                "spec": spec,
            }
        )
        if with_counters:
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"n{n}-counters"},
                    "spec": {
                        "driver": DRIVER,
                        "nodeName": f"n{n}",
                        "pool": {"name": f"n{n}", "generation": 1, "resourceSliceCount": 2},
                        "sharedCounters": [
                            {
                                "name": "chip",
                                "counters": {"mem": {"value": f"{draw(st.sampled_from([40, 80]))}Gi"}},
                            }
                        ],
                    },
                }
            )
    if draw(st.booleans()):
        objs.append(draw(existing(objs[1])))
    n_claims = draw(st.integers(1, max_claims))
    claims = [draw(claim(i)) for i in range(n_claims)]
    objs.extend(claims)
    return objs, [c["metadata"]["name"] for c in claims]
