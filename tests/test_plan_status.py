"""What a plan's status, objective and bound claim (docs/semantics.md, "What a status proves").

Each test is a case where the claim used to be false: pods sharing a claim counted once, a
first-fit plan that beat a model stricter than upstream printed as OPTIMAL with the bound
raised to meet it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import claim, device, device_class, request, resource_slice

from dra_solver import Cluster, plan
from dra_solver.cel import EvalCache
from dra_solver.gates import FeatureGates
from dra_solver.planners.bounds import COMPLETE
from dra_solver.problem.flat import claim_weight

ROOT = Path(__file__).resolve().parent.parent


def _pod(name: str, claims: list[str], priority: int) -> dict[str, Any]:
    spec = {"priority": priority, "resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]}
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def test_pods_sharing_a_claim_count_each_with_its_own_weight() -> None:
    """One GPU: either the claim pods a and b share (priority 1 each: weight 2 + 2) or pod c's
    own claim (priority 2: weight 3). Counting the shared claim's pods once (weight 2) would
    prefer c, which first fit (highest priority first) places."""
    cluster = Cluster.from_objects(
        [
            device_class("gpu"),
            resource_slice("gpus", [device("gpu-0")]),
            claim("shared", [request("gpu", count=1)]),
            claim("solo", [request("gpu", count=1)]),
            _pod("a", ["shared"], 1),
            _pod("b", ["shared"], 1),
            _pod("c", ["solo"], 2),
        ]
    )
    out = plan(cluster)
    assert {p.name: p.placed for p in out.pods} == {"default/a": True, "default/b": True, "default/c": False}
    assert [p.priority for p in out.pods] == [1, 1, 2]  # each pod keeps its own priority
    assert out.weight == 4
    assert out.weight == 4 and out.verdict.status == "OPTIMAL"
    assert out.verdict.bound == 4


def test_readme_example_objective_counts_every_placed_pod() -> None:
    out = plan(Cluster.from_paths([ROOT / "docs/examples/cluster-dump.yaml"]))
    assert out.placed == 7
    assert out.weight == out.weight == sum(claim_weight(p.priority) for p in out.pods if p.placed)
    assert out.weight == 7


def test_all_mode_shares_placed_one_by_one_as_together() -> None:
    """All-mode shares over two multi-allocatable GPUs (20Gi and 40Gi), 10Gi each, five pods.
    One after another, the third pod's All-set still holds the full 20Gi GPU, which fails it
    (upstream since kubernetes#140769; before it upstream left that GPU out and placed four):
    first fit and the joint model both place two. The All pods are still counted as ones the
    model may judge more strictly (`sequential_units`, conservative), so the bound is the
    relaxation (2 + the five All pods as placeable, capped at 5): FEASIBLE, not OPTIMAL."""
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    gpus = [
        device("gpu-0", multi=True, capacity={"memory": {"value": "20Gi", "requestPolicy": policy}}),
        device("gpu-1", multi=True, capacity={"memory": {"value": "40Gi", "requestPolicy": policy}}),
    ]
    share = {"allocationMode": "All", "capacity": {"requests": {"memory": "10Gi"}}}
    claims = [claim(f"c{i}", [request("gpu", **share)]) for i in range(5)]
    cluster = Cluster.from_objects([device_class("gpu"), resource_slice("gpus", gpus), *claims])
    out = plan(cluster, [[f"c{i}"] for i in range(5)], ["node-1"])
    s = out.stats
    told = out.verdict
    assert out.placed == 2 and told.objective == 2
    assert "fallback" not in s
    assert told.status == "FEASIBLE"
    assert told.bound == 5 and told.gap == 3


def test_the_aggregated_budget_is_work_not_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`patterns.ModelContext`: the time left is the budget less the CP-SAT work charged,
    whatever the wall clock does meanwhile (same input and seed, same plan); only an explicit
    deadline that has passed, or a stop request, leaves nothing."""
    import time

    from dra_solver import interrupt
    from dra_solver.deadline import Deadline
    from dra_solver.planners.aggregated.patterns import ModelContext

    ctx = ModelContext(Cluster(), [], [], FeatureGates(), EvalCache(), 0, 2.0)
    assert ctx.left() == 2.0
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + 3600.0)  # an hour passes on the wall
    ctx.charge(0.5)
    assert ctx.left() == 1.5
    late = Deadline(now + 60)
    spent = ModelContext(Cluster(), [], [], FeatureGates(), EvalCache(), 0, 2.0, late)
    assert spent.left() == 0.0 and late.fired  # past the explicit deadline
    try:
        interrupt.request()
        assert ctx.left() == 0.0
    finally:
        interrupt.reset()


