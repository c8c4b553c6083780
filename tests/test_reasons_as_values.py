"""Reasons as values (issue #41, step 4), the rest of it: each node's reason for a pod left out,
a node's free-resource shortage, upstream's per-node errors, the words of an invalid pool on a
node, and first fit's twins are values (`Reason`), grouped and decided by value and worded in
`reasons.words` alone. One test per rule; the last fails if code compares reason text.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import allocated, claim, device, device_class, request, resource_slice, result
from parsed_sources import nodes
from test_invalid_pool_reason import CAUSE, duplicate_pool

import dra_solver
from dra_solver.api.cluster import Cluster
from dra_solver.explain.diagnosis import explain
from dra_solver.gates import FeatureGates
from dra_solver.pipeline import plan
from dra_solver.planners.firstfit import engine
from dra_solver.planners.firstfit.twins import Twins
from dra_solver.planners.firstfit.words import NodeReasons
from dra_solver.planning.outcome import PlanOutcome
from dra_solver.problem.build import build_problem
from dra_solver.problem.demand import Needs, NodeBook
from dra_solver.problem.flat import Problem
from dra_solver.reasons import Kind, Reason, names_places, renamed
from dra_solver.reasons.words import NODE, insufficient, of_node, say
from dra_solver.reference.reasons import why_unschedulable

SOLVER = Path(__file__).resolve().parent.parent / "solver"


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _gpu_nodes(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out += [_node(f"g{i}"), resource_slice(f"g{i}", [device("gpu-0")], node=f"g{i}")]
    return out


def test_each_nodes_reason_is_a_value_grouped_by_value_and_shared_by_a_shape() -> None:
    """`PodPlan.node_reasons` holds one `Reason` per node (`NodeReasons.whys`, the claim refs
    and the node as placeholders, shared by the pods of a shape), worded when read with the
    pod's own claim ref; the line groups the other nodes by value (`Kind.OVER_NODES`: the
    distinct reasons with their node counts)."""
    docs = [device_class("gpu"), *_gpu_nodes(2), *(_node(f"m{i}") for i in range(5))]
    docs += [claim(f"c{i}", [request("gpu")]) for i in range(4)]
    out = plan(Cluster.from_objects(docs), allocator="reference")
    left = [p for p in out.pods if not p.placed]
    assert [p.name for p in left] == ["default/c2", "default/c3"]
    a, b = left
    assert isinstance(a.node_reasons, NodeReasons) and isinstance(b.node_reasons, NodeReasons)
    assert a.node_reasons.whys is b.node_reasons.whys  # one shape: the values are shared
    why_m0 = a.node_reasons.whys["m0"]
    assert why_m0.is_(Kind.REQUEST) and "default/c2" not in why_m0.subject  # a placeholder
    words = "claim default/{}: request gpu: needs 1 device(s), 0 match the selectors (on node m0)"
    assert (a.node_reasons["m0"], b.node_reasons["m0"]) == (words.format("c2"), words.format("c3"))
    assert a.why is not None and a.why.is_(Kind.CROWDED) and say(a.why) == a.reason
    others = a.why.part("others")
    assert others is not None and others.is_(Kind.OVER_NODES) and others.fact("grouped")
    assert others.parts("whys") == (why_m0,) and others.ints("counts") == (5,)
    assert (a.reason or "").endswith(
        "; 5 nodes: claim default/c2: request gpu: needs 1 device(s), 0 match the selectors"
    ), a.reason


def _pod(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]},
    }


def _sized(name: str, cpu: str, pods: str) -> dict[str, Any]:
    node = _node(name)
    node["status"] = {"allocatable": {"cpu": cpu, "memory": "1Gi", "pods": pods}}
    return node


def test_a_nodes_shortage_is_the_resources_short_worded_as_the_scheduler_says_it() -> None:
    """`NodeBook.refusal` gives the resources a pod is short of, not the scheduler's words:
    a node's refusal (`Kind.NODE_SHORT`) holds them as a fact, `reasons.words` words them."""
    cluster = Cluster.from_objects([_sized("small", "1", "0"), _pod("p", "2")])
    book = NodeBook(cluster, ["small"], FeatureGates())
    (pod,) = cluster.pods.values()
    short = book.refusal(book.variant((Needs.of(pod),), "small"), "small")
    assert short == ("pods", "cpu")
    assert insufficient(short) == "Too many pods, Insufficient cpu"
    out = plan(cluster, allocator="reference")
    (p,) = out.pods
    why = p.node_reasons.whys["small"] if isinstance(p.node_reasons, NodeReasons) else None
    assert why is not None and why.is_(Kind.NODE_SHORT) and why.fact("short") == ("pods", "cpu")
    assert p.reason == "Too many pods, Insufficient cpu"


