"""What a plan may claim is said by one function (`planners.bounds.verdict`, issue #41 step 3):
its rules, and that no other module writes a plan's status itself."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest
from parsed_sources import nodes

from dra_solver.cpsat import SearchStatus, StageStatus
from dra_solver.planners.bounds import verdict
from dra_solver.planning.outcome import Status, Verdict

ROOT = Path(__file__).resolve().parent.parent


def test_the_objective_at_the_bound_is_optimal() -> None:
    assert verdict(5, 5, "model") == Verdict(Status.OPTIMAL, 5, 5, "model", 0)


def test_below_the_bound_is_feasible_with_its_gap() -> None:
    told = verdict(4, 6, "model")
    assert (told.status, told.gap) == (Status.FEASIBLE, 2)


def test_a_beaten_bound_is_replaced_never_raised_to_the_plan() -> None:
    """A plan above its bound shows the bound was none: the fallback bound stands, and the
    plan is only FEASIBLE unless it reaches that one too."""
    told = verdict(6, 5, "model", beaten=(8, "pods that may be placed"))
    assert (told.status, told.bound, told.bound_from, told.gap) == (
        Status.FEASIBLE,
        8,
        "pods that may be placed",
        2,
    )
    assert verdict(8, 5, "model", beaten=(8, "all")).status == Status.OPTIMAL
    with pytest.raises(ValueError, match="above the bound"):
        verdict(6, 5, "model")


def test_what_else_must_be_proven_is_proven() -> None:
    assert verdict(5, 5, "model", proven=False).status == Status.FEASIBLE  # e.g. what-if's least cost
    assert verdict(5, 5, "model", capped=True).status == Status.OPTIMAL_WITHIN_CAP
    assert verdict(4, 5, "model", capped=True).status == Status.FEASIBLE
    assert verdict(5, 5, "parts", partitioned=True).status == Status.PARTITIONED
    assert verdict(3, None, "stages", proven=True).status == Status.OPTIMAL  # preemption: no weight bound
    assert verdict(3, None, "stages", proven=False).gap is None


STATUS_WORDS = {s.value for s in Status}


def _status_literals(walked: Iterable[ast.AST]) -> list[int]:
    """Lines where a plan's status is written as a literal: a `"status"` entry of a dict, or an
    assignment to `x["status"]`, whose value holds one of the statuses' words (`walked`: every
    node of a tree, `ast.walk`'s)."""
    found = []
    for node in walked:
        values: list[ast.AST] = []
        if isinstance(node, ast.Dict):
            values = [
                v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and k.value == "status"
            ]
        elif isinstance(node, ast.Assign):
            if any(
                isinstance(t, ast.Subscript)
                and isinstance(t.slice, ast.Constant)
                and t.slice.value == "status"
                for t in node.targets
            ):
                values = [node.value]
        for value in values:
            if any(isinstance(c, ast.Constant) and c.value in STATUS_WORDS for c in ast.walk(value)):
                found.append(node.lineno)
    return found


def test_no_module_writes_a_plan_status_itself() -> None:
    """Every plan status comes from `verdict` (`told.status`); a literal
    OPTIMAL written into a plan's stats elsewhere would be a second judge."""
    found = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        found += [f"{path.relative_to(ROOT)}:{n}" for n in _status_literals(nodes(path))]
    assert found == []


def test_the_literal_finder_finds_one() -> None:
    tree = ast.parse(
        'stats = {"status": "OPTIMAL" if ok else "FEASIBLE"}\nstats["status"] = "OPTIMAL within the cap"'
    )
    assert sorted(_status_literals(ast.walk(tree))) == [1, 2]


def _status_comparisons(
    walked: Iterable[ast.AST], words: set[str] = STATUS_WORDS
) -> tuple[list[int], list[int]]:
    """Lines that compare with a plan status: as text (the statuses' `words`), as `Status.X`."""
    text, member = [], []
    for node in walked:
        if isinstance(node, ast.Compare):
            parts = list(ast.walk(node))
            if any(isinstance(c, ast.Constant) and c.value in words for c in parts):
                text.append(node.lineno)
            elif any(
                isinstance(c, ast.Attribute) and isinstance(c.value, ast.Name) and c.value.id == "Status"
                for c in parts
            ):
                member.append(node.lineno)
    return text, member


READERS = {"solver/planners/bounds.py", "solver/planning/outcome.py", "solver/cli/plan.py"}
"""`verdict` says a status; `outcome.proven` is the one reading of it for code that acts on a
proven plan; `cli.plan.whatif_lines` words each status."""


