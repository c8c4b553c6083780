"""`plan --preempt`, one test per rule (docs/semantics.md, "Preemption").

Hand cases in the spirit of the scheduler's preemption tests (pkg/scheduler/framework/plugins/
defaultpreemption/default_preemption_test.go: "a pod that does not fit on any node", "pod with
preemptionPolicy Never", "PDB violating victims last", "pick the node with the lowest highest
priority victim"), written here on GPUs as DRA claims.
"""

from __future__ import annotations

import copy

import pytest
from preempt_cases import Pending, Running, build, cluster_docs, pdb

import dra_solver
from dra_solver.api.cluster import Cluster
from dra_solver.errors import InputError
from dra_solver.planning.job import Options
from dra_solver.preempt import PreemptOutcome, evicted_pod, plan_preempt
from dra_solver.preempt.model import setting, solve_setting
from dra_solver.preempt.reference import reference_preempt


def _evicted(outcome: PreemptOutcome) -> list[str]:
    return sorted(v.name.split("/")[1] for v in outcome.victims)


def _node(outcome: PreemptOutcome, pod: str) -> str | None:
    return outcome.pod(f"default/{pod}").node


def test_the_lowest_highest_priority_wins_over_fewer_victims() -> None:
    """Criterion 3 before 4: two pods of priority 5 and 1 go rather than one of priority 10."""
    c = build(
        {"n1": 2, "n2": 2},
        [Running("a", "n1", 10, (0, 1)), Running("b", "n2", 5, (0,)), Running("c", "n2", 1, (1,))],
        [Pending("p", 100, 2)],
    )
    out = plan_preempt(c)
    assert _node(out, "p") == "n2"
    assert _evicted(out) == ["b", "c"]
    assert out.verdict.status == "OPTIMAL"
    assert out.summary == "evicts 2 pods (highest priority 5, 0 PDB violations)"


def test_only_as_many_victims_as_the_pod_needs() -> None:
    """The node's other low-priority pod stays (upstream's reprieve; here criteria 4-5)."""
    c = build({"n1": 2}, [Running("a", "n1", 1, (0,)), Running("b", "n1", 1, (1,))], [Pending("p", 100, 1)])
    out = plan_preempt(c)
    assert len(out.victims) == 1 and out.pod("default/p").placed


def test_a_pod_of_equal_or_higher_priority_is_never_evicted() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 100, (0,))], [Pending("p", 100, 1)])
    out = plan_preempt(c)
    assert not out.pod("default/p").placed and out.victims == []
    assert "no running pod there has a lower priority" in (out.pod("default/p").reason or "")


def test_preemption_policy_never_evicts_nothing() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1, policy="Never")])
    out = plan_preempt(c)
    assert not out.pod("default/p").placed and out.victims == []
    assert "preemptionPolicy is Never" in (out.pod("default/p").reason or "")


def test_the_priority_class_policy_counts_when_the_pod_has_none() -> None:
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "polite"},
            "value": 100,
            "preemptionPolicy": "Never",
        }
    )
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "p":
            del d["spec"]["priority"]
            d["spec"]["priorityClassName"] = "polite"
    out = plan_preempt(Cluster.from_objects(docs))
    assert not out.pod("default/p").placed and out.victims == []


def test_a_never_pod_is_placed_on_room_another_pod_freed() -> None:
    """The room an eviction frees may serve any pending pod, once a pod that may preempt is
    placed on the node."""
    c = build(
        {"n1": 2},
        [Running("a", "n1", 1, (0,)), Running("b", "n1", 1, (1,))],
        [Pending("p", 100, 1), Pending("q", 100, 1, policy="Never")],
    )
    out = plan_preempt(c)
    assert out.pod("default/p").placed and out.pod("default/q").placed
    assert _evicted(out) == ["a", "b"]


def test_a_pdb_protected_pod_is_spared_when_another_will_do() -> None:
    c = build(
        {"n1": 1, "n2": 1},
        [Running("a", "n1", 1, (0,), {"app": "db"}), Running("b", "n2", 5, (0,), {"app": "web"})],
        [Pending("p", 100, 1)],
        [pdb("db", {"app": "db"}, allowed=0)],
    )
    out = plan_preempt(c)
    assert _evicted(out) == ["b"] and out.stats["pdb_violations"] == 0


