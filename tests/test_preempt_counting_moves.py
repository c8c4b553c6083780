"""Moves on the counting model (`preempt.counting`, docs/semantics.md, "Preemption", "Which
model"): where a node's GPUs are two groups, the counting model with moves proves the objective
tuple (weight, PDB violations, highest, sum, count, moves) the per-device model proves — exact,
not an approximation; the input goes to the per-device model only where the counting model does
not apply, and the plan says why; and the matching of moved pods to destination slots
(`counting.match_moves`) never sends a pod back to its own node. On the generated clusters of
`tests/test_preempt_moves_exhaustive.py` both models are compared there, with the enumerator's
tuple (each case solved once for the three)."""

from __future__ import annotations

import functools
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from preempt_cases import Pending, both_models, cluster_docs, defrag_docs
from test_preempt_moves_exhaustive import CPU, _model_tuple, generate
from typer.testing import CliRunner

from dra_solver.api.cluster import Cluster
from dra_solver.cli.main import app
from dra_solver.planning.job import Options
from dra_solver.preempt import PreemptOutcome, plan_preempt
from dra_solver.preempt.counting import match_moves
from dra_solver.preempt.model import setting, solve_setting

CASES = int(os.environ.get("PREEMPT_MOVES_CASES", "120"))
runner = CliRunner()


def test_the_two_model_cases_move_pods_and_use_both_groups() -> None:
    """Not vacuous: some of those plans move pods, on nodes with GPUs of both models."""
    moving = sum(bool(_two_model_case(seed)[0].moves) for seed in range(0, CASES, 2))
    assert moving >= 3, moving


def _overlapping_docs() -> list[dict[str, Any]]:
    """`defrag_docs` and a pending 1-GPU pod asking for gpu-7 only: on every node its request
    and the others may take overlapping but different GPUs."""
    docs = defrag_docs()
    docs += cluster_docs({}, [], [Pending("small", 100, 1)])[1:]
    for d in docs:
        if d["kind"] == "ResourceSlice":
            d["spec"]["devices"] = [
                {"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(8)
            ]
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "small-gpu":
            d["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
                {"cel": {"expression": 'device.attributes["gpu.example.com"].index == 7'}}
            ]
    return docs


def _constrained_docs() -> list[dict[str, Any]]:
    """`defrag_docs` with the pending pod's claim under a matchAttribute constraint: a case
    the counting model does not take."""
    docs = defrag_docs()
    for d in docs:
        if d["kind"] == "ResourceSlice":
            for dev in d["spec"]["devices"]:
                dev["attributes"] = {"model": {"string": "x"}}
        if d["kind"] == "ResourceClaim" and "status" not in d:
            d["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/model"}]
    return docs


def test_both_paths_moves_on_counts_where_a_node_differs() -> None:
    """The same defragmentation by counts where the GPUs are alike and where one pending
    request may take only some GPUs of each node (flows per node, `counting._flows`) — the
    per-device model's moves; where a claim has a constraint the per-device model answers,
    and the plan says so."""
    out = plan_preempt(Cluster.from_objects(defrag_docs()), allow_moves=True)
    assert out.stats["preempt_model"] == "counts" and "preempt_model_reason" not in out.stats
    assert sorted(m.name for m in out.moves) == ["default/a", "default/b"] and not out.victims
    for model in ("auto", "devices"):
        opts = Options.of(None)
        s = setting(Cluster.from_objects(_overlapping_docs()), None, None, opts, allow_moves=True)
        out = solve_setting(s, opts, model=model)
        assert out.stats["preempt_model"] == ("counts" if model == "auto" else "devices")
        assert out.verdict.status == "OPTIMAL" and out.placed == 2 and not out.victims
        assert sorted(m.name for m in out.moves) == ["default/a", "default/b"]
    out = plan_preempt(Cluster.from_objects(_constrained_docs()), allow_moves=True)
    assert out.stats["preempt_model"] == "devices" and out.placed == 1
    assert "constraint" in str(out.stats["preempt_model_reason"])


