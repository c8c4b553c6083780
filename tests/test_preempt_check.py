"""Mutation tests of the checker's preemption rules (`dra_solver.check.check_preemption`): one
valid preemption plan, and for every kind in `PREEMPTION_KINDS` one mutation that breaks exactly
that rule (as `tests/test_check_mutations.py` does for the other kinds).

The valid plan: pending p (priority 100, 2 GPUs) evicts b (5) and c (1) on n2 and takes their
GPUs; a (10) on n1 stays. The move rules start from a valid plan with a move (`_valid_move`):
pending big (4 GPUs) takes n0 once ReplicaSet-owned m (1 GPU) moves from n0 to n1. Each mutation
changes one thing of what the plan says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest
from preempt_cases import Pending, Running, build

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import Pod, ResourceClaim, ResourceClaimConsumerReference
from dra_solver.check import PREEMPTION_KINDS, check_preemption
from dra_solver.gates import FeatureGates
from dra_solver.planning.outcome import PodPlan
from dra_solver.preempt import plan_preempt


@dataclass
class Plan:
    cluster: Cluster
    plans: list[object]
    evicted: list[str]
    released: list[ResourceClaim]
    extra: dict[str, object] = field(default_factory=dict)
    moved: list[PodPlan] = field(default_factory=list)


def _valid() -> Plan:
    c = build(
        {"n1": 2, "n2": 2},
        [Running("a", "n1", 10, (0, 1)), Running("b", "n2", 5, (0,)), Running("c", "n2", 1, (1,))],
        [Pending("p", 100, 2)],
    )
    out = plan_preempt(c)
    return Plan(c, list(out.pods), [v.name for v in out.victims], list(out.released))


def _valid_move() -> Plan:
    c = build(
        {"n0": 4, "n1": 4},
        # x has no controller: only m can move (else either move is a plan of one move)
        [Running("m", "n0", 0, (0,), owner="rs"), Running("x", "n1", 0, (0,))],
        [Pending("big", 100, 4)],
    )
    out = plan_preempt(c, allow_moves=True)
    assert [m.name for m in out.moves] == ["default/m"] and not out.victims
    moved = [m.plan for m in out.moves if m.plan is not None]
    return Plan(c, list(out.pods), [], list(out.released), moved=moved)


def _move_pod(p: Plan) -> None:
    p.moved[0] = replace(p.moved[0], node="n0")  # "moved" to the node it runs on


def _move_claims(p: Plan) -> None:
    old = p.cluster.claims[("default", "m-gpu")]
    p.moved[0] = replace(p.moved[0], claims=[old])  # keeps its input claim instead of a new one


def _victim(p: Plan) -> None:
    p.evicted.append("default/ghost")


def _unjustified(p: Plan) -> None:
    p.evicted.append("default/a")


def _moved(p: Plan) -> None:
    running: Pod = p.cluster.pod("default/a")
    first = p.plans[0]
    p.plans.append(replace(first, name="default/a", pod=running, node="n2", claims=[]))  # type: ignore[type-var]


def _release(p: Plan) -> None:
    claim = p.released[0]
    assert claim.status is not None
    keep = ResourceClaimConsumerReference(resource="pods", name="b", uid="uid-b")
    status = claim.status.model_copy(update={"reserved_for": [keep]})
    p.released[0] = claim.model_copy(update={"status": status})


def _freed(p: Plan) -> None:
    p.released = [c for c in p.released if c.metadata.name != "b-gpu"]


MUTATIONS: dict[str, Callable[[Plan], None]] = {
    "preempt-victim": _victim,
    "preempt-unjustified": _unjustified,
    "preempt-moved": _moved,
    "preempt-release": _release,
    "preempt-freed": _freed,
    "preempt-move-pod": _move_pod,
    "preempt-move-claims": _move_claims,
}


def _check(p: Plan) -> list[str]:
    return sorted(
        {
            v.kind
            for v in check_preemption(p.cluster, p.plans, p.evicted, p.released, FeatureGates(), p.moved)  # type: ignore[arg-type]
        }
    )


def test_the_valid_plan_passes() -> None:
    assert _check(_valid()) == []


def test_the_valid_plan_with_a_move_passes() -> None:
    assert _check(_valid_move()) == []


@pytest.mark.parametrize("kind", PREEMPTION_KINDS)
def test_each_mutation_breaks_exactly_its_rule(kind: str) -> None:
    p = _valid_move() if kind.startswith("preempt-move-") else _valid()
    MUTATIONS[kind](p)
    assert _check(p) == [kind]


def test_every_preemption_kind_has_a_mutation() -> None:
    assert set(MUTATIONS) == set(PREEMPTION_KINDS)
