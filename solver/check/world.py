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
from .keys import DeviceKey, PoolKey, claim_id, fqn
from .pools import Inventory, Readable, gather, readable

Holder = tuple[str, DeviceRequestAllocationResult]
"""An existing result with the `namespace/name` of the claim it belongs to."""


class Reading:
    """What every node's check reads alike from one cluster, read once: each allocated claim's
    results by device and by pool, and the readable slices per gate setting.

    Why apart from `World`: an audit (`check_cluster`) checks each node's claims against the
    same cluster, and a World that re-read every allocated claim and every slice per node made
    the audit nodes x (claims + slices) (1,000 nodes, 4,000 claims: minutes); one reading is
    shared instead, and each World leaves out the claims it checks when it is asked."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.by_dev: dict[DeviceKey, list[Holder]] = defaultdict(list)
        self.by_pool: dict[PoolKey, list[Holder]] = defaultdict(list)
        for c in cluster.allocated_claims():
            assert c.status is not None and c.status.allocation is not None
            cid = claim_id(c)
            for r in c.status.allocation.devices.results:
                self.by_dev[(r.driver, r.pool, r.device)].append((cid, r))
                self.by_pool[(r.driver, r.pool)].append((cid, r))
        self._slices: dict[tuple[bool, bool], Readable] = {}

    def slices(self, partitionable: bool, compat_groups: bool) -> Readable:
        """`pools.readable` under these gates, made on first use."""
        key = (partitionable, compat_groups)
        if key not in self._slices:
            self._slices[key] = readable(self.cluster, partitionable, compat_groups)
        return self._slices[key]


class World:
    """The inventory visible from the node and the results of already allocated claims."""

    def __init__(
        self,
        cluster: Cluster,
        allocated: list[ResourceClaim],
        node: str | None,
        gates: FeatureGates,
        reading: Reading | None = None,
    ):
        self.cluster = cluster
        self.node = node
        self.gates = gates
        self._read = reading if reading is not None else Reading(cluster)
        partitionable, compat = gates.DRAPartitionableDevices, gates.DRADeviceCompatibilityGroups
        self.inv = gather(cluster, node, partitionable, compat, self._read.slices(partitionable, compat))
        self._gate_on_inv: Inventory | None = None
        self._new_ids = {claim_id(c) for c in allocated}
        """The claims being checked: not among the existing results."""

    def multi(self, device: Device) -> bool:
        """Multi-allocatable: allowMultipleAllocations with DRAConsumableCapacity on."""
        return bool(device.allow_multiple_allocations) and self.gates.DRAConsumableCapacity

    def gate_on_inventory(self) -> Inventory:
        """The inventory as it would be with DRAPartitionableDevices on (built on first use)."""
        if self._gate_on_inv is None:
            compat = self.gates.DRADeviceCompatibilityGroups
            self._gate_on_inv = gather(self.cluster, self.node, True, compat, self._read.slices(True, compat))
        return self._gate_on_inv

    def existing_on(self, key: DeviceKey) -> list[Holder]:
        """The results of the cluster's allocated claims, except those being checked, on `key`."""
        new = self._new_ids
        return [h for h in self._read.by_dev.get(key, ()) if h[0] not in new]

    def existing_in(self, pool: PoolKey) -> list[Holder]:
        """The same in `pool`."""
        new = self._new_ids
        return [h for h in self._read.by_pool.get(pool, ()) if h[0] not in new]

    def existing_use(self, key: DeviceKey, driver: str) -> dict[str, Fraction]:
        """Capacity (full name) consumed on a device by existing non-admin results."""
        used: dict[str, Fraction] = defaultdict(Fraction)
        for _, r in self.existing_on(key):
            if r.admin_access:
                continue
            for name, q in (r.consumed_capacity or {}).items():
                used[fqn(name, driver)] += frac(q)
        return used
