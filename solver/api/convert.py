"""apiVersion checks and conversion of older resource.k8s.io versions to v1.

Why before validation: dra-solver has one set of models (v1) and one set of rules; an
object written in `resource.k8s.io/v1beta1` or `v1beta2` (drivers and guides still print
them) must mean exactly what the API server would store for it. So each object is
converted the way the API server converts it (k8s.io/kubernetes pkg/apis/resource/<ver>/
conversion.go plus the generated field-by-field conversion) and only then validated.
An apiVersion this module does not know is an error naming the object: reading
`resource.k8s.io/v9` (or a typo) as if it were v1 would be a silent misreading.

What the conversions are (checked against the upstream types and conversion code):

* v1beta1 DeviceRequest had the ExactCount fields flat on the request (deviceClassName,
  selectors, allocationMode, count, adminAccess, tolerations, capacity). Upstream moves
  them into `exactly` when *any* of them is set (a string that is not empty, a count that
  is not 0, a list or pointer that is not nil); `firstAvailable` is copied unchanged. A
  request with both ends up with both and fails validation, as upstream.
* v1beta1 Device wrapped everything but `name` in `basic` (attributes, capacity,
  consumesCounters, nodeName, nodeSelector, allNodes, taints, bindsToNode,
  bindingConditions, bindingFailureConditions, allowMultipleAllocations,
  nodeAllocatableResourceMappings (1.36), nodeAllocatableResources (1.37)); converted by
  flattening (empty attribute and
  capacity maps are dropped, as upstream).
* v1beta1 ResourceSliceSpec.nodeName and allNodes were plain values: `""` and `false`
  mean "not set" and are dropped (upstream converts them to nil pointers).
* Everything else (DeviceCapacity {value, requestPolicy}, CounterSet, consumesCounters
  {counterSet, counters}, DeviceClass, constraints, config, status) has the same shape in
  v1beta1, v1beta2 and v1; v1beta2 has no custom conversion at all (only the version).
* DeviceTaintRule is read in v1beta2, v1 and v1alpha3. All become one internal shape
  (`models.DeviceTaintRule`, stored and printed as v1beta2); v1alpha3's selector also had
  deviceClassName and CEL selectors, which v1beta2 dropped: they are kept from v1alpha3 and
  rejected in v1beta2 and v1. v1 (issue #32: GA in Kubernetes 1.37) is read with v1beta2's
  fields, field for field: the upstream source checked (k8s.io/api resource/v1 at a 1.37
  development commit) does not register DeviceTaintRule in v1 yet, so no other shape is
  known; v1beta2 stays the stored version, since every server that serves the kind serves it.
* PodGroup and Workload (`scheduling.k8s.io`) are stored as v1beta1 (Kubernetes 1.37) and
  also read as v1alpha2 (1.36, which 1.37 no longer serves, so no upstream conversion exists;
  the fields map one to one): v1alpha2 `spec.podGroupTemplateRef.workload.{workloadName,
  podGroupTemplateName}` is v1beta1 `spec.workloadRef.{workloadName, templateName}`, and
  v1alpha2's `disruptionMode` string `Pod` / `PodGroup` is v1beta1's `{single: {}}` /
  `{all: {}}` (one pod disrupted alone / the group together). Fields v1alpha2 does not have
  (`parentCompositePodGroupName`, `workloadRef`, `preemptionPolicy`, a Workload's
  `compositePodGroupTemplates`) are unknown fields there.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ..errors import InputError, ValidationErrors
from .strict import unknown_field_reason

RESOURCE_V1 = "resource.k8s.io/v1"
RESOURCE_V1BETA1 = "resource.k8s.io/v1beta1"
RESOURCE_V1BETA2 = "resource.k8s.io/v1beta2"
RESOURCE_V1ALPHA3 = "resource.k8s.io/v1alpha3"

_DRA_VERSIONS = (RESOURCE_V1, RESOURCE_V1BETA2, RESOURCE_V1BETA1)
SCHEDULING_V1BETA1 = "scheduling.k8s.io/v1beta1"
SCHEDULING_V1ALPHA2 = "scheduling.k8s.io/v1alpha2"

API_VERSIONS: dict[str, tuple[str, ...]] = {
    "ResourceSlice": _DRA_VERSIONS,
    "DeviceClass": _DRA_VERSIONS,
    "ResourceClaim": _DRA_VERSIONS,
    "ResourceClaimTemplate": _DRA_VERSIONS,
    "DeviceTaintRule": (RESOURCE_V1BETA2, RESOURCE_V1, RESOURCE_V1ALPHA3),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "PodGroup": (SCHEDULING_V1BETA1, SCHEDULING_V1ALPHA2),
    "Workload": (SCHEDULING_V1BETA1, SCHEDULING_V1ALPHA2),
    "Pod": ("v1",),
    "Node": ("v1",),
    "Namespace": ("v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "DaemonSet": ("apps/v1",),
    "Job": ("batch/v1",),
    "CronJob": ("batch/v1",),
}
"""The apiVersions dra-solver reads, per kind (the first is the one it stores)."""

V1BETA1_REQUEST_MAIN_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
V1BETA1_REQUEST_FIELDS = ("name", "firstAvailable", *V1BETA1_REQUEST_MAIN_FIELDS)
V1BETA1_DEVICE_FIELDS = ("name", "basic")
V1BETA1_BASIC_FIELDS = (
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
    "nodeAllocatableResourceMappings",
    "nodeAllocatableResources",
)
V1BETA2_TAINT_SELECTOR_FIELDS = ("driver", "pool", "device")
V1ALPHA2_GROUP_FIELDS = (
    "schedulingPolicy",
    "schedulingConstraints",
    "resourceClaims",
    "disruptionMode",
    "priorityClassName",
    "priority",
)
"""What a v1alpha2 PodGroup spec and a Workload's template both have."""
V1ALPHA2_POD_GROUP_SPEC_FIELDS = ("podGroupTemplateRef", *V1ALPHA2_GROUP_FIELDS)
V1ALPHA2_TEMPLATE_FIELDS = ("name", *V1ALPHA2_GROUP_FIELDS)
V1ALPHA2_WORKLOAD_SPEC_FIELDS = ("controllerRef", "podGroupTemplates")
V1ALPHA2_DISRUPTION_MODES = {"Pod": "single", "PodGroup": "all"}
"""v1alpha2's DisruptionMode string -> the v1beta1 DisruptionMode member it means."""


