"""`explain` where the bounded reference search gives up (a claim that makes upstream's first
fit explode, docs/benchmarks.md workload (e)): CP-SAT decides, and what cannot be decided is
said so — never "cannot be allocated" on a guess."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from benchmarks import workloads as w
from dra_solver import Cluster
from dra_solver import why as explain
from dra_solver.explain import diagnosis
from dra_solver.explain.diagnosis import GAVE_UP
from dra_solver.reasons.words import UNDECIDED

GATES = "DRAListTypeAttributes=true"


def _fleet(nodes: list[str], devices: int, requests: int) -> Cluster:
    """`hard_list_match` on each node: past 200,000 steps of the reference search either way."""
    cls, sl, claim = w.hard_list_match(devices=devices, requests=requests)
    objs: list[dict[str, Any]] = [cls, claim]
    for n in nodes:
        s = copy.deepcopy(sl)
        s["metadata"]["name"] = f"{n}-gpu"
        s["spec"]["nodeName"] = n
        s["spec"]["pool"]["name"] = f"{n}-gpu"
        objs.append(s)
    return Cluster.from_objects(objs)


def test_a_node_where_the_search_gives_up_fits_when_cpsat_finds_an_allocation() -> None:
    out = explain(_fleet(["a", "b"], 16, 8), claim="wide", feature_gates=GATES)  # about 219,000 steps
    assert out.fits == ["a", "b"]
    assert all(n.note == f"{GAVE_UP}; CP-SAT finds an allocation" for n in out.nodes)
    text = out.text()
    assert "claim default/wide fits on: a, b" in text
    assert f"  - on each of them: {GAVE_UP}; CP-SAT finds an allocation" in text
    assert "cannot be allocated" not in text


def test_a_node_where_the_search_gives_up_gets_its_reasons_when_cpsat_proves_none() -> None:
    out = explain(_fleet(["a"], 14, 8), claim="wide", feature_gates=GATES)  # about 384,000 steps
    (node,) = out.nodes
    assert not node.fits and node.note is None
    assert node.reason == "claim default/wide cannot be allocated"  # the line's head names the node
    assert node.details[-1].startswith(
        "minimal blocking set: claim default/wide: its requests and matchAttribute gpu.example.com/links"
    )


def test_a_node_neither_can_decide_is_not_decided(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnosis, "allocation_exists", lambda problem: None)  # CP-SAT's budget ends
    out = explain(_fleet(["a"], 16, 8), claim="wide", feature_gates=GATES)
    (node,) = out.nodes
    assert not node.fits
    assert node.reason == f"not decided: {GAVE_UP}, and {UNDECIDED}"
