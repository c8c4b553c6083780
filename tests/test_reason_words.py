"""Reasons as values, worded in one module (issue #41, step 4): one test per glitch users saw
where reasons were sentences built in many places — a prefix said twice, a placeholder left in
the output, a count with the wrong plural, a taint named by nobody, a line of thousands of
characters — and that code decides on `Reason.kind`, not on text.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from builders import claim, device, device_class, request, resource_slice
from preempt_cases import Pending, Running, cluster_docs
from test_explain_command import A100, gpus
from typer.testing import CliRunner

from dra_solver import Cluster, allocate, plan
from dra_solver import why as explain
from dra_solver.api.live import Target
from dra_solver.cli.main import app
from dra_solver.cli.options import AllocatorChoice, Search, StrategyChoice
from dra_solver.cli.watch import Watching, watch_line
from dra_solver.errors import InputError
from dra_solver.planning.outcome import PlanOutcome, PodPlan
from dra_solver.reasons import Kind, Reason
from dra_solver.reasons.words import say
from dra_solver.replan.planner import Planner

runner = CliRunner()


def test_a_request_is_named_once() -> None:
    """Was `claim default/two: request gpu: gpu: needs 2 device(s)`: the request's one
    alternative, named as the request, was named again."""
    c = Cluster.from_objects([device_class("gpu"), gpus("n1", 1), claim("two", [request("gpu", count=2)])])
    reason = allocate(c, ["two"], node="n1").reason or ""
    assert "claim default/two: request gpu: needs 2 device(s), 1 match the selectors" in reason
    assert "gpu: gpu:" not in reason


def test_no_reason_begins_with_not_placed() -> None:
    """The CLI prints `NAME: not placed: REASON`: preemption's reasons began with `not placed:`
    (`not placed: not placed: its preemptionPolicy is Never`), the unworded one with `not
    placed;`. No kind's words begin so."""
    for kind in Kind:
        assert not say(Reason.of(kind, "x")).startswith("not placed"), kind


def test_preemption_says_not_placed_once(tmp_path: Path) -> None:
    docs = cluster_docs({"n1": 1}, [Running("a", "n1", 1, (0,))], [Pending("p", 100, 1, policy="Never")])
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = runner.invoke(app, ["plan", str(path), "--preempt"])
    assert "default/p: not placed: its preemptionPolicy is Never" in result.stderr, result.stderr
    assert "not placed: not placed" not in result.stderr
    why = runner.invoke(app, ["explain", str(path), "--pod", "default/p", "--preempt"])
    assert why.stdout.count("not placed") == 1, why.stdout


def test_a_line_over_a_few_nodes_names_each_node_once() -> None:
    """Was `no node fits the pod: n1: claim default/two: ... (on node n1); n2: ...`."""
    objs = [device_class("gpu"), gpus("n1", 1), gpus("n2", 1), claim("two", [request("gpu", count=2)])]
    out = plan(Cluster.from_objects(objs), allocator="reference")
    reason = out.pods[0].reason or ""
    head = "no node fits the pod: n1 and n2: claim default/two: request gpu: needs 2"
    assert reason.startswith(head), reason
    assert "(on node" not in reason, reason


def test_the_minimal_blocking_set_names_a_claim_once() -> None:
    """Was `claim default/pair + claim default/pair: matchAttribute ...`: the claim's requests
    and its constraint, each named with the claim."""
    cons = [{"requests": ["a", "b"], "matchAttribute": "gpu.example.com/numa"}]
    pair = claim("pair", [request("a", selectors=[A100]), request("b", selectors=[A100])], cons)
    text = explain(Cluster.from_objects([device_class("gpu"), gpus(), pair]), claim="pair").text()
    line = next(x for x in text.splitlines() if "minimal blocking set" in x)
    assert line.endswith(
        "minimal blocking set: claim default/pair: its requests and matchAttribute gpu.example.com/numa "
        "(values available: 0, 1)"
    ), line


