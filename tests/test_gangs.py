"""Gang scheduling (issue #19, KEP-4671): PodGroups with `gang.minCount` placed all or nothing.

Each test is named for the rule it checks; both allocators where the rule applies. The
reference is upstream's PodGroup cycle (pod-at-a-time first fit, never revisited); CP-SAT
decides the gang jointly (`encoders.gangs`)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import allocated, claim, device, device_class, request, resource_slice, result
from example_counts import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dra_solver import Cluster, plan
from dra_solver.api.validate import validate_cluster
from dra_solver.check import check, check_gangs
from dra_solver.errors import InputError
from dra_solver.planners.policy import TABLES, Cpsat
from dra_solver.planners.run import run
from dra_solver.planning.job import Options
from dra_solver.planning.resolve import make_job, resolve_nodes, resolve_units

BOTH = ["reference", "cpsat"]


def pod_group(name: str, min_count: int | None = None, **spec: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def pod(name: str, claims: list[str], group: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def gpu_nodes(nodes: int, gpus: int) -> list[dict[str, Any]]:
    return [
        resource_slice(f"s{n}", [device(f"gpu-{n}-{i}") for i in range(gpus)], node=f"node-{n}")
        for n in range(nodes)
    ]


def gpu_pod(name: str, count: int, group: str | None = None) -> list[dict[str, Any]]:
    return [claim(f"{name}-gpus", [request("gpu", count=count)]), pod(name, [f"{name}-gpus"], group)]


def verify(cluster: Cluster, out: Any) -> None:
    """Every placed pod passes the checker, node by node with earlier nodes' claims in use."""
    current = Cluster(**{**cluster.__dict__, "claims": dict(cluster.claims)})
    for n in dict.fromkeys(p.node for p in out.pods if p.node is not None):
        mine = [c for p in out.pods if p.node == n for c in p.claims]
        assert check(current, mine, node=n) == []
        for c in mine:
            current.claims[(c.metadata.namespace or "default", c.metadata.name)] = c


def placed(out: Any) -> dict[str, str | None]:
    return {p.name.split("/", 1)[1]: p.node for p in out.pods}


def issue_example() -> Cluster:
    """Issue #19: a gang of 3 pods x 4 GPUs (minCount 3) and a lone 1-GPU pod, 2 nodes x 4 GPUs."""
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(2, 4), pod_group("train", 3)]
    for i in range(3):
        objs += gpu_pod(f"worker-{i}", 4, "train")
    objs += gpu_pod("lone", 1)
    return Cluster.from_objects(objs)


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_below_min_count_places_none_and_frees_the_lone_pod(allocator: str) -> None:
    cluster = issue_example()
    out = plan(cluster, allocator=allocator)
    got = placed(out)
    assert [got[f"worker-{i}"] for i in range(3)] == [None, None, None]
    assert got["lone"] is not None
    for i in range(3):
        reason = out.pod(f"default/worker-{i}").reason or ""
        assert "PodGroup default/train not placed" in reason and "minCount 3" in reason
    verify(cluster, out)


def kubernetes_138765() -> Cluster:
    """kubernetes#138765 (reproducer in kubernetes PR #140097): two pods, each asking a whole
    device or, as a fallback, half of it, on one partitionable device."""
    whole = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "whole"'}}]
    half = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "half"'}}]
    counters = [{"name": "mem", "counters": {"memory": {"value": "2"}}}]

    def part(name: str, size: str, amount: str) -> dict[str, Any]:
        uses = [{"counterSet": "mem", "counters": {"memory": {"value": amount}}}]
        return device(name, attrs={"size": size}, consumesCounters=uses)

    devices = [part("whole", "whole", "2"), part("half-0", "half", "1"), part("half-1", "half", "1")]
    objs: list[dict[str, Any]] = [
        device_class("gpu"),
        resource_slice("s0", devices, node="node-0", sharedCounters=counters),
        pod_group("pair", 2),
    ]
    for name in ("a", "b"):
        first = [
            {"name": "whole", "deviceClassName": "gpu", "selectors": whole},
            {"name": "half", "deviceClassName": "gpu", "selectors": half},
        ]
        objs += [claim(f"{name}-gpu", [{"name": "gpu", "firstAvailable": first}])]
        objs.append(pod(name, [f"{name}-gpu"], "pair"))
    return Cluster.from_objects(objs)