def test_a_pdb_violation_is_counted_when_unavoidable() -> None:
    c = build(
        {"n1": 1},
        [Running("a", "n1", 1, (0,), {"app": "db"})],
        [Pending("p", 100, 1)],
        [pdb("db", {"app": "db"}, allowed=0)],
    )
    out = plan_preempt(c)
    assert _evicted(out) == ["a"] and out.stats["pdb_violations"] == 1
    assert out.victims[0].budgets == ("default/db",)
    assert out.summary == "evicts 1 pod (highest priority 1, 1 PDB violation)"


def test_disruptions_allowed_from_min_available_without_status() -> None:
    """Two matching pods, minAvailable 1: one may go without a violation, not two."""
    running = [Running("a", "n1", 1, (0,), {"app": "db"}), Running("b", "n1", 1, (1,), {"app": "db"})]
    one = build({"n1": 2}, running, [Pending("p", 100, 1)], [pdb("db", {"app": "db"}, min_available=1)])
    assert plan_preempt(one).stats["pdb_violations"] == 0
    two = build({"n1": 2}, running, [Pending("p", 100, 2)], [pdb("db", {"app": "db"}, min_available=1)])
    assert plan_preempt(two).stats["pdb_violations"] == 1


def test_a_shared_claim_is_released_only_when_all_its_pods_go() -> None:
    """a and b share one GPU claim: evicting a alone frees a's cpu, not the GPU."""
    c = build(
        {"n1": 1},
        [Running("a", "n1", 1, (0,), claim="shared"), Running("b", "n1", 2, (0,), claim="shared")],
        [Pending("p", 100, 1)],
    )
    out = plan_preempt(c)
    assert _evicted(out) == ["a", "b"]
    released = {r.metadata.name: r for r in out.released}
    assert released["shared"].status is not None and released["shared"].status.allocation is None


def test_an_evicted_pod_leaves_a_shared_claim_that_stays_reserved_for_the_other() -> None:
    """Only cpu is short: the pod of lowest priority goes, its claim stays with the other."""
    c = build(
        {"n1": 2},
        [Running("a", "n1", 1, (0,), claim="shared", cpu="2"), Running("b", "n1", 50, (0,), claim="shared")],
        [Pending("p", 100, 1, cpu="2")],
        cpu="4",
    )
    out = plan_preempt(c)
    assert _evicted(out) == ["a"]
    (shared,) = out.released
    assert shared.status is not None and shared.status.allocation is not None
    assert [r.name for r in shared.status.reserved_for] == ["b"]


def test_a_claim_reserved_only_for_an_evicted_pod_that_does_not_name_it_is_released() -> None:
    """The resource claim controller drops a deleted pod from every claim's reservedFor and
    deallocates a claim whose reservedFor empties, whether or not the pod's spec names it
    (docs/semantics.md, "Preemption", "Claims"; `Snapshot.evict`): so the model frees that GPU
    with the pod, under both models (before, the model kept that GPU held whatever it evicted,
    and p was left out)."""
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    (a,) = [d for d in docs if d["kind"] == "Pod" and d["metadata"]["name"] == "a"]
    del a["spec"]["resourceClaims"], a["spec"]["containers"][0]["resources"]["claims"]
    cluster, opts = Cluster.from_objects(docs), Options.of(None)
    for model in ("counts", "devices"):
        out = solve_setting(setting(cluster, None, None, opts), opts, model=model)
        assert _node(out, "p") == "n1" and _evicted(out) == ["a"], model
        (freed,) = out.released
        assert freed.metadata.name == "a-gpu" and freed.status is not None and freed.status.allocation is None


def test_evicting_frees_node_resources() -> None:
    c = build({"n1": 2}, [Running("a", "n1", 1, (), cpu="4")], [Pending("p", 100, 1, cpu="6")], cpu="8")
    out = plan_preempt(c)
    assert _evicted(out) == ["a"] and out.pod("default/p").placed


def test_no_pod_is_evicted_for_a_gang_that_does_not_start() -> None:
    """The gang needs both pods; only one can ever fit: nothing is evicted."""
    c = build(
        {"n1": 1},
        [Running("a", "n1", 1, (0,))],
        [Pending("g1", 100, 1, group="g"), Pending("g2", 100, 1, group="g")],
        gangs={"g": 2},
    )
    out = plan_preempt(c)
    assert out.victims == [] and not any(p.placed for p in out.pods)


