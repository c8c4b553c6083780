"""`planners.perdevice.pod_forms` with the blocked maps that spare it a visit of every node:
a running pod's `AllBut` and a moved pod's replacement's `AlsoBlocked`, whose nodes come as a
`Without` over one shared tuple (issue #43: 46,000 replacements on 10,000 nodes). The forms
must be those of asking every node of every unit: checked against that, written out here."""

from __future__ import annotations

from dataclasses import replace

from preempt_cases import Pending, Running, cluster_docs

from dra_solver.api.cluster import Cluster
from dra_solver.planners.perdevice import PodForm, Without, pod_forms
from dra_solver.planning.job import AllBut, AlsoBlocked, Job, Options
from dra_solver.planning.resolve import make_job
from dra_solver.preempt.model import setting


def _cluster() -> Cluster:
    """Four nodes; n3 has too little cpu left for a 2-GPU pod's replacement (cpu 3): the
    replacements of the Deployment's pods may go on n0-n2 but the one each leaves."""
    running = [
        Running("big", "n3", 1000, (0,), cpu="6"),
        Running("a", "n0", 0, (0,), {"app": "web"}, owner="web", cpu="3"),
        Running("b", "n1", 0, (0, 1), {"app": "web"}, owner="web", cpu="3"),
        Running("c", "n2", 0, (0,), {"app": "web"}, owner="web", cpu="3"),
        Running("bare", "n2", 0, (1,)),
    ]
    docs = cluster_docs({"n0": 8, "n1": 8, "n2": 8, "n3": 8}, running, [Pending("train", 100, 8)])
    return Cluster.from_objects(docs)


def _every_node(job: Job) -> list[tuple[int, tuple[str | None, ...], int]]:
    """The forms as asking every node of every unit gives them: (unit, nodes, claims)."""
    out = []
    for i, unit in enumerate(job.units):
        by: dict[tuple[object, ...], list[str | None]] = {}
        for n in job.nodes:
            if n in unit.blocked:
                continue
            v = job.book.variant(unit.needs, n)
            if job.book.refusal(v, n) is None:
                by.setdefault(v.key, []).append(n)
        out += [(i, tuple(ns), len(unit.claims)) for ns in by.values() if unit.claims]
    return out


def _seen(forms: list[PodForm]) -> list[tuple[int, tuple[str | None, ...], int]]:
    return [(f.unit, tuple(f.nodes), len(f.claims)) for f in forms]


def test_replacements_and_running_pods_get_the_forms_of_every_node_asked() -> None:
    c = _cluster()
    opts = Options()
    s = setting(c, None, None, opts, allow_moves=True)
    assert len(s.movers) == 3 and all(isinstance(u.blocked, AlsoBlocked) for u in s.movers.values())
    held = [
        replace(u, blocked=AllBut(s.nodes, frozenset(s.nodes), s.victims[k].node, "held"))
        for k, u in s.movers.items()
    ]
    job = make_job(s.released, [*s.pending, *s.movers.values(), *held], s.nodes, opts)
    forms = pod_forms(job)
    assert _seen(forms) == _every_node(job)
    shared = [f.nodes for f in forms if isinstance(f.nodes, Without)]
    assert shared, "the replacements' nodes share one tuple"
    # n3 is full for a replacement (cpu); each replacement leaves its own node out.
    for f in forms:
        if isinstance(f.nodes, Without):
            assert "n3" not in f.nodes and f.nodes.node not in f.nodes
            assert len(list(f.nodes)) == len(f.nodes) == 2


def test_without_is_a_sequence_of_the_nodes_but_one() -> None:
    nodes = ("a", "b", "c", "d")
    where = {n: i for i, n in enumerate(nodes)}
    for gone in nodes:
        w = Without(nodes, frozenset(nodes), gone, where)
        plain = tuple(n for n in nodes if n != gone)
        assert tuple(w) == plain and len(w) == 3
        assert [w[i] for i in range(3)] == list(plain) and w[-1] == plain[-1] and w[0:2] == plain[0:2]
        assert gone not in w and all(n in w for n in plain)
        assert w == plain and hash(w) == hash(plain) and w == Without(nodes, frozenset(nodes), gone, where)


def test_also_blocked_reads_as_the_dict_it_stands_for() -> None:
    base = {"n1": "selector", "n2": "taint"}
    for node in ("n0", "n1"):
        m = AlsoBlocked(base, node, "leaves")
        plain = {node: "leaves", **base}
        assert dict(m) == plain and len(m) == len(plain) and set(m) == set(plain)
        assert all((n in m) == (n in plain) for n in ("n0", "n1", "n2", "n3"))