def test_kubernetes_138765_reference_fails_the_gang_as_upstream() -> None:
    cluster = kubernetes_138765()
    out = plan(cluster, allocator="reference")
    assert placed(out) == {"a": None, "b": None}
    assert "1 of its pods fit" in (out.pod("default/a").reason or "")


def test_kubernetes_138765_cpsat_places_the_gang_jointly() -> None:
    cluster = kubernetes_138765()
    out = plan(cluster, allocator="cpsat")
    assert placed(out) == {"a": "node-0", "b": "node-0"}
    devices = sorted(
        r.device for p in out.pods for c in p.claims for r in c.status.allocation.devices.results
    )
    assert devices == ["half-0", "half-1"]
    verify(cluster, out)


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_above_min_count_keeps_the_pods_that_fit(allocator: str) -> None:
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(1, 4), pod_group("train", 2)]
    for i in range(3):
        objs += gpu_pod(f"worker-{i}", 2, "train")
    cluster = Cluster.from_objects(objs)
    out = plan(cluster, allocator=allocator)
    assert sum(p.placed for p in out.pods) == 2
    if allocator == "reference":  # queue order; CP-SAT has no tie-break among equal pods
        assert [p.name for p in out.pods if not p.placed] == ["default/worker-2"]
    verify(cluster, out)


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_pods_already_bound_count_towards_min_count(allocator: str) -> None:
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(1, 2), pod_group("train", 3)]
    running = pod("worker-0", [], "train")
    running["spec"]["nodeName"] = "node-0"
    objs.append(running)
    for i in (1, 2):
        objs += gpu_pod(f"worker-{i}", 1, "train")
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert placed(out) == {"worker-1": "node-0", "worker-2": "node-0"}


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_with_fewer_pods_than_min_count_is_not_placed(allocator: str) -> None:
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(1, 8), pod_group("train", 3)]
    for i in range(2):
        objs += gpu_pod(f"worker-{i}", 1, "train")
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert placed(out) == {"worker-0": None, "worker-1": None}
    assert "fewer than its gang minCount 3" in (out.pod("default/worker-0").reason or "")


@pytest.mark.parametrize("allocator", BOTH)
def test_gang_of_pods_without_claims_follows_its_min_count(allocator: str) -> None:
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(1, 1), pod_group("train", 2)]
    objs += [pod("idle", [], "train"), *gpu_pod("worker", 2, "train")]
    out = plan(Cluster.from_objects(objs), pods=["idle", "worker"], allocator=allocator)
    assert placed(out) == {"idle": None, "worker": None}


@pytest.mark.parametrize("allocator", BOTH)
def test_basic_policy_schedules_pods_one_by_one(allocator: str) -> None:
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(1, 4), pod_group("web")]
    for i in range(3):
        objs += gpu_pod(f"worker-{i}", 2, "web")
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert sum(p.placed for p in out.pods) == 2


@pytest.mark.parametrize("allocator", BOTH)
def test_generic_workload_gate_off_ignores_pod_groups(allocator: str) -> None:
    out = plan(issue_example(), allocator=allocator, feature_gates="GenericWorkload=false")
    assert any(placed(out)[f"worker-{i}"] for i in range(3))


def cpsat_with(cluster: Cluster, aggregation: str) -> Any:
    """The CP-SAT plan with the aggregated model forced on ("always") or off ("never")."""
    units = resolve_units(cluster, None, None)
    nodes = resolve_nodes(cluster, None)
    job = make_job(cluster, units, nodes, Options(models=TABLES[aggregation]))
    first = run(cluster, units, nodes, Options(allocator="reference"))
    return Cpsat().improve(job, first)


