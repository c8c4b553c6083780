"""The reasons of the pods a plan leaves out are shared between pods that provably get the
same words (`planners.crowding.crowded_reasons`, share=True): here every pod's words — its
reason and each node's — must be what wording it on its own gives (share=False), for both
allocators, on generated clusters with priorities, node resources, node selectors, several
claims per pod and claim names with digits in them.

Why these tests: under first fit a pod's words name the placed pods ahead of it in the queue,
so two pods of one class and priority share words only when no placed pod of that priority
that could take their room stands between them (`_Index.queue_key`); and a pod's other nodes
are grouped by value (their reasons with the claim refs as placeholders,
`reasons.words.over_nodes`), its own claim names put in when worded.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Any

import pytest
from example_counts import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from worded_twice import worded_twice

from dra_solver.api.cluster import Cluster
from dra_solver.pipeline import plan
from dra_solver.planners import crowding
from dra_solver.planners.firstfit.solo import Solo
from dra_solver.planning.outcome import PlanOutcome
from dra_solver.reasons import Kind, Reason
from dra_solver.reasons.words import DETAIL_NODES, NODE, anywhere, over_nodes, say

DRIVER = "gpu.example.com"
SUFFIX = ("a", "b")
"""Claim names of a pod: they differ by more than digits, so that grouping with the claim names
put in differs from grouping with placeholders (whose indexes are digits)."""


def _gpu_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def _node(name: str, kind: str, cpu: int, gpus: int) -> list[dict[str, Any]]:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kind": kind}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}},
    }
    if not gpus:
        return [node]
    devices = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i // 2}}} for i in range(gpus)]
    pool = {"name": name, "generation": 1, "resourceSliceCount": 1}
    spec = {"driver": DRIVER, "nodeName": name, "pool": pool, "devices": devices}
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-gpus"},
        "spec": spec,
    }
    return [node, slice_]


def _pod(
    name: str, priority: int, cpu: int, counts: list[int], selector: str | None = None
) -> list[dict[str, Any]]:
    """A pod with one claim per entry of `counts` (that many GPUs each)."""
    claims = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"{name}-{SUFFIX[k]}", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": n}}]}
            },
        }
        for k, n in enumerate(counts)
    ]
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "app", "resources": {"requests": {"cpu": str(cpu)}}}],
        "resourceClaims": [
            {"name": f"c{k}", "resourceClaimName": f"{name}-{SUFFIX[k]}"} for k in range(len(counts))
        ],
    }
    if selector is not None:
        spec["nodeSelector"] = {"kind": selector}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }
    return [*claims, pod]


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few node kinds (cpu, GPUs), up to 12 nodes (more than `DETAIL_NODES`, so the other
    nodes are grouped), and pods of a few shapes: priorities 0-1, cpu, 1-2 claims."""
    objs = [_gpu_class()]
    kinds = draw(st.lists(st.tuples(st.integers(3, 12), st.integers(0, 4)), min_size=1, max_size=4))
    for n in range(draw(st.integers(1, 12))):
        cpu, gpus = kinds[n % len(kinds)]
        objs += _node(f"node-{n}", f"k{n % len(kinds)}", cpu, gpus)
    shapes = draw(
        st.lists(
            st.tuples(
                st.integers(1, 2),
                st.lists(st.integers(1, 3), min_size=1, max_size=2),
                st.sampled_from([None, None, "k0", "k1"]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    for p in range(draw(st.integers(2, 40))):
        cpu, counts, selector = shapes[draw(st.integers(0, len(shapes) - 1))]
        objs += _pod(f"p{p}", draw(st.integers(0, 1)), cpu, counts, selector)
    return objs


def _words(outcome: PlanOutcome) -> list[tuple[str, str | None, bool, str | None, dict[str | None, str]]]:
    return [(p.name, p.node, p.placed, p.reason, dict(p.node_reasons)) for p in outcome.pods]


def _both(objs: list[dict[str, Any]], allocator: str) -> tuple[Any, Any]:
    """The plan's words with the reasons shared, and each pod worded on its own (the same plan,
    made once: `worded_twice`)."""

    def alone(m: pytest.MonkeyPatch) -> None:
        m.setattr(crowding, "crowded_reasons", functools.partial(crowding.crowded_reasons, share=False))

    shared, own = worded_twice(Cluster.from_objects(objs), alone, allocator=allocator, time_limit=20)
    return _words(shared), _words(own)


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
@settings(max_examples=examples(25), deadline=None)
@given(objs=clusters())
def test_shared_reasons_are_each_pods_own_words(allocator: str, objs: list[dict[str, Any]]) -> None:
    shared, alone = _both(objs, allocator)
    assert [w[:3] for w in shared] == [w[:3] for w in alone]  # one plan, worded twice
    assert shared == alone


def test_first_fit_names_only_the_pods_ahead_of_each_pod() -> None:
    """Two pods of one class and priority with a placed pod of that priority between them in
    the queue: the first is crowded out by the higher-priority pod alone, the second by both."""
    objs = [_gpu_class(), *_node("node-0", "k0", 8, 2)]
    objs += _pod("high", 1, 1, [1])
    objs += _pod("first", 0, 1, [2])
    objs += _pod("small", 0, 1, [1])
    objs += _pod("second", 0, 1, [2])
    shared, alone = _both(objs, "reference")
    assert shared == alone
    reasons = {name: reason for name, _, _, reason, _ in shared}
    assert (
        reasons["default/first"] is not None
        and "devices it could use go to default/high" in reasons["default/first"]
    )
    assert "default/small" not in reasons["default/first"]
    assert "they have a higher priority" in reasons["default/first"]
    assert reasons["default/second"] is not None
    assert "devices it could use go to default/high, default/small" in reasons["default/second"]
    assert "first fit: the same or a higher priority, earlier in the queue" in reasons["default/second"]


def test_first_fit_groups_the_other_nodes_with_the_pods_claim_names() -> None:
    """A pod of two claims: on three nodes the first claim finds no device, on three others
    the second finds too few. Worded with its claim names the two reasons do not group (they
    differ by more than numbers), as each pod worded on its own says."""
    objs = [_gpu_class(), *_node("node-0", "k0", 8, 4)]
    for n in range(1, 4):
        objs += _node(f"node-{n}", "k1", 8, 0)
    for n in range(4, 7):
        objs += _node(f"node-{n}", "k2", 8, 2)
    objs += _pod("high", 1, 1, [2])
    objs += _pod("x", 0, 1, [1, 3])
    objs += _pod("y", 0, 1, [1, 3])
    shared, alone = _both(objs, "reference")
    assert shared == alone
    reasons = {name: reason for name, _, _, reason, _ in shared}
    for name in ("x", "y"):
        reason = reasons[f"default/{name}"]
        assert reason is not None and reason.startswith(
            "no node fits the pod (0 of 7 nodes): fits on node-0 alone"
        )
        assert (
            f"3 nodes: claim default/{name}-a: request g: needs 1 device(s), 0 match the selectors" in reason
        )
        assert (
            f"3 nodes: claim default/{name}-b: request g: needs 3 device(s), 2 match the selectors" in reason
        )


def groups_in_node_order(templates: list[str]) -> list[str]:
    """The grouping as docs/semantics.md words it, over every node's template in node order:
    templates equal but for their numbers group (numbers that vary as low-high), the two
    largest groups first (ties in node order), then the nodes left for the other groups."""
    groups: dict[str, list[str]] = {}
    for text in templates:
        groups.setdefault(re.sub(r"\d+", "#", text), []).append(text)
    top = sorted(groups.values(), key=len, reverse=True)[:2]
    parts = []
    for texts in top:
        distinct = list(dict.fromkeys(texts))
        columns = list(zip(*(re.findall(r"\d+", t) for t in distinct), strict=True))
        pieces = re.split(r"\d+", texts[0])
        out = pieces[0]
        for k, piece in enumerate(pieces[1:]):
            values = columns[k]
            low, high = min(values, key=int), max(values, key=int)
            out += (values[0] if len(set(values)) == 1 else f"{int(low)}-{int(high)}") + piece
        parts.append(f"{len(texts)} node{'s' if len(texts) != 1 else ''}: {out}")
    rest = len(templates) - sum(len(t) for t in top)
    if rest:
        parts.append(
            f"{rest} more node{'s' if rest != 1 else ''} for {len(groups) - len(top)} other reason(s)"
        )
    return parts


def _short(count: int, usable: int, candidates: int, rejected: int | None = None) -> Reason:
    """A request short of devices on the node (the placeholder), its numbers as given."""
    tainted = (
        () if rejected is None else ((Reason.of(Kind.DEVICE_TAINT, key="k", effect="NoSchedule"), rejected),)
    )
    matching = candidates + (rejected or 0)
    part = Reason.of(
        Kind.SHORT,
        "gpu",
        count=count,
        matching=matching,
        rejected=tainted,
        usable=usable,
        candidates=candidates,
    )
    return Reason.of(Kind.REQUEST, "default/c", request="gpu", parts=(part,), node=NODE, skipped=())


_NODE_REASONS = [
    _short(1, 0, 4),
    _short(2, 0, 4),
    _short(10, 3, 4),
    _short(1, 1, 4),  # "1 ... is free": another sentence
    _short(1, 4, 4),  # every candidate free: the free count not said
    _short(3, 0, 4, rejected=2),
    _short(3, 0, 4, rejected=7),
    Reason.of(Kind.TAINT, node=NODE, taint="a", effect="NoSchedule"),
    Reason.of(Kind.NODE_SHORT, node=NODE, short=("cpu",)),
]


@given(st.lists(st.sampled_from(range(len(_NODE_REASONS))), min_size=DETAIL_NODES + 1))
def test_other_nodes_group_by_value_as_their_words_group_but_for_numbers(picked: list[int]) -> None:
    """Nodes' reasons over many nodes group by value (`reasons.words.over_nodes`): reasons
    equal but for their numbers are one group, said with ranges — as grouping every node's
    words in node order by their text with the numbers masked would (the oracle; the names
    here have no digits, where the two differ)."""
    whys = [_NODE_REASONS[i] for i in picked]
    line = say(over_nodes([(f"n{i}", why) for i, why in enumerate(whys)]))
    assert line == "; ".join(groups_in_node_order([anywhere(w) for w in whys]))


def test_names_with_digits_are_names_not_numbers() -> None:
    """Reasons that differ in a name with digits in it (a taint key, a label value) are other
    reasons, not one with a range: was `5 nodes: the node has the taint gpu-1-2:NoSchedule`
    (the digits of the names masked in the text)."""
    keys = ["gpu-1"] * 3 + ["gpu-2"] * 2
    whys = [
        (f"n{i}", Reason.of(Kind.TAINT, node=f"n{i}", taint=k, effect="NoSchedule"))
        for i, k in enumerate(keys)
    ]
    said = "the node has the taint {}:NoSchedule, which the pod does not tolerate"
    assert say(over_nodes(whys)) == f"3 nodes: {said.format('gpu-1')}; 2 nodes: {said.format('gpu-2')}"


def test_nodes_failing_on_different_claims_name_each_claim() -> None:
    """Reasons that differ only in numbers group as one line with ranges, but a claim's index
    is no number: three nodes failing on the pod's first claim and three on its second are two
    groups, each naming its claim and its own counts — never the internal placeholder, never
    one claim's count beside the other's."""
    objs = [_gpu_class()]
    for n in range(1, 4):
        objs += _node(f"node-{n}", "k1", 8, 0)
    for n in range(4, 7):
        objs += _node(f"node-{n}", "k2", 8, 2)
    objs += _pod("y", 0, 1, [1, 3])
    for allocator in ("reference", "cpsat"):
        reason = str(plan(Cluster.from_objects(objs), allocator=allocator).pod("default/y").reason)
        assert "\x00" not in reason and "1-3" not in reason, reason
        assert "3 nodes: claim default/y-a: request g: needs 1 device(s), 0 match the selectors" in reason
        assert "3 nodes: claim default/y-b: request g: needs 3 device(s), 2 match the selectors" in reason


@pytest.mark.parametrize("allocator", ["reference", "cpsat"])
@settings(max_examples=examples(15), deadline=None)
@given(objs=clusters())
def test_the_cluster_after_shares_the_twin_keys_without_changing_a_word(
    allocator: str, objs: list[dict[str, Any]]
) -> None:
    """`Solo.like`: the Solo over the cluster after the plan reads the nodes' twin keys (up to
    what is in use) from the Solo before it; every pod's words are those of a Solo after that
    computes its own."""
    shared, own = worded_twice(
        Cluster.from_objects(objs),
        lambda m: m.setattr(Solo, "like", lambda self, other: self),
        allocator=allocator,
        time_limit=20,
    )
    assert _words(shared) == _words(own)


def _before_and_after() -> tuple[Solo, Solo]:
    """The Solos the reasons of a small plan's pods left out ask (`crowding.crowded_reasons`):
    on the cluster after the plan (pod "a" placed) and on the input's, as `Solo.like` sees them."""
    objs = [_gpu_class(), *_node("node-0", "k0", 8, 2), *_node("node-1", "k0", 8, 2)]
    objs += _pod("a", 0, 1, [1]) + _pod("big", 0, 1, [3])  # big fits nowhere: worded
    seen: list[tuple[Solo, Solo]] = []
    like = Solo.like

    def spy(self: Solo, other: Solo) -> Solo:
        seen.append((self, other))
        return like(self, other)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Solo, "like", spy)
        plan(Cluster.from_objects(objs), allocator="cpsat", time_limit=20)
    assert seen
    return seen[0]


def test_solo_like_shares_the_static_twin_keys_only_over_the_same_nodes_and_slices() -> None:
    """The after-plan Solo shares the before one's static keys (one dict); a Solo over other
    nodes keeps its own."""
    after, before = _before_and_after()
    assert after._twins._static is before._twins._static
    fewer = Solo(replace(after._run.job, nodes=after._run.job.nodes[:1]), 1)
    assert fewer.like(before)._twins._static is not before._twins._static


def test_the_after_plan_solo_reads_the_before_ones_worlds_and_keeps_its_own_use() -> None:
    """`Solo(..., like=before)` over the same nodes and slices (the cluster after the plan)
    reads `before`'s gathered pools, devices and static memo per world, grouped alike, and
    counts what is in use on its own cluster; over other nodes it gathers its own."""
    after, before = _before_and_after()
    mine, theirs = after._run, before._run
    assert [w.nodes for w in mine.worlds] == [w.nodes for w in theirs.worlds]
    for w, t in zip(mine.worlds, theirs.worlds, strict=True):
        assert w is not t and w.pools is t.pools and w.memo is t.memo and w.devices == t.devices
    assert [n.world.index for n in mine.nodes] == [n.world.index for n in theirs.nodes]
    assert sum(w.free for w in mine.worlds) < sum(w.free for w in theirs.worlds)  # "a" holds one
    alone = Solo(replace(mine.job, nodes=mine.job.nodes[:1]), 1, like=before)
    assert alone._run.worlds[0].pools is not theirs.worlds[0].pools
    # what is in use per node, as the twin keys read it: nothing before the plan, "a"'s after
    for solo, anything in ((before, False), (after, True)):
        keys = [solo._twins._used(n, solo._twins._static_of(n)[1]) for n in solo._run.nodes]
        assert keys == [_used_by_hand(solo, n) for n in solo._run.nodes]
        assert any(k != "[]" for k in keys) is anything


def _used_by_hand(solo: Solo, node: Any) -> str:
    """`firstfit.twins.Twins._used` spelled out: each allocated device of the node's slices
    (`InUse.allocated`), its pool by alias, whether dedicated, shared, its capacity used."""
    import json

    in_use, aliases = solo._run.in_use, solo._twins._static_of(node)[1]
    used = [
        [
            sl.spec.driver,
            aliases[sl.spec.pool.name],
            d.name,
            dev in in_use.dedicated,
            dev in in_use.shared,
            sorted((k, str(v)) for k, v in in_use.capacity.get(dev, {}).items()),
        ]
        for sl in node.slices
        for d in sl.spec.devices or ()
        if in_use.allocated(dev := (sl.spec.driver, sl.spec.pool.name, d.name))
    ]
    return json.dumps(sorted(used))
