"""An audit (`check_cluster`) reads the cluster once, not once per node (`check.world.Reading`).

Why: `dra-solver check` on a 1,000-node cluster with 4,000 allocated claims ran for more than
twelve minutes, because every node's check re-read every allocated claim and every slice of
the cluster. The rules are unchanged: each node's claims are judged against the claims
allocated before them — every other claim of the cluster — and the slices that node sees.
The tests: the audit with one shared reading finds exactly what a fresh reading per node finds,
on a cluster with double bookings on node-local and network-attached devices; and the
number of passes over the claims and the slices does not grow with the nodes."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.api.cluster import Cluster
from dra_solver.check import check_cluster, pools
from dra_solver.check.cluster import claim_nodes
from dra_solver.check.context import Context
from dra_solver.check.runner import run_context
from dra_solver.gates import FeatureGates
from tests.builders import claim, device, device_class, request, resource_slice, result

NODES = 6


def _on(node: str) -> dict[str, Any]:
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    return {"nodeSelectorTerms": [{"matchFields": [field]}]}


def _allocated(
    name: str, node: str | None, results: list[dict[str, Any]], cls: str = "gpu"
) -> dict[str, Any]:
    reqs = sorted({r["request"] for r in results})
    allocation: dict[str, Any] = {"devices": {"results": results}}
    if node is not None:
        allocation["nodeSelector"] = _on(node)
    return claim(name, [request(r, cls) for r in reqs], status={"allocation": allocation})


def _objects() -> list[dict[str, Any]]:
    """NODES nodes with two GPUs each and a network-attached pool of two NICs seen by all; one
    claim per node on its own GPU, one more on node-3's GPU (a double booking within a node's
    group), a NIC claim allocated for node-1 and one for no node (two groups) on the same NIC."""
    objs: list[dict[str, Any]] = [device_class("gpu"), device_class("nic", "nic.example.com")]
    for i in range(NODES):
        node = f"node-{i}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"rack": "r"}}})
        objs.append(resource_slice(f"s{i}", [device("gpu-0"), device("gpu-1")], node=node))
        objs.append(_allocated(f"c{i}", node, [result("gpu-0", pool=f"s{i}")]))
    objs.append(
        resource_slice(
            "net", [device("nic-0"), device("nic-1")], driver="nic.example.com", node=None, allNodes=True
        )
    )
    objs.append(_allocated("dup", "node-3", [result("gpu-0", pool="s3")]))
    nic = {"request": "nic", "driver": "nic.example.com", "pool": "net", "device": "nic-0"}
    objs.append(_allocated("nic-a", "node-1", [nic], "nic"))
    objs.append(_allocated("nic-b", None, [nic], "nic"))
    return objs


def _per_node_fresh(cluster: Cluster, gates: FeatureGates) -> list[Any]:
    """The audit's claim part as it read before: a fresh `World` (every claim, every slice
    read again) for each node's claims."""
    nodes = claim_nodes(cluster, gates)
    groups: dict[str | None, list[Any]] = {}
    for c in cluster.allocated_claims():
        groups.setdefault(nodes[c.namespaced_name], []).append(c)
    out: list[Any] = []
    for node in sorted(groups, key=lambda n: (n is None, n or "")):
        out += run_context(Context(cluster, groups[node], node, gates))
    return list(dict.fromkeys(out))


def test_one_reading_finds_what_a_reading_per_node_finds() -> None:
    gates = FeatureGates()
    cluster = Cluster.from_objects(_objects())
    found = check_cluster(cluster, gates)
    busy = {v.claim for v in found if v.kind == "busy"}
    assert busy == {"default/c3", "default/nic-a", "default/nic-b"}
    assert found == _per_node_fresh(cluster, gates)


def test_the_claims_and_slices_are_read_once_for_all_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = Cluster.from_objects(_objects())
    reads = {"claims": 0, "slices": 0}
    claims_of, readable = Cluster.allocated_claims, pools.readable

    def counted_claims(self: Cluster) -> list[Any]:
        reads["claims"] += 1
        return claims_of(self)

    def counted_slices(*args: Any) -> pools.Readable:
        reads["slices"] += 1
        return readable(*args)

    monkeypatch.setattr(Cluster, "allocated_claims", counted_claims)
    monkeypatch.setattr("dra_solver.check.world.readable", counted_slices)
    check_cluster(cluster, FeatureGates())
    # claim_nodes, the grouping, the shared reading: three passes, not one per node (NODES + 1 groups)
    assert reads == {"claims": 3, "slices": 1}