def object_ref(doc: dict[str, Any]) -> str:
    """`Kind namespace/name` of a raw object, for messages before it is parsed."""
    raw = doc.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "<unnamed>")
    return f"{doc.get('kind', '<no kind>')} {f'{ns}/' if ns else ''}{name}"


def check_api_version(doc: dict[str, Any], source: str = "") -> str:
    """The object's apiVersion, checked against what dra-solver reads for its kind.

    A missing apiVersion is read as the kind's stored version (hand-written test inputs
    often leave it out; nothing can be misread that way). Raises InputError otherwise.
    """
    kind = doc.get("kind")
    supported = API_VERSIONS.get(kind) if isinstance(kind, str) else None
    if supported is None:
        raise InputError(f"kind {kind!r} is not read by dra-solver", obj=object_ref(doc), source=source)
    version = doc.get("apiVersion")
    if version is None:
        return supported[0]
    if version not in supported:
        raise InputError(
            f"unsupported apiVersion {version!r} for {kind}: dra-solver reads {', '.join(supported)}",
            obj=object_ref(doc),
            field="apiVersion",
            source=source,
        )
    return str(version)


def to_internal(doc: dict[str, Any], source: str = "") -> tuple[dict[str, Any], str | None]:
    """The object in the version dra-solver stores, and the version it was converted from
    (None when it needed no conversion). The input dict is never modified."""
    version = check_api_version(doc, source)
    kind = doc["kind"]
    stored = API_VERSIONS[kind][0]
    _check_taint_rule_selector(doc, version, source)
    if version == stored:
        return doc, None
    out = copy.deepcopy(doc)
    out["apiVersion"] = stored
    errors: list[InputError] = []
    ref = f"{object_ref(doc)} ({version})"

    def fail(field: str, reason: str) -> None:
        errors.append(InputError(reason, obj=ref, field=field, source=source))

    if version == RESOURCE_V1BETA1:
        if kind == "ResourceSlice":
            _slice_from_v1beta1(out, fail)
        elif kind == "ResourceClaim":
            _claim_spec_from_v1beta1(out.get("spec"), "spec", fail)
        elif kind == "ResourceClaimTemplate":
            spec = out.get("spec")
            _claim_spec_from_v1beta1(spec.get("spec") if isinstance(spec, dict) else None, "spec.spec", fail)
    elif version == SCHEDULING_V1ALPHA2:
        if kind == "PodGroup":
            _pod_group_from_v1alpha2(out, fail)
        else:
            _workload_from_v1alpha2(out, fail)
    # DeviceTaintRule v1alpha3: the same field names, a superset of v1beta2's selector.
    if errors:
        raise ValidationErrors(errors)
    return out, version


