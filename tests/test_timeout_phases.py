"""Issue #40 §2: every phase of a run looks at the one deadline, and wherever it passes the
answer is a checked plan that says it was cut short (or, while reading, no plan and why).

No test here reads the clock: the deadline is a fake that passes at its N-th look
(`CountingDeadline`), whatever the time; `enforced`'s timer would read the real clock, so
the fake asks for the stop itself when it passes, as the timer does."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver import Cluster, interrupt, plan
from dra_solver.check import check_cluster
from dra_solver.cli import plan as plan_command
from dra_solver.cli.main import app
from dra_solver.cpsat import load_cp_model
from dra_solver.deadline import CUT_SHORT, Deadline
from dra_solver.errors import CutShort
from dra_solver.output.objects import cluster_after
from dra_solver.planning.finish import CHECK_CUT_SHORT
from dra_solver.planning.job import Options

ROOT = Path(__file__).resolve().parent.parent
DUMP = str(ROOT / "docs" / "examples" / "cluster-dump.yaml")
runner = CliRunner()


class CountingDeadline(Deadline):
    """Passes at look number `after` (0: the first; None: never); every look is recorded in
    `looks` (shared with the deadlines cut from it, `leaving`) as the module that looked."""

    def __init__(self, after: int | None, looks: list[str], parent: Deadline | None = None) -> None:
        super().__init__(time.monotonic() + 3600.0, 3600.0, started=time.monotonic(), parent=parent)
        self.after = after
        self.looks = looks

    def left(self, grace: float = 0.0) -> float:
        self.looks.append(_looker())
        if self.after is not None and len(self.looks) > self.after:
            if not self.fired:
                self.fire()
                interrupt.request()  # what `enforced`'s timer does when the deadline passes
            return 0.0
        return 3600.0

    def leaving(self, cpu_seconds: float, *, exact: bool = False, what: str = "") -> Deadline:
        return CountingDeadline(self.after, self.looks, parent=self)

    def share(self, fraction: float) -> Deadline:
        return CountingDeadline(self.after, self.looks, parent=self)


_GO_ON = ("dra_solver.deadline", "dra_solver.cli.plan", "dra_solver.cli.inputs", "contextlib", __name__)
"""Frames that pass a look on: the deadline's helpers, the CLI's reading callback, `with`."""


def _looker() -> str:
    """The module that looked at the deadline (past the frames that only pass it on)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__") in _GO_ON:
        frame = frame.f_back  # type: ignore[assignment]  # None only past the outermost frame
    return str(frame.f_globals.get("__name__")) if frame is not None else "?"


@pytest.fixture(autouse=True)
def _no_stop_left() -> Iterator[None]:
    yield
    interrupt.reset()  # a fake that passed asked for the stop; the next test starts afresh


def _run_cli(monkeypatch: pytest.MonkeyPatch, deadline: CountingDeadline, *args: str) -> Any:
    class Fake:
        @staticmethod
        def since_start(seconds: float) -> Deadline:
            return deadline

    monkeypatch.setattr(plan_command, "Deadline", Fake)
    return runner.invoke(app, ["plan", DUMP, "--timeout", "1h", *args])


@pytest.fixture(scope="module")
def every_look() -> list[str]:
    """The looks of a whole CLI run whose deadline never passes. CP-SAT's import first: the
    run's first import of it looks at the deadline (`cpsat.load_cp_model`) and later ones do
    not, so the runs compared with this one look as often as it does."""
    load_cp_model()
    looks: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        got = _run_cli(mp, CountingDeadline(None, looks))
    assert got.exit_code == 2, got.stderr
    assert "cut short" not in got.stderr
    return looks


def test_every_phase_looks_at_the_deadline(every_look: list[str]) -> None:
    """Reading, the search (its CP-SAT stages, and the run's stop flag, `enforced`) and the
    final check each look at the deadline."""
    seen = set(every_look)
    assert seen & {"dra_solver.api.bounded", "dra_solver.api.load"}, seen  # reading
    assert "dra_solver.planners.run" in seen, seen  # the search, under `enforced`
    assert "dra_solver.cpsat" in seen, seen  # CP-SAT between its stages
    assert "dra_solver.planning.finish" in seen, seen  # the final check
    reading = max(i for i, m in enumerate(every_look) if m.startswith("dra_solver.api"))
    checking = min(i for i, m in enumerate(every_look) if m == "dra_solver.planning.finish")
    assert reading < checking


