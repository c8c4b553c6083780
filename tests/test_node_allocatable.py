"""KEP-5517, DRA node allocatable resources: devices that add to a pod's node cpu and memory.

One test per rule (docs/semantics.md, "Node allocatable resources through devices"), with both
allocators where a plan is made: overhead per pod and per referencing container, a mapping per
device, the amounts of bound pods, the checker's own reading, the refusals of what is not
modelled, and the gate with its per-version defaults (`--kubernetes-version`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import device, device_class, resource_slice
from example_counts import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_solver import Cluster, allocate, plan
from dra_solver.api.models import Pod
from dra_solver.check import check_node_resources
from dra_solver.errors import InputError
from dra_solver.gates import FeatureGates
from dra_solver.problem.nodealloc import Footprint, FootprintBook
from dra_solver.problem.resources import pod_requests

ROOT = Path(__file__).resolve().parent.parent
TPU = ROOT / "docs" / "examples" / "tpu-node-allocatable.yaml"
ON = FeatureGates.of("DRANodeAllocatableResources=true")
ALLOCATORS = ("reference", "cpsat")
GI = 1024**3


def node(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def template(count: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "dev", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "d", "exactly": {"deviceClassName": "dev", "count": count}}]
                }
            }
        },
    }


def pod(name: str, cpu: str = "1", memory: str = "1Gi", refs: int = 1, **spec: Any) -> dict[str, Any]:
    containers = [
        {
            "name": f"c{i}",
            "resources": {"requests": {"cpu": cpu, "memory": memory}, "claims": [{"name": "dev"}]},
        }
        for i in range(refs)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "containers": containers,
            "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "dev"}],
            **spec,
        },
    }


def cluster(nar: dict[str, Any], *, pods: int = 4, count: int = 1, devices: int = 4, **kw: Any) -> Cluster:
    devs = [device(f"d{i}", nodeAllocatableResources=nar) for i in range(devices)]
    return Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice("node-1-devs", devs, node="node-1"),
            template(count),
            *[pod(f"p{i}", **kw) for i in range(pods)],
        ]
    )


def placed(c: Cluster, allocator: str, gates: FeatureGates = ON) -> int:
    return sum(p.placed for p in plan(c, allocator=allocator, feature_gates=gates).pods)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_overhead_per_pod_counts_against_node_memory(allocator: str) -> None:
    # 15Gi + 2Gi overhead per pod: three fit in 64Gi, not four.
    c = cluster({"memory": {"overhead": {"perPod": "2Gi"}}}, memory="15Gi")
    assert placed(c, allocator) == 3
    assert placed(c, allocator, FeatureGates()) == 4


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_overhead_per_container_counts_once_per_referencing_container(allocator: str) -> None:
    # Two containers of 7Gi each reference the claim: 14Gi + 2 x 1Gi = 16Gi per pod: four fit;
    # with 2Gi per container, 18Gi per pod: three.
    assert (
        placed(cluster({"memory": {"overhead": {"perContainer": "1Gi"}}}, memory="7Gi", refs=2), allocator)
        == 4
    )
    assert (
        placed(cluster({"memory": {"overhead": {"perContainer": "2Gi"}}}, memory="7Gi", refs=2), allocator)
        == 3
    )


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_mapping_counts_per_allocated_device(allocator: str) -> None:
    # A CPU driver's devices: 4 cpus each; two per pod = 8 cpus on top of 1: one pod in 16.
    c = cluster({"cpu": {"mapping": {"deviceMultiplier": "4"}}}, count=2, devices=8)
    assert placed(c, allocator) == 1


def test_init_container_share_counts_only_in_its_step() -> None:
    p = Pod.model_validate(
        {
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [{"name": "init", "resources": {"requests": {"memory": "4Gi"}}}],
                "containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}],
            },
        }
    )
    dra = Footprint(fixed={"memory": GI}, per_container={"init": {"memory": 2 * GI}})
    # max(app 1Gi, init 4Gi + 2Gi) + 1Gi for the whole pod.
    assert pod_requests(p, dra)["memory"] == 7 * GI


def test_bound_pod_status_amounts_take_node_room() -> None:
    nar = {"memory": {"overhead": {"perPod": "2Gi"}}}
    bound = pod("running", memory="40Gi", nodeName="node-1")
    bound["status"] = {
        "phase": "Running",
        "nodeAllocatableResourceClaimStatuses": [
            {
                "resourceClaimName": "x",
                "containers": ["c0"],
                "overhead": [{"name": "memory", "perPod": "20Gi"}],
            }
        ],
    }

    def fits(memory: str) -> int:
        c = Cluster.from_objects(
            [
                device_class("dev"),
                node("node-1", "16", "64Gi"),
                resource_slice("s", [device("d0", nodeAllocatableResources=nar)], node="node-1"),
                template(),
                bound,
                pod("new", memory=memory),
            ]
        )
        return sum(p.placed for p in plan(c, feature_gates=ON).pods if p.name == "default/new")

    # 64Gi - (40Gi + 20Gi) = 4Gi left; the new pod takes its memory + 2Gi.
    assert fits("2Gi") == 1
    assert fits("3Gi") == 0


def test_candidates_with_different_amounts_are_refused() -> None:
    devs = [
        device("a", nodeAllocatableResources={"memory": {"overhead": {"perPod": "1Gi"}}}),
        device("b", nodeAllocatableResources={"memory": {"overhead": {"perPod": "2Gi"}}}),
    ]
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice("s", devs, node="node-1"),
            template(),
            pod("p"),
        ]
    )
    with pytest.raises(InputError, match="candidate devices differ"):
        plan(c, feature_gates=ON)


def test_capacity_key_mapping_to_allocate_is_refused() -> None:
    nar = {"memory": {"mapping": {"capacityKey": "mem", "capacityMultiplier": "1"}}}
    with pytest.raises(InputError, match="capacityKey"):
        plan(cluster(nar), feature_gates=ON)


def test_136_shape_is_refused_with_the_gate_on() -> None:
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice(
                "s",
                [device("a", nodeAllocatableResourceMappings={"memory": {"allocationMultiplier": "1Gi"}})],
            ),
            template(),
            pod("p"),
        ]
    )
    with pytest.raises(InputError, match="1.36 alpha shape"):
        FootprintBook(c, ON).footprint(c.pod("default/p"))


def test_checker_counts_device_amounts_from_the_allocation() -> None:
    """A plan made with the gate off, checked with it on: the checker finds the overcommit."""
    c = Cluster.from_paths([TPU])
    off = plan(c, feature_gates=FeatureGates())
    assert sum(p.placed for p in off.pods) == 8
    placements = [(p.pod, p.node, frozenset()) for p in off.pods if p.placed and p.pod and p.node]
    claims = {cl.namespaced_name: cl for p in off.pods for cl in p.claims}
    assert check_node_resources(c, placements, FeatureGates(), claims) == []
    found = check_node_resources(c, placements, ON, claims)
    assert {v.kind for v in found} == {"node-resources"}
    assert all("overcommitted in memory" in v.message for v in found)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_tpu_example_places_three_per_node(allocator: str) -> None:
    out = plan(Cluster.from_paths([TPU]), allocator=allocator, feature_gates=ON)
    nodes = [p.node for p in out.pods if p.placed]
    assert sorted(nodes) == ["tpu-v6e-1"] * 3 + ["tpu-v6e-2"] * 3


def test_version_defaults() -> None:
    assert FeatureGates.of(None, "1.37").DRADeviceTaintRules is True
    assert FeatureGates.of(None, "1.36").DRADeviceTaintRules is False
    assert FeatureGates.of(None) == FeatureGates()
    assert FeatureGates.of(None, "1.36").DRANodeAllocatableResources is False
    with pytest.raises(InputError, match="not known"):
        FeatureGates.of(None, "1.35")
    with pytest.raises(InputError, match="do not exist in Kubernetes 1.36"):
        FeatureGates.of("DRADerivedAttributes=true", "1.36")
    assert FeatureGates.of("DRADeviceTaintRules=true", "1.36").DRADeviceTaintRules is True
    # KEP-5945's gate by the name upstream merged (docs/semantics.md, "KEP-5945 as merged upstream")
    assert FeatureGates.of("DRAOptionalNodeOperations=true").DRAOptionalNodePreparation is True
    with pytest.raises(InputError, match="do not exist in Kubernetes 1.36"):
        FeatureGates.of("DRAOptionalNodeOperations=true", "1.36")


def test_bound_pod_without_status_takes_its_devices_amounts() -> None:
    """A bound pod whose allocated claim holds a device with overhead, but no status (a plan's
    own output fed back): planner and checker both count the device's amounts."""
    nar = {"memory": {"overhead": {"perPod": "20Gi"}}}
    bound = pod("running", memory="40Gi", nodeName="node-1")
    bound["spec"]["resourceClaims"] = [{"name": "dev", "resourceClaimName": "held"}]
    bound["status"] = {"phase": "Running"}
    held = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "held", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": "dev"}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "d", "driver": "gpu.example.com", "pool": "s", "device": "d0"}]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "running", "uid": "uid-running"}],
        },
    }

    def placed_new(memory: str) -> int:
        c = Cluster.from_objects(
            [
                device_class("dev"),
                node("node-1", "16", "64Gi"),
                resource_slice(
                    "s", [device(f"d{i}", nodeAllocatableResources=nar) for i in range(2)], node="node-1"
                ),
                template(),
                held,
                bound,
                pod("new", memory=memory),
            ]
        )
        return sum(p.placed for p in plan(c, feature_gates=ON).pods if p.name == "default/new")

    # 64Gi - (40Gi + 20Gi) = 4Gi: a new pod of 1Gi + 20Gi does not fit; without the held
    # device's amount it would (64 - 40 = 24Gi).
    assert placed_new("1Gi") == 0
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice("s", [device("d0", nodeAllocatableResources=nar)], node="node-1"),
            held,
            {
                **bound,
                "spec": {
                    **bound["spec"],
                    "containers": [{"name": "c0", "resources": {"requests": {"memory": "50Gi"}}}],
                },
            },
        ]
    )
    found = check_node_resources(c, [], ON)
    assert [v.kind for v in found] == ["node-resources"]  # 50Gi + 20Gi > 64Gi
    assert check_node_resources(c, [], FeatureGates()) == []