def test_upstreams_error_on_a_node_is_a_value_with_the_same_words() -> None:
    """An invalid pool on a node that would hold the claim's device: upstream's per-node error
    (`InvalidPools`) is a value (`Kind.INVALID_POOLS`, each pool's words a `Kind.NODE_NAMED`
    with the node a fact), worded as the error says it."""
    out = plan(Cluster.from_objects(duplicate_pool()), allocator="reference")
    (p,) = out.pods
    assert isinstance(p.node_reasons, NodeReasons)
    why = p.node_reasons.whys["node-a"]
    assert why.is_(Kind.INVALID_POOLS)
    (pool,) = why.parts("pools")
    assert pool.is_(Kind.NODE_NAMED) and pool.fact("node") == "node-a"
    fact = pool.part("why")  # the pool's fact, its names facts (was: the node's name in them a placeholder)
    assert fact is not None and fact.is_(Kind.POOL_INVALID) and fact.fact("pool") == "node-a"
    twice = fact.part("why")
    assert twice is not None and twice.is_(Kind.LISTED_TWICE) and twice.fact("name") == "gpu-0"
    assert (twice.fact("first"), twice.fact("second")) == ("node-a-gpu-a", "node-a-gpu-b")
    assert p.node_reasons["node-a"] == f"invalid resource pools were encountered: {CAUSE}"


def _invalid_pool_on(node: str) -> list[dict[str, Any]]:
    """`node`'s pool (named after it) lists gpu-0 in two slices: upstream marks it invalid."""
    return [
        _node(node),
        resource_slice(f"{node}-gpu-a", [device("gpu-0"), device("gpu-1")], node=node, pool=node, count=2),
        resource_slice(f"{node}-gpu-b", [device("gpu-0")], node=node, pool=node, count=2),
    ]


def test_explain_groups_invalid_pools_by_value_not_by_masking_the_node_in_words() -> None:
    """Two nodes whose invalid pools' words differ only in names (the pool and its slices are
    named after the node) are one group: the node, the pool and the slices are facts
    (`Kind.NODE_NAMED`, `reasons.RENAMED`), and the group's key leaves the node out and the
    names as aliases (`reasons.words.alike_names`), said as on the first node with a note.
    Was: explain masked the node's name in the words' text (`FOREIGN`), then found it in the
    names by a pattern (`of_node`)."""
    docs = [device_class("gpu"), *_invalid_pool_on("node-a"), *_invalid_pool_on("node-b")]
    docs.append(claim("one-gpu", [request("gpu")]))
    answer = explain(Cluster.from_objects(docs), claim="one-gpu")
    a, b = answer.nodes
    assert a.why is not None and b.why is not None and a.why != b.why
    assert a.alike() == b.alike()
    (pool_b,) = b.why.parts("pools")
    assert pool_b.fact("node") == "node-b" and say(pool_b).startswith("pool gpu.example.com/node-b ")
    note = "(as on node-a; on the other alike, in its own names)"
    assert f"2 node(s) (node-a, node-b): {CAUSE}; upstream skips the pool" in answer.text(), answer.text()
    assert f"the claims would fit {note}" in answer.text(), answer.text()


