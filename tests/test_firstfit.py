"""The incremental first fit (`solver.planners.firstfit`) decides exactly as the per-pod path did.

The oracle below is the first fit as it was before it became incremental: for every (pod,
node) a fresh Problem from the whole cluster with every earlier placement (`build_problem`),
the reference search, the checker on the whole cluster. Same node, same devices, same
shareIDs, same errors and the same per-node reasons are required on generated clusters with
pods that share claim specs (so cached answers are reused), network-attached devices and
shared counters (so a placement changes what other nodes see), and small step budgets (so
aborted searches are reasons).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from example_counts import examples
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from strategies import DRIVER, GATES, INPUT_ERRORS, scenario
from test_crowded_reasons_shared import groups_in_node_order
from test_node_resources import TEMPLATE, container, ext_pod, gpu_class, gpus, node, pod

from benchmarks.workloads import mixed_cluster
from dra_solver.api.cluster import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.check import CheckFailed, check
from dra_solver.errors import DRASolverError, InvalidPools, SearchAborted
from dra_solver.pipeline import plan
from dra_solver.planners.firstfit import batch, engine
from dra_solver.planners.firstfit.batch import FirstFit
from dra_solver.planners.firstfit.engine import _Placing
from dra_solver.planning.job import Job, Options, Unit
from dra_solver.planning.ledger import Ledger
from dra_solver.planning.outcome import PodPlan
from dra_solver.planning.resolve import join_shared, make_job, resolve_units, with_nodes
from dra_solver.problem.build import build_problem
from dra_solver.problem.demand import NodeBook
from dra_solver.reasons import Kind, Reason
from dra_solver.reasons.words import DETAIL_NODES, insufficient, no_node_head, say, why_not
from dra_solver.reference import DEFAULT_MAX_STEPS, allocate_reference
from dra_solver.reference.reasons import why_unschedulable


def per_pod_first_fit(job: Job, max_steps: int) -> list[PodPlan]:
    """The slow oracle: the first fit before it was incremental, step for step."""
    ledger = Ledger(job)
    book = job.book.fresh()
    out: dict[int, PodPlan] = {}
    for i in sorted(range(len(job.units)), key=lambda i: -job.units[i].priority):
        out[i] = _place(job, ledger, book, job.units[i], max_steps)
    return [out[i] for i in range(len(job.units))]


def _place(job: Job, ledger: Ledger, book: NodeBook, unit: Unit, max_steps: int) -> PodPlan:
    reasons: list[tuple[str | None, str]] = []
    templates: list[str] = []  # each reason said of any node (`say(where=False)`)
    error: DRASolverError | None = None
    for n in job.nodes:
        if n in unit.blocked:
            reasons.append((n, say(unit.blocked[n])))
            templates.append(say(unit.blocked[n], where=False))
            continue
        variant = book.variant(unit.needs, n)
        short = book.refusal(variant, n)
        if short:
            reasons.append((n, insufficient(short)))
            templates.append(insufficient(short))
            continue
        claims = (*unit.claims, *variant.claims)
        if not claims:
            book.take(variant, n)
            return PodPlan(unit.name, n, [], None, unit.priority, placed=True)
        problem = build_problem(ledger.cluster, claims, n, job.gates, cache=job.cache)
        try:
            assignment = allocate_reference(problem, max_steps=max_steps)
        except InvalidPools as exc:
            reasons.append((n, str(exc)))
            templates.append(str(exc))
            error = exc
            continue
        except SearchAborted as exc:
            if max_steps >= DEFAULT_MAX_STEPS:
                raise
            for alt in problem.alternatives:
                for cand in alt.candidates:
                    if cand.error is not None:
                        raise cand.error from None
            reasons.append((n, str(exc)))
            templates.append(str(exc))
            error = exc
            continue
        if assignment is None:
            why = why_unschedulable(problem)
            reasons.append((n, say(why)))
            templates.append(say(why, where=False) if n is not None else say(why))
            continue
        done = ledger.results(problem, claims, assignment)
        ledger.commit(done, n)
        book.take(variant, n)
        return PodPlan(unit.name, n, done, None, unit.priority, placed=True, extended=variant.statuses)
    return PodPlan(
        unit.name,
        None,
        list(unit.claims),
        _line(reasons, templates),
        unit.priority,
        error=error if len(job.nodes) == 1 else None,
        node_reasons=dict(reasons),
    )


def _line(reasons: list[tuple[str | None, str]], templates: list[str]) -> str:
    """The oracle's line from each node's words, grouped by their text (as first fit grouped
    them before its reasons were values): the one node's words, each node's, or the two most
    common texts with their node counts."""
    if len(reasons) == 1:
        return reasons[0][1]
    if len(reasons) <= DETAIL_NODES:  # nodes with equal words named together, in node order
        alike: dict[str, list[str]] = {}
        for (n, _), t in zip(reasons, templates, strict=True):
            alike.setdefault(t, []).append(str(n))
        named = {
            t: ns[0] if len(ns) == 1 else ", ".join(ns[:-1]) + " and " + ns[-1] for t, ns in alike.items()
        }
        return "no node fits the pod: " + "; ".join(f"{named[t]}: {t}" for t in alike)
    return no_node_head(len(reasons)) + "; ".join(groups_in_node_order(templates))


def _decisions(pods: list[PodPlan]) -> list[tuple[Any, ...]]:
    return [
        (
            p.name,
            p.placed,
            p.node,
            [c.dump() for c in p.claims],
            dict(p.node_reasons),
            p.reason if len(p.node_reasons) <= DETAIL_NODES else None,
            type(p.error),
            {k: v.dump() for k, v in p.extended.items()},
        )
        for p in pods
    ]


def _both(job: Job, max_steps: int) -> None:
    """The incremental first fit and the oracle agree, errors included."""
    try:
        want = per_pod_first_fit(job, max_steps)
    except INPUT_ERRORS as exc:  # the input's fault; CheckFailed propagates
        with pytest.raises(type(exc)) as info:
            FirstFit(max_steps=max_steps).plan(job)
        assert str(info.value) == str(exc)
        return
    got = FirstFit(max_steps=max_steps).plan(job).pods
    assert _decisions(got) == _decisions(want)


@st.composite
def planning(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[str]], list[str], list[int]]:
    """Pods (lists of claims) over 2-4 nodes; some claims are copies of others under new names
    (same shape), some devices are network-attached (every node sees them)."""
    objs, names = draw(scenario(max_claims=4))
    claims = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaim" and "status" not in o}
    for name in list(names):
        for j in range(draw(st.integers(0, 3))):
            twin = copy.deepcopy(claims[name])
            twin["metadata"]["name"] = f"{name}-twin{j}"
            objs.append(twin)
            names.append(twin["metadata"]["name"])
    if draw(st.booleans()):
        devs = []
        for i in range(draw(st.integers(1, 3))):
            dev: dict[str, Any] = {
                "name": f"net-{i}",
                "attributes": {"numa": {"int": i % 2}, "model": {"string": "a"}},
                "capacity": {"memory": {"value": "80Gi"}},
            }
            if draw(st.booleans()):
                dev["allowMultipleAllocations"] = True
            devs.append(dev)
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "net"},
                "spec": {
                    "driver": DRIVER,
                    "allNodes": True,
                    "pool": {"name": "net", "generation": 1, "resourceSliceCount": 1},
                    "devices": devs,
                },
            }
        )
    slices = [o["spec"] for o in objs if o["kind"] == "ResourceSlice"]
    nodes = sorted({s["nodeName"] for s in slices if "nodeName" in s})
    nodes += ["n9"][: draw(st.integers(0, 1))]  # a node without local devices
    owner = [draw(st.integers(0, len(names) - 1)) for _ in names]
    pods = [[n for n, o in zip(names, owner, strict=True) if o == p] for p in range(len(names))]
    pods = [p for p in pods if p]
    prios = [draw(st.integers(0, 1)) for _ in pods]
    return objs, pods, nodes, prios


def _job(cluster: Cluster, pods: Any, nodes: list[str], prios: list[int] | None = None) -> Job:
    units = join_shared(resolve_units(cluster, pods, prios))
    units = [with_nodes(cluster, u, nodes) for u in units]
    return make_job(cluster, units, nodes, Options(allocator="reference", feature_gates=GATES))


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning(), st.sampled_from([DEFAULT_MAX_STEPS, 40]))
def test_incremental_first_fit_makes_the_per_pod_decisions(case, max_steps: int) -> None:
    objs, pods, nodes, prios = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    _both(_job(cluster, pods, nodes, prios), max_steps)


def _gpu_cluster(nodes: int, gpus: int, pods: int, *, selector: bool = False) -> list[dict[str, Any]]:
    """Template pods (one GPU each) over labelled nodes; with `selector` every other node is
    outside the pods' nodeSelector, so the scan skips blocked nodes between fitting ones."""
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
            },
        },
    ]
    for n in range(nodes):
        labels = {"kubernetes.io/hostname": f"n{n}", "pool": "a" if n % 2 == 0 else "b"}
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{n}", "labels": labels}})
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"n{n}-gpu"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": f"n{n}",
                    "pool": {"name": f"n{n}", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
                },
            }
        )
    for p in range(pods):
        spec: dict[str, Any] = {
            "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        }
        if selector and p % 3 == 0:
            spec["nodeSelector"] = {"pool": "b"}
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{p}", "namespace": "default"},
                "spec": spec,
            }
        )
    return objs


