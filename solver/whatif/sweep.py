"""Sweeps: one plan per what-if scenario, one summary table (`plan ... --scenario FILE`, issue #14).

Why a sweep: before a purchase, planners ask the same question of many futures — "if these
extra pods arrive (a demand forecast), and we may buy these node types, what fits and what
must we add?" Each scenario is an independent plan of the base cluster plus the scenario's
objects, so scenarios run as units on an executor (`solver.executors`) and their rows are
put together in the order the scenarios were given: the table does not depend on where the
scenarios ran.

A scenario file holds Kubernetes objects like any input. Its Nodes, each with the
ResourceSlices naming it, are node templates (`solver.api.templates`: the plan may add copies);
everything else (Pods, ResourceClaims, templates, DeviceClasses, ...) is added to the base
cluster as extra demand. A scenario's name is its file's name without the extension.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..api.cluster import Cluster
from ..api.load import dumps
from ..api.models import TypeMeta
from ..api.templates import NodeTemplate
from ..errors import InputError
from ..executors import run_units
from ..pipeline import plan
from ..planning.job import Options
from ..planning.outcome import int_stat


@dataclass(frozen=True)
class Scenario:
    """Extra objects (as plain dicts) and node templates of one what-if."""

    name: str
    objects: tuple[dict[str, Any], ...]
    templates: tuple[NodeTemplate, ...]

    @classmethod
    def from_path(cls, path: str | Path) -> Scenario:
        """Read a scenario file: Nodes with their slices become templates, the rest extra objects."""
        found = Cluster.from_paths([path])
        templates: list[NodeTemplate] = []
        taken: set[int] = set()
        for name, node in found.nodes.items():
            mine = [i for i, s in enumerate(found.slices) if s.spec.node_name == name]
            taken.update(mine)
            templates.append(NodeTemplate.of(node, [found.slices[i] for i in mine]))
        rest = [o for i, o in enumerate(found.slices) if i not in taken]
        objects = [*found.classes.values(), *rest, *found.templates.values(), *found.claims.values()]
        objects += [*found.pods.values(), *found.pod_groups.values(), *found.priority_classes.values()]
        objects += found.workloads.values()
        return cls(Path(path).stem, tuple(o.dump() for o in objects), tuple(templates))


@dataclass(frozen=True)
class ScenarioRow:
    """One line of the sweep's table."""

    scenario: str
    pods: int
    placed: int
    added_nodes: int
    added_cost: int
    status: str
    objective: int
    bound: int
    seconds: float

    def decided(self) -> tuple[object, ...]:
        """The row without its wall clock: what must not depend on the executor."""
        return tuple(v for k, v in asdict(self).items() if k != "seconds")


@dataclass(frozen=True)
class ScenarioTask:
    """One scenario as plain data: the base cluster, the scenario, what to plan and how."""

    cluster: Cluster
    scenario: Scenario
    templates: tuple[NodeTemplate, ...]
    max_new_nodes: int | None
    """Most copies of each template; None derives it from the pending pods (`solver.planners.whatif`)."""
    options: Options


def run_scenario(task: ScenarioTask) -> ScenarioRow:
    """The plan of one scenario (a pure function of `task`, for any executor): the base
    cluster plus its objects, every pending pod, the node templates given to every scenario
    plus its own."""
    start = time.perf_counter()
    cluster = _with(task.cluster, task.scenario.objects)
    templates = [*task.templates, *task.scenario.templates]
    outcome = plan(
        cluster,
        options=task.options,
        node_templates=templates or None,
        max_new_nodes=task.max_new_nodes,
    )
    stats, told = outcome.stats, outcome.verdict
    return ScenarioRow(
        task.scenario.name,
        len(outcome.pods),
        outcome.placed,
        len(outcome.added_nodes),
        int_stat(stats, "added_cost", 0),
        "-" if told is None else told.status.value,
        outcome.weight if told is None else told.objective,
        outcome.weight if told is None or told.bound is None else told.bound,
        round(time.perf_counter() - start, 3),
    )


def sweep(
    cluster: Cluster,
    scenarios: Sequence[Scenario | str | Path],
    options: Options,
    *,
    templates: Sequence[NodeTemplate] = (),
    max_new_nodes: int | None = None,
) -> list[ScenarioRow]:
    """One row per scenario, in the order given; the scenarios run on `options.executor`.
    `max_new_nodes`: as `plan`'s — None (default) derives each scenario's cap from its pending
    pods, so no default cuts a scenario's answer short."""
    if not scenarios:
        raise InputError("a sweep needs at least one scenario")
    loaded = [s if isinstance(s, Scenario) else Scenario.from_path(s) for s in scenarios]
    inner = replace(options, executor=None, progress=None, cache=None)
    tasks = [ScenarioTask(cluster, s, tuple(templates), max_new_nodes, inner) for s in loaded]
    return run_units(options.executor, run_scenario, tasks)


COLUMNS = (
    "scenario",
    "pods",
    "placed",
    "added_nodes",
    "added_cost",
    "status",
    "objective",
    "bound",
    "seconds",
)


def sweep_table(rows: Sequence[ScenarioRow]) -> str:
    """The rows as a fixed-width text table, one scenario a line, with a header."""
    cells = [list(COLUMNS)] + [[str(getattr(r, c)) for c in COLUMNS] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = []
    for line in cells:
        pairs = enumerate(zip(line, widths, strict=True))
        padded = [v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in pairs]
        lines.append("  ".join(padded))
    return "\n".join(s.rstrip() for s in lines) + "\n"


def sweep_output(rows: Sequence[ScenarioRow], fmt: str) -> str:
    """What `plan --scenario` prints: the table (`-o table`), or the rows as YAML / JSON."""
    if fmt == "table":
        return sweep_table(rows)
    return dumps([asdict(r) for r in rows], fmt)


def _with(cluster: Cluster, objects: Sequence[dict[str, Any]]) -> Cluster:
    """A copy of `cluster` with `objects` added (read like input; same identity twice is an
    error only when the two differ)."""
    base: list[TypeMeta] = [
        *cluster.classes.values(),
        *cluster.slices,
        *cluster.taint_rules.values(),
        *cluster.priority_classes.values(),
        *cluster.nodes.values(),
        *cluster.templates.values(),
        *cluster.claims.values(),
        *cluster.pods.values(),
        *cluster.pod_groups.values(),
        *cluster.workloads.values(),
        *cluster.namespaces.values(),
    ]
    extra = Cluster.from_objects(objects)
    out = Cluster()
    for obj in base:
        out.add(obj)
    added: list[TypeMeta] = [
        *extra.classes.values(),
        *extra.slices,
        *extra.priority_classes.values(),
        *extra.templates.values(),
        *extra.claims.values(),
        *extra.pods.values(),
        *extra.pod_groups.values(),
        *extra.workloads.values(),
        *extra.namespaces.values(),
    ]
    for obj in added:
        out.add(obj)
    return out


__all__ = ["Scenario", "ScenarioRow", "ScenarioTask", "run_scenario", "sweep", "sweep_output", "sweep_table"]
