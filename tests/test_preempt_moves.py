"""`plan --preempt --allow-moves`: a running pod a controller owns, whose claims all come from
its templates, may be re-placed on another node instead of evicted (docs/semantics.md,
"Preemption", "Moves"). One test per rule, on hand-made clusters (`preempt_cases`); the
exhaustive comparison is in `tests/test_preempt_moves_exhaustive.py`."""

from __future__ import annotations

from typing import Any

import pytest
from preempt_cases import Pending, Running, build, cluster_docs, pdb

import dra_solver
from dra_solver.api.cluster import Cluster
from dra_solver.errors import InputError
from dra_solver.preempt import PreemptOutcome, plan_preempt


def _moves(outcome: PreemptOutcome) -> list[tuple[str, str, str]]:
    return [(m.name, m.node, m.to) for m in outcome.moves]


def _evicted(outcome: PreemptOutcome) -> list[str]:
    return [v.name for v in outcome.victims]


def _defrag(**kw: Any) -> Cluster:
    """n0 and n1 are half full with important work (4 of 8 GPUs each, priority 1000); n2 holds
    two 1-GPU pods of a ReplicaSet (priority 0). The 8-GPU job fits only on an empty node."""
    running = [
        Running("big0", "n0", 1000, (0, 1, 2, 3)),
        Running("big1", "n1", 1000, (0, 1, 2, 3)),
        Running("a", "n2", 0, (0,), {"app": "web"}, owner="web"),
        Running("b", "n2", 0, (1,), {"app": "web"}, owner="web"),
    ]
    return build({"n0": 8, "n1": 8, "n2": 8}, running, [Pending("train", 100, 8)], **kw)


def test_two_pods_move_and_the_8_gpu_job_fits() -> None:
    """The defragmentation answer: preemption alone evicts a and b; with moves, both move to
    the half-full nodes and nothing is evicted."""
    c = _defrag()
    alone = plan_preempt(c)
    assert sorted(_evicted(alone)) == ["default/a", "default/b"] and not alone.moves
    out = plan_preempt(c, allow_moves=True)
    assert out.verdict.status == "OPTIMAL"
    assert out.placed == 1 and _evicted(out) == []
    assert sorted(m[0] for m in _moves(out)) == ["default/a", "default/b"]
    assert all(frm == "n2" and to in ("n0", "n1") for _, frm, to in _moves(out))
    assert out.summary == "evicts no pods, moves 2 pods (0 PDB violations)"


def test_a_moved_pod_gets_new_claims_on_its_new_node_and_releases_its_old_ones() -> None:
    out = plan_preempt(_defrag(), allow_moves=True)
    released = {c.metadata.name: c for c in out.released}
    for m in out.moves:
        assert m.plan is not None and m.plan.pod is not None
        assert m.plan.pod.spec.node_name is None  # the re-created Pod; the plan binds it to m.to
        assert m.plan.node == m.to
        (claim,) = m.plan.claims
        short = m.name.split("/")[1]
        assert claim.metadata.name == f"{short}-gpu-moved"
        assert claim.status is not None and claim.status.allocation is not None
        assert {r.pool for r in claim.status.allocation.devices.results} == {m.to}
        assert [r.name for r in claim.status.reserved_for] == [short]
        old = released[f"{short}-gpu"]
        assert old.status is None or old.status.allocation is None


def test_a_move_counts_against_a_pod_disruption_budget() -> None:
    """A move is a disruption: with a budget of the web pods allowing none, moving both is 2
    violations, as evicting them would be; the plan still moves rather than evicts."""
    out = plan_preempt(_defrag(pdbs=[pdb("web", {"app": "web"}, allowed=0)]), allow_moves=True)
    assert out.stats["pdb_violations"] == 2
    assert len(out.moves) == 2 and not out.victims
    assert all(m.budgets == ("default/web",) for m in out.moves)