def test_template_pods_with_node_selectors_get_the_per_pod_nodes_and_reasons() -> None:
    cluster = Cluster.from_objects(_gpu_cluster(nodes=6, gpus=2, pods=16, selector=True))
    job = _job(cluster, None, list(cluster.nodes))
    _both(job, DEFAULT_MAX_STEPS)
    out = FirstFit().plan(job)
    assert out.placed == 12 and not out.pods[-1].placed


def test_an_unplaced_pod_over_many_nodes_gets_one_line_and_every_node_in_node_reasons() -> None:
    cluster = Cluster.from_objects(_gpu_cluster(nodes=10, gpus=1, pods=13, selector=True))
    out = plan(cluster, allocator="reference")
    last = out.pod("default/p12")
    assert not last.placed and len(last.node_reasons) == 10
    reason = last.reason or ""
    # The GPU nodes come first: only the plan's earlier pods stand in the way there
    # (solver.planners.crowding); the nodes the pod itself rules out are counted by reason.
    assert "\n" not in reason and reason.startswith(
        "no node fits the pod (0 of 10 nodes): fits on n1, n3, n5, n7 and 1 more alone, "
        "but other pods of this plan take the room there (first fit: the same or a higher "
        "priority, earlier in the queue): on n1, devices it could use go to default/p0; "
    )
    assert reason.endswith("; 5 nodes: the node does not match the pod's nodeSelector pool=b")
    assert "n2" not in reason  # nodes the pod rules out are counted, not listed
    assert last.node_reasons["n3"] == "devices it could use go to default/p3"
    assert "node n2 does not match" in last.node_reasons["n2"]


