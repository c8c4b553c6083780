"""The reference search's memo (`reference.SearchMemo`): a Problem equal to one already searched
up to names gets that search's outcome with its own devices — the very outcome a search of its
own gives.

Every test compares the memo's answer with an uncached search of the same Problem (assignment,
None, or the error with its text), on twins that differ only in names, on near-twins that
differ in one attribute, on a twin whose devices sit at other indices, and on whole plans.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st
from strategies import GATES, INPUT_ERRORS, scenario

from benchmarks import workloads as w
from dra_solver import reference
from dra_solver.api.cluster import Cluster
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.errors import DRASolverError, SearchAborted
from dra_solver.gates import FeatureGates
from dra_solver.pipeline import plan
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Problem
from dra_solver.reference import ReferenceSearch, SearchMemo, search_key

LIST_GATES = FeatureGates.of("DRAListTypeAttributes=true")


def _outcome(problem: Problem, memo: SearchMemo | None, max_steps: int = 100_000) -> object:
    """What a search says, in names: the placements as (claim, alternative, device id), None,
    or the error's type and text."""
    try:
        if memo is None:
            found = ReferenceSearch(problem, max_steps=max_steps).run()
        else:
            found = memo.search(problem, max_steps)
    except DRASolverError as exc:
        return (type(exc).__name__, str(exc))
    if found is None:
        return None
    return {
        problem.claims[ci].ref: [
            (problem.alternatives[p.alternative].name, problem.devices[p.device].id) for p in placed
        ]
        for ci, placed in found.items()
    }


def _twin(
    objs: list[dict[str, Any]], node: str, twin: str, change: int | None = None
) -> list[dict[str, Any]]:
    """`objs` and a copy of `node`'s slices and of the claim holding its devices, under the
    names of `twin` (node, pool, slices, devices: every name taken out of the search's view);
    `change`: that device of the copy gets another `numa` value (a near-twin)."""
    out = list(objs)
    renamed: dict[str, str] = {}
    index = 0
    for obj in objs:
        if obj["kind"] != "ResourceSlice" or obj["spec"].get("nodeName") != node:
            continue
        s = copy.deepcopy(obj)
        s["metadata"]["name"] = s["metadata"]["name"].replace(node, twin, 1)
        s["spec"]["nodeName"] = twin
        s["spec"]["pool"]["name"] = twin
        for dev in s["spec"].get("devices", []):
            renamed[dev["name"]] = new = f"{twin}-dev-{len(renamed)}"
            dev["name"] = new
            if change is not None and index == change:
                dev["attributes"]["numa"] = {"int": 7}
            index += 1
        out.append(s)
    for obj in objs:
        results = obj.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
        if obj["kind"] == "ResourceClaim" and results:
            held = copy.deepcopy(obj)
            held["metadata"]["name"] += "-twin"
            for r in held["status"]["allocation"]["devices"]["results"]:
                r["pool"] = twin
                r["device"] = renamed[r["device"]]
                if "shareID" in r:
                    r["shareID"] = "00000000-0000-4000-8000-000000000002"
            out.append(held)
    return out


def _problems(objs: list[dict[str, Any]], names: list[str], nodes: list[str]) -> list[Problem]:
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    claims = [cluster.claim(n) for n in names]
    gates = FeatureGates.of(GATES)
    try:
        return [build_problem(cluster, claims, n, gates) for n in nodes]
    except INPUT_ERRORS:
        assume(False)
        raise


@given(scenario())
def test_a_twin_node_gets_the_search_of_its_twin(case) -> None:
    objs, names = case
    first, second = _problems(_twin(objs, "n0", "twin"), names, ["n0", "twin"])
    memo = SearchMemo(probe=0)  # every search that places a device goes through the memo
    said = _outcome(first, memo)
    assert said == _outcome(first, None)
    assert _outcome(second, memo) == _outcome(second, None)
    key = search_key(first)
    if key is not None:
        other = search_key(second)
        assert other is not None and other[0] == key[0]  # twins are found as twins
        kept = len(memo._outcomes) == 1
        assert memo.hits == (1 if kept else 0)
        if kept:
            event("twin reused")
        elif isinstance(said, tuple) and said[0] != "SearchAborted":
            event("an error naming objects: never kept")
        else:
            event("ended before its first step: not kept")
    else:
        event("CEL error: no key")


@given(scenario(), st.integers(0, 11))
def test_a_near_twin_is_searched_as_itself(case, change) -> None:
    objs, names = case
    first, second = _problems(_twin(objs, "n0", "near", change), names, ["n0", "near"])
    memo = SearchMemo(probe=0)
    assert _outcome(first, memo) == _outcome(first, None)
    assert _outcome(second, memo) == _outcome(second, None)
    event("reused" if memo.hits else "searched")


