"""Pydantic v2 models of the resource.k8s.io/v1 objects dra-solver reads and writes.

Why pydantic stays here, at the edge: parsing and field typing happen once; everything
below `solver.problem` works on plain data. Field names are snake_case in Python and
camelCase on the wire; models dump only what was set (round trip).

Strictness (GitHub issue #9): a misspelt field (`cuont: 4`, `selector:`) silently ignored
gives a wrong allocation, so every resource.k8s.io model forbids unknown fields, the way
`kubectl apply --validate=strict` does (`solver.api.strict` words the error). Fields that
are real Kubernetes API but not interpreted here are declared loosely (`Any`) so they are
accepted and carried: ObjectMeta bookkeeping, opaque config `parameters`, claim
`status.devices`. Pods and Nodes are the opposite case: dra-solver reads a few of their
fields (typed and strict, models marked `_Loose`) and carries everything else untouched.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from ..reasons import Reason
from .quantity import Quantity


class K8sModel(BaseModel):
    """Common config: camelCase aliases, unknown fields are errors, partial objects allowed."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
    )

    def dump(self) -> dict[str, Any]:
        """The object as Kubernetes prints it: camelCase, only fields that were set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- metadata and node selection --------------------------------------------------------


class _Loose(K8sModel):
    """A core/v1 object part of which dra-solver does not interpret: unknown fields are
    kept and dumped back unchanged; only the declared (interpreted) fields are typed."""

    model_config = ConfigDict(extra="allow")


class OwnerReference(K8sModel):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8sModel):
    """Every field of metav1.ObjectMeta: the ones dra-solver reads are typed, the
    bookkeeping ones (resourceVersion, managedFields, ...) are accepted as they are."""

    name: str = ""
    namespace: str | None = None
    generate_name: str | None = None
    uid: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    self_link: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Any = None
    deletion_timestamp: Any = None
    deletion_grace_period_seconds: int | None = None
    finalizers: list[str] = Field(default_factory=list)
    managed_fields: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def ns(self) -> str:
        """The namespace, `default` when unset — as the API server defaults it on create, and
        as dra-solver keys and names namespaced objects (`TypeMeta.key`)."""
        return self.namespace or "default"


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
        """Names (wire form) of the value fields that are set (in the order of the fields)."""
        d = self.__dict__
        return [wire for wire, name in _ATTRIBUTE_VALUE_FIELDS if d.get(name) is not None]


_ATTRIBUTE_VALUE_FIELDS = (
    ("int", "int_"),
    ("bool", "bool_"),
    ("string", "string"),
    ("version", "version"),
    ("ints", "ints"),
    ("bools", "bools"),
    ("strings", "strings"),
    ("versions", "versions"),
)
"""(wire name, Python name) of `DeviceAttribute`'s value fields."""


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
    compatibility_groups: list[str] | None = None
    """KEP-5963 (DRADeviceCompatibilityGroups): the device's groups on this counter set."""


