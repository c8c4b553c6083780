"""The one place where placements become `status.allocation` and pass the checker.

Why a floor above `planning/job.py`: the ledger writes results (`solver.results`) and runs the
independent checker (`solver.check`) on every placement, so that a bug in precompute or a
planner surfaces as an error, never as a wrong allocation; the plan's data below it imports
neither.
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..check import check_or_raise
from ..problem.flat import Assignment, Problem
from ..results import ShareIDs, assignment_claims, share_ids_in
from .job import Job
from .snapshot import Snapshot


class Ledger:
    """The cluster as placements accumulate: what is placed counts as allocated for what follows."""

    def __init__(self, job: Job) -> None:
        self.after = Snapshot(job.cluster, job.gates)
        self.cluster = self.after.cluster
        """The cluster after the placements so far (the snapshot's live view)."""
        self.gates = job.gates
        self.share_ids = ShareIDs(job.seed, share_ids_in(job.cluster.claims.values()))  # input's are taken

    def results(
        self, problem: Problem, claims: tuple[ResourceClaim, ...], assignment: Assignment
    ) -> list[ResourceClaim]:
        return assignment_claims(problem, claims, assignment, share_ids=self.share_ids)

    def commit(self, claims: list[ResourceClaim], node: str | None, view: Cluster | None = None) -> None:
        """Verify `claims` (placed together, on `node`) and record them as allocated. `view`:
        the part of the cluster the node depends on (`classes.LocalViews`), checked instead of
        the whole cluster when the nodes are independent."""
        check_or_raise(self.cluster if view is None else view, claims, node=node, gates=self.gates)
        self.after.allocate(claims)