def _taint(node: str, key: str) -> Reason:
    return Reason.of(Kind.TAINT, node=node, taint=key, effect="NoSchedule")


def test_the_summary_counts_the_most_common_reasons_first() -> None:
    keys = ["busy"] * 6 + ["selector"] * 3 + ["taint"]
    reasons = [(f"n{i}", _taint(f"n{i}", k)) for i, k in enumerate(keys)]
    said = "the node has the taint {}:NoSchedule, which the pod does not tolerate"
    assert why_not(reasons) == (
        f"no node fits the pod (0 of 10 nodes): 6 nodes: {said.format('busy')}; "
        f"3 nodes: {said.format('selector')}; 1 more node for 1 other reason(s)"
    )


def test_reasons_that_differ_only_in_numbers_group_with_ranges() -> None:
    def short(usable: int) -> Reason:
        rejected = ((Reason.of(Kind.NO_CAPACITY_LEFT), 0),)
        part = Reason.of(
            Kind.SHORT, "gpu", count=8, matching=8, rejected=rejected, usable=usable, candidates=8
        )
        return Reason.of(Kind.REQUEST, "default/c", request="gpu", parts=(part,), node="n")

    # 1 free is another sentence ("1 of the remaining 8 is free"), not in the range
    reasons = [(f"n{i}", short(u)) for i, u in enumerate((0, 2, 3, 0, 2, 1))] + [("n6", _taint("n6", "x"))]
    assert why_not(reasons) == (
        "no node fits the pod (0 of 7 nodes): 5 nodes: claim default/c: request gpu: needs 8 device(s), "
        "8 match the selectors; of those 0 have not enough capacity left; 0-3 of the remaining 8 are free; "
        "1 node: claim default/c: request gpu: needs 8 device(s), 8 match the selectors; "
        "of those 0 have not enough capacity left; "
        "1 of the remaining 8 is free; 1 more node for 1 other reason(s)"
    )