def _hard(nodes: list[str], devices: int, requests: int, extra: str | None = None) -> list[Problem]:
    """`hard_list_match` on each of `nodes` (the trap first); `extra`: that node's slice starts
    with a device no request may use (a taint none tolerates), so its devices sit one index on."""
    cls, sl, claim = w.hard_list_match(devices=devices, requests=requests)
    objs: list[dict[str, Any]] = [cls, claim]
    for n in nodes:
        s = copy.deepcopy(sl)
        s["metadata"]["name"] = f"{n}-gpu"
        s["spec"]["nodeName"] = n
        s["spec"]["pool"]["name"] = f"{n}-pool"
        for dev in s["spec"]["devices"]:
            dev["name"] = f"{n}-{dev['name']}"
        if n == extra:
            taint = {"key": "broken", "effect": "NoSchedule"}
            s["spec"]["devices"].insert(0, {"name": "aaa-broken", "taints": [taint]})
        objs.append(s)
    cluster = Cluster.from_objects(objs)
    gates = FeatureGates.of("DRAListTypeAttributes=true,DRADeviceTaints=true")
    return [build_problem(cluster, list(cluster.claims.values()), n, gates) for n in nodes]


def test_a_twin_with_its_devices_at_other_indices_gets_its_own_devices() -> None:
    first, second = _hard(["a", "b"], 14, 6, extra="b")  # about 4,600 steps: past the probe
    assert [d.name for d in second.devices][:1] == ["aaa-broken"]
    memo = SearchMemo()
    want = _outcome(second, None)
    assert _outcome(first, memo) == _outcome(first, None)
    assert _outcome(second, memo) == want
    assert (memo.hits, memo.misses) == (1, 1)
    assert want is not None and all(dev.startswith("gpu.example.com/b-pool/b-") for dev in _devices(want))


def _devices(outcome: object) -> list[str]:
    assert isinstance(outcome, dict)
    return [dev for placed in outcome.values() for _, dev in placed]


def test_a_search_past_its_budget_is_aborted_on_every_twin() -> None:
    problems = _hard(["a", "b", "c"], 16, 7)  # about 31,000 steps
    memo = SearchMemo()
    outcomes = [_outcome(p, memo, max_steps=10_000) for p in problems]
    assert outcomes == [_outcome(p, None, max_steps=10_000) for p in problems]
    assert outcomes[0] == ("SearchAborted", str(reference._aborted(10_000)))
    assert (memo.hits, memo.misses) == (2, 1)
    with pytest.raises(SearchAborted):  # the same budget on the next call raises, as the search does
        memo.search(problems[0], 10_000)


def test_the_budget_is_part_of_the_key() -> None:
    problem = _hard(["a"], 16, 7)[0]
    memo = SearchMemo()
    assert _outcome(problem, memo, max_steps=10_000)[0] == "SearchAborted"  # type: ignore[index]  # an error tuple
    assert _outcome(problem, memo, max_steps=100_000) == _outcome(problem, None, max_steps=100_000)
    assert memo.misses == 2


def test_short_searches_are_not_kept() -> None:
    memo = SearchMemo()
    for p in _hard(["a", "b"], 12, 5):  # about 800 steps: within the probe
        assert _outcome(p, memo) == _outcome(p, None)
    assert (memo.hits, memo.misses, len(memo._outcomes)) == (0, 0, 0)


def test_the_memo_keeps_at_most_its_capacity() -> None:
    memo = SearchMemo(probe=0, capacity=2)
    for devices, requests in [(12, 5), (13, 5), (14, 5)]:
        memo.search(_hard(["a"], devices, requests)[0], 100_000)
    assert len(memo._outcomes) == 2 and memo.misses == 3


def _fleet(nodes: int, pods: int) -> list[dict[str, Any]]:
    cls, sl, claim = w.hard_list_match(devices=14, requests=6)
    objs: list[dict[str, Any]] = [cls]
    for n in range(nodes):
        s = copy.deepcopy(sl)
        s["metadata"]["name"] = f"node-{n}-gpu"
        s["spec"]["nodeName"] = f"node-{n}"
        s["spec"]["pool"]["name"] = f"node-{n}-gpu"
        if n == 1:  # a near-twin: one trap device's list differs
            s["spec"]["devices"][0]["attributes"]["links"]["ints"] = [0, 40]
        objs.append(s)
    for p in range(pods):
        c = copy.deepcopy(claim)
        c["metadata"]["name"] = f"wide-{p}"
        objs.append(c)
    return objs


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
def test_a_plan_is_the_same_with_and_without_the_memo(allocator: str, monkeypatch) -> None:
    def run(memo: SearchMemo) -> object:
        monkeypatch.setattr(reference, "MEMO", memo)
        out = plan(Cluster.from_objects(_fleet(4, 6)), allocator=allocator, feature_gates=LIST_GATES, seed=3)
        return [(p.name, p.node, p.reason, [c.model_dump() for c in p.claims]) for p in out.pods]

    memo = SearchMemo()
    assert run(memo) == run(SearchMemo(probe=10**9))  # the second never memoizes
    assert memo.hits > 0
