"""An invalid pool that blocks a pod on many nodes reads as one cause with its nodes (issue
#41, step 4): a network-attached pool seen from every node is one cause, its nodes named
(was: the same words once per node, `n0: invalid ...; n1: invalid ...; n2: invalid ...`);
over more nodes than are named, each node's own pool (named after it, or not) invalid alike
is one cause counted, said as on its first node (was: one group per node, `1 node: ...n0...;
1 node: ...n1...; 4 more nodes for 4 other reason(s)`); over a few nodes each own pool is
named with its node. The lines below are the golden words.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver.api.cluster import Cluster
from dra_solver.explain.diagnosis import explain
from dra_solver.pipeline import plan
from dra_solver.reasons import Kind, Reason
from dra_solver.reasons.words import over_nodes, say


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _cluster(n: int, *, network: bool) -> Cluster:
    """`n` nodes; a pool listing gpu-0 in both its slices (upstream: invalid): one seen from
    every node (`network`), or one per node named after it."""
    docs: list[dict[str, Any]] = [device_class("gpu")]
    for i in range(n):
        docs.append(_node(f"n{i}"))
        if not network:
            docs += [
                resource_slice(f"n{i}-a", [device("gpu-0")], node=f"n{i}", pool=f"n{i}", count=2),
                resource_slice(f"n{i}-b", [device("gpu-0")], node=f"n{i}", pool=f"n{i}", count=2),
            ]
    if network:
        for s in ("a", "b"):
            net = resource_slice(f"net-{s}", [device("gpu-0")], node=None, pool="net", count=2, allNodes=True)
            docs.append(net)
    docs.append(claim("c", [request("gpu")]))
    return Cluster.from_objects(docs)


INVALID = "invalid resource pools were encountered: pool gpu.example.com/{0} generation 1 is invalid: "
TWICE = "device gpu-0 listed by slices {0}-a and {0}-b"
NET = INVALID.format("net") + TWICE.format("net")
OWN = INVALID.format("n0") + TWICE.format("n0")
THEIRS = "in their own names"

GOLDEN = {
    (3, True): f"no node fits the pod: n0, n1 and n2: {NET}",
    (6, True): f"no node fits the pod (0 of 6 nodes): 6 nodes: {NET}",
    (3, False): "no node fits the pod: "
    + "; ".join(f"n{i}: " + INVALID.format(f"n{i}") + TWICE.format(f"n{i}") for i in range(3)),
    (6, False): (
        f"no node fits the pod (0 of 6 nodes): 6 nodes: {OWN} (as on n0; on the other 5 alike, {THEIRS})"
    ),
}


@pytest.mark.parametrize(("n", "network"), sorted(GOLDEN))
@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_an_invalid_pool_over_many_nodes_is_one_cause(n: int, network: bool, allocator: str) -> None:
    (pod,) = plan(_cluster(n, network=network), allocator=allocator).pods
    assert pod.reason == GOLDEN[(n, network)]
    assert pod.why is not None
    over = pod.why.part("others")
    assert over is not None and over.is_(Kind.OVER_NODES)
    if over.fact("grouped"):  # counted by value: one group of every node
        assert over.ints("counts") == (n,) and over.texts("firsts") == ("n0",)


def test_each_nodes_own_pool_is_said_of_the_node_alone() -> None:
    """One node's own words still name its own pool, and explain's group says the others are
    alike in their own names."""
    cluster = _cluster(3, network=False)
    (pod,) = plan(cluster, allocator="reference").pods
    assert pod.node_reasons["n2"] == INVALID.format("n2") + TWICE.format("n2")
    text = explain(cluster, claim="c").text()
    assert (
        "3 node(s) (n0, n1, n2): pool gpu.example.com/n0 generation 1 is invalid: device gpu-0 listed by "
        "slices n0-a and n0-b; upstream skips the pool, and with its devices the claims would fit "
        "(as on n0; on the other 2 alike, in their own names)"
    ) in text, text


def test_nodes_refused_alike_are_named_together_and_others_apart() -> None:
    """Over a few nodes, the nodes with one reason are named together, in node order of
    their first; a node refused otherwise keeps its own words."""
    taint = Reason.of(Kind.TAINT, node="a", taint="x", effect="NoSchedule")
    short = Reason.of(Kind.NODE_SHORT, node="b", short=("cpu",))
    pairs = [
        ("a", taint),
        ("b", short),
        ("c", Reason.of(Kind.TAINT, node="c", taint="x", effect="NoSchedule")),
    ]
    assert say(over_nodes(pairs)) == (
        "a and c: the node has the taint x:NoSchedule, which the pod does not tolerate; b: Insufficient cpu"
    )
