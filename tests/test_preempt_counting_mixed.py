"""The counting model (`preempt.counting`, docs/semantics.md, "Preemption", "Which model") on
the inputs that used to send the whole plan to the per-device model (issue #43): gangs with a
topology constraint (one domain per gang) and nodes on which two pending requests may take
overlapping but different devices (flows per node). On small generated clusters, the counting
model proves the objective tuple (weight, PDB violations, highest, sum, count, moves) the
per-device model proves, with and without moves; the cases are checked not to be vacuous."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from example_counts import sized
from preempt_cases import Pending, both_models, cluster_docs
from test_preempt_moves_exhaustive import CPU, _model_tuple, generate

from benchmarks.preempt_workloads import served_as_extended
from dra_solver.api.cluster import Cluster
from dra_solver.preempt import PreemptOutcome, plan_preempt

CASES = sized(30, 600)
"""Seeds per comparison: 30 under the `ci` profile, 600 under `long`."""


def _both(docs: list[dict[str, Any]], moves: bool) -> tuple[PreemptOutcome, PreemptOutcome]:
    """`preempt_cases.both_models` on `docs`, the per-device plan proven OPTIMAL."""
    by_counts, by_devices = both_models(Cluster.from_objects(docs), moves)
    assert by_devices.verdict.status == "OPTIMAL"
    return by_counts, by_devices


@functools.cache
def _solved(case: str, seed: int, moves: bool, advertised: int = 0) -> tuple[PreemptOutcome, PreemptOutcome]:
    """`_both` on `seed`'s case of a kind (`_racked`, `_mixed`, `_served`), once per test process:
    the test of each seed and the not-vacuous counts read the same plans (they only read them)."""
    docs = _served(seed, advertised) if case == "served" else {"racked": _racked, "mixed": _mixed}[case](seed)
    return _both(docs, moves)


def _racked(seed: int) -> list[dict[str, Any]]:
    """`generate(seed)` with its first two pending pods (and a third, when there is one) in a
    gang of minCount 2 whose pods must share a value of the node label `rack`: n0 and n1 in
    rack a, n2 in rack b, or (odd seeds) n2 in no rack."""
    nodes, running, pending, pdbs, _ = generate(seed)
    while len(pending) < 2:
        pending.append(Pending(f"p{len(pending)}", 100, 2))
    for p in pending[:3]:
        p.group = "g"
    docs = cluster_docs(nodes, running, pending, pdbs, cpu=str(CPU), gangs={"g": 2})
    racks = {"n0": "a", "n1": "a", "n2": "b" if seed % 2 == 0 else None}
    for d in docs:
        if d["kind"] == "Node" and racks[d["metadata"]["name"]] is not None:
            d["metadata"]["labels"]["rack"] = racks[d["metadata"]["name"]]
        if d["kind"] == "PodGroup":
            d["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    return docs


@pytest.mark.parametrize("moves", [False, True])
@pytest.mark.parametrize("seed", range(CASES))
def test_topology_gangs_on_the_counting_model_prove_the_per_device_optimum(seed: int, moves: bool) -> None:
    by_counts, by_devices = _solved("racked", seed, moves)
    assert by_counts.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)


def test_topology_gang_cases_place_gangs_in_one_rack() -> None:
    """Not vacuous: the gang starts on some seeds, always within one rack, and on some the rack
    rule costs weight (the plan without it places more)."""
    started = costly = 0
    for seed in range(CASES):
        out = _solved("racked", seed, True)[0]
        nodes = {
            p.node for p in out.pods if p.placed and p.name in {"default/p0", "default/p1", "default/p2"}
        }
        racks = {"n0": "a", "n1": "a", "n2": "b"}
        assert len({racks[n] for n in nodes if n is not None}) <= 1, nodes
        started += bool(nodes)
        docs = _racked(seed)
        for d in docs:
            if d["kind"] == "PodGroup":
                del d["spec"]["schedulingConstraints"]
        free = plan_preempt(Cluster.from_objects(docs), allow_moves=True, time_limit=10)
        costly += free.weight > out.weight
    assert started >= CASES // 4, started
    assert costly >= 1, costly


def _mixed(seed: int) -> list[dict[str, Any]]:
    """`generate(seed)` with some GPUs of each node fast (a random number of them, the first
    ones) and the first pending pod asking for fast GPUs only: on a node with fast and slow
    GPUs its request and the others' may take overlapping but different sets of devices."""
    rng = random.Random(7000 + seed)
    nodes, running, pending, pdbs, gangs = generate(seed)
    docs = cluster_docs(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    for d in docs:
        if d["kind"] == "ResourceSlice":
            devices = d["spec"]["devices"]
            fast = rng.randint(0, len(devices))
            for i, dev in enumerate(devices):
                dev["attributes"] = {"fast": {"bool": i < fast}}
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "p0-gpu":
            d["spec"]["devices"]["requests"][0]["exactly"]["count"] = rng.randint(1, 2)
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
                {"cel": {"expression": 'device.attributes["gpu.example.com"].fast'}}
            ]
    return docs


