"""Tests of the independent checker (`solver.check`), one per rule.

Each test starts from a small cluster written as YAML, builds an allocation by hand and
asserts the exact set of violation kinds: a correct allocation gives none, and each
deliberately broken allocation gives exactly the kind of the rule it breaks. The
allocations are written out literally (not produced by an allocator) so the checker is
tested on its own reading of the rules.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.check import KINDS, CheckFailed, Violation, check, check_or_raise
from dra_solver.errors import AllocationError
from dra_solver.gates import FeatureGates

NODE = "node-1"

BASE = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: a}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {zone: b}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel: {expression: 'device.driver == "nic.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: part}
spec:
  selectors:
  - cel: {expression: 'device.driver == "part.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga}
spec:
  selectors:
  - cel: {expression: 'device.driver == "fpga.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: vlan}
spec:
  selectors:
  - cel: {expression: 'device.driver == "net.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: image}
spec:
  selectors:
  - cel: {expression: 'device.driver == "cp.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: tainted}
spec:
  selectors:
  - cel: {expression: 'device.driver == "tainted.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: bound}
spec:
  selectors:
  - cel: {expression: 'device.driver == "bind.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
    attributes: {numa: {int: 0}, model: {string: a100}}
    capacity: {memory: {value: 80Gi}}
  - name: gpu-1
    attributes: {numa: {int: 0}, model: {string: a100}}
    capacity: {memory: {value: 80Gi}}
  - name: gpu-2
    attributes: {numa: {int: 1}, model: {string: h100}}
    capacity: {memory: {value: 80Gi}}
  - name: gpu-3
    attributes: {numa: {int: 1}, model: {string: h100}}
    capacity: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-2-gpu}
spec:
  driver: gpu.example.com
  pool: {name: node-2, generation: 1, resourceSliceCount: 1}
  nodeName: node-2
  devices:
  - name: gpu-0
    attributes: {numa: {int: 0}, model: {string: a100}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-nic}
spec:
  driver: nic.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: eth0
    allowMultipleAllocations: true
    attributes: {numa: {int: 0}}
    capacity:
      bandwidth:
        value: 10Gi
        requestPolicy: {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}}
      queues:
        value: "8"
        requestPolicy: {default: "1", validValues: ["1", "2", "4", "8"]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-part-counters}
spec:
  driver: part.example.com
  pool: {name: node-1-part, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: mem
    counters: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-part-devices}
spec:
  driver: part.example.com
  pool: {name: node-1-part, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: full
    consumesCounters: [{counterSet: mem, counters: {memory: {value: 80Gi}}}]
  - name: half-0
    consumesCounters: [{counterSet: mem, counters: {memory: {value: 40Gi}}}]
  - name: half-1
    consumesCounters: [{counterSet: mem, counters: {memory: {value: 40Gi}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: zone-a-fpga}
spec:
  driver: fpga.example.com
  pool: {name: zone-a, generation: 1, resourceSliceCount: 1}
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: zone, operator: In, values: [a]}]
  devices:
  - name: fpga-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: global-vlan}
spec:
  driver: net.example.com
  pool: {name: global, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices:
  - name: vlan-0
    allowMultipleAllocations: true
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: control-plane-images}
spec:
  driver: cp.example.com
  pool: {name: images, generation: 1, resourceSliceCount: 1}
  allNodes: true
  skipNodeOperations: true
  devices:
  - name: img-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-tainted}
spec:
  driver: tainted.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: t-0
    taints: [{key: maintenance, value: "true", effect: NoSchedule}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-bound}
spec:
  driver: bind.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: b-0
    bindsToNode: true
    bindingConditions: [attached]
    bindingFailureConditions: [failed]
"""

NODE_1_SELECTOR: dict[str, Any] = {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]
}
ZONE_A_SELECTOR: dict[str, Any] = {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
}


