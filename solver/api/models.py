"""Pydantic v2 models of the resource.k8s.io/v1 objects dra-solver reads and writes.

Why pydantic stays here, at the edge: parsing and field typing happen once; everything
below `solver.problem` works on plain data. Every model keeps unknown fields
(`extra="allow"`) and dumps only what was set, so loading then dumping an object loses
nothing (round trip). Field names are snake_case in Python and camelCase on the wire.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from dra_solver.api.quantity import Quantity


class K8sModel(BaseModel):
    """Common config: camelCase aliases, unknown fields kept, partial objects allowed."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        validate_assignment=False,
    )

    def dump(self) -> dict[str, Any]:
        """The object as Kubernetes prints it: camelCase, only fields that were set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- metadata and node selection --------------------------------------------------------


class ObjectMeta(K8sModel):
    name: str = ""
    namespace: str | None = None
    generate_name: str | None = None
    uid: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class NodeSelectorRequirement(K8sModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class NodeSelectorTerm(K8sModel):
    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(K8sModel):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


# --- ResourceSlice ------------------------------------------------------------------------


class DeviceAttribute(K8sModel):
    """Exactly one of the typed values; list forms are KEP-5491."""

    int_: StrictInt | None = Field(default=None, alias="int")
    bool_: StrictBool | None = Field(default=None, alias="bool")
    string: StrictStr | None = None
    version: StrictStr | None = None
    ints: list[StrictInt] | None = None
    bools: list[StrictBool] | None = None
    strings: list[StrictStr] | None = None
    versions: list[StrictStr] | None = None

    def set_fields(self) -> list[str]:
        """Names (wire form) of the value fields that are set."""
        names = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
        values = (
            self.int_,
            self.bool_,
            self.string,
            self.version,
            self.ints,
            self.bools,
            self.strings,
            self.versions,
        )
        return [n for n, v in zip(names, values, strict=True) if v is not None]


class CapacityRequestPolicyRange(K8sModel):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(K8sModel):
    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(K8sModel):
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


class Counter(K8sModel):
    value: Quantity


class CounterSet(K8sModel):
    name: str
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceCounterConsumption(K8sModel):
    counter_set: str
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceTaint(K8sModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class Device(K8sModel):
    name: str
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    allow_multiple_allocations: bool | None = None
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = Field(default_factory=list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = Field(default_factory=list)
    binding_failure_conditions: list[str] = Field(default_factory=list)


class ResourcePool(K8sModel):
    name: str
    generation: int = 0
    resource_slice_count: int = 1


class ResourceSliceSpec(K8sModel):
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = Field(default_factory=list)
    shared_counters: list[CounterSet] = Field(default_factory=list)
    skip_node_operations: bool | None = None


class TypeMeta(K8sModel):
    api_version: str = "resource.k8s.io/v1"
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def ref(self) -> str:
        """`Kind namespace/name` (or `Kind name` when cluster-scoped), for messages."""
        ns = f"{self.metadata.namespace}/" if self.metadata.namespace else ""
        return f"{self.kind} {ns}{self.metadata.name}"


class ResourceSlice(TypeMeta):
    kind: Literal["ResourceSlice"] = "ResourceSlice"
    spec: ResourceSliceSpec


# --- DeviceClass -------------------------------------------------------------------------


class CELDeviceSelector(K8sModel):
    expression: str


class DeviceSelector(K8sModel):
    cel: CELDeviceSelector | None = None


class DeviceClassSpec(K8sModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[dict[str, Any]] = Field(default_factory=list)
    extended_resource_name: str | None = None


class DeviceClass(TypeMeta):
    kind: Literal["DeviceClass"] = "DeviceClass"
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)


# --- ResourceClaim -----------------------------------------------------------------------


class DeviceToleration(K8sModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class CapacityRequirements(K8sModel):
    requests: dict[str, Quantity] = Field(default_factory=dict)


class DerivedAttribute(K8sModel):
    """KEP-6080: a per-request CEL expression that yields a virtual attribute."""

    name: str
    expression: str


class DeviceSubRequest(K8sModel):
    name: str
    device_class_name: str = ""
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DerivedAttribute] = Field(default_factory=list)


class ExactDeviceRequest(K8sModel):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = Field(default_factory=list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DerivedAttribute] = Field(default_factory=list)


class DeviceRequest(K8sModel):
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = None


class DeviceConstraint(K8sModel):
    requests: list[str] = Field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(K8sModel):
    requests: list[str] = Field(default_factory=list)


class DeviceClaim(K8sModel):
    requests: list[DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)


class ResourceClaimSpec(K8sModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(K8sModel):
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] | None = None
    share_id: str | None = Field(default=None, alias="shareID")
    consumed_capacity: dict[str, Quantity] | None = None
    skip_node_operations: bool | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None


class DeviceAllocationConfiguration(K8sModel):
    source: str
    requests: list[str] = Field(default_factory=list)


class DeviceAllocationResult(K8sModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=list)


class AllocationResult(K8sModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(K8sModel):
    resource: str = ""
    name: str = ""
    uid: str = ""


class ResourceClaimStatus(K8sModel):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=list)
    devices: list[dict[str, Any]] = Field(default_factory=list)


class ResourceClaim(TypeMeta):
    kind: Literal["ResourceClaim"] = "ResourceClaim"
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class ResourceClaimTemplateSpec(K8sModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(TypeMeta):
    kind: Literal["ResourceClaimTemplate"] = "ResourceClaimTemplate"
    spec: ResourceClaimTemplateSpec = Field(default_factory=ResourceClaimTemplateSpec)


# --- core/v1: only what allocation needs ----------------------------------------------------


class PodResourceClaim(K8sModel):
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSpec(K8sModel):
    node_name: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    resource_claims: list[PodResourceClaim] = Field(default_factory=list)


class Pod(TypeMeta):
    api_version: str = "v1"
    kind: Literal["Pod"] = "Pod"
    spec: PodSpec = Field(default_factory=PodSpec)


class NodeStatus(K8sModel):
    declared_features: list[str] = Field(default_factory=list)


class Node(TypeMeta):
    api_version: str = "v1"
    kind: Literal["Node"] = "Node"
    status: NodeStatus = Field(default_factory=NodeStatus)


KINDS: dict[str, type[TypeMeta]] = {
    m.model_fields["kind"].default: m
    for m in (ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate, Pod, Node)
}
