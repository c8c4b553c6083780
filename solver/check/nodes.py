"""Nodes: what an allocation tells the node — its nodeSelector and skipNodeOperations.

Why a module: both rules compare the allocation with where the devices live and what the
node must do for them: `node-selector` (docs/semantics.md, "Allocation results": the
allocation's nodeSelector is the node for node-local devices, the combined device selectors
otherwise, none for allNodes) and
`skip-node-operations` (a result copies its slice's skipNodeOperations, and
neither may be set with DRAOptionalNodePreparation off — a `gate` violation).
"""

from __future__ import annotations

from ..api.models import NodeSelector, NodeSelectorRequirement, ResourceClaim
from .context import Context
from .keys import claim_id, dev_id
from .pools import Dev
from .results import Placed

Requirement = tuple[str, str, tuple[str, ...]]
Term = tuple[frozenset[Requirement], frozenset[Requirement]]


def req_key(r: NodeSelectorRequirement) -> Requirement:
    return (r.key, r.operator, tuple(sorted(r.values)))


def normal_selector(sel: NodeSelector | None) -> frozenset[Term]:
    """A NodeSelector as a set of terms (order and duplicates do not matter)."""
    if sel is None:
        return frozenset()
    return frozenset(
        (frozenset(map(req_key, t.match_expressions)), frozenset(map(req_key, t.match_fields)))
        for t in sel.node_selector_terms
    )


def show_selector(terms: frozenset[Term]) -> str:
    if not terms:
        return "none"
    parts = []
    for exprs, flds in sorted(terms, key=repr):
        reqs = [f"{k} {op} {list(v)}" for k, op, v in sorted(exprs)] + [
            f"field {k} {op} {list(v)}" for k, op, v in sorted(flds)
        ]
        parts.append("{" + "; ".join(reqs) + "}")
    return " OR ".join(parts)


def check_skip_node_operations(ctx: Context, p: Placed, dev: Dev) -> None:
    """The result's skipNodeOperations is its slice's (KEP-5945: the draft's boolean or the
    merged list of operations); with the gate off neither may be set."""
    r = p.result
    cid, req = p.claim_id, r.request
    slice_skip = _skip(dev.slice.spec.skip_node_operations)
    result_skip = _skip(r.skip_node_operations)
    if ctx.gates.DRAOptionalNodePreparation:
        if result_skip != slice_skip:
            ctx.report(
                cid,
                req,
                "skip-node-operations",
                f"device {dev_id(dev.key)}: result skipNodeOperations={r.skip_node_operations}, "
                f"but ResourceSlice {dev.slice.metadata.name} has "
                f"skipNodeOperations={dev.slice.spec.skip_node_operations}",
            )
    elif slice_skip or result_skip:
        what = (
            f"comes from ResourceSlice {dev.slice.metadata.name} with skipNodeOperations set"
            if slice_skip
            else "has a result with skipNodeOperations set"
        )
        ctx.report(
            cid, req, "gate", f"device {dev_id(dev.key)} {what}, but DRAOptionalNodePreparation is off"
        )


def _skip(value: bool | list[str] | None) -> bool | tuple[str, ...]:
    """One form for comparing: False when unset, the boolean, or the list as a tuple."""
    if isinstance(value, list):
        return tuple(value) if value else False
    return bool(value)


def check_node_selector(ctx: Context, claim: ResourceClaim, mine: list[Placed]) -> None:
    """docs/semantics.md, "Allocation results": node-local → exactly the node; selectors →
    one term, their union; allNodes → none."""
    if not mine or any(p.dev is None for p in mine):
        return
    cid = claim_id(claim)
    assert claim.status is not None and claim.status.allocation is not None
    actual = normal_selector(claim.status.allocation.node_selector)
    node_local = [
        p for p in mine if p.dev is not None and (p.dev.scope[0] == "node" or p.dev.device.binds_to_node)
    ]
    expected: frozenset[Term]
    if node_local:
        if ctx.node is None:
            ctx.report(cid, None, "node-selector", "node-local devices were allocated without a node")
            return
        expected = frozenset({(frozenset(), frozenset({("metadata.name", "In", (ctx.node,))}))})
        why = f"device {dev_id(node_local[0].key)} is local to node {ctx.node}"
    else:
        selectors = []
        for p in mine:
            assert p.dev is not None
            if p.dev.scope[0] == "selector" and p.dev.scope[1] not in selectors:
                selectors.append(p.dev.scope[1])
        if not selectors:
            expected = frozenset()
            why = "every device is available on all nodes"
        elif all(len(s.node_selector_terms) == 1 for s in selectors):
            exprs = frozenset(
                req_key(r) for s in selectors for r in s.node_selector_terms[0].match_expressions
            )
            flds = frozenset(req_key(r) for s in selectors for r in s.node_selector_terms[0].match_fields)
            expected = frozenset({(exprs, flds)})
            why = "the devices' node selectors are combined into one term"
        elif len({normal_selector(s) for s in selectors}) == 1:
            expected = normal_selector(selectors[0])
            why = "all devices share one node selector"
        else:
            ctx.report(
                cid,
                None,
                "node-selector",
                "devices with different multi-term node selectors cannot be combined into one allocation",
            )
            return
    if actual != expected:
        ctx.report(
            cid,
            None,
            "node-selector",
            f"allocation.nodeSelector is {show_selector(actual)}, expected {show_selector(expected)} ({why})",
        )
