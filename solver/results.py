"""AllocationResult objects exactly as upstream writes them into ResourceClaim status.

Why a module: both allocators produce the same plain Assignment; this is the one place
that turns it into `status.allocation` (docs/semantics.md, "Allocation results"): one result per
device in placement order, shareID and consumedCapacity only for shared devices,
skipNodeOperations from the slice (KEP-5945), class and claim config, node selector.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from .api.models import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    NodeSelector,
    Pod,
    PodGroup,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from .api.quantity import Quantity, QuantityFormat, quantity_format
from .errors import InputRefused
from .problem.flat import Assignment, Placement, Problem


class ShareIDs:
    """shareIDs are UUIDs; drawn from a seeded generator so that runs are reproducible.

    `taken`: the shareIDs already in the input (`share_ids_in`), never drawn. Why: a plan's
    output fed back as the next run's input (`--output-mode full`) carries the shares the
    first run drew from the same seed; drawing them again would give a second share of a
    device the same ID (the checker refuses it). Skipping a taken draw keeps the sequence a
    function of (seed, input), so runs stay reproducible."""

    def __init__(self, seed: int, taken: Iterable[str] = ()) -> None:
        self._rng = random.Random(seed)
        self._taken = set(taken)

    def next(self) -> str:
        while True:
            sid = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
            if sid not in self._taken:
                self._taken.add(sid)
                return sid


def share_ids_in(claims: Iterable[ResourceClaim]) -> set[str]:
    """The shareIDs the claims' allocations already hold."""
    out: set[str] = set()
    for c in claims:
        alloc = c.status.allocation if c.status else None
        if alloc is not None:
            out.update(r.share_id for r in alloc.devices.results if r.share_id)
    return out


def build_allocation(
    problem: Problem, claim: ResourceClaim, placements: list[Placement], share_ids: ShareIDs
) -> AllocationResult:
    results: list[DeviceRequestAllocationResult] = []
    for p in placements:
        alt = problem.alternatives[p.alternative]
        dev = problem.devices[p.device]
        cand = next(c for c in alt.candidates if c.device == p.device)
        fields: dict[str, Any] = {
            "request": alt.name,
            "driver": dev.driver,
            "pool": dev.pool,
            "device": dev.name,
        }
        if alt.admin:
            fields["adminAccess"] = True
        if alt.tolerations:
            fields["tolerations"] = list(alt.tolerations)
        if dev.multi:
            fields["shareID"] = share_ids.next()
            if dev.capacity:
                consumed, fmt = cand.consumed or {}, dev.capacity_format
                fields["consumedCapacity"] = {
                    k: str(Quantity.from_number(consumed.get(k, Fraction(0)), _format(fmt, k)))
                    for k in dev.capacity
                }
        if problem.gates.DRAOptionalNodePreparation and dev.skip_node_operations is not None:
            skip = dev.skip_node_operations
            fields["skipNodeOperations"] = list(skip) if isinstance(skip, tuple) else skip
        if dev.binding_conditions:
            fields["bindingConditions"] = list(dev.binding_conditions)
        if dev.binding_failure_conditions:
            fields["bindingFailureConditions"] = list(dev.binding_failure_conditions)
        results.append(DeviceRequestAllocationResult.model_validate(fields))
    devices = DeviceAllocationResult(results=results)
    config = _config(problem, claim, placements)
    if config:
        devices.config = config  # assigned only when present: upstream omits an empty list
    alloc: dict[str, Any] = {"devices": devices}
    selector = _node_selector(problem, placements)
    if selector is not None:
        alloc["nodeSelector"] = selector
    return AllocationResult.model_validate(alloc)


def _format(formats: dict[str, str], name: str) -> QuantityFormat:
    return quantity_format(formats.get(name, "DecimalSI")) or "DecimalSI"


def _config(
    problem: Problem, claim: ResourceClaim, placements: list[Placement]
) -> list[DeviceAllocationConfiguration]:
    used: list[str] = []
    by_class: dict[str, list[str]] = {}
    class_config: dict[str, tuple[dict, ...]] = {}
    for p in placements:
        alt = problem.alternatives[p.alternative]
        class_config[alt.class_name] = alt.class_config
        if alt.name not in used:
            used.append(alt.name)
            by_class.setdefault(alt.class_name, []).append(alt.name)
    out: list[DeviceAllocationConfiguration] = []
    for class_name, names in by_class.items():
        for class_cfg in class_config[class_name]:
            out.append(
                DeviceAllocationConfiguration.model_validate(
                    {**class_cfg, "source": "FromClass", "requests": names}
                )
            )
    top = {n.split("/")[0] for n in used}
    for cfg in claim.spec.devices.config:
        wanted = cfg.requests
        if wanted:
            kept = [r for r in wanted if r in used or r in top]
            if not kept:
                continue
        else:
            kept = []
        raw = cfg.dump()
        raw["requests"] = [] if set(kept) >= top and kept else kept
        if not raw["requests"]:
            raw.pop("requests")
        out.append(DeviceAllocationConfiguration.model_validate({**raw, "source": "FromClaim"}))
    return out