EXTRA_NIC = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-nic-b}
spec:
  driver: nic.example.com
  pool: {name: node-1-b, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: eth1
    allowMultipleAllocations: true
    capacity: {bandwidth: {value: 10Gi}}
"""
"""A second shared NIC whose capacity has no requestPolicy."""


# --- helpers -------------------------------------------------------------------------------


def cluster(extra: str = "") -> Cluster:
    """The base cluster, plus extra YAML documents (slices, existing claims)."""
    return Cluster.from_yaml(BASE + ("\n---\n" + extra if extra else ""))


def res(
    request: str, device: str, driver: str = "gpu.example.com", pool: str = NODE, **extra: Any
) -> dict[str, Any]:
    """One DeviceRequestAllocationResult in wire form."""
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


def nic(request: str, share: str, **consumed: str) -> dict[str, Any]:
    """A share of the multi-allocatable eth0 (default: bandwidth 1Gi, queues 1)."""
    used = {"bandwidth": "1Gi", "queues": "1", **consumed}
    return res(request, "eth0", driver="nic.example.com", shareID=share, consumedCapacity=used)


def part(request: str, device: str) -> dict[str, Any]:
    """A partition of the counter-sharing pool."""
    return res(request, device, driver="part.example.com", pool="node-1-part")


def claim(
    name: str,
    requests: list[dict[str, Any]],
    results: list[dict[str, Any]] | None,
    *,
    constraints: list[dict[str, Any]] | None = None,
    node_selector: dict[str, Any] | None = NODE_1_SELECTOR,
    namespace: str = "default",
) -> ResourceClaim:
    """A claim (spec from `requests`) whose status.allocation holds `results`."""
    spec: dict[str, Any] = {"devices": {"requests": requests}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    doc: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    if results is not None:
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if node_selector is not None:
            allocation["nodeSelector"] = node_selector
        doc["status"] = {"allocation": allocation}
    return ResourceClaim.model_validate(doc)


def as_yaml(c: ResourceClaim) -> str:
    return yaml.safe_dump(c.dump())


def exactly(name: str, class_name: str = "gpu", **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": class_name, **fields}}


def kinds(violations: list[Violation]) -> set[str]:
    return {v.kind for v in violations}


def run(
    c: ResourceClaim | list[ResourceClaim], extra: str = "", node: str | None = NODE, **gates: bool
) -> set[str]:
    """Kinds of violations of the allocation(s) `c` against the base cluster plus `extra`."""
    claims = c if isinstance(c, list) else [c]
    return kinds(check(cluster(extra), claims, node=node, gates=FeatureGates.of(gates)))


def existing(name: str, results: list[dict[str, Any]], requests: list[dict[str, Any]] | None = None) -> str:
    """YAML of an already-allocated claim (devices in use)."""
    reqs = requests or [exactly(r["request"].split("/")[0]) for r in results]
    unique = list({r["name"]: r for r in reqs}.values())
    return as_yaml(claim(name, unique, results))


# --- correct allocations -------------------------------------------------------------------


def test_correct_allocation_has_no_violations() -> None:
    c = claim(
        "c",
        [exactly("gpu", count=2), exactly("net", "nic", capacity={"requests": {"bandwidth": "2500Mi"}})],
        [res("gpu", "gpu-0"), res("gpu", "gpu-1"), nic("net", "s-1", bandwidth="3Gi")],
    )
    assert check(cluster(), [c], node=NODE) == []


def test_correct_allocation_with_every_feature_has_no_violations() -> None:
    extra = existing("old", [nic("net", "s-0", bandwidth="4Gi")], [exactly("net", "nic")])
    c = claim(
        "c",
        [
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "count": 3},
                    {"name": "small", "deviceClassName": "gpu", "count": 2},
                ],
            },
            exactly("net", "nic", capacity={"requests": {"bandwidth": "5Gi", "queues": "3"}}),
            exactly("part", "part"),
            exactly("t", "tainted", tolerations=[{"key": "maintenance", "operator": "Exists"}]),
        ],
        [
            res("gpu/small", "gpu-2"),
            res("gpu/small", "gpu-3"),
            nic("net", "s-1", bandwidth="5Gi", queues="4"),
            res("part", "half-0", driver="part.example.com", pool="node-1-part"),
            res(
                "t",
                "t-0",
                driver="tainted.example.com",
                tolerations=[{"key": "maintenance", "operator": "Exists"}],
            ),
        ],
        constraints=[{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}],
    )
    # an admin claim of the same call may see every GPU, including those just given to c
    admin = claim(
        "admin",
        [exactly("mon", adminAccess=True, allocationMode="All")],
        [res("mon", f"gpu-{i}", adminAccess=True) for i in range(4)],
    )
    assert check(cluster(extra), [c, admin], node=NODE) == []


def test_all_nodes_device_without_node_needs_no_node_selector() -> None:
    c = claim(
        "c",
        [exactly("v", "vlan")],
        [res("v", "vlan-0", driver="net.example.com", pool="global", shareID="s-1")],
        node_selector=None,
    )
    assert run(c, node=None) == set()


def test_several_claims_checked_together() -> None:
    a = claim("a", [exactly("gpu")], [res("gpu", "gpu-0")])
    b = claim("b", [exactly("gpu")], [res("gpu", "gpu-1")])
    assert run([a, b]) == set()


# --- unknown-device --------------------------------------------------------------------------


def test_unknown_device_that_no_slice_publishes() -> None:
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-9")])) == {"unknown-device"}


def test_unknown_device_on_another_node_is_not_visible() -> None:
    c = claim("c", [exactly("gpu")], [res("gpu", "gpu-0", pool="node-2")])
    assert run(c) == {"unknown-device"}


def test_unknown_device_from_incomplete_pool() -> None:
    extra = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-extra-a}
spec:
  driver: gpu.example.com
  pool: {name: node-1-extra, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices: [{name: x-0}]
"""
    c = claim("c", [exactly("gpu")], [res("gpu", "x-0", pool="node-1-extra")])
    violations = check(cluster(extra), [c], node=NODE)
    assert kinds(violations) == {"unknown-device"}
    assert "incomplete" in violations[0].message


def test_unknown_device_from_older_generation_newest_generation_wins() -> None:
    extra = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu-v2}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 2, resourceSliceCount: 1}
  nodeName: node-1
  devices: [{name: gpu-new}]
