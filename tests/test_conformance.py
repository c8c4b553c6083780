"""Every conformance case through the Python API, with both allocators.

The reference allocator must reproduce upstream's first-fit choice exactly (unless the case
says any_valid); the CP-SAT allocator must allocate exactly when upstream does, with the
same number of devices per request and (unless any_valid) the same firstAvailable
subrequests — its "first_available" stages prefer upstream's search order among answers with
equally preferred subrequests in total (every returned allocation has passed solver.check).
"""

from __future__ import annotations

import pytest
from conformance_cases import gates_arg, load_cases, normalise, per_request_counts, per_subrequest_counts
from strategies import INPUT_ERRORS

from dra_solver import Cluster, allocate
from dra_solver.errors import DRASolverError

CASES = load_cases()


def _run(case: dict, allocator: str):
    cluster = Cluster.from_objects(case["objects"])
    return allocate(
        cluster,
        claims=case["allocate"],
        node=case.get("node"),
        allocator=allocator,
        feature_gates=gates_arg(case) or None,
    )


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance_case(case: dict, allocator: str) -> None:
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(DRASolverError) as info:
            _run(case, allocator)
        assert expect["error"] in str(info.value)
        return
    if expect.get("fails"):
        try:
            outcome = _run(case, allocator)
        except INPUT_ERRORS:  # the case's input error; CheckFailed (a wrong answer) propagates
            return
        assert not outcome.allocated
        return
    outcome = _run(case, allocator)
    if expect.get("unschedulable"):
        assert not outcome.allocated, outcome.claims
        assert outcome.reason
        return
    assert outcome.allocated, outcome.reason
    by_name = {c.metadata.name: c for c in outcome.claims}
    for claim_name, want in expect["results"].items():
        got = by_name[claim_name].status.allocation.devices.dump()["results"]
        if allocator == "reference" and not expect.get("any_valid"):
            assert normalise(got) == normalise(want)
        elif allocator == "cpsat" and not expect.get("any_valid"):
            assert per_subrequest_counts(got) == per_subrequest_counts(want)
        else:
            assert per_request_counts(got) == per_request_counts(want)