def test_the_batch_evicts_less_than_one_pod_at_a_time() -> None:
    """Upstream places a first (a free GPU on n1), then b must evict the priority-50 pod on n2;
    the batch puts a on n2's free GPU and lets b evict the priority-3 pod on n1."""
    c = build(
        {"n1": 2, "n2": 3},
        [Running("low", "n1", 3, (0,)), Running("mid", "n2", 50, (0, 1))],
        [Pending("a", 100, 1), Pending("b", 90, 2)],
    )
    out = plan_preempt(c)
    ref = reference_preempt(c)
    assert [v[0] for v in ref.evicted] == ["default/mid"]
    assert _evicted(out) == ["low"]
    assert out.weight == ref.weight and ref.valid


def test_the_batch_places_a_pod_one_at_a_time_strands() -> None:
    """Upstream places a on n1's free GPU, then b (2 GPUs) finds no node it may preempt on;
    the batch evicts for both."""
    c = build(
        {"n1": 2, "n2": 2},
        [Running("r1", "n1", 5, (0,)), Running("q", "n2", 95, (0, 1))],
        [Pending("a", 100, 1), Pending("b", 90, 2)],
    )
    out = plan_preempt(c)
    ref = reference_preempt(c)
    assert ref.placed == {"default/a": "n1"}
    assert out.pod("default/a").placed and out.pod("default/b").placed
    assert out.weight > ref.weight


def test_a_pdb_selector_that_matches_nothing_is_left_out_with_a_warning() -> None:
    c = build(
        {"n1": 1},
        [Running("a", "n1", 1, (0,))],
        [Pending("p", 100, 1)],
        [pdb("x", {"app": "nope"}, allowed=0)],
    )
    out = plan_preempt(c)
    assert _evicted(out) == ["a"] and out.stats["pdb_violations"] == 0
    assert out.stats["warnings"] == [
        "PodDisruptionBudget default/x: spec.selector matches no pod of the input (an empty selector "
        "matches none): it protects nothing here"
    ]


def test_a_candidate_sharing_a_claim_with_a_pending_pod_is_an_error() -> None:
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 0)])
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "p":
            d["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "a-gpu"}]
    with pytest.raises(InputError, match="also used by pending pod default/p"):
        plan_preempt(Cluster.from_objects(docs))


def test_the_input_is_not_modified() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    before = copy.deepcopy([o.dump() for o in [*c.pods.values(), *c.claims.values()]])
    plan_preempt(c)
    assert [o.dump() for o in [*c.pods.values(), *c.claims.values()]] == before


def test_the_evicted_pod_carries_the_disruption_target_condition() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    out = plan_preempt(c)
    (victim,) = out.victims
    assert victim.pod is not None
    doc = evicted_pod(victim.pod)
    assert {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}.items() <= doc[
        "status"
    ]["conditions"][-1].items()
    assert "for default/p (priority 100 > 1)" in victim.reason


def test_the_python_api_plan_with_preempt() -> None:
    c = build({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1)])
    out = dra_solver.plan(c, preempt=True)
    assert isinstance(out, PreemptOutcome) and _evicted(out) == ["a"]
    plain = dra_solver.plan(c)
    assert not plain.pod("default/p").placed


def test_same_input_same_plan() -> None:
    c = build(
        {"n1": 2, "n2": 2},
        [Running(f"r{i}", f"n{1 + i % 2}", i, (i // 2,)) for i in range(4)],
        [Pending("p", 100, 1), Pending("q", 100, 1)],
    )
    first, second = plan_preempt(c, seed=3), plan_preempt(c, seed=3)
    assert [(p.name, p.node) for p in first.pods] == [(p.name, p.node) for p in second.pods]
    assert _evicted(first) == _evicted(second)


def test_only_pods_on_nodes_the_preemptor_may_use_are_evicted() -> None:
    """p may run on n2 only (nodeSelector): the priority-1 pod on n1 stays, n2's goes."""
    docs = cluster_docs(
        {"n1": 1, "n2": 1}, [Running("a", "n1", 1, (0,)), Running("b", "n2", 5, (0,))], [Pending("p", 100, 1)]
    )
    for d in docs:
        if d["kind"] == "Pod" and d["metadata"]["name"] == "p":
            d["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n2"}
    c = Cluster.from_objects(docs)
    out = plan_preempt(c)
    assert _evicted(out) == ["b"] and _node(out, "p") == "n2"
    assert [v[0] for v in reference_preempt(c).evicted] == ["default/b"]