def test_share_ids_already_in_the_cluster_are_never_drawn_again() -> None:
    """A cluster planned before with the same seed holds the IDs a fresh generator draws first
    (a partitioned plan's repair pass after its parts: the bound test found the collision)."""
    from dra_solver.results import ShareIDs

    first = ShareIDs(0).next()
    again = ShareIDs(0, taken={first})
    drawn = [again.next() for _ in range(3)]
    assert first not in drawn and len(set(drawn)) == 3


def _gpu_pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    """A pod of one GPU from the template `one-gpu`, asking `cpu`."""
    body = {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        **spec,
    }
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def _gpu_nodes(gpus: int, cpu: str = "4") -> list[dict[str, Any]]:
    """node-1 with `gpus` GPUs and `cpu` allocatable, the template `one-gpu`."""
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
    }
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
        "status": {"allocatable": {"cpu": cpu, "pods": "110"}},
    }
    gpu_list = [device(f"gpu-{i}") for i in range(gpus)]
    return [device_class("gpu"), template, node, resource_slice("gpus", gpu_list)]


def _no_model(monkeypatch: Any) -> None:
    """Make both models fail loudly if they run (the tests plan with `per_device_max=0`: the
    job counts as large, where the aggregated model would plan)."""
    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.perdevice as perdevice
    import dra_solver.planners.policy as policy

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a model ran although first fit placed every pod that may be placed")

    real = policy.aggregate

    def not_before(job: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        """Before first fit (`without_first_fit`) the aggregated model is asked whether it
        applies: on one node it does not, and says so at once."""
        if first is not None:
            refuse()
        out = real(job, first, *args, **kwargs)
        assert isinstance(out, str)
        return out

    monkeypatch.setattr(policy, "aggregate", not_before)
    monkeypatch.setattr(expansion, "aggregate", not_before)
    monkeypatch.setattr(perdevice, "solve", refuse)


def test_first_fit_placing_every_pod_is_optimal_without_a_model(monkeypatch: Any) -> None:
    """Three GPU pods, four GPUs: first fit places all three. No plan places more than every
    pod, so the plan is OPTIMAL with that weight as its bound, and no model runs."""
    _no_model(monkeypatch)
    cluster = Cluster.from_objects([*_gpu_nodes(4), *(_gpu_pod(f"p{i}", priority=i) for i in range(3))])
    out = plan(cluster, per_device_max=0)
    s, told = out.stats, out.verdict
    assert out.placed == 3
    assert told.status == "OPTIMAL" and told.gap == 0
    assert told.objective == told.bound == sum(claim_weight(i) for i in range(3))
    assert told.bound_from == COMPLETE
    assert str(s["aggregated"]).startswith("no: first fit placed every pod")


def test_pods_no_node_may_take_do_not_stop_first_fit_being_optimal(monkeypatch: Any) -> None:
    """Two pods fit; one asks for a node label no node has, one for more cpu than any node
    allocates: no plan places either, so first fit's two are OPTIMAL, the bound their weight
    (not the weight of all four), without a model."""
    _no_model(monkeypatch)
    pods = [
        _gpu_pod("fits-1"),
        _gpu_pod("nowhere", nodeSelector={"zone": "mars"}),
        _gpu_pod("too-big", cpu="64"),
        _gpu_pod("fits-2"),
    ]
    out = plan(Cluster.from_objects([*_gpu_nodes(4), *pods]), per_device_max=0)
    told = out.verdict
    assert {p.name for p in out.pods if p.placed} == {"default/fits-1", "default/fits-2"}
    assert told.status == "OPTIMAL" and told.bound == told.objective == 2 * claim_weight(0)
    assert told.bound_from == COMPLETE
    assert all(p.reason for p in out.pods if not p.placed)


def test_a_small_job_first_fit_completed_still_runs_the_model() -> None:
    """Below `PER_DEVICE_MAX` (`Options.per_device_max`) the per-device model also weighs the
    strategy's device preferences after the weight, which first fit does not: it runs although
    first fit placed every pod."""
    cluster = Cluster.from_objects([*_gpu_nodes(4), *(_gpu_pod(f"p{i}") for i in range(3))])
    out = plan(cluster)
    assert out.verdict.bound_from != COMPLETE and "cpsat_status" in out.stats
    assert out.verdict.status == "OPTIMAL" and out.verdict.bound == 3 * claim_weight(0)


def test_a_pod_left_out_that_might_fit_runs_the_model() -> None:
    """Three pods of two cpu, one GPU each; the node has three GPUs but four cpu. First fit
    leaves the third out because the first two took the cpu — before the plan the node would
    take it, so first fit has not proven anything: the model runs and proves the bound."""
    cluster = Cluster.from_objects([*_gpu_nodes(3), *(_gpu_pod(f"p{i}", cpu="2") for i in range(3))])
    out = plan(cluster, per_device_max=0)
    s, told = out.stats, out.verdict
    assert out.placed == 2
    assert told.bound_from != COMPLETE
    assert not str(s.get("aggregated", "")).startswith("no: first fit placed every pod")
    assert told.status == "OPTIMAL" and told.bound == 2 * claim_weight(0)


def test_a_gpu_taken_by_an_earlier_pod_runs_the_model() -> None:
    """Two pods, one GPU: first fit places one, the other fits the node before the plan (only
    the device is taken). Not complete: the model proves the bound."""
    cluster = Cluster.from_objects([*_gpu_nodes(1), _gpu_pod("a"), _gpu_pod("b")])
    told = plan(cluster, per_device_max=0).verdict
    assert told.bound_from != COMPLETE
    assert told.status == "OPTIMAL" and told.bound == claim_weight(0)


def _gpu_fleet(nodes: int, pods: int, extra: list[dict[str, Any]]) -> Cluster:
    """`nodes` nodes of two GPUs each and `pods` pods of one GPU (`_gpu_pod`), then `extra`."""
    objs: list[dict[str, Any]] = _gpu_nodes(0)[:2]  # the class and the template
    for n in range(nodes):
        name = f"node-{n}"
        meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {}})
        objs.append(resource_slice(f"{name}-gpus", [device("gpu-0"), device("gpu-1")], node=name))
    return Cluster.from_objects([*objs, *(_gpu_pod(f"p{i}", priority=i % 3) for i in range(pods)), *extra])