def test_whether_a_reason_names_a_place_is_read_from_its_facts() -> None:
    """First fit's twins share an answer whose reason names the node, a pool or a slice only
    re-made with the twin's names (`reasons.renamed`: the facts `reasons.RENAMED` lists; was:
    none naming a slice was shared): read from the facts' kinds, not their text."""
    short = Reason.of(Kind.SHORT, "gpu", count=1, matching=0, rejected=(), usable=0, candidates=0)
    plain = Reason.of(Kind.REQUEST, "/c", request="gpu", parts=(short,), node=NODE, skipped=())
    assert not names_places(plain)
    incomplete = Reason.of(Kind.POOL_INCOMPLETE, driver="d", pool="p1", generation=1, published=1, count=2)
    skipped = plain.about("/c", skipped=(of_node(incomplete, NODE),))
    assert names_places(skipped)
    (pool,) = renamed(skipped, {}, {"p1": "p2"}).parts("skipped")
    assert say(pool).startswith("pool d/p2 generation 1 is incomplete: 1 of its 2 slices are published")
    ignored = incomplete.about("", ignored=("s1",))  # slices ignored for their groups: renamed
    (pool,) = renamed(plain.about("/c", skipped=(ignored,)), {}, {"p1": "p2"}, {"s1": "t1"}).parts("skipped")
    assert pool.fact("ignored") == ("t1",) and pool.fact("pool") == "p2"
    busy = Reason.of(Kind.DEVICE_BUSY, driver="d", pool="p1", device="gpu-0")
    blocked = Reason.of(Kind.ALL_BLOCKED, "gpu", why=of_node(busy, NODE))
    assert names_places(blocked) and say(renamed(blocked, {}, {"p1": "p2"})) == (
        "allocationMode All, but device d/p2/gpu-0 is already allocated"
    )
    undeclared = Reason.of(Kind.SKIP_UNDECLARED, node="n1", feature="F")
    rejected = short.about("gpu", matching=1, rejected=((undeclared, 1),))
    assert names_places(rejected)
    assert "node n2 does not declare F" in say(renamed(rejected, {"n1": "n2"}, {}))
    twice = Reason.of(Kind.LISTED_TWICE, what="device", name="gpu-0", first="s1", second="s2")
    invalid = Reason.of(Kind.POOL_INVALID, driver="d", pool="p1", generation=1, why=twice)
    assert names_places(invalid)
    assert say(renamed(invalid, {}, {"p1": "p2"}, {"s1": "t1", "s2": "t2"})).endswith("slices t1 and t2")
    left = Reason.of(Kind.SLICE_NOT_VALID, slice="s1", problems="spec.devices[1].name: duplicate")
    gone = Reason.of(
        Kind.POOL_INVALID,
        driver="d",
        pool="p1",
        generation=1,
        why=Reason.of(Kind.SLICES_LEFT_OUT, problems=(left,)),
    )
    assert names_places(gone) and say(renamed(gone, {}, {}, {"s1": "t1"})).endswith(
        "ResourceSlice t1 is not valid: spec.devices[1].name: duplicate"
    )
    rule = Reason.of(Kind.COMPAT_GROUPS, driver="d", pool="p1", set="cs")
    assert names_places(Reason.of(Kind.CONSTRAINTS, "/c", constraints=(rule,), node=NODE))
    match = Reason.of(Kind.ATTRIBUTE_RULE, rule="match", field="matchAttribute", attribute="x")
    assert not names_places(Reason.of(Kind.CONSTRAINTS, "/c", constraints=(match,), node=NODE))


def _skipping_nodes(n: int) -> list[dict[str, Any]]:
    """`n` nodes, each with a pool named after it of two devices from a skipNodeOperations
    slice; node-0 declares DraOptionalNodePreparation, the others do not."""
    out: list[dict[str, Any]] = [device_class("gpu")]
    for i in range(n):
        name = f"node-{i}"
        node = _node(name)
        node["status"] = {"declaredFeatures": ["DraOptionalNodePreparation"] if i == 0 else []}
        out += [
            node,
            resource_slice(
                f"{name}-skip",
                [device("gpu-0"), device("gpu-1")],
                node=name,
                pool=name,
                skipNodeOperations=True,
            ),
        ]
    return out


