"""The public allocate() call around the two allocators: limits, fallbacks, errors."""

from __future__ import annotations

import pytest

from benchmarks.workloads import hard_list_match
from dra_solver import Cluster, allocate
from dra_solver.errors import SearchAborted
from dra_solver.gates import FeatureGates
from dra_solver.problem.build import build_problem
from dra_solver.reference import allocate_reference

GATES = "DRAListTypeAttributes=true"


def test_reference_search_gives_up_after_its_step_budget() -> None:
    cluster = Cluster.from_objects(hard_list_match())
    problem = build_problem(cluster, cluster.unallocated_claims(), "node-1", FeatureGates.of(GATES))
    with pytest.raises(SearchAborted, match="filter operation aborted"):
        allocate_reference(problem, max_steps=1_000)


def test_cpsat_allocates_where_the_bounded_reference_gives_up() -> None:
    cluster = Cluster.from_objects(hard_list_match())
    out = allocate(cluster, node="node-1", allocator="cpsat", feature_gates=GATES)
    assert out.allocated
    devices = [r.device for r in out.allocation("wide").devices.results]
    assert len(devices) == 32 and len(set(devices)) == 32
