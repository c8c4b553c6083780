"""dra-solver: optimal allocation for Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).

Public API (loaded lazily, so that `import dra_solver.encoders` stays free of pydantic and
CEL): load objects into a `Cluster`, then `plan()` pods over nodes or `allocate()` one pod's
claims, with `Options` (allocator, feature gates, seed, strategy, time limit); `check_cluster()`
audits a cluster state with the independent checker and returns every `Violation`.

    from dra_solver import Cluster, Options, allocate, plan

Public: `__all__` and the modules and names docs/python-api.md lists under "What is public";
every other module and name of the package is internal and may change in any release.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, overload

# Public name -> the module that defines it.
_EXPORTS = {
    "AllocationOutcome": "dra_solver.pipeline",
    "Deadline": "dra_solver.deadline",
    "Options": "dra_solver.planning.job",
    "PlanOutcome": "dra_solver.planning.outcome",
    "PodPlan": "dra_solver.planning.outcome",
    "Planner": "dra_solver.replan.planner",
    "allocate": "dra_solver.pipeline",
    "load": "dra_solver.pipeline",
    "check_cluster": "dra_solver.check",
    "Violation": "dra_solver.check",
    "why": "dra_solver.explain.diagnosis",
    "fill": "dra_solver.whatif.filling",
    "NodeTemplate": "dra_solver.api.templates",
    "plan_preempt": "dra_solver.preempt",
    "PreemptOutcome": "dra_solver.preempt",
    "Cluster": "dra_solver.api.cluster",
    "FeatureGates": "dra_solver.gates",
    "DRASolverError": "dra_solver.errors",
    "InputError": "dra_solver.errors",
    "CutShort": "dra_solver.errors",
}

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    __version__: str

    from .api.cluster import Cluster
    from .api.templates import NodeTemplate
    from .check import Violation, check_cluster
    from .deadline import Deadline
    from .errors import CutShort, DRASolverError, InputError
    from .explain.diagnosis import why
    from .gates import FeatureGates
    from .pipeline import AllocationOutcome, allocate, load
    from .planning.job import Options
    from .planning.outcome import PlanOutcome, PodPlan
    from .preempt import PreemptOutcome, plan_preempt
    from .replan.planner import Planner
    from .whatif.filling import fill


@overload
def plan(
    cluster: Cluster,
    pods: Sequence[Any] | None = None,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    *,
    preempt: Literal[True],
    allow_moves: bool = False,
    **changes: Any,
) -> PreemptOutcome: ...


@overload
def plan(
    cluster: Cluster,
    pods: Sequence[Any] | None = None,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    *,
    preempt: Literal[False] = False,
    priorities: Sequence[int] | None = None,
    node_templates: Sequence[NodeTemplate | str | Path] | None = None,
    max_new_nodes: int | None = None,
    **changes: Any,
) -> PlanOutcome: ...


def plan(*args: Any, preempt: bool = False, **kwargs: Any) -> PlanOutcome:
    """`dra_solver.pipeline.plan` (see it for the arguments); with `preempt=True`,
    `dra_solver.preempt.plan_preempt`: lower-priority running pods may be evicted for the
    pending ones (docs/semantics.md, "Preemption"), and the outcome lists them (`victims`);
    with `allow_moves=True` too, controller-owned pods may be moved instead (`moves`).
    Loaded on first call, as every public name is; the overloads above give editors and type
    checkers both signatures and the outcome type each returns."""
    moves = bool(kwargs.pop("allow_moves", False))
    if moves and not preempt:
        raise import_module("dra_solver.errors").InputError("allow_moves needs preempt=True")
    if preempt:
        # Garbage collection as for a plan (`planners.run.fewer_collections`): 21 s instead of
        # 24 s on issue #31's 500-node cluster read from YAML.
        with import_module("dra_solver.planners.run").fewer_collections():
            result: PlanOutcome = import_module("dra_solver.preempt").plan_preempt(
                *args, allow_moves=moves, **kwargs
            )
        return result
    outcome: PlanOutcome = import_module("dra_solver.pipeline").plan(*args, **kwargs)
    return outcome


def _version() -> str:
    """The installed distribution's version, read from its metadata on first use of
    `__version__` (importlib.metadata costs tens of milliseconds that `import dra_solver` and
    `dra-solver --help` have no use for)."""
    from importlib import metadata

    try:
        return metadata.version("dra-solver")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = version = _version()
        return version
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dra_solver' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, "__version__"})


__all__ = [
    "AllocationOutcome",
    "Cluster",
    "CutShort",
    "DRASolverError",
    "Deadline",
    "FeatureGates",
    "InputError",
    "NodeTemplate",
    "Options",
    "PlanOutcome",
    "Planner",
    "PodPlan",
    "PreemptOutcome",
    "Violation",
    "__version__",
    "allocate",
    "check_cluster",
    "fill",
    "load",
    "plan",
    "plan_preempt",
    "why",
]
