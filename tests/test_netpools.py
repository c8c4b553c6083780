"""Network-attached pools (issue #40): upstream scheduler_perf's partitionable shape
(`benchmarks.netpools`: every pool selected by a label, so every node sees every pool;
2-device claims matched to one pool; partitions sharing a pool's counters).

- CP-SAT plans it with the aggregated model over pools (`aggregated.pools`): the optimum (two
  claims per free pool), proven, without a per-node copy of any pool;
- first fit keeps one context and one Problem per world of nodes, counted again only where a
  placement changed something (`firstfit.engine.World`): the work is counted, not timed;
- where the model over pools would not be exact, it says why and the plan goes on without it.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from benchmarks.netpools import LABEL, netpools, optimum
from dra_solver import Cluster, Planner, plan
from dra_solver.output.objects import cluster_after
from dra_solver.planners.aggregated.pools import pooled
from dra_solver.planners.firstfit import engine as firstfit
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.firstfit.engine import _Placing
from dra_solver.planning.job import Options
from dra_solver.planning.ledger import Ledger
from dra_solver.planning.outcome import PodPlan
from dra_solver.planning.resolve import make_job, resolve_units, with_nodes
from dra_solver.replan import planner as planner_module


def _job(objs, allocator: str = "cpsat"):
    cluster = Cluster.from_objects(objs)
    nodes = sorted(cluster.nodes)
    units = [with_nodes(cluster, u, nodes) for u in resolve_units(cluster, None, None)]
    return make_job(cluster, units, nodes, Options(allocator=allocator, time_limit=10))


def test_twenty_nodes_plan_the_proven_optimum_over_pools() -> None:
    out = plan(Cluster.from_objects(netpools(20)), allocator="cpsat", time_limit=10)
    s = out.stats
    assert out.placed == optimum(20) == 40
    told = out.verdict
    assert told is not None and (told.status, told.objective, told.bound, told.gap) == ("OPTIMAL", 40, 40, 0)
    assert str(s["pooled"]).startswith("yes: 20 network-attached pools")
    assert s["pool_nodes"] == 20 and s["pod_classes"] == 1 and s["node_classes"] == 1
    assert s["reference_placed"] == 20  # first fit takes both big partitions of a pool per claim
    per_pool: Counter[str] = Counter()
    for p in out.pods:
        if p.placed:
            (claim,) = p.claims
            pools = {r.pool for r in claim.status.allocation.devices.results}
            assert len(pools) == 1  # matchAttribute on the pool's index
            per_pool[pools.pop()] += 1
    assert len(per_pool) == 20 and set(per_pool.values()) == {2}


def test_pools_already_in_use_count() -> None:
    """Upstream's init claims hold one big partition per pool: one claim per pool fits."""
    out = plan(Cluster.from_objects(netpools(6, held=True)), allocator="cpsat", time_limit=10)
    assert out.placed == optimum(6, held=True) == 6
    assert out.verdict.status == "OPTIMAL" and "pooled" in out.stats


def test_all_nodes_pools_are_the_same_shape() -> None:
    out = plan(Cluster.from_objects(netpools(5, all_nodes=True)), allocator="cpsat", time_limit=10)
    assert out.placed == 10 and out.verdict.status == "OPTIMAL" and "pooled" in out.stats


def test_first_fit_builds_one_problem_per_world_not_per_node_and_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node sees every pool alike: one world. Its Problem of the pods' one shape is built
    once; after each placement it is refreshed (the devices and counters of the pool it took),
    not rebuilt; every node answers from the world's answer."""
    built = {"problems": 0, "contexts": 0}
    real_problem, real_context = firstfit.problem_from_context, firstfit.context_from

    def counted_problem(*args, **kwargs):
        built["problems"] += 1
        return real_problem(*args, **kwargs)

    def counted_context(*args, **kwargs):
        built["contexts"] += 1
        return real_context(*args, **kwargs)

    monkeypatch.setattr(firstfit, "problem_from_context", counted_problem)
    monkeypatch.setattr(firstfit, "context_from", counted_context)
    job = _job(netpools(20), "reference")
    run = _Placing(job, Ledger(job), 5_000_000)
    assert len(run.worlds) == 1 and len(run.worlds[0].nodes) == 20
    out = FirstFit().plan(job)
    assert out.stats["reference_placed"] == 20
    assert built == {"problems": 1, "contexts": 1}


