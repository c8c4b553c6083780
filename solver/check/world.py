"""World: how one check call reads the cluster — what the node sees and what is in use.

Why a module: the rules ask the same few questions of the input snapshot (is this device
visible, would it be visible with partitionable devices on, who already holds it, how
much of it is consumed, may it be shared); `World` answers them once per call, from
the visible inventory (`pools`) and the claims that were allocated before this call.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from ..api.cluster import Cluster
from ..api.models import Device, DeviceRequestAllocationResult, ResourceClaim
from ..gates import FeatureGates
from .amounts import frac
from .keys import DeviceKey, claim_id, fqn
from .pools import Inventory, gather

Holder = tuple[str, DeviceRequestAllocationResult]
"""An existing result with the `namespace/name` of the claim it belongs to."""


class World:
    """The inventory visible from the node and the results of already allocated claims."""

    def __init__(
        self, cluster: Cluster, allocated: list[ResourceClaim], node: str | None, gates: FeatureGates
    ):
        self.cluster = cluster
        self.node = node
        self.gates = gates
        self.inv = gather(cluster, node, gates.DRAPartitionableDevices, gates.DRADeviceCompatibilityGroups)
        self._gate_on_inv: Inventory | None = None
        new_ids = {claim_id(c) for c in allocated}
        self.existing: list[Holder] = [
            (claim_id(c), r)
            for c in cluster.allocated_claims()
            if claim_id(c) not in new_ids and c.status is not None and c.status.allocation is not None
            for r in c.status.allocation.devices.results
        ]
        """Results of the cluster's allocated claims, except those being checked."""
        self.existing_by_dev: dict[DeviceKey, list[Holder]] = defaultdict(list)
        for c, r in self.existing:
            self.existing_by_dev[(r.driver, r.pool, r.device)].append((c, r))

    def multi(self, device: Device) -> bool:
        """Multi-allocatable: allowMultipleAllocations with DRAConsumableCapacity on."""
        return bool(device.allow_multiple_allocations) and self.gates.DRAConsumableCapacity

    def gate_on_inventory(self) -> Inventory:
        """The inventory as it would be with DRAPartitionableDevices on (built on first use)."""
        if self._gate_on_inv is None:
            self._gate_on_inv = gather(self.cluster, self.node, True, self.gates.DRADeviceCompatibilityGroups)
        return self._gate_on_inv

    def existing_on(self, key: DeviceKey) -> list[Holder]:
        return self.existing_by_dev.get(key, [])

    def existing_use(self, key: DeviceKey, driver: str) -> dict[str, Fraction]:
        """Capacity (full name) consumed on a device by existing non-admin results."""
        used: dict[str, Fraction] = defaultdict(Fraction)
        for _, r in self.existing_on(key):
            if r.admin_access:
                continue
            for name, q in (r.consumed_capacity or {}).items():
                used[fqn(name, driver)] += frac(q)
        return used
