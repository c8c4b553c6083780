"""Scopes: where a slice or a device is available, and whether a node is inside it.

Why a module: both the visible inventory (which slices and devices a node sees) and the
`node-selector` rule build on the same reading of nodeName / nodeSelector / allNodes /
perDeviceNodeSelection and of core/v1 NodeSelector matching.
"""

from __future__ import annotations

from typing import Any, Literal

from ..api.models import Device, NodeSelector, NodeSelectorRequirement, ResourceSlice


def requirement_matches(req: NodeSelectorRequirement, values: dict[str, str]) -> bool:
    """Standard core/v1 NodeSelectorRequirement semantics."""
    present = req.key in values
    value = values.get(req.key)
    match req.operator:
        case "In":
            return present and value in req.values
        case "NotIn":
            return not present or value not in req.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case "Gt" | "Lt":
            if not present or len(req.values) != 1:
                return False
            try:
                have, bound = int(str(value)), int(req.values[0])
            except ValueError:
                return False
            return have > bound if req.operator == "Gt" else have < bound
    return False


def selector_matches(selector: NodeSelector, node: str | None, labels: dict[str, str]) -> bool:
    """Terms are ORed, requirements ANDed; an empty term matches nothing.

    Without a node (allocation for "no node") a selector-scoped slice counts as visible.
    """
    if node is None:
        return True
    fields = {"metadata.name": node}
    for term in selector.node_selector_terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(requirement_matches(r, labels) for r in term.match_expressions) and all(
            requirement_matches(r, fields) for r in term.match_fields
        ):
            return True
    return False


Scope = tuple[Literal["node", "selector", "all"], Any]


def scope_matches(scope: Scope | None, node: str | None, labels: dict[str, str]) -> bool:
    if scope is None:
        return False
    kind, arg = scope
    if kind == "node":
        return node is not None and arg == node
    if kind == "selector":
        return selector_matches(arg, node, labels)
    return True


def device_scope(device: Device) -> Scope | None:
    if device.node_name:
        return ("node", device.node_name)
    if device.node_selector is not None:
        return ("selector", device.node_selector)
    if device.all_nodes:
        return ("all", None)
    return None


def slice_scope(rs: ResourceSlice) -> Scope | Literal["per-device"] | None:
    spec = rs.spec
    if spec.node_name:
        return ("node", spec.node_name)
    if spec.node_selector is not None:
        return ("selector", spec.node_selector)
    if spec.all_nodes:
        return ("all", None)
    if spec.per_device_node_selection:
        return "per-device"
    return None