def test_aggregated_model_places_a_gang_all_or_nothing() -> None:
    out = cpsat_with(issue_example(), "always")
    assert out.stats["aggregated"] == "yes"
    got = placed(out)
    assert [got[f"worker-{i}"] for i in range(3)] == [None, None, None] and got["lone"] is not None
    assert "PodGroup default/train not placed" in (out.pod("default/worker-0").reason or "")


def test_aggregated_model_places_a_gang_that_fits_whole() -> None:
    # 3 nodes x 4 GPUs: the gang of 3 x 4 GPUs fits only if the lone pod stays out.
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(3, 4), pod_group("train", 3)]
    for i in range(3):
        objs += gpu_pod(f"worker-{i}", 4, "train")
    objs += gpu_pod("lone", 1)
    cluster = Cluster.from_objects(objs)
    out = cpsat_with(cluster, "always")
    assert out.stats["aggregated"] == "yes" and out.verdict.status == "OPTIMAL"
    assert sum(placed(out)[f"worker-{i}"] is not None for i in range(3)) == 3
    assert placed(out)["lone"] is None
    verify(cluster, out)


def test_aggregated_model_refuses_topology_gangs_with_a_reason() -> None:
    out = cpsat_with(racked(["a", "b", "b", "b"], 2, 3, 2, 3), "always")
    assert str(out.stats["aggregated"]).startswith("no: a gang has a topology constraint")


def equal_weight_gangs() -> Cluster:
    """8 GPUs; gang big (4 pods x 2 GPUs, minCount 4) first in the queue, or gangs a and b
    (2 pods x 2 GPUs each, minCount 2): either way 4 pods and 8 GPUs."""
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(2, 4)]
    objs += [pod_group("big", 4), pod_group("a", 2), pod_group("b", 2)]
    for i in range(4):
        objs += gpu_pod(f"big-{i}", 2, "big")
    for g in ("a", "b"):
        for i in range(2):
            objs += gpu_pod(f"{g}-{i}", 2, g)
    return Cluster.from_objects(objs)


@pytest.mark.parametrize("aggregation", ["never", "always"])
def test_among_plans_of_equal_weight_cpsat_runs_the_most_gangs(aggregation: str) -> None:
    cluster = equal_weight_gangs()
    out = cpsat_with(cluster, aggregation)
    assert out.stats["aggregated"] == "yes" if aggregation == "always" else True
    got = placed(out)
    assert sorted(n for n, node in got.items() if node is not None) == ["a-0", "a-1", "b-0", "b-1"]
    verify(cluster, out)
    first = plan(cluster, allocator="reference")  # queue order: the big gang first
    assert sorted(n for n, node in placed(first).items() if node) == [f"big-{i}" for i in range(4)]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    nodes=st.lists(st.integers(0, 4), min_size=2, max_size=4),
    gangs=st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from([1, 2, 4])), min_size=1, max_size=4
    ),
    lone=st.lists(st.sampled_from([1, 2]), max_size=3),
)
def test_aggregated_and_per_device_models_place_the_same_gangs_weight(
    nodes: list[int], gangs: list[tuple[int, int, int]], lone: list[int]
) -> None:
    """Nodes with 4 GPUs of which some are held; gangs (size, minCount, GPUs per pod)."""
    objs: list[dict[str, Any]] = [device_class("gpu")]
    for n, taken in enumerate(nodes):
        objs.append(resource_slice(f"s{n}", [device(f"gpu-{n}-{i}") for i in range(4)], node=f"node-{n}"))
        if taken:
            objs.append(held(f"held-{n}", n, taken))
    for g, (size, minimum, gpus) in enumerate(gangs):
        objs.append(pod_group(f"g{g}", min(minimum, size)))
        for i in range(size):
            objs += gpu_pod(f"g{g}-{i}", gpus, f"g{g}")
    for i, gpus in enumerate(lone):
        objs += gpu_pod(f"lone-{i}", gpus)
    cluster = Cluster.from_objects(objs)
    agg, exact = cpsat_with(cluster, "always"), cpsat_with(cluster, "never")
    if agg.stats["aggregated"] == "yes":
        event("aggregated")
    for out in (agg, exact):
        verify(cluster, out)
        assert check_gangs(cluster, [p.pod for p in out.pods if p.placed and p.pod is not None]) == []
    if agg.verdict.status == exact.verdict.status == "OPTIMAL":
        assert agg.weight == exact.weight
        assert len(gangs_run(agg)) == len(gangs_run(exact))  # which ones may differ on ties


