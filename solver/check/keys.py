"""Keys and names: how the checker identifies devices, pools, claims and requests.

Why a module: every rule keys devices and pools the same way, names claims and devices
the same way in its messages, and compares attribute and capacity names in the same fully
qualified form; keeping these few definitions together keeps the rules consistent.
"""

from __future__ import annotations

from ..api.models import DeviceSubRequest, ExactDeviceRequest, ResourceClaim

DeviceKey = tuple[str, str, str]
"""(driver, pool, device): the identity of a device."""
PoolKey = tuple[str, str]
"""(driver, pool name)."""

Alt = ExactDeviceRequest | DeviceSubRequest
"""One search unit: a request without firstAvailable, or one of its subrequests."""


def claim_id(claim: ResourceClaim) -> str:
    return claim.namespaced_name


def dev_id(key: DeviceKey) -> str:
    return "/".join(key)


def fqn(name: str, driver: str) -> str:
    """A QualifiedName in full form: a bare name belongs to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"
