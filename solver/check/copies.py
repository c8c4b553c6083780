"""Copies: what a result must carry over from its request and its device (`copies`).

Why a rule: the kubelet and the scheduler read these fields from the allocation result, not
from the request or the slice — a result without the request's tolerations looks, to the
eviction controller, like a pod that tolerates nothing, and one without the device's
bindingConditions is bound before the device is ready. Upstream's allocator copies:

- the request's (or subrequest's) `tolerations`, with DRADeviceTaints on, in order;
- the device's `bindingConditions` and `bindingFailureConditions`, with
  DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on (a device with binding
  conditions is a `gate` violation otherwise).
"""

from __future__ import annotations

from ..api.models import DeviceToleration
from .context import Context
from .keys import Alt, dev_id
from .pools import Dev
from .results import Placed


def check_copies(ctx: Context, p: Placed, alt: Alt, dev: Dev) -> None:
    """The result's tolerations are the request's, its binding conditions the device's."""
    r = p.result
    if ctx.gates.DRADeviceTaints:
        want = list(alt.tolerations)
        have = list(r.tolerations or [])
        if have != want:
            ctx.report(
                p.claim_id,
                r.request,
                "copies",
                f"device {dev_id(dev.key)}: result tolerations {_show(have)} "
                f"are not the request's {_show(want)}",
            )
    if ctx.gates.binding_and_status:
        for field, want_list, have_list in (
            ("bindingConditions", dev.device.binding_conditions, r.binding_conditions),
            ("bindingFailureConditions", dev.device.binding_failure_conditions, r.binding_failure_conditions),
        ):
            if list(have_list or []) != list(want_list):
                ctx.report(
                    p.claim_id,
                    r.request,
                    "copies",
                    f"device {dev_id(dev.key)}: result {field} {list(have_list or [])} "
                    f"are not the device's {list(want_list)}",
                )


def _show(tolerations: list[DeviceToleration]) -> str:
    if not tolerations:
        return "[]"
    return (
        "["
        + ", ".join(f"{t.key or '*'}:{t.operator or 'Equal'}:{t.effect or '*'}" for t in tolerations)
        + "]"
    )
