"""The one "cluster after a change" (`planning.snapshot.Snapshot`): placements, evictions and
moves as Kubernetes leaves them, layers that fork / revert / commit exactly, and inputs never
modified; and the callers that build the cluster after a plan from it agree on
`PodPlan.reserved` (docs/semantics.md, "Allocation results", "Preemption")."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from builders import allocated, device, device_class, resource_slice, result
from test_cli_output import node as _node
from test_cli_output import pod as _pod
from test_cli_output import template as _template

from dra_solver.api.cluster import Cluster
from dra_solver.output.objects import cluster_after
from dra_solver.pipeline import plan
from dra_solver.planning.outcome import PlanOutcome, PodPlan
from dra_solver.planning.snapshot import Snapshot
from dra_solver.replan.planner import _pinned
from dra_solver.whatif.filling import applied, fill


def _cluster() -> Cluster:
    """Node a holds claim `shared` (gpu-0) for the running pod r1; p2 names `shared` too
    (pending), p1 asks for a GPU of its own; node b has one GPU free."""
    shared = allocated("shared", [result("gpu-0", pool="a")])
    shared["status"]["reservedFor"] = [{"resource": "pods", "name": "r1", "uid": "uid-r1"}]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
    shared["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [term]}
    return Cluster.from_objects(
        [
            device_class("gpu"),
            resource_slice("a", [device("gpu-0"), device("gpu-1")], node="node-a"),
            resource_slice("b", [device("gpu-0")], node="node-b"),
            _node("node-a"),
            _node("node-b"),
            _template("one-gpu"),
            shared,
            _pod("r1", {"name": "gpu", "resourceClaimName": "shared"}, nodeName="node-a"),
            _pod("p1", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}),
            _pod("p2", {"name": "gpu", "resourceClaimName": "shared"}),
        ]
    )


def _dumps(cluster: Cluster) -> list[dict[str, Any]]:
    return [o.dump() for o in cluster.objects()]


def _state(s: Snapshot) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """The snapshot's pods and claims, objects by identity and in order."""
    return [(k, id(v)) for k, v in s.cluster.pods.items()], [(k, id(v)) for k, v in s.cluster.claims.items()]


def _reserved(c: Any) -> list[str]:
    return [r.name for r in c.status.reserved_for] if c.status is not None else []


@pytest.fixture(scope="module")
def planned() -> tuple[Cluster, PlanOutcome]:
    cluster = _cluster()
    return cluster, plan(cluster)


def test_placing_a_pod_binds_it_allocates_its_claims_and_reserves_the_shared_ones(
    planned: tuple[Cluster, PlanOutcome],
) -> None:
    cluster, outcome = planned
    by_name = {p.name: p for p in outcome.pods}
    p1, p2 = by_name["default/p1"], by_name["default/p2"]
    assert (
        p1.placed
        and p2.placed
        and p2.node == "node-a"
        and [c.metadata.name for c in p2.reserved] == ["shared"]
    )
    before = _dumps(cluster)
    s = Snapshot(cluster)
    s.place_all(outcome.pods)
    after = s.cluster
    assert after.pods[("default", "p1")].spec.node_name == p1.node
    assert after.pods[("default", "p2")].spec.node_name == "node-a"
    own = after.claims[p1.claims[0].key]
    assert own.status is not None and own.status.allocation is not None
    assert _reserved(after.claims[("default", "shared")]) == ["r1", "p2"]
    assert _dumps(cluster) == before  # the input and its objects are untouched
    assert cluster.pods[("default", "p2")].spec.node_name is None
    assert _reserved(cluster.claims[("default", "shared")]) == ["r1"]
    assert after.pods is not cluster.pods and after.claims is not cluster.claims


def test_a_pod_not_placed_changes_nothing() -> None:
    cluster = _cluster()
    s = Snapshot(cluster)
    pod = cluster.pods[("default", "p1")]
    s.place(PodPlan("default/p1", None, [], "no room", pod=pod))
    assert s.cluster.pods == cluster.pods and s.cluster.claims == cluster.claims