def test_a_claim_that_may_span_pools_is_not_modelled_over_pools() -> None:
    objs = netpools(3)
    template = next(o for o in objs if o["kind"] == "ResourceClaimTemplate")
    del template["spec"]["spec"]["devices"]["constraints"]
    assert "may come from two pools" in str(pooled(_job(objs), None))


def test_nodes_that_see_different_pools_are_not_modelled_over_pools() -> None:
    objs = copy.deepcopy(netpools(3))
    node = next(o for o in objs if o["kind"] == "Node")
    node["metadata"]["labels"][LABEL] = "false"
    assert pooled(_job(objs), None) == "nodes see different network-attached devices"


def test_node_resources_that_may_bind_are_relaxed_beside_the_nodes() -> None:
    """The packing of `aggregated.pools` fails; the model with the pools beside the nodes
    (`aggregated.racks`) relaxes node resources and places pool pods where they fit."""
    objs = netpools(2)
    for o in objs:
        if o["kind"] == "Node":
            o["status"]["allocatable"]["pods"] = "2"
    assert str(pooled(_job(objs), None)).startswith("node resources may bind")
    out = plan(Cluster.from_objects(objs), allocator="cpsat", time_limit=5)
    assert "beside the real ones" in str(out.stats["pooled"])
    assert out.placed == 4 and out.verdict.status == "OPTIMAL"  # four pod slots: the plan fills them


def test_the_reference_places_as_upstream_does() -> None:
    """First fit gives each pod the first pool with room, both big partitions: N pods."""
    out = plan(Cluster.from_objects(netpools(8)), allocator="reference")
    assert out.placed == 8
    first = [p for p in out.pods if p.placed][0]
    names = sorted(r.device for r in first.claims[0].status.allocation.devices.results)
    assert names == ["device-2-counters-1", "device-2-counters-2"]


def _decided(p: PodPlan) -> tuple[str | None, list[Any]]:
    results = [
        [(r.driver, r.pool, r.device) for r in c.status.allocation.devices.results]
        if c.status and c.status.allocation
        else None
        for c in p.claims
    ]
    return p.node, results


def test_an_update_after_pods_leave_decides_as_first_fit_over_every_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pods leave a planned cluster and others come: the kept first-fit run releases their
    partitions (the world's context counted again in those pools) and places the new pods
    exactly as first fit over every node does on the cluster with the kept pods bound."""
    monkeypatch.setattr(planner_module, "SMALL", 0)  # the incremental path, nothing beside it
    objs = netpools(6)
    opts: dict[str, Any] = {"seed": 3, "time_limit": 2.0}
    planner = Planner(Cluster.from_objects(objs), allocator="reference", **opts)
    prev = planner.plan()
    placed = [p for p in prev.pods if p.placed]
    gone = {placed[0].name, placed[3].name}
    remove = [("Pod", *name.split("/")) for name in sorted(gone)]
    pod = next(o for o in objs if o["kind"] == "Pod")
    add = []
    for k in range(3):
        new = copy.deepcopy(pod)
        new["metadata"].update({"name": f"new-{k}", "uid": f"uid-new-{k}"})
        add.append(new)
    out = planner.update(add=add, remove=remove)
    assert str(out.stats["update"]).startswith("pods only")
    kept = [p for p in prev.pods if p.placed and p.name not in gone]
    fresh = plan(Cluster.from_objects(cluster_after(planner.cluster, kept)), allocator="reference", **opts)
    assert sum(p.placed for p in fresh.pods) == 2  # the two freed pools, one pod each
    for p in fresh.pods:
        assert _decided(out.pod(p.name)) == _decided(p), p.name
