"""`Planner.update`'s incremental path (issue #30 §2): pods only, on the first-fit run the last
plan left (`firstfit.resumable.Resumable`). Each rule it relies on, as a test: it decides as first fit
over every node would; every plan it returns passed the checker, new placements by the
checker itself (a corrupted one is refused) and kept ones by the plan that placed them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from benchmarks.churn import churn, heterogeneous, pod_of
from dra_solver import Cluster, Planner, check_cluster, plan
from dra_solver.api.models import ResourceClaim
from dra_solver.check import CheckFailed
from dra_solver.output.objects import cluster_after
from dra_solver.planning.ledger import Ledger
from dra_solver.planning.outcome import PlanOutcome, PodPlan
from dra_solver.replan import planner as planner_module

OPTS: dict[str, Any] = {"seed": 3, "time_limit": 2.0}


@pytest.fixture(autouse=True)
def _no_fresh_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fresh plan beside the update (`SMALL`): what is tested is the incremental path."""
    monkeypatch.setattr(planner_module, "SMALL", 0)


def _decided(p: PodPlan) -> tuple[str | None, list[Any]]:
    """A pod's node and its claims' device results (what the plan decides for it)."""
    results = [
        [(r.driver, r.pool, r.device) for r in c.status.allocation.devices.results]
        if c.status and c.status.allocation
        else None
        for c in p.claims
    ]
    return p.node, results


