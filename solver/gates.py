"""Feature gates: explicit inputs with the upstream v1.36 defaults.

Why a module of its own: every layer (precompute, allocators, checker) must agree on
which semantics are active, so gates travel as one immutable value instead of flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from .errors import InputError

# Upstream defaults as of Kubernetes v1.36 (beta gates on, alpha gates off).
DEFAULTS: dict[str, bool] = {
    "DRAAdminAccess": True,
    "DRAPrioritizedList": True,
    "DRAPartitionableDevices": True,
    "DRADeviceTaints": True,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRAResourceClaimDeviceStatus": True,
    "DRADerivedAttributes": False,
    "DRAOptionalNodePreparation": False,
    "DRAListTypeAttributes": False,
    "DRAExtendedResource": True,
    "DRAFractionalCapacityRange": False,
    "GenericWorkload": True,
    "TopologyAwareWorkloadScheduling": True,
    "DRAWorkloadResourceClaims": True,
}


@dataclass(frozen=True)
class FeatureGates:
    """The DRA feature gates that change what the allocator decides."""

    DRAAdminAccess: bool = DEFAULTS["DRAAdminAccess"]
    DRAPrioritizedList: bool = DEFAULTS["DRAPrioritizedList"]
    DRAPartitionableDevices: bool = DEFAULTS["DRAPartitionableDevices"]
    DRADeviceTaints: bool = DEFAULTS["DRADeviceTaints"]
    DRAConsumableCapacity: bool = DEFAULTS["DRAConsumableCapacity"]
    DRADeviceBindingConditions: bool = DEFAULTS["DRADeviceBindingConditions"]
    DRAResourceClaimDeviceStatus: bool = DEFAULTS["DRAResourceClaimDeviceStatus"]
    DRADerivedAttributes: bool = DEFAULTS["DRADerivedAttributes"]
    DRAOptionalNodePreparation: bool = DEFAULTS["DRAOptionalNodePreparation"]
    DRAListTypeAttributes: bool = DEFAULTS["DRAListTypeAttributes"]
    DRAExtendedResource: bool = DEFAULTS["DRAExtendedResource"]
    """KEP-5004: a pod's extended-resource requests served by DRA devices (beta, on in 1.36)."""
    DRAFractionalCapacityRange: bool = DEFAULTS["DRAFractionalCapacityRange"]
    """KEP-5075 follow-up (1.37; absent in 1.36, hence off): validRange steps round in
    milli-units when the range is fractional, instead of integers (`problem.capacity`)."""
    GenericWorkload: bool = DEFAULTS["GenericWorkload"]
    """KEP-4671 PodGroups and gang scheduling. Upstream's default is off (alpha), but a
    PodGroup object exists only where the gate is on, so its presence in the input is
    what turns gang semantics on here; `GenericWorkload=false` ignores the PodGroups."""
    TopologyAwareWorkloadScheduling: bool = DEFAULTS["TopologyAwareWorkloadScheduling"]
    """KEP-5732: a gang's `spec.schedulingConstraints.topology` puts its pods on nodes with one
    value of a node label. Upstream: alpha, off, in 1.36 and still alpha (off) in the 1.37
    kube_features.go (the KEP targets beta in 1.37). As for GenericWorkload, the field can only
    be set where the gate is on, so its presence turns it on here; `=false` ignores it (the
    scheduler with the gate off places the gang without placements)."""
    DRAWorkloadResourceClaims: bool = DEFAULTS["DRAWorkloadResourceClaims"]
    """KEP-5729: a PodGroup's `spec.resourceClaims` — one claim for the whole group, reserved
    for the PodGroup. Upstream: alpha (off) in 1.36, beta in 1.37. The field exists only
    where the gate is on, so its presence turns it on here; `=false` treats the claim as one
    shared by the pods that name it (reservedFor names the pods)."""

    @property
    def binding_and_status(self) -> bool:
        """Upstream's DeviceBindingAndStatus allocator feature needs both gates."""
        return self.DRADeviceBindingConditions and self.DRAResourceClaimDeviceStatus

    @classmethod
    def of(cls, value: FeatureGates | Mapping[str, bool] | str | None) -> FeatureGates:
        """Build gates from None (defaults), a mapping, or `Name=true,Other=false`."""
        if value is None:
            return cls()
        if isinstance(value, FeatureGates):
            return value
        if isinstance(value, str):
            value = _parse_gate_string(value)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise InputError(
                f"unknown feature gate(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
                obj="feature gates",
            )
        return cls(**{k: bool(v) for k, v in value.items()})


def _parse_gate_string(text: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, raw = part.partition("=")
        if not sep or raw.strip().lower() not in ("true", "false"):
            raise InputError(
                f"feature gate {part!r} must look like Name=true or Name=false", obj="feature gates"
            )
        out[name.strip()] = raw.strip().lower() == "true"
    return out