def test_evicting_the_last_user_of_a_claim_deallocates_it() -> None:
    cluster = _cluster()
    before = _dumps(cluster)
    s = Snapshot(cluster)
    released = s.evict({"default/r1"})
    assert ("default", "r1") not in s.cluster.pods
    assert [c.metadata.name for c in released] == ["shared"]
    assert s.cluster.claims[("default", "shared")].status is not None
    assert s.cluster.claims[("default", "shared")].status.allocation is None  # type: ignore[union-attr]  # asserted just above
    assert _dumps(cluster) == before


def test_evicting_a_pod_deallocates_a_claim_only_its_reserved_for_names() -> None:
    """The resource claim controller reads `reservedFor`, not the pod's spec: a claim reserved
    for r1 alone is deallocated when r1 goes although r1 does not name it, and it is written
    as the API leaves a deallocated claim, `status: {}` (docs/semantics.md, "Preemption"); a
    claim also reserved for a PodGroup keeps its allocation, without r1."""
    orphan = allocated("orphan", [result("gpu-1", pool="a")])
    orphan["status"]["reservedFor"] = [{"resource": "pods", "name": "r1", "uid": "uid-r1"}]
    grouped = allocated("grouped", [result("gpu-0", pool="b")])
    grouped["status"]["reservedFor"] = [
        {"resource": "pods", "name": "r1", "uid": "uid-r1"},
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g", "uid": "uid-g"},
    ]
    cluster = Cluster.from_objects([*_dumps(_cluster()), orphan, grouped])
    s = Snapshot(cluster)
    released = {c.metadata.name: c for c in s.evict({"default/r1"})}
    assert sorted(released) == ["grouped", "orphan", "shared"]
    assert released["orphan"].dump()["status"] == {}
    kept = released["grouped"].status
    assert kept is not None and kept.allocation is not None
    assert [(r.resource, r.name) for r in kept.reserved_for] == [("podgroups", "g")]


def test_evicting_one_of_two_users_keeps_the_claim_reserved_for_the_other(
    planned: tuple[Cluster, PlanOutcome],
) -> None:
    cluster, outcome = planned
    s = Snapshot(cluster)
    s.place_all(outcome.pods)
    released = s.evict({"default/r1"})
    shared = s.cluster.claims[("default", "shared")]
    assert released == [shared]
    assert shared.status is not None and shared.status.allocation is not None
    assert _reserved(shared) == ["p2"]


def test_a_move_evicts_the_pod_and_places_its_replacement() -> None:
    cluster = _cluster()
    s = Snapshot(cluster)
    again = Cluster.from_objects([_pod("r1-x", {"name": "gpu", "resourceClaimName": "shared"})])
    new = again.pods[("default", "r1-x")]
    s.move("default/r1", PodPlan("default/r1-x", "node-b", [], placed=True, pod=new))
    assert ("default", "r1") not in s.cluster.pods
    assert s.cluster.pods[("default", "r1-x")].spec.node_name == "node-b"
    assert new.spec.node_name is None  # the plan's Pod is not modified either


def test_revert_restores_exactly_and_commit_keeps(planned: tuple[Cluster, PlanOutcome]) -> None:
    cluster, outcome = planned
    s = Snapshot(cluster)
    start = _state(s)
    s.fork()
    s.place_all(outcome.pods)
    placed = _state(s)
    s.fork()
    s.evict({"default/r1"})
    s.fork()
    s.allocate([cluster.claims[("default", "shared")].model_copy(update={"status": None})])
    assert s.depth == 3
    s.revert()
    s.revert()
    assert _state(s) == placed  # the same objects, in the same order
    s.fork()
    s.evict({"default/r1", "default/p1"})
    evicted = _state(s)
    s.commit()
    assert s.depth == 1 and _state(s) == evicted
    s.revert()
    assert _state(s) == start and s.depth == 0
    assert [k for k, _ in start[0]] == list(cluster.pods)  # the order of the input's pods
    with pytest.raises(ValueError, match="revert without a fork"):
        s.revert()
    with pytest.raises(ValueError, match="commit without a fork"):
        s.commit()


def test_the_live_view_follows_the_snapshot(planned: tuple[Cluster, PlanOutcome]) -> None:
    """A holder of `cluster` (the ledger) sees each change and each revert."""
    cluster, outcome = planned
    s = Snapshot(cluster)
    view = s.cluster
    s.fork()
    s.place_all(outcome.pods)
    assert view.pods[("default", "p2")].spec.node_name == "node-a"
    s.revert()
    assert view is s.cluster and view.pods[("default", "p2")].spec.node_name is None


