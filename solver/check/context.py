"""Context: the state of one `check` call, handed to every rule.

Why a module: the rule modules share one reading of the cluster (`World`), one set of
CEL caches (`Expressions`) and one list of findings, in the order they were found; the
context bundles them so that each rule is a plain function of (context, what it checks).
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..gates import FeatureGates
from .expressions import Expressions
from .keys import DeviceKey
from .violations import Violation, violation
from .world import Reading, World


class Context:
    """The inputs, the world they describe, the CEL caches and the violations found so far."""

    def __init__(
        self,
        cluster: Cluster,
        allocated: list[ResourceClaim],
        node: str | None,
        gates: FeatureGates,
        *,
        one_call: bool = False,
        reading: Reading | None = None,
    ):
        self.cluster = cluster
        self.one_call = one_call
        """Whether `allocated` are the claims of one allocation call (one pod's, in order): then
        the rules of one call apply (an admin placement is in use for the later claims). False
        when they may come from several calls (a node's pods, an audit of a cluster state)."""
        self.allocated = allocated
        self.node = node
        self.gates = gates
        self.world = World(cluster, allocated, node, gates, reading)
        """`reading`: what many contexts read alike from the cluster, read once (`world.Reading`)."""
        self.cel = Expressions()
        self.violations: list[Violation] = []
        self.reported_cel: set[tuple[str, str, DeviceKey]] = set()
        """(where, expression, device) of CEL errors already reported: each is reported once."""

    def report(self, claim: str, request: str | None, kind: str, message: str) -> None:
        self.violations.append(violation(claim, request, kind, message))