def test_few_nodes_keep_every_node_reason_in_the_line() -> None:
    reasons = [("a", _taint("a", "x")), ("b", _taint("b", "y"))]
    assert why_not(reasons) == (
        "no node fits the pod: a: the node has the taint x:NoSchedule, which the pod does not tolerate; "
        "b: the node has the taint y:NoSchedule, which the pod does not tolerate"
    )
    assert why_not(reasons[:1]) == "node a has the taint x:NoSchedule, which the pod does not tolerate"


def test_two_runs_on_one_job_decide_the_same() -> None:
    """No state survives a run (answers, versions and floors belong to one plan)."""
    cluster = Cluster.from_objects(_gpu_cluster(nodes=2, gpus=1, pods=3))
    job = _job(cluster, None, list(cluster.nodes))
    assert _decisions(FirstFit().plan(job).pods) == _decisions(FirstFit().plan(job).pods)


@st.composite
def filling(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str]]:
    """Plain GPUs on 2-5 nodes, some held already, and many pods of a few shapes (counts 1-3,
    firstAvailable, admin access, All, a network pool): nodes fill up one after the other, so
    the pre-filter, the floors and the answer cache decide most tries."""
    n_nodes = draw(st.integers(2, 5))
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    ]
    held: list[dict[str, Any]] = []
    for n in range(n_nodes):
        devs = [{"name": f"g{i}"} for i in range(draw(st.integers(0, 4)))]
        for d in devs:
            if draw(st.integers(0, 3)) == 0:
                d["allowMultipleAllocations"] = True
        pool = f"n{n}"
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"n{n}-gpu"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": f"n{n}",
                    "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                    "devices": devs,
                },
            }
        )
        held += [
            {"request": "r", "driver": DRIVER, "pool": pool, "device": d["name"]}
            for d in devs
            if not d.get("allowMultipleAllocations") and draw(st.integers(0, 3)) == 0
        ]
    if draw(st.booleans()):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "net"},
                "spec": {
                    "driver": DRIVER,
                    "allNodes": True,
                    "pool": {"name": "net", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"net-{i}"} for i in range(draw(st.integers(1, 2)))],
                },
            }
        )
    if held:
        old = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "old", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {"devices": {"results": held}}},
        }
        objs.append(old)
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["count", "count", "first", "admin", "all", "two"]))
        exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": draw(st.integers(1, 3))}
        if kind == "admin":
            exactly["adminAccess"] = True
        if kind == "all":
            exactly = {"deviceClassName": "gpu", "allocationMode": "All"}
        if kind == "first":
            subs = [{"name": f"s{k}", "deviceClassName": "gpu", "count": c} for k, c in enumerate((3, 1))]
            requests: list[dict[str, Any]] = [{"name": "r", "firstAvailable": subs}]
        elif kind == "two":
            requests = [{"name": f"r{k}", "exactly": {"deviceClassName": "gpu"}} for k in range(2)]
        else:
            requests = [{"name": "r", "exactly": exactly}]
        shapes.append({"devices": {"requests": requests}})
    names = []
    for p in range(draw(st.integers(2, 12))):
        spec = copy.deepcopy(shapes[draw(st.integers(0, len(shapes) - 1))])
        names.append(f"p{p:02d}")
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": names[-1], "namespace": "default"},
                "spec": spec,
            }
        )
    return objs, [f"n{n}" for n in range(n_nodes)]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filling())