def test_explain_prints_no_node_placeholder() -> None:
    """Nodes with the same reason are grouped; their words had the node's name replaced by
    `<node>` for the grouping and printed so: `(on node <node>)`."""
    objs = [device_class("gpu"), *(gpus(n, 1) for n in ("n1", "n2", "n3"))]
    text = explain(Cluster.from_objects([*objs, claim("two", [request("gpu", count=2)])]), claim="two").text()
    assert "3 node(s) (n1, n2, n3): claim default/two: request gpu: needs 2 device(s)" in text, text
    assert "<node>" not in text


def test_explain_prints_no_device_placeholder() -> None:
    """A device named as an example in a group of nodes: `e.g. <node>/gpu-2` before."""
    objs = [device_class("gpu"), *(gpus(n, 4) for n in ("n2", "n3"))]
    big = claim("big", [request("gpu", count=3, selectors=[A100])])
    text = explain(Cluster.from_objects([*objs, big]), claim="big").text()
    assert "2 node(s) (n2, n3)" in text and "(e.g. n2/gpu-2)" in text, text
    assert "<node>" not in text


def test_explain_names_a_few_nodes_and_counts_the_rest() -> None:
    """A line of explain named every node: 7,023 characters on a large cluster."""
    objs = [device_class("gpu"), *(gpus(f"node-{i:03d}", 1) for i in range(60))]
    text = explain(Cluster.from_objects([*objs, claim("two", [request("gpu", count=2)])]), claim="two").text()
    assert "60 node(s) (node-000, node-001, " in text and " and 52 more)" in text, text
    assert max(len(line) for line in text.splitlines()) < 500
    fits = explain(Cluster.from_objects([*objs, claim("one", [request("gpu")])]), claim="one").text()
    assert "fits on: node-000, " in fits and " and 52 more" in fits
    assert max(len(line) for line in fits.splitlines()) < 500


def test_explain_alone_prints_no_line_of_thousands_of_characters(tmp_path: Path) -> None:
    """The issue's glitch as users saw it: `explain --alone` on a large cluster printed a line
    of 7,023 characters (every node named)."""
    objs = [
        device_class("gpu"),
        *(gpus(f"node-{i:03d}", 1) for i in range(300)),
        claim("one", [request("gpu")]),
    ]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    result = runner.invoke(app, ["explain", str(path), "--claim", "default/one", "--alone"])
    assert result.exit_code == 0, result.stderr
    assert "fits on: node-000, " in result.stdout and " and 292 more" in result.stdout, result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) < 500


def test_the_watch_line_shows_a_pods_own_words_not_placeholders() -> None:
    """The watch line counted alike pods by their reasons with names taken out, and printed the
    names taken out: `fits on <nodes> alone`, `claim <claim>`. It counts by the reasons'
    values now (`Reason.alike`), and prints the first pod's words."""

    def crowded(name: str) -> PodPlan:
        why = Reason.of(
            Kind.CROWDED,
            name,
            total=2,
            fitting=2,
            fits=("n1", "n2"),
            rooms=("r1", "r2"),
            relation="most",
            others=(),
            claims=(name + "-c",),
        )
        return PodPlan(name, None, [], why=why)

    pods = [crowded("default/a"), crowded("default/b")]
    line = watch_line(PlanOutcome(pods, "cpsat", {"status": "OPTIMAL"}), "plan", 0.1, now=0)
    assert "2 blocked: no node fits the pod (0 of 2 nodes): fits on n1 and n2 alone, but " in line, line
    assert "(2)" in line and "<" not in line, line


def test_the_watch_line_counts_one_error(tmp_path: Path) -> None:
    """Was `(1 errors on stderr)`."""
    lines: list[str] = []
    search = Search(AllocatorChoice.cpsat, StrategyChoice.pack, 10.0, 0)
    watching = Watching(Target(kubeconfig=str(tmp_path / "kubeconfig")), [], None, search, emit=lines.append)
    watching._not_planned([InputError("bad")])
    watching._not_planned([InputError("bad"), InputError("worse")])
    assert lines[0].endswith("(1 error on stderr)") and lines[1].endswith("(2 errors on stderr)"), lines


