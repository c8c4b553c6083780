"""The preemption question as plain facts (`Setting`): what both batch models read.

Why a module: the model by devices (`preempt.model`) builds it and the model by counts
(`preempt.counting`) reads it; kept below both, neither imports the other for its type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..planning.job import Unit
from .victims import Budget, Candidate


@dataclass(frozen=True)
class Setting:
    """The preemption question as plain facts: the input, the pending units, the candidate
    victims, which claims they may release, and the budgets."""

    cluster: Cluster
    released: Cluster
    """The model's cluster: the input with every candidate victim evicted as the snapshot
    evicts (`planning.snapshot.Snapshot.evict`: gone from every claim's `reservedFor`, the
    claims no one else uses deallocated). The victims come back as pods of the model, the
    deallocated claims as its holders."""
    pending: list[Unit]
    levels: list[int | None]
    """Per pending unit: the highest priority of its pods that may preempt (None: none may)."""
    victims: list[Candidate]
    holders: dict[str, tuple[ResourceClaim, str, tuple[int, ...]]]
    """Releasable claim ref -> (the input claim, its node, the victims using it): the claims
    `released` has deallocated."""
    budgets: list[Budget]
    nodes: list[str]
    warnings: list[str] = field(default_factory=list)
    """Budgets left out because their selector matches no pod of the input."""
    movers: dict[int, Unit] = field(default_factory=dict)
    """With `allow_moves`: victim index -> the unit of its replacement (`preempt.moves`), which
    may go on any other node it may use; empty without."""
    unmovable: dict[int, str] = field(default_factory=dict)
    """With `allow_moves`: victim index -> why it may not be moved (`preempt.moves.not_movable`)."""