def test_a_budget_makes_the_plan_evict_an_unprotected_pod_rather_than_move_a_protected_one() -> None:
    """m (protected, allowed 0) could move to n2; c (no budget, not controller-owned) can only
    be evicted. Fewest PDB violations comes before fewest evicted pods: c goes, m stays."""
    running = [Running("m", "n0", 0, (0,), {"app": "web"}, owner="web"), Running("c", "n1", 0, (0,))]
    c = build(
        {"n0": 2, "n1": 2, "n2": 1},
        running,
        [Pending("p", 100, 2)],
        [pdb("web", {"app": "web"}, allowed=0)],
    )
    out = plan_preempt(c, allow_moves=True)
    assert _evicted(out) == ["default/c"] and not out.moves
    assert out.stats["pdb_violations"] == 0


def test_a_pod_no_controller_owns_is_evicted_not_moved() -> None:
    c = build({"n0": 3, "n1": 1}, [Running("lone", "n0", 0, (0,))], [Pending("p", 100, 3)])
    out = plan_preempt(c, allow_moves=True)
    assert _evicted(out) == ["default/lone"] and not out.moves
    assert "not moved: it has no controlling owner" in out.victims[0].reason


def test_a_pod_naming_its_claim_directly_is_not_movable() -> None:
    """A claim the pod names (resourceClaimName) is not its own template's: it cannot follow."""
    docs = cluster_docs({"n0": 3, "n1": 1}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "r":
            d["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "r-gpu"}]
            d["status"].pop("resourceClaimStatuses")
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    assert _evicted(out) == ["default/r"] and not out.moves
    assert "names ResourceClaim r-gpu: a claim that is not its own" in out.victims[0].reason


def test_a_movable_pod_with_no_room_elsewhere_is_evicted() -> None:
    c = build(
        {"n0": 3, "n1": 1},
        [Running("r", "n0", 0, (0,), owner="rs"), Running("s", "n1", 1000, (0,))],
        [Pending("p", 100, 3)],
    )
    out = plan_preempt(c, allow_moves=True)
    assert _evicted(out) == ["default/r"] and not out.moves
    assert "not moved: no plan placing as much at no more damage has room for it" in out.victims[0].reason


def test_a_moved_pod_keeps_its_node_selector() -> None:
    """The moved pod is placed as a pending pod of its own spec: a nodeSelector that only its
    old node matches leaves it nowhere to go."""
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "r":
            d["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n0"}
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    assert _evicted(out) == ["default/r"] and not out.moves
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    assert _moves(out) == [("default/r", "n0", "n1")]


def test_a_pending_pod_with_policy_never_moves_nothing() -> None:
    c = build({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3, "Never")])
    out = plan_preempt(c, allow_moves=True)
    assert not out.moves and not out.victims and out.placed == 0


def test_a_pod_of_equal_priority_is_not_moved() -> None:
    c = build({"n0": 3, "n1": 2}, [Running("r", "n0", 100, (0,), owner="rs")], [Pending("p", 100, 3)])
    out = plan_preempt(c, allow_moves=True)
    assert not out.moves and out.placed == 0


def test_no_move_without_a_gain() -> None:
    """The pending pod fits as things are: nothing moves (fewest moves is the last stage)."""
    c = build({"n0": 4, "n1": 4}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 2)])
    out = plan_preempt(c, allow_moves=True)
    assert out.placed == 1 and not out.moves and not out.victims
    assert out.stats["stage_status"]["moves"] == "OPTIMAL"  # type: ignore[index]


def test_moves_are_fewest() -> None:
    """One move frees n0 or n1 for p (to the other one or to n2); moving both gains nothing."""
    running = [Running("a", "n0", 0, (0,), owner="rs"), Running("b", "n1", 0, (0,), owner="rs")]
    c = build({"n0": 2, "n1": 2, "n2": 1}, running, [Pending("p", 100, 2)])
    out = plan_preempt(c, allow_moves=True)
    assert out.placed == 1 and not out.victims
    assert len(out.moves) == 1


