"""Feature gates: explicit inputs with the upstream defaults of one Kubernetes version.

Why a module of its own: every layer (precompute, allocators, checker) must agree on
which semantics are active, so gates travel as one immutable value instead of flags.
Why versions: a plan answers for one cluster, and a 1.36 cluster and a 1.37 cluster differ in
which gates exist and what they default to (`VERSIONS`, `--kubernetes-version`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from .errors import InputError

# Upstream defaults as of Kubernetes v1.37 (beta gates on, alpha gates off), the default version.
DEFAULTS: dict[str, bool] = {
    "DRAAdminAccess": True,
    "DRAPrioritizedList": True,
    "DRAPartitionableDevices": True,
    "DRADeviceTaints": True,
    "DRADeviceTaintRules": True,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRAResourceClaimDeviceStatus": True,
    "DRADerivedAttributes": False,
    "DRAOptionalNodePreparation": False,
    "DRAListTypeAttributes": False,
    "DRAExtendedResource": True,
    "DRAFractionalCapacityRange": False,
    "DRANodeAllocatableResources": False,
    "DRADeviceCompatibilityGroups": False,
    "GenericWorkload": True,
    "TopologyAwareWorkloadScheduling": True,
    "DRAWorkloadResourceClaims": True,
}

DEFAULT_VERSION = "1.37"
VERSIONS: dict[str, dict[str, bool]] = {
    "1.37": DEFAULTS,
    "1.36": {**DEFAULTS, "DRADeviceTaintRules": False},
}
"""Kubernetes version -> its default gates (upstream's `defaultVersionedKubernetesFeatureGates`,
docs/semantics.md "Feature gates"). Of the gates dra-solver models only DRADeviceTaintRules
changes its default (beta and off in 1.36, GA and on in 1.37); the others differ in whether
they exist (`NOT_IN`)."""

NOT_IN: dict[str, frozenset[str]] = {
    "1.36": frozenset(
        {
            "DRADerivedAttributes",
            "DRAOptionalNodePreparation",
            "DRAFractionalCapacityRange",
            "DRADeviceCompatibilityGroups",
        }
    ),
    "1.37": frozenset(),
}
"""Gates a version does not have: turning one on for that version is an error (a 1.36
kube-scheduler refuses an unknown gate), turning it off is what that version does anyway."""


@dataclass(frozen=True)
class FeatureGates:
    """The DRA feature gates that change what the allocator decides."""

    DRAAdminAccess: bool = DEFAULTS["DRAAdminAccess"]
    DRAPrioritizedList: bool = DEFAULTS["DRAPrioritizedList"]
    DRAPartitionableDevices: bool = DEFAULTS["DRAPartitionableDevices"]
    DRADeviceTaints: bool = DEFAULTS["DRADeviceTaints"]
    DRADeviceTaintRules: bool = DEFAULTS["DRADeviceTaintRules"]
    """KEP-5055 DeviceTaintRule objects (GA, on, in 1.37; an off-by-default beta API in 1.36):
    off, the rules' taints are not applied (they also need DRADeviceTaints)."""
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
    DRANodeAllocatableResources: bool = DEFAULTS["DRANodeAllocatableResources"]
    """KEP-5517 (alpha, off, in 1.36 and 1.37): a device's `nodeAllocatableResources` add to
    the node cpu/memory/hugepages of the pod it is allocated to (`problem.nodealloc`)."""
    DRADeviceCompatibilityGroups: bool = DEFAULTS["DRADeviceCompatibilityGroups"]
    """KEP-5963 (alpha, off, new in 1.37): devices drawing from one counter set may be
    allocated together only when their `compatibilityGroups` intersect (docs/semantics.md,
    "Device compatibility groups (KEP-5963)"); off, slices that declare groups are ignored."""
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
    def of(
        cls, value: FeatureGates | Mapping[str, bool] | str | None, version: str | None = None
    ) -> FeatureGates:
        """Build gates from None (defaults), a mapping, or `Name=true,Other=false`, over the
        defaults of Kubernetes `version` (None: `DEFAULT_VERSION`)."""
        if isinstance(value, FeatureGates):
            return value
        ver = version_defaults(version)
        if value is None:
            return cls(**ver)
        if isinstance(value, str):
            value = _parse_gate_string(value)
        value = {ALIASES.get(k, k): v for k, v in value.items()}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise InputError(
                f"unknown feature gate(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
                obj="feature gates",
            )
        absent = sorted(k for k, v in value.items() if v and k in NOT_IN[version or DEFAULT_VERSION])
        if absent:
            raise InputError(
                f"feature gate(s) {', '.join(absent)} do not exist in Kubernetes {version}",
                obj="feature gates",
            )
        return cls(**{**ver, **{k: bool(v) for k, v in value.items()}})


ALIASES: dict[str, str] = {"DRAOptionalNodeOperations": "DRAOptionalNodePreparation"}
"""Upstream's names for gates dra-solver names after a KEP draft: KEP-5945 was merged as
DRAOptionalNodeOperations (docs/semantics.md, "KEP-5945 as merged upstream")."""


def version_defaults(version: str | None) -> dict[str, bool]:
    """The default gates of a Kubernetes version ("1.36", "1.37"); an InputError for others."""
    key = version or DEFAULT_VERSION
    if key not in VERSIONS:
        raise InputError(
            f"Kubernetes version {key!r} is not known; known: {', '.join(sorted(VERSIONS))}",
            obj="--kubernetes-version",
        )
    return dict(VERSIONS[key])


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