# --- PodPlan.reserved: fill and re-planning build the same cluster after a plan ----------------


def test_fill_and_replanning_reserve_the_shared_claims_of_placed_pods(
    planned: tuple[Cluster, PlanOutcome],
) -> None:
    """docs/semantics.md, "Allocation results" / the checker's `pod-claim-reserved`: a placed
    pod's claims name it in `reservedFor`, a shared claim the input had allocated too
    (`PodPlan.reserved`) — what `plan -o yaml` writes. `whatif.filling.applied` ("as if fed
    back in") once left the shared claim reserved for r1 only; re-planning's `_pinned`
    reserved it. Both now agree with the output fed back in."""
    cluster, outcome = planned
    fed_back = Cluster.from_objects(cluster_after(cluster, outcome.pods))
    want = _reserved(fed_back.claims[("default", "shared")])
    assert want == ["r1", "p2"]
    placed = [p for p in outcome.pods if p.placed]
    for after in (applied(cluster, outcome), _pinned(cluster, placed)):
        assert _reserved(after.claims[("default", "shared")]) == want
        assert {k: c.dump() for k, c in after.claims.items()} == {
            k: c.dump() for k, c in fed_back.claims.items()
        }
        assert {k: p.spec.node_name for k, p in after.pods.items()} == {
            k: p.spec.node_name for k, p in fed_back.pods.items()
        }


def test_fill_counts_replicas_on_the_cluster_after_the_pending_plan() -> None:
    """p1 and p2 are planned first (gpu-1 of node a, gpu-0 of node b or the other way round):
    one GPU is left for the replicas of p1."""
    got = fill(_cluster(), "p1", limit=8)
    assert got.count == 1 and got.tried == 8


def test_a_bound_pod_keeps_the_extended_status_of_its_plan_when_the_input_pod_had_no_status() -> None:
    """A pod placed with DRA-served extended resources (KEP-5004) is bound with its
    `status.extendedResourceClaimStatus`, also when the input Pod had no status at all: the
    node-resource check counts those resources as served by devices, not by the node's
    allocatable. Re-planning's pinned cluster dropped it (an update then failed verification:
    `node n1 is overcommitted in example.com/gpu`)."""
    from test_node_resources import ext_pod, gpu_class, gpus
    from test_node_resources import node as ext_node

    from dra_solver.replan.planner import Planner

    cluster = Cluster.from_objects(
        [gpu_class(), gpus("n1", 8), ext_node("n1", cpu="8", pods="110"), ext_pod("a"), ext_pod("b", count=2)]
    )
    planner = Planner(cluster, allocator="reference")
    first = planner.plan()
    assert all(p.placed for p in first.pods) and cluster.pods[("default", "a")].status is None
    s = Snapshot(cluster)
    s.place_all(first.pods)
    status = s.cluster.pods[("default", "a")].status
    assert status is not None and status.extended_resource_claim_status == first.pods[0].extended["default/a"]
    more = Cluster.from_objects([ext_pod("c", count=2)]).pods[("default", "c")]
    after = planner.update(add=[more])
    assert [(p.name, p.placed) for p in after.pods] == [
        ("default/a", True),
        ("default/b", True),
        ("default/c", True),
    ]


def _scheduled(s: Snapshot, name: str) -> list[dict[str, Any]]:
    status = s.cluster.pods[("default", name)].status
    assert status is not None
    return [c for c in (status.model_extra or {}).get("conditions", []) if c["type"] == "PodScheduled"]


