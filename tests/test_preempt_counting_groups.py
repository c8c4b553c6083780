"""The counting model on nodes whose devices form several interchangeable groups
(`preempt.counting`; docs/semantics.md, "Preemption", "Which model"): two GPU models on one
node, each pending request selecting one model. Where every pending request takes all of one
group or none of it, the counting model applies and proves the per-device model's objective
tuple (weight, PDB violations, highest, sum, count) on every generated case; where two
requests may take overlapping but different device sets, it refuses."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from example_counts import examples
from preempt_cases import Pending, Running, cluster_docs
from test_preempt_differential import CPU, _model_tuple, generate

from dra_solver.api.cluster import Cluster
from dra_solver.planning.job import Options
from dra_solver.preempt.model import setting, solve_setting

CASES = int(os.environ.get("PREEMPT_CASES", examples(60)))
MODEL = 'device.attributes["gpu.example.com"].model == "{}"'


def _selector(model: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": MODEL.format(model)}}]


def two_models(docs: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Each node's GPUs split into models a and b (at a random index); each pending claim's
    request selects one model, or (one claim in four, when it asks for 2 or more) asks for some
    GPUs of each model in two requests."""
    for d in docs:
        if d["kind"] == "ResourceSlice":
            devices = d["spec"]["devices"]
            split = rng.randint(0, len(devices))
            for i, dev in enumerate(devices):
                dev["attributes"] = {"model": {"string": "a" if i < split else "b"}}
        if d["kind"] == "ResourceClaim" and "status" not in d:
            request = d["spec"]["devices"]["requests"][0]
            count = request["exactly"]["count"]
            if count >= 2 and rng.random() < 0.25:
                first = rng.randint(1, count - 1)
                request["exactly"]["count"] = first
                request["exactly"]["selectors"] = _selector("a")
                d["spec"]["devices"]["requests"].append(
                    {
                        "name": "gpu-b",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "count": count - first,
                            "selectors": _selector("b"),
                        },
                    }
                )
            else:
                request["exactly"]["selectors"] = _selector(rng.choice("ab"))
    return docs


def _both(cluster: Cluster) -> tuple[Any, Any]:
    opts = Options.of(None, time_limit=10)
    by_counts = solve_setting(setting(cluster, None, None, opts), opts, model="counts")
    by_devices = solve_setting(setting(cluster, None, None, opts), opts, model="devices")
    return by_counts, by_devices


@pytest.mark.parametrize("seed", range(CASES))
def test_the_counting_model_with_two_gpu_models_proves_the_per_device_models_optimum(seed: int) -> None:
    nodes, running, pending, pdbs, gangs = generate(seed)
    docs = cluster_docs(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    cluster = Cluster.from_objects(two_models(docs, random.Random(1000 + seed)))
    by_counts, by_devices = _both(cluster)
    assert by_counts.stats["preempt_model"] == "counts"
    assert by_devices.stats["preempt_model"] == "devices"
    assert by_counts.verdict.status == by_devices.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)


def _hand_cluster(p_model: str) -> Cluster:
    """n1: gpu-0, gpu-1 of model a, gpu-2, gpu-3 of model b; `a` (priority 1) holds gpu-0 and
    gpu-1, `b` (priority 2) holds gpu-2; the pending pod asks for 1 GPU of `p_model`."""
    docs = cluster_docs(
        {"n1": 4}, [Running("a", "n1", 1, (0, 1)), Running("b", "n1", 2, (2,))], [Pending("p", 100, 1)]
    )
    for d in docs:
        if d["kind"] == "ResourceSlice":
            for i, dev in enumerate(d["spec"]["devices"]):
                dev["attributes"] = {"model": {"string": "a" if i < 2 else "b"}}
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "p-gpu":
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = _selector(p_model)
    return Cluster.from_objects(docs)


def test_a_pod_asking_for_the_held_model_evicts_a_holder_of_that_model() -> None:
    out = solve_setting(setting(_hand_cluster("a"), None, None, Options.of(None)), Options.of(None))
    assert out.stats["preempt_model"] == "counts"
    assert [v.name for v in out.victims] == ["default/a"] and out.pod("default/p").placed


def test_a_pod_asking_for_the_model_with_a_free_device_evicts_nothing() -> None:
    out = solve_setting(setting(_hand_cluster("b"), None, None, Options.of(None)), Options.of(None))
    assert out.stats["preempt_model"] == "counts"
    assert out.victims == [] and out.pod("default/p").placed


def test_requests_that_may_take_overlapping_device_sets_stay_on_the_counting_model() -> None:
    docs = cluster_docs({"n1": 4}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1), Pending("q", 50, 1)])
    for d in docs:  # p: model a only; q: any GPU — {gpu-0, gpu-1} and all four overlap
        if d["kind"] == "ResourceSlice":
            for i, dev in enumerate(d["spec"]["devices"]):
                dev["attributes"] = {"model": {"string": "a" if i < 2 else "b"}}
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "p-gpu":
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = _selector("a")
    cluster = Cluster.from_objects(docs)
    opts = Options.of(None)
    out = solve_setting(setting(cluster, None, None, opts), opts)
    by_devices = solve_setting(setting(cluster, None, None, opts), opts, model="devices")
    assert out.stats["preempt_model"] == "counts" and out.verdict.status == "OPTIMAL"
    assert _model_tuple(out) == _model_tuple(by_devices) and out.placed == 2
