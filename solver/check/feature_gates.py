"""Feature gates: a result may only use what the active DRA feature gates allow (`gate`).

Why a module: a disabled gate turns a feature off even when the objects use it; these
rules catch an allocator that placed a subrequest, a capacity request, admin access, a
counter-consuming device or a device with bindingConditions while its gate is off.
(The gates of skipNodeOperations and of devices only visible with partitionable devices
are checked with those rules, in `nodes` and `results`.)
"""

from __future__ import annotations

from ..api.models import DeviceSubRequest
from ..api.quantity import Quantity
from .context import Context
from .keys import Alt, dev_id
from .pools import Dev
from .results import Placed, asks_admin


def check_request_gates(ctx: Context, p: Placed, alt: Alt, requests: dict[str, Quantity]) -> None:
    """Gates of what the request asks for: firstAvailable, capacity requests, admin access."""
    g = ctx.gates
    cid, req = p.claim_id, p.result.request
    if isinstance(alt, DeviceSubRequest) and not g.DRAPrioritizedList:
        ctx.report(cid, req, "gate", f"firstAvailable subrequest {req!r} used, but DRAPrioritizedList is off")
    if requests and not g.DRAConsumableCapacity:
        ctx.report(cid, req, "gate", "the request has capacity requests, but DRAConsumableCapacity is off")
    if (asks_admin(alt) or p.admin) and not g.DRAAdminAccess:
        ctx.report(cid, req, "gate", "admin access is used, but DRAAdminAccess is off")


def check_device_gates(ctx: Context, p: Placed, dev: Dev) -> None:
    """Gates of what the device uses: shared counters, bindingConditions."""
    g = ctx.gates
    cid, req = p.claim_id, p.result.request
    d = dev.device
    if d.consumes_counters and not g.DRAPartitionableDevices:
        ctx.report(
            cid,
            req,
            "gate",
            f"device {dev_id(dev.key)} consumes shared counters, but DRAPartitionableDevices is off",
        )
    if d.binding_conditions and not g.binding_and_status:
        ctx.report(
            cid,
            req,
            "gate",
            f"device {dev_id(dev.key)} has bindingConditions, but DRADeviceBindingConditions/"
            "DRAResourceClaimDeviceStatus is off",
        )
