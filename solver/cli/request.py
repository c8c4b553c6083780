"""What `plan` is asked (`PlanRequest`), as given on the command line.

Why a module: `plan` and `plan --watch` both read it; kept below both, neither imports the other
for its type.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..api.cluster import Cluster
from ..deadline import Deadline
from ..errors import DRASolverError, InputError
from ..gates import FeatureGates
from ..planning.job import Options
from ..planning.resolve import PodInput, resolve_nodes, resolve_units
from .console import fail, print_warnings
from .inputs import Inputs
from .options import (
    AllocatorChoice,
    ExecutorChoice,
    Output,
    Search,
)


@dataclass(frozen=True)
class PlanRequest:
    """What `plan` is asked, as given on the command line (names not yet resolved on the input)."""

    inputs: Inputs
    search: Search
    output: Output
    pods: tuple[PodInput, ...] | None
    """--pod; None: plan's default (every pending pod); empty: none (-n of a namespace without any)."""
    nodes: tuple[str, ...] | None
    """--node; None: every node the input knows."""
    fill: str | None
    node_templates: tuple[str, ...]
    max_new_nodes: int | None
    executor: ExecutorChoice
    workers: int | None
    partitions: int
    repair: AllocatorChoice
    scenarios: tuple[str, ...]
    namespace: str | None
    all_namespaces: bool
    report: str | None
    compare: bool
    preempt: bool = False
    """--preempt: lower-priority running pods may be evicted (`dra_solver.preempt`)."""
    allow_moves: bool = False
    """--allow-moves (with --preempt): controller-owned running pods may be moved instead of
    evicted (`dra_solver.preempt.moves`)."""
    deadline: Deadline | None = None
    """--timeout: the whole run's one wall-clock limit, from the moment the command started."""

    def options(self, gates: FeatureGates) -> Options:
        """The run's one Options (the executor and the progress bar join it while it runs)."""
        return self.search.options(
            gates, partitions=self.partitions, repair=self.repair.value, deadline=self.deadline
        )

    def in_namespace(self, cluster: Cluster, gates: FeatureGates) -> PlanRequest:
        """`-n NS`: names without a namespace are in NS; without --pod (and --fill), the pods to
        plan are the pending pods of NS only — what `plan` would take by default, in that
        namespace (a pod of plain claims, its claims'). A namespace without pending pods plans
        none."""
        namespace = self.namespace
        if namespace is None:
            return self
        if self.all_namespaces:
            fail([InputError("give either --namespace (-n) or --all-namespaces (-A)")])

        def qualified(name: str) -> str:
            return name if "/" in name else f"{namespace}/{name}"

        if self.fill is not None:
            return replace(self, fill=qualified(self.fill))
        if self.pods:
            return replace(self, pods=tuple(qualified(p) if isinstance(p, str) else p for p in self.pods))
        selected: list[PodInput] = []
        for unit in resolve_units(cluster, None, None, gates):
            for member in unit.members:
                if member.pod is not None:
                    if member.pod.metadata.ns == namespace:
                        selected.append(member.pod.namespaced_name)
                elif member.claims and all(c.split("/", 1)[0] == namespace for c in member.claims):
                    selected.append(list(member.claims))
        # The pods of NS no plan places (`planning.triage`) are listed with their reasons.
        selected.extend(h.name for (ns, _), h in cluster.held.items() if ns == namespace)
        if not selected:
            known = sorted({ns for ns, _ in [*cluster.pods, *cluster.claims]} | set(cluster.namespaces))
            hint = f" (namespaces in the input: {', '.join(known)})" if namespace not in known else ""
            print_warnings([f"no pending pods in namespace {namespace}{hint}"])
        return replace(self, pods=tuple(selected))

    def check_names(self, cluster: Cluster) -> None:
        """The names and combinations `plan` is given, checked before it says it is planning: a
        typo is one error line, not a banner and then an error."""
        try:
            if self.fill is not None:
                if self.node_templates or self.pods:
                    raise InputError("--fill cannot be combined with --node-template or --pod")
                cluster.pod(self.fill)
            for name in self.pods or ():
                if isinstance(name, str):
                    cluster.pod(name)
            if self.preempt and (self.fill is not None or self.node_templates or self.partitions > 1):
                raise InputError("--preempt cannot be combined with --fill, --node-template or --partitions")
            if self.nodes or not self.node_templates:
                resolve_nodes(cluster, self.nodes)
        except DRASolverError as exc:
            fail([exc])