def test_no_module_compares_a_plan_status_as_text_nor_reads_it_its_own_way() -> None:
    """A comparison with OPTIMAL elsewhere would judge again, or read the status its own way:
    the summary, table, report and JSON read the verdict, the code that acts on a proven plan
    calls `planning.outcome.proven`. The stage statuses of a search are `cpsat.StageStatus`."""
    found = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        name = str(path.relative_to(ROOT))
        text, member = _status_comparisons(nodes(path))
        found += [f"{name}:{n}" for n in text] + [f"{name}:{n}" for n in member if name not in READERS]
    assert found == []
    example = ast.parse('ok = s == "OPTIMAL"\nok = t.status is Status.FEASIBLE')
    assert _status_comparisons(ast.walk(example)) == (
        [1],
        [2],
    )


def test_stats_is_the_typed_record() -> None:
    """`PlanOutcome.stats` holds only the keys `Stats` declares, on a plan, a first-fit plan,
    a preemption, a what-if plan, an update and a partitioned plan — diagnostics only: what a
    plan claims (status, objective, bound, gap, bound_from) is its `verdict`, and its counts
    are `PlanOutcome.placed` and `.pods`, never repeated in `stats` (one home each)."""
    from preempt_cases import Pending, Running, build

    from dra_solver import NodeTemplate, Planner, plan
    from dra_solver.api.cluster import Cluster
    from dra_solver.planning.job import Options
    from dra_solver.planning.outcome import Stats
    from dra_solver.preempt import plan_preempt

    declared = set(Stats.__annotations__)
    example = Cluster.from_paths([ROOT / "docs" / "examples" / "cluster-dump.yaml"])
    runs = [plan(example, time_limit=2), plan(example, options=Options(allocator="reference"))]
    runs.append(plan_preempt(build({"n1": 2}, [Running("a", "n1", 1, (0, 1))], [Pending("p", 100, 2)])))
    runs.append(plan(example, time_limit=2, partitions=2))
    node = example.nodes["gpu-example-1"]
    template = NodeTemplate.of(node, [x for x in example.slices if x.spec.node_name == node.metadata.name])
    runs.append(plan(example, time_limit=2, node_templates=[template]))
    planner = Planner(example, Options(time_limit=2))
    planner.plan()
    runs.append(planner.update([], []))
    for out in runs:
        assert set(out.stats) <= declared, set(out.stats) - declared
    assert all(out.verdict is not None for out in runs[:1] + runs[2:])  # first fit's (runs[1]) has none
    assert {"cut_short_by_timeout", "stage_status", "local_status", "model_objective"} <= declared
    assert not declared & {"status", "objective", "bound", "gap", "bound_from", "placed", "pods"}


def test_a_plan_the_check_replaced_gets_its_own_verdict_and_a_cut_short_run_says_so() -> None:
    """The final check cut short returns a plan placing nothing, without the verdict of the plan
    it did not return: `checked` judges it on the same bound (FEASIBLE, never the OPTIMAL of the
    plan not returned). A run the deadline cut short keeps its status and says it was cut short."""
    from dra_solver.planners.bounds import checked
    from dra_solver.planning.outcome import PlanOutcome, PodPlan

    before = verdict(2, 2, "model")
    nothing = PlanOutcome([PodPlan("a", None, [], "cut short")], "cpsat", {"cut_short_by_timeout": True})
    got = checked(nothing, before)
    assert got.verdict == Verdict(Status.FEASIBLE, 0, 2, "model", 2, cut_short=True)
    assert got.verdict.status == "FEASIBLE"
    placed = [PodPlan("a", "n", [], placed=True), PodPlan("b", "n", [], placed=True)]
    parts = verdict(2, 2, "parts", partitioned=True)
    cut = checked(PlanOutcome(placed, "cpsat", {"cut_short_by_timeout": True}, verdict=parts), parts)
    assert cut.verdict is not None
    assert (cut.verdict.status, cut.verdict.cut_short) == (Status.PARTITIONED, True)
    whole = PlanOutcome(placed, "cpsat", {}, verdict=before)
    assert checked(whole, before) is whole


def test_no_module_compares_a_search_or_stage_status_as_text() -> None:
    """A CP-SAT search's and a stage's statuses are enums (`cpsat.SearchStatus`,
    `cpsat.StageStatus`), so no module compares one as text: `out.status == "INFEASIBLE"` would
    silently never hold after a rename, and a stage's OPTIMAL is not a plan's."""
    words = {s.value for s in (*StageStatus, *SearchStatus)}
    found = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        text, _ = _status_comparisons(nodes(path), words)
        found += [f"{path.relative_to(ROOT)}:{n}" for n in text]
    assert found == []
    assert _status_comparisons(ast.walk(ast.parse('x = out.status == "INFEASIBLE"')), words) == ([1], [])