def _present(planner: Planner, remove: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [
        r for r in remove if (r[1], r[2]) in planner.cluster.pods or (r[1], r[2]) in planner.cluster.claims
    ]


@pytest.mark.parametrize("full", [True, False], ids=["full", "roomy"])
@pytest.mark.parametrize("seed", range(4))
def test_pods_only_update_is_first_fit_on_what_the_last_plan_left(seed: int, full: bool) -> None:
    """A cluster planned by first fit — with more pods than room, or with room to spare —
    then pods come and go: each update places exactly what first fit over every node places
    on the cluster with the kept pods bound where they are — same pods, same nodes, same
    devices — though it tries a pod only on the nodes not known to refuse its kind and those
    changed since, and the pods left out only where room was released."""
    rng = random.Random(seed)
    nodes, pods = (
        (rng.randint(4, 8), rng.randint(40, 70)) if full else (rng.randint(8, 12), rng.randint(8, 14))
    )
    planner = Planner(
        Cluster.from_objects(heterogeneous(nodes, pods, seed=200 + seed)), allocator="reference", **OPTS
    )
    prev = planner.plan()
    assert (prev.placed < len(prev.pods)) == full  # pods left out, or not
    for step in range(3):
        fraction = 0.1 + 0.1 * step if full else 1.0  # roomy: as many new pods as there are
        remove, add = churn(pods, fraction, seed=seed * 10 + step, start=step * 100)
        remove = _present(planner, remove)
        out = planner.update(add=add, remove=remove)
        assert str(out.stats["update"]).startswith("pods only")
        gone = {f"{ns}/{n}" for kind, ns, n in remove if kind == "Pod"}
        kept = [p for p in prev.pods if p.placed and p.name not in gone]
        pinned = Cluster.from_objects(cluster_after(planner.cluster, kept))
        fresh = plan(pinned, allocator="reference", **OPTS)
        assert fresh.pods  # the pods left out and the new ones
        for p in fresh.pods:
            assert _decided(out.pod(p.name)) == _decided(p), p.name
        for p in kept:
            assert out.pod(p.name).node == p.node
        assert out.stats["moved"] == 0
        assert check_cluster(Cluster.from_objects(cluster_after(planner.cluster, out.pods))) == []
        prev = out


def _no_such_device(claims: Sequence[ResourceClaim]) -> list[ResourceClaim]:
    """The claims with every allocated device renamed to one no slice has."""
    out = []
    for c in claims:
        assert c.status is not None and c.status.allocation is not None
        alloc = c.status.allocation
        results = [r.model_copy(update={"device": "no-such-device"}) for r in alloc.devices.results]
        devices = alloc.devices.model_copy(update={"results": results})
        status = c.status.model_copy(update={"allocation": alloc.model_copy(update={"devices": devices})})
        out.append(c.model_copy(update={"status": status}))
    return out


def _corrupting(monkeypatch: pytest.MonkeyPatch) -> None:
    results = Ledger.results

    def corrupt(self: Ledger, *args: Any) -> list[ResourceClaim]:
        return _no_such_device(results(self, *args))

    monkeypatch.setattr(Ledger, "results", corrupt)


def test_a_corrupted_placement_of_an_update_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: first fit's placements in an update name a device their node does not have.
    The checker refuses the first of them (`Resumable` commits through it); the update raises
    and the planner is as it was: its next update, uncorrupted, is the one a twin planner
    that never saw the bad update gives."""
    cluster = Cluster.from_objects(heterogeneous(6, 12, seed=40))  # room to spare: new pods are placed
    planner = Planner(cluster, allocator="reference", **OPTS)
    twin = Planner(cluster, allocator="reference", **OPTS)
    first = planner.plan()
    twin.plan()
    add = pod_of(0, random.Random(4), prefix="new")
    with monkeypatch.context() as m:
        _corrupting(m)
        with pytest.raises(CheckFailed):
            planner.update(add=add)
    assert planner.cluster is cluster and planner.outcome is first
    assert _all_decided(planner.update(add=add)) == _all_decided(twin.update(add=add))


def test_a_corrupted_starting_plan_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: the placements of the first plan are corrupted. What guarantees the nodes an
    update does not touch is that plan's check (the update keeps their pods and everything
    they read unchanged): `Planner.plan` refuses the corrupted plan, so no update starts
    from it."""
    planner = Planner(Cluster.from_objects(heterogeneous(4, 10, seed=41)), allocator="reference", **OPTS)
    _corrupting(monkeypatch)
    with pytest.raises(CheckFailed):
        planner.plan()
    assert planner.outcome is None


def _all_decided(out: PlanOutcome) -> list[tuple[str, tuple[str | None, list[Any]]]]:
    return [(p.name, _decided(p)) for p in out.pods]


def test_left_out_pods_sharing_a_claim_are_retried_together() -> None:
    """Two pending pods share one claim that fits nowhere (they were left out as one unit);
    a removal frees a node: both are retried as one unit — placed together on it — and the
    plan passes the checker."""
    objs: list[dict[str, Any]] = heterogeneous(2, 0)  # node-00000, node-00001: 8 GPUs each
    rng = random.Random(9)
    fill = [pod_of(i, rng) for i in range(2)]
    for claim, _ in fill:
        claim["spec"]["devices"] = {
            "requests": [{"name": "dev", "exactly": {"deviceClassName": "gpu", "count": 8}}]
        }
    for claim, pod in fill:
        pod["spec"]["priority"] = 3
        objs += [claim, pod]
    claim, pod = pod_of(10, rng, prefix="shared")
    claim["spec"]["devices"] = {
        "requests": [{"name": "dev", "exactly": {"deviceClassName": "gpu", "count": 4}}]
    }
    pod["spec"]["priority"] = 0
    twin = {**pod, "metadata": {**pod["metadata"], "name": "shared-twin", "uid": "uid-shared-twin"}}
    objs += [claim, pod, twin]
    planner = Planner(Cluster.from_objects(objs), allocator="reference", **OPTS)
    first = planner.plan()
    assert first.placed == 2
    out = planner.update(
        remove=[("Pod", "default", "pod-00000"), ("ResourceClaim", "default", "pod-00000-claim")]
    )
    assert str(out.stats["update"]).startswith("pods only")
    a, b = out.pod("default/shared-00010"), out.pod("default/shared-twin")
    assert a.placed and b.placed and a.node == b.node
    after = Cluster.from_objects(cluster_after(planner.cluster, out.pods))
    assert check_cluster(after) == []