def _check_taint_rule_selector(doc: dict[str, Any], version: str, source: str = "") -> None:
    """v1beta2's (and v1's) DeviceTaintSelector has only driver, pool and device."""
    if doc.get("kind") != "DeviceTaintRule" or version not in (RESOURCE_V1BETA2, RESOURCE_V1):
        return
    spec = doc.get("spec")
    selector = spec.get("deviceSelector") if isinstance(spec, dict) else None
    if not isinstance(selector, dict):
        return
    for key in selector:
        if key not in V1BETA2_TAINT_SELECTOR_FIELDS:
            raise InputError(
                unknown_field_reason(key, V1BETA2_TAINT_SELECTOR_FIELDS, f" in {version}"),
                obj=object_ref(doc),
                field=f"spec.deviceSelector.{key}",
                source=source,
            )


def _slice_from_v1beta1(doc: dict[str, Any], fail: Any) -> None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("nodeName") == "":
        del spec["nodeName"]
    if spec.get("allNodes") is False:
        del spec["allNodes"]
    devices = spec.get("devices")
    if not isinstance(devices, list):
        return
    for i, device in enumerate(devices):
        path = f"spec.devices[{i}]"
        if not isinstance(device, dict):
            continue
        for key in device:
            if key not in V1BETA1_DEVICE_FIELDS:
                fail(
                    f"{path}.{key}",
                    unknown_field_reason(key, V1BETA1_DEVICE_FIELDS, f" in {RESOURCE_V1BETA1}"),
                )
        basic = device.pop("basic", None)
        if basic is None:
            continue
        if not isinstance(basic, dict):
            fail(f"{path}.basic", f"must be an object, got {type(basic).__name__}")
            continue
        for key, value in basic.items():
            if key not in V1BETA1_BASIC_FIELDS:
                fail(
                    f"{path}.basic.{key}",
                    unknown_field_reason(key, V1BETA1_BASIC_FIELDS, f" in {RESOURCE_V1BETA1}"),
                )
            elif key in ("attributes", "capacity") and not value:
                continue  # upstream converts only non-empty maps
            else:
                device[key] = value


def _claim_spec_from_v1beta1(spec: Any, base: str, fail: Any) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return
    for i, request in enumerate(requests):
        if isinstance(request, dict):
            _request_from_v1beta1(request, f"{base}.devices.requests[{i}]", fail)


def _request_from_v1beta1(request: dict[str, Any], path: str, fail: Any) -> None:
    """Flat ExactCount fields -> `exactly`, when any is set (upstream
    hasAnyMainRequestFieldsSet: non-empty string, non-zero count, non-nil list/pointer)."""
    for key in request:
        if key not in V1BETA1_REQUEST_FIELDS:
            fail(
                f"{path}.{key}", unknown_field_reason(key, V1BETA1_REQUEST_FIELDS, f" in {RESOURCE_V1BETA1}")
            )
    main = {key: request.pop(key) for key in V1BETA1_REQUEST_MAIN_FIELDS if key in request}
    is_set = {
        "deviceClassName": lambda v: v not in (None, ""),
        "allocationMode": lambda v: v not in (None, ""),
        "count": lambda v: v not in (None, 0),
    }
    if not any(is_set.get(k, lambda v: v is not None)(v) for k, v in main.items()):
        return
    exactly: dict[str, Any] = {}
    for key, value in main.items():
        if key == "tolerations" and not value:
            continue  # an empty list converts to nil
        if is_set.get(key, lambda v: v is not None)(value):
            exactly[key] = value
    request["exactly"] = exactly


