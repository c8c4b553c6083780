"""Fields whose feature gate is off: what the allocator does with them, said before it does.

Why (issue #29, "nothing ignored in silence"): with a gate off, the allocator treats a gated
field as absent, or the object carrying it as unusable — upstream does the same. Silently, a
claim with `derivedAttributes` under the default `DRADerivedAttributes=false` fails much later
as "matchAttribute numa cannot be satisfied", with nothing pointing at the gate. Every such
field is one row of `GATED` — the gate(s), the field, where it is, what happens — so a gate
the code learns about is one more row, not one more special case; `gated_warnings` turns the
rows into one warning per row (objects named, a few at most). Fields the allocator *refuses*
with their gate off (`firstAvailable`, capacity requests, `adminAccess`) are errors instead:
`validate.gate_problems`, as upstream refuses them. `SEMANTIC_GATES` are gates that change how
fields are read, not whether: nothing to warn about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields

from ..gates import FeatureGates
from .cluster import Cluster
from .models import (
    CLUSTER_SCOPED,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    TypeMeta,
)

SHOWN = 3
"""Objects a warning names; more are counted (`and 5 more`), so stderr stays short."""


@dataclass(frozen=True)
class GatedField:
    """One gated field: `what` is the sentence's subject and verb, `{objects}` the objects that
    set the field (`claim default/a`, `ResourceSlices s-1, s-2`)."""

    gates: tuple[str, ...]
    """The feature gate(s) it needs, all of them on."""
    field: str
    """The field as the API names it (docs and tests)."""
    where: str
    """The kind of object it is on."""
    what: str
    """`derivedAttributes of {objects} ignored`."""
    uses: Callable[[Cluster], Iterable[TypeMeta]]
    """The objects of the cluster that set the field, in input order."""

    def off(self, gates: FeatureGates) -> list[str]:
        return [g for g in self.gates if not getattr(gates, g)]


def _claims(cluster: Cluster) -> Iterator[ResourceClaim | ResourceClaimTemplate]:
    yield from cluster.claims.values()
    yield from cluster.templates.values()


def _requests(obj: ResourceClaim | ResourceClaimTemplate) -> Iterator[ExactDeviceRequest | DeviceSubRequest]:
    spec = obj.spec if isinstance(obj, ResourceClaim) else obj.spec.spec
    req: DeviceRequest
    for req in spec.devices.requests:
        if req.exactly is not None:
            yield req.exactly
        yield from req.first_available or []


def _claims_with(has: Callable[[ExactDeviceRequest | DeviceSubRequest], object]) -> Callable[[Cluster], list]:
    return lambda cluster: [c for c in _claims(cluster) if any(has(r) for r in _requests(c))]


def _slices_with(has: Callable[[ResourceSlice], object]) -> Callable[[Cluster], list]:
    return lambda cluster: [s for s in cluster.slices if has(s)]


def _list_attributes(s: ResourceSlice) -> bool:
    return any(
        a.ints is not None or a.bools is not None or a.strings is not None or a.versions is not None
        for d in s.spec.devices
        for a in d.attributes.values()
    )


GATED: tuple[GatedField, ...] = (
    GatedField(
        ("DRADerivedAttributes",),
        "derivedAttributes",
        "ResourceClaim, ResourceClaimTemplate",
        "derivedAttributes of {objects} ignored",
        _claims_with(lambda r: r.derived_attributes),
    ),
    GatedField(
        ("DRADeviceTaints",),
        "devices[].taints",
        "ResourceSlice",
        "device taints of {objects} ignored",
        _slices_with(lambda s: any(d.taints for d in s.spec.devices)),
    ),
    GatedField(
        ("DRADeviceTaints", "DRADeviceTaintRules"),
        "kind DeviceTaintRule",
        "DeviceTaintRule",
        "{objects} ignored",
        lambda cluster: list(cluster.taint_rules.values()),
    ),
    GatedField(
        ("DRADeviceTaints",),
        "tolerations",
        "ResourceClaim, ResourceClaimTemplate",
        "tolerations of {objects} ignored",
        _claims_with(lambda r: r.tolerations),
    ),
    GatedField(
        ("DRAConsumableCapacity",),
        "devices[].allowMultipleAllocations",
        "ResourceSlice",
        "allowMultipleAllocations of {objects} ignored (each device is allocated once)",
        _slices_with(lambda s: any(d.allow_multiple_allocations for d in s.spec.devices)),
    ),
    GatedField(
        ("DRAPartitionableDevices",),
        "sharedCounters",
        "ResourceSlice",
        "sharedCounters of {objects} ignored",
        _slices_with(lambda s: s.spec.shared_counters),
    ),
    GatedField(
        ("DRAPartitionableDevices",),
        "devices[].consumesCounters",
        "ResourceSlice",
        "devices with consumesCounters in {objects} not used",
        _slices_with(lambda s: any(d.consumes_counters for d in s.spec.devices)),
    ),
    GatedField(
        ("DRAPartitionableDevices",),
        "perDeviceNodeSelection",
        "ResourceSlice",
        "{objects} not used (perDeviceNodeSelection)",
        _slices_with(lambda s: s.spec.per_device_node_selection),
    ),
    GatedField(
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        "devices[].bindingConditions",
        "ResourceSlice",
        "devices with bindingConditions in {objects} not used",
        _slices_with(lambda s: any(d.binding_conditions for d in s.spec.devices)),
    ),
    GatedField(
        ("DRAOptionalNodePreparation",),
        "skipNodeOperations",
        "ResourceSlice",
        "devices of {objects} not used (skipNodeOperations)",
        _slices_with(lambda s: s.spec.skip_node_operations),
    ),
    GatedField(
        ("DRADeviceCompatibilityGroups",),
        "devices[].consumesCounters[].compatibilityGroups",
        "ResourceSlice",
        "{objects} not used (compatibilityGroups; their pools are incomplete)",
        _slices_with(lambda s: s.uses_compatibility_groups()),
    ),
    GatedField(
        ("DRAListTypeAttributes",),
        "devices[].attributes[].ints|bools|strings|versions",
        "ResourceSlice",
        "list-typed attributes of {objects} ignored by matchAttribute and distinctAttribute",
        _slices_with(_list_attributes),
    ),
    GatedField(
        ("DRAExtendedResource",),
        "extendedResourceName",
        "DeviceClass",
        "extendedResourceName of {objects} ignored (pods' extended resources are not served by devices)",
        lambda cluster: [c for c in cluster.classes.values() if c.spec.extended_resource_name],
    ),
    GatedField(
        ("DRANodeAllocatableResources",),
        "devices[].nodeAllocatableResources",
        "ResourceSlice",
        "nodeAllocatableResources of {objects} ignored (devices add nothing to pods' cpu and memory)",
        _slices_with(
            lambda s: any(
                d.node_allocatable_resources or d.node_allocatable_resource_mappings for d in s.spec.devices
            )
        ),
    ),
    GatedField(
        ("GenericWorkload",),
        "kind PodGroup",
        "PodGroup",
        "{objects} ignored (no gang scheduling)",
        lambda cluster: list(cluster.pod_groups.values()),
    ),
    GatedField(
        ("TopologyAwareWorkloadScheduling",),
        "schedulingConstraints.topology",
        "PodGroup",
        "schedulingConstraints.topology of {objects} ignored",
        lambda cluster: [
            g
            for g in cluster.pod_groups.values()
            if g.spec.scheduling_constraints is not None and g.spec.scheduling_constraints.topology
        ],
    ),
    GatedField(
        ("DRAWorkloadResourceClaims",),
        "resourceClaims",
        "PodGroup",
        "resourceClaims of {objects} not reserved for the PodGroup (each pod naming the claim is a consumer)",
        lambda cluster: [g for g in cluster.pod_groups.values() if g.spec.resource_claims],
    ),
)

REFUSED_GATES = frozenset({"DRAPrioritizedList", "DRAConsumableCapacity", "DRAAdminAccess"})
"""Gates whose fields are refused, not ignored, when off (`validate.gate_problems`)."""

SEMANTIC_GATES = frozenset({"DRAFractionalCapacityRange"})
"""Gates that change how a field is read (validRange rounding), never whether."""

_WORDS = {
    "ResourceClaim": ("claim", "claims"),
    "ResourceClaimTemplate": ("claim template", "claim templates"),
}


def _objects(objs: list[TypeMeta]) -> str:
    """`claim default/a`, `claims default/a, default/b and 3 more`; kinds in input order."""
    by_kind: dict[str, list[str]] = {}
    for obj in objs:
        name = obj.metadata.name if obj.kind in CLUSTER_SCOPED else obj.namespaced_name
        by_kind.setdefault(obj.kind, []).append(name)
    parts = []
    for kind, names in by_kind.items():
        one, many = _WORDS.get(kind, (kind, f"{kind}s"))
        shown = ", ".join(names[:SHOWN])
        more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
        parts.append(f"{one if len(names) == 1 else many} {shown}{more}")
    return " and ".join(parts)


def gated_warnings(cluster: Cluster, gates: FeatureGates) -> list[str]:
    """One warning per `GATED` row whose gate is off and whose field the cluster sets:
    `derivedAttributes of claim default/x ignored: feature gate DRADerivedAttributes is off
    (--feature-gates DRADerivedAttributes=true)`."""
    out = []
    for row in GATED:
        off = row.off(gates)
        if not off:
            continue
        objs = list(row.uses(cluster))
        if not objs:
            continue
        gate = f"feature gate {off[0]} is" if len(off) == 1 else f"feature gates {' and '.join(off)} are"
        flag = ",".join(f"{g}=true" for g in off)
        what = row.what.format(objects=_objects(objs))
        out.append(f"{what}: {gate} off (--feature-gates {flag})")
    return out


def gates_covered() -> set[str]:
    """Every gate the table, the refused fields or the semantic list speaks for (a test checks
    that this is every FeatureGates field: a new gate must say what it does to fields)."""
    return {g for row in GATED for g in row.gates} | REFUSED_GATES | SEMANTIC_GATES


def all_gates() -> set[str]:
    return {f.name for f in fields(FeatureGates)}


__all__ = ["GATED", "GatedField", "gated_warnings", "gates_covered", "all_gates"]