def _taint_rule(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"pool": "s1"},
            "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"},
        },
    }


def test_a_device_taint_reason_names_the_taint_and_its_rule() -> None:
    """Was `2 have a taint the request does not tolerate`: neither the key nor the rule."""
    devs = [device("gpu-0"), device("gpu-1")]
    c = Cluster.from_objects(
        [
            device_class("gpu"),
            resource_slice("s1", devs),
            _taint_rule("drain-pool"),
            claim("c", [request("gpu")]),
        ]
    )
    reason = allocate(c, ["c"], node="node-1").reason or ""
    assert "2 have the taint maintenance=true:NoSchedule (DeviceTaintRule drain-pool)" in reason, reason
    own = device("gpu-0", taints=[{"key": "broken", "effect": "NoExecute"}])
    c = Cluster.from_objects([device_class("gpu"), resource_slice("s1", [own]), claim("c", [request("gpu")])])
    reason = allocate(c, ["c"], node="node-1").reason or ""
    assert "1 have the taint broken:NoExecute, which the request does not tolerate" in reason, reason


def _node(name: str, n: int, cost: int | None = None) -> list[dict[str, Any]]:
    meta: dict[str, Any] = {"name": name}
    if cost is not None:
        meta["annotations"] = {"dra-solver.io/cost": str(cost)}
    devs = [device(f"gpu-{i}") for i in range(n)]
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": meta},
        resource_slice(f"{name}-s", devs, node=name),
    ]


def _pod(name: str, count: int) -> list[dict[str, Any]]:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": f"{name}-t", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request("gpu", count=count)]}}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": f"{name}-t"}],
        },
    }
    return [template, pod]


def test_the_table_counts_the_devices_of_nodes_a_what_if_plan_adds(tmp_path: Path) -> None:
    """`-o table` showed a node the plan adds as `0 of 0` devices (the report: 8 of 8), and
    without a node in the input it failed outright (no candidate nodes)."""
    pods = [*_pod("p0", 8), *_pod("p1", 4)]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump_all(_node("gpu-8x", 8, cost=2)))
    for nodes in ([], _node("n0", 8)):
        (tmp_path / "c.yaml").write_text(yaml.safe_dump_all([device_class("gpu"), *nodes, *pods]))
        args = ["plan", str(tmp_path / "c.yaml"), "--node-template", str(tmp_path / "t.yaml"), "-o", "table"]
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.stderr
        rows = [line for line in result.stdout.splitlines() if line.startswith("│ gpu-8x-")]
        assert rows and all("of 8" in row for row in rows), result.stdout
        assert "0 of 0" not in result.stdout


def test_identical_pods_get_the_same_reason_after_an_update() -> None:
    """The pods a `plan()` left out are worded with the plan's crowding (`planners.crowding`);
    pods an update added and first fit left out kept first fit's words: identical pods, two
    reasons, in one plan (what `plan --watch` prints)."""
    from test_whatif import node, pods

    objs = [device_class("gpu"), *node("n0", 8), *node("n1", 8), *pods([4] * 6)]
    planner = Planner(Cluster.from_objects(objs))
    planner.plan()
    added = copy.deepcopy(pods([4, 4]))
    for o in added:
        o["metadata"]["name"] = "x" + o["metadata"]["name"]
        for ref in o.get("spec", {}).get("resourceClaims", []):
            ref["resourceClaimTemplateName"] = "x" + ref["resourceClaimTemplateName"]
    out = planner.update(add=added)
    words = {(p.reason or "").replace(p.name.split("/")[1], "P") for p in out.pods if not p.placed}
    assert len([p for p in out.pods if not p.placed]) == 4
    assert len(words) == 1, words
    assert all(p.is_(Kind.CROWDED) for p in out.pods if not p.placed)
    node_words = {p.name: dict(p.node_reasons) for p in out.pods}
    assert node_words["default/xp0"] == node_words["default/p4"], node_words