def test_filling_nodes_one_after_the_other_makes_the_per_pod_decisions(case) -> None:
    objs, nodes = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    gates = "DRAPrioritizedList=true,DRAAdminAccess=true,DRAConsumableCapacity=true"
    units = [with_nodes(cluster, u, nodes) for u in join_shared(resolve_units(cluster, None, None))]
    _both(
        make_job(cluster, units, nodes, Options(allocator="reference", feature_gates=gates)),
        DEFAULT_MAX_STEPS,
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planning(), st.data())
def test_the_check_on_a_nodes_part_of_the_cluster_rejects_what_the_whole_check_rejects(case, data) -> None:
    """First fit checks a placement against the node's slices and the claims holding devices in
    their pools only; it must accept and reject exactly what `solver.check` on the whole
    cluster accepts and rejects — tried here with first fit's own placements, some with one
    device swapped for one picked at random from every slice (other nodes', network-attached,
    held ones), and checked on a node picked at random."""
    objs, pods, nodes, _ = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    job = _job(cluster, pods, nodes)
    try:
        first = FirstFit().plan(job)
    except INPUT_ERRORS:  # the generated input's fault; CheckFailed (a wrong answer) propagates
        assume(False)
        return
    chosen = [p for p in first.pods if p.placed]
    assume(chosen)
    pod = data.draw(st.sampled_from(chosen))
    everything = [(s.spec.driver, s.spec.pool.name, d.name) for s in cluster.slices for d in s.spec.devices]
    placed = []
    for c in pod.claims:
        dump = c.dump()
        results = dump["status"]["allocation"]["devices"]["results"]
        if results and data.draw(st.booleans()):
            k = data.draw(st.integers(0, len(results) - 1))
            driver, pool, device = data.draw(st.sampled_from(everything))
            results[k].update({"driver": driver, "pool": pool, "device": device})
        placed.append(ResourceClaim.model_validate(dump))
    run = _Placing(job, Ledger(job), DEFAULT_MAX_STEPS)
    state = data.draw(st.sampled_from([s for s in run.nodes if s.name == pod.node] + run.nodes))
    whole = check(run.ledger.cluster, placed, node=state.name, gates=job.gates)
    if whole:
        with pytest.raises(CheckFailed):
            run._check(placed, state)
    else:
        run._check(placed, state)