"""
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-new")]), extra) == set()
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0")]), extra) == {"unknown-device"}


# --- request -----------------------------------------------------------------------------------


def test_request_result_names_a_request_that_does_not_exist() -> None:
    c = claim("c", [exactly("gpu")], [res("gpu", "gpu-0"), res("other", "gpu-1")])
    assert run(c) == {"request"}


def test_request_results_from_two_subrequests_of_one_request() -> None:
    c = claim(
        "c",
        [
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": "gpu"},
                    {"name": "b", "deviceClassName": "gpu"},
                ],
            }
        ],
        [res("gpu/a", "gpu-0"), res("gpu/b", "gpu-1")],
    )
    assert run(c) == {"request"}


# --- count -------------------------------------------------------------------------------------


def test_count_exact_count_needs_exactly_count_devices() -> None:
    assert run(claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0")])) == {"count"}


def test_count_all_mode_must_take_every_matching_device() -> None:
    req = [exactly("gpu", allocationMode="All")]
    assert run(claim("c", req, [res("gpu", f"gpu-{i}") for i in range(4)])) == set()
    assert run(claim("c", req, [res("gpu", f"gpu-{i}") for i in range(3)])) == {"count"}


def test_count_all_mode_keeps_devices_whose_room_existing_claims_took() -> None:
    """A shared device whose remaining capacity cannot fit the request stays in the All-set
    (upstream since kubernetes#140769, docs/semantics.md, "allocationMode All"): leaving it out
    breaks `count`, taking it breaks `capacity` — no plan passes."""
    extra = existing("old", [nic("net", "s-0", bandwidth="8Gi")], [exactly("net", "nic")]) + EXTRA_NIC
    req = [exactly("net", "nic", allocationMode="All", capacity={"requests": {"bandwidth": "4Gi"}})]
    eth1 = res(
        "net",
        "eth1",
        driver="nic.example.com",
        pool="node-1-b",
        shareID="s-1",
        consumedCapacity={"bandwidth": "4Gi"},
    )
    assert run(claim("c", req, [eth1]), extra) == {"count"}  # eth0 (2Gi left) is missing
    with_eth0 = claim("c", req, [eth1, nic("net", "s-2", bandwidth="4Gi")])
    assert run(with_eth0, extra) == {"capacity"}
    assert run(with_eth0, EXTRA_NIC) == set()  # without the existing share: both fit


def test_count_all_mode_with_a_device_existing_claims_filled() -> None:
    extra = existing("old", [nic("net", "s-0", bandwidth="8Gi")], [exactly("net", "nic")])
    req = [exactly("net", "nic", allocationMode="All", capacity={"requests": {"bandwidth": "4Gi"}})]
    assert run(claim("c", req, [nic("net", "s-2", bandwidth="4Gi")]), extra) == {"capacity"}


def test_count_request_without_results() -> None:
    assert run(claim("c", [exactly("gpu"), exactly("more")], [res("gpu", "gpu-0")])) == {"count"}


# --- duplicate ---------------------------------------------------------------------------------


def test_duplicate_device_twice_in_one_request() -> None:
    assert run(claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0"), res("gpu", "gpu-0")])) == {
        "duplicate"
    }


def test_duplicate_shared_device_twice_in_one_request() -> None:
    c = claim("c", [exactly("net", "nic", count=2)], [nic("net", "s-1"), nic("net", "s-2")])
    assert run(c) == {"duplicate"}


# --- selector ----------------------------------------------------------------------------------


def test_selector_class_selector_rejects_device() -> None:
    c = claim("c", [exactly("gpu")], [part("gpu", "half-0")])
    assert run(c) == {"selector"}


def test_selector_request_selector_rejects_device() -> None:
    req = [
        exactly(
            "gpu", selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
        )
    ]
    assert run(claim("c", req, [res("gpu", "gpu-2")])) == set()
    assert run(claim("c", req, [res("gpu", "gpu-0")])) == {"selector"}


def test_selector_cel_runtime_error_is_a_violation_not_an_exception() -> None:
    expr = 'device.attributes["gpu.example.com"].missing == 1'
    violations = check(
        cluster(),
        [claim("c", [exactly("gpu", selectors=[{"cel": {"expression": expr}}])], [res("gpu", "gpu-0")])],
        node=NODE,
    )
    assert kinds(violations) == {"selector"}
    assert expr in violations[0].message and "gpu-0" in violations[0].message
    # the error is the one violation: `selects` says "CEL error" by value (None), so no
    # second one reads `does not match: CEL error` (it was a text compared with a string)
    assert len(violations) == 1 and "does not match" not in violations[0].message


def test_selector_capacity_request_the_device_lacks() -> None:
    req = [exactly("gpu", capacity={"requests": {"power": "1"}})]
    assert run(claim("c", req, [res("gpu", "gpu-0")])) == {"selector"}


# --- busy --------------------------------------------------------------------------------------


def test_busy_dedicated_device_already_allocated() -> None:
    extra = existing("old", [res("gpu", "gpu-0")])
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0")]), extra) == {"busy"}


def test_busy_dedicated_device_in_two_new_claims() -> None:
    a = claim("a", [exactly("gpu")], [res("gpu", "gpu-0")])
    b = claim("b", [exactly("gpu")], [res("gpu", "gpu-0")])
    assert run([a, b]) == {"busy"}


def test_busy_admin_access_results_are_exempt() -> None:
    extra = existing("old", [res("gpu", "gpu-0")])
    admin = claim("c", [exactly("gpu", adminAccess=True)], [res("gpu", "gpu-0", adminAccess=True)])
    assert run(admin, extra) == set()
    # an existing admin result does not make the device busy either
    extra_admin = as_yaml(
        claim("old", [exactly("gpu", adminAccess=True)], [res("gpu", "gpu-0", adminAccess=True)])
    )
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0")]), extra_admin) == set()


def test_busy_shared_device_with_a_dedicated_allocation() -> None:
    old = res("net", "eth0", driver="nic.example.com")
    extra = existing("old", [old], [exactly("net", "nic")])
    assert run(claim("c", [exactly("net", "nic")], [nic("net", "s-1")]), extra) == {"busy"}


def test_busy_the_allocation_being_checked_is_not_its_own_user() -> None:
    """A claim in `allocated` that the cluster already holds allocated is the new state, not in use."""
    c = claim("c", [exactly("gpu")], [res("gpu", "gpu-0")])
    assert run(c, as_yaml(c)) == set()


# --- capacity ----------------------------------------------------------------------------------


def test_capacity_shared_device_over_committed_with_existing_claims() -> None:
    extra = existing("old", [nic("net", "s-0", bandwidth="7Gi")], [exactly("net", "nic")])
    req = [exactly("net", "nic", capacity={"requests": {"bandwidth": "3Gi"}})]
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="3Gi")]), extra) == set()
    req = [exactly("net", "nic", capacity={"requests": {"bandwidth": "4Gi"}})]
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="4Gi")]), extra) == {"capacity"}


def test_capacity_shared_device_over_committed_within_the_call() -> None:
    req = [exactly("net", "nic", capacity={"requests": {"queues": "8"}})]
    a = claim("a", req, [nic("net", "s-1", queues="8")])
    b = claim("b", req, [nic("net", "s-2", queues="8")])
    assert run([a, b]) == {"capacity"}


def test_capacity_new_admin_shares_count_within_the_call() -> None:
    req = [exactly("net", "nic", adminAccess=True, capacity={"requests": {"queues": "8"}})]
    a = claim("a", req, [nic("net", "s-1", queues="8") | {"adminAccess": True}])
    b = claim("b", req, [nic("net", "s-2", queues="8") | {"adminAccess": True}])
    assert run([a, b]) == {"capacity"}


def test_capacity_request_larger_than_a_dedicated_device() -> None:
    req = [exactly("gpu", capacity={"requests": {"memory": "100Gi"}})]
    assert run(claim("c", req, [res("gpu", "gpu-0")])) == {"capacity"}
    req = [exactly("gpu", capacity={"requests": {"memory": "40Gi"}})]
    assert run(claim("c", req, [res("gpu", "gpu-0")])) == set()


# --- rounding ----------------------------------------------------------------------------------


def test_rounding_valid_range_rounds_up_in_steps() -> None:
    req = [exactly("net", "nic", capacity={"requests": {"bandwidth": "2500Mi"}})]
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="3Gi")])) == set()
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="2500Mi")])) == {"rounding"}


def test_rounding_below_min_gives_min() -> None:
    req = [exactly("net", "nic", capacity={"requests": {"bandwidth": "1Mi"}})]
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="1Gi")])) == set()
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="1Mi")])) == {"rounding"}


def test_rounding_valid_values_take_the_smallest_value_at_least_the_request() -> None:
    req = [exactly("net", "nic", capacity={"requests": {"queues": "3"}})]
    assert run(claim("c", req, [nic("net", "s-1", queues="4")])) == set()
    assert run(claim("c", req, [nic("net", "s-1", queues="8")])) == {"rounding"}


def test_rounding_above_max_is_not_allowed() -> None:
    req = [exactly("net", "nic", capacity={"requests": {"bandwidth": "9Gi"}})]
    assert run(claim("c", req, [nic("net", "s-1", bandwidth="9Gi")])) == {"rounding"}


def test_rounding_unrequested_capacity_consumes_the_default() -> None:
    c = claim("c", [exactly("net", "nic")], [nic("net", "s-1", bandwidth="10Gi")])
    assert run(c) == {"rounding"}


def test_rounding_unrequested_capacity_without_policy_consumes_everything() -> None:
    extra = EXTRA_NIC

    def share(amount: str) -> dict[str, Any]:
        return res(
            "net",
            "eth1",
            driver="nic.example.com",
            pool="node-1-b",
            shareID="s-1",
            consumedCapacity={"bandwidth": amount},
        )

    assert run(claim("c", [exactly("net", "nic")], [share("10Gi")]), extra) == set()
    assert run(claim("c", [exactly("net", "nic")], [share("1Gi")]), extra) == {"rounding"}


def test_rounding_consumed_capacity_lists_every_capacity() -> None:
    missing = res(
        "net", "eth0", driver="nic.example.com", shareID="s-1", consumedCapacity={"bandwidth": "1Gi"}
    )
    assert run(claim("c", [exactly("net", "nic")], [missing])) == {"rounding"}
    extra_entry = nic("net", "s-1", colour="1")
    assert run(claim("c", [exactly("net", "nic")], [extra_entry])) == {"rounding"}


# --- share -------------------------------------------------------------------------------------


def test_share_multi_allocatable_result_needs_share_id() -> None:
    r = nic("net", "s-1")
    del r["shareID"]
    assert run(claim("c", [exactly("net", "nic")], [r])) == {"share"}


def test_share_multi_allocatable_result_needs_consumed_capacity() -> None:
    r = res("net", "eth0", driver="nic.example.com", shareID="s-1")
    assert run(claim("c", [exactly("net", "nic")], [r])) == {"share"}


def test_share_dedicated_result_must_not_carry_share_fields() -> None:
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0", shareID="s-1")])) == {"share"}


def test_share_ids_are_unique_per_device() -> None:
    extra = existing("old", [nic("net", "s-1")], [exactly("net", "nic")])
    assert run(claim("c", [exactly("net", "nic")], [nic("net", "s-1")]), extra) == {"share"}


# --- counters ----------------------------------------------------------------------------------


def test_counters_two_halves_fit_the_counter() -> None:
    c = claim("c", [exactly("p", "part", count=2)], [part("p", "half-0"), part("p", "half-1")])
    assert run(c) == set()


def test_counters_exceeded_with_existing_allocation() -> None:
    extra = existing("old", [part("p", "full")], [exactly("p", "part")])
    assert run(claim("c", [exactly("p", "part")], [part("p", "half-0")]), extra) == {"counters"}


def test_counters_exceeded_within_one_claim() -> None:
    c = claim("c", [exactly("p", "part", count=2)], [part("p", "full"), part("p", "half-1")])
    assert run(c) == {"counters"}


FRACTIONS = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-frac}
spec:
  driver: part.example.com
  pool: {name: node-1-frac, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  sharedCounters:
  - name: mem
    counters: {units: {value: "2"}}
  devices:
  - name: whole
    consumesCounters: [{counterSet: mem, counters: {units: {value: "1"}}}]
  - name: half
    consumesCounters: [{counterSet: mem, counters: {units: {value: 500m}}}]
  - name: quarter-0
    consumesCounters: [{counterSet: mem, counters: {units: {value: 250m}}}]
  - name: quarter-1
    consumesCounters: [{counterSet: mem, counters: {units: {value: 250m}}}]
  - name: third
    consumesCounters: [{counterSet: mem, counters: {units: {value: 333m}}}]
"""


def frac_part(request: str, device: str) -> dict[str, Any]:
    return res(request, device, driver="part.example.com", pool="node-1-frac")


def test_counters_sum_whole_and_fractional_amounts_exactly() -> None:
    """Whole amounts and fractions add up exactly: 1 + 1/2 + 1/4 + 1/4 is the counter's 2."""
    devices = ["whole", "half", "quarter-0", "quarter-1"]
    c = claim("c", [exactly("p", "part", count=4)], [frac_part("p", d) for d in devices])
    assert run(c, FRACTIONS) == set()


def test_counters_exceeded_by_a_fraction_names_the_exact_amount() -> None:
    devices = ["whole", "half", "quarter-0", "third"]
    c = claim("c", [exactly("p", "part", count=4)], [frac_part("p", d) for d in devices])
    violations = check(cluster(FRACTIONS), [c], node=NODE)
    assert [v.kind for v in violations] == ["counters"]
    assert "allocated devices consume 2083m > 2 (placing" in violations[0].message


# --- match / distinct --------------------------------------------------------------------------


def test_match_attribute_requires_equal_values() -> None:
    con = [{"matchAttribute": "gpu.example.com/numa"}]
    ok = claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0"), res("gpu", "gpu-1")], constraints=con)
    bad = claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0"), res("gpu", "gpu-2")], constraints=con)
    assert run(ok) == set()
    assert run(bad) == {"match"}


def test_match_attribute_missing_on_a_device() -> None:
    con = [{"matchAttribute": "gpu.example.com/numa"}]
    c = claim(
        "c",
        [exactly("gpu"), exactly("net", "nic")],
        [res("gpu", "gpu-0"), nic("net", "s-1")],
        constraints=con,
    )
    assert run(c) == {"match"}


def test_match_attribute_only_covers_the_named_requests() -> None:
    con = [{"requests": ["a"], "matchAttribute": "gpu.example.com/numa"}]
    c = claim("c", [exactly("a"), exactly("b")], [res("a", "gpu-0"), res("b", "gpu-2")], constraints=con)
    assert run(c) == set()


def test_distinct_attribute_requires_pairwise_different_values() -> None:
    con = [{"distinctAttribute": "gpu.example.com/numa"}]
    ok = claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0"), res("gpu", "gpu-2")], constraints=con)
    bad = claim(
        "c",
        [exactly("gpu", count=3)],
        [res("gpu", "gpu-0"), res("gpu", "gpu-2"), res("gpu", "gpu-1")],
        constraints=con,
    )
    assert run(ok) == set()
    assert run(bad) == {"distinct"}


def test_distinct_attribute_catches_the_same_shared_device_twice() -> None:
    con = [{"distinctAttribute": "nic.example.com/numa"}]
    c = claim(
        "c", [exactly("a", "nic"), exactly("b", "nic")], [nic("a", "s-1"), nic("b", "s-2")], constraints=con
    )
    assert run(c) == {"distinct"}
    assert (
        run(claim("c", [exactly("a", "nic"), exactly("b", "nic")], [nic("a", "s-1"), nic("b", "s-2")]))
        == set()
    )


def test_match_derived_attributes_bridge_different_attribute_names() -> None:
    """KEP-6080: derived attributes of the request that placed the device are matched."""
    reqs = [
        exactly(
            "gpu",
            derivedAttributes=[
                {"name": "derived/numa_node", "expression": "device.attributes['gpu.example.com'].numa"}
            ],
        ),
        exactly(
            "net",
            "nic",
            derivedAttributes=[
                {"name": "derived/numa_node", "expression": "device.attributes['nic.example.com'].numa"}
            ],
        ),
    ]
    con = [{"requests": ["gpu", "net"], "matchAttribute": "derived/numa_node"}]
    ok = claim("c", reqs, [res("gpu", "gpu-0"), nic("net", "s-1")], constraints=con)
    bad = claim("c", reqs, [res("gpu", "gpu-2"), nic("net", "s-1")], constraints=con)
    assert run(ok, DRADerivedAttributes=True) == set()
    assert run(bad, DRADerivedAttributes=True) == {"match"}


def test_match_derived_attribute_shadows_the_static_attribute() -> None:
    reqs = [exactly("gpu", count=2, derivedAttributes=[{"name": "gpu.example.com/numa", "expression": "0"}])]
    c = claim(
        "c",
        reqs,
        [res("gpu", "gpu-0"), res("gpu", "gpu-2")],
        constraints=[{"matchAttribute": "gpu.example.com/numa"}],
    )
    assert run(c, DRADerivedAttributes=True) == set()
    assert run(c, DRADerivedAttributes=False) == {"match"}  # gate off: derived attributes are ignored


def test_match_list_values_need_a_common_element() -> None:
    """KEP-5491 via derived lists: match = non-empty intersection, distinct = disjoint."""
    expr = "[device.attributes['gpu.example.com'].numa, 7]"
    reqs = [exactly("gpu", count=2, derivedAttributes=[{"name": "derived/groups", "expression": expr}])]
    results = [res("gpu", "gpu-0"), res("gpu", "gpu-2")]
    match = claim("c", reqs, results, constraints=[{"matchAttribute": "derived/groups"}])
    distinct = claim("c", reqs, results, constraints=[{"distinctAttribute": "derived/groups"}])
    assert run(match, DRADerivedAttributes=True) == set()
    assert run(distinct, DRADerivedAttributes=True) == {"distinct"}


# --- taint -------------------------------------------------------------------------------------


def test_taint_not_tolerated() -> None:
    c = claim("c", [exactly("t", "tainted")], [res("t", "t-0", driver="tainted.example.com")])
    assert run(c) == {"taint"}
    assert run(c, DRADeviceTaints=False) == set()
    tol = [{"key": "maintenance", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    ok = claim(
        "c",
        [exactly("t", "tainted", tolerations=tol)],
        [res("t", "t-0", driver="tainted.example.com", tolerations=tol)],
    )
    assert run(ok) == set()


# --- gate --------------------------------------------------------------------------------------


def test_gate_capacity_request_with_consumable_capacity_off() -> None:
    req = [exactly("gpu", capacity={"requests": {"memory": "40Gi"}})]
    assert run(claim("c", req, [res("gpu", "gpu-0")]), DRAConsumableCapacity=False) == {"gate"}


def test_gate_first_available_with_prioritized_list_off() -> None:
    req = [{"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]}]
    assert run(claim("c", req, [res("gpu/a", "gpu-0")]), DRAPrioritizedList=False) == {"gate"}


def test_gate_admin_access_off() -> None:
    c = claim("c", [exactly("gpu", adminAccess=True)], [res("gpu", "gpu-0", adminAccess=True)])
    assert run(c, DRAAdminAccess=False) == {"gate"}


def test_gate_counters_with_partitionable_devices_off() -> None:
    assert run(claim("c", [exactly("p", "part")], [part("p", "half-0")]), DRAPartitionableDevices=False) == {
        "gate"
    }


def test_gate_skip_node_operations_slice_with_optional_node_preparation_off() -> None:
    c = claim(
        "c",
        [exactly("i", "image")],
        [res("i", "img-0", driver="cp.example.com", pool="images")],
        node_selector=None,
    )
    assert run(c) == {"gate"}


def test_gate_binding_conditions_off() -> None:
    r = res(
        "b",
        "b-0",
        driver="bind.example.com",
        bindingConditions=["attached"],
        bindingFailureConditions=["failed"],
    )
    c = claim("c", [exactly("b", "bound")], [r])
    assert run(c) == set()
    assert run(c, DRADeviceBindingConditions=False) == {"gate"}


# --- skip-node-operations ----------------------------------------------------------------------


def test_skip_node_operations_copied_from_the_slice() -> None:
    base = res("i", "img-0", driver="cp.example.com", pool="images")
    good = claim("c", [exactly("i", "image")], [{**base, "skipNodeOperations": True}], node_selector=None)
    bad = claim("c", [exactly("i", "image")], [base], node_selector=None)
    assert run(good, DRAOptionalNodePreparation=True) == set()
    assert run(bad, DRAOptionalNodePreparation=True) == {"skip-node-operations"}
    wrong = claim("c", [exactly("gpu")], [res("gpu", "gpu-0", skipNodeOperations=True)])
    assert run(wrong, DRAOptionalNodePreparation=True) == {"skip-node-operations"}


# --- node-selector -----------------------------------------------------------------------------


def test_node_selector_node_local_device_selects_exactly_the_node() -> None:
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0")], node_selector=None)) == {"node-selector"}
    other = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}
        ]
    }
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0")], node_selector=other)) == {"node-selector"}


def test_node_selector_of_a_selector_slice_is_its_term() -> None:
    r = res("f", "fpga-0", driver="fpga.example.com", pool="zone-a")
    assert run(claim("c", [exactly("f", "fpga")], [r], node_selector=ZONE_A_SELECTOR)) == set()
    assert run(claim("c", [exactly("f", "fpga")], [r], node_selector=None)) == {"node-selector"}
    assert run(claim("c", [exactly("f", "fpga")], [r], node_selector=ZONE_A_SELECTOR), node="node-2") == {
        "unknown-device"
    }


def test_node_selector_all_nodes_devices_need_none() -> None:
    r = res("v", "vlan-0", driver="net.example.com", pool="global", shareID="s-1")
    assert run(claim("c", [exactly("v", "vlan")], [r], node_selector=NODE_1_SELECTOR)) == {"node-selector"}


# --- admin -------------------------------------------------------------------------------------


def test_admin_result_for_a_request_without_admin_access() -> None:
    assert run(claim("c", [exactly("gpu")], [res("gpu", "gpu-0", adminAccess=True)])) == {"admin"}


def test_admin_result_missing_for_an_admin_request() -> None:
    assert run(claim("c", [exactly("gpu", adminAccess=True)], [res("gpu", "gpu-0")])) == {"admin"}


# --- limit -------------------------------------------------------------------------------------


def test_limit_more_than_32_results() -> None:
    devices = "\n".join(f"  - name: m-{i}" for i in range(33))
    extra = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node-1-many}}
