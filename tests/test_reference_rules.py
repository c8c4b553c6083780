"""One test per rule of DESIGN.md, through the reference allocator (named for the rule).

The conformance cases pin upstream's exact choices; these tests pin each rule in isolation
on the smallest cluster that shows it.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import allocated, claim, device, device_class, request, resource_slice, result

from dra_solver import Cluster, allocate, plan
from dra_solver.errors import CelError, DRASolverError


def run(
    objects: list[dict[str, Any]],
    claims: list[str] | None = None,
    gates: str | None = None,
    node: str | None = "node-1",
    allocator: str = "reference",
):
    return allocate(
        Cluster.from_objects(objects), claims=claims, node=node, allocator=allocator, feature_gates=gates
    )


def devices_of(outcome, name: str) -> list[str]:
    alloc = outcome.allocation(name)
    assert alloc is not None, outcome.reason
    return [r.device for r in alloc.devices.results]


def gpus(n: int, **kw: Any) -> dict[str, Any]:
    return resource_slice("s1", [device(f"gpu-{i}", attrs={"index": i}, **kw) for i in range(n)])


def test_exact_count_takes_count_devices_in_candidate_order() -> None:
    out = run([device_class("gpu"), gpus(4), claim("c", [request("gpu", count=3)])])
    assert devices_of(out, "c") == ["gpu-0", "gpu-1", "gpu-2"]


def test_exact_count_more_than_available_is_unschedulable() -> None:
    out = run([device_class("gpu"), gpus(2), claim("c", [request("gpu", count=3)])])
    assert not out.allocated and "c" in out.reason and "gpu" in out.reason


def test_all_mode_takes_every_matching_device() -> None:
    out = run([device_class("gpu"), gpus(3), claim("c", [request("gpu", allocationMode="All")])])
    assert devices_of(out, "c") == ["gpu-0", "gpu-1", "gpu-2"]


def test_all_mode_fails_when_one_matching_device_is_busy() -> None:
    objs = [
        device_class("gpu"),
        gpus(3),
        allocated("old", [result("gpu-1")]),
        claim("c", [request("gpu", allocationMode="All")]),
    ]
    assert not run(objs, ["c"]).allocated


def test_all_mode_with_no_matching_device_fails() -> None:
    objs = [
        device_class("gpu"),
        gpus(2),
        claim("c", [request("gpu", allocationMode="All", selectors=[{"cel": {"expression": "false"}}])]),
    ]
    assert not run(objs).allocated


def test_class_and_request_selectors_must_both_hold() -> None:
    cls = device_class("gpu", "gpu.example.com", 'device.attributes["gpu.example.com"].index >= 1')
    req = request(
        "gpu", selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].index != 1'}}]
    )
    out = run([cls, gpus(4), claim("c", [req])])
    assert devices_of(out, "c") == ["gpu-2"]


def test_cel_runtime_error_on_reached_device_aborts() -> None:
    req = request(
        "gpu", selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "x"'}}]
    )
    with pytest.raises(CelError) as info:
        run([device_class("gpu"), gpus(1), claim("c", [req])])
    assert "gpu.example.com/s1/gpu-0" in str(info.value) and "model" in str(info.value)


def test_missing_device_class_is_an_error() -> None:
    with pytest.raises(DRASolverError, match="could not retrieve device class nope"):
        run([device_class("gpu"), gpus(1), claim("c", [request("gpu", "nope")])])


def shared_gpu(
    value: str = "80Gi", policy: dict[str, Any] | None = None, name: str = "gpu-0"
) -> dict[str, Any]:
    cap: dict[str, Any] = {"value": value}
    if policy:
        cap["requestPolicy"] = policy
    return device(name, capacity={"memory": cap}, multi=True)


def mem_claim(name: str, amount: str | None) -> dict[str, Any]:
    extra = {"capacity": {"requests": {"memory": amount}}} if amount else {}
    return claim(name, [request("gpu", **extra)])


def consumed(out, name: str) -> str:
    alloc = out.allocation(name)
    assert alloc is not None, out.reason
    return str(alloc.devices.results[0].consumed_capacity["memory"])


def test_valid_values_round_up_to_smallest_listed_value() -> None:
    policy = {"default": "10Gi", "validValues": ["10Gi", "20Gi", "40Gi"]}
    out = run(
        [device_class("gpu"), resource_slice("s1", [shared_gpu(policy=policy)]), mem_claim("c", "15Gi")]
    )
    assert consumed(out, "c") == "20Gi"


def test_valid_values_above_largest_is_ineligible() -> None:
    policy = {"default": "10Gi", "validValues": ["10Gi", "20Gi"]}
    out = run(
        [device_class("gpu"), resource_slice("s1", [shared_gpu(policy=policy)]), mem_claim("c", "30Gi")]
    )
    assert not out.allocated


def test_valid_range_below_min_consumes_min() -> None:
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "max": "40Gi"}}
    out = run([device_class("gpu"), resource_slice("s1", [shared_gpu(policy=policy)]), mem_claim("c", "1Gi")])
    assert consumed(out, "c") == "10Gi"


def test_valid_range_step_rounds_up_from_min() -> None:
    policy = {"default": "5Gi", "validRange": {"min": "5Gi", "step": "5Gi"}}
    out = run(
        [device_class("gpu"), resource_slice("s1", [shared_gpu("40Gi", policy)]), mem_claim("c", "12Gi")]
    )
    assert consumed(out, "c") == "15Gi"


def test_valid_range_above_max_is_ineligible() -> None:
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "max": "40Gi"}}
    out = run(
        [device_class("gpu"), resource_slice("s1", [shared_gpu(policy=policy)]), mem_claim("c", "50Gi")]
    )
    assert not out.allocated


def test_unrequested_capacity_consumes_policy_default() -> None:
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    out = run([device_class("gpu"), resource_slice("s1", [shared_gpu(policy=policy)]), mem_claim("c", None)])
    assert consumed(out, "c") == "10Gi"


def test_unrequested_capacity_without_policy_consumes_everything() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("s1", [shared_gpu()]),
        mem_claim("a", None),
        mem_claim("b", "1Gi"),
    ]
    out = run(objs, ["a"])
    assert consumed(out, "a") == "80Gi"
    assert not run(objs, ["a", "b"]).allocated


def test_multi_allocatable_device_without_capacity_is_unlimited() -> None:
    objs = [device_class("gpu"), resource_slice("s1", [device("gpu-0", multi=True)])]
    objs += [claim(f"c{i}", [request("gpu")]) for i in range(5)]
    out = run(objs)
    assert out.allocated and all(devices_of(out, f"c{i}") == ["gpu-0"] for i in range(5))


def test_capacity_request_on_dedicated_device_is_a_filter_and_takes_it_whole() -> None:
    small = device("gpu-0", capacity={"memory": "40Gi"})
    big = device("gpu-1", capacity={"memory": "80Gi"})
    out = run([device_class("gpu"), resource_slice("s1", [small, big]), mem_claim("c", "60Gi")])
    assert devices_of(out, "c") == ["gpu-1"]
    r = out.allocation("c").devices.results[0]
    assert r.share_id is None and r.consumed_capacity is None


def test_shared_capacity_sum_never_exceeds_value() -> None:
    objs = [
        device_class("gpu"),
        resource_slice("s1", [shared_gpu("40Gi")]),
        mem_claim("a", "30Gi"),
        mem_claim("b", "20Gi"),
    ]
    assert not run(objs).allocated
    assert run(objs, ["a"]).allocated


def test_existing_shares_reduce_what_is_left() -> None:
    old = allocated(
        "old",
        [
            result(
                "gpu-0", shareID="6f1c1c3e-0000-4000-8000-000000000001", consumedCapacity={"memory": "30Gi"}
            )
        ],
    )
    objs = [device_class("gpu"), resource_slice("s1", [shared_gpu("40Gi")]), old, mem_claim("c", "20Gi")]
    assert not run(objs, ["c"]).allocated


def test_shared_results_carry_share_id_and_every_capacity() -> None:
    dev = device("gpu-0", multi=True, capacity={"memory": "40Gi", "cores": "100"})
    out = run([device_class("gpu"), resource_slice("s1", [dev]), mem_claim("c", "10Gi")])
    r = out.allocation("c").devices.results[0]
    assert r.share_id and {k: str(v) for k, v in r.consumed_capacity.items()} == {
        "memory": "10Gi",
        "cores": "100",
    }


def test_share_ids_are_deterministic_for_a_seed() -> None:
    objs = [device_class("gpu"), resource_slice("s1", [shared_gpu()]), mem_claim("c", "10Gi")]
    a = run(objs).allocation("c").devices.results[0].share_id
    b = run(objs).allocation("c").devices.results[0].share_id
    assert a == b


def test_distinct_attribute_gives_pairwise_different_values() -> None:
    devs = [device(f"gpu-{i}", attrs={"numa": n}) for i, n in enumerate([0, 0, 1])]
    c = claim("c", [request("gpu", count=2)], [{"distinctAttribute": "gpu.example.com/numa"}])
    out = run([device_class("gpu"), resource_slice("s1", devs), c])
    assert devices_of(out, "c") == ["gpu-0", "gpu-2"]


def test_match_attribute_gives_equal_values() -> None:
    devs = [device(f"gpu-{i}", attrs={"numa": n}) for i, n in enumerate([0, 1, 1])]
    c = claim("c", [request("gpu", count=2)], [{"matchAttribute": "gpu.example.com/numa"}])
    out = run([device_class("gpu"), resource_slice("s1", devs), c])
    assert devices_of(out, "c") == ["gpu-1", "gpu-2"]


def test_match_attribute_device_without_attribute_is_rejected() -> None:
    devs = [device("gpu-0"), device("gpu-1", attrs={"numa": 0})]
    c = claim("c", [request("gpu")], [{"matchAttribute": "gpu.example.com/numa"}])
    assert devices_of(run([device_class("gpu"), resource_slice("s1", devs), c]), "c") == ["gpu-1"]


def test_list_valued_match_needs_a_common_element() -> None:
    devs = [
        device("gpu-0", attrs={"pci": [1, 2]}),
        device("gpu-1", attrs={"pci": [2, 3]}),
        device("gpu-2", attrs={"pci": [3, 1]}),
    ]
    c = claim("c", [request("gpu", count=3)], [{"matchAttribute": "gpu.example.com/pci"}])
    objs = [device_class("gpu"), resource_slice("s1", devs), c]
    assert not run(objs, gates="DRAListTypeAttributes=true").allocated
    c2 = claim("c", [request("gpu", count=2)], [{"matchAttribute": "gpu.example.com/pci"}])
    out = run(objs[:2] + [c2], gates="DRAListTypeAttributes=true")
    assert devices_of(out, "c") == ["gpu-0", "gpu-1"]


def test_derived_attribute_bridges_different_attribute_names() -> None:
    gpu_devs = [device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1})]
    nic_devs = [device("eth0", attrs={"numaNode": 1})]
    c = claim(
        "c",
        [
            request(
                "gpu",
                derivedAttributes=[
                    {"name": "derived/n", "expression": 'device.attributes["gpu.example.com"].numa'}
                ],
            ),
            request(
                "nic",
                "nic",
                derivedAttributes=[
                    {"name": "derived/n", "expression": 'device.attributes["nic.example.com"].numaNode'}
                ],
            ),
        ],
        [{"matchAttribute": "derived/n"}],
    )
    objs = [
        device_class("gpu"),
        device_class("nic", "nic.example.com"),
        resource_slice("s1", gpu_devs),
        resource_slice("s2", nic_devs, driver="nic.example.com"),
        c,
    ]
    out = run(objs, gates="DRADerivedAttributes=true")
    assert devices_of(out, "c") == ["gpu-1", "eth0"]


def test_derived_attribute_shadows_static_attribute_for_its_request() -> None:
    devs = [device("gpu-0", attrs={"numa": 0}), device("gpu-1", attrs={"numa": 1})]
    expr = 'device.attributes["gpu.example.com"].numa >= 0 ? 7 : 8'
    c = claim(
        "c",
        [request("gpu", count=2, derivedAttributes=[{"name": "gpu.example.com/numa", "expression": expr}])],
        [{"matchAttribute": "gpu.example.com/numa"}],
    )
    out = run([device_class("gpu"), resource_slice("s1", devs), c], gates="DRADerivedAttributes=true")
    assert devices_of(out, "c") == ["gpu-0", "gpu-1"]


def test_derived_attribute_runtime_error_aborts() -> None:
    c = claim(
        "c",
        [
            request(
                "gpu",
                derivedAttributes=[
                    {"name": "derived/x", "expression": 'device.attributes["gpu.example.com"].nope'}
                ],
            )
        ],
        [{"matchAttribute": "derived/x"}],
    )
    with pytest.raises(CelError, match="nope"):
        run([device_class("gpu"), gpus(1), c], gates="DRADerivedAttributes=true")


def test_skip_node_operations_copied_into_results() -> None:
    s = resource_slice("s1", [device("gpu-0")], skipNodeOperations=True)
    out = run([device_class("gpu"), s, claim("c", [request("gpu")])], gates="DRAOptionalNodePreparation=true")
    assert out.allocation("c").devices.results[0].skip_node_operations is True


def test_skip_node_operations_with_gate_off_makes_devices_unallocatable() -> None:
    s = resource_slice("s1", [device("gpu-0")], skipNodeOperations=True)
    out = run(
        [device_class("gpu"), s, claim("c", [request("gpu")])], gates="DRAOptionalNodePreparation=false"
    )
    assert not out.allocated


def test_skip_node_operations_needs_node_declaring_the_feature() -> None:
    s = resource_slice("s1", [device("gpu-0")], skipNodeOperations=True)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1"},
        "status": {"declaredFeatures": []},
    }
    objs = [device_class("gpu"), s, node, claim("c", [request("gpu")])]
    assert not run(objs, gates="DRAOptionalNodePreparation=true").allocated
    node["status"]["declaredFeatures"] = ["DraOptionalNodePreparation"]
    assert run(objs, gates="DRAOptionalNodePreparation=true").allocated


def partitioned(n_parts: int, mem_each: str, total: str) -> list[dict[str, Any]]:
    counters = resource_slice(
        "s0",
        [],
        sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": total}}}],
        pool="p",
        count=2,
    )
    del counters["spec"]["devices"]
    parts = [
        device(
            f"part-{i}",
            consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": mem_each}}}],
        )
        for i in range(n_parts)
    ]
    return [counters, resource_slice("s1", parts, pool="p", count=2)]


def test_partitions_share_counter_budget() -> None:
    objs = [device_class("gpu"), *partitioned(3, "40Gi", "80Gi"), claim("c", [request("gpu", count=2)])]
    assert devices_of(run(objs), "c") == ["part-0", "part-1"]
    objs[-1] = claim("c", [request("gpu", count=3)])
    assert not run(objs).allocated


def test_first_available_takes_first_subrequest_that_fits() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu", "count": 4},
            {"name": "small", "deviceClassName": "gpu", "count": 2},
        ],
    }
    out = run([device_class("gpu"), gpus(3), claim("c", [req])])
    alloc = out.allocation("c")
    assert [r.request for r in alloc.devices.results] == ["gpu/small", "gpu/small"]


def test_admin_access_ignores_busy_devices_and_does_not_block() -> None:
    objs = [
        device_class("gpu"),
        gpus(1),
        allocated("old", [result("gpu-0")]),
        claim("admin", [request("gpu", adminAccess=True)]),
        claim("c", [request("gpu")]),
    ]
    out = run(objs, ["admin"])
    assert devices_of(out, "admin") == ["gpu-0"] and out.allocation("admin").devices.results[0].admin_access
    assert not run(objs, ["c"]).allocated


def test_untolerated_no_schedule_taint_blocks_device() -> None:
    taint = {"key": "broken", "effect": "NoSchedule"}
    s = resource_slice("s1", [device("gpu-0", taints=[taint]), device("gpu-1")])
    out = run([device_class("gpu"), s, claim("c", [request("gpu")])])
    assert devices_of(out, "c") == ["gpu-1"]
    tol = [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}]
    out = run([device_class("gpu"), s, claim("c", [request("gpu", tolerations=tol)])])
    assert devices_of(out, "c") == ["gpu-0"]


def test_devices_of_other_nodes_are_invisible() -> None:
    s = resource_slice("s2", [device("gpu-9")], node="node-2")
    out = run([device_class("gpu"), s, gpus(1), claim("c", [request("gpu", count=2)])])
    assert not out.allocated


def test_node_selector_slice_visible_by_labels_and_copied_to_result() -> None:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    s = resource_slice("s1", [device("gpu-0")], node=None, nodeSelector=sel)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"rack": "r1"}}}
    out = run([device_class("gpu"), s, node, claim("c", [request("gpu")])])
    assert out.allocation("c").node_selector.dump() == sel
    node["metadata"]["labels"] = {"rack": "r2"}
    assert not run([device_class("gpu"), s, node, claim("c", [request("gpu")])]).allocated


def test_all_nodes_slice_gives_no_node_selector() -> None:
    s = resource_slice("s1", [device("gpu-0")], node=None, allNodes=True)
    out = run([device_class("gpu"), s, claim("c", [request("gpu")])])
    assert out.allocation("c").node_selector is None


def test_node_local_device_selects_exactly_that_node() -> None:
    out = run([device_class("gpu"), gpus(1), claim("c", [request("gpu")])])
    term = out.allocation("c").node_selector.dump()["nodeSelectorTerms"][0]
    assert term == {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}


def test_incomplete_pool_is_not_allocatable() -> None:
    s = resource_slice("s1", [device("gpu-0")], pool="p", count=2)
    assert not run([device_class("gpu"), s, claim("c", [request("gpu")])]).allocated


def test_newest_pool_generation_wins() -> None:
    old = resource_slice("a-old", [device("gpu-old")], pool="p", generation=1)
    new = resource_slice("b-new", [device("gpu-new")], pool="p", generation=2)
    out = run([device_class("gpu"), old, new, claim("c", [request("gpu")])])
    assert devices_of(out, "c") == ["gpu-new"]


def test_candidate_order_is_pool_then_slice_name_not_input_order() -> None:
    b = resource_slice("b", [device("dev-b")], pool="p", count=2)
    a = resource_slice("a", [device("dev-a")], pool="p", count=2)
    z = resource_slice("z", [device("dev-z")], pool="a-pool")
    out = run([device_class("gpu"), b, a, z, claim("c", [request("gpu", count=3)])])
    assert devices_of(out, "c") == ["dev-z", "dev-a", "dev-b"]


def test_claims_of_one_call_are_all_or_none() -> None:
    objs = [device_class("gpu"), gpus(2), claim("a", [request("gpu")]), claim("b", [request("gpu", count=2)])]
    out = run(objs)
    assert not out.allocated and all(c.status is None for c in out.claims)


def test_input_objects_are_not_mutated() -> None:
    cluster = Cluster.from_objects([device_class("gpu"), gpus(2), claim("c", [request("gpu")])])
    before = cluster.claims[("default", "c")].dump()
    out = allocate(cluster, node="node-1", allocator="reference")
    assert out.allocated and cluster.claims[("default", "c")].dump() == before


def test_independent_claims_cpsat_places_at_least_as_many_as_one_by_one() -> None:
    # first fit puts the 30Gi claim on the 40Gi device and then the 40Gi claim fits nowhere
    devs = [
        device("gpu-0", capacity={"memory": "40Gi"}, multi=True),
        device("gpu-1", capacity={"memory": "30Gi"}, multi=True),
    ]
    objs = [device_class("gpu"), resource_slice("s1", devs), mem_claim("a", "30Gi"), mem_claim("b", "40Gi")]
    cluster = Cluster.from_objects(objs)
    pods = [["a"], ["b"]]  # independent claims: each its own pod
    ref = plan(cluster, pods, ["node-1"], allocator="reference")
    opt = plan(cluster, pods, ["node-1"], allocator="cpsat")
    assert [p.placed for p in ref.pods] == [True, False] and ref.pod("default/b").reason
    assert [p.placed for p in opt.pods] == [True, True]
    assert [devices_of_claim(p.claims[0]) for p in opt.pods] == [["gpu-1"], ["gpu-0"]]


def devices_of_claim(c) -> list[str]:
    return [r.device for r in c.status.allocation.devices.results]


def pod(name: str, entries: list[dict[str, Any]], node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": entries}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def template(name: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": requests}}},
    }


def test_pod_claims_from_names_and_templates_are_allocated_together_on_its_node() -> None:
    objs = [
        device_class("gpu"),
        gpus(3),
        claim("shared", [request("gpu")]),
        template("two", [request("gpu", count=2)]),
        pod(
            "trainer",
            [{"name": "a", "resourceClaimName": "shared"}, {"name": "b", "resourceClaimTemplateName": "two"}],
        ),
    ]
    cluster = Cluster.from_objects(objs)
    out = allocate(cluster, pod="trainer", node="node-1", allocator="reference")
    assert [c.metadata.name for c in out.claims] == ["shared", "trainer-b"]
    assert devices_of(out, "shared") == ["gpu-0"] and devices_of(out, "trainer-b") == ["gpu-1", "gpu-2"]
    assert ("default", "trainer-b") not in cluster.claims


def test_pod_with_claim_allocated_elsewhere_does_not_fit_this_node() -> None:
    sel = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}
        ]
    }
    done = allocated("old", [result("gpu-0")])
    done["status"]["allocation"]["nodeSelector"] = sel
    objs = [
        device_class("gpu"),
        gpus(2),
        done,
        claim("new", [request("gpu")]),
        pod("p", [{"name": "a", "resourceClaimName": "old"}, {"name": "b", "resourceClaimName": "new"}]),
    ]
    out = allocate(Cluster.from_objects(objs), pod="p", node="node-1", allocator="reference")
    assert not out.allocated and "default/old" in out.reason


def test_capacity_request_no_device_has_is_unschedulable_with_reason() -> None:
    objs = [device_class("gpu"), gpus(2), claim("c", [request("gpu", capacity={"requests": {"mem": "1Gi"}})])]
    out = run(objs)
    assert not out.allocated
    assert "default/c" in out.reason and "request gpu" in out.reason and "lack capacity mem" in out.reason


def test_match_attribute_no_candidate_has_names_the_constraint() -> None:
    c = claim("c", [request("gpu", count=2)], [{"matchAttribute": "gpu.example.com/nope"}])
    out = run([device_class("gpu"), gpus(2), c])
    assert not out.allocated and "matchAttribute gpu.example.com/nope" in out.reason