def _unknown_v1alpha2(obj: dict[str, Any], known: tuple[str, ...], path: str, fail: Any) -> None:
    for key in obj:
        if key not in known:
            fail(f"{path}.{key}", unknown_field_reason(key, known, f" in {SCHEDULING_V1ALPHA2}"))


def _disruption_from_v1alpha2(obj: dict[str, Any], path: str, fail: Any) -> None:
    """`disruptionMode: Pod | PodGroup` -> `{single: {}} | {all: {}}`."""
    if "disruptionMode" not in obj or obj["disruptionMode"] is None:
        return
    mode = obj["disruptionMode"]
    member = V1ALPHA2_DISRUPTION_MODES.get(mode) if isinstance(mode, str) else None
    if member is None:
        fail(f"{path}.disruptionMode", f"must be one of Pod, PodGroup, got {mode!r}")
        return
    obj["disruptionMode"] = {member: {}}


def _pod_group_from_v1alpha2(doc: dict[str, Any], fail: Any) -> None:
    """`podGroupTemplateRef.workload` -> `workloadRef`; disruptionMode (module docstring)."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    _unknown_v1alpha2(spec, V1ALPHA2_POD_GROUP_SPEC_FIELDS, "spec", fail)
    _disruption_from_v1alpha2(spec, "spec", fail)
    ref = spec.pop("podGroupTemplateRef", None)
    if ref is None:
        return
    path = "spec.podGroupTemplateRef"
    if not isinstance(ref, dict):
        fail(path, f"must be an object, got {type(ref).__name__}")
        return
    _unknown_v1alpha2(ref, ("workload",), path, fail)
    workload = ref.get("workload")
    if workload is None:
        return
    if not isinstance(workload, dict):
        fail(f"{path}.workload", f"must be an object, got {type(workload).__name__}")
        return
    _unknown_v1alpha2(workload, ("workloadName", "podGroupTemplateName"), f"{path}.workload", fail)
    renamed = {"workloadName": "workloadName", "podGroupTemplateName": "templateName"}
    spec["workloadRef"] = {renamed[k]: v for k, v in workload.items() if k in renamed}


def _workload_from_v1alpha2(doc: dict[str, Any], fail: Any) -> None:
    """A v1alpha2 Workload: the v1beta1 shape but for its templates' disruptionMode."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    _unknown_v1alpha2(spec, V1ALPHA2_WORKLOAD_SPEC_FIELDS, "spec", fail)
    templates = spec.get("podGroupTemplates")
    for i, template in enumerate(templates if isinstance(templates, list) else []):
        if isinstance(template, dict):
            path = f"spec.podGroupTemplates[{i}]"
            _unknown_v1alpha2(template, V1ALPHA2_TEMPLATE_FIELDS, path, fail)
            _disruption_from_v1alpha2(template, path, fail)


_V1BETA1_REQUEST_PATH = re.compile(r"(\.requests\[\d+\])\.exactly(?=[.\[]|$)")
_V1BETA1_DEVICE_PATH = re.compile(
    r"^(spec\.devices\[\d+\])\.(" + "|".join(V1BETA1_BASIC_FIELDS) + r")(?=[.\[]|$)"
)


_V1ALPHA2_REF_PATH = re.compile(r"^spec\.workloadRef(?:\.(workloadName|templateName))?")


def _v1alpha2_ref(match: re.Match[str]) -> str:
    field = {"templateName": ".podGroupTemplateName", "workloadName": ".workloadName"}.get(match[1] or "", "")
    return f"spec.podGroupTemplateRef.workload{field}"


def original_path(path: str, kind: str, version: str | None) -> str:
    """A v1 field path written back in the user's version, so a message points at what
    the user wrote (`spec.devices[0].basic.capacity...` for a v1beta1 slice)."""
    if version == SCHEDULING_V1ALPHA2 and kind == "PodGroup":
        return _V1ALPHA2_REF_PATH.sub(_v1alpha2_ref, path)
    if version != RESOURCE_V1BETA1:
        return path
    if kind == "ResourceSlice":
        return _V1BETA1_DEVICE_PATH.sub(r"\1.basic.\2", path)
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        return _V1BETA1_REQUEST_PATH.sub(r"\1", path)
    return path
