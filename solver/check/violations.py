"""Violations: the rule kinds the checker knows, one broken rule, and the error raised.

Why a module: these are the checker's whole vocabulary towards its callers (the library
raises `CheckFailed`, tests match on `Violation.kind`), and every rule module builds its
findings the same way through `violation`, so the message format lives in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import AllocationError

KINDS: tuple[str, ...] = (
    "unknown-device",
    "request",
    "count",
    "duplicate",
    "selector",
    "busy",
    "capacity",
    "rounding",
    "share",
    "counters",
    "compatibility",
    "match",
    "distinct",
    "taint",
    "copies",
    "gate",
    "skip-node-operations",
    "node-selector",
    "admin",
    "limit",
    "node-resources",
    "gang",
    "gang-topology",
    "pod-node-name",
    "pod-node-unschedulable",
    "pod-node-selector",
    "pod-node-affinity",
    "pod-node-taint",
    "pod-node-missing",
    "pod-claim-allocated",
    "pod-claim-reserved",
    "pod-claim-node",
    "pod-extended-resource",
)
"""Every violation kind `check` can report."""


@dataclass(frozen=True)
class Violation:
    """One broken rule in one claim's allocation."""

    claim: str
    """`namespace/name` of the object the rule is about: the allocated claim, or the pod
    (placement rules, `node-resources`), or the PodGroup (`gang`, `gang-topology`)."""
    request: str | None
    """`req` or `req/sub` the violation is about, None for claim-wide rules."""
    kind: str
    """One of `KINDS`."""
    message: str
    """Human-readable: names the claim, request, device and the rule."""

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


class CheckFailed(AllocationError):
    """An allocation did not pass the checker; `violations` lists every broken rule."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = list(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(f"allocation failed verification ({len(self.violations)} violation(s)):\n{lines}")


def violation(claim: str, request: str | None, kind: str, message: str) -> Violation:
    """A violation whose message is prefixed with the claim (and request) it concerns."""
    assert kind in KINDS, kind
    where = f"claim {claim}"
    if request:
        where += f", request {request}"
    return Violation(claim, request, kind, f"{where}: {message}")
