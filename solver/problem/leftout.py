"""Whether a pool left out for a problem could have served a claim (docs/semantics.md,
"Messy clusters").

Why: a pool `planning.triage` left out (`Pool.left_out`) has unknown devices, so whether its
devices would make a pod fit cannot be searched. Named beside every pod without a fit on its
nodes, it would mislead where it plainly cannot serve: a CPU driver's pool left out on a node
where a GPU claim finds no device. What is known of its devices is their driver, and most
DeviceClasses pin one (`device.driver == "gpu.nvidia.com" && ...`, as every driver's chart
writes them). A request whose class or own selectors pin another driver cannot use the pool,
whatever its devices: a conjunct that is false makes the whole selector false in CEL (even
beside an error). Anything else may: the pool is then named as a possible cause.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.cluster import Cluster
from ..api.models import DeviceSelector, ResourceClaim
from ..cel import ast
from ..cel.parser import CompileIssue, parse
from ..errors import DRASolverError
from ..gates import FeatureGates
from .requests import request_specs


def may_serve(cluster: Cluster, claims: Sequence[ResourceClaim], driver: str, gates: FeatureGates) -> bool:
    """Whether a device of `driver` could match some request (or subrequest) of `claims`:
    False only when each one's class or own selectors pin another driver."""
    for claim in claims:
        try:
            requests = request_specs(claim, gates)
        except DRASolverError:
            return True  # the claim's own error is said elsewhere: unsure counts as yes
        for _, _, specs in requests:
            for spec in specs:
                cls = cluster.classes.get(spec.class_name or "")
                selectors = [*(cls.spec.selectors if cls is not None else []), *spec.selectors]
                pinned = {d for d in map(_pinned, selectors) if d is not None}
                if not pinned or pinned == {driver}:
                    return True
    return False


def _pinned(selector: DeviceSelector) -> str | None:
    """The driver a selector requires by a top-level conjunct `device.driver == "name"`
    (either side), or None."""
    if selector.cel is None:
        return None
    try:
        tree = parse(selector.cel.expression)
    except CompileIssue:  # the claim's own problem, said elsewhere
        return None
    for conjunct in _conjuncts(tree):
        if isinstance(conjunct, ast.Call) and conjunct.fn == "_==_" and len(conjunct.args) == 2:
            a, b = conjunct.args
            for side, other in ((a, b), (b, a)):
                if _is_driver(side) and isinstance(other, ast.Lit) and isinstance(other.value, str):
                    return str(other.value)
    return None


def _conjuncts(node: ast.Node) -> list[ast.Node]:
    if isinstance(node, ast.Call) and node.fn == "_&&_":
        return [c for arg in node.args for c in _conjuncts(arg)]
    return [node]


def _is_driver(node: ast.Node) -> bool:
    return (
        isinstance(node, ast.Select)
        and node.field == "driver"
        and not node.test_only
        and isinstance(node.target, ast.Ident)
        and node.target.name == "device"
    )


__all__ = ["may_serve"]
