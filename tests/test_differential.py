"""Differential tests: the CP-SAT allocator against the reference, on generated clusters.

For one allocation call (the claims together, all or none, on node n0) CP-SAT must find an
allocation exactly when the reference does, and both answers must pass the independent
checker. With claims free to be left out (the planner's mode), CP-SAT must place at least
as many claims as the reference placing them one after the other.
"""

from __future__ import annotations

from hypothesis import assume, event, given
from strategies import GATES, INPUT_ERRORS, scenario

from dra_solver import plan
from dra_solver.api.cluster import Cluster
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.check import check
from dra_solver.cpsat import solve
from dra_solver.gates import FeatureGates
from dra_solver.problem.build import build_problem
from dra_solver.reference import allocate_reference
from dra_solver.results import assignment_claims, with_allocation

NODE = "n0"


def _setup(objs):
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    return cluster, FeatureGates.of(GATES)


@given(scenario())
def test_cpsat_allocates_exactly_when_reference_does(case) -> None:
    objs, names = case
    cluster, gates = _setup(objs)
    claims = [cluster.claim(n) for n in names]
    try:
        problem = build_problem(cluster, claims, NODE, gates)
        ref = allocate_reference(problem)
    except INPUT_ERRORS:  # the generated input's fault; CheckFailed (a wrong answer) propagates
        assume(False)
        return
    out = solve(problem, mode="all", time_limit=5.0)
    event("allocated" if ref is not None else "unschedulable")
    assert (out.assignment is not None) == (ref is not None), (out.status, ref)
    for assignment in (ref, out.assignment):
        if assignment is not None:
            result = assignment_claims(problem, claims, assignment)
            assert check(cluster, result, node=NODE, gates=gates) == []


@given(scenario(max_claims=4))
def test_cpsat_places_at_least_as_many_claims_as_reference_one_by_one(case) -> None:
    objs, names = case
    cluster, gates = _setup(objs)
    try:
        pods = [[n] for n in names]  # independent claims: each its own pod
        greedy = plan(cluster, pods, [NODE], allocator="reference", feature_gates=gates)
        best = plan(cluster, pods, [NODE], allocator="cpsat", feature_gates=gates, time_limit=5.0)
    except INPUT_ERRORS:  # the generated input's fault; CheckFailed (a wrong answer) propagates
        assume(False)
        return
    event(f"cpsat places more than greedy: {best.placed > greedy.placed}")
    assert best.placed >= greedy.placed
    if not any(_order_dependent(cluster.claim(n)) for n in names):
        # Without All and adminAccess requests the combined model itself must be at least as
        # good: one by one, All-sets can shrink and admin placements stop counting once
        # allocated (see dra_solver.planners.policy.Cpsat).
        problem = build_problem(cluster, [cluster.claim(n) for n in names], NODE, gates)
        out = solve(problem, mode="free", time_limit=5.0)
        assert out.placed >= greedy.placed
        assert "fallback" not in best.stats


def _order_dependent(claim) -> bool:
    for req in claim.spec.devices.requests:
        if req.exactly is not None and req.exactly.admin_access:
            return True
        subs = req.first_available or [req.exactly]
        if any(s is not None and s.allocation_mode == "All" for s in subs):
            return True
    return False


def test_with_allocation_copies_claim() -> None:
    cluster = Cluster.from_objects(
        [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {},
            }
        ]
    )
    claim = cluster.claim("c")
    from dra_solver.api.models import AllocationResult

    copy = with_allocation(claim, AllocationResult())
    assert claim.status is None and copy.status.allocation is not None