@pytest.mark.parametrize("moves", [False, True])
@pytest.mark.parametrize("seed", range(CASES))
def test_nodes_whose_devices_differ_stay_on_the_counting_model_and_prove_its_optimum(
    seed: int, moves: bool
) -> None:
    by_counts, by_devices = _solved("mixed", seed, moves)
    assert by_counts.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)


def test_the_differing_nodes_matter() -> None:
    """Not vacuous: on some seeds the fast-only pod is placed on a node with both kinds of
    GPU beside another pending pod, and on some the plan moves pods."""
    beside = moving = 0
    for seed in range(CASES):
        out = _solved("mixed", seed, True)[0]
        p0 = out.pod("default/p0")
        others = [p for p in out.pods if p.placed and p.name != "default/p0"]
        beside += p0.placed and any(p.node == p0.node for p in others)
        moving += bool(out.moves)
    assert beside >= 2, beside
    assert moving >= 2, moving


def _served(seed: int, advertised: int = 0) -> list[dict[str, Any]]:
    """`generate(seed)` with the pending pods asking for GPUs as the extended resource
    `example.com/gpu`, which the DeviceClass `gpu` serves (KEP-5004): on a node that does not
    advertise it, a pod with its special claim. `advertised`: n0 advertises that many of it
    (a device plugin's), so the pods there count it as a node resource (several forms)."""
    nodes, running, pending, pdbs, gangs = generate(seed)
    docs = cluster_docs(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    return served_as_extended(
        docs, {p.name: p.gpus for p in pending}, {"n0": advertised} if advertised else {}
    )


@pytest.mark.parametrize("advertised", [0, 2, 4])
@pytest.mark.parametrize("moves", [False, True])
@pytest.mark.parametrize("seed", range(0, CASES, 2))
def test_dra_served_extended_resources_stay_on_the_counting_model_and_prove_its_optimum(
    seed: int, moves: bool, advertised: int
) -> None:
    by_counts, by_devices = _solved("served", seed, moves, advertised)
    assert by_counts.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)
    placed = [p for p in by_counts.pods if p.placed]
    assert all(bool(p.extended) == (p.node != "n0" or not advertised) for p in placed), placed


def test_advertised_extended_resources_are_used_on_the_counting_model() -> None:
    """Not vacuous: with n0 advertising the resource, some plans place a pending pod there
    (counted as a node resource) and others on the nodes DRA serves it on."""
    native = served = 0
    for seed in range(0, CASES, 2):
        out = _solved("served", seed, True, 4)[0]
        native += any(p.placed and p.node == "n0" for p in out.pods)
        served += any(p.placed and p.node != "n0" for p in out.pods)
    assert native >= 2 and served >= 2, (native, served)
