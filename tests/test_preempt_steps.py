"""A preemption plan as steps to do, in order, and the fragmentation reading
(`preempt.steps`; docs/semantics.md, "Preemption", "Doing a plan with moves")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from preempt_cases import Pending, Running, build, defrag_docs
from test_preempt_moves_exhaustive import CPU, generate
from typer.testing import CliRunner

from dra_solver.cli.main import app
from dra_solver.preempt import plan_preempt
from dra_solver.preempt.steps import _claims_of, _devices, fragmentation, steps

runner = CliRunner()


def test_two_moves_in_order_between_a_cordon_and_an_uncordon() -> None:
    from dra_solver.api.cluster import Cluster

    c = Cluster.from_objects(defrag_docs())
    out = plan_preempt(c, allow_moves=True)
    todo = steps(c, out)
    assert [s.kind for s in todo] == ["cordon", "move", "move", "uncordon"]
    assert todo[0].command == "kubectl cordon n2" and todo[-1].command == "kubectl uncordon n2"
    assert [s.command for s in todo[1:3]] == [
        "kubectl delete pod -n default a",
        "kubectl delete pod -n default b",
    ]
    for s in todo[1:3]:
        assert s.to in ("n0", "n1") and f"pin: nodeSelector kubernetes.io/hostname={s.to}" in s.note
        assert "ReplicaSet/web re-creates it" in s.note
    assert todo[-1].after == (2, 3) and "default/train" in todo[-1].note
    frag = fragmentation(c, out)
    assert (frag.before.free, frag.before.largest, frag.before.stranded) == (14, 6, 14)
    assert (frag.after.free, frag.after.largest) == (6, 4)
    assert frag.shapes == (8,) and frag.moves == 2 and frag.unblocked == 1 and frag.per_move == 0.5


def test_a_plan_that_changes_no_running_pod_has_no_steps() -> None:
    c = build({"n0": 4}, [Running("r", "n0", 0, (0,), owner="rs")], [Pending("p", 100, 2)])
    out = plan_preempt(c, allow_moves=True)
    assert not out.moves and steps(c, out) == []


@pytest.mark.parametrize("seed", range(0, 120, 3))
def test_a_move_comes_after_the_steps_that_free_its_devices(seed: int) -> None:
    """On the generated clusters: every device a moved pod takes that a leaving pod held is
    freed by an earlier step (or the note says the replacement waits), and every eviction and
    move is one step."""
    nodes, running, pending, pdbs, gangs = generate(seed)
    c = build(nodes, running, pending, pdbs, cpu=str(CPU), gangs=gangs)
    out = plan_preempt(c, allow_moves=True)
    todo = steps(c, out)
    if not out.moves and not out.victims:
        assert todo == []
        return
    number = {s.pod: s.number for s in todo if s.pod is not None}
    assert sorted(number) == sorted([v.name for v in out.victims] + [m.name for m in out.moves])
    held = {}
    for name in number:
        pod = next(p for p in c.pods.values() if p.namespaced_name == name)
        for d in _devices(_claims_of(c, pod)):
            held[d] = name
    for m in out.moves:
        assert m.plan is not None
        for d in _devices(m.plan.claims):
            if d in held and held[d] != m.name:
                step = next(s for s in todo if s.pod == m.name)
                assert number[held[d]] < number[m.name] or "stays Pending until then" in step.note


def test_the_table_and_the_annotations_carry_the_steps_and_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(defrag_docs()))
    table = runner.invoke(app, ["plan", str(path), "--preempt", "--allow-moves", "-o", "table"])
    assert table.exit_code == 0, table.stderr
    assert "steps, in order" in table.stdout and "kubectl cordon n2" in table.stdout
    assert "fragmentation" in table.stdout and "0.5 per move" in table.stdout
    doc = runner.invoke(app, ["plan", str(path), "--preempt", "--allow-moves", "-o", "json"])
    assert doc.exit_code == 0, doc.stderr
    notes = json.loads(doc.stdout)["metadata"]["annotations"]
    todo = json.loads(notes["dra-solver.io/steps"])
    assert [s["kind"] for s in todo] == ["cordon", "move", "move", "uncordon"]
    frag = json.loads(notes["dra-solver.io/fragmentation"])
    assert frag["before"]["largest"] == 6 and frag["after"]["free"] == 6 and frag["unblocked"] == 1


def test_explain_says_where_a_pending_pod_could_go_after_how_many_moves(tmp_path: Path) -> None:
    """On the defragmentation case: n2 after moving a and b; n0 and n1 only by evicting the
    priority-1000 pods, which train (priority 100) may not: not hosts."""
    from dra_solver.api.cluster import Cluster
    from dra_solver.planning.job import Options
    from dra_solver.preempt.hosts import Host, hosts

    c = Cluster.from_objects(defrag_docs())
    assert hosts(c, "default/train", Options()) == [Host("n2", ("default/a", "default/b"), ())]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(defrag_docs()))
    got = runner.invoke(app, ["explain", str(path), "--pod", "train", "--preempt", "--allow-moves"])
    assert got.exit_code == 0, got.stderr
    assert "n2 after 2 moves (default/a, default/b)" in got.stdout and "1 node after 2 moves" in got.stdout


def test_the_report_shows_the_steps_and_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(defrag_docs()))
    page = tmp_path / "report.html"
    got = runner.invoke(
        app, ["plan", str(path), "--preempt", "--allow-moves", "--report", str(page), "-o", "name"]
    )
    assert got.exit_code == 0, got.stderr
    html = page.read_text()
    assert 'id="steps-table"' in html and "kubectl cordon n2" in html and 'id="fragmentation-table"' in html
