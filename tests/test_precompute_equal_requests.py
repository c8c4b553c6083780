"""Precompute checks every device once per kind of request, not once per request: requests that
differ only in their names share their candidates (`problem.requests._static_key`), and a
constraint reads a device's own attribute once. The Problem must be the one built request by
request."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import assume, event, given
from strategies import GATES, INPUT_ERRORS, scenario

from benchmarks import workloads as w
from dra_solver.api.cluster import Cluster
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.gates import FeatureGates
from dra_solver.problem import requests
from dra_solver.problem.build import build_problem
from dra_solver.problem.flat import Problem


def _plain(problem: Problem) -> object:
    """The Problem with each CEL error as its text (errors compare by identity)."""
    alts = [
        (
            replace(a, candidates=()),
            [(c.device, c.consumed, None if c.error is None else str(c.error)) for c in a.candidates],
        )
        for a in problem.alternatives
    ]
    return (alts, problem.constraints, problem.claims, problem.devices, problem.counters)


def _both(
    cluster: Cluster, names: list[str], node: str, gates: FeatureGates, monkeypatch
) -> tuple[object, object, int, int]:
    """The Problem built as precompute builds it and request by request, and how many times
    each checked a request's devices."""
    claims = [cluster.claim(n) for n in names]
    calls: list[int] = []
    real = requests._exact_candidates

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]  # a pass-through spy
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(requests, "_exact_candidates", counting)
    shared = _plain(build_problem(cluster, claims, node, gates))
    checks = len(calls)
    with monkeypatch.context() as m:
        m.setattr(requests, "_static_key", lambda spec, programs: None)  # every request on its own
        alone = _plain(build_problem(cluster, claims, node, gates))
    return shared, alone, checks, len(calls) - checks


@given(scenario(max_claims=4))
def test_requests_equal_but_for_their_names_get_the_candidates_of_their_own_checks(case) -> None:
    objs, names = case
    cluster = Cluster.from_objects(objs)
    assume(not validate_cluster(cluster))
    with pytest.MonkeyPatch.context() as monkeypatch:
        try:
            shared, alone, checks, own = _both(cluster, names, "n0", FeatureGates.of(GATES), monkeypatch)
        except INPUT_ERRORS:
            assume(False)
            return
    assert shared == alone
    event("requests shared their checks" if checks < own else "no request shared")


def test_a_claim_of_many_equal_requests_is_checked_once_per_device(monkeypatch) -> None:
    cluster = Cluster.from_objects(w.hard_list_match(devices=16, requests=8))
    gates = FeatureGates.of("DRAListTypeAttributes=true")
    shared, alone, checks, own = _both(cluster, ["wide"], "node-1", gates, monkeypatch)
    assert shared == alone
    assert (checks, own) == (1, 8)  # once with the memo, once per request without