def test_mapped_claim_shared_by_two_pods_is_refused() -> None:
    nar = {"cpu": {"mapping": {"deviceMultiplier": "2"}}}
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "cores", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": "dev"}}]}},
    }
    users = []
    for name in ("a", "b"):
        p = pod(name)
        p["spec"]["resourceClaims"] = [{"name": "dev", "resourceClaimName": "cores"}]
        users.append(p)
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice("s", [device("d0", nodeAllocatableResources=nar)], node="node-1"),
            shared,
            *users,
        ]
    )
    with pytest.raises(InputError, match="one pod per such claim"):
        plan(c, feature_gates=ON)


@pytest.mark.parametrize(("version", "placed_pods"), [("1.37", 0), ("1.36", 1)])
def test_device_taint_rules_apply_from_137(version: str, placed_pods: int) -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "maintenance", "effect": "NoSchedule"},
        },
    }
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice("s", [device("d0")], node="node-1"),
            template(),
            rule,
            pod("p"),
        ]
    )
    assert placed(c, "reference", FeatureGates.of(None, version)) == placed_pods


def test_allocate_counts_the_devices_amounts() -> None:
    """`allocate` (one pod) refuses the node the overhead overcommits, as `plan` does."""
    c = cluster({"memory": {"overhead": {"perPod": "2Gi"}}}, pods=1, memory="63Gi")
    out = allocate(c, pod="default/p0", node="node-1", feature_gates=ON)
    assert not out.allocated
    assert "Insufficient memory" in str(out.reason)
    assert allocate(c, pod="default/p0", node="node-1", feature_gates=FeatureGates()).allocated