def _phase(module: str) -> str:
    if module.startswith("dra_solver.api"):
        return "reading"
    if module == "dra_solver.planning.resolve":
        return "resolving"
    return "check" if module == "dra_solver.planning.finish" else "search"


@pytest.mark.parametrize("phase", ["reading", "resolving", "search", "check"])
@pytest.mark.parametrize("which", ["first", "last"])
def test_wherever_the_deadline_passes_the_output_is_checked_and_says_so(
    monkeypatch: pytest.MonkeyPatch, every_look: list[str], phase: str, which: str
) -> None:
    """The deadline passes at the first or the last look of a phase: while reading or
    resolving the pods, no plan (exit 1, and why); later, a plan that passes `dra-solver check`
    as the whole cluster after it, with the cut-short annotation and line — or, when it places
    no pod, no plan either (one line, exit 1: a plan placing nothing says nothing)."""
    at = [i for i, m in enumerate(every_look) if _phase(m) == phase]
    after = at[0] if which == "first" else at[-1]
    looks: list[str] = []
    got = _run_cli(monkeypatch, CountingDeadline(after, looks), "--output-mode", "full")
    assert _phase(looks[after]) == phase
    if phase in ("reading", "resolving"):
        assert got.exit_code == 1
        assert "cut short by --timeout after" in got.stderr
        assert f"while {phase} the" in got.stderr
        assert got.stdout == ""
        return
    if got.exit_code == 1:  # nothing placed by then (or the pods not resolved yet)
        last = got.stderr.strip().splitlines()[-1]
        assert last.endswith((plan_command.NO_PLAN, "before the search: no plan")), got.stderr
        assert got.stdout == ""
        return
    assert got.exit_code in (0, 2), got.stderr
    assert "cut short by --timeout after " in got.stderr
    assert "this answer depends on the machine's speed" in got.stderr
    listed = read_yaml(got.stdout)
    assert listed["metadata"]["annotations"]["dra-solver.io/cut-short-by-timeout"] == "true"
    after_plan = Cluster.from_objects(listed["items"])
    assert check_cluster(after_plan) == []


def test_a_check_cut_short_returns_no_unchecked_placement() -> None:
    """The deadline passes while the final check runs: the library returns a plan that places
    no pod (every pod says why), not the plan the check did not finish; cut short, and no
    OPTIMAL claimed for a plan that places less than the bound."""
    cluster = Cluster.from_paths([DUMP])
    looks: list[str] = []
    plan(cluster, deadline=CountingDeadline(None, looks))
    first_check = looks.index("dra_solver.planning.finish")
    out = plan(cluster, deadline=CountingDeadline(first_check, []))
    assert out.stats[CUT_SHORT] is True
    assert out.placed == 0
    assert {p.reason for p in out.pods} >= {CHECK_CUT_SHORT}
    assert out.verdict is None or out.verdict.status != "OPTIMAL" or out.verdict.bound == 0


def test_a_run_cut_short_with_nothing_placed_prints_no_plan(
    monkeypatch: pytest.MonkeyPatch, every_look: list[str]
) -> None:
    """The deadline passes at the final check's first look: the plan places no pod, so the CLI
    writes nothing (not the whole cluster again, the costliest step left) and says so in one
    line, exit 1; the pods' lines are not printed."""
    first_check = every_look.index("dra_solver.planning.finish")
    got = _run_cli(monkeypatch, CountingDeadline(first_check, []), "--output-mode", "full")
    assert got.exit_code == 1, got.stderr
    assert got.stdout == ""
    assert got.stderr.strip().splitlines()[-1].endswith(plan_command.NO_PLAN)
    assert "not placed" not in got.stderr


