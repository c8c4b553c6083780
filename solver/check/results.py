"""Results: what each device result of a claim names — its request and its device.

Why a module: every other rule works on `Placed` results, so reading a raw result comes
first: the request or subrequest it names must exist (`request`, and one subrequest per
request), its adminAccess must be the request's (`admin`), the device must be visible
from the node (`unknown-device`, or `gate` when only DRAPartitionableDevices hides it),
and a claim has at most 32 results (`limit`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..api.models import DeviceRequest, DeviceRequestAllocationResult, ResourceClaim
from ..api.validate import validate_object
from .context import Context
from .keys import Alt, DeviceKey, dev_id
from .pools import Dev

MAX_RESULTS = 32
"""AllocationResultsMaxSize: at most 32 device results per claim."""


@dataclass
class Placed:
    """One result of a claim being checked, with what it resolved to."""

    claim_id: str
    claim: ResourceClaim
    result: DeviceRequestAllocationResult
    top: str
    """The top-level request name (before any `/sub`)."""
    alt: Alt | None
    """The request or subrequest the result names; None when it does not exist."""
    dev: Dev | None
    """The device; None when it is not visible."""

    @property
    def key(self) -> DeviceKey:
        r = self.result
        return (r.driver, r.pool, r.device)

    @property
    def admin(self) -> bool:
        return bool(self.result.admin_access)


def asks_admin(alt: Alt) -> bool:
    """Whether the request or subrequest asks for admin access."""
    return bool(getattr(alt, "admin_access", None))


def check_limit(ctx: Context, cid: str, results: Sequence[DeviceRequestAllocationResult]) -> None:
    if len(results) > MAX_RESULTS:
        ctx.report(cid, None, "limit", f"{len(results)} device results exceed the limit of {MAX_RESULTS}")


def resolve(ctx: Context, claim: ResourceClaim, cid: str, name: str) -> tuple[str, Alt | None]:
    """(top-level name, the request or subrequest), reporting a `request` violation if absent."""
    top, slash, sub = name.partition("/")
    request: DeviceRequest | None = next((r for r in claim.spec.devices.requests if r.name == top), None)
    if request is None:
        ctx.report(cid, name, "request", f"the claim has no request named {top!r}")
        return top, None
    if request.first_available is not None:
        if not slash:
            ctx.report(
                cid,
                name,
                "request",
                f"request {top!r} has subrequests; the result must name one as {top}/<sub>",
            )
            return top, None
        found = next((s for s in request.first_available if s.name == sub), None)
        if found is None:
            ctx.report(cid, name, "request", f"request {top!r} has no subrequest named {sub!r}")
        return top, found
    if slash:
        ctx.report(cid, name, "request", f"request {top!r} has no subrequests, the result names {name!r}")
        return top, None
    if request.exactly is None:
        ctx.report(cid, name, "request", f"request {top!r} has neither exactly nor firstAvailable")
    return top, request.exactly


def check_admin(ctx: Context, p: Placed, alt: Alt) -> None:
    """A result has adminAccess exactly when its request asks for it."""
    wants_admin = asks_admin(alt)
    if wants_admin != p.admin:
        ctx.report(
            p.claim_id,
            p.result.request,
            "admin",
            f"result adminAccess={p.admin} on device {dev_id(p.key)}, "
            f"but the request {'asks for' if wants_admin else 'does not ask for'} admin access",
        )


def lookup(ctx: Context, claim: ResourceClaim, cid: str, r: DeviceRequestAllocationResult) -> Dev | None:
    """The visible device a result names; reports `unknown-device` or `gate` when there is none."""
    world = ctx.world
    key = (r.driver, r.pool, r.device)
    dev = world.inv.devices.get(key)
    if dev is not None:
        return dev
    if not ctx.gates.DRAPartitionableDevices and key in world.gate_on_inventory().devices:
        ctx.report(
            cid,
            r.request,
            "gate",
            f"device {dev_id(key)} is only usable with partitionable devices "
            "(perDeviceNodeSelection / shared counters), but DRAPartitionableDevices is off",
        )
        return None
    problem = world.inv.problems.get((r.driver, r.pool))
    if problem is not None:
        why = problem
    elif any(
        rs.spec.driver == r.driver
        and rs.spec.pool.name == r.pool
        and any(d.name == r.device for d in rs.spec.devices)
        for rs in ctx.cluster.slices
    ):
        why = f"it is not visible from node {ctx.node}" if ctx.node else _without_node(claim)
    else:
        why = "no ResourceSlice publishes it"
    ctx.report(cid, r.request, "unknown-device", f"device {dev_id(key)}: {why}")
    return None


def _without_node(claim: ResourceClaim) -> str:
    """Why a published device is not visible to a claim checked without a node: the claim's
    `status.allocation.nodeSelector` cannot be read (the field named: its node cannot be told,
    so neither can what it sees), or it names no single node."""
    unreadable = [e for e in validate_object(claim) if e.field.startswith("status.allocation.nodeSelector")]
    if unreadable:
        said = "; ".join(f"{e.field}: {e.reason}" for e in unreadable)
        return f"the claim's node cannot be told, its allocation's node selector cannot be read ({said})"
    return "it is not visible without a node"


def check_one_subrequest(ctx: Context, cid: str, mine: list[Placed]) -> None:
    """All results of a request with firstAvailable use the same subrequest."""
    subs_used: dict[str, set[str]] = defaultdict(set)
    for p in mine:
        if p.alt is not None and "/" in p.result.request:
            subs_used[p.top].add(p.result.request)
    for top, subs in subs_used.items():
        if len(subs) > 1:
            ctx.report(
                cid,
                top,
                "request",
                f"results use more than one subrequest of {top!r}: {', '.join(sorted(subs))}",
            )