class DeviceTaint(K8sModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class NodeAllocatableMapping(K8sModel):
    """The device *is* node resource: `deviceMultiplier` per allocated device, or
    `capacityMultiplier` times the consumed capacity `capacityKey`."""

    capacity_key: str | None = None
    capacity_multiplier: Quantity | None = None
    device_multiplier: Quantity | None = None


class NodeAllocatableOverhead(K8sModel):
    """Node resource a device costs besides itself: once per pod, and once per container that
    references the claim."""

    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResource(K8sModel):
    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


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
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(default_factory=dict)
    """KEP-5517 (1.37 shape, gate DRANodeAllocatableResources): node resources (cpu, memory,
    hugepages-*) the pod this device is allocated to also takes (`problem.nodealloc`)."""
    node_allocatable_resource_mappings: dict[str, dict[str, Any]] | None = None
    """KEP-5517's 1.36 alpha shape, which 1.37 dropped for `nodeAllocatableResources`: read,
    refused when the gate is on (`problem.nodealloc`), ignored with a warning when off."""


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
    skip_node_operations: bool | list[str] | None = None
    """KEP-5945: the draft's boolean, or (as merged in 1.37) the list of node operations the
    devices do not need; either way a true value or a non-empty list marks the slice."""


class TypeMeta(K8sModel):
    api_version: str = "resource.k8s.io/v1"
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    # The apiVersion the object was written in when the loader converted it to v1
    # (`resource.k8s.io/v1beta1`), so that messages can name what the user wrote.
    _converted_from: str | None = PrivateAttr(default=None)

    @property
    def ref(self) -> str:
        """`Kind namespace/name` (or `Kind name` when cluster-scoped), for messages."""
        ns = f"{self.metadata.namespace}/" if self.metadata.namespace else ""
        return f"{self.kind} {ns}{self.metadata.name}"

    @property
    def namespaced_name(self) -> str:
        """`namespace/name`, namespace `default` when unset: how pods and claims are named in
        plans, reasons and reservations (for namespaced kinds)."""
        return f"{self.metadata.ns}/{self.metadata.name}"

    @property
    def key(self) -> tuple[str, str]:
        """(namespace, name), namespace `default` when unset: how `Cluster` keys namespaced
        objects — the one definition every module uses."""
        return (self.metadata.ns, self.metadata.name)

    @property
    def converted_from(self) -> str | None:
        return self._converted_from


class ResourceSlice(TypeMeta):
    kind: Literal["ResourceSlice"] = "ResourceSlice"
    spec: ResourceSliceSpec
    # Set by `planning.triage` on the device-free stand-in of a slice it left out for a problem
    # (the problem, a fact: `Kind.SLICE_NOT_VALID`, `SLICE_UNREAD`, or `SLICE_WITH_POOL` for a
    # slice left out with its pool): its pool is then invalid wherever the slice would be seen
    # (`inventory.gather_pools`), so the pods it would have served name it. Never written out.
    _left_out: Reason | None = PrivateAttr(default=None)

    @property
    def left_out(self) -> Reason | None:
        """Why this is a left-out slice's stand-in (`planning.triage`), or None for a slice of
        the input."""
        return self._left_out

    def uses_compatibility_groups(self) -> bool:
        """Some device declares KEP-5963 compatibilityGroups (an empty list declares none):
        with DRADeviceCompatibilityGroups off upstream ignores the whole slice."""
        return any(use.compatibility_groups for d in self.spec.devices for use in d.consumes_counters)


# --- DeviceClass -------------------------------------------------------------------------


class CELDeviceSelector(K8sModel):
    expression: str


class DeviceSelector(K8sModel):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(K8sModel):
    """Driver configuration: `parameters` is free-form (the driver's own schema)."""

    driver: str = ""
    parameters: Any = None


class DeviceClassConfiguration(K8sModel):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(K8sModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[DeviceClassConfiguration] = Field(default_factory=list)
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
    opaque: OpaqueDeviceConfiguration | None = None


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
    skip_node_operations: bool | list[str] | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None


class DeviceAllocationConfiguration(K8sModel):
    source: str
    requests: list[str] = Field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(K8sModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=list)


class AllocationResult(K8sModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(K8sModel):
    api_group: str | None = None
    resource: str = ""
    name: str = ""
    uid: str = ""


class ResourceClaimStatus(K8sModel):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=list)
    # AllocatedDeviceStatus entries (conditions, data, networkData) written by drivers:
    # accepted and carried, not interpreted.
    devices: list[dict[str, Any]] = Field(default_factory=list)


class ResourceClaim(TypeMeta):
    kind: Literal["ResourceClaim"] = "ResourceClaim"
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None

    # Set on the stand-in of an allocated claim that could not be read (`planning.triage`):
    # only its status is read, so that the devices it holds stay in use. Never written out,
    # never checked (its spec is unknown).
    _unread: bool = PrivateAttr(default=False)

    @property
    def unread(self) -> bool:
        """Whether this is an unreadable allocated claim's stand-in (`planning.triage`)."""
        return self._unread


class ResourceClaimTemplateSpec(K8sModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(TypeMeta):
    kind: Literal["ResourceClaimTemplate"] = "ResourceClaimTemplate"
    spec: ResourceClaimTemplateSpec = Field(default_factory=ResourceClaimTemplateSpec)


# --- DeviceTaintRule (resource.k8s.io/v1beta2, v1, v1alpha3) -----------------------------


class DeviceTaintSelector(K8sModel):
    """Which devices a rule taints. v1beta2 has driver, pool, device; v1alpha3 also had
    deviceClassName and CEL selectors, kept here so a converted v1alpha3 rule means what
    it meant (the loader rejects them in a v1beta2 object)."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class_name: str | None = None
    selectors: list[DeviceSelector] | None = None


class DeviceTaintRuleSpec(K8sModel):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint


class DeviceTaintRuleStatus(K8sModel):
    conditions: list[dict[str, Any]] = Field(default_factory=list)


class DeviceTaintRule(TypeMeta):
    """One internal shape for both served versions; dumped as resource.k8s.io/v1beta2."""

    api_version: str = "resource.k8s.io/v1beta2"
    kind: Literal["DeviceTaintRule"] = "DeviceTaintRule"
    spec: DeviceTaintRuleSpec
    status: DeviceTaintRuleStatus | None = None


# --- scheduling.k8s.io/v1 -----------------------------------------------------------------


class PriorityClass(TypeMeta):
    """Pod priority by name (`spec.priorityClassName`); no spec, the fields are top level."""

    api_version: str = "scheduling.k8s.io/v1"
    kind: Literal["PriorityClass"] = "PriorityClass"
    value: StrictInt
    global_default: bool | None = None
    preemption_policy: str | None = None
    description: str | None = None


class GangSchedulingPolicy(K8sModel):
    """All or nothing: at least `minCount` pods of the group are placed, or none."""

    min_count: StrictInt


class PodGroupSchedulingPolicy(K8sModel):
    """Exactly one of `basic` (pods scheduled one by one, as without a group) and `gang`."""

    basic: dict[str, Any] | None = None
    gang: GangSchedulingPolicy | None = None


class TopologyConstraint(K8sModel):
    key: str


class PodGroupSchedulingConstraints(K8sModel):
    """KEP-5732 (gate TopologyAwareWorkloadScheduling): the group's pods on nodes with one value
    of the node label `topology[0].key` (`planning.gangs.resolve_gangs`, `encoders.gangs`)."""

    topology: list[TopologyConstraint] = Field(default_factory=list)


class PodGroupResourceClaim(K8sModel):
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class WorkloadReference(K8sModel):
    """v1beta1 `spec.workloadRef` (v1alpha2 `spec.podGroupTemplateRef.workload`, converted):
    the Workload and its template the PodGroup was created from."""

    workload_name: str = ""
    template_name: str = ""


class PodGroupPolicyFields(K8sModel):
    """What a PodGroup's spec and a Workload's template both carry: the controller copies the
    one into the other when it creates the PodGroup."""

    scheduling_policy: PodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] = Field(default_factory=list)
    """Group-level claims (gate DRAWorkloadResourceClaims): by name or from a template, one
    claim for the group, reserved for the PodGroup (`PodGroup.claim_entry`)."""
    disruption_mode: dict[str, Any] | None = None
    priority_class_name: str | None = None
    priority: StrictInt | None = None
    preemption_policy: str | None = None


class PodGroupSpec(PodGroupPolicyFields):
    parent_composite_pod_group_name: str | None = None
    """v1beta1, gate CompositePodGroup: not modelled (`planning.gangs.resolve_gangs` refuses it)."""
    workload_ref: WorkloadReference | None = None


class PodGroupResourceClaimStatus(K8sModel):
    """The name of the claim generated from a group-level template entry (`name`)."""

    name: str
    resource_claim_name: str | None = None


class PodGroupStatus(K8sModel):
    conditions: list[dict[str, Any]] = Field(default_factory=list)
    resource_claim_statuses: list[PodGroupResourceClaimStatus] = Field(default_factory=list)


class PodGroup(TypeMeta):
    """KEP-4671 (gate GenericWorkload): pods naming it in `spec.schedulingGroup.podGroupName`
    are scheduled by its policy; `gang.minCount` makes them all-or-nothing. The policy is the
    PodGroup's own copy (a controller copies it from its Workload's template); the scheduler
    never reads the Workload."""

    api_version: str = "scheduling.k8s.io/v1beta1"
    kind: Literal["PodGroup"] = "PodGroup"
    spec: PodGroupSpec
    status: PodGroupStatus | None = None

    @property
    def min_count(self) -> int | None:
        """The gang's minCount; None for the basic policy (no all-or-nothing)."""
        gang = self.spec.scheduling_policy.gang
        return gang.min_count if gang is not None else None

    def claim_entry(self, entry: PodResourceClaim) -> PodGroupResourceClaim | None:
        """KEP-5729: the group-level claim a pod's `spec.resourceClaims` entry asks for — one
        with the same name, resourceClaimName and resourceClaimTemplateName — or None (the
        entry is the pod's own)."""
        want = (entry.name, entry.resource_claim_name, entry.resource_claim_template_name)
        return next(
            (
                e
                for e in self.spec.resource_claims
                if (e.name, e.resource_claim_name, e.resource_claim_template_name) == want
            ),
            None,
        )

    def generated_claim_name(self, entry: str) -> str:
        """The name of the claim generated for the template entry `entry`: the one
        `status.resourceClaimStatuses` records (upstream's `<podgroup>-<entry>-<random>`, as a
        cluster dump has it), else `<podgroup>-<entry>`, ours (the random part left out for
        reproducible output, as for a pod's claims)."""
        for status in self.status.resource_claim_statuses if self.status else []:
            if status.name == entry and status.resource_claim_name:
                return status.resource_claim_name
        return f"{self.metadata.name}-{entry}"


class PodGroupTemplate(PodGroupPolicyFields):
    """One template of a Workload: what a controller copies into the PodGroups it creates."""

    name: str = ""


class TypedLocalObjectReference(K8sModel):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class WorkloadSpec(K8sModel):
    controller_ref: TypedLocalObjectReference | None = None
    pod_group_templates: list[PodGroupTemplate] = Field(default_factory=list)
    composite_pod_group_templates: list[dict[str, Any]] = Field(default_factory=list)
    """v1beta1, gate CompositePodGroup: carried, not interpreted (nothing schedules from it)."""


class Workload(TypeMeta):
    """KEP-4671 (gate GenericWorkload): the templates controllers create PodGroups from. Read,
    validated and referenced by PodGroups (`spec.workloadRef`); it decides nothing itself."""

    api_version: str = "scheduling.k8s.io/v1beta1"
    kind: Literal["Workload"] = "Workload"
    spec: WorkloadSpec


# --- core/v1: interpreted fields strict, the rest carried --------------------------------


class PodResourceClaim(K8sModel):
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class ResourceClaimRef(K8sModel):
    """containers[].resources.claims[]: a pod claim (and optionally one of its requests)."""

    name: str
    request: str | None = None


NATIVE_DOMAIN = "kubernetes.io/"
DRA_PREFIX = "deviceclass.resource.kubernetes.io/"
"""KEP-5004's implicit extended resource name of a DeviceClass: `<prefix><class name>`."""


def is_extended(name: str) -> bool:
    """An extended resource (`example.com/gpu`) or DRA's implicit per-class name; native names
    (no domain, or the kubernetes.io domain) are not. One rule for validation (whole units,
    requests equal to limits) and for the planner (`problem.resources`), so that what
    `validate` accepts is what `plan` counts."""
    if name.startswith(DRA_PREFIX):
        return True
    return "/" in name and NATIVE_DOMAIN not in name and not name.startswith("requests.")


class ResourceRequirements(K8sModel):
    limits: dict[str, Quantity] = Field(default_factory=dict)
    requests: dict[str, Quantity] = Field(default_factory=dict)
    claims: list[ResourceClaimRef] = Field(default_factory=list)


class Container(_Loose):
    name: str = ""
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    """`Always` on an init container makes it a sidecar (its requests add to the pod's)."""


class Toleration(K8sModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class NodeAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    # Preferences do not decide feasibility; accepted as written.
    preferred_during_scheduling_ignored_during_execution: list[dict[str, Any]] | None = None


class Affinity(K8sModel):
    node_affinity: NodeAffinity | None = None
    # Inter-pod (anti-)affinity is not interpreted; accepted as written.
    pod_affinity: dict[str, Any] | None = None
    pod_anti_affinity: dict[str, Any] | None = None


class PodSchedulingGroup(K8sModel):
    """spec.schedulingGroup: the PodGroup (same namespace) the pod belongs to."""

    pod_group_name: str


class PodSchedulingGate(K8sModel):
    """spec.schedulingGates[]: while any is present the scheduler does not consider the pod
    (KEP-3521; Kueue gates every job waiting for quota)."""

    name: str


class PodSpec(_Loose):
    node_name: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=list)
    priority: StrictInt | None = None
    priority_class_name: str | None = None
    scheduler_name: str | None = None
    resource_claims: list[PodResourceClaim] = Field(default_factory=list)
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    overhead: dict[str, Quantity] = Field(default_factory=dict)
    resources: ResourceRequirements | None = None
    """Pod-level requests/limits (cpu, memory): where set they replace the containers' sum."""
    scheduling_group: PodSchedulingGroup | None = None
    scheduling_gates: list[PodSchedulingGate] = Field(default_factory=list)
    preemption_policy: str | None = None
    """`Never`: the pod never preempts others (`dra_solver.preempt`); unset reads its
    PriorityClass's, else `PreemptLowerPriority`."""


class ContainerExtendedResourceRequest(K8sModel):
    container_name: str
    resource_name: str
    request_name: str


class PodExtendedResourceClaimStatus(K8sModel):
    """Which claim serves the pod's DRA-backed extended resources (KEP-5004)."""

    resource_claim_name: str
    request_mappings: list[ContainerExtendedResourceRequest] = Field(default_factory=list)


class PodResourceClaimStatus(K8sModel):
    name: str
    resource_claim_name: str | None = None


class NodeAllocatableMappedResources(K8sModel):
    name: str
    quantity: Quantity | None = None


class NodeAllocatableOverheadResources(K8sModel):
    name: str
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResourceClaimStatus(K8sModel):
    """KEP-5517: what one claim of a bound pod adds to its node resources (the scheduler writes
    it when it binds the pod; the NodeInfo of its node counts it)."""

    resource_claim_name: str
    containers: list[str] = Field(default_factory=list)
    mapping: list[NodeAllocatableMappedResources] = Field(default_factory=list)
    overhead: list[NodeAllocatableOverheadResources] = Field(default_factory=list)


class PodStatus(_Loose):
    phase: str | None = None
    """Succeeded/Failed pods hold no node resources."""
    resource_claim_statuses: list[PodResourceClaimStatus] = Field(default_factory=list)
    """The claims generated for the pod's template entries (upstream names them
    `<pod>-<entry>-<random>`): how a `kubectl get -o yaml` dump links a pod to them."""
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    start_time: StrictStr | None = None
    """RFC 3339, when the kubelet started the pod: preemption's tie-breaks read it (the
    older of two pods of equal priority is the more important; docs/semantics.md, "Preemption")."""
    node_allocatable_resource_claim_statuses: list[NodeAllocatableResourceClaimStatus] = Field(
        default_factory=list
    )


class Pod(TypeMeta):
    model_config = ConfigDict(extra="allow")

    api_version: str = "v1"
    kind: Literal["Pod"] = "Pod"
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus | None = None


# --- policy/v1 -------------------------------------------------------------------------------


LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
"""The operators of a metav1.LabelSelector requirement (a NodeSelector adds Gt and Lt)."""


class LabelSelectorRequirement(K8sModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class LabelSelector(K8sModel):
    """metav1.LabelSelector: `matchLabels` and `matchExpressions` (In, NotIn, Exists,
    DoesNotExist), all of which must hold."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)


class PodDisruptionBudgetSpec(K8sModel):
    selector: LabelSelector | None = None
    min_available: StrictInt | StrictStr | None = None
    max_unavailable: StrictInt | StrictStr | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(_Loose):
    disruptions_allowed: StrictInt | None = None
    disrupted_pods: dict[str, Any] = Field(default_factory=dict)


class PodDisruptionBudget(TypeMeta):
    """policy/v1: how many of the pods its selector matches may be disrupted at once; read
    by `plan --preempt` (`dra_solver.preempt.victims`) to count violations."""

    api_version: str = "policy/v1"
    kind: Literal["PodDisruptionBudget"] = "PodDisruptionBudget"
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None


class Taint(K8sModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class NodeSpec(_Loose):
    taints: list[Taint] = Field(default_factory=list)
    unschedulable: bool | None = None


class NodeStatus(_Loose):
    allocatable: dict[str, Quantity] = Field(default_factory=dict)
    capacity: dict[str, Quantity] = Field(default_factory=dict)
    declared_features: list[str] = Field(default_factory=list)

    @property
    def effective_allocatable(self) -> dict[str, Quantity]:
        """What the API server stores as `status.allocatable`: the given one, else (a Node
        written with capacity only) a copy of `status.capacity` — core/v1 defaulting
        (`SetDefaults_NodeStatus`; docs/semantics.md, "API-server defaulting"). Why a property:
        the input stays as given (`--output-mode full` writes it back unchanged) while every
        reader of node resources sees what the scheduler sees."""
        return self.allocatable or self.capacity


class Node(TypeMeta):
    model_config = ConfigDict(extra="allow")

    api_version: str = "v1"
    kind: Literal["Node"] = "Node"
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)


class Namespace(TypeMeta):
    """core/v1 Namespace: read for its labels (the admin-access rule of KEP-5018:
    `resource.kubernetes.io/admin-access: "true"`); every other field is carried untouched."""

    model_config = ConfigDict(extra="allow")

    api_version: str = "v1"
    kind: Literal["Namespace"] = "Namespace"


ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
"""The label a namespace needs (value "true") for claims in it to request adminAccess
(upstream `resource.DRAAdminNamespaceLabelKey`)."""


KINDS: dict[str, type[TypeMeta]] = {
    m.model_fields["kind"].default: m
    for m in (
        ResourceSlice,
        DeviceClass,
        ResourceClaim,
        ResourceClaimTemplate,
        DeviceTaintRule,
        PriorityClass,
        PodGroup,
        Workload,
        Pod,
        Node,
        Namespace,
        PodDisruptionBudget,
    )
}

CLUSTER_SCOPED = frozenset(
    {"ResourceSlice", "DeviceClass", "DeviceTaintRule", "PriorityClass", "Node", "Namespace"}
)
"""Kinds without a namespace; every other kind read here defaults to namespace `default`."""
