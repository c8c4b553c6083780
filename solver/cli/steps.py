"""`plan --preempt`: the plan's steps in order and the fragmentation reading, as `-o table`
prints them and as the List's annotations carry them for `-o yaml|json`
(`preempt.steps`; docs/semantics.md, "Preemption", "Doing a plan with moves").

Why apart from `cli.plan`: reading, not deciding — the same two facts in two forms, kept
together so that the table and the annotations never say different things."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..api.cluster import Cluster
from ..output.objects import ANNOTATION
from ..preempt import PreemptOutcome
from ..preempt.steps import Fragmentation, Reading, Step, fragmentation, steps


def _per_node(r: Reading) -> str:
    return ", ".join(f"{free} free x{nodes}" for free, nodes in r.free_per_node.items()) or "-"


def steps_tables(cluster: Cluster, outcome: PreemptOutcome, wide: bool = False) -> RenderableType:
    """The steps (numbered, the command, why; `after`: what a move waits for) and the reading
    before and after; nothing when the plan changes no running pod."""
    todo = steps(cluster, outcome)
    if not todo:
        return Group()
    table = Table(title="steps, in order", title_justify="left")
    for col in ("#", "command", "why"):
        table.add_column(col, overflow="fold")
    for s in todo:
        table.add_row(str(s.number), s.command, s.note)
    frag = fragmentation(cluster, outcome)
    reading = Table(title="fragmentation (node-local devices)", title_justify="left")
    for col in ("", "free", "stranded", "largest fit", *(("free per node",) if wide else ())):
        reading.add_column(col, overflow="fold")
    for label, r in (("before", frag.before), ("after", frag.after)):
        reading.add_row(
            label, str(r.free), str(r.stranded), str(r.largest), *((_per_node(r),) if wide else ())
        )
    return Group(table, reading, Text(_gist(frag), style="dim"))


def _gist(frag: Fragmentation) -> str:
    shapes = ", ".join(map(str, frag.shapes)) or "none"
    per = f", {frag.per_move} per move" if frag.per_move is not None else ""
    return (
        f"stranded: free devices on nodes where no pending pod's device count ({shapes}) fits; "
        f"{frag.unblocked} pending pods placed on emptied nodes with {frag.moves} moves{per}"
    )


Rows = list[dict[str, str]]


def steps_rows(cluster: Cluster, outcome: PreemptOutcome) -> tuple[Rows, Rows]:
    """The steps and the readings as the HTML report shows them (`output.report`): plain rows."""
    todo = steps(cluster, outcome)
    if not todo:
        return [], []
    frag = fragmentation(cluster, outcome)
    rows = [{"number": str(s.number), "command": s.command, "note": s.note} for s in todo]
    readings = [
        {
            "label": label,
            "free": str(r.free),
            "stranded": str(r.stranded),
            "largest": str(r.largest),
            "per_node": _per_node(r),
        }
        for label, r in (("before", frag.before), ("after", frag.after))
    ]
    return rows, readings


def model_note(outcome: PreemptOutcome) -> str | None:
    """The line saying the per-device model answered and why (the counting model did not
    apply: `stats["preempt_model_reason"]`); None when the counting model answered."""
    if outcome.stats.get("preempt_model") != "devices":
        return None
    why = outcome.stats.get("preempt_model_reason")
    return (
        f"answered by the per-device model (it stops proving its last stages around 50 nodes): "
        f"the counting model does not apply — {why}"
    )


def steps_annotations(cluster: Cluster, outcome: PreemptOutcome) -> dict[str, str]:
    """`dra-solver.io/preempt-model` (`counts` or `devices`) and, for `devices`,
    `dra-solver.io/preempt-model-reason`; `dra-solver.io/steps` (a JSON list: number, kind,
    command, note, pod, from, to, after) and `dra-solver.io/fragmentation` (before and after:
    free, free per node, stranded, largest; the pending shapes; moves; pending pods unblocked
    and per move)."""
    todo = steps(cluster, outcome)
    frag = fragmentation(cluster, outcome)

    def step(s: Step) -> dict[str, object]:
        return {
            "number": s.number,
            "kind": s.kind,
            "command": s.command,
            "note": s.note,
            "pod": s.pod,
            "from": s.node,
            "to": s.to,
            "after": list(s.after),
        }

    def reading(r: Reading) -> dict[str, object]:
        return {
            "free": r.free,
            "freePerNode": {str(k): v for k, v in r.free_per_node.items()},
            "stranded": r.stranded,
            "largest": r.largest,
        }

    model = {}
    if (which := outcome.stats.get("preempt_model")) is not None:
        model[ANNOTATION + "preempt-model"] = str(which)
    if (why := outcome.stats.get("preempt_model_reason")) is not None:
        model[ANNOTATION + "preempt-model-reason"] = str(why)
    return {
        **model,
        ANNOTATION + "steps": json.dumps([step(s) for s in todo]),
        ANNOTATION + "fragmentation": json.dumps(
            {
                "before": reading(frag.before),
                "after": reading(frag.after),
                "pendingShapes": list(frag.shapes),
                "moves": frag.moves,
                "unblocked": frag.unblocked,
                "unblockedPerMove": frag.per_move,
            }
        ),
    }


__all__ = ["model_note", "steps_annotations", "steps_rows", "steps_tables"]
