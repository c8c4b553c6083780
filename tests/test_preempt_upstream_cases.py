"""The kube-scheduler's own preemption test cases, restated as data
(`tests/preempt_upstream_cases.yaml`: each names its source file, test and case), asserted
against our one-pod-at-a-time reference (`dra_solver.preempt.reference`: upstream's rules)
and, on the same single-pod question, against the batch model (`plan --preempt`).

One parametrized case per rule, its id the rule's name (docs/semantics.md, "Preemption").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from preempt_cases import Pending, Running, cluster_docs, pdb

from dra_solver.api.cluster import Cluster
from dra_solver.preempt import PreemptOutcome, plan_preempt
from dra_solver.preempt.reference import SHIFT, reference_preempt

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "preempt_upstream_cases.yaml").read_text()
)


def _cluster(case: dict[str, Any]) -> Cluster:
    """The case as Kubernetes objects: nodes of `cpu` and no devices, the running pods bound,
    the one preemptor pending, the budgets."""
    running = [
        Running(
            r["name"],
            r["node"],
            r["priority"],
            (),
            dict(r.get("labels", {})),
            cpu=str(r["cpu"]),
            start=r.get("start"),
        )
        for r in case["running"]
    ]
    p = case["pending"]
    pending = [Pending(p["name"], p["priority"], 0, policy=p.get("policy"), cpu=str(p["cpu"]))]
    budgets = []
    for b in case.get("pdbs", []):
        doc = pdb(b["name"], b["labels"], allowed=b.get("allowed"), min_available=b.get("minAvailable"))
        if b.get("disrupted"):
            doc["status"]["disruptedPods"] = {n: "1970-01-01T00:00:00Z" for n in b["disrupted"]}
        budgets.append(doc)
    return Cluster.from_objects(
        cluster_docs(dict.fromkeys(case["nodes"], 0), running, pending, budgets, cpu=case["cpu"])
    )


def _short(names: list[str]) -> list[str]:
    return sorted(n.split("/", 1)[1] for n in names)


def _criteria(out: PreemptOutcome) -> tuple[int, int, int, int]:
    """The batch plan's (PDB violations, highest evicted priority, sum + 2^31 each, evicted),
    as `ReferenceOutcome.criteria` writes the reference's."""
    prios = [v.priority for v in out.victims]
    pdbs = out.stats.get("pdb_violations", 0)
    assert isinstance(pdbs, int)
    return (pdbs, max(prios, default=-(2**63)), sum(p + SHIFT for p in prios), len(prios))


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["rule"] for c in cases]


def test_every_case_names_its_source_and_a_rule_of_its_own() -> None:
    assert all(c["source"].endswith("_test.go") and c["test"].startswith("Test") and c["case"] for c in CASES)
    rules = _ids(CASES)
    assert len(rules) == len(set(rules))


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_the_reference_chooses_upstreams_node_and_victims(case: dict[str, Any]) -> None:
    """Upstream's answer for one preemptor: the node, the victims, the PDB violations."""
    ref = reference_preempt(_cluster(case))
    want = case["expect"]
    preemptor = f"default/{case['pending']['name']}"
    assert ref.placed.get(preemptor) == want["node"], case["case"]
    assert _short([v for v, _, _ in ref.evicted]) == sorted(want["victims"]), case["case"]
    assert {n for _, n, _ in ref.evicted} <= {want["node"]}
    assert ref.pdb_violations == want["pdb_violations"], case["case"]
    assert ref.valid


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_the_batch_plan_answers_the_same_single_pod_question(case: dict[str, Any]) -> None:
    """One pending pod: the batch optimum is upstream's answer (`same`) or, where upstream
    breaks a tie by start time or node order (which the batch objective does not read), an
    answer of the same objective (`criteria`)."""
    c = _cluster(case)
    out = plan_preempt(c)
    ref = reference_preempt(c)
    want = case["expect"]
    preemptor = out.pod(f"default/{case['pending']['name']}")
    assert out.verdict.status == "OPTIMAL"
    assert preemptor.placed is (want["node"] is not None)
    assert _criteria(out) == ref.criteria, case["case"]
    if case["model"] == "same":
        assert preemptor.node == want["node"], case["case"]
        assert _short([v.name for v in out.victims]) == sorted(want["victims"]), case["case"]
    else:
        assert case["model"] == "criteria"