def test_a_model_plan_proven_optimal_at_scale_needs_no_first_fit(monkeypatch: Any) -> None:
    """Above `PER_DEVICE_MAX` pods x nodes the aggregated model runs before first fit; its plan
    proven OPTIMAL places at least first fit's weight, so first fit never runs — and the plan
    places the same weight as the run that starts from first fit."""
    from dra_solver.planners.firstfit.batch import FirstFit

    cluster = _gpu_fleet(6, 20, [_gpu_pod("nowhere", nodeSelector={"zone": "mars"})])
    with_first = plan(cluster)
    assert with_first.verdict.status == "OPTIMAL" and with_first.stats["reference_placed"] == 12

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("first fit ran although the model proved its plan optimal")

    monkeypatch.setattr(FirstFit, "plan", refuse)
    out = plan(cluster, per_device_max=0)
    s = out.stats
    assert out.verdict.status == "OPTIMAL" and out.verdict.objective == out.verdict.bound == with_first.weight
    assert "reference_placed" not in s and str(s["first_fit"]).startswith("not run")
    assert all(p.reason for p in out.pods if not p.placed)


def test_a_pod_no_node_takes_is_worded_on_every_node_without_first_fit() -> None:
    """Without first fit, a pod the plan leaves out that fits alone on no node gets every
    node's reason on the input's cluster — the words first fit gives it."""
    cluster = _gpu_fleet(6, 20, [_gpu_pod("nowhere", nodeSelector={"zone": "mars"})])
    expected = plan(cluster).pod("default/nowhere")
    out = plan(cluster, per_device_max=0)
    assert "reference_placed" not in out.stats
    pod = out.pod("default/nowhere")
    assert not pod.placed
    assert pod.reason == expected.reason and "nodeSelector zone=mars" in str(pod.reason)
    assert dict(pod.node_reasons) == dict(expected.node_reasons) and len(pod.node_reasons) == 6