@pytest.mark.parametrize("seed", range(200))
def test_match_moves_never_sends_a_pod_home(seed: int) -> None:
    """Random origins and slots meeting the row (pods leaving o + slots on o <= total): every
    pod gets a slot on another node, every slot is used once."""
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(2, 6))]
    while True:
        pods = [(k, rng.choice(names)) for k in range(rng.randint(1, 12))]
        slots: dict[str, int] = {}
        for _ in pods:
            n = rng.choice(names)
            slots[n] = slots.get(n, 0) + 1
        total = len(pods)
        if all(sum(o == n for _, o in pods) + slots.get(n, 0) <= total for n in names):
            break
    out = match_moves(pods, slots)
    home = dict(pods)
    assert sorted(k for k, _ in out) == sorted(k for k, _ in pods)
    assert all(home[k] != d for k, d in out)
    used: dict[str, int] = {}
    for _, d in out:
        used[d] = used.get(d, 0) + 1
    assert used == {n: q for n, q in slots.items() if q}


def test_match_moves_refuses_what_the_row_forbids() -> None:
    with pytest.raises(ValueError, match="no slot off node a"):
        match_moves([(0, "a"), (1, "a")], {"a": 1, "b": 1})


MODEL = 'device.attributes["gpu.example.com"].model == "{}"'


def _two_models(docs: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Two GPU models per node: the GPUs a ReplicaSet's pod holds are model b, the others a or
    b at random; the templates (the replacements' claims) select b, each pending claim a or b.
    Every request then takes all of one model's GPUs on a node: two device groups, the
    replacements needing only the second."""
    owned = {
        f"{d['metadata']['name']}-gpu"
        for d in docs
        if d["kind"] == "Pod" and d["metadata"].get("ownerReferences")
    }
    held = set()
    for d in docs:
        if d["kind"] == "ResourceClaim" and d["metadata"]["name"] in owned and "status" in d:
            held |= {(r["pool"], r["device"]) for r in d["status"]["allocation"]["devices"]["results"]}
    for d in docs:
        if d["kind"] == "ResourceSlice":
            pool = d["spec"]["pool"]["name"]
            for dev in d["spec"]["devices"]:
                model = "b" if (pool, dev["name"]) in held else rng.choice("ab")
                dev["attributes"] = {"model": {"string": model}}
        selects = d["kind"] == "ResourceClaimTemplate" or (d["kind"] == "ResourceClaim" and "status" not in d)
        if selects:
            requests = (d["spec"]["spec"] if d["kind"] == "ResourceClaimTemplate" else d["spec"])["devices"]
            model = "b" if d["kind"] == "ResourceClaimTemplate" else rng.choice("ab")
            requests["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": MODEL.format(model)}}]
    return docs


@functools.cache
def _two_model_case(seed: int) -> tuple[PreemptOutcome, PreemptOutcome]:
    """`both_models` (with moves) on `seed`'s generated case with two GPU models per node
    (`_two_models`), once per test process (read by the test of each seed and the not-vacuous
    count above)."""
    nodes, running, pending, pdbs, gangs = generate(seed)
    docs = cluster_docs(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    return both_models(Cluster.from_objects(_two_models(docs, random.Random(2000 + seed))), allow_moves=True)


@pytest.mark.parametrize("seed", range(0, CASES, 2))
def test_moves_on_two_gpu_models_prove_the_per_device_models_optimum(seed: int) -> None:
    """Moves where a node's GPUs are two groups: a replacement needs GPUs of one group only."""
    by_counts, by_devices = _two_model_case(seed)
    assert by_counts.verdict.status == by_devices.verdict.status == "OPTIMAL"
    assert _model_tuple(by_counts) == _model_tuple(by_devices)


def test_the_output_says_which_model_answered_and_why(tmp_path: Path) -> None:
    """stderr names the per-device model and the reason; `-o json` carries both."""
    docs = _constrained_docs()
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    got = runner.invoke(app, ["plan", str(path), "--preempt", "--allow-moves", "-o", "json"])
    assert got.exit_code == 0, got.stderr
    assert "answered by the per-device model" in got.stderr and "constraint" in got.stderr
    notes = json.loads(got.stdout)["metadata"]["annotations"]
    assert notes["dra-solver.io/preempt-model"] == "devices"
    assert "constraint (matchAttribute)" in notes["dra-solver.io/preempt-model-reason"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump_all(defrag_docs()))
    got = runner.invoke(app, ["plan", str(plain), "--preempt", "--allow-moves", "-o", "json"])
    notes = json.loads(got.stdout)["metadata"]["annotations"]
    assert (
        notes["dra-solver.io/preempt-model"] == "counts" and "dra-solver.io/preempt-model-reason" not in notes
    )
    assert "per-device" not in got.stderr
