"""API validation of loaded objects: the rules the Kubernetes API server would enforce.

Why here and not in the pydantic models: the models accept anything that has the right
*shape* so that loading never loses information and reports every type error at once.
Whether a well-typed object is *valid* (names, one-of fields, limits, KEP-5075 request
policies, KEP-6080 derived attributes, CEL that compiles, classes that exist) is decided
here, over whole objects and the whole cluster, so that a user sees every problem in one
run instead of fixing them one by one. The allocators assume their input passed these
rules (upstream's allocator does the same: the API server rejected invalid objects).

Every error is an `InputError` naming the object (`obj.ref`, e.g. `ResourceClaim
default/c1`), the field in wire form (`spec.devices.requests[1].exactly.count`) and the
rule that was broken. Validation never raises for invalid input; it returns the list.

Sources of the rules: KEP-5075 "API Validations", KEP-6080 "API Changes", and the
upstream `resource.k8s.io/v1` validation (docs/semantics.md, "Input validation and limits").
Validation is independent of feature gates: a field a gate would drop is still checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..gates import FeatureGates
from .bounded import stop_reading_if_asked
from .cluster import Cluster
from .convert import original_path
from .models import (
    ADMIN_ACCESS_LABEL,
    CLUSTER_SCOPED,
    LABEL_OPERATORS,
    CapacityRequestPolicy,
    CapacityRequirements,
    DerivedAttribute,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    ExactDeviceRequest,
    LabelSelector,
    Node,
    NodeSelector,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PodGroupResourceClaim,
    PodGroupSchedulingConstraints,
    PodGroupSchedulingPolicy,
    PriorityClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceRequirements,
    ResourceSlice,
    TypeMeta,
    Workload,
    is_extended,
)
from .quantity import Quantity
from .strict import did_you_mean
from .times import rfc3339_nanos

# --- limits (docs/semantics.md, "Input validation and limits"; KEP-5075, KEP-6080) --------

VALIDATE_CHUNK = 256
"""Objects validated between two looks at `--timeout` (`bounded.stop_reading_if_asked`)."""

MAX_REQUESTS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_SELECTORS = 32
MAX_FIRST_AVAILABLE = 8
MAX_TOLERATIONS = 16
MAX_DEVICES_PER_SLICE = 128
MAX_DEVICES_PER_SLICE_WITH_TAINTS_OR_COUNTERS = 64
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
MAX_ATTRIBUTE_STRING_LENGTH = 64
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63
MAX_DRIVER_NAME_LENGTH = 63
MAX_POOL_NAME_LENGTH = 253
MAX_COUNTER_SETS_PER_SLICE = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMES_COUNTERS = 2
MAX_COMPATIBILITY_GROUPS = 2
"""KEP-5963: `compatibilityGroups` of one consumesCounters entry (kubernetes#139795's review
lowered it from 8 to 2); the names must be unique."""
MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_VALID_VALUES = 10
MAX_BINDING_CONDITIONS = 4
MAX_DERIVED_ATTRIBUTES = 32
MAX_CEL_EXPRESSION_BYTES = 10 * 1024
MAX_ALLOCATION_RESULTS = 32
"""AllocationResultsMaxSize: a claim's allocation holds at most 32 devices. Not an API
validation rule (the API server accepts `count: 1000000000000`); the allocator refuses such a
claim on every node ("exceeds the claim limit of 32"), so it is invalid input all the same."""
MAX_RESERVED_FOR = 256
"""ResourceClaimReservedForMaxSize: at most 256 consumers (pods) may share one claim."""

ALLOCATION_MODES = ("ExactCount", "All")
TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")
_ONE_OF_MODES = "ExactCount or All"
_ONE_OF_EFFECTS = "None, NoSchedule or NoExecute"
TOLERATION_OPERATORS = ("Exists", "Equal")

# --- name formats -----------------------------------------------------------------------

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Semantic Versioning 2.0.0, the regular expression published at semver.org.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

DNS_LABEL_RULE = (
    "must be a DNS label (lowercase letters, digits and '-', alphanumeric at both ends, at most 63)"
)
DNS_SUBDOMAIN_RULE = "must be a DNS subdomain (dot-separated DNS labels, at most {max} characters)"


@lru_cache(maxsize=4096)
def is_dns_label(name: str) -> bool:
    """RFC 1123 label: what request, subrequest and device names must be."""
    return len(name) <= 63 and _DNS_LABEL.fullmatch(name) is not None


def is_dns_subdomain(name: str, max_length: int = 253) -> bool:
    """RFC 1123 subdomain: driver names, domains of qualified names, class names."""
    return 0 < len(name) <= max_length and all(_DNS_LABEL.fullmatch(p) for p in name.split("."))


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _validate_meta(report: _Report, obj: TypeMeta) -> None:
    """A name, and one the API server accepts (`_name_problem`)."""
    if not obj.metadata.name:
        report.add("metadata.name", "required: the object must have a name")
    elif (bad_name := _name_problem(obj)) is not None:
        report.add(*bad_name)


def _name_problem(obj: TypeMeta) -> tuple[str, str] | None:
    """(field, reason) when the object's `metadata.name` or `metadata.namespace` is one the API
    server refuses (ObjectMeta validation: the name a DNS subdomain of at most 253 characters —
    a Namespace's a DNS label — and the namespace a DNS label), else None. Why here: such an
    object never exists in a cluster (`trainer-ß`, `GPU-Node`), so a hand-written input must
    not pass `validate` with it; planning costs only the object (docs/semantics.md, "Messy
    clusters: what one bad object costs (issue #39)")."""
    name, ns = obj.metadata.name, obj.metadata.namespace
    if obj.kind == "Namespace":
        if not is_dns_label(name):
            return (
                "metadata.name",
                f"invalid Namespace name {name!r}: {DNS_LABEL_RULE}; the API server refuses it",
            )
    elif len(name) > 253 or _DNS_SUBDOMAIN.fullmatch(name) is None:
        rule = DNS_SUBDOMAIN_RULE.format(max=253)
        return "metadata.name", f"invalid name {name!r}: {rule}; the API server refuses it"
    if ns and obj.kind not in CLUSTER_SCOPED and not is_dns_label(ns):
        return "metadata.namespace", f"invalid namespace {ns!r}: {DNS_LABEL_RULE}; the API server refuses it"
    return None


def is_semver(text: str) -> bool:
    """Semantic Versioning 2.0.0, strict (no `v` prefix, no leading zeros)."""
    return _SEMVER.fullmatch(text) is not None


@lru_cache(maxsize=4096)
def qualified_name_problem(name: str, *, fully_qualified: bool = False) -> str | None:
    """Why `name` is not a QualifiedName (None when it is).

    QualifiedName = C identifier of at most 32 characters, optionally prefixed by a DNS
    subdomain of at most 63 characters and `/`. `fully_qualified` requires the prefix
    (matchAttribute/distinctAttribute, and KEP-6080 derived attribute names as merged).
    Remembered: a cluster names the same few attributes on every device.
    """
    if not name:
        return "must not be empty"
    domain, sep, ident = name.rpartition("/")
    if sep:
        if not domain:
            return "domain before '/' must not be empty"
        if not is_dns_subdomain(domain, MAX_DOMAIN_LENGTH):
            return f"domain {domain!r} " + DNS_SUBDOMAIN_RULE.format(max=MAX_DOMAIN_LENGTH)
    elif fully_qualified:
        return "must be fully qualified (<domain>/<name>)"
    if not ident:
        return "name after '/' must not be empty"
    if len(ident) > MAX_ID_LENGTH:
        return f"name {ident!r} must be at most {MAX_ID_LENGTH} characters"
    if _C_IDENTIFIER.fullmatch(ident) is None:
        return f"name {ident!r} must be a C identifier (letters, digits, '_', not starting with a digit)"
    return None


# --- field paths ------------------------------------------------------------------------


def _idx(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _key(path: str, key: str) -> str:
    """Map key in wire form: `.memory`, or `["gpu.example.com/memory"]` when not a plain word."""
    return f"{path}{_key_suffix(key)}"


@lru_cache(maxsize=4096)
def _key_suffix(key: str) -> str:
    """What `_key` appends for `key`; remembered, as `qualified_name_problem` is."""
    if _PLAIN_KEY.fullmatch(key):
        return f".{key}"
    return f"[{json.dumps(key)}]"


# --- CEL --------------------------------------------------------------------------------

CelCheck = Callable[[str, bool], "str | None"]
"""`(expression, expect_bool) -> compile problem or None`. The api layer sits below the
CEL package and does not import it: `dra_solver.cel.checks` passes its compiler in here,
so one walk over the objects reports structural and CEL problems in field order."""


# --- the collector ----------------------------------------------------------------------


def error_ref(obj: TypeMeta) -> str:
    """How an error names `obj` (`InputError.obj`): its ref, and an object converted from an
    older apiVersion with that version, as the user wrote it. `planning.triage` finds an
    error's object by it."""
    return f"{obj.ref} ({obj.converted_from})" if obj.converted_from else obj.ref


class _Report:
    """Errors of one object; each rule only has to name the field and the reason."""

    def __init__(self, obj: TypeMeta, source: str = "", cel_check: CelCheck | None = None) -> None:
        self.obj = obj
        self.source = source
        self.cel_check = cel_check
        self.errors: list[InputError] = []

    def add(self, field: str, reason: str) -> None:
        # An object converted from an older apiVersion is named with it, and its paths are
        # written back in that version (`convert.original_path`) where the two differ. Worked
        # out at the first error: most objects have none (a 50,000-pod cluster's 75,000 objects
        # asked their version 330,000 times, a CPU second).
        obj = self.obj
        field = original_path(field, obj.kind, obj.converted_from)
        self.errors.append(InputError(reason, obj=error_ref(obj), field=field, source=self.source))

    def max_items(self, field: str, items: Sequence[Any] | None, limit: int) -> None:
        if items is not None and len(items) > limit:
            self.add(field, f"must have at most {limit} entries, got {len(items)}")

    def qualified_name(self, field: str, name: str, **kw: bool) -> None:
        problem = qualified_name_problem(name, **kw)
        if problem:
            self.add(field, f"invalid qualified name {name!r}: {problem}")

    def cel(self, field: str, expression: str, *, expect_bool: bool) -> None:
        if not expression.strip():
            self.add(field, "CEL expression must not be empty")
            return
        size = len(expression.encode("utf-8"))
        if size > MAX_CEL_EXPRESSION_BYTES:
            self.add(
                field, f"CEL expression must be at most 10 Ki ({MAX_CEL_EXPRESSION_BYTES} bytes), got {size}"
            )
            return
        problem = self.cel_check(expression, expect_bool) if self.cel_check is not None else None
        if problem:
            self.add(field, f"CEL compile error: {problem}")


def _frac(q: Quantity) -> Fraction:
    return q.as_fraction()


def _q(q: Quantity | None) -> str:
    """A quantity as the user wrote it (`25Gi`), for messages."""
    if q is None:
        return "<unset>"
    return q.original if q.original is not None else q.canonical()


# --- entry points -----------------------------------------------------------------------


def validate_object(obj: TypeMeta, source: str = "", cel_check: CelCheck | None = None) -> list[InputError]:
    """Every rule violation of one object, in field order; empty when the object is valid.

    Rules that need other objects (a claim's DeviceClass must exist) are in
    `validate_cluster`. CEL expressions are only checked for emptiness and size here;
    compiling them needs `cel_check` (`dra_solver.cel.checks.validate_object` passes it).
    """
    report = _Report(obj, source, cel_check)
    _validate_meta(report, obj)
    match obj:
        case ResourceSlice():
            _validate_slice(report, obj)
        case DeviceClass():
            _validate_selectors(report, "spec.selectors", obj.spec.selectors)
            report.max_items("spec.config", obj.spec.config, MAX_CONFIGS)
        case ResourceClaim():
            _validate_device_claim(report, "spec.devices", obj.spec.devices)
            alloc = obj.status.allocation if obj.status is not None else None
            if alloc is not None and alloc.node_selector is not None:
                _validate_requirements(report, "status.allocation.nodeSelector", alloc.node_selector)
        case ResourceClaimTemplate():
            _validate_device_claim(report, "spec.spec.devices", obj.spec.spec.devices)
        case Pod():
            _validate_pod(report, obj)
        case Node():
            _validate_node_taints(report, obj)
        case DeviceTaintRule():
            _validate_taint_rule(report, obj)
        case PodGroup():
            _validate_pod_group(report, obj)
        case Workload():
            _validate_workload(report, obj)
        case PodDisruptionBudget():
            _validate_pdb(report, obj)
        case PriorityClass():
            _check_preemption_policy(report, "preemptionPolicy", obj.preemption_policy)
        case _:
            pass
    return report.errors


def validate_cluster(
    cluster: Cluster,
    source_of: Callable[[TypeMeta], str] | None = None,
    cel_check: CelCheck | None = None,
    *,
    pools: bool = True,
    gates: FeatureGates | None = None,
) -> list[InputError]:
    """Every error of every object of the cluster, plus the cross-object rules: classes,
    claims, templates and priority classes a claim or pod names must exist; with `pools`
    pools must be valid and complete (`pool_problems`). CEL is compiled only with
    `cel_check` (see `CelCheck`).

    `source_of` names the file each object came from (the CLI passes it so that
    messages start with the file name). With `gates`, claims and templates that use a field
    of a disabled feature are errors too (`gate_problems`), as the allocator refuses them.
    Order: DeviceClasses, ResourceSlices, ResourceClaims, templates, Pods, Nodes,
    DeviceTaintRules, PriorityClasses, PodGroups, Workloads, Namespaces,
    PodDisruptionBudgets, then the pool problems.
    """
    objects = cluster.objects()
    classes = set(cluster.classes)
    errors: list[InputError] = []
    for i, obj in enumerate(objects):
        if i % VALIDATE_CHUNK == 0:  # --timeout: validating is part of reading the input
            stop_reading_if_asked(i, "validated")
        source = source_of(obj) if source_of else ""
        errors.extend(validate_object(obj, source, cel_check))
        if isinstance(obj, ResourceClaim | ResourceClaimTemplate):
            errors.extend(_missing_classes(obj, classes, source))
            if gates is not None:
                errors.extend(gate_problems(obj, gates, source))
        if isinstance(obj, Pod):
            errors.extend(_missing_pod_references(obj, cluster, source))
        if isinstance(obj, PodGroup):
            errors.extend(_missing_group_references(obj, cluster, source))
    errors.extend(_second_global_defaults(cluster, source_of))
    errors.extend(_shared_too_widely(cluster, source_of, gates))
    if gates is None or gates.DRAAdminAccess:
        errors.extend(admin_namespace_problems(cluster, source_of))
    if pools:
        errors.extend(pool_problems(cluster.slices, source_of))
    return errors


# --- cross-object rules -----------------------------------------------------------------


def _admin_access_uses(cluster: Cluster) -> list[tuple[ResourceClaim | ResourceClaimTemplate, str]]:
    """Every claim and template asking for admin access, with the first field that does (as
    upstream's `AuthorizedForAdmin` reports one per object): a request's `exactly.adminAccess`,
    or an allocation result's `adminAccess` (`AuthorizedForAdminStatus`)."""
    out: list[tuple[ResourceClaim | ResourceClaimTemplate, str]] = []
    objs: list[ResourceClaim | ResourceClaimTemplate] = [
        *cluster.claims.values(),
        *cluster.templates.values(),
    ]
    for obj in objs:
        if isinstance(obj, ResourceClaim):
            path, devices = "spec.devices", obj.spec.devices
        else:
            path, devices = "spec.spec.devices", obj.spec.spec.devices
        fields = [
            f"{_idx(f'{path}.requests', i)}.exactly.adminAccess"
            for i, r in enumerate(devices.requests)
            if r.exactly is not None and r.exactly.admin_access
        ]
        if isinstance(obj, ResourceClaim) and obj.status is not None and obj.status.allocation is not None:
            fields += [
                f"{_idx('status.allocation.devices.results', i)}.adminAccess"
                for i, r in enumerate(obj.status.allocation.devices.results)
                if r.admin_access
            ]
        if fields:
            out.append((obj, fields[0]))
    return out


def admin_namespace_problems(
    cluster: Cluster, source_of: Callable[[TypeMeta], str] | None = None
) -> list[InputError]:
    """KEP-5018 (DRAAdminAccess): a claim or template may ask for admin access only in a
    namespace labelled `resource.kubernetes.io/admin-access: "true"`; the API server refuses
    any other (create, and a status update that grants it), with this message. Checked where
    the input has the claim's Namespace; `admin_namespace_warnings` says where it does not."""
    errors: list[InputError] = []
    for obj, path in _admin_access_uses(cluster):
        ns = cluster.namespaces.get(obj.metadata.ns)
        if ns is None or ns.metadata.labels.get(ADMIN_ACCESS_LABEL) == "true":
            continue
        report = _Report(obj, source_of(obj) if source_of else "")
        report.add(
            path,
            f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the "
            f"containing namespace (Namespace {ns.metadata.name} does not have it)",
        )
        errors.extend(report.errors)
    return errors


def admin_namespace_warnings(cluster: Cluster, gates: FeatureGates | None = None) -> list[str]:
    """The admin-access rule could not be checked: the claim's Namespace is not in the input
    (none at all, as in a dump of `kubectl get resourceclaims,...` without `namespaces`). A
    warning, not an error: the claim may well be in a labelled namespace; one line for all."""
    if gates is not None and not gates.DRAAdminAccess:
        return []
    unchecked = [obj for obj, _ in _admin_access_uses(cluster) if obj.metadata.ns not in cluster.namespaces]
    if not unchecked:
        return []
    names = [o.namespaced_name for o in unchecked]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    what = f"claim {shown}" if len(names) == 1 else f"claims {shown}"
    if cluster.namespaces:
        missing = sorted({o.metadata.ns for o in unchecked})
        why = f"Namespace {', '.join(missing)} not in the input"
    else:
        why = "no Namespace objects in the input"
    return [
        f"adminAccess of {what} not checked against the namespace rule: {why} (the API server "
        f'requires the label {ADMIN_ACCESS_LABEL}: "true" on the namespace; add `kubectl get namespaces '
        "-o yaml` to the input to check it)"
    ]


BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
"""Priority classes every cluster has (created by the API server), so a pod may name them
without the input defining them."""


def _missing_pod_references(pod: Pod, cluster: Cluster, source: str) -> list[InputError]:
    """A pod naming a ResourceClaim, ResourceClaimTemplate or PriorityClass that is not in
    the input cannot be scheduled as written (upstream: the pod stays pending)."""
    report = _Report(pod, source)
    ns = pod.metadata.ns
    unread = {(u.kind, u.namespace, u.name) for u in cluster.unread} if cluster.unread else set()
    for i, entry in enumerate(pod.spec.resource_claims):
        path = _idx("spec.resourceClaims", i)
        if entry.resource_claim_name and (ns, entry.resource_claim_name) not in cluster.claims:
            report.add(
                f"{path}.resourceClaimName",
                f"ResourceClaim {ns}/{entry.resource_claim_name} not found in the input"
                + did_you_mean(entry.resource_claim_name, _names_in(cluster.claims, ns)),
            )
        template = entry.resource_claim_template_name
        for j, status in enumerate(pod.status.resource_claim_statuses if pod.status and template else []):
            made = status.resource_claim_name
            if status.name == entry.name and made and ("ResourceClaim", ns, made) in unread:
                # the claim made from the template is what the pod uses; it exists (a new one
                # built from the template would be a claim the cluster does not have)
                report.add(
                    f"status.resourceClaimStatuses[{j}].resourceClaimName",
                    f"ResourceClaim {ns}/{made} not found in the input",
                )
        if template and (ns, template) not in cluster.templates and not _made(pod, entry.name, cluster):
            report.add(
                f"{path}.resourceClaimTemplateName",
                f"ResourceClaimTemplate {ns}/{template} not found in the input"
                + did_you_mean(template, _names_in(cluster.templates, ns)),
            )
    name = pod.spec.priority_class_name
    if name and name not in cluster.priority_classes and name not in BUILTIN_PRIORITY_CLASSES:
        known = [*cluster.priority_classes, *BUILTIN_PRIORITY_CLASSES]
        hint = did_you_mean(name, known)
        report.add("spec.priorityClassName", f"PriorityClass {name!r} not found in the input{hint}")
    group = pod.spec.scheduling_group
    if group is not None and (ns, group.pod_group_name) not in cluster.pod_groups:
        # Upstream keeps such a pod pending forever (PreEnqueue waits for the PodGroup); in
        # an input snapshot it is a typo or a missing file, so say which.
        known = [n for (gns, n) in cluster.pod_groups if gns == ns]
        listed = f"; known: {', '.join(known[:10])}" if known else ""
        hint = did_you_mean(group.pod_group_name, known) or listed
        report.add(
            "spec.schedulingGroup.podGroupName",
            f"PodGroup {ns}/{group.pod_group_name} not found in the input{hint}",
        )
    return report.errors


def _second_global_defaults(
    cluster: Cluster, source_of: Callable[[TypeMeta], str] | None = None
) -> list[InputError]:
    """Every PriorityClass with `globalDefault: true` but the one the API server kept: it
    refuses a second global default (scheduling/v1 validation), so an input holding two was
    not read from one cluster state, or raced past the check. The one kept is the oldest by
    `metadata.creationTimestamp` when every one has it, else the first in the input. Planning
    keeps them all and reads the lowest value as the default (`problem.scheduling`,
    docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)")."""
    defaults = [pc for pc in cluster.priority_classes.values() if pc.global_default]
    if len(defaults) < 2:
        return []
    stamps = [pc.metadata.creation_timestamp for pc in defaults]
    if all(stamps):
        order = sorted(range(len(defaults)), key=lambda i: str(stamps[i]))
        defaults = [defaults[i] for i in order]
    kept, errors = defaults[0], []
    for pc in defaults[1:]:
        report = _Report(pc, source_of(pc) if source_of else "")
        report.add(
            "globalDefault",
            f"PriorityClass {kept.metadata.name} is the global default already: the API server "
            "allows only one and refuses the second",
        )
        errors += report.errors
    return errors


def _made(pod: Pod, entry: str, cluster: Cluster) -> bool:
    """Whether the claim of a template entry is made already: the pod's status records it and
    the input holds it. Upstream's scheduler then reads only that claim (resourceclaim.Name),
    so a template deleted since is not a problem of the pod."""
    return any(
        s.name == entry
        and s.resource_claim_name
        and (pod.metadata.ns, s.resource_claim_name) in cluster.claims
        for s in (pod.status.resource_claim_statuses if pod.status else [])
    )


def _missing_group_references(group: PodGroup, cluster: Cluster, source: str) -> list[InputError]:
    """A PodGroup's group-level claims and templates must exist, as a pod's (upstream: its
    pods wait for them); its `workloadRef` must not be contradicted by the input: the Workload
    missing while other Workloads of the namespace are there (a typo, or a missing file), or
    there without the template. Upstream never resolves that reference (the scheduler reads
    the PodGroup's own policy), so a dump without any Workload of the namespace is valid."""
    report = _Report(group, source)
    ns = group.metadata.ns
    for i, entry in enumerate(group.spec.resource_claims):
        path = _idx("spec.resourceClaims", i)
        refs: list[tuple[str, str | None, Mapping[tuple[str, str], object]]] = [
            ("ResourceClaim", entry.resource_claim_name, cluster.claims),
            ("ResourceClaimTemplate", entry.resource_claim_template_name, cluster.templates),
        ]
        for kind, name, index in refs:
            field = "resourceClaimName" if kind == "ResourceClaim" else "resourceClaimTemplateName"
            if name and (ns, name) not in index:
                report.add(
                    f"{path}.{field}",
                    f"{kind} {ns}/{name} not found in the input" + did_you_mean(name, _names_in(index, ns)),
                )
    ref = group.spec.workload_ref
    if ref is None or not ref.workload_name:
        return report.errors
    workload = cluster.workloads.get((ns, ref.workload_name))
    known = _names_in(cluster.workloads, ns)
    if workload is None:
        if known:
            report.add(
                "spec.workloadRef.workloadName",
                f"Workload {ns}/{ref.workload_name} not found in the input"
                + (did_you_mean(ref.workload_name, known) or f"; known: {', '.join(known[:10])}"),
            )
        return report.errors
    names = [t.name for t in workload.spec.pod_group_templates]
    if ref.template_name and ref.template_name not in names:
        hint = did_you_mean(ref.template_name, names) or (f"; known: {', '.join(names)}" if names else "")
        report.add(
            "spec.workloadRef.templateName",
            f"Workload {ns}/{ref.workload_name} has no pod group template {ref.template_name!r}{hint}",
        )
    return report.errors


def _names_in(index: Mapping[tuple[str, str], object], namespace: str) -> list[str]:
    """The names of a namespace's objects: what a pod's reference may be a typo of."""
    return [name for ns, name in index if ns == namespace]


def pool_problems(
    slices: Sequence[ResourceSlice], source_of: Callable[[TypeMeta], str] | None = None
) -> list[InputError]:
    """Pools the allocator cannot use, in the words of `solver.inventory` (which skips an
    incomplete pool and refuses an invalid one at allocation time):

    * incomplete: the slices of the newest generation disagree on
      `spec.pool.resourceSliceCount`, or their number is not that count;
    * invalid: a duplicate device name, or a duplicate counter set, within the newest
      generation of the pool.

    Each problem is reported once per pool, against the pool's first slice (input order).
    """
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for sl in slices:
        pools.setdefault((sl.spec.driver, sl.spec.pool.name), []).append(sl)
    errors: list[InputError] = []
    for (driver, name), members in pools.items():
        newest = max(s.spec.pool.generation for s in members)
        current = [s for s in members if s.spec.pool.generation == newest]
        report = _Report(current[0], source_of(current[0]) if source_of else "")
        pool = f"pool {driver}/{name} (generation {newest})"
        counts = sorted({s.spec.pool.resource_slice_count for s in current})
        names = ", ".join(s.metadata.name for s in current)
        if len(counts) > 1:
            report.add(
                "spec.pool.resourceSliceCount",
                f"{pool} is incomplete: its slices ({names}) disagree on resourceSliceCount "
                f"({', '.join(map(str, counts))})",
            )
        elif counts[0] != len(current):
            report.add(
                "spec.pool.resourceSliceCount",
                f"{pool} is incomplete: resourceSliceCount is {counts[0]} but {len(current)} "
                f"{'slices' if len(current) != 1 else 'slice'} of that generation "
                f"{'are' if len(current) != 1 else 'is'} in the input ({names})",
            )
        devices: dict[str, str] = {}
        counter_sets: dict[str, str] = {}
        for s in current:
            for d in s.spec.devices:
                if d.name in devices and devices[d.name] != s.metadata.name:
                    where = f"in slices {devices[d.name]} and {s.metadata.name}"
                    report.add("spec.devices", f"{pool} is invalid: duplicate device name {d.name} ({where})")
                devices.setdefault(d.name, s.metadata.name)
            for cs in s.spec.shared_counters:
                if cs.name in counter_sets:
                    where = f"in slices {counter_sets[cs.name]} and {s.metadata.name}"
                    report.add(
                        "spec.sharedCounters", f"{pool} is invalid: duplicate counter set {cs.name} ({where})"
                    )
                counter_sets.setdefault(cs.name, s.metadata.name)
        errors.extend(report.errors)
    return errors


def _missing_classes(
    obj: ResourceClaim | ResourceClaimTemplate, classes: set[str], source: str
) -> list[InputError]:
    """A request naming a DeviceClass that is not in the input cannot be allocated."""
    report = _Report(obj, source)
    if isinstance(obj, ResourceClaim):
        base, devices = "spec.devices", obj.spec.devices
    else:
        base, devices = "spec.spec.devices", obj.spec.spec.devices
    for i, req in enumerate(devices.requests):
        path = _idx(f"{base}.requests", i)
        units: list[tuple[str, str]] = []
        if req.exactly is not None:
            units.append((f"{path}.exactly.deviceClassName", req.exactly.device_class_name))
        for k, sub in enumerate(req.first_available or []):
            units.append((f"{_idx(f'{path}.firstAvailable', k)}.deviceClassName", sub.device_class_name))
        for field, name in units:
            if name and name not in classes:
                hint = did_you_mean(name, sorted(classes))
                report.add(field, f"DeviceClass {name!r} not found in the input{hint}")
    return report.errors


# --- ResourceClaim / ResourceClaimTemplate ----------------------------------------------


def _validate_device_claim(report: _Report, path: str, devices: DeviceClaim) -> None:
    """Requests, constraints and config of `spec.devices`."""
    report.max_items(f"{path}.requests", devices.requests, MAX_REQUESTS)
    # name -> subrequest names (None: a request without firstAvailable)
    known: dict[str, set[str] | None] = {}
    derived: list[tuple[str, str]] = []  # (name, field) of every derived attribute
    for i, req in enumerate(devices.requests):
        rpath = _idx(f"{path}.requests", i)
        _check_name(report, f"{rpath}.name", req.name, "request")
        if req.name in known:
            report.add(f"{rpath}.name", f"duplicate request name {req.name!r}")
        derived += _validate_request(report, rpath, req)
        known.setdefault(req.name, {s.name for s in req.first_available} if req.first_available else None)

    _check_device_total(report, path, devices.requests)

    report.max_items(f"{path}.constraints", devices.constraints, MAX_CONSTRAINTS)
    for j, constraint in enumerate(devices.constraints):
        cpath = _idx(f"{path}.constraints", j)
        _check_request_refs(report, f"{cpath}.requests", constraint.requests, known)
        _validate_constraint(report, cpath, constraint)
    used = {c.match_attribute or c.distinct_attribute for c in devices.constraints}
    for name, field in derived:
        if name not in used:  # KEP-6080 as merged (kubernetes#140029)
            report.add(
                field, f"derived attribute {name!r} is not used by any matchAttribute or distinctAttribute"
            )

    report.max_items(f"{path}.config", devices.config, MAX_CONFIGS)
    for j, config in enumerate(devices.config):
        _check_request_refs(report, f"{_idx(f'{path}.config', j)}.requests", config.requests, known)


def _min_devices(req: ExactDeviceRequest | DeviceSubRequest) -> int:
    """The fewest devices a request can be given: its count (ExactCount), 0 for All (how
    many depends on the node)."""
    if req.allocation_mode == "All":
        return 0
    return max(req.count if req.count is not None else 1, 0)


def _check_device_total(report: _Report, path: str, requests: Sequence[DeviceRequest]) -> None:
    """The allocator's claim limit (MAX_ALLOCATION_RESULTS), checked here so that `validate`
    refuses what `allocate` would: one request asking for more, or all requests together
    (a firstAvailable request counts with its smallest subrequest)."""
    if len(requests) > MAX_REQUESTS:
        return  # already an error of its own
    total = 0
    for i, req in enumerate(requests):
        if req.exactly is not None:
            need = _min_devices(req.exactly)
            if need > MAX_ALLOCATION_RESULTS:
                report.add(
                    f"{_idx(f'{path}.requests', i)}.exactly.count",
                    f"number of requested devices {need} exceeds the claim limit of {MAX_ALLOCATION_RESULTS} "
                    "(AllocationResultsMaxSize): no node can allocate this claim",
                )
                return
        elif req.first_available:
            need = min(_min_devices(sub) for sub in req.first_available)
        else:
            continue
        total += need
    if total > MAX_ALLOCATION_RESULTS:
        report.add(
            f"{path}.requests",
            f"number of requested devices {total} (all requests together) exceeds the claim limit of "
            f"{MAX_ALLOCATION_RESULTS} (AllocationResultsMaxSize): no node can allocate this claim",
        )


def gate_problems(
    obj: ResourceClaim | ResourceClaimTemplate, gates: FeatureGates, source: str = ""
) -> list[InputError]:
    """Fields of a claim (or template) that the allocator refuses while their feature gate is
    off: `firstAvailable` (DRAPrioritizedList), capacity requests (DRAConsumableCapacity),
    `adminAccess` (DRAAdminAccess). Checked here so that `validate --feature-gates` refuses
    what `allocate` and `plan` with the same gates would."""
    report = _Report(obj, source)
    if isinstance(obj, ResourceClaim):
        path, devices = "spec.devices", obj.spec.devices
    else:
        path, devices = "spec.spec.devices", obj.spec.spec.devices
    for i, req in enumerate(devices.requests):
        rpath = _idx(f"{path}.requests", i)
        if req.first_available and not gates.DRAPrioritizedList:
            report.add(
                f"{rpath}.firstAvailable",
                f"request {req.name} has subrequests, but the DRAPrioritizedList feature is disabled",
            )
        parts: list[tuple[str, ExactDeviceRequest | DeviceSubRequest]] = (
            [("exactly", req.exactly)] if req.exactly is not None else []
        )
        parts += [(f"firstAvailable[{k}]", sub) for k, sub in enumerate(req.first_available or [])]
        for name, part in parts:
            if part.capacity is not None and part.capacity.requests and not gates.DRAConsumableCapacity:
                report.add(
                    f"{rpath}.{name}.capacity",
                    f"request {req.name} has capacity requests, "
                    "but the DRAConsumableCapacity feature is disabled",
                )
            if getattr(part, "admin_access", None) and not gates.DRAAdminAccess:
                report.add(
                    f"{rpath}.{name}.adminAccess",
                    f"request {req.name}: admin access is requested, "
                    "but the DRAAdminAccess feature is disabled",
                )
    return report.errors


def _shared_too_widely(
    cluster: Cluster, source_of: Callable[[TypeMeta], str] | None, gates: FeatureGates | None = None
) -> list[InputError]:
    """An unallocated claim that more pods name than `status.reservedFor` can hold: the
    allocator refuses to reserve it (MAX_RESERVED_FOR). A pod using it as its PodGroup's
    group-level claim (KEP-5729, both gates on) is not a consumer: the PodGroup is, once —
    lifting that limit is what the KEP is for."""
    gates = gates or FeatureGates()
    grouped = gates.GenericWorkload and gates.DRAWorkloadResourceClaims
    users: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for pod in cluster.pods.values():
        ns = pod.metadata.ns
        ref = pod.spec.scheduling_group
        group = cluster.pod_groups.get((ns, ref.pod_group_name)) if grouped and ref is not None else None
        for e in pod.spec.resource_claims:
            if e.resource_claim_name:
                user = ("podgroups", group.metadata.name) if group and group.claim_entry(e) else None
                users.setdefault((ns, e.resource_claim_name), set()).add(user or ("pods", pod.metadata.name))
    errors = []
    for key, pods in users.items():
        claim = cluster.claims.get(key)
        if claim is None or (claim.status is not None and claim.status.allocation is not None):
            continue
        reserved = {(r.resource, r.name) for r in claim.status.reserved_for} if claim.status else set()
        n = len(pods | reserved)
        if n > MAX_RESERVED_FOR:
            report = _Report(claim, source_of(claim) if source_of else "")
            report.add(
                "status.reservedFor",
                f"{n} consumers (pods, PodGroups) use this claim; it can be reserved for at most "
                f"{MAX_RESERVED_FOR} consumers (ResourceClaimReservedForMaxSize)",
            )
            errors.extend(report.errors)
    return errors


def _check_name(report: _Report, field: str, name: str, what: str) -> None:
    if not name:
        report.add(field, f"required: the {what} must have a name")
    elif not is_dns_label(name):
        report.add(field, f"invalid {what} name {name!r}: {DNS_LABEL_RULE}")


def _validate_request(report: _Report, path: str, req: DeviceRequest) -> list[tuple[str, str]]:
    """One request; returns (name, field) of its derived attributes (all subrequests)."""
    has_exactly = req.exactly is not None
    has_first = req.first_available is not None
    if has_exactly == has_first:
        found = "both are set" if has_exactly else "neither is set"
        report.add(path, f"exactly one of exactly or firstAvailable must be set, {found}")
    derived: list[tuple[str, str]] = []
    if req.exactly is not None:
        derived += _validate_exact(report, f"{path}.exactly", req.exactly)
    if req.first_available is not None:
        fpath = f"{path}.firstAvailable"
        if not req.first_available:
            report.add(fpath, "must have at least one subrequest")
        report.max_items(fpath, req.first_available, MAX_FIRST_AVAILABLE)
        seen: set[str] = set()
        for k, sub in enumerate(req.first_available):
            spath = _idx(fpath, k)
            _check_name(report, f"{spath}.name", sub.name, "subrequest")
            if sub.name in seen:
                report.add(f"{spath}.name", f"duplicate subrequest name {sub.name!r}")
            seen.add(sub.name)
            derived += _validate_exact(report, spath, sub)
    return derived


def _validate_exact(
    report: _Report, path: str, req: ExactDeviceRequest | DeviceSubRequest
) -> list[tuple[str, str]]:
    """Fields shared by `exactly` and a `firstAvailable` subrequest."""
    if not req.device_class_name:
        report.add(f"{path}.deviceClassName", "required: the request must name a DeviceClass")
    elif not is_dns_subdomain(req.device_class_name):
        report.add(
            f"{path}.deviceClassName",
            f"invalid DeviceClass name {req.device_class_name!r}: " + DNS_SUBDOMAIN_RULE.format(max=253),
        )
    _validate_selectors(report, f"{path}.selectors", req.selectors)
    mode = req.allocation_mode
    if mode is not None and mode not in ALLOCATION_MODES:
        report.add(f"{path}.allocationMode", f"unsupported allocationMode {mode!r}: must be {_ONE_OF_MODES}")
    if mode == "All":
        if req.count is not None:
            report.add(f"{path}.count", "must not be set when allocationMode is All")
    elif req.count is not None and req.count < 1:
        report.add(f"{path}.count", f"must be at least 1 for allocationMode ExactCount, got {req.count}")
    _validate_tolerations(report, f"{path}.tolerations", req.tolerations)
    if req.capacity is not None:
        _validate_capacity_requirements(report, f"{path}.capacity", req.capacity)
    return _validate_derived(report, f"{path}.derivedAttributes", req.derived_attributes)


def _validate_selectors(report: _Report, path: str, selectors: Sequence[DeviceSelector]) -> None:
    report.max_items(path, selectors, MAX_SELECTORS)
    for j, sel in enumerate(selectors):
        spath = _idx(path, j)
        if sel.cel is None:
            report.add(f"{spath}.cel", "required: a selector must have cel (no other selector type exists)")
            continue
        report.cel(f"{spath}.cel.expression", sel.cel.expression, expect_bool=True)


def _validate_tolerations(report: _Report, path: str, tolerations: Sequence[DeviceToleration]) -> None:
    report.max_items(path, tolerations, MAX_TOLERATIONS)
    for j, tol in enumerate(tolerations):
        tpath = _idx(path, j)
        if tol.operator not in (None, "", *TOLERATION_OPERATORS):
            report.add(f"{tpath}.operator", f"unsupported operator {tol.operator!r}: must be Exists or Equal")
        if tol.operator == "Exists" and tol.value:
            report.add(f"{tpath}.value", "must be empty when operator is Exists")
        if not tol.key and tol.operator not in ("Exists",):
            report.add(f"{tpath}.operator", "must be Exists when key is empty")
        if tol.effect not in (None, "", *TAINT_EFFECTS):
            report.add(f"{tpath}.effect", f"unsupported effect {tol.effect!r}: must be {_ONE_OF_EFFECTS}")
        if tol.toleration_seconds is not None and tol.toleration_seconds < 0:
            report.add(f"{tpath}.tolerationSeconds", "must not be negative")


def _validate_capacity_requirements(report: _Report, path: str, cap: CapacityRequirements) -> None:
    for name, quantity in cap.requests.items():
        field = _key(f"{path}.requests", name)
        report.qualified_name(field, name)
        if _frac(quantity) < 0:
            report.add(field, f"capacity request {_q(quantity)} must not be negative")


def _validate_derived(
    report: _Report, path: str, derived: Sequence[DerivedAttribute]
) -> list[tuple[str, str]]:
    """KEP-6080 as merged (kubernetes#140029): at most 32, unique fully qualified names (a
    derived attribute named like a device attribute shadows it), an expression <= 10 Ki that
    compiles. Returns (name, field of the name) of each, for the check that it is used."""
    report.max_items(path, derived, MAX_DERIVED_ATTRIBUTES)
    names: set[str] = set()
    out: list[tuple[str, str]] = []
    for j, attr in enumerate(derived):
        dpath = _idx(path, j)
        report.qualified_name(f"{dpath}.name", attr.name, fully_qualified=True)
        if attr.name in names:
            report.add(f"{dpath}.name", f"duplicate derived attribute name {attr.name!r}")
        names.add(attr.name)
        out.append((attr.name, f"{dpath}.name"))
        report.cel(f"{dpath}.expression", attr.expression, expect_bool=False)
    return out


def _check_request_refs(
    report: _Report, path: str, refs: Sequence[str], known: dict[str, set[str] | None]
) -> None:
    """`requests` of a constraint or config: `req` or `req/sub`, naming what exists."""
    seen: set[str] = set()
    for k, ref in enumerate(refs):
        field = _idx(path, k)
        if ref in seen:
            report.add(field, f"duplicate entry {ref!r}")
        seen.add(ref)
        req, sep, sub = ref.partition("/")
        if req not in known:
            report.add(field, f"request {req!r} is not defined in this claim")
        elif sep:
            subs = known[req]
            if subs is None:
                report.add(field, f"request {req!r} has no firstAvailable subrequests, {ref!r} names nothing")
            elif sub not in subs:
                report.add(field, f"subrequest {sub!r} is not defined in request {req!r}")


def _validate_constraint(report: _Report, path: str, constraint: DeviceConstraint) -> None:
    """Exactly one of matchAttribute/distinctAttribute, a fully qualified name (also for a
    derived attribute: KEP-6080 as merged keeps the constraint fields fully qualified)."""
    candidates = (
        ("matchAttribute", constraint.match_attribute),
        ("distinctAttribute", constraint.distinct_attribute),
    )
    set_fields = [(name, value) for name, value in candidates if value is not None]
    if len(set_fields) != 1:
        found = "both are set" if set_fields else "neither is set"
        report.add(path, f"exactly one of matchAttribute or distinctAttribute must be set, {found}")
    for name, value in set_fields:
        problem = qualified_name_problem(value, fully_qualified=True)
        if problem:
            report.add(f"{path}.{name}", f"invalid attribute name {value!r}: {problem}")


# --- DeviceClass / Pod / DeviceTaintRule ----------------------------------------------


def _validate_taint_rule(report: _Report, rule: DeviceTaintRule) -> None:
    """The taint as on a device; v1alpha3 selectors (kept on conversion) as CEL selectors."""
    _validate_taint(report, "spec.taint", rule.spec.taint)
    selector = rule.spec.device_selector
    if selector is not None and selector.selectors:
        _validate_selectors(report, "spec.deviceSelector.selectors", selector.selectors)


NODE_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""core/v1 TaintEffect values (a Node's `spec.taints`)."""
_NODE_EFFECTS = ", ".join(NODE_TAINT_EFFECTS)


def _validate_node_taints(report: _Report, node: Node) -> None:
    """core/v1's rule for what the plan reads of a node's taints: a known effect (an unknown one
    the API server refuses; `planning.triage` keeps the node and counts the taint as blocking)."""
    for i, taint in enumerate(node.spec.taints):
        if not taint.key:
            report.add(f"spec.taints[{i}].key", "required: a taint must have a key")
        if not taint.effect:  # core/v1: Required value (a toleration's may be empty, a taint's not)
            report.add(f"spec.taints[{i}].effect", f"required: a taint must have an effect ({_NODE_EFFECTS})")
        elif taint.effect not in NODE_TAINT_EFFECTS:
            report.add(
                f"spec.taints[{i}].effect",
                f"unsupported taint effect {taint.effect!r}: must be {_NODE_EFFECTS}",
            )


def _validate_pod(report: _Report, pod: Pod) -> None:
    containers = [("spec.initContainers", c) for c in pod.spec.init_containers]
    containers += [("spec.containers", c) for c in pod.spec.containers]
    counts: dict[str, int] = {}
    names = [claim.name for claim in pod.spec.resource_claims]
    for base, c in containers:
        i = counts[base] = counts.get(base, -1) + 1
        if c.resources is not None:
            _validate_resources(report, f"{_idx(base, i)}.resources", c.resources)
            _check_container_claims(report, f"{_idx(base, i)}.resources.claims", c.resources, names)
    if pod.spec.resources is not None:
        _validate_resources(report, "spec.resources", pod.spec.resources)
    seen: set[str] = set()
    for i, claim in enumerate(pod.spec.resource_claims):
        path = _idx("spec.resourceClaims", i)
        _check_name(report, f"{path}.name", claim.name, "pod resource claim")
        if claim.name in seen:
            report.add(f"{path}.name", f"duplicate pod resource claim name {claim.name!r}")
        seen.add(claim.name)
        given = [n for n in (claim.resource_claim_name, claim.resource_claim_template_name) if n]
        if len(given) != 1:
            found = "both are set" if given else "neither is set"
            report.add(
                path, f"exactly one of resourceClaimName, resourceClaimTemplateName must be set, {found}"
            )
    _check_preemption_policy(report, "spec.preemptionPolicy", pod.spec.preemption_policy)
    _validate_pod_scheduling(report, pod)
    start = pod.status.start_time if pod.status is not None else None
    if start is not None:
        try:
            rfc3339_nanos(start)
        except ValueError as exc:
            report.add("status.startTime", str(exc))


def _check_container_claims(
    report: _Report, path: str, res: ResourceRequirements, pod_claims: Sequence[str]
) -> None:
    """core/v1: a container's `resources.claims[].name` must be one of the pod's
    `spec.resourceClaims` names, once per container. The API server refuses a pod breaking it,
    so the scheduler never sees one; a dump or a manifest may still hold it, and planning it
    would start a container whose claim the kubelet cannot find (docs/semantics.md, "Messy
    clusters: what one bad object costs (issue #39)": the pod is held with this reason)."""
    seen: set[str] = set()
    for j, ref in enumerate(res.claims):
        field = f"{_idx(path, j)}.name"
        key = f"{ref.name}/{ref.request}" if ref.request else ref.name
        if key in seen:
            report.add(field, f"duplicate container claim {key!r}")
        seen.add(key)
        if ref.name not in pod_claims:
            known = f"it has: {', '.join(pod_claims)}" if pod_claims else "it has none"
            report.add(
                field,
                f"{ref.name!r} names no entry of the pod's spec.resourceClaims ({known}), so the "
                f"API server refuses the pod{did_you_mean(ref.name, pod_claims)}",
            )


def _validate_pod_scheduling(report: _Report, pod: Pod) -> None:
    """core/v1's rules for what the plan reads of a pod's node choice: its required node
    affinity's requirements and its tolerations' operators and effects (the API server refuses
    anything else; evaluating it would stop the plan, not this pod)."""
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if required is not None:
        path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        _validate_requirements(report, path, required)
    for i, tol in enumerate(pod.spec.tolerations):
        tpath = _idx("spec.tolerations", i)
        if tol.operator not in (None, "", *TOLERATION_OPERATORS):
            report.add(f"{tpath}.operator", f"unsupported operator {tol.operator!r}: must be Exists or Equal")
        if tol.effect not in (None, "", *NODE_TAINT_EFFECTS):
            effects = ", ".join(NODE_TAINT_EFFECTS)
            report.add(f"{tpath}.effect", f"unsupported effect {tol.effect!r}: must be one of {effects}")


PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
"""core/v1 PreemptionPolicy values (a pod's and a PriorityClass's)."""


def _check_preemption_policy(report: _Report, field: str, policy: str | None) -> None:
    if policy is not None and policy not in PREEMPTION_POLICIES:
        report.add(field, f"unsupported value {policy!r}; use one of {', '.join(PREEMPTION_POLICIES)}")


def _validate_pdb(report: _Report, pdb: PodDisruptionBudget) -> None:
    """policy/v1's API rules for what `plan --preempt` reads: the selector, minAvailable /
    maxUnavailable (one of them; a non-negative integer or a percentage up to 100%), and a
    status that is not negative."""
    spec = pdb.spec
    if spec.min_available is not None and spec.max_unavailable is not None:
        report.add("spec", "minAvailable and maxUnavailable are both set; set one")
    for field, value in (
        ("spec.minAvailable", spec.min_available),
        ("spec.maxUnavailable", spec.max_unavailable),
    ):
        if isinstance(value, int) and value < 0:
            report.add(field, f"must not be negative, got {value}")
        elif isinstance(value, str):
            m = re.fullmatch(r"(\d+)%", value)
            if m is None:
                report.add(field, f"not an integer or a percentage (like 50%): {value!r}")
            elif int(m.group(1)) > 100:
                report.add(field, f"must not be more than 100%, got {value}")
    if spec.selector is not None:
        _validate_label_selector(report, "spec.selector", spec.selector)
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        report.add(
            "spec.unhealthyPodEvictionPolicy",
            f"unsupported value {policy!r}; use IfHealthyBudget or AlwaysAllow",
        )
    allowed = pdb.status.disruptions_allowed if pdb.status is not None else None
    if allowed is not None and allowed < 0:
        report.add("status.disruptionsAllowed", f"must not be negative, got {allowed}")


def _validate_label_selector(report: _Report, path: str, selector: LabelSelector) -> None:
    """metav1.LabelSelector: qualified-name keys, the four operators, values with In and
    NotIn only (and at least one)."""
    for key in selector.match_labels:
        report.qualified_name(_key(f"{path}.matchLabels", key), key)
    for i, r in enumerate(selector.match_expressions):
        where = _idx(f"{path}.matchExpressions", i)
        report.qualified_name(f"{where}.key", r.key)
        if r.operator not in LABEL_OPERATORS:
            report.add(
                f"{where}.operator",
                f"unknown label selector operator {r.operator!r}; use one of {', '.join(LABEL_OPERATORS)}",
            )
        elif r.operator in ("In", "NotIn") and not r.values:
            report.add(f"{where}.values", f"must be non-empty when the operator is {r.operator}")
        elif r.operator in ("Exists", "DoesNotExist") and r.values:
            report.add(f"{where}.values", f"must be empty when the operator is {r.operator}")


def _validate_pod_group(report: _Report, group: PodGroup) -> None:
    """KEP-4671's API rules: the policy, constraints and group-level claims, and a complete
    `workloadRef` when one is given."""
    spec = group.spec
    _validate_group_fields(report, "spec", spec.scheduling_policy, spec.scheduling_constraints)
    _validate_group_claims(report, "spec.resourceClaims", spec.resource_claims)
    ref = spec.workload_ref
    if ref is not None:
        for field, value in (("workloadName", ref.workload_name), ("templateName", ref.template_name)):
            if not value:
                report.add(f"spec.workloadRef.{field}", "required: the reference must name it")


def _validate_workload(report: _Report, workload: Workload) -> None:
    """A Workload's templates: 1 to 8 (or composite templates instead, v1beta1), unique DNS
    label names, each with the rules of a PodGroup's policy, constraints and claims; a
    controllerRef names its kind and object."""
    spec = workload.spec
    templates = spec.pod_group_templates
    if bool(templates) == bool(spec.composite_pod_group_templates):
        found = "both are set" if templates else "neither is set"
        report.add(
            "spec.podGroupTemplates",
            f"exactly one of podGroupTemplates, compositePodGroupTemplates must be set, {found}",
        )
    report.max_items("spec.podGroupTemplates", templates, MAX_POD_GROUP_TEMPLATES)
    seen: set[str] = set()
    for i, template in enumerate(templates):
        path = _idx("spec.podGroupTemplates", i)
        _check_name(report, f"{path}.name", template.name, "pod group template")
        if template.name and template.name in seen:
            report.add(f"{path}.name", f"duplicate pod group template name {template.name!r}")
        seen.add(template.name)
        _validate_group_fields(report, path, template.scheduling_policy, template.scheduling_constraints)
        _validate_group_claims(report, f"{path}.resourceClaims", template.resource_claims)
    ref = spec.controller_ref
    if ref is not None:
        for field, value in (("kind", ref.kind), ("name", ref.name)):
            if not value:
                report.add(f"spec.controllerRef.{field}", "required: the reference must name it")


def _validate_group_fields(
    report: _Report,
    base: str,
    policy: PodGroupSchedulingPolicy,
    constraints: PodGroupSchedulingConstraints | None,
) -> None:
    """A PodGroup's or template's policy (exactly one of basic and gang, minCount >= 1) and
    constraints (at most one topology key, not empty)."""
    given = [n for n, v in (("basic", policy.basic), ("gang", policy.gang)) if v is not None]
    if len(given) != 1:
        found = "both are set" if given else "neither is set"
        report.add(f"{base}.schedulingPolicy", f"exactly one of basic, gang must be set, {found}")
    if policy.gang is not None and policy.gang.min_count < 1:
        report.add(
            f"{base}.schedulingPolicy.gang.minCount", f"must be at least 1, got {policy.gang.min_count}"
        )
    if constraints is not None:
        path = f"{base}.schedulingConstraints.topology"
        if len(constraints.topology) > 1:
            report.add(path, "must have at most 1 entries")
        for i, t in enumerate(constraints.topology):
            if not t.key:
                report.add(f"{_idx(path, i)}.key", "required: a node label key")


def _validate_group_claims(report: _Report, path: str, claims: Sequence[PodGroupResourceClaim]) -> None:
    """KEP-5729: at most 4 group-level claims, unique DNS label names, each exactly one of
    resourceClaimName and resourceClaimTemplateName."""
    report.max_items(path, claims, MAX_POD_GROUP_RESOURCE_CLAIMS)
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        entry = _idx(path, i)
        _check_name(report, f"{entry}.name", claim.name, "group resource claim")
        if claim.name in seen:
            report.add(f"{entry}.name", f"duplicate group resource claim name {claim.name!r}")
        seen.add(claim.name)
        given = [n for n in (claim.resource_claim_name, claim.resource_claim_template_name) if n]
        if len(given) != 1:
            found = "both are set" if given else "neither is set"
            report.add(
                entry, f"exactly one of resourceClaimName, resourceClaimTemplateName must be set, {found}"
            )


def _validate_resources(report: _Report, path: str, res: ResourceRequirements) -> None:
    """The API server's rules for container resources that change what a pod takes of a node:
    no negative amounts, requests at most limits, and extended resources (which cannot be
    overcommitted) in whole units with requests equal to limits."""
    for kind, amounts in (("requests", res.requests), ("limits", res.limits)):
        for name, q in amounts.items():
            field = f"{path}.{kind}[{name}]"
            if q.sign() < 0:
                report.add(field, f"must be greater than or equal to 0, got {q}")
            elif is_extended(name) and not q.is_integer():
                report.add(field, f"must be an integer: extended resources are whole units, got {q}")
    for name, q in res.requests.items():
        limit = res.limits.get(name)
        if limit is None:
            continue
        field = f"{path}.requests[{name}]"
        if is_extended(name) and q != limit:
            report.add(field, f"must be equal to the limit {limit} (an extended resource), got {q}")
        elif q > limit:
            report.add(field, f"must be less than or equal to the limit {limit}, got {q}")


# --- ResourceSlice ----------------------------------------------------------------------


def _validate_slice(report: _Report, sl: ResourceSlice) -> None:
    spec = sl.spec
    if not spec.driver:
        report.add("spec.driver", "required: the slice must name its driver")
    elif not is_dns_subdomain(spec.driver, MAX_DRIVER_NAME_LENGTH):
        rule = DNS_SUBDOMAIN_RULE.format(max=MAX_DRIVER_NAME_LENGTH)
        report.add("spec.driver", f"invalid driver name {spec.driver!r}: {rule}")
    if not spec.pool.name:
        report.add("spec.pool.name", "required: the pool must have a name")
    elif len(spec.pool.name) > MAX_POOL_NAME_LENGTH:
        report.add("spec.pool.name", f"must be at most {MAX_POOL_NAME_LENGTH} characters")
    if spec.pool.generation < 0:
        report.add("spec.pool.generation", f"must not be negative, got {spec.pool.generation}")
    if spec.pool.resource_slice_count < 1:
        count = spec.pool.resource_slice_count
        report.add("spec.pool.resourceSliceCount", f"must be at least 1, got {count}")

    scope = [
        name
        for name, is_set in (
            ("nodeName", bool(spec.node_name)),
            ("nodeSelector", spec.node_selector is not None),
            ("allNodes", bool(spec.all_nodes)),
            ("perDeviceNodeSelection", bool(spec.per_device_node_selection)),
        )
        if is_set
    ]
    if len(scope) != 1:
        found = f"found {', '.join(scope)}" if scope else "none is set"
        fields = "nodeName, nodeSelector, allNodes, perDeviceNodeSelection"
        report.add("spec", f"exactly one of {fields} must be set, {found}")
    if spec.node_selector is not None:
        _validate_node_selector(report, "spec.nodeSelector", spec.node_selector)

    if isinstance(spec.skip_node_operations, list):
        _validate_skip_node_operations(report, "spec.skipNodeOperations", spec.skip_node_operations)

    if spec.devices and spec.shared_counters:  # both: the layout of 1.33 (KEP-4815 alpha)
        report.add(
            "spec",
            "only one of devices or sharedCounters may be set, found both: this is the layout of "
            "Kubernetes 1.33, where devices and the counter sets they consume shared a slice; since "
            "1.34 sharedCounters go in a slice of their own (same driver and pool, no devices), and the "
            "devices' consumesCounters name its counter sets",
        )

    uses_extras = any(d.taints or d.consumes_counters or _has_list_attributes(d) for d in spec.devices)
    limit = MAX_DEVICES_PER_SLICE_WITH_TAINTS_OR_COUNTERS if uses_extras else MAX_DEVICES_PER_SLICE
    if len(spec.devices) > limit:
        why = " when a device uses taints, consumesCounters or list attributes" if uses_extras else ""
        report.add("spec.devices", f"must have at most {limit} devices{why}, got {len(spec.devices)}")
    seen: set[str] = set()
    for i, device in enumerate(spec.devices):
        dpath = _idx("spec.devices", i)
        _check_name(report, f"{dpath}.name", device.name, "device")
        if device.name in seen:
            report.add(f"{dpath}.name", f"duplicate device name {device.name!r} in this slice")
        seen.add(device.name)
        _validate_device(report, dpath, device, bool(spec.per_device_node_selection))

    report.max_items("spec.sharedCounters", spec.shared_counters, MAX_COUNTER_SETS_PER_SLICE)
    set_names: set[str] = set()
    for i, counter_set in enumerate(spec.shared_counters):
        cpath = _idx("spec.sharedCounters", i)
        _check_name(report, f"{cpath}.name", counter_set.name, "counter set")
        if counter_set.name in set_names:
            report.add(f"{cpath}.name", f"duplicate counter set name {counter_set.name!r}")
        set_names.add(counter_set.name)
        if len(counter_set.counters) > MAX_COUNTERS_PER_SET:
            n = len(counter_set.counters)
            report.add(f"{cpath}.counters", f"must have at most {MAX_COUNTERS_PER_SET} counters, got {n}")


def _has_list_attributes(device: Device) -> bool:
    return any(
        a.ints is not None or a.bools is not None or a.strings is not None or a.versions is not None
        for a in device.attributes.values()
    )


def _validate_node_selector(report: _Report, path: str, selector: NodeSelector) -> None:
    terms = selector.node_selector_terms
    if len(terms) != 1:
        report.add(f"{path}.nodeSelectorTerms", f"must have exactly one term, got {len(terms)}")
    _validate_requirements(report, path, selector)


NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
"""core/v1 NodeSelectorOperator values."""


def _validate_requirements(report: _Report, path: str, selector: NodeSelector) -> None:
    """core/v1's rules for a node selector's requirements, those whose breach would stop the
    node selection (`inventory.requirement_matches` raises): a known operator, Gt/Lt with one
    integer value, matchFields on `metadata.name` only."""
    for i, term in enumerate(selector.node_selector_terms):
        tpath = _idx(f"{path}.nodeSelectorTerms", i)
        for name, reqs in (("matchExpressions", term.match_expressions), ("matchFields", term.match_fields)):
            for j, r in enumerate(reqs):
                rpath = _idx(f"{tpath}.{name}", j)
                if name == "matchFields" and r.key != "metadata.name":
                    report.add(
                        f"{rpath}.key", f"unsupported matchFields key {r.key!r}: must be metadata.name"
                    )
                if r.operator not in NODE_SELECTOR_OPERATORS:
                    ops = ", ".join(NODE_SELECTOR_OPERATORS)
                    report.add(
                        f"{rpath}.operator", f"unsupported operator {r.operator!r}: must be one of {ops}"
                    )
                elif r.operator in ("Gt", "Lt") and (
                    len(r.values) != 1 or not re.fullmatch(r"-?\d+", r.values[0])
                ):
                    report.add(f"{rpath}.values", f"operator {r.operator} needs exactly one integer value")


def _validate_device(report: _Report, path: str, device: Device, per_device: bool) -> None:
    """Every rule of one device. A slice's devices are a large part of a cluster (130,000 in a
    50,000-pod one) and almost all valid: each field path is written only for a rule that
    fails or a part that is there to check."""
    attributes, capacity = device.attributes, device.capacity
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        limit = MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE
        report.add(path, f"must have at most {limit} attributes and capacities combined, got {total}")
    values = 0
    for name, attr in attributes.items():
        if _plainly_valid(attr) and qualified_name_problem(name) is None:
            values += 1
            continue
        apath = f"{path}.attributes{_key_suffix(name)}"
        report.qualified_name(apath, name)
        values += _validate_attribute(report, apath, attr)
    if values > MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        limit = MAX_ATTRIBUTE_VALUES_PER_DEVICE
        report.add(
            f"{path}.attributes",
            f"must have at most {limit} attribute values (list elements count), got {values}",
        )
    for name, cap in capacity.items():
        cpath = f"{path}.capacity{_key_suffix(name)}"
        report.qualified_name(cpath, name)
        _validate_capacity(report, cpath, cap, bool(device.allow_multiple_allocations))

    _validate_consumptions(report, path, device.consumes_counters)

    if per_device or device.node_name or device.node_selector is not None or device.all_nodes:
        _validate_device_scope(report, path, device, per_device)

    for j, taint in enumerate(device.taints):
        _validate_taint(report, _idx(f"{path}.taints", j), taint)
    if len(device.binding_conditions) > MAX_BINDING_CONDITIONS:
        report.max_items(f"{path}.bindingConditions", device.binding_conditions, MAX_BINDING_CONDITIONS)
    failure = device.binding_failure_conditions
    if len(failure) > MAX_BINDING_CONDITIONS:
        report.max_items(f"{path}.bindingFailureConditions", failure, MAX_BINDING_CONDITIONS)


def _validate_consumptions(report: _Report, path: str, consumes: list[DeviceCounterConsumption]) -> None:
    """A device's consumesCounters: how many, each naming its counter set, its counters and
    compatibility groups (paths written only where a rule fails or groups are there)."""
    if len(consumes) > MAX_CONSUMES_COUNTERS:
        report.max_items(f"{path}.consumesCounters", consumes, MAX_CONSUMES_COUNTERS)
    for j, consumption in enumerate(consumes):
        if not consumption.counter_set:
            cpath = _idx(f"{path}.consumesCounters", j)
            report.add(f"{cpath}.counterSet", "required: must name a counter set")
        if len(consumption.counters) > MAX_COUNTERS_PER_CONSUMPTION:
            cpath = _idx(f"{path}.consumesCounters", j)
            report.add(
                f"{cpath}.counters",
                f"must have at most {MAX_COUNTERS_PER_CONSUMPTION} counters, got {len(consumption.counters)}",
            )
        groups = consumption.compatibility_groups
        if groups:  # none: nothing to check
            cpath = _idx(f"{path}.consumesCounters", j)
            _validate_compatibility_groups(report, f"{cpath}.compatibilityGroups", groups)


def _validate_device_scope(report: _Report, path: str, device: Device, per_device: bool) -> None:
    """Which nodes a device names: exactly one way with spec.perDeviceNodeSelection, none
    without it."""
    scope = [
        name
        for name, is_set in (
            ("nodeName", bool(device.node_name)),
            ("nodeSelector", device.node_selector is not None),
            ("allNodes", bool(device.all_nodes)),
        )
        if is_set
    ]
    if per_device:
        if len(scope) != 1:
            found = f"found {', '.join(scope)}" if scope else "none is set"
            why = "with spec.perDeviceNodeSelection"
            report.add(path, f"exactly one of nodeName, nodeSelector, allNodes must be set {why}, {found}")
    else:
        for name in scope:
            report.add(f"{path}.{name}", "may only be set when spec.perDeviceNodeSelection is true")
    if device.node_selector is not None:
        _validate_node_selector(report, f"{path}.nodeSelector", device.node_selector)


SKIP_NODE_OPERATIONS = ("NodePrepareResources", "NodeUnprepareResources", "*")
"""KEP-5945 as merged (kubernetes#139933): the values of `skipNodeOperations`."""


def _validate_skip_node_operations(report: _Report, path: str, operations: list[str]) -> None:
    """KEP-5945 as merged (docs/semantics.md, "KEP-5945 as merged upstream"): each value one of
    `SKIP_NODE_OPERATIONS`, listed once; NodePrepareResources only with NodeUnprepareResources
    or "*" (a pod whose preparation is skipped could otherwise hang in Terminating)."""
    seen: set[str] = set()
    for k, op in enumerate(operations):
        if op not in SKIP_NODE_OPERATIONS:
            allowed = ", ".join(repr(v) for v in SKIP_NODE_OPERATIONS)
            report.add(_idx(path, k), f"unsupported value {op!r}: must be one of {allowed}")
        elif op in seen:
            report.add(_idx(path, k), f"duplicate value {op!r}: the list is a set")
        seen.add(op)
    if "NodePrepareResources" in seen and not seen & {"NodeUnprepareResources", "*"}:
        report.add(
            path,
            "'NodePrepareResources' may only be listed with 'NodeUnprepareResources' or '*' "
            "(otherwise a pod whose preparation was skipped waits for unpreparation by a driver "
            "that is not there)",
        )


def _validate_compatibility_groups(report: _Report, path: str, groups: list[str]) -> None:
    """KEP-5963 (docs/semantics.md, "Device compatibility groups (KEP-5963)"): at most two
    names, each non-empty and named once."""
    report.max_items(path, groups, MAX_COMPATIBILITY_GROUPS)
    seen: set[str] = set()
    for k, name in enumerate(groups):
        if not name:
            report.add(_idx(path, k), "a compatibility group name must not be empty")
        elif name in seen:
            report.add(_idx(path, k), f"duplicate compatibility group {name!r}: each name may appear once")
        seen.add(name)


def _validate_taint(report: _Report, path: str, taint: DeviceTaint) -> None:
    if not taint.key:
        report.add(f"{path}.key", "required: a taint must have a key")
    if not taint.effect:
        report.add(f"{path}.effect", f"required: a taint must have an effect ({_ONE_OF_EFFECTS})")
    elif taint.effect not in TAINT_EFFECTS:
        report.add(f"{path}.effect", f"unsupported taint effect {taint.effect!r}: must be {_ONE_OF_EFFECTS}")


def _plainly_valid(attr: DeviceAttribute) -> bool:
    """An attribute of one int, bool or string (at most `MAX_ATTRIBUTE_STRING_LENGTH` long) and
    nothing else — what almost every attribute is — passes `_validate_attribute` with one
    value: said here without writing its path. Any other goes through the rules."""
    d = attr.__dict__
    get = d.get
    if (
        get("version") is not None
        or get("ints") is not None
        or get("bools") is not None
        or get("strings") is not None
        or get("versions") is not None
    ):
        return False
    string, int_, bool_ = get("string"), get("int_"), get("bool_")
    if string is not None:
        return int_ is None and bool_ is None and len(string) <= MAX_ATTRIBUTE_STRING_LENGTH
    if int_ is not None:
        return bool_ is None and INT64_MIN <= int_ <= INT64_MAX
    return bool_ is not None


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""An int attribute is an int64 (the API server cannot hold a larger one; CEL cannot read it)."""


_ATTRIBUTE_FIELDS = {"int": "int_", "bool": "bool_"}
"""The wire names of `DeviceAttribute`'s value fields whose Python names differ."""


def _validate_attribute(report: _Report, path: str, attr: DeviceAttribute) -> int:
    """Exactly one typed value; string/version limits; returns how many values it holds."""
    set_fields = attr.set_fields()
    if len(set_fields) != 1:
        found = f"found {', '.join(set_fields)}" if set_fields else "none is set"
        report.add(path, f"exactly one of int, bool, string, version (or a list form) must be set, {found}")
    for name in set_fields:
        value = getattr(attr, _ATTRIBUTE_FIELDS.get(name, name))
        if isinstance(value, list):
            fpath = f"{path}.{name}"
            if not value:
                report.add(fpath, "a list attribute must not be empty")
            for k, element in enumerate(value):
                _check_attribute_scalar(report, _idx(fpath, k), name.rstrip("s"), element)
        elif name in ("string", "version", "int"):  # bool values: nothing to check
            _check_attribute_scalar(report, f"{path}.{name}", name, value)
    if not set_fields:
        return 0
    first = getattr(attr, _ATTRIBUTE_FIELDS.get(set_fields[0], set_fields[0]))
    return len(first) if isinstance(first, list) else 1


def _check_attribute_scalar(report: _Report, path: str, kind: str, value: Any) -> None:
    if kind == "int" and not INT64_MIN <= value <= INT64_MAX:
        report.add(path, f"{value} is out of the int64 range")
    if kind in ("string", "version") and len(value) > MAX_ATTRIBUTE_STRING_LENGTH:
        report.add(path, f"must be at most {MAX_ATTRIBUTE_STRING_LENGTH} characters, got {len(value)}")
    if kind == "version" and not is_semver(value):
        report.add(path, f"{value!r} is not a valid semantic version 2.0.0 (e.g. 1.2.3 or 1.0.0-rc.1)")


def _validate_capacity(report: _Report, path: str, cap: DeviceCapacity, multi: bool) -> None:
    if _frac(cap.value) < 0:
        report.add(f"{path}.value", f"must not be negative, got {_q(cap.value)}")
    if cap.request_policy is None:
        return
    ppath = f"{path}.requestPolicy"
    if not multi:
        report.add(ppath, "may only be set on a device with allowMultipleAllocations: true")
    _validate_request_policy(report, ppath, cap.request_policy, cap.value)


def _validate_request_policy(
    report: _Report, path: str, policy: CapacityRequestPolicy, capacity: Quantity
) -> None:
    """KEP-5075 "API Validations" for CapacityRequestPolicy."""
    value = _frac(capacity)
    default = policy.default
    if default is None:
        report.add(f"{path}.default", "required when requestPolicy is set")
    elif _frac(default) < 0:
        report.add(f"{path}.default", f"must not be negative, got {_q(default)}")
    elif _frac(default) > value:
        report.add(f"{path}.default", f"{_q(default)} must not exceed the capacity value {_q(capacity)}")
    has_values = policy.valid_values is not None
    has_range = policy.valid_range is not None
    if has_values and has_range:
        # KEP-5075: "validValues and validRange must not be defined at the same time"; a policy
        # with only a default is valid (API: "must not set more than one ValidRequestValues").
        report.add(path, "validValues and validRange must not both be set")

    if policy.valid_values is not None:
        vpath = f"{path}.validValues"
        values = policy.valid_values
        if not values:
            report.add(vpath, "must not be empty")
        report.max_items(vpath, values, MAX_VALID_VALUES)
        fracs = [_frac(v) for v in values]
        for k, (q, f) in enumerate(zip(values, fracs, strict=True)):
            if f < 0:
                report.add(_idx(vpath, k), f"must not be negative, got {_q(q)}")
            if f > value:
                report.add(_idx(vpath, k), f"{_q(q)} must not exceed the capacity value {_q(capacity)}")
            if k > 0 and f == fracs[k - 1]:
                report.add(_idx(vpath, k), f"duplicate value {_q(q)}: validValues must be unique")
            elif k > 0 and f < fracs[k - 1]:
                before = _q(values[k - 1])
                report.add(
                    _idx(vpath, k), f"validValues must be sorted in ascending order: {_q(q)} after {before}"
                )
        if default is not None and values and _frac(default) not in fracs:
            report.add(f"{path}.default", f"{_q(default)} must be one of validValues")

    rng = policy.valid_range
    if rng is not None:
        rpath = f"{path}.validRange"
        if rng.min is None:
            report.add(f"{rpath}.min", "required when validRange is set")
            return
        lo = _frac(rng.min)
        if lo < 0:
            report.add(f"{rpath}.min", f"must not be negative, got {_q(rng.min)}")
        if lo > value:
            report.add(f"{rpath}.min", f"{_q(rng.min)} must not exceed the capacity value {_q(capacity)}")
        hi = _frac(rng.max) if rng.max is not None else None
        if hi is not None:
            if lo > hi:
                report.add(f"{rpath}.max", f"{_q(rng.max)} must not be less than min {_q(rng.min)}")
            if hi > value:
                report.add(f"{rpath}.max", f"{_q(rng.max)} must not exceed the capacity value {_q(capacity)}")
        step = _frac(rng.step) if rng.step is not None else None
        if step is not None:
            if step <= 0:
                report.add(f"{rpath}.step", f"must be greater than zero, got {_q(rng.step)}")
                step = None
            elif lo + step > value:
                total = f"min + step ({_q(rng.min)} + {_q(rng.step)})"
                report.add(f"{rpath}.step", f"{total} must not exceed the capacity value {_q(capacity)}")
        if step is not None and hi is not None and (hi - lo) % step != 0:
            report.add(
                f"{rpath}.max",
                f"{_q(rng.max)} must be min ({_q(rng.min)}) plus a multiple of step ({_q(rng.step)})",
            )
        if default is not None:
            d = _frac(default)
            if d < lo or (hi is not None and d > hi):
                bounds = f"[{_q(rng.min)}, {_q(rng.max) if rng.max is not None else '...'}]"
                report.add(f"{path}.default", f"{_q(default)} must be within validRange {bounds}")
            elif step is not None and (d - lo) % step != 0:
                report.add(
                    f"{path}.default",
                    f"{_q(default)} must be min ({_q(rng.min)}) plus a multiple of step ({_q(rng.step)})",
                )
