"""Preemption's inputs, checked: PodDisruptionBudgets, preemption policies, start times — each
bad value a clear message naming the object, the field and the reason, never a traceback
(docs/semantics.md, "Preemption" and "Input validation and limits"). One test per rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from preempt_cases import Pending, Running, build, cluster_docs, pdb
from typer.testing import CliRunner

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import LabelSelector, LabelSelectorRequirement
from dra_solver.api.times import rfc3339_nanos
from dra_solver.api.validate import validate_cluster
from dra_solver.cli.main import app
from dra_solver.errors import InputError
from dra_solver.preempt.victims import budgets, running_pods, selector_matches, start_order, start_time

runner = CliRunner()


def _docs(*pdbs: dict[str, Any]) -> list[dict[str, Any]]:
    running = [Running(f"r{i}", "n1", 1, (i,), {"app": "db"}) for i in range(2)]
    return cluster_docs({"n1": 2}, running, [Pending("p", 100, 1)], list(pdbs))


def _errors(docs: list[dict[str, Any]]) -> list[str]:
    return [str(e) for e in validate_cluster(Cluster.from_objects(docs))]


def _pdb(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = pdb("db", {"app": "db"})
    doc["spec"].update(spec)
    if status is not None:
        doc["status"] = status
    return doc


@pytest.mark.parametrize(
    ("spec", "status", "field", "reason"),
    [
        ({"minAvailable": 1, "maxUnavailable": 1}, None, "spec", "both set"),
        ({"minAvailable": -1}, None, "spec.minAvailable", "must not be negative"),
        ({"maxUnavailable": -2}, None, "spec.maxUnavailable", "must not be negative"),
        ({"minAvailable": "150%"}, None, "spec.minAvailable", "must not be more than 100%"),
        ({"maxUnavailable": "half"}, None, "spec.maxUnavailable", "not an integer or a percentage"),
        ({"minAvailable": "-5%"}, None, "spec.minAvailable", "not an integer or a percentage"),
        (
            {"minAvailable": 1},
            {"disruptionsAllowed": -1},
            "status.disruptionsAllowed",
            "must not be negative",
        ),
        (
            {"minAvailable": 1, "unhealthyPodEvictionPolicy": "Sometimes"},
            None,
            "spec.unhealthyPodEvictionPolicy",
            "unsupported value",
        ),
    ],
    ids=[
        "min_available_and_max_unavailable_are_exclusive",
        "min_available_is_not_negative",
        "max_unavailable_is_not_negative",
        "a_percentage_is_at_most_100",
        "a_string_is_a_percentage",
        "a_negative_percentage_is_no_percentage",
        "disruptions_allowed_is_not_negative",
        "the_unhealthy_pod_eviction_policy_is_one_of_two",
    ],
)
def test_validate_checks_the_budget(
    spec: dict[str, Any], status: dict[str, Any] | None, field: str, reason: str
) -> None:
    errors = _errors(_docs(_pdb(spec, status)))
    assert any(f"PodDisruptionBudget default/db: {field}: " in e and reason in e for e in errors), errors


@pytest.mark.parametrize(
    ("requirement", "field", "reason"),
    [
        (
            {"key": "app", "operator": "Equals", "values": ["db"]},
            "operator",
            "unknown label selector operator",
        ),
        ({"key": "app", "operator": "Gt", "values": ["1"]}, "operator", "unknown label selector operator"),
        ({"key": "app", "operator": "In"}, "values", "must be non-empty"),
        ({"key": "app", "operator": "Exists", "values": ["db"]}, "values", "must be empty"),
        ({"key": "not a key!", "operator": "Exists"}, "key", "invalid qualified name"),
    ],
    ids=[
        "an_unknown_operator",
        "gt_belongs_to_node_selectors_only",
        "in_needs_values",
        "exists_takes_no_values",
        "the_key_is_a_qualified_name",
    ],
)
def test_validate_checks_the_budget_selector(requirement: dict[str, Any], field: str, reason: str) -> None:
    doc = pdb("db", {}, allowed=1)
    doc["spec"]["selector"] = {"matchExpressions": [requirement]}
    errors = _errors(_docs(doc))
    want = f"PodDisruptionBudget default/db: spec.selector.matchExpressions[0].{field}: "
    assert any(want in e and reason in e for e in errors), errors


def test_a_valid_budget_passes_validation() -> None:
    doc = _pdb({"maxUnavailable": "100%"})
    doc["spec"]["selector"]["matchExpressions"] = [{"key": "app", "operator": "NotIn", "values": ["web"]}]
    assert _errors(_docs(doc)) == []


def test_validate_checks_the_pod_preemption_policy() -> None:
    docs = cluster_docs({"n1": 1}, [], [Pending("p", 100, 1, policy="Sometimes")])
    assert any(
        "Pod default/p: spec.preemptionPolicy: unsupported value 'Sometimes'" in e for e in _errors(docs)
    )


def test_validate_checks_the_priority_class_preemption_policy() -> None:
    docs = cluster_docs({"n1": 1}, [], [Pending("p", 100, 1)])
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 100,
            "preemptionPolicy": "never",
        }
    )
    assert any("PriorityClass high: preemptionPolicy: unsupported value 'never'" in e for e in _errors(docs))


def test_validate_names_an_unknown_priority_class() -> None:
    docs = cluster_docs({"n1": 1}, [], [Pending("p", 100, 1)])
    docs[-1]["spec"]["priorityClassName"] = "hgih"
    assert any(
        "Pod default/p: spec.priorityClassName: PriorityClass 'hgih' not found in the input" in e
        for e in _errors(docs)
    )


def test_validate_checks_the_start_time() -> None:
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,), start="yesterday")], [])
    assert any("Pod default/a: status.startTime: not an RFC 3339 time" in e for e in _errors(docs))


def test_an_unknown_selector_operator_is_an_input_error_not_a_guess() -> None:
    sel = LabelSelector(
        match_expressions=[LabelSelectorRequirement(key="app", operator="Equals", values=["db"])]
    )
    with pytest.raises(InputError, match=r"spec.selector.matchExpressions\[0\].operator") as info:
        selector_matches(sel, {"app": "db"}, "PodDisruptionBudget default/db")
    assert "PodDisruptionBudget default/db" in str(info.value)


def test_start_times_are_read_to_the_nanosecond() -> None:
    assert rfc3339_nanos("1970-01-01T00:00:00.000000005Z") == 5
    assert rfc3339_nanos("1970-01-01T01:00:00+01:00") == 0
    assert rfc3339_nanos("2026-01-02T15:04:05Z") < rfc3339_nanos("2026-01-02T15:04:05.000000001Z")
    with pytest.raises(ValueError, match="RFC 3339"):
        rfc3339_nanos("2026-01-02T15:04:05")  # no offset: the API server refuses it too


def test_a_pod_without_a_start_time_counts_as_started_last() -> None:
    c = build(
        {"n1": 2},
        [Running("a", "n1", 1, (0,), start="2026-01-01T00:00:00Z"), Running("b", "n1", 1, (1,))],
        [],
    )
    a, b = c.pod("default/a"), c.pod("default/b")
    assert start_time(b) is None
    assert start_order(a) < start_order(b)


def test_a_bad_start_time_is_an_input_error_naming_the_field() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 1, (0,), start="soon")], [])
    with pytest.raises(InputError, match="status.startTime"):
        start_time(c.pod("default/a"))


def test_a_pod_the_budget_lists_as_disrupted_is_not_covered_again() -> None:
    doc = pdb("db", {"app": "db"}, allowed=1)
    doc["status"]["disruptedPods"] = {"r1": "2026-01-01T00:00:00Z"}
    c = Cluster.from_objects(_docs(doc))
    (b,) = budgets(c, running_pods(c, ["n1"]))
    assert b.pods == frozenset({"default/r0"})


def _write(tmp_path: Path, docs: list[dict[str, Any]]) -> str:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_the_validate_command_names_file_object_field_and_reason(tmp_path: Path) -> None:
    path = _write(tmp_path, _docs(_pdb({"minAvailable": 1, "maxUnavailable": 1})))
    result = runner.invoke(app, ["validate", path])
    assert result.exit_code == 1
    assert (
        f"{path}: PodDisruptionBudget default/db: spec: minAvailable and maxUnavailable are both set"
        in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_the_validate_command_warns_of_a_budget_that_matches_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, _docs(pdb("x", {"app": "none"}, allowed=0)))
    result = runner.invoke(app, ["validate", path])
    assert result.exit_code == 0, result.stderr
    assert (
        "warning: PodDisruptionBudget default/x: spec.selector matches no pod of the input" in result.stderr
    )
    assert "1 PodDisruptionBudget" in result.stdout


def test_plan_preempt_says_a_budget_with_an_unknown_selector_operator_is_not_counted(tmp_path: Path) -> None:
    """A bad PodDisruptionBudget costs only itself (docs/semantics.md, "Messy clusters"): one
    warning naming the field and what the plan then assumes; `validate` still refuses it."""
    doc = pdb("db", {}, allowed=1)
    doc["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["db"]}]}
    result = runner.invoke(app, ["plan", _write(tmp_path, _docs(doc)), "--preempt"])
    assert result.exit_code in (0, 2), result.stderr
    warning = [x for x in result.stderr.splitlines() if "unknown label selector operator 'Equals'" in x]
    assert len(warning) == 1 and "spec.selector.matchExpressions[0].operator" in warning[0]
    assert "the budget is not counted" in warning[0]
    assert "Traceback" not in result.stderr
    assert runner.invoke(app, ["validate", _write(tmp_path, _docs(doc))]).exit_code == 1


def test_plan_preempt_refuses_a_candidate_sharing_its_claim_with_a_pending_pod(tmp_path: Path) -> None:
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 0)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "p":
            d["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "a-gpu"}]
    result = runner.invoke(app, ["plan", _write(tmp_path, docs), "--preempt"])
    assert result.exit_code == 1
    assert "also used by pending pod default/p" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_python_api_refuses_a_percentage_above_100_without_validation() -> None:
    c = Cluster.from_objects(_docs(_pdb({"minAvailable": "150%"})))
    with pytest.raises(InputError, match=r"spec.minAvailable.*more than 100%"):
        budgets(c, running_pods(c, ["n1"]))