def test_first_fit_runs_when_the_model_does_not_prove_its_plan(monkeypatch: Any) -> None:
    """A model plan not proven optimal proves nothing about first fit: the run goes on from
    first fit, as always. Here the model before first fit is told that its bound is none."""
    from dataclasses import replace

    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.policy as policy

    firsts: list[object] = []
    real = policy.aggregate

    def unproven(job: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        firsts.append(first)
        agg = real(job, first, *args, **kwargs)
        return replace(agg, bound_proven=False) if first is None and not isinstance(agg, str) else agg

    monkeypatch.setattr(policy, "aggregate", unproven)
    monkeypatch.setattr(expansion, "aggregate", unproven)
    out = plan(_gpu_fleet(6, 20, []), per_device_max=0)
    assert firsts[0] is None and len(firsts) == 2 and firsts[1] is not None  # again, after first fit
    assert out.stats["reference_placed"] == 12 and "first_fit" not in out.stats
    assert out.verdict.status == "OPTIMAL"


def test_a_model_that_does_not_apply_is_not_tried_twice(monkeypatch: Any) -> None:
    """Why the aggregated model does not apply does not depend on first fit's plan: found
    before first fit, it is not looked for again after."""
    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.policy as policy

    calls: list[object] = []

    def never(job: Any, first: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(first)
        return "does not apply, for the test"

    monkeypatch.setattr(policy, "aggregate", never)
    monkeypatch.setattr(expansion, "aggregate", never)
    out = plan(_gpu_fleet(6, 20, []), per_device_max=0)
    assert calls == [None]
    assert out.stats["aggregated"] == "no: does not apply, for the test"
    assert out.stats["reference_placed"] == 12 and out.verdict.status == "OPTIMAL"


def test_an_interrupt_during_the_model_before_first_fit_keeps_its_plan(monkeypatch: Any) -> None:
    """Ctrl-C while the aggregated model runs before first fit: first fit would now place
    nothing, so the model's checked plan so far is returned (not an empty one), its status
    from its own bound, and its pods left out say the run was interrupted — not that they were
    left out for others."""
    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.policy as policy
    from dra_solver import interrupt

    real = policy.aggregate

    def cut_short(job: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        agg = real(job, first, *args, **kwargs)
        interrupt.request()  # the signal arrives as the model ends
        return agg

    monkeypatch.setattr(policy, "aggregate", cut_short)
    monkeypatch.setattr(expansion, "aggregate", cut_short)
    try:
        out = plan(_gpu_fleet(6, 20, []), per_device_max=0)
    finally:
        interrupt.reset()
    assert out.placed == 12 and out.stats["first_fit"] == "not run: interrupted during the aggregated model"
    assert "reference_placed" not in out.stats
    left = [p for p in out.pods if not p.placed]
    assert left and all("the run was stopped" in str(p.reason) for p in left)