def _node_selector(problem: Problem, placements: list[Placement]) -> NodeSelector | None:
    """docs/semantics.md, "Allocation results": node-local or bindsToNode → exactly the node;
    selectors → one merged term; allNodes → none."""
    exprs: list[dict] = []
    fields: list[dict] = []
    for p in placements:
        dev = problem.devices[p.device]
        kind, value = dev.node_scope
        if kind == "node" or dev.binds_to_node:
            node = value if kind == "node" else problem.node
            return NodeSelector.model_validate(
                {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                }
            )
        if kind == "selector" and isinstance(value, dict):
            terms = value.get("nodeSelectorTerms", [])
            if len(terms) > 1:
                raise InputRefused(f"device {dev.id}: node selector with more than one term is not supported")
            for term in terms:
                for e in term.get("matchExpressions", []):
                    if e not in exprs:
                        exprs.append(e)
                for f in term.get("matchFields", []):
                    if f not in fields:
                        fields.append(f)
    if not exprs and not fields:
        return None
    merged: dict[str, list[dict]] = {}
    if exprs:
        merged["matchExpressions"] = exprs
    if fields:
        merged["matchFields"] = fields
    return NodeSelector.model_validate({"nodeSelectorTerms": [merged]})


def with_allocation(claim: ResourceClaim, allocation: AllocationResult) -> ResourceClaim:
    """A copy of the claim with status.allocation set (`allocation` itself, which the caller
    hands over); the input claim is not touched. Why a shallow copy (`model_copy`, as
    `with_reservations`): the parts that do not change (metadata, spec, the status's other
    fields) are shared, never modified in place; a dump and a re-validation of the whole claim
    gave the same object at a third of a 50,000-pod expansion's result writing. The same
    fields are set (the status's, plus `allocation`), so it dumps the same; nothing from the
    loader (`converted_from`) is carried, as a claim built anew carries nothing."""
    status = (
        claim.status.model_copy(update={"allocation": allocation})
        if claim.status is not None
        else ResourceClaimStatus(allocation=allocation)
    )
    out = claim.model_copy(update={"status": status})
    out._converted_from = None
    return out


MAX_RESERVED_FOR = 256
"""Upstream's ResourceClaimReservedForMaxSize: consumers one claim may be reserved for."""


def with_reservations(
    claim: ResourceClaim, pods: Sequence[Pod], groups: Sequence[PodGroup] = ()
) -> ResourceClaim:
    """A copy of the claim with `status.reservedFor` naming `groups` (PodGroups whose
    group-level claim it is, KEP-5729: `scheduling.k8s.io` `podgroups`) and `pods` (after any
    existing consumers, none twice), as the scheduler writes it when it binds them. The input
    claim is not modified (a copy of its status with a new list)."""
    status = claim.status or ResourceClaimStatus()
    consumers = list(status.reserved_for)
    known = {(c.resource, c.name) for c in consumers}
    for group in groups:
        if ("podgroups", group.metadata.name) not in known:
            consumers.append(
                ResourceClaimConsumerReference(
                    api_group="scheduling.k8s.io",
                    resource="podgroups",
                    name=group.metadata.name,
                    uid=group.metadata.uid or "",
                )
            )
            known.add(("podgroups", group.metadata.name))
    for pod in pods:
        if ("pods", pod.metadata.name) not in known:
            uid = pod.metadata.uid or ""
            consumers.append(ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=uid))
            known.add(("pods", pod.metadata.name))
    if len(consumers) > MAX_RESERVED_FOR:
        raise InputRefused(
            f"claim {claim.ref} would be reserved for {len(consumers)} consumers; "
            f"the limit is {MAX_RESERVED_FOR}"
        )
    return claim.model_copy(update={"status": status.model_copy(update={"reserved_for": consumers})})


def assignment_claims(
    problem: Problem,
    claims: Sequence[ResourceClaim],
    assignment: Assignment,
    seed: int = 0,
    share_ids: ShareIDs | None = None,
) -> list[ResourceClaim]:
    """Copies of `claims`, the placed ones with status.allocation. Pass one `share_ids`
    across calls that build results for the same cluster, so shareIDs never repeat."""
    ids = share_ids if share_ids is not None else ShareIDs(seed)
    out = []
    for ci, claim in enumerate(claims):
        if ci in assignment:
            out.append(with_allocation(claim, build_allocation(problem, claim, assignment[ci], ids)))
        else:
            out.append(claim)
    return out