spec:
  driver: gpu.example.com
  pool: {{name: node-1-many, generation: 1, resourceSliceCount: 1}}
  nodeName: node-1
  devices:
{devices}
"""
    results = [res("gpu", f"m-{i}", pool="node-1-many") for i in range(33)]
    assert run(claim("c", [exactly("gpu", count=33)], results), extra) == {"limit"}


# --- API ---------------------------------------------------------------------------------------


def test_every_kind_is_documented() -> None:
    """Each kind is unique and docs/semantics.md names it (so a new rule gets documented)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "semantics.md").read_text()
    assert len(KINDS) == len(set(KINDS))
    assert [k for k in KINDS if f"`{k}`" not in text] == []


def test_check_reports_every_violation_not_only_the_first() -> None:
    extra = existing("old", [res("gpu", "gpu-0")])
    c = claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0"), res("gpu", "gpu-9")], node_selector=None)
    assert run(c, extra) == {"busy", "unknown-device"}


def test_violation_messages_name_claim_request_and_device() -> None:
    extra = existing("old", [res("gpu", "gpu-0")])
    (v,) = check(cluster(extra), [claim("c", [exactly("gpu")], [res("gpu", "gpu-0")])], node=NODE)
    assert (v.claim, v.request, v.kind) == ("default/c", "gpu", "busy")
    assert "default/c" in v.message and "gpu" in v.message and "gpu.example.com/node-1/gpu-0" in v.message