def test_a_gang_starts_with_moves_and_nothing_moves_for_a_gang_that_cannot() -> None:
    running = [Running("a", "n0", 0, (0,), owner="rs"), Running("b", "n1", 0, (0,), owner="rs")]
    gang = [Pending("g0", 100, 4, group="g"), Pending("g1", 100, 4, group="g")]
    c = build({"n0": 4, "n1": 4, "n2": 2}, running, gang, gangs={"g": 2})
    out = plan_preempt(c, allow_moves=True)
    assert out.placed == 2 and not out.victims
    assert sorted(_moves(out)) == [("default/a", "n0", "n2"), ("default/b", "n1", "n2")]
    three = [*gang, Pending("g2", 100, 4, group="g")]
    c = build({"n0": 4, "n1": 4, "n2": 2}, running, three, gangs={"g": 3})
    out = plan_preempt(c, allow_moves=True)
    assert out.placed == 0 and not out.victims and not out.moves


def test_a_pod_of_a_pod_group_is_not_movable() -> None:
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "r":
            d["spec"]["schedulingGroup"] = {"podGroupName": "old"}
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "old", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
        }
    )
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    assert _evicted(out) == ["default/r"] and not out.moves
    assert "belongs to a PodGroup" in out.victims[0].reason


def test_without_allow_moves_nothing_moves() -> None:
    out = plan_preempt(_defrag())
    assert not out.moves and "moves" not in out.stats["stage_status"]  # type: ignore[operator]


def test_the_python_api_plan_with_moves() -> None:
    out = dra_solver.plan(_defrag(), preempt=True, allow_moves=True)
    assert len(out.moves) == 2
    with pytest.raises(InputError, match="allow_moves needs preempt=True"):
        dra_solver.plan(_defrag(), allow_moves=True)


def test_moves_are_deterministic_and_leave_the_input_alone() -> None:
    c = _defrag()
    before = [p.dump() for p in c.pods.values()], [x.dump() for x in c.claims.values()]
    one, two = plan_preempt(c, allow_moves=True, seed=3), plan_preempt(c, allow_moves=True, seed=3)
    assert _moves(one) == _moves(two)
    assert [c.dump() for m in one.moves if m.plan for c in m.plan.claims] == [
        c.dump() for m in two.moves if m.plan for c in m.plan.claims
    ]
    assert before == ([p.dump() for p in c.pods.values()], [x.dump() for x in c.claims.values()])


def test_a_moved_pod_preempts_no_one() -> None:
    """m (priority 50) could move to n1 if it evicted low (priority 0) there — a plan better
    on the highest evicted priority. A replacement only takes room the plan leaves: m is
    evicted and low stays."""
    running = [Running("m", "n0", 50, (0,), owner="rs"), Running("low", "n1", 0, (0,))]
    c = build({"n0": 2, "n1": 1}, running, [Pending("p", 100, 2)])
    out = plan_preempt(c, allow_moves=True)
    assert out.placed == 1 and _evicted(out) == ["default/m"] and not out.moves


def test_the_new_claim_name_never_takes_an_existing_claims() -> None:
    """`r-gpu-moved` exists already (say, from an earlier move): the new claim is `r-gpu-moved-2`."""
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "r-gpu-moved", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}]}
            },
        }
    )
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    (move,) = out.moves
    assert move.plan is not None and [c.metadata.name for c in move.plan.claims] == ["r-gpu-moved-2"]


def test_a_movable_pod_whose_template_is_gone_is_a_clear_error() -> None:
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    docs = [d for d in docs if d["kind"] != "ResourceClaimTemplate"]
    with pytest.raises(InputError, match="ResourceClaimTemplate default/gpu-1 not found"):
        plan_preempt(Cluster.from_objects(docs), allow_moves=True)


@pytest.mark.parametrize("kind", ["DaemonSet", "Node"])
def test_a_pod_its_controller_re_creates_on_the_same_node_is_not_movable(kind: str) -> None:
    """A DaemonSet's pod (and a static pod's mirror, owned by its Node) comes back on the same
    node: it can only be evicted."""
    docs = cluster_docs({"n0": 3, "n1": 2}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 3)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "r":
            d["metadata"]["ownerReferences"][0]["kind"] = kind
    out = plan_preempt(Cluster.from_objects(docs), allow_moves=True)
    assert _evicted(out) == ["default/r"] and not out.moves
    assert f"its controller {kind}/rs re-creates it on the same node" in out.victims[0].reason
