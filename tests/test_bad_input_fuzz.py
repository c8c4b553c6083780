"""Bad input never escapes as a Python traceback.

Mutated conformance objects (a field deleted, a value replaced by one of another type) go
through loading, validation and both allocators; the only exceptions allowed out are
dra-solver's own errors, which the CLI prints as messages.
"""

from __future__ import annotations

import copy
from typing import Any

from conformance_cases import load_cases
from hypothesis import given
from hypothesis import strategies as st
from strategies import INPUT_ERRORS

from dra_solver import Cluster, allocate
from dra_solver.cel.checks import validate_all as validate_cluster

CASES = load_cases()
ODD_VALUES = st.sampled_from(
    [None, "", "x", "10Gx", -1, 0, 2**70, 1.5, True, [], {}, ["a"], {"a": 1}, "1e999"]
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated_case(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    case = draw(st.sampled_from(CASES))
    objects = copy.deepcopy(case["objects"])
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(objects))
        paths = _paths(target)
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        parent = target
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(draw(ODD_VALUES))
    return case, objects


@given(mutated_case(), st.sampled_from(["reference", "cpsat"]))
def test_mutated_input_fails_only_with_dra_solver_errors(data, allocator: str) -> None:
    case, objects = data
    try:
        cluster = Cluster.from_objects(objects)
        if validate_cluster(cluster):
            return
        allocate(cluster, node=case.get("node"), allocator=allocator, time_limit=2.0)
    except INPUT_ERRORS:  # the generated input's fault; CheckFailed (a wrong answer) propagates
        pass