def test_explain_answers_are_values_worded_in_one_module() -> None:
    """explain's per-node answers (the reason, the detail lines, the fix) are values made where
    they are found (`explain.diagnosis`) and worded by `reasons.words.say`: the printed lines
    are their words, and nodes group by the values, not by their words with names masked."""
    objs = [device_class("gpu"), *(gpus(n, 4) for n in ("n2", "n3"))]
    big = claim("big", [request("gpu", count=3, selectors=[A100])])
    out = explain(Cluster.from_objects([*objs, big]), claim="big")
    answer = out.nodes[0]
    assert answer.why is not None and answer.why.is_(Kind.REQUEST)
    (funnel,) = answer.lines
    assert funnel.is_(Kind.FUNNEL) and funnel.subject == "default/big" and funnel.fact("usable") == 2
    (selector,) = funnel.parts("selectors")
    assert selector.fact("rejects") == 2 and selector.fact("example") == "n2/gpu-2"
    assert answer.fixed_by == Reason.of(Kind.FEWER_DEVICES, "big", request="gpu", count=2)
    text = out.text()
    assert f"  - {say(funnel)}" in text and f"  fix: {say(answer.fixed_by)}" in text, text
    # n2 and n3 differ only in where (the example device): one group
    assert [nodes for _, nodes, _ in out.groups()] == [["n2", "n3"]]


def _tainted(name: str) -> dict[str, Any]:
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {"taints": [taint]}}


def test_explain_groups_nodes_refused_alike_and_says_it_of_each() -> None:
    """Nodes whose constraints refuse the pod for the same taint are one group, whose line says
    `the node` (the scheduling's words name the first node: `node infra-1 has the taint`)."""
    docs = [_tainted("infra-1"), _tainted("infra-2"), *_pod("p", 1)]
    text = explain(Cluster.from_objects(docs), pod="default/p").text()
    assert (
        "2 node(s) (infra-1, infra-2): node constraints: the node has the taint dedicated=infra:NoSchedule"
        in text
    ), text
    assert "infra-1 has" not in text, text


def _labelled(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"pool": "other"}}}


def test_a_refused_node_is_a_value_and_its_name_is_not_masked_in_other_words() -> None:
    """The scheduling's refusal is a value naming its node (`Kind.NODE_SELECTOR`, `node`):
    grouped nodes say `the node`. Was the node's name masked in the text, wherever it stood:
    node n1's `nodeSelector pool=n1x` read `pool=the nodex`, and n1 no longer grouped with
    the other nodes refused for the same selector."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"pool": "n1x"}},
    }
    nodes = [_labelled(f"n{i}") for i in range(1, 7)]
    out = plan(Cluster.from_objects([*nodes, pod]), allocator="reference")
    (p,) = out.pods
    assert p.reason == (
        "no node fits the pod (0 of 6 nodes): 6 nodes: "
        "the node does not match the pod's nodeSelector pool=n1x"
    ), p.reason
    assert p.node_reasons["n1"] == "node n1 does not match the pod's nodeSelector pool=n1x"
    assert p.why is not None and p.why.is_(Kind.NO_NODE)


def test_first_fits_reason_is_facts_worded_in_one_module() -> None:
    """`Kind.NO_NODE` keeps how many nodes were tried and the nodes' reasons as values, grouped
    by value or listed (`reasons.words.nowhere`), not a line composed by first fit nor words:
    `say` composes it."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"pool": "gpu"}},
    }
    for n, grouped in ((6, 1), (3, None)):
        out = plan(
            Cluster.from_objects([*(_labelled(f"n{i}") for i in range(n)), pod]), allocator="reference"
        )
        why = out.pods[0].why
        assert why is not None and why.fact("line") is None
        assert (why.fact("total"), why.fact("grouped")) == (n, grouped)
        assert say(why) == out.pods[0].reason
        others = why.part("others")  # the nodes' reasons as values, grouped by value or listed
        assert others is not None and others.kind is Kind.OVER_NODES
        assert len(others.parts("whys")) == (1 if grouped else n)
        assert others.ints("counts") == ((n,) if grouped else ())
        assert all(w.kind is Kind.NODE_SELECTOR for w in others.parts("whys"))


