"""What preemption reads of the input (`dra_solver.preempt.victims`): budgets, selectors,
policies — one test per rule (docs/semantics.md, "Preemption")."""

from __future__ import annotations

import pytest
from preempt_cases import Pending, Running, build, pdb

from dra_solver.api.models import LabelSelector, LabelSelectorRequirement
from dra_solver.errors import InputError
from dra_solver.preempt.victims import budgets, preemption_policy, running_pods, selector_matches


def _running(n: int = 4) -> list[Running]:
    return [Running(f"r{i}", "n1", 1, (i,), {"app": "db"}) for i in range(n)]


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ({"minAvailable": 3}, 1),
        ({"minAvailable": "50%"}, 2),
        ({"minAvailable": "30%"}, 2),  # ceil(1.2) = 2 must stay
        ({"maxUnavailable": 1}, 1),
        ({"maxUnavailable": "30%"}, 2),  # ceil(1.2)
        ({"minAvailable": 9}, 0),
    ],
)
def test_allowed_disruptions_from_the_spec(spec: dict[str, object], allowed: int) -> None:
    doc = pdb("db", {"app": "db"})
    doc["spec"].update(spec)  # type: ignore[attr-defined]
    c = build({"n1": 4}, _running(), [Pending("p", 100, 1)], [doc])
    (b,) = budgets(c, running_pods(c, ["n1"]))
    assert (b.allowed, len(b.pods), b.from_status) == (allowed, 4, False)


def test_status_disruptions_allowed_wins_over_the_spec() -> None:
    doc = pdb("db", {"app": "db"}, allowed=3, min_available=4)
    c = build({"n1": 4}, _running(), [Pending("p", 100, 1)], [doc])
    (b,) = budgets(c, running_pods(c, ["n1"]))
    assert (b.allowed, b.from_status) == (3, True)


def test_a_budget_without_min_or_max_and_without_status_is_an_error() -> None:
    c = build({"n1": 4}, _running(), [Pending("p", 100, 1)], [pdb("db", {"app": "db"})])
    with pytest.raises(InputError, match="neither minAvailable nor maxUnavailable"):
        budgets(c, running_pods(c, ["n1"]))


def test_a_bad_percentage_is_an_error_naming_the_field() -> None:
    c = build({"n1": 4}, _running(), [Pending("p", 100, 1)], [pdb("db", {"app": "db"}, min_available="half")])
    with pytest.raises(InputError, match="spec.minAvailable"):
        budgets(c, running_pods(c, ["n1"]))


def test_an_empty_selector_matches_nothing() -> None:
    assert not selector_matches(LabelSelector(), {"app": "db"})
    assert not selector_matches(None, {"app": "db"})


@pytest.mark.parametrize(
    ("operator", "values", "labels", "matches"),
    [
        ("In", ["db", "web"], {"app": "db"}, True),
        ("In", ["web"], {"app": "db"}, False),
        ("NotIn", ["web"], {"app": "db"}, True),
        ("NotIn", ["web"], {}, True),
        ("Exists", [], {"app": "x"}, True),
        ("DoesNotExist", [], {"app": "x"}, False),
    ],
)
def test_match_expressions(operator: str, values: list[str], labels: dict[str, str], matches: bool) -> None:
    sel = LabelSelector(
        match_expressions=[LabelSelectorRequirement(key="app", operator=operator, values=values)]
    )
    assert selector_matches(sel, labels) is matches


def test_an_unknown_preemption_policy_is_an_error() -> None:
    c = build({"n1": 1}, [], [Pending("p", 100, 1, policy="Sometimes")])
    with pytest.raises(InputError, match="spec.preemptionPolicy"):
        preemption_policy(c, c.pod("default/p"))


def test_a_terminating_pod_is_no_candidate() -> None:
    c = build({"n1": 2}, _running(2), [Pending("p", 100, 1)])
    pod = c.pod("default/r0")
    c.pods[pod.key] = pod.model_copy(
        update={"metadata": pod.metadata.model_copy(update={"deletion_timestamp": "2026-01-01T00:00:00Z"})}
    )
    assert [p.metadata.name for p in running_pods(c, ["n1"])] == ["r1"]