def held(name: str, node: int, count: int) -> dict[str, Any]:
    """A claim already holding the first `count` GPUs of node-`node` (slice and pool s<node>)."""
    return allocated(name, [result(f"gpu-{node}-{i}", pool=f"s{node}") for i in range(count)])


def gangs_run(out: Any) -> set[str]:
    return {p.name.split("/")[1].split("-")[0] for p in out.pods if p.placed and "lone" not in p.name}


def test_checker_rejects_a_gang_below_min_count() -> None:
    cluster = issue_example()
    worker = cluster.pod("worker-0")
    (v,) = check_gangs(cluster, [worker])
    assert (v.claim, v.kind) == ("default/train", "gang")
    assert "1 pods placed or bound, fewer than its gang minCount 3" in v.message
    assert check_gangs(cluster, []) == []


def test_validate_unknown_pod_group_with_did_you_mean() -> None:
    objs = [pod_group("trainer", 2), pod("p", [], "trainr")]
    (err,) = validate_cluster(Cluster.from_objects(objs))
    assert err.field == "spec.schedulingGroup.podGroupName"
    assert "PodGroup default/trainr not found" in str(err) and 'did you mean "trainer"?' in str(err)


def test_plan_unknown_pod_group_is_an_error_naming_pod_and_field() -> None:
    objs = [device_class("gpu"), *gpu_nodes(1, 1), pod_group("a", 1), pod("p", [], "b")]
    cluster = Cluster.from_objects(objs)
    with pytest.raises(InputError, match="PodGroup default/b not found") as exc:
        plan(cluster, pods=["p"])
    assert exc.value.field == "spec.schedulingGroup.podGroupName"


@pytest.mark.parametrize(
    ("policy", "field", "text"),
    [
        ({"gang": {"minCount": 0}}, "spec.schedulingPolicy.gang.minCount", "at least 1"),
        ({}, "spec.schedulingPolicy", "neither is set"),
        ({"basic": {}, "gang": {"minCount": 1}}, "spec.schedulingPolicy", "both are set"),
    ],
)
def test_validate_pod_group_policy(policy: dict[str, Any], field: str, text: str) -> None:
    group = pod_group("g", 1)
    group["apiVersion"] = "scheduling.k8s.io/v1beta1"
    group["spec"]["schedulingPolicy"] = policy
    (err,) = validate_cluster(Cluster.from_objects([group]))
    assert err.field == field and text in str(err)


def test_pod_group_unknown_field_has_did_you_mean() -> None:
    group = pod_group("g", 1)
    group["spec"]["schedulingPolicy"]["gang"] = {"minCoutn": 2}
    with pytest.raises(Exception, match="minCount"):
        Cluster.from_objects([group])


def rack_node(name: str, rack: str | None, cpu: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"rack": rack} if rack is not None else {}}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": meta}
    if cpu is not None:
        obj["status"] = {"allocatable": {"cpu": cpu}}
    return obj


def racked(racks: list[str | None], gpus: int, pods: int, gpus_per_pod: int, min_count: int) -> Cluster:
    """Nodes node-i (label rack=racks[i]) with `gpus` GPUs each, and a gang `train` with a
    topology constraint on `rack` of `pods` pods x `gpus_per_pod` GPUs."""
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(len(racks), gpus)]
    objs += [rack_node(f"node-{i}", r) for i, r in enumerate(racks)]
    objs.append(pod_group("train", min_count, schedulingConstraints={"topology": [{"key": "rack"}]}))
    for i in range(pods):
        objs += gpu_pod(f"worker-{i}", gpus_per_pod, "train")
    return Cluster.from_objects(objs)