@st.composite
def with_node_resources(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Nodes with cpu and pod slots (some with a device plugin's example.com/gpu), GPUs behind a
    class that serves example.com/gpu (KEP-5004), and pods of four kinds: a template GPU claim
    with cpu, extended-resource pods (a special claim on nodes without the plugin), cpu-only
    pods without claims, and GPU pods bound to one node group by a nodeSelector."""
    objs: list[dict[str, Any]] = [gpu_class(), TEMPLATE]
    for n in range(draw(st.integers(2, 5))):
        allocatable = {"cpu": str(draw(st.integers(1, 6))), "pods": str(draw(st.integers(1, 4)))}
        if draw(st.integers(0, 3)) == 0:
            allocatable["example.com/gpu"] = str(draw(st.integers(0, 3)))
        body = node(f"n{n}", **allocatable)
        body["metadata"]["labels"]["group"] = "a" if n % 2 == 0 else "b"
        objs += [body, gpus(f"n{n}", draw(st.integers(0, 3)))]
    for p in range(draw(st.integers(2, 10))):
        kind = draw(st.sampled_from(["gpu", "gpu", "ext", "cpu", "selector"]))
        cpu = {"cpu": str(draw(st.integers(1, 2)))}
        if kind == "ext":
            objs.append(ext_pod(f"p{p}", count=draw(st.integers(1, 2))))
        elif kind == "cpu":
            objs.append(pod(f"p{p}", [container(requests=cpu)]))
        else:
            extra = {"nodeSelector": {"group": "b"}} if kind == "selector" else {}
            objs.append(pod(f"p{p}", [container(requests=cpu)], gpu=True, **extra))
    return objs


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_node_resources())
def test_node_resources_and_extended_resources_make_the_per_pod_decisions(objs) -> None:
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    _both(_job(cluster, None, list(cluster.nodes)), DEFAULT_MAX_STEPS)


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_nodes_a_shape_can_never_fit_again_are_passed_over_with_the_per_pod_decisions(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30's heterogeneous cluster, small (counters, matchAttribute, four priorities,
    more asked than exists): first fit skips the nodes where a shape found no allocation by
    a full search (`_Placing.fails_for_good`, `next_try`), and decides exactly as the
    per-pod path that asks every node. 40 pods (was 70: the oracle asks every node for
    every pod) still leave pods unplaced and mark 79-129 shapes failed for good."""
    cluster = Cluster.from_objects(mixed_cluster(12, 40, seed=seed))
    job = _job(cluster, None, list(cluster.nodes))
    marked: list[int] = []
    keep = _Placing.fails_for_good

    def counting(self: _Placing, shape: Any, index: int) -> None:
        marked.append(index)
        keep(self, shape, index)

    monkeypatch.setattr(_Placing, "fails_for_good", counting)
    _both(job, DEFAULT_MAX_STEPS)
    assert marked  # the skip was exercised, not only the plain scan


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_pods_turned_away_again_get_the_reasons_of_a_full_rewording(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shape that fits nowhere, turned away again after a change, has only the changed
    nodes worded anew (`firstfit.engine._nowhere` with the earlier answer): every pod's line and
    per-node reasons equal those of wording every node each time, over more nodes than the
    line names one by one (so the grouped summary is compared too)."""
    cluster = Cluster.from_objects(mixed_cluster(12, 90, seed=seed))
    job = _job(cluster, None, list(cluster.nodes))
    assert len(job.nodes) > DETAIL_NODES
    reused: list[int] = []
    keep = engine._nowhere

    def counting(tried: Any, before: Any = None, again: Any = ()) -> Any:
        if before is not None:
            reused.append(len(again))
        return keep(tried, before, again)

    monkeypatch.setattr(batch, "_nowhere", counting)
    got = FirstFit().plan(job).pods
    monkeypatch.setattr(batch, "_nowhere", lambda tried, before=None, again=(): keep(tried))
    want = FirstFit().plan(job).pods
    assert reused  # the earlier answer was used, not only a full wording
    assert [(p.name, p.reason, dict(p.node_reasons)) for p in got] == [
        (p.name, p.reason, dict(p.node_reasons)) for p in want
    ]


@pytest.mark.parametrize("seed", [19, 21, 22])
def test_a_gang_undone_forgets_the_nodes_passed_over(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19's gangs, small: a gang short of its minCount is undone (`_Placing.revert`),
    which frees what its pods took, so a node a shape failed on for good may fit again. First
    fit with the skip (`fails_for_good`, `next_try`) decides exactly as first fit that asks
    every node every time."""
    from benchmarks.gang_workloads import gangs

    objs, _ = gangs(nodes=12, groups=10, pods=(2, 6), seed=seed)
    cluster = Cluster.from_objects(objs)
    nodes = list(cluster.nodes)
    units = [with_nodes(cluster, u, nodes) for u in join_shared(resolve_units(cluster, None, None))]
    job = make_job(cluster, units, nodes, Options(allocator="reference"))
    used = {"revert": 0, "skip": 0}
    revert, skip = _Placing.revert, _Placing.fails_for_good

    def reverting(self: _Placing, free: Any) -> None:
        used["revert"] += 1
        revert(self, free)

    def skipping(self: _Placing, shape: Any, index: int) -> None:
        used["skip"] += 1
        skip(self, shape, index)

    monkeypatch.setattr(_Placing, "revert", reverting)
    monkeypatch.setattr(_Placing, "fails_for_good", skipping)
    got = _decisions(FirstFit().plan(job).pods)
    assert used["revert"] and used["skip"]  # a gang was undone, and the skip was in use
    monkeypatch.setattr(_Placing, "fails_for_good", lambda self, shape, index: None)
    assert got == _decisions(FirstFit().plan(job).pods)


@st.composite
def network_pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str]]:
    """Nodes that share network-attached pools (issue #40): most without slices of their own,
    labelled alike or not, so that first fit groups them into worlds (`firstfit.engine.World`); pools
    selected by a label, by allNodes, per device, or by node name; shared counters that the
    partitions consume; claims of 1-3 devices, some matched to one pool, some in All mode;
    a claim already holding a partition."""
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    ]
    n_nodes = draw(st.integers(2, 5))
    for n in range(n_nodes):
        labels = {"kubernetes.io/hostname": f"n{n}", "rack": draw(st.sampled_from(["a", "a", "b"]))}
        if draw(st.booleans()):
            labels["zone"] = "z"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{n}", "labels": labels}})
        if draw(st.integers(0, 3)) == 0:  # a node with a device of its own: a world alone
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"n{n}-local"},
                    "spec": {
                        "driver": DRIVER,
                        "nodeName": f"n{n}",
                        "pool": {"name": f"n{n}-local", "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "local-0", "attributes": {"pool": {"int": 9}}}],
                    },
                }
            )
    rack_a = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]
    }
    zone = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}
    by_name = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]
    }
    held = []
    for p in range(draw(st.integers(1, 3))):
        pool = f"net-{p}"
        where = draw(st.sampled_from(["all", "rack", "rack", "zone", "name", "per-device"]))
        scope: dict[str, Any] = {
            "all": {"allNodes": True},
            "rack": {"nodeSelector": rack_a},
            "zone": {"nodeSelector": zone},
            "name": {"nodeSelector": by_name},
            "per-device": {"perDeviceNodeSelection": True},
        }[where]
        size = draw(st.integers(1, 2))
        counters = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{pool}-counters"},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
                "allNodes": True,
                "sharedCounters": [
                    {"name": "cs", "counters": {f"c{i}": {"value": str(size)} for i in range(2)}}
                ],
            },
        }
        devices = []
        for d in range(draw(st.integers(1, 4))):
            uses = {f"c{i}": {"value": "1"} for i in range(2) if draw(st.booleans())}
            dev: dict[str, Any] = {"name": f"part-{d}", "attributes": {"pool": {"int": p}}}
            if uses:
                dev["consumesCounters"] = [{"counterSet": "cs", "counters": uses}]
            if where == "per-device":
                dev.update(
                    draw(st.sampled_from([{"allNodes": True}, {"nodeSelector": rack_a}, {"nodeName": "n1"}]))
                )
            devices.append(dev)
            if draw(st.integers(0, 5)) == 0:
                held.append({"request": "r", "driver": DRIVER, "pool": pool, "device": dev["name"]})
        objs.append(counters)
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{pool}-devices"},
                "spec": {
                    "driver": DRIVER,
                    "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
                    **scope,
                    "devices": devices,
                },
            }
        )
    if held:
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "old", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": held}}},
            }
        )
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["count", "count", "matched", "matched", "all"]))
        exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": draw(st.integers(1, 3))}
        if kind == "all":
            exactly = {"deviceClassName": "gpu", "allocationMode": "All"}
        devices_spec: dict[str, Any] = {"requests": [{"name": "r", "exactly": exactly}]}
        if kind == "matched":
            devices_spec["constraints"] = [{"requests": ["r"], "matchAttribute": f"{DRIVER}/pool"}]
        shapes.append({"devices": devices_spec})
    for c in range(draw(st.integers(2, 10))):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"p{c:02d}", "namespace": "default"},
                "spec": copy.deepcopy(shapes[draw(st.integers(0, len(shapes) - 1))]),
            }
        )
    return objs, [f"n{n}" for n in range(n_nodes)]


@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_pools(), st.sampled_from([DEFAULT_MAX_STEPS, 30]))
def test_nodes_that_share_network_attached_pools_get_the_per_pod_decisions(case, max_steps: int) -> None:
    """Worlds (nodes that see the same pools share one context, one answer per shape, one
    Problem refreshed after placements instead of rebuilt) decide exactly as the per-pod path."""
    objs, nodes = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    units = [with_nodes(cluster, u, nodes) for u in join_shared(resolve_units(cluster, None, None))]
    job = make_job(
        cluster, units, nodes, Options(allocator="reference", feature_gates="DRAPartitionableDevices=true")
    )
    run = _Placing(job, Ledger(job), max_steps)
    event(f"{len(run.worlds)} worlds for {len(run.nodes)} nodes")
    _both(job, max_steps)