def test_network_attached_candidates_count_in_the_comparison() -> None:
    """A request that may get a node-local device without the field or a device of an allNodes
    slice with it: the footprint depends on the choice, so it is refused."""
    nar = {"memory": {"overhead": {"perPod": "1Gi"}}}
    c = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            node("node-2", "16", "64Gi"),
            resource_slice("local", [device("plain")], node="node-1"),
            resource_slice("fabric", [device("f0", nodeAllocatableResources=nar)], node=None, allNodes=True),
            template(),
            pod("p"),
        ]
    )
    with pytest.raises(InputError, match="candidate devices differ"):
        plan(c, feature_gates=ON)
    alike = Cluster.from_objects(
        [
            device_class("dev"),
            node("node-1", "16", "64Gi"),
            resource_slice(
                "fabric",
                [device(f"f{i}", nodeAllocatableResources=nar) for i in range(2)],
                node=None,
                allNodes=True,
            ),
            template(),
            pod("p", memory="63Gi"),
            pod("q", memory="62Gi"),
        ]
    )
    # 63Gi + 1Gi fits alone; with q (62Gi + 1Gi) beside it, only one of them fits in 64Gi.
    assert placed(alike, "cpsat") == 1


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    per_pod=st.integers(0, 6),
    per_container=st.integers(0, 3),
    refs=st.integers(1, 3),
    memory=st.integers(1, 20),
    pods=st.integers(1, 6),
    allocator=st.sampled_from(ALLOCATORS),
)
def test_planner_and_checker_read_the_same_amounts(
    per_pod: int, per_container: int, refs: int, memory: int, pods: int, allocator: str
) -> None:
    """Every plan passes the checker's own reading of the amounts (`plan` raises otherwise), and
    places exactly the pods that fit by the KEP's sum: on one 64Gi node, pods of `refs`
    containers of `memory`Gi each, every one adding perPod + refs x perContainer."""
    nar: dict[str, Any] = {
        "memory": {"overhead": {"perPod": f"{per_pod}Gi", "perContainer": f"{per_container}Gi"}}
    }
    c = cluster(nar, pods=pods, memory=f"{memory}Gi", refs=refs, devices=6)
    each = refs * memory + per_pod + refs * per_container
    assert placed(c, allocator) == min(pods, 64 // each)
