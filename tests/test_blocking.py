"""Minimal blocking set (issue #11): the rule groups — claims, and each claim's match/distinct
constraints — that together leave a node's claims without an allocation, found with CP-SAT
assumptions (`dra_solver.explain.blocking`).

Every answer is checked against the reference allocator, independently of CP-SAT: the set
has no allocation, and dropping any one member of it does (so a non-minimal core fails)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.explain.blocking import Group, minimal_blocking_set
from dra_solver.gates import FeatureGates
from dra_solver.problem.build import build_problem
from dra_solver.reference import ReferenceSearch

NUMA = "gpu.example.com/numa"


def gpus(n: int, **attrs: Any) -> dict[str, Any]:
    """`n` GPUs on node-1; attribute values per device from `attrs` (name -> list, None = lacks it)."""
    devs = []
    for i in range(n):
        values = {k: v[i] for k, v in attrs.items() if v[i] is not None}
        devs.append(device(f"gpu-{i}", attrs=values or None))
    return resource_slice("s1", devs)


def cluster_of(*objs: dict[str, Any], slice_: dict[str, Any]) -> tuple[Cluster, list[ResourceClaim]]:
    """The cluster of `objs` (claims among them) and a GPU class; its claims in input order."""
    c = Cluster.from_objects([device_class("gpu"), slice_, *objs])
    return c, [c.claim(x["metadata"]["name"]) for x in objs if x["kind"] == "ResourceClaim"]


def blocking(cluster: Cluster, claims: list[ResourceClaim]) -> list[Group] | None:
    return minimal_blocking_set(build_problem(cluster, claims, "node-1", FeatureGates()))


def fits(cluster: Cluster, claims: list[ResourceClaim], groups: list[Group]) -> bool:
    """The reference allocator on the claims of `groups`, each with only its constraints in
    `groups`."""
    kept = []
    for ci, c in enumerate(claims):
        if Group(ci) not in groups:
            continue
        cons = [x for k, x in enumerate(c.spec.devices.constraints) if Group(ci, k) in groups]
        devices = c.spec.devices.model_copy(update={"constraints": cons})
        kept.append(c.model_copy(update={"spec": c.spec.model_copy(update={"devices": devices})}))
    problem = build_problem(cluster, kept, "node-1", FeatureGates())
    return ReferenceSearch(problem).run() is not None


def assert_minimal(cluster: Cluster, claims: list[ResourceClaim], found: list[Group] | None) -> None:
    assert found, "expected a blocking set"
    assert not fits(cluster, claims, found)
    for member in found:
        assert fits(cluster, claims, [g for g in found if g != member]), f"{member} is not needed"


def minimal_set(*objs: dict[str, Any], slice_: dict[str, Any]) -> list[Group] | None:
    """The blocking set of the claims among `objs`, checked minimal against the reference."""
    cluster, claims = cluster_of(*objs, slice_=slice_)
    found = blocking(cluster, claims)
    assert_minimal(cluster, claims, found)
    return found


def test_two_claims_that_each_fit_alone_block_together_and_a_claim_that_fits_is_left_out() -> None:
    nic = resource_slice("n1", [device("eth0")], driver="nic.example.com")
    found = minimal_set(
        device_class("nic", "nic.example.com"),
        nic,
        claim("x", [request("gpu", count=2)]),
        claim("net", [request("nic", "nic")]),
        claim("y", [request("gpu")]),
        slice_=gpus(2),
    )
    assert found == [Group(0), Group(2)]


def test_a_claim_that_is_not_needed_for_the_conflict_is_dropped_from_the_set() -> None:
    """a (2) + b (2) exceed 3 GPUs; c (1) fits beside either: the set is {a, b}, not all three."""
    found = minimal_set(
        claim("a", [request("gpu", count=2)]),
        claim("b", [request("gpu", count=2)]),
        claim("c", [request("gpu")]),
        slice_=gpus(3),
    )
    assert found == [Group(0), Group(1)]


def test_match_and_distinct_on_the_same_attribute_block_only_together() -> None:
    cons = [
        {"requests": ["a", "b"], "matchAttribute": NUMA},
        {"requests": ["a", "b"], "distinctAttribute": NUMA},
    ]
    found = minimal_set(claim("pair", [request("a"), request("b")], cons), slice_=gpus(4, numa=[0, 0, 1, 1]))
    assert found == [Group(0), Group(0, 0), Group(0, 1)]


def test_a_constraint_that_alone_blocks_is_the_set_with_its_claim() -> None:
    """No two GPUs share a NUMA node; the distinct index constraint and claim `other` are
    innocent."""
    cons = [
        {"requests": ["a", "b"], "distinctAttribute": "gpu.example.com/index"},
        {"requests": ["a", "b"], "matchAttribute": NUMA},
    ]
    found = minimal_set(
        claim("pair", [request("a"), request("b")], cons),
        claim("other", [request("gpu")]),
        slice_=gpus(3, numa=[0, 1, 2], index=[0, 1, 2]),
    )
    assert found == [Group(0), Group(0, 1)]


def test_devices_lacking_the_attribute_are_excluded_only_while_the_constraint_holds() -> None:
    """Two GPUs, one without `numa`: the claim for both fits once its matchAttribute is dropped."""
    cons = [{"matchAttribute": NUMA}]
    found = minimal_set(claim("both", [request("gpu", count=2)], cons), slice_=gpus(2, numa=[0, None]))
    assert found == [Group(0), Group(0, 0)]


def test_a_claim_that_cannot_be_allocated_alone_is_the_whole_set() -> None:
    cluster, claims = cluster_of(
        claim("big", [request("gpu", count=3)]), claim("small", [request("gpu")]), slice_=gpus(2)
    )
    assert blocking(cluster, claims) == [Group(0)]


def test_nothing_blocks_when_the_claims_fit() -> None:
    cluster, claims = cluster_of(claim("x", [request("gpu")]), claim("y", [request("gpu")]), slice_=gpus(2))
    assert blocking(cluster, claims) is None


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_set_is_minimal_over_many_equal_claims(count: int) -> None:
    """Five claims of `count` GPUs on 3 * count - 1 GPUs: any three block, no two do."""
    cluster, claims = cluster_of(
        *(claim(f"c{i}", [request("gpu", count=count)]) for i in range(5)), slice_=gpus(3 * count - 1)
    )
    found = blocking(cluster, claims)
    assert found is not None and len(found) == 3
    assert_minimal(cluster, claims, found)