def test_a_bound_pod_carries_the_bindings_condition_and_a_stale_one_goes() -> None:
    """The snapshot binds as the binding subresource does: `PodScheduled=True`, no reason; a
    `PodScheduled=False` from an earlier attempt is replaced, other conditions stay."""
    stale = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "earlier"}
    ready = {"type": "Ready", "status": "False"}
    pending = _pod("p1", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"})
    pending["status"] = {"phase": "Pending", "conditions": [stale, ready]}
    cluster = Cluster.from_objects(
        [o.dump() for o in _cluster().objects() if o.metadata.name != "p1"] + [pending]
    )
    s = Snapshot(cluster)
    bound = s.bind(cluster.pods[("default", "p1")], "node-b")
    assert bound.spec.node_name == "node-b" and s.cluster.pods[("default", "p1")] is bound
    assert (bound.status.model_extra or {})["conditions"] == [
        ready,
        {"type": "PodScheduled", "status": "True"},
    ]
    assert cluster.pods[("default", "p1")].status.model_extra["conditions"] == [
        stale,
        ready,
    ]  # input untouched


def test_a_pod_left_out_is_recorded_pending_with_its_reason() -> None:
    """`record` of a pod not placed: phase Pending, `PodScheduled=False / Unschedulable` with
    the plan's reason, its claims as the plan has them; nothing bound."""
    cluster = _cluster()
    s = Snapshot(cluster)
    pod = cluster.pods[("default", "p1")]
    s.record(PodPlan("default/p1", None, [], "no room", pod=pod))
    left = s.cluster.pods[("default", "p1")]
    assert left.spec.node_name is None and left.status is not None and left.status.phase == "Pending"
    assert _scheduled(s, "p1") == [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no room"}
    ]
    assert s.cluster.claims == cluster.claims


def test_the_output_writes_the_snapshots_pods_in_the_inputs_key_order(
    planned: tuple[Cluster, PlanOutcome],
) -> None:
    """`cluster_after` writes each Pod as the snapshot records it; the keys scheduling adds
    come after the input's (`nodeName` last in `spec`), so the output diffs against its input
    line for line."""
    cluster, outcome = planned
    s = Snapshot(cluster)
    for p in outcome.pods:
        s.record(p)
    written = {
        (o["metadata"].get("namespace", "default"), o["metadata"]["name"]): o
        for o in cluster_after(cluster, outcome.pods)
        if o["kind"] == "Pod"
    }
    for key, pod in s.cluster.pods.items():
        assert written[key] == pod.dump()
    p1 = written[("default", "p1")]
    assert list(p1["spec"])[-1] == "nodeName" and list(p1["spec"])[:-1] == list(
        cluster.pods[("default", "p1")].dump()["spec"]
    )
    assert p1["status"]["conditions"] == [{"type": "PodScheduled", "status": "True"}]


def test_a_replacement_pod_is_created_pending() -> None:
    cluster = _cluster()
    s = Snapshot(cluster)
    twin = cluster.pods[("default", "p1")].model_copy(
        update={"metadata": cluster.pods[("default", "p1")].metadata.model_copy(update={"name": "p1-new"})}
    )
    s.create(twin)
    assert s.cluster.pods[("default", "p1-new")] is twin and ("default", "p1-new") not in cluster.pods


def test_removing_claims_takes_them_out_until_a_placement_allocates_them_again(
    planned: tuple[Cluster, PlanOutcome],
) -> None:
    """`Snapshot.remove` (first fit's `_Placing.release`: a placement of the plan's own
    undone): the claim is gone from the view, a key not there changes nothing, `allocate`
    brings it back, and a revert restores the claim as it was."""
    cluster, outcome = planned
    p1 = next(p for p in outcome.pods if p.name == "default/p1")
    (mine,) = p1.claims
    s = Snapshot(cluster)
    s.place(p1)
    assert s.cluster.claims[mine.key] is mine
    s.fork()
    s.remove([mine, mine])
    assert mine.key not in s.cluster.claims and ("default", "shared") in s.cluster.claims
    s.allocate([mine])
    assert s.cluster.claims[mine.key] is mine
    s.remove([mine])
    s.revert()
    assert s.cluster.claims[mine.key] is mine


WRITES_ELSEWHERE = {
    "solver/api/cluster.py": "Cluster.add builds the input cluster, object by object",
    "solver/cli/inputs.py": "the CLI's loader builds the input cluster with Cluster.add, object by object",
    "solver/planners/aggregated/classes.py": "LocalViews' index (pool -> claims), not a cluster's",
    "solver/replan/changes.py": (
        "an update (`Planner.update`, `plan --watch`) is the next input: objects of any kind "
        "(Nodes, slices, classes, claims, pods) added to and removed from a copy of the input with "
        "Cluster.add, identities and references checked as the loader checks them; a plan's "
        "changes are layered on it afterwards by the snapshot"
    ),
    "solver/whatif/sweep.py": (
        "a scenario's objects (any kind, read from its file) added to a copy of the base cluster "
        "with Cluster.add: the scenario's input, which its plan then reads like any input"
    ),
}
"""Modules that write a `claims` or `pods` dict (or add objects to a Cluster, which files them
there) outside the snapshot, and why that is no cluster after a change: they build an input —
what the cluster *is* (docs/architecture.md, "The plan's ground floor") — where the snapshot
layers what a plan does to it."""

_MUTATORS = ("pop", "popitem", "setdefault", "update", "clear", "__setitem__", "__delitem__", "__ior__")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of `scope` outside the functions nested in it."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _bindings(nodes: list[ast.AST]) -> list[tuple[ast.expr, ast.expr | None]]:
    """(target, value) of every assignment among `nodes` (a tuple assigned to a tuple: element
    by element; an annotated name: its annotation as the value, None when it has none)."""
    out: list[tuple[ast.expr, ast.expr | None]] = []
    for n in nodes:
        if isinstance(n, ast.Assign):
            value = n.value
            for t in n.targets:
                if (
                    isinstance(t, ast.Tuple)
                    and isinstance(value, ast.Tuple)
                    and len(t.elts) == len(value.elts)
                ):
                    out.extend(zip(t.elts, value.elts, strict=True))
                else:
                    out.append((t, n.value))
        elif isinstance(n, ast.AnnAssign | ast.NamedExpr):
            out.append((n.target, n.value))
    return out


def _is_dict(e: ast.expr, aliases: set[str]) -> bool:
    """`<x>.claims` / `<x>.pods`, or a name bound to one."""
    return (isinstance(e, ast.Attribute) and e.attr in ("claims", "pods")) or (
        isinstance(e, ast.Name) and e.id in aliases
    )


def _makes_cluster(e: ast.expr | None, returns_cluster: set[str]) -> bool:
    """`Cluster(...)`, `SourcedCluster(...)`, `Cluster.from_objects(...)`, a call of a function
    of the module annotated `-> Cluster`, or an annotation `Cluster`."""
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            return f.value.id.endswith("Cluster") and f.attr.startswith("from_")
        return isinstance(f, ast.Name) and (f.id.endswith("Cluster") or f.id in returns_cluster)
    return isinstance(e, ast.Name) and e.id.endswith("Cluster")


def _names(
    scope: ast.AST, own: list[ast.AST], aliases: set[str], clusters: set[str], returns_cluster: set[str]
) -> tuple[set[str], set[str]]:
    """The names of `scope` bound to a cluster's dict (`aliases`) or to a Cluster (`clusters`),
    besides those it inherits: assigned one, also through another such name, or (a Cluster) a
    parameter annotated `Cluster`."""
    aliases, clusters = set(aliases), set(clusters)
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        args = scope.args
        clusters |= {
            a.arg
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if _makes_cluster(a.annotation, set())
        }
    bound = [(t.id, v) for t, v in _bindings(own) if isinstance(t, ast.Name) and v is not None]
    while True:
        before = len(aliases) + len(clusters)
        for target, value in bound:
            if _is_dict(value, aliases):
                aliases.add(target)
            elif _makes_cluster(value, returns_cluster) or (
                isinstance(value, ast.Name) and value.id in clusters
            ):
                clusters.add(target)
        if len(aliases) + len(clusters) == before:
            return aliases, clusters


def _written(n: ast.AST, aliases: set[str], clusters: set[str]) -> list[str]:
    """What node `n` writes into a cluster's dicts: an item assigned or deleted, an in-place
    `|=`, a mutating method, or `Cluster.add`."""
    out = []
    targets: list[ast.expr] = []
    if isinstance(n, ast.Assign | ast.Delete):
        targets = n.targets
    elif isinstance(n, ast.AugAssign | ast.AnnAssign):
        targets = [n.target]
    for t in targets:
        if isinstance(t, ast.Subscript) and _is_dict(t.value, aliases):
            out.append(f"{n.lineno}: {ast.unparse(t)}")
        elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.BitOr) and _is_dict(t, aliases):
            out.append(f"{n.lineno}: {ast.unparse(t)} |=")  # a dict's in-place update
    f = n.func if isinstance(n, ast.Call) else None
    if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and _is_dict(f.value, aliases):
        out.append(f"{f.lineno}: {ast.unparse(f)}")
    elif (
        isinstance(f, ast.Attribute)
        and f.attr == "add"
        and isinstance(f.value, ast.Name)
        and f.value.id in clusters
    ):
        out.append(f"{f.lineno}: {ast.unparse(f)} (Cluster.add)")
    return out