def _shared_and_alone(
    monkeypatch: pytest.MonkeyPatch, docs: list[dict[str, Any]] | Cluster, **options: Any
) -> PlanOutcome:
    """The plan of `docs` with first fit's twins sharing answers, checked against the plan
    with every node asked alone: fewer nodes asked, the same nodes, reasons and words."""
    cluster = docs if isinstance(docs, Cluster) else Cluster.from_objects(docs)
    asked: list[int] = []
    real = engine._Placing.answer

    def counting(self: Any, *args: Any) -> Any:
        asked.append(1)
        return real(self, *args)

    monkeypatch.setattr(engine._Placing, "answer", counting)
    shared = plan(cluster, **options)
    with_twins = len(asked)
    with monkeypatch.context() as m:
        m.setattr(Twins, "_key", lambda self, node: None)  # every node asked
        asked.clear()
        alone = plan(cluster, **options)
    assert with_twins < len(asked)
    assert [(p.node, p.reason) for p in shared.pods] == [(p.node, p.reason) for p in alone.pods]
    for a, b in zip(shared.pods, alone.pods, strict=True):
        assert dict(a.node_reasons) == dict(b.node_reasons)
    return shared


def test_twins_with_a_skip_node_operations_slice_share_their_answers_word_for_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nodes whose devices come from a skipNodeOperations slice the node does not declare
    share first fit's answer (was: no twin, their rejection's words named the node): the
    fact naming the node is re-made for each twin, so every node's words are those of asking
    it alone; over many nodes the line groups them by value, saying "the node" (was:
    `node node-1-6`, the digits of the names as a range)."""
    docs = [*_skipping_nodes(7), *(claim(f"c{i}", [request("gpu")]) for i in range(4))]
    shared = _shared_and_alone(monkeypatch, docs, feature_gates="DRAOptionalNodePreparation=true")
    assert [p.node for p in shared.pods] == ["node-0", "node-0", None, None]
    left = shared.pods[2]
    undeclared = "come from a skipNodeOperations slice; {} does not declare DraOptionalNodePreparation"
    assert undeclared.format("node node-5") in left.node_reasons["node-5"], left.node_reasons["node-5"]
    assert (
        "6 nodes: claim default/c2: request gpu: needs 1 device(s), 2 match the selectors; of those 2 "
        + undeclared.format("the node")
    ) in (left.reason or ""), left.reason


def test_twins_whose_reasons_name_their_pools_share_them_with_their_own_pools_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nodes with an incomplete pool (named after the node), and nodes whose one device an
    allocationMode All request needs is busy (its pool named apart), share first fit's answer
    (was: not shared, the reason held a pool's or a device's words): each twin's words name
    its own pools."""
    docs: list[dict[str, Any]] = [device_class("gpu")]
    for i in range(6):
        n, m, p, q = f"n{i}", f"m{i}", f"p{i * 7 % 11}", f"q{i * 5 % 13}"
        docs += [
            _node(n),
            resource_slice(f"{n}-a", [device("gpu-0")], node=n, pool=f"{n}-half", count=2),
            resource_slice(f"{n}-b", [device("gpu-1")], node=n, pool=p),
            allocated(f"taken-{n}", [result("gpu-1", pool=p)]),
            _node(m),
            resource_slice(f"{m}-a", [device("gpu-0")], node=m, pool=q),
            allocated(f"taken-{m}", [result("gpu-0", pool=q)]),
        ]
    # a free node where each fits alone, taken by a pod of a higher priority: the crowding asks
    # every node where the two pods left out fit alone (`Solo`, which shares through twins)
    docs += [_node("free"), resource_slice("free", [device("gpu-0")], node="free")]
    docs += [
        claim("first", [request("gpu")]),
        claim("one", [request("gpu")]),
        claim("all", [{"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]),
    ]
    names = [p.name for p in plan(Cluster.from_objects(docs), allocator="reference").pods]
    priorities = [10 if name == "default/first" else 0 for name in names]
    shared = _shared_and_alone(monkeypatch, docs, priorities=priorities)
    by_name = {p.name: p for p in shared.pods}
    assert by_name["default/first"].node == "free"
    one = by_name["default/one"].node_reasons["n3"]
    assert "pool gpu.example.com/n3-half generation 1 is incomplete" in one, one
    every = by_name["default/all"].node_reasons["m3"]
    assert "device gpu.example.com/q2/gpu-0 is already allocated" in every, every


# --- what precompute finds is a fact, worded in reasons.words alone ------------------------------


def _rule(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"},
        },
    }


def _problem(docs: list[dict[str, Any]], node: str = "node-1") -> Problem:
    cluster = Cluster.from_objects(docs)
    return build_problem(cluster, cluster.unallocated_claims(), node, FeatureGates())


def test_a_devices_rejection_is_a_fact_with_the_taint_and_its_rule() -> None:
    """A device a taint refuses: the rejection is a value (`Kind.DEVICE_TAINT`: key, value,
    effect, the DeviceTaintRule) counted per request, worded as before by `reasons.words`."""
    slices = resource_slice("s1", [device("gpu-0"), device("gpu-1")])
    problem = _problem(
        [device_class("gpu"), slices, _rule("drain", {"pool": "s1"}), claim("c", [request("gpu")])]
    )
    (alt,) = problem.alternatives
    ((why, n),) = alt.rejected
    assert n == 2 and why == Reason.of(
        Kind.DEVICE_TAINT, key="maintenance", value="true", effect="NoSchedule", rule="drain"
    )
    taint = "maintenance=true:NoSchedule (DeviceTaintRule drain)"
    assert say(why) == f"have the taint {taint}, which the request does not tolerate"
    assert say(why_unschedulable(problem)) == (
        "claim default/c: request gpu: needs 1 device(s), 2 match the selectors; of those 2 have the taint "
        f"{taint}, which the request does not tolerate (on node node-1)"
    )


def test_a_device_too_small_for_the_request_is_a_fact_with_its_amounts() -> None:
    """A capacity request larger than a device's whole capacity: a value (`Kind.TOO_SMALL`:
    the capacity, the amounts as the device publishes them), worded as before."""
    gpu = device("gpu-0", capacity={"memory": "40Gi"})
    big = claim("big", [request("gpu", capacity={"requests": {"memory": "80Gi"}})])
    cluster = Cluster.from_objects([device_class("gpu"), resource_slice("s1", [gpu]), big])
    gates = FeatureGates.of("DRAConsumableCapacity=true")
    (alt,) = build_problem(cluster, cluster.unallocated_claims(), "node-1", gates).alternatives
    ((why, n),) = alt.rejected
    assert n == 1 and why == Reason.of(
        Kind.TOO_SMALL, name="memory", total="40Gi", asked="80Gi", consumed="80Gi", rounded=0
    )
    assert say(why) == "have memory 40Gi, less than the 80Gi asked"


def test_a_pool_not_ready_and_a_blocked_member_are_facts() -> None:
    """allocationMode All on an incomplete pool: the blocked member and upstream's per-node
    error are values (`Kind.POOL_UPDATING` in `Kind.NOT_READY`), the incomplete pool a
    `Kind.POOL_INCOMPLETE` of numbers; the error's words are upstream's."""
    docs = [
        device_class("gpu"),
        resource_slice("s1", [device("gpu-0")], node="node-1", pool="p", count=2),
        claim("c", [{"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]),
    ]
    problem = _problem(docs)
    (alt,) = problem.alternatives
    updating = Reason.of(Kind.POOL_UPDATING, driver="gpu.example.com", pool="p")
    assert alt.all_blocked == updating
    assert alt.fatal == Reason.of(Kind.NOT_READY, "default/c", request="all", why=updating)
    assert say(alt.fatal) == (
        "claim default/c: request all: asks for all devices, but resource pool gpu.example.com/p is "
        "currently being updated"
    )
    (incomplete,) = problem.incomplete_pools
    assert incomplete.is_(Kind.POOL_INCOMPLETE) and (
        incomplete.fact("published"),
        incomplete.fact("count"),
    ) == (1, 2)
    assert say(incomplete) == (
        "pool gpu.example.com/p generation 1 is incomplete: "
        "1 of its 2 slices are published (resourceSliceCount 2)"
    )


def test_a_constraints_words_are_made_from_its_kind_and_attribute() -> None:
    """A claim constraint that cannot be met is a value (`Kind.ATTRIBUTE_RULE`: the rule, its
    API field, the attribute), worded by `reasons.words` (`MUST`)."""
    devs = [device("gpu-0", attrs={"model": "a"}), device("gpu-1", attrs={"model": "b"})]
    pair = claim(
        "c", [request("r1"), request("r2")], constraints=[{"matchAttribute": "gpu.example.com/model"}]
    )
    problem = _problem([device_class("gpu"), resource_slice("s1", devs), pair])
    why = why_unschedulable(problem)
    assert why.is_(Kind.CONSTRAINTS)
    (rule,) = why.parts("constraints")
    assert rule == Reason.of(
        Kind.ATTRIBUTE_RULE, rule="match", field="matchAttribute", attribute="gpu.example.com/model"
    )
    assert (
        say(rule) == "matchAttribute gpu.example.com/model (the devices must all have the same value of it)"
    )


REASON_MAKERS = ("problem", "inventory.py")
"""Where precompute finds facts: its reasons' facts are names and numbers, never words."""


def _worded_facts(walked: Sequence[ast.AST]) -> list[int]:
    """Lines where a `Reason(...)` or `Reason.of(...)` is given words as a fact (past the kind
    and subject): an f-string, a string built with `+`, `%`, `.format` or `.join`, or a call
    that words a reason (`say`). `walked`: every node of a tree, `ast.walk`'s."""

    def worded(e: ast.expr) -> bool:
        if isinstance(e, ast.JoinedStr):
            return True
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Mod):
            return any(
                isinstance(x, ast.JoinedStr | ast.Constant)
                and isinstance(getattr(x, "value", ""), str)
                or worded(x)
                for x in (e.left, e.right)
            )
        if isinstance(e, ast.Call):
            f = e.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            return name in {"format", "join", *TEXT_CALLS}
        return False

    found = []
    for node in walked:
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        maker = (isinstance(f, ast.Name) and f.id == "Reason") or (
            isinstance(f, ast.Attribute)
            and f.attr == "of"
            and isinstance(f.value, ast.Name)
            and f.value.id == "Reason"
        )
        facts = [*node.args[2:], *(k.value for k in node.keywords)]
        if maker and any(worded(x) for x in facts):
            found.append(node.lineno)
    return found


def test_precompute_makes_facts_not_words() -> None:
    """`problem/` and `inventory.py` give their reasons names and numbers as facts; the words
    are `reasons.words`'."""
    found = []
    for where in REASON_MAKERS:
        for path in sorted((SOLVER / where).rglob("*.py")) if (SOLVER / where).is_dir() else [SOLVER / where]:
            found += [f"{path.relative_to(SOLVER)}:{n}" for n in _worded_facts(nodes(path))]
    assert found == []


def test_the_worded_fact_finder_finds_them() -> None:
    """The finder of the test above finds the shapes a fact made of words took (the taint's
    words, a pool's, a constraint's), and passes names and numbers."""
    code = """
def taint(t):
    return Reason.of(Kind.DEVICE_TAINT, key=f"{t.key}={t.value}", effect=t.effect)
def pool(p):
    return Reason.of(Kind.POOL_INVALID, why="device " + p.name + " listed twice")
def rule(k, a):
    return Reason(Kind.ATTRIBUTE_RULE, "", (("words", "{} {}".format(k, a)),))
def fine(p, n):
    return Reason.of(Kind.POOL_INCOMPLETE, f"{p.ns}/{p.name}", driver=p.driver, published=n, ignored=p.names)
"""
    assert _worded_facts(tuple(ast.walk(ast.parse(code)))) == [3, 5]


# --- no code compares reason text ---------------------------------------------------------------

TEXT_CALLS = {"say", "node_words", "anywhere", "why_not", "explain_unschedulable"}
"""Calls that give a reason's words."""
TEXT_METHODS = {"reason", "template", "text", "texts"}
"""Methods that give a reason's words or a fact's text (`Answer.reason` was one; `Reason.text`)."""
STR_METHODS = {"startswith", "endswith", "replace", "find", "rfind", "index", "count", "split", "partition"}
ALLOWED = {
    ("planning/triage.py", "reason"): "an InputError's message (`error.reason`), rewritten to name an "
    "unread object: not a pod's reason",
}
"""(module, attribute) -> why its `.reason` text may be read as text there."""


def _texty(e: ast.expr, names: set[str], module: str) -> bool:
    """Whether `e` is a reason's words: `p.reason`, `p.node_reasons[n]`, a call that words a
    reason, a fact's text (`r.text("x")`), or a local name bound to one of those."""
    if isinstance(e, ast.Name):
        return e.id in names
    if isinstance(e, ast.Attribute) and e.attr == "reason":
        return (module, "reason") not in ALLOWED
    if isinstance(e, ast.Subscript):
        value = e.value
        return (
            isinstance(value, ast.Attribute) and value.attr == "node_reasons" or _texty(value, names, module)
        )
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Name):
            return f.id in TEXT_CALLS
        if isinstance(f, ast.Attribute):
            return f.attr in TEXT_CALLS or f.attr in TEXT_METHODS
    return False


def _text_comparisons(walked: Sequence[ast.AST], module: str = "") -> list[int]:
    """Lines that compare a reason's words or search them (==, !=, in, str methods, re).
    `walked`: every node of a tree, `ast.walk`'s (the module's scope: all of them)."""
    found: list[int] = []
    for scope in walked:
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module):
            continue
        names: set[str] = set()
        inside = walked if isinstance(scope, ast.Module) else list(ast.walk(scope))
        for node in inside:  # names bound to words, in this scope
            if isinstance(node, ast.Assign) and _texty(node.value, names, module):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in inside:
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops
            ):
                if any(_texty(x, names, module) for x in [node.left, *node.comparators]):
                    found.append(node.lineno)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if f.attr in STR_METHODS and _texty(f.value, names, module):
                    found.append(node.lineno)
                elif (
                    isinstance(f.value, ast.Name)
                    and f.value.id == "re"
                    and any(_texty(a, names, module) for a in node.args)
                ):
                    found.append(node.lineno)
    return sorted(set(found))


def test_no_module_compares_or_searches_reason_text() -> None:
    """Outside `reasons/words.py` (where words are made from values), no code compares a
    reason's words, searches them or rewrites them: it decides on `Reason.kind` and facts."""
    found = []
    for path in sorted(SOLVER.rglob("*.py")):
        module = str(path.relative_to(SOLVER))
        if module == "reasons/words.py":
            continue
        found += [f"{module}:{n}" for n in _text_comparisons(nodes(path), module)]
    assert found == []


def test_the_text_finder_finds_them() -> None:
    """The finder of the test above finds the shapes that were in the code: a search of an
    answer's words (first fit's twins), a prefix test (`startswith(DROPPED)`), a rewrite of a
    fact's words (explain's masking), a comparison with a pod's reason."""
    code = """
def portable(answer, node):
    words = answer.reason()
    return str(node.name) not in words
def dropped(p):
    return p.reason.startswith("dropped")
def masked(r, node):
    return re.sub(node, "", r.text("why"))
def same(p, q):
    return p.reason == q.reason or p.node_reasons["n1"] == "x"
def fine(p):
    return p.reason is None and p.why.kind is Kind.NO_NODE and "n1" in p.node_reasons
"""
    assert _text_comparisons(tuple(ast.walk(ast.parse(code)))) == [4, 6, 8, 10]


# --- slices' names are facts twins re-make (issue #41, step 4) -----------------------------------


def test_twins_share_reasons_naming_slices_and_left_out_slices_with_their_own_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nodes whose NIC pools are invalid alike — two slices listing one device, or a slice
    left out for a problem (`planning.leftpools`) — share first fit's answer for a GPU pod
    (the pools are not searched: `skipped`), each twin's words naming its own slices (was:
    not shared: twins did not compare slice names). The slices' names are
    unrelated to the nodes' (no `Kind.NODE_NAMED` placeholder): only the slice facts, re-made
    in order (`reasons.renamed`), can name them right."""
    docs: list[dict[str, Any]] = [device_class("gpu"), _node("big")]
    docs.append(resource_slice("big", [device("gpu-0"), device("gpu-1")], node="big"))
    for i in range(5):
        n, a, b, c = f"n{i}", f"s{i * 7 % 11}", f"t{i * 5 % 13}", f"u{i * 3 % 7}"
        nic: dict[str, Any] = {"driver": "nic.example.com", "node": n, "pool": f"nic{i * 2 % 9}", "count": 2}
        docs += [
            _node(n),
            resource_slice(a, [device("eth-0"), device("eth-1")], **nic),
            resource_slice(b, [device("eth-0")], **nic),
            resource_slice(c, [device("x"), device("x")], driver="nic.example.com", node=n, pool=f"left{i}"),
        ]
    docs += [claim(f"c{i}", [request("gpu")]) for i in range(4)]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs}))
    cluster = dra_solver.load([path], strict=False)
    assert [s.metadata.name for s in cluster.slices if s.left_out is not None] == [
        "u0",
        "u3",
        "u6",
        "u2",
        "u5",
    ]

    shared = _shared_and_alone(monkeypatch, cluster, allocator="reference").pods
    assert [p.node for p in shared] == ["big", "big", None, None]
    # the line counts the five nodes as one cause, said as on the first (was: a group per node)
    assert (shared[3].reason or "").endswith(
        "5 nodes: claim default/c3: request gpu: needs 1 device(s), 0 match the selectors (not searched: "
        "pool nic.example.com/left0 generation 1 is invalid: ResourceSlice u0 is not valid: "
        "spec.devices[1].name: duplicate device name 'x' in this slice; pool nic.example.com/nic0 "
        "generation 1 is invalid: device eth-0 listed by slices s0 and t0) "
        "(as on n0; on the other 4 alike, in their own names)"
    ), shared[3].reason
    n3 = shared[3].node_reasons["n3"]
    assert "device eth-0 listed by slices s10 and t2" in n3, n3
    assert (
        "ResourceSlice u2 is not valid: spec.devices[1].name: duplicate device name 'x' in this slice" in n3
    ), n3


def test_a_cel_runtime_error_names_its_claim_as_a_fact_not_in_its_words() -> None:
    """A CEL error's words stay the error's own (a text), and nothing reads them back: the
    claim whose own selector met it is a fact (`CelError.claim`, which `planning.triage`'s
    `held_for_cel_error` reads; was: a pattern over `where`'s words)."""
    bad = 'device.attributes["gpu.example.com"].missing == 1'
    docs = [
        device_class("gpu"),
        resource_slice("s", [device("gpu-0")]),
        claim("own", [request("gpu", selectors=[{"cel": {"expression": bad}}])]),
    ]
    problem = _problem(docs)
    errors = {
        problem.claims[a.claim].name: c.error for a in problem.alternatives for c in a.candidates if c.error
    }
    assert errors["own"] is not None and errors["own"].claim == "default/own"
    assert errors["own"].where.startswith("claim default/own: ")  # the words are unchanged