RACK = {"node-0": "a", "node-1": "b", "node-2": "b", "node-3": "b"}


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_is_placed_within_the_one_rack_it_fits(allocator: str) -> None:
    # rack a (node-0) holds one pod of 2 GPUs, rack b (node-1..3) all three; first fit
    # without the constraint would take node-0, node-1, node-2 across both racks.
    cluster = racked(["a", "b", "b", "b"], 2, 3, 2, 3)
    out = plan(cluster, allocator=allocator)
    got = placed(out)
    assert all(got[f"worker-{i}"] is not None for i in range(3)), got
    assert {RACK[n] for n in got.values() if n is not None} == {"b"}
    verify(cluster, out)
    free = plan(cluster, allocator=allocator, feature_gates="TopologyAwareWorkloadScheduling=false")
    assert {RACK[n] for n in placed(free).values() if n is not None} == {"a", "b"}


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_that_fits_only_across_racks_is_not_placed(allocator: str) -> None:
    # Two racks of two nodes x 2 GPUs: three pods of 2 GPUs fit over four nodes, never in one rack.
    cluster = racked(["a", "a", "b", "b"], 2, 3, 2, 3)
    out = plan(cluster, allocator=allocator)
    assert not any(p.placed for p in out.pods)
    reasons = {p.reason for p in out.pods}
    assert all(r is not None and "PodGroup default/train" in r for r in reasons), reasons
    if allocator == "reference":
        assert all("no single topology domain fits" in str(r) for r in reasons), reasons
    free = plan(cluster, allocator=allocator, feature_gates="TopologyAwareWorkloadScheduling=false")
    assert sum(p.placed for p in free.pods) == 3


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_skips_nodes_without_the_label(allocator: str) -> None:
    cluster = racked([None, "b", "b"], 2, 2, 2, 2)
    out = plan(cluster, allocator=allocator)
    assert sorted(n for n in placed(out).values() if n is not None) == ["node-1", "node-2"]


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_above_min_count_stays_in_its_rack(allocator: str) -> None:
    # minCount 2 of 3 pods: rack b (node-1, node-2) takes two, the third does not spill to rack a.
    cluster = racked(["a", "b", "b"], 2, 3, 2, 2)
    out = plan(cluster, allocator=allocator)
    nodes = sorted(n for n in placed(out).values() if n is not None)
    assert nodes == ["node-1", "node-2"]


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_with_bound_pods_joins_their_rack(allocator: str) -> None:
    # A pod of the gang already runs on node-0 (rack a): new pods go to rack a only, as upstream.
    objs: list[dict[str, Any]] = [device_class("gpu"), *gpu_nodes(3, 2)]
    objs += [rack_node("node-0", "a"), rack_node("node-1", "b"), rack_node("node-2", "a")]
    objs.append(pod_group("train", 2, schedulingConstraints={"topology": [{"key": "rack"}]}))
    running = pod("worker-0", [], "train")
    running["spec"]["nodeName"] = "node-0"
    objs += [running, *gpu_pod("worker-1", 2, "train")]
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert placed(out)["worker-1"] == "node-0"


@pytest.mark.parametrize("allocator", BOTH)
def test_topology_gang_takes_the_rack_where_most_of_its_pods_fit(allocator: str) -> None:
    # cpu only, 4 pods x 1 cpu, minCount 3: rack a (node-0, 3 cpu) fits 3, rack b (2 + 2) all 4.
    # Upstream scores feasible placements by pods placed (PodGroupPodsCount); CP-SAT maximises them.
    objs = [rack_node("node-0", "a", "3"), rack_node("node-1", "b", "2"), rack_node("node-2", "b", "2")]
    objs.append(pod_group("four", 3, schedulingConstraints={"topology": [{"key": "rack"}]}))
    objs += [cpu_pod(f"p{i}", "1", "four") for i in range(4)]
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert sorted(str(n) for n in placed(out).values()) == ["node-1", "node-1", "node-2", "node-2"]