def test_check_or_raise_raises_an_allocation_error_listing_violations() -> None:
    c = claim("c", [exactly("gpu", count=2)], [res("gpu", "gpu-0")])
    with pytest.raises(AllocationError) as info:
        check_or_raise(cluster(), [c], node=NODE)
    assert isinstance(info.value, CheckFailed)
    assert [v.kind for v in info.value.violations] == ["count"]
    assert "count" in str(info.value)
    check_or_raise(cluster(), [claim("c", [exactly("gpu")], [res("gpu", "gpu-0")])], node=NODE)


def test_inputs_are_not_mutated() -> None:
    extra = existing("old", [nic("net", "s-0", bandwidth="4Gi")], [exactly("net", "nic")])
    cl = cluster(extra)
    c = claim(
        "c",
        [exactly("gpu", count=2), exactly("net", "nic", capacity={"requests": {"bandwidth": "9Gi"}})],
        [res("gpu", "gpu-0"), res("gpu", "gpu-0"), nic("net", "s-0", bandwidth="9Gi")],
        constraints=[{"distinctAttribute": "gpu.example.com/numa"}],
    )
    before_cluster = [o.dump() for o in (*cl.slices, *cl.classes.values(), *cl.claims.values())]
    before_claim = copy.deepcopy(c.dump())
    assert check(cl, [c], node=NODE)  # plenty of violations
    assert [o.dump() for o in (*cl.slices, *cl.classes.values(), *cl.claims.values())] == before_cluster
    assert c.dump() == before_claim