def test_a_refusal_says_its_node_or_the_node() -> None:
    """One value, two wordings: `where` names the node (a line of its own), `where=False` says
    `the node` (a line whose head names it, or a group of nodes)."""
    r = Reason.of(Kind.TAINT, node="n1", taint="a=b", effect="NoSchedule")
    assert say(r) == "node n1 has the taint a=b:NoSchedule, which the pod does not tolerate"
    assert say(r, where=False) == "the node has the taint a=b:NoSchedule, which the pod does not tolerate"
    assert r.without("node") == Reason.of(Kind.TAINT, node="n2", taint="a=b", effect="NoSchedule").without(
        "node"
    )
    member = Reason.of(Kind.MEMBER, "default/p", parts=(r,))
    assert say(member, where=False) == "default/p: " + say(r, where=False)


def test_explain_names_a_refused_node_once() -> None:
    """Was `node n1: node constraints: node n1 has the taint ...`: the line's head names it."""
    docs = [_tainted("infra-1"), *_pod("p", 1)]
    text = explain(Cluster.from_objects(docs), pod="default/p").text()
    assert "node infra-1: node constraints: the node has the taint dedicated=infra:NoSchedule" in text, text
    assert text.count("infra-1") == 1, text


def _two_requests(nodes: int) -> str:
    """The reason of a claim of two one-device requests over `nodes` nodes of one device each
    (`Kind.RUNS_OUT` on every node)."""
    objs = [device_class("gpu"), *(gpus(f"n{i}", 1) for i in range(1, nodes + 1))]
    objs.append(claim("two", [request("a"), request("b")]))
    return plan(Cluster.from_objects(objs), allocator="reference").pods[0].reason or ""


def test_a_node_listed_or_grouped_is_not_named_again_in_its_words() -> None:
    """A node's words after its name, or said of a group, leave the node out (`say(where=
    False)`). Were `n1: claim default/two: its requests cannot all be served at once on node
    n1 (...)` over a few nodes and `... at once on node the node (...)` over many."""
    few, many = _two_requests(2), _two_requests(5)
    assert few == (  # refused alike: one cause, its nodes named once (was: the words per node)
        "no node fits the pod: n1 and n2: claim default/two: its requests cannot all be served at once "
        "(devices, capacity or shared counters run out)"
    ), few
    assert many == (
        "no node fits the pod (0 of 5 nodes): 5 nodes: claim default/two: its requests cannot all "
        "be served at once (devices, capacity or shared counters run out)"
    ), many


def test_explains_lines_on_the_plan_are_values_worded_in_one_module() -> None:
    """`explain --with-plan` says what the plan does with the subject by values (`PLAN_COUNT`,
    `PLAN_PLACES`, `PLAN_LEAVES` with the pod's own reason as its part, `PLAN_FAILS`), not
    lines composed in `explain.diagnosis`."""
    left = Reason.of(Kind.PREEMPT_NO_VICTIM, "default/p")
    assert say(Reason.of(Kind.PLAN_LEAVES, "default/p", parts=(left,))) == (
        "default/p: the plan does not place it: " + say(left)
    )
    assert say(Reason.of(Kind.PLAN_PLACES, "default/p", node="n1")) == "default/p: the plan places it on n1"
    head = say(Reason.of(Kind.PLAN_COUNT, placed=7, pods=8))
    assert head.endswith(": the plan places 7 of 8 pending pods") and head.startswith("with the plan's")


def test_a_reason_keeps_its_hash_but_not_across_processes() -> None:
    """`Reason` caches its hash (it keys first fit's shared answers); a pickled reason leaves
    the cache behind, since another process hashes its strings with another seed."""
    import pickle

    r = Reason.of(Kind.TAINT, node="n1", taint="a=b", effect="NoSchedule")
    h = hash(r)
    assert hash(r) == h == hash(Reason.of(Kind.TAINT, node="n1", taint="a=b", effect="NoSchedule"))
    assert "_hash" not in r.__getstate__()
    back = pickle.loads(pickle.dumps(r))
    assert back == r and hash(back) == h