def test_checker_rejects_a_topology_gang_across_racks() -> None:
    cluster = racked(["a", "b"], 2, 2, 2, 2)
    pods = [cluster.pod("worker-0"), cluster.pod("worker-1")]
    nodes = {("default", "worker-0"): "node-0", ("default", "worker-1"): "node-1"}
    (v,) = check_gangs(cluster, pods, nodes)
    assert v.kind == "gang-topology"
    assert "rack=a: worker-0 on node-0; rack=b: worker-1 on node-1" in v.message
    assert check_gangs(cluster, pods, {k: "node-0" for k in nodes}) == []
    assert check_gangs(cluster, pods, nodes, topology=False) == []


def test_pod_group_with_two_topology_constraints_is_an_error_naming_the_field() -> None:
    group = pod_group("g", 1, schedulingConstraints={"topology": [{"key": "rack"}, {"key": "zone"}]})
    cluster = Cluster.from_objects([device_class("gpu"), *gpu_nodes(1, 1), group, *gpu_pod("p", 1, "g")])
    with pytest.raises(InputError, match="at most one") as exc:
        plan(cluster)
    assert exc.value.field == "spec.schedulingConstraints.topology"


def cpu_node(name: str, cpu: str) -> dict[str, Any]:
    status = {"allocatable": {"cpu": cpu}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def cpu_pod(name: str, cpu: str, group: str) -> dict[str, Any]:
    obj = pod(name, [], group)
    obj["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]
    return obj


@pytest.mark.parametrize("allocator", BOTH)
@pytest.mark.parametrize(("nodes", "expect"), [(1, 0), (2, 2)])
def test_gang_of_pods_taking_node_resources_is_all_or_nothing(
    allocator: str, nodes: int, expect: int
) -> None:
    objs = [cpu_node(f"node-{n}", "3") for n in range(nodes)]
    objs += [pod_group("pair", 2), cpu_pod("a", "2", "pair"), cpu_pod("b", "2", "pair")]
    out = plan(Cluster.from_objects(objs), allocator=allocator)
    assert sum(p.placed for p in out.pods) == expect


def group_claim_cluster() -> Cluster:
    """A gang of two pods sharing the PodGroup's claim `shared` (1 GPU) plus one GPU each:
    node-0 has 2 GPUs, node-1 has 3; only node-1 holds the shared GPU and both pods' own."""
    objs: list[dict[str, Any]] = [device_class("gpu")]
    objs += [resource_slice("s0", [device(f"gpu-0-{i}") for i in range(2)], node="node-0")]
    objs += [resource_slice("s1", [device(f"gpu-1-{i}") for i in range(3)], node="node-1")]
    objs.append(pod_group("train", 2, resourceClaims=[{"name": "shared", "resourceClaimName": "shared"}]))
    objs.append(claim("shared", [request("gpu")]))
    for i in range(2):
        objs += [claim(f"w{i}-own", [request("gpu")]), pod(f"w{i}", ["shared", f"w{i}-own"], "train")]
    return Cluster.from_objects(objs)


@pytest.mark.parametrize("allocator", BOTH)
def test_group_level_claim_is_allocated_once_and_reserved_for_the_pod_group(allocator: str) -> None:
    cluster = group_claim_cluster()
    out = plan(cluster, allocator=allocator)
    assert placed(out) == {"w0": "node-1", "w1": "node-1"}
    claims = {c.metadata.name: c for p in out.pods for c in p.claims}
    shared = claims["shared"].status
    assert shared is not None and shared.allocation is not None
    assert [(r.api_group, r.resource, r.name) for r in shared.reserved_for] == [
        ("scheduling.k8s.io", "podgroups", "train")
    ]
    own = claims["w0-own"].status
    assert own is not None and [(r.resource, r.name) for r in own.reserved_for] == [("pods", "w0")]
    verify(cluster, out)


@pytest.mark.parametrize("allocator", BOTH)
def test_group_level_claim_with_the_gate_off_is_reserved_for_its_pods(allocator: str) -> None:
    out = plan(group_claim_cluster(), allocator=allocator, feature_gates="DRAWorkloadResourceClaims=false")
    shared = next(c for p in out.pods for c in p.claims if c.metadata.name == "shared").status
    assert shared is not None and [(r.resource, r.name) for r in shared.reserved_for] == [
        ("pods", "w0"),
        ("pods", "w1"),
    ]