# --- more edges ----------------------------------------------------------------------------------


def test_selector_cel_compile_error_is_a_violation_not_an_exception() -> None:
    req = [exactly("gpu", selectors=[{"cel": {"expression": "device.driver =="}}])]
    assert run(claim("c", req, [res("gpu", "gpu-0")])) == {"selector"}


def test_selector_derived_attribute_runtime_error_is_a_violation() -> None:
    """KEP-6080: a runtime error of a derived attribute aborts; the checker reports it."""
    derived = [{"name": "derived/x", "expression": "device.attributes['gpu.example.com'].nope"}]
    c = claim(
        "c",
        [exactly("gpu", derivedAttributes=derived)],
        [res("gpu", "gpu-0")],
        constraints=[{"matchAttribute": "derived/x"}],
    )
    assert run(c, DRADerivedAttributes=True) == {"selector"}


def test_busy_dedicated_device_in_two_requests_of_one_claim() -> None:
    c = claim("c", [exactly("a"), exactly("b")], [res("a", "gpu-0"), res("b", "gpu-0")])
    assert run(c) == {"busy"}


def test_count_all_mode_fails_with_an_incomplete_pool_on_the_node() -> None:
    extra = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-extra-a}
spec:
  driver: gpu.example.com
  pool: {name: node-1-extra, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices: [{name: x-0}]
"""
    c = claim("c", [exactly("gpu", allocationMode="All")], [res("gpu", f"gpu-{i}") for i in range(4)])
    assert run(c, extra) == {"count"}


def test_unknown_device_per_device_node_selection_of_another_node() -> None:
    extra = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: per-device}
spec:
  driver: gpu.example.com
  pool: {name: per-device, generation: 1, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  devices:
  - {name: p-1, nodeName: node-1}
  - {name: p-2, nodeName: node-2}
"""
    assert run(claim("c", [exactly("gpu")], [res("gpu", "p-1", pool="per-device")]), extra) == set()
    assert run(claim("c", [exactly("gpu")], [res("gpu", "p-2", pool="per-device")]), extra) == {
        "unknown-device"
    }


def test_gate_partitionable_off_other_devices_of_the_pool_stay_usable() -> None:
    """Upstream: with the gate off the counter-set slice is ignored but the pool stays complete."""
    extra = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: mixed-devices}
spec:
  driver: part.example.com
  pool: {name: mixed, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: device-1
    consumesCounters: [{counterSet: set-1, counters: {memory: {value: 4Gi}}}]
  - name: device-2
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: mixed-counters}
spec:
  driver: part.example.com
  pool: {name: mixed, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters: [{name: set-1, counters: {memory: {value: 18Gi}}}]
"""

    def mixed(device: str) -> ResourceClaim:
        return claim("c", [exactly("p", "part")], [res("p", device, driver="part.example.com", pool="mixed")])

    assert run(mixed("device-2"), extra, DRAPartitionableDevices=False) == set()
    assert run(mixed("device-1"), extra, DRAPartitionableDevices=False) == {"gate"}
    assert run(mixed("device-1"), extra) == set()