def test_a_library_plan_cut_short_while_resolving_the_pods_raises_cut_short() -> None:
    """Before the search there is no plan to return: `plan()` raises `CutShort`, which says
    where it stopped; a deadline that does not pass changes nothing."""
    cluster = Cluster.from_paths([DUMP])
    looks: list[str] = []
    plan(cluster, deadline=CountingDeadline(None, looks))
    first = looks.index("dra_solver.planning.resolve")
    with pytest.raises(CutShort, match=r"while resolving the pods \(0 of \d+\), before the search: no plan"):
        plan(cluster, deadline=CountingDeadline(first, []))


def test_a_deadline_that_passes_before_reading_gives_no_plan_and_says_why() -> None:
    """`--timeout 1ms`: over before the first object is read (the clock starts with the
    command): exit 1, one line, no traceback, nothing on stdout."""
    got = runner.invoke(app, ["plan", DUMP, "--timeout", "1ms"])
    assert got.exit_code == 1
    assert "cut short by --timeout after" in got.stderr
    assert "no plan" in got.stderr
    assert "Traceback" not in got.stderr
    assert got.stdout == ""


class _Passed(Deadline):
    """A share of the run (`Deadline.share`) that passes after `free` looks of the policy (the
    first: at the model's start, which then goes on): no timer watches a share, so passing it asks for no
    stop; it fires the run's deadline, as a share does."""

    def __init__(self, parent: Deadline, free: int = 1) -> None:
        super().__init__(time.monotonic() + 3600.0, 3600.0, started=time.monotonic(), parent=parent)
        self.free = free

    def left(self, grace: float = 0.0) -> float:
        if self.free > 0 and _looker() == "dra_solver.planners.policy":
            self.free -= 1  # the policy's look before the model starts (the deadlines cut
            return 3600.0  # from this one inside the model are not `_Passed`: never free)
        self.fire()
        return 0.0


class _ShareGone(CountingDeadline):
    """A run's deadline that never passes, whose share for the model before first fit
    (`Deadline.share`) passes once the model has started."""

    def share(self, fraction: float) -> Deadline:
        return _Passed(self)

    def leaving(self, cpu_seconds: float, *, exact: bool = False, what: str = "") -> Deadline:
        return type(self)(self.after, self.looks, parent=self)


class _ShareGoneAtOnce(_ShareGone):
    """The same, the share passed before the model starts (CP-SAT's import took it)."""

    def share(self, fraction: float) -> Deadline:
        return _Passed(self, free=0)


def _fleet(nodes: int, pods: int) -> Cluster:
    """`nodes` nodes of two GPUs each and `pods` pods of one GPU each (claims from a template)."""
    from builders import device, device_class, resource_slice

    gpu = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    objs: list[dict[str, Any]] = [
        device_class("gpu"),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [gpu]}}},
        },
    ]
    for n in range(nodes):
        meta = {"name": f"node-{n}", "labels": {"kubernetes.io/hostname": f"node-{n}"}}
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {}})
        objs.append(resource_slice(f"node-{n}-gpus", [device("gpu-0"), device("gpu-1")], node=f"node-{n}"))
    for i in range(pods):
        spec = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": spec,
            }
        )
    return Cluster.from_objects(objs)


@pytest.fixture
def at_scale() -> Iterator[Cluster]:
    """A cluster the aggregated model plans before first fit when planned with
    `per_device_max=0` (`Options.per_device_max`: the job counts as large)."""
    yield _fleet(6, 20)