def _writes(tree: ast.AST) -> list[str]:
    """Writes to a cluster's `claims` / `pods` in `tree`: an item of `<x>.claims` / `<x>.pods`
    assigned or deleted or a mutating method called — also through a local name bound to such a
    dict (`pods = self.cluster.pods; del pods[key]`), in its function or one nested in it — and
    objects added with `Cluster.add` to a name bound to a Cluster (made, returned by a function
    annotated `-> Cluster`, or a parameter annotated `Cluster`). What it misses: a dict or Cluster
    handed to another function that writes it, or reached by `getattr`."""
    returns_cluster = {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _makes_cluster(n.returns, set())
    }
    found: list[str] = []
    todo: list[tuple[ast.AST, set[str], set[str]]] = [(tree, set(), set())]
    while todo:  # each scope with the names it inherits from the scopes around it
        scope, outer_aliases, outer_clusters = todo.pop()
        own = _own_nodes(scope)
        aliases, clusters = _names(scope, own, outer_aliases, outer_clusters, returns_cluster)
        for n in own:
            found += _written(n, aliases, clusters)
            if isinstance(n, _SCOPES):
                todo.append((n, aliases, clusters))
    return sorted(found, key=lambda w: int(w.split(":")[0]))


def test_a_write_through_an_alias_or_cluster_add_is_seen() -> None:
    """The walk below can fail: a write through a local name bound to a cluster's dict (also
    in a nested function, through a second name, or a tuple), and `Cluster.add` on a cluster
    made, returned or passed in, are found; reading them, a copy, and `set.add` are not."""
    code = """\
def evict(self, gone):
    pods = self.cluster.pods
    for key in gone:
        del pods[key]
    same = pods
    same.setdefault("k", 1)

def both(c):
    p, q = c.pods, c.claims
    def inner():
        q["x"] = 1
    p |= {}

def reads(c):
    c.pods += 1  # a counter named pods (output.table.NodeUse)
    pods = c.pods
    copy = dict(c.claims)
    copy["x"] = 1
    seen = set()
    seen.add(1)
    return pods.get("k"), [v for v in pods.values()]

def made():
    out = Cluster()
    out.add(1)
    more = Cluster.from_objects([])
    more.add(2)

def grown(cluster: Cluster, other) -> None:
    cluster.add(1)
    other.add(2)

def copied(c) -> Cluster:
    return c

def after(c):
    new = copied(c)
    new.add(3)
"""
    assert _writes(ast.parse(code)) == [
        "4: pods[key]",
        "6: same.setdefault",
        "11: q['x']",
        "12: p |=",
        "25: out.add (Cluster.add)",
        "27: more.add (Cluster.add)",
        "30: cluster.add (Cluster.add)",
        "38: new.add (Cluster.add)",
    ]


def test_only_the_snapshot_writes_a_clusters_claims_and_pods() -> None:
    """One "cluster after a change" (issue #41, step 5): a planner, the ledger, what-if's fill
    — every caller that changes which pods or claims a cluster holds — goes through
    `planning.snapshot.Snapshot`, so the changes follow one rule and a fork reverts them all.
    First fit's engine once wrote its placements into the ledger's view by hand."""
    root = Path(__file__).resolve().parent.parent
    elsewhere: dict[str, list[str]] = {}
    for path in sorted((root / "solver").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == "solver/planning/snapshot.py":
            continue
        found = _writes(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            elsewhere[name] = found
    assert set(elsewhere) == set(WRITES_ELSEWHERE), elsewhere
    own = _writes(ast.parse((root / "solver/planning/snapshot.py").read_text(encoding="utf-8")))
    assert any(w.endswith(": pods[key]") for w in own), own  # `evict` deletes through an alias
