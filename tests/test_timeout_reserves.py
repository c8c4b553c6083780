"""Issue #40 §2: what a run keeps of its `--timeout` for the steps that cannot stop half way
(the final check, the writing), and what it says it kept (docs/semantics.md, "Limits and
determinism"; `solver/deadline.py`).

Each rule with the clock mocked, none by wall time: the reserve is the counted CPU seconds
times the run's pace (gauged on a sample of its own writing) over its share of a CPU; a
message names every reserve and its seconds."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest

from dra_solver import Cluster
from dra_solver import deadline as deadline_module
from dra_solver.cli import plan as plan_command
from dra_solver.cli.options import Output, OutputFormat
from dra_solver.deadline import MAX_PACE, MIN_GAUGED_CPU, MIN_PACE, Deadline
from dra_solver.errors import CutShort
from dra_solver.output.objects import OutputMode
from dra_solver.planning.finish import CHECK_CPU_PER_CLAIMS, CHECK_CPU_PER_POD, leaving_the_check
from dra_solver.planning.job import Member, Options, Unit
from dra_solver.planning.resolve import stop_if_passed

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "docs" / "examples" / "cluster-dump.yaml"


class Clock:
    """`time` as `solver.deadline` reads it: both clocks where a test sets them."""

    def __init__(self, wall: float = 100.0, cpu: float = 10.0) -> None:
        self.wall, self.cpu = wall, cpu

    def monotonic(self) -> float:
        return self.wall

    def process_time(self) -> float:
        return self.cpu


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(deadline_module, "time", fake)
    return fake


def _run(clock: Clock, seconds: float = 10.0) -> Deadline:
    """A 10 s run that began 2 s ago with a whole CPU (2 CPU s): `cpu_share` 1."""
    return Deadline(
        clock.wall + seconds - 2.0, seconds, started=clock.wall - 2.0, cpu_started=clock.cpu - 2.0
    )


def test_the_gauge_sets_the_pace_from_the_cpu_a_counted_step_took(clock: Clock) -> None:
    """A step counted at 0.1 CPU s that took 0.05 here: pace 0.5 (a CPU twice the
    reference's); the run's deadline holds it and every deadline cut from it reads it."""
    run = _run(clock)
    with run.gauging() as gauge:
        clock.cpu += 0.05
        gauge.counted = 0.1
    assert run.pace == pytest.approx(0.5)
    assert run.leaving(1.0).stretch() == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("cpu", "counted", "pace"),
    [(0.001, 0.1, MIN_PACE), (10.0, 0.1, MAX_PACE), (0.3, 0.1, 3.0), (1.0, MIN_GAUGED_CPU / 2, None)],
)
def test_the_pace_is_bounded_and_a_step_too_small_sets_none(
    clock: Clock, cpu: float, counted: float, pace: float | None
) -> None:
    run = _run(clock)
    run.gauge(cpu, counted)
    assert run.pace == pytest.approx(pace) if pace is not None else run.pace is None


def test_a_block_that_raises_gauges_nothing(clock: Clock) -> None:
    run = _run(clock)
    with pytest.raises(RuntimeError), run.gauging() as gauge:
        gauge.counted = 1.0
        clock.cpu += 5.0
        raise RuntimeError
    assert run.pace is None


def test_a_reserve_is_its_count_times_the_pace_over_the_share_of_a_cpu(clock: Clock) -> None:
    """Not gauged: the count over the share of a CPU (half a CPU: twice the count). Gauged at
    0.5: half the count with a whole CPU, the count itself with half of one."""
    run = _run(clock)  # 8 s left
    assert run.leaving(1.0).at == run.at - 1.0
    clock.wall += 2.0  # 4 s of wall, 2 + 0 CPU s: half a CPU; 6 s left
    assert run.leaving(1.0).at == pytest.approx(run.at - 2.0)
    run.gauge(0.05, 0.1)
    assert run.leaving(1.0).at == pytest.approx(run.at - 1.0)
    clock.cpu += 2.0  # 4 CPU s in 4 s: a whole CPU again
    assert run.leaving(1.0).at == pytest.approx(run.at - 0.5)


def test_a_worst_case_reserve_keeps_at_most_half_the_time_left_an_exact_one_all(clock: Clock) -> None:
    run = _run(clock)  # 8 s left
    assert run.leaving(20.0).at == pytest.approx(run.at - 4.0)
    assert run.leaving(20.0, exact=True).at == pytest.approx(run.at - 20.0)


def test_the_run_records_each_reserve_once_by_its_step(clock: Clock) -> None:
    """`what` names the step (its first word) and what it counts: a step counted again (the
    check after pods were held) replaces its reserve; `kept_for` says every one and how
    the seconds were reckoned."""
    run = _run(clock)
    writing = run.leaving(0.7, what="writing 11,002 objects")
    writing.leaving(0.3, what="checking 5,000 pods")
    search = writing.leaving(0.2, what="checking 4,000 pods")
    assert list(run.reserves) == ["writing 11,002 objects", "checking 4,000 pods"]
    assert search.kept() == pytest.approx(0.9)
    said = search.kept_for()
    assert said.startswith(
        "its last 0.90 s are kept for writing 11,002 objects (0.70 s) and checking 4,000 pods (0.20 s)"
    )
    assert said.endswith("as counted at its share of a CPU")
    run.gauge(0.1, 0.1)
    assert search.kept_for().endswith("as counted at this run's writing of a sample and share of a CPU")


def test_nothing_kept_is_not_said(clock: Clock) -> None:
    run = _run(clock)
    assert run.leaving(0.01, what="checking 3 pods").kept_for() == ""


def test_a_deadline_sent_to_a_worker_keeps_the_pace(clock: Clock) -> None:
    run = _run(clock)
    run.gauge(0.2, 0.1)
    there = pickle.loads(pickle.dumps(run.leaving(0.5)))
    assert there.pace == pytest.approx(2.0) and there.parent is None


def test_cut_short_while_resolving_says_what_was_kept(clock: Clock) -> None:
    """The message names the reserve that moved the deadline before the search (the writing
    of the whole cluster, `--output-mode full`) and its seconds, not a check not yet made."""
    run = _run(clock)
    writing = run.leaving(3.0, exact=True, what="writing 11,002 objects")
    clock.wall = writing.at + 0.1
    with pytest.raises(CutShort) as caught:
        stop_if_passed(writing, 0, 5000)
    said = str(caught.value)
    assert "(its last 3.00 s are kept for writing 11,002 objects (3.00 s), as counted at" in said
    assert "checking" not in said
    assert said.endswith("while resolving the pods (0 of 5000), before the search: no plan")


def _pod_unit(name: str, pods: int) -> Unit:
    pod = SimpleNamespace()  # only whether a Pod is there counts
    members = tuple(Member(f"{name}-{i}", pod, ()) for i in range(pods))  # type: ignore[arg-type]  # a stand-in Pod
    return Unit(name, (), 0, members=members)


def test_the_check_keeps_its_count_for_pods_and_less_for_bare_claims(clock: Clock) -> None:
    """A pod with a Pod object is checked against its node (`CHECK_CPU_PER_POD`); a pod given
    as its claims alone only for its claims (`CHECK_CPU_PER_CLAIMS`)."""
    run = _run(clock)
    bare = Unit("c", (), 0, members=(Member("c", None, ()),))
    units = [_pod_unit("p", 2), bare, bare]
    search = leaving_the_check(Options(deadline=run), units).deadline
    assert search is not None
    assert run.at - search.at == pytest.approx(2 * CHECK_CPU_PER_POD + 2 * CHECK_CPU_PER_CLAIMS)
    assert list(run.reserves) == ["checking 4 pods"]


def test_the_writing_is_counted_per_object_pod_and_device() -> None:
    """`--output-mode full` counts every object of the cluster, the claims the pending pods'
    templates make, a pending pod's fresh dump, each device and each claim the plan may
    allocate; `changed` the pods to plan and the claims they may write."""
    cluster = Cluster.from_paths([DUMP])
    pending = [p for p in cluster.pods.values() if not p.spec.node_name]
    entries = sum(len(p.spec.resource_claims) for p in pending)
    made = sum(1 for p in pending for e in p.spec.resource_claims if e.resource_claim_template_name)
    unallocated = sum(1 for c in cluster.claims.values() if c.status is None or c.status.allocation is None)
    devices = sum(len(s.spec.devices or ()) for s in cluster.slices)
    assert pending and devices
    full, objects = plan_command.output_cpu_seconds(cluster, Output(OutputFormat.yaml, OutputMode.full))
    assert objects == len(cluster.objects()) + made
    per_plan = len(pending) * plan_command.WRITE_CPU_PER_POD
    per_plan += (unallocated + entries) * plan_command.WRITE_CPU_PER_ALLOCATION
    assert full == pytest.approx(
        objects * plan_command.WRITE_CPU_PER_OBJECT + devices * plan_command.WRITE_CPU_PER_DEVICE + per_plan
    )
    changed, written = plan_command.output_cpu_seconds(cluster, Output(OutputFormat.yaml, OutputMode.changed))
    assert written == len(pending) + entries + len(cluster.claims)
    assert changed == pytest.approx(written * plan_command.WRITE_CPU_PER_OBJECT + per_plan)


def test_the_pace_is_gauged_on_a_sample_of_the_writing(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """`gauge_writing` writes every k-th object (at most `WRITE_SAMPLE`) and sets the pace to
    the CPU seconds that took over what the count says they cost; a table is not gauged."""
    cluster = Cluster.from_paths([DUMP])
    written: list[int] = []

    def dumps(objects: list[object], *args: object, **kwargs: object) -> str:
        written.append(len(objects))
        clock.cpu += 0.001 * len(objects)  # 1 ms an object: far slower than the count
        return ""

    monkeypatch.setattr(plan_command, "dumps", dumps)
    monkeypatch.setattr(plan_command, "WRITE_SAMPLE", 4)
    monkeypatch.setattr(deadline_module, "MIN_GAUGED_CPU", 0.0001)  # four objects count less
    run = _run(clock)
    plan_command.gauge_writing(run, cluster, Output(OutputFormat.table, OutputMode.changed))
    assert run.pace is None and not written
    plan_command.gauge_writing(run, cluster, Output(OutputFormat.yaml, OutputMode.full))
    objects = cluster.objects()
    sample = objects[:: len(objects) // 4][:4]
    assert written == [1, 4]  # the emitter's first call, then the sample
    slices = [o for o in sample if o.kind == "ResourceSlice"]
    counted = 4 * plan_command.WRITE_CPU_PER_OBJECT + plan_command.slice_devices(slices) * (
        plan_command.WRITE_CPU_PER_DEVICE
    )
    assert run.pace == pytest.approx(min(max(0.004 / counted, MIN_PACE), MAX_PACE))