def _model_without_a_plan_yet(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The aggregated model before first fit ends with no placement once its deadline has
    passed (as a model cut short before its first solution does); records whether it had."""
    from dataclasses import replace

    import dra_solver.planners.aggregated.expansion as expansion
    import dra_solver.planners.policy as policy

    real = policy.aggregate
    seen: list[bool] = []

    def cut(job: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        agg = real(job, first, *args, **kwargs)
        if first is None:
            seen.append(job.deadline is not None and job.deadline.passed())
            if seen[-1] and not isinstance(agg, str):  # a str: its classes saw the share pass
                return replace(agg, placements={}, objective=0, status="FEASIBLE")
        return agg

    monkeypatch.setattr(policy, "aggregate", cut)
    monkeypatch.setattr(expansion, "aggregate", cut)
    return seen


def test_a_model_cut_short_before_its_first_plan_leaves_first_fit_time_to_place(
    monkeypatch: pytest.MonkeyPatch, at_scale: Cluster
) -> None:
    """Issue #40: at the aggregated model's scale the model runs before first fit; under a
    deadline it gets only a share of the time left (`Deadline.share`). When that share passes
    before the model has a plan, first fit runs in the rest and its checked plan is the
    answer — said to be cut short — not a plan that places nothing."""
    seen = _model_without_a_plan_yet(monkeypatch)
    out = plan(at_scale, per_device_max=0, deadline=_ShareGone(None, []))
    assert seen[0] is True  # the model's deadline was its share, and it had passed
    assert out.stats[CUT_SHORT] is True
    assert out.stats["reference_placed"] == 12 and "first_fit" not in out.stats
    assert out.placed == 12
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []


def test_a_model_whose_share_passed_before_it_started_is_not_started(
    monkeypatch: pytest.MonkeyPatch, at_scale: Cluster
) -> None:
    """Issue #40 §2: the model's share can pass before the model starts (CP-SAT's import,
    loaded first, takes it on a short --timeout); then the model is not started — its node
    and pod classes alone took a second of a 1,000-node run past the deadline — and first
    fit runs in the rest, its checked plan the answer, cut short."""
    seen = _model_without_a_plan_yet(monkeypatch)
    out = plan(at_scale, per_device_max=0, deadline=_ShareGoneAtOnce(None, []))
    assert seen == []  # never called before first fit
    assert out.stats[CUT_SHORT] is True
    assert out.stats["reference_placed"] == 12 and out.placed == 12
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []


def test_without_a_deadline_the_model_runs_alone_and_nothing_is_cut(
    monkeypatch: pytest.MonkeyPatch, at_scale: Cluster
) -> None:
    """The share exists only under a deadline: without one, or with one that never passes,
    the model before first fit proves its plan and the plan is the same, not cut short."""
    seen = _model_without_a_plan_yet(monkeypatch)
    alone = plan(at_scale, per_device_max=0)
    generous = plan(at_scale, per_device_max=0, deadline=CountingDeadline(None, []))
    assert seen == [False, False]
    for out in (alone, generous):
        assert str(out.stats["first_fit"]).startswith("not run: the aggregated model proved")
        assert CUT_SHORT not in out.stats and out.placed == 12
    assert [(p.name, p.node) for p in alone.pods] == [(p.name, p.node) for p in generous.pods]


def test_a_model_whose_share_passed_is_not_expanded_and_first_fit_runs(at_scale: Cluster) -> None:
    """The model's share passed during its search (here: at once, so its plan so far places
    few pods): that plan is not expanded to devices (no time is spent on a plan not proven);
    first fit runs, then the model from first fit's plan, and the answer places at least
    what first fit places — checked, cut short."""
    out = plan(at_scale, per_device_max=0, deadline=_ShareGone(None, []))
    assert out.stats[CUT_SHORT] is True
    assert out.stats["reference_placed"] == 12 and out.placed == 12
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []


def test_the_expansion_stops_at_the_deadline_with_a_checked_plan(at_scale: Cluster) -> None:
    """The aggregated plan's expansion to devices (a search per node) looks at the run's
    deadline between nodes: passed at its first look, no node is expanded, and the answer is
    a checked plan (here first fit's, which runs after), cut short."""
    looks: list[str] = []
    plan(at_scale, per_device_max=0, deadline=CountingDeadline(None, looks))
    first = looks.index("dra_solver.planners.aggregated.expansion")
    later: list[str] = []
    out = plan(at_scale, per_device_max=0, deadline=CountingDeadline(first, later))
    assert later[first] == "dra_solver.planners.aggregated.expansion"
    assert out.stats[CUT_SHORT] is True
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []


def test_a_deadline_passing_while_the_caps_are_found_gives_a_checked_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline passes while the aggregated model finds how many pods of a class a node
    takes (`patterns.cap`), for a class of more pods than a single-node model holds
    (`MAX_COPIES`): the cap it gives up with is at most that many (the model's components
    carry no more pods of a class), and the run ends with a checked plan, cut short — it used
    to end in a KeyError."""
    from dra_solver.planners.aggregated.patterns import MAX_COPIES

    cluster = _fleet(4, MAX_COPIES + 20)
    looks: list[str] = []
    plan(cluster, per_device_max=0, deadline=CountingDeadline(None, looks))
    first = looks.index("dra_solver.planners.aggregated.patterns")
    out = plan(cluster, per_device_max=0, deadline=CountingDeadline(first, []))
    assert out.stats[CUT_SHORT] is True
    after = Cluster.from_objects(cluster_after(cluster, out.pods))
    assert check_cluster(after) == []


def test_a_model_whose_share_passed_solves_no_component(
    monkeypatch: pytest.MonkeyPatch, at_scale: Cluster
) -> None:
    """The model before first fit whose share has passed stops before its components (the
    caps' and the single-node models' searches, seconds at thousands of nodes): it solves none,
    first fit runs and the model after it solves them."""
    import dra_solver.planners.aggregated.master as master

    real = master.run_units
    calls: list[int] = []

    def counted(executor: Any, fn: Any, items: Any) -> Any:
        calls.append(len(items))
        return real(executor, fn, items)

    monkeypatch.setattr(master, "run_units", counted)
    out = plan(at_scale, per_device_max=0, deadline=_ShareGone(None, []))
    assert len(calls) == 1  # the model after first fit only
    assert out.stats["reference_placed"] == 12 and out.placed == 12


def test_the_classes_look_at_the_deadline_and_a_run_cut_there_is_checked(at_scale: Cluster) -> None:
    """Issue #40 §2: the aggregated model's pod and node classes (a tenth of a CPU second each
    at 1,000 nodes / 4,000 claims) look at the deadline between units and between nodes. Passed
    at the first look of the node classes, the model does not run on classes of some nodes
    (no cap is searched); the answer is a checked plan, cut short."""
    looks: list[str] = []
    plan(at_scale, per_device_max=0, deadline=CountingDeadline(None, looks))
    classes = [i for i, m in enumerate(looks) if m == "dra_solver.planners.aggregated.classes"]
    assert len(classes) >= 7  # the pods' (one look per LOOK_EVERY units), then one per node (6)
    later: list[str] = []
    out = plan(at_scale, per_device_max=0, deadline=CountingDeadline(classes[1], later))
    assert later[classes[1]] == "dra_solver.planners.aggregated.classes"
    assert "dra_solver.planners.aggregated.patterns" not in later  # no cap searched
    assert out.stats[CUT_SHORT] is True
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []


def test_classes_cut_by_the_deadline_say_so_and_are_none() -> None:
    """`pod_classes_within` gives None and `node_classes` says `cut` once the deadline has
    passed; without one they are the classes as always."""
    from dra_solver.cel import EvalCache
    from dra_solver.gates import FeatureGates
    from dra_solver.planners.aggregated.classes import node_classes, pod_classes, pod_classes_within
    from dra_solver.planning.resolve import units_for

    cluster = _fleet(3, 4)
    units = units_for(cluster, None, None, sorted(cluster.nodes), FeatureGates())
    todo = list(range(len(units)))
    passed = CountingDeadline(0, [])
    assert pod_classes_within(units, todo, None, passed) is None
    interrupt.reset()
    pods = pod_classes(units, todo)
    assert pods == pod_classes_within(units, todo, None, None) and len(pods) == 1
    names = sorted(cluster.nodes)
    whole = node_classes(cluster, units, pods, names, FeatureGates(), EvalCache())
    assert whole.cut is None and sum(c.mult for c in whole.classes) == 3
    one = CountingDeadline(1, [])
    cut = node_classes(cluster, units, pods, names, FeatureGates(), EvalCache(), deadline=one)
    assert cut.cut == "the deadline passed while classing the nodes (1 of 3)"


def test_a_deadline_affords_a_step_only_when_the_time_left_covers_it() -> None:
    """`Deadline.affords`: a step that cannot look at the deadline while it runs starts only
    when the time left covers its count at the run's stretch; when not, the deadline fires
    (the answer without the step depends on the machine's speed)."""
    from dra_solver.deadline import affords

    deadline = Deadline.after(3600.0)
    assert deadline.affords(1.0) and not deadline.fired
    assert not deadline.affords(1e9) and deadline.fired
    assert affords(None, 1e9)


def test_no_model_starts_when_the_time_left_does_not_cover_cp_sat_s_import(
    monkeypatch: pytest.MonkeyPatch, at_scale: Cluster
) -> None:
    """Issue #40 §2: CP-SAT's import (half a CPU second, `cpsat.load_cp_model`) cannot look at
    the deadline, so no model starts when the time left does not cover it: neither the
    aggregated model before first fit nor the variants after it. The answer is first fit's
    checked plan, cut short, and says why no model ran; with time enough, the models run."""
    import dra_solver.cpsat as cpsat
    from dra_solver.planners.policy import NOT_STARTED

    monkeypatch.setattr(cpsat, "cp_model_loaded", lambda: False)  # as in a fresh process
    monkeypatch.setattr(cpsat, "CP_MODEL_IMPORT_CPU", 1e9)  # more than the time left
    out = plan(at_scale, per_device_max=0, deadline=CountingDeadline(None, []))
    assert out.stats[CUT_SHORT] is True and out.stats["models"] == NOT_STARTED
    assert out.stats["reference_placed"] == 12 and out.placed == 12
    after = Cluster.from_objects(cluster_after(at_scale, out.pods))
    assert check_cluster(after) == []
    monkeypatch.setattr(cpsat, "CP_MODEL_IMPORT_CPU", 0.45)
    out = plan(at_scale, per_device_max=0, deadline=CountingDeadline(None, []))
    assert CUT_SHORT not in out.stats and "models" not in out.stats
    assert str(out.stats["first_fit"]).startswith("not run: the aggregated model proved")


def test_explain_looks_at_the_deadline_between_nodes_and_says_what_it_left_out() -> None:
    """`explain --timeout`: the deadline is looked at before each node (each node's answer is
    whole: a search cut half way could call a node that fits full) and before the plan of the
    other pending pods; passed after two nodes, the answer has those two, says what it left
    out and that it was cut short; never passing, it is the untimed answer."""
    from dra_solver.explain.diagnosis import explain

    cluster = Cluster.from_paths([DUMP])
    pod = "ml-training/trainer-3"
    whole = explain(cluster, pod=pod, with_plan=True)
    assert whole.cut is None and len(whole.nodes) == 5
    assert (
        explain(cluster, pod=pod, with_plan=True, deadline=CountingDeadline(None, [])).text() == whole.text()
    )
    cut = explain(cluster, pod=pod, with_plan=True, deadline=CountingDeadline(2, []))
    assert [a.node for a in cut.nodes] == [a.node for a in whole.nodes[:2]]
    assert cut.nodes == whole.nodes[:2] and cut.with_plan == []
    assert cut.cut == "2 of 5 nodes examined, the others not"
    assert cut.text().endswith(
        "cut short by --timeout: 2 of 5 nodes examined, the others not; "
        "this answer depends on the machine's speed"
    )
    interrupt.reset()
    planned = explain(cluster, pod=pod, with_plan=True, deadline=CountingDeadline(5, []))
    assert planned.nodes == whole.nodes and planned.cut is not None


def test_the_preemption_model_is_not_started_when_the_time_left_does_not_cover_cp_sat_s_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`plan --preempt` (and `explain --preempt`) under a deadline whose time left does not
    cover CP-SAT's import: the preemption model is not started, and the run ends as one cut
    short before its model had a plan does (`SearchAborted`, no plan), not seconds later."""
    import dra_solver.cpsat as cpsat
    from dra_solver.errors import SearchAborted
    from dra_solver.preempt import plan_preempt

    cluster = Cluster.from_paths([ROOT / "docs" / "examples" / "preempt.yaml"])
    monkeypatch.setattr(cpsat, "cp_model_loaded", lambda: False)
    monkeypatch.setattr(cpsat, "CP_MODEL_IMPORT_CPU", 1e9)
    deadline = CountingDeadline(None, [])
    with pytest.raises(SearchAborted, match="before the deadline"):
        plan_preempt(cluster, options=Options(deadline=deadline))
    assert deadline.fired
    monkeypatch.setattr(cpsat, "CP_MODEL_IMPORT_CPU", 0.45)
    assert plan_preempt(cluster, options=Options(deadline=CountingDeadline(None, []))).placed > 0
