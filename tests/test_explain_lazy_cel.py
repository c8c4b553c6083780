"""`explain` raises a CEL runtime error only where the subject's own search meets it (issue #42):
its what-if searches (a fix with fewer devices, each claim alone, an invalid pool taken as
valid, the reason of one claim alone) may reach devices upstream's search never evaluates, and
their errors must not stop the explanation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.errors import CelError
from dra_solver.explain.diagnosis import explain
from dra_solver.pipeline import plan

CASES = Path(__file__).parent / "conformance" / "cases"


def _objects(name: str) -> list[dict]:
    case = yaml.safe_load((CASES / f"{name}.yaml").read_text())
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}, *case["objects"]]


def test_explain_names_the_shortage_not_a_cel_error_the_search_never_met() -> None:
    cluster = Cluster.from_objects(_objects("lazy-cel-error-after-an-earlier-request-fails"))
    answer = explain(cluster, claim="c")
    reason = answer.nodes[0].reason
    assert not answer.nodes[0].fits
    assert reason is not None and "needs 2 device(s), 1 match the selectors" in reason, reason


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_plan_reason_is_the_shortage_too(allocator: str) -> None:
    cluster = Cluster.from_objects(_objects("lazy-cel-error-after-an-earlier-request-fails"))
    outcome = plan(cluster, [["c"]], ["node-1"], allocator=allocator)
    pod = outcome.pods[0]
    assert not pod.placed and pod.reason is not None and "needs 2 device(s)" in pod.reason


def test_explain_still_raises_the_error_its_own_search_meets() -> None:
    objs = _objects("lazy-cel-error-after-an-earlier-request-fails")
    claim = next(o for o in objs if o["kind"] == "ResourceClaim")
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 1  # r0 fits: r1 meets b0
    with pytest.raises(CelError, match="no such key"):
        explain(Cluster.from_objects(objs), claim="c")
