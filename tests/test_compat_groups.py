"""KEP-5963 device compatibility groups (docs/semantics.md, "Device compatibility groups
(KEP-5963)"): the reference, the CP-SAT allocator and a brute force agree on feasibility, and
every answer passes the checker (`allocate` checks each one).

Why generated: the rule is a running intersection over every member of a counter set, so
its mistakes hide in combinations (three devices that fit two by two, an allocated member
without groups, a search that must backtrack over a first fit); the brute force states the
rule directly over sets, independently of the allocators' code.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dra_solver import Cluster, allocate
from dra_solver.problem.flat import CompatState, compat_add, compat_admits, compat_fits

GATES = "DRADeviceCompatibilityGroups=true"
GROUPS = st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True)


def _objects(devices: list[list[str]], allocated: list[int], count: int) -> list[dict[str, Any]]:
    pool = {"name": "pool-1", "generation": 1, "resourceSliceCount": 2}
    slices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "counters"},
            "spec": {
                "driver": "d.example.com",
                "pool": pool,
                "nodeName": "node-1",
                "sharedCounters": [{"name": "gpu-0", "counters": {"mem": {"value": "100"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "devices"},
            "spec": {
                "driver": "d.example.com",
                "pool": pool,
                "nodeName": "node-1",
                "devices": [
                    {
                        "name": f"dev-{i}",
                        "consumesCounters": [
                            {
                                "counterSet": "gpu-0",
                                "counters": {"mem": {"value": "1"}},
                                "compatibilityGroups": g,
                            }
                        ],
                    }
                    for i, g in enumerate(devices)
                ],
            },
        },
    ]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim-0", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": count}}]}
        },
    }
    old = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"old-{i}", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "r",
                                "driver": "d.example.com",
                                "pool": "pool-1",
                                "device": f"dev-{i}",
                            }
                        ]
                    }
                }
            },
        }
        for i in allocated
    ]
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "c"},
        "spec": {"selectors": [{"cel": {"expression": "true"}}]},
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
    return [cls, node, *slices, claim, *old]


def _fits(members: list[frozenset[str]]) -> bool:
    """The rule over a set, stated directly: no member declares groups, or all do and share one."""
    grouped = [g for g in members if g]
    if not grouped:
        return True
    return len(grouped) == len(members) and bool(frozenset.intersection(*grouped))


def _brute_force(devices: list[list[str]], allocated: list[int], count: int) -> bool:
    base = [frozenset(devices[i]) for i in allocated]
    free = [i for i in range(len(devices)) if i not in allocated]
    return any(_fits(base + [frozenset(devices[i]) for i in pick]) for pick in combinations(free, count))


@settings(max_examples=60, deadline=None)
@given(
    devices=st.lists(GROUPS, min_size=1, max_size=6),
    data=st.data(),
)
def test_allocators_agree_with_the_rule(devices: list[list[str]], data: st.DataObject) -> None:
    allocated = data.draw(
        st.lists(st.sampled_from(range(len(devices))), max_size=2, unique=True).filter(
            lambda old: _fits([frozenset(devices[i]) for i in old])  # a state only a changed slice breaks
        )
    )
    free = len(devices) - len(allocated)
    count = data.draw(st.integers(1, max(1, min(3, free))))
    want = free >= count and _brute_force(devices, allocated, count)
    for allocator in ("reference", "cpsat"):
        cluster = Cluster.from_objects(_objects(devices, allocated, count))
        outcome = allocate(
            cluster, claims=["claim-0"], node="node-1", allocator=allocator, feature_gates=GATES
        )
        assert outcome.allocated == want, (allocator, devices, allocated, count, outcome.reason)


def test_the_state_is_a_running_intersection() -> None:
    """Three devices that fit two by two do not fit together (upstream's rolling intersection)."""
    ab, bc, ca = frozenset("ab"), frozenset("bc"), frozenset("ca")
    assert compat_fits([ab, bc]) and compat_fits([bc, ca]) and compat_fits([ab, ca])
    assert not compat_fits([ab, bc, ca])
    state = compat_add(compat_add(None, ab), bc)
    assert state == CompatState(frozenset("b"))
    assert not compat_admits(state, ca)


def test_no_groups_only_with_no_groups() -> None:
    """A device without groups only shares a counter set with devices without groups."""
    empty = frozenset[str]()
    assert compat_fits([empty, empty, empty])
    assert not compat_fits([empty, frozenset("a")])
    assert not compat_fits([frozenset("a"), empty])
    assert compat_admits(None, frozenset("a")) and compat_admits(None, empty)


def test_the_reason_names_the_counter_set() -> None:
    """When only the compatibility groups stand in the way, the reason says so (not "run out")."""
    cluster = Cluster.from_objects(_objects([["mig"], ["vgpu"]], [], 2))
    outcome = allocate(cluster, claims=["claim-0"], node="node-1", feature_gates=GATES)
    assert not outcome.allocated
    assert "compatibilityGroups on counter set gpu-0 of pool d.example.com/pool-1" in (outcome.reason or "")
    assert "run out" not in (outcome.reason or "")
