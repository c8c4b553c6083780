"""One test per API validation rule (solver.api.validate).

Each test starts from a minimal *valid* object, breaks exactly one rule, and checks the
error's field path (wire form) and reason text, so that a message a user sees is pinned
down as well as the rule itself.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dra_solver.api.cluster import Cluster
from dra_solver.api.load import parse_object
from dra_solver.api.models import TypeMeta
from dra_solver.api.validate import qualified_name_problem
from dra_solver.cel.checks import validate_all as validate_cluster
from dra_solver.cel.checks import validate_object
from dra_solver.cli.main import app
from dra_solver.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"

# --- minimal valid objects --------------------------------------------------------------


def slice_doc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "driver": "gpu.example.com",
        "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}],
    }
    base.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s1"},
        "spec": base,
    }


def device_slice(**device: Any) -> dict[str, Any]:
    """A valid slice with one device, `device` merged into it."""
    return slice_doc(devices=[{"name": "gpu-0", **device}])


def shared_device(policy: dict[str, Any] | None, value: str = "80Gi", multi: bool = True) -> dict[str, Any]:
    """A slice whose one device has `memory` capacity with the given requestPolicy."""
    memory: dict[str, Any] = {"value": value}
    if policy is not None:
        memory["requestPolicy"] = policy
    device: dict[str, Any] = {"capacity": {"memory": memory}}
    if multi:
        device["allowMultipleAllocations"] = True
    return device_slice(**device)


def claim_doc(requests: list[dict[str, Any]] | None = None, **devices: Any) -> dict[str, Any]:
    if requests is None:
        requests = [exact("gpu")]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"devices": {"requests": requests, **devices}},
    }


def exact(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def sub(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "deviceClassName": "gpu.example.com", **fields}


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def class_doc(*expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def pod_doc(*claims: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "default"},
        "spec": {"resourceClaims": list(claims)},
    }


def obj(doc: dict[str, Any]) -> TypeMeta:
    parsed = parse_object(copy.deepcopy(doc))
    assert parsed is not None
    return parsed


def errors(doc: dict[str, Any]) -> list[InputError]:
    return validate_object(obj(doc))


def assert_only(doc: dict[str, Any], field: str, reason: str) -> InputError:
    """Exactly one error, at `field`, whose reason contains `reason`."""
    errs = errors(doc)
    assert [(e.field, e.reason) for e in errs] == [(field, errs[0].reason if errs else "")], errs
    assert reason in errs[0].reason, errs[0].reason
    return errs[0]


def assert_has(doc: dict[str, Any], field: str, reason: str) -> InputError:
    """An error at `field` whose reason contains `reason` (other errors may follow from it)."""
    errs = errors(doc)
    matching = [e for e in errs if e.field == field and reason in e.reason]
    assert matching, [e.message for e in errs]
    return matching[0]


# --- the baseline -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        slice_doc(),
        shared_device({"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}),
        shared_device({"default": "1Gi", "validValues": ["1Gi", "2Gi", "4Gi"]}),
        claim_doc(),
        class_doc(),
        pod_doc({"name": "gpu", "resourceClaimName": "c1"}),
    ],
    ids=["slice", "range-policy", "values-policy", "claim", "class", "pod"],
)
def test_minimal_objects_are_valid(doc: dict[str, Any]) -> None:
    assert errors(doc) == []


def test_example_cluster_is_valid() -> None:
    cluster = Cluster.from_paths([EXAMPLES / "gpu-cluster.yaml"])
    assert validate_cluster(cluster) == []


def test_error_names_object_field_and_rule() -> None:
    err = assert_only(
        claim_doc([exact("gpu", count=0)]), "spec.devices.requests[0].exactly.count", "at least 1"
    )
    assert err.obj == "ResourceClaim default/c1"
    assert err.message.startswith("ResourceClaim default/c1: spec.devices.requests[0].exactly.count: ")


def test_all_errors_are_reported() -> None:
    doc = claim_doc([exact("Bad_Name", count=0), exact("gpu", allocationMode="Some")])
    fields = [e.field for e in errors(doc)]
    assert fields == [
        "spec.devices.requests[0].name",
        "spec.devices.requests[0].exactly.count",
        "spec.devices.requests[1].exactly.allocationMode",
    ]


# --- metadata ---------------------------------------------------------------------------


def test_metadata_name_required() -> None:
    doc = class_doc()
    doc["metadata"] = {}
    assert_only(doc, "metadata.name", "required")


# --- requests ---------------------------------------------------------------------------


def test_request_names_unique() -> None:
    assert_only(
        claim_doc([exact("gpu"), exact("gpu")]), "spec.devices.requests[1].name", "duplicate request name"
    )


def test_request_name_is_dns_label() -> None:
    assert_only(claim_doc([exact("GPU_0")]), "spec.devices.requests[0].name", "must be a DNS label")


def test_request_name_required() -> None:
    assert_only(claim_doc([exact("")]), "spec.devices.requests[0].name", "required")


def test_request_exactly_one_of_exactly_first_available_neither() -> None:
    assert_only(
        claim_doc([{"name": "gpu"}]), "spec.devices.requests[0]", "exactly one of exactly or firstAvailable"
    )


def test_request_exactly_one_of_exactly_first_available_both() -> None:
    req = {**exact("gpu"), "firstAvailable": [sub("a")]}
    err = assert_only(
        claim_doc([req]), "spec.devices.requests[0]", "exactly one of exactly or firstAvailable"
    )
    assert "both" in err.reason


def test_exact_count_count_at_least_one() -> None:
    assert_only(
        claim_doc([exact("gpu", allocationMode="ExactCount", count=0)]),
        "spec.devices.requests[0].exactly.count",
        "must be at least 1",
    )


def test_all_mode_count_not_set() -> None:
    assert_only(
        claim_doc([exact("gpu", allocationMode="All", count=2)]),
        "spec.devices.requests[0].exactly.count",
        "must not be set when allocationMode is All",
    )


def test_allocation_mode_exact_count_or_all() -> None:
    assert_only(
        claim_doc([exact("gpu", allocationMode="Most")]),
        "spec.devices.requests[0].exactly.allocationMode",
        "must be ExactCount or All",
    )


def test_device_class_name_required() -> None:
    assert_only(
        claim_doc([exact("gpu", deviceClassName="")]),
        "spec.devices.requests[0].exactly.deviceClassName",
        "required",
    )


def test_device_class_name_is_dns_subdomain() -> None:
    assert_only(
        claim_doc([exact("gpu", deviceClassName="GPU Class")]),
        "spec.devices.requests[0].exactly.deviceClassName",
        "DNS subdomain",
    )


def test_requests_at_most_32() -> None:
    doc = claim_doc([exact(f"r{i}") for i in range(33)])
    assert_only(doc, "spec.devices.requests", "at most 32 entries, got 33")


def test_selectors_at_most_32() -> None:
    selectors = [{"cel": {"expression": "true"}}] * 33
    assert_only(
        claim_doc([exact("gpu", selectors=selectors)]),
        "spec.devices.requests[0].exactly.selectors",
        "at most 32 entries",
    )


def test_selector_requires_cel() -> None:
    assert_only(
        claim_doc([exact("gpu", selectors=[{}])]),
        "spec.devices.requests[0].exactly.selectors[0].cel",
        "required",
    )


def test_selector_cel_compiles() -> None:
    doc = claim_doc([exact("gpu", selectors=[{"cel": {"expression": "device.driver =="}}])])
    assert_only(doc, "spec.devices.requests[0].exactly.selectors[0].cel.expression", "CEL compile error")


def test_selector_cel_not_empty() -> None:
    doc = claim_doc([exact("gpu", selectors=[{"cel": {"expression": " "}}])])
    assert_only(doc, "spec.devices.requests[0].exactly.selectors[0].cel.expression", "must not be empty")


def test_tolerations_at_most_16() -> None:
    tolerations = [{"operator": "Exists"}] * 17
    assert_only(
        claim_doc([exact("gpu", tolerations=tolerations)]),
        "spec.devices.requests[0].exactly.tolerations",
        "at most 16 entries",
    )


def test_toleration_effect() -> None:
    doc = claim_doc([exact("gpu", tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}])])
    assert_only(
        doc, "spec.devices.requests[0].exactly.tolerations[0].effect", "None, NoSchedule or NoExecute"
    )


def test_capacity_request_name_is_qualified_name() -> None:
    doc = claim_doc([exact("gpu", capacity={"requests": {"gpu-memory": "1Gi"}})])
    err = assert_only(doc, "spec.devices.requests[0].exactly.capacity.requests.gpu-memory", "C identifier")
    assert "invalid qualified name 'gpu-memory'" in err.reason


def test_capacity_request_path_in_wire_form() -> None:
    doc = claim_doc([exact("gpu"), exact("gpu2", capacity={"requests": {"memory": "-1Gi"}})])
    assert_only(doc, "spec.devices.requests[1].exactly.capacity.requests.memory", "must not be negative")


# --- firstAvailable ---------------------------------------------------------------------


def test_first_available_not_empty() -> None:
    assert_only(
        claim_doc([first_available("gpu")]),
        "spec.devices.requests[0].firstAvailable",
        "at least one subrequest",
    )


def test_first_available_at_most_8() -> None:
    doc = claim_doc([first_available("gpu", *(sub(f"s{i}") for i in range(9)))])
    assert_only(doc, "spec.devices.requests[0].firstAvailable", "at most 8 entries, got 9")


def test_subrequest_names_unique() -> None:
    doc = claim_doc([first_available("gpu", sub("big"), sub("big"))])
    assert_only(doc, "spec.devices.requests[0].firstAvailable[1].name", "duplicate subrequest name 'big'")


def test_subrequest_name_is_dns_label() -> None:
    doc = claim_doc([first_available("gpu", sub("Big.One"))])
    assert_only(doc, "spec.devices.requests[0].firstAvailable[0].name", "must be a DNS label")


def test_subrequest_device_class_name_required() -> None:
    doc = claim_doc([first_available("gpu", sub("big", deviceClassName=""))])
    assert_only(doc, "spec.devices.requests[0].firstAvailable[0].deviceClassName", "required")


def test_subrequest_count_at_least_one() -> None:
    doc = claim_doc([first_available("gpu", sub("big", count=-1))])
    assert_only(doc, "spec.devices.requests[0].firstAvailable[0].count", "at least 1")


# --- constraints ------------------------------------------------------------------------


def test_constraint_exactly_one_of_match_distinct_neither() -> None:
    doc = claim_doc(constraints=[{"requests": ["gpu"]}])
    assert_only(doc, "spec.devices.constraints[0]", "exactly one of matchAttribute or distinctAttribute")


def test_constraint_exactly_one_of_match_distinct_both() -> None:
    constraint = {"matchAttribute": "gpu.example.com/numa", "distinctAttribute": "gpu.example.com/uuid"}
    err = assert_only(
        claim_doc(constraints=[constraint]),
        "spec.devices.constraints[0]",
        "exactly one of matchAttribute or distinctAttribute",
    )
    assert "both" in err.reason


def test_constraint_names_existing_request() -> None:
    doc = claim_doc(constraints=[{"requests": ["gpu", "nic"], "matchAttribute": "gpu.example.com/numa"}])
    assert_only(doc, "spec.devices.constraints[0].requests[1]", "request 'nic' is not defined")


def test_constraint_names_existing_subrequest() -> None:
    doc = claim_doc(
        [first_available("gpu", sub("big"), sub("small"))],
        constraints=[{"requests": ["gpu/big", "gpu/tiny"], "matchAttribute": "gpu.example.com/numa"}],
    )
    assert_only(
        doc, "spec.devices.constraints[0].requests[1]", "subrequest 'tiny' is not defined in request 'gpu'"
    )


def test_constraint_subrequest_of_plain_request() -> None:
    doc = claim_doc(constraints=[{"requests": ["gpu/big"], "matchAttribute": "gpu.example.com/numa"}])
    assert_only(doc, "spec.devices.constraints[0].requests[0]", "has no firstAvailable subrequests")


def test_constraint_attribute_fully_qualified() -> None:
    doc = claim_doc(constraints=[{"distinctAttribute": "numa"}])
    assert_only(doc, "spec.devices.constraints[0].distinctAttribute", "must be fully qualified")


def test_constraint_attribute_qualified_name_id() -> None:
    doc = claim_doc(constraints=[{"matchAttribute": "gpu.example.com/numa-node"}])
    assert_only(doc, "spec.devices.constraints[0].matchAttribute", "C identifier")


def test_constraint_attribute_qualified_name_domain() -> None:
    doc = claim_doc(constraints=[{"matchAttribute": "Example_Com/numa"}])
    assert_only(doc, "spec.devices.constraints[0].matchAttribute", "DNS subdomain")


def test_constraint_names_a_derived_attribute_fully_qualified() -> None:
    """KEP-6080 as merged (kubernetes#140029): derived attributes and the constraints that use
    them have fully qualified names; the bare names of the KEP's first draft are refused."""
    derived = [{"name": "derived/numa", "expression": "device.attributes['gpu.example.com'].numa"}]
    doc = claim_doc(
        [exact("gpu", derivedAttributes=derived)],
        constraints=[{"requests": ["gpu"], "matchAttribute": "derived/numa"}],
    )
    assert errors(doc) == []
    bare = [{"name": "numa", "expression": "device.attributes['gpu.example.com'].numa"}]
    doc = claim_doc(
        [exact("gpu", derivedAttributes=bare)], constraints=[{"requests": ["gpu"], "matchAttribute": "numa"}]
    )
    fields = {e.field for e in errors(doc)}
    assert fields == {
        "spec.devices.requests[0].exactly.derivedAttributes[0].name",
        "spec.devices.constraints[0].matchAttribute",
    }


def test_constraints_at_most_32() -> None:
    doc = claim_doc(constraints=[{"matchAttribute": "gpu.example.com/numa"}] * 33)
    assert_only(doc, "spec.devices.constraints", "at most 32 entries, got 33")


def test_config_names_existing_request() -> None:
    doc = claim_doc(config=[{"requests": ["nic"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}])
    assert_only(doc, "spec.devices.config[0].requests[0]", "request 'nic' is not defined")


# --- KEP-6080 derived attributes --------------------------------------------------------


def derived(
    *names: str, expression: str = "device.attributes['gpu.example.com'].numa"
) -> list[dict[str, str]]:
    return [{"name": n, "expression": expression} for n in names]


def derived_claim(requests: list[dict[str, Any]], *names: str) -> dict[str, Any]:
    """A claim whose constraints use every derived attribute in `names` (as merged upstream
    requires, `test_derived_attribute_must_be_used`)."""
    return claim_doc(requests, constraints=[{"matchAttribute": n} for n in dict.fromkeys(names)])


def test_derived_attributes_at_most_32() -> None:
    names = [f"derived/d{i}" for i in range(33)]
    doc = derived_claim([exact("gpu", derivedAttributes=derived(*names))], *names[:32])
    assert_has(doc, "spec.devices.requests[0].exactly.derivedAttributes", "at most 32 entries, got 33")


def test_derived_attributes_at_most_32_per_subrequest() -> None:
    names = [f"derived/d{i}" for i in range(33)]
    doc = derived_claim([first_available("gpu", sub("a", derivedAttributes=derived(*names)))], *names[:32])
    assert_has(doc, "spec.devices.requests[0].firstAvailable[0].derivedAttributes", "at most 32 entries")


def test_derived_attribute_must_be_used() -> None:
    """KEP-6080 as merged: a derived attribute no matchAttribute/distinctAttribute names is
    refused (kubernetes#140029)."""
    doc = claim_doc([exact("gpu", derivedAttributes=derived("derived/numa"))])
    assert_only(doc, "spec.devices.requests[0].exactly.derivedAttributes[0].name", "is not used by any")


def test_derived_attribute_names_unique() -> None:
    doc = derived_claim(
        [exact("gpu", derivedAttributes=derived("derived/numa", "derived/numa"))], "derived/numa"
    )
    assert_only(
        doc, "spec.devices.requests[0].exactly.derivedAttributes[1].name", "duplicate derived attribute"
    )


def test_derived_attribute_name_is_qualified_name() -> None:
    doc = derived_claim([exact("gpu", derivedAttributes=derived("derived/bad name!"))], "derived/bad name!")
    assert_has(doc, "spec.devices.requests[0].exactly.derivedAttributes[0].name", "invalid qualified name")


def test_derived_attribute_expression_at_most_10ki() -> None:
    long = "device.driver == '" + "x" * (10 * 1024) + "'"
    doc = derived_claim([exact("gpu", derivedAttributes=derived("derived/d", expression=long))], "derived/d")
    assert_only(doc, "spec.devices.requests[0].exactly.derivedAttributes[0].expression", "at most 10 Ki")


def test_derived_attribute_expression_compiles() -> None:
    doc = derived_claim(
        [exact("gpu", derivedAttributes=derived("derived/d", expression="device.attributes["))], "derived/d"
    )
    assert_only(doc, "spec.devices.requests[0].exactly.derivedAttributes[0].expression", "CEL compile error")


# --- cluster-level: DeviceClass must exist ----------------------------------------------


def test_missing_device_class() -> None:
    cluster = Cluster.from_objects([claim_doc([exact("gpu", deviceClassName="nope")])])
    errs = validate_cluster(cluster)
    assert [(e.obj, e.field) for e in errs] == [
        ("ResourceClaim default/c1", "spec.devices.requests[0].exactly.deviceClassName")
    ]
    assert "DeviceClass 'nope' not found" in errs[0].reason


def test_missing_device_class_in_subrequest() -> None:
    cluster = Cluster.from_objects(
        [class_doc(), claim_doc([first_available("gpu", sub("a"), sub("b", deviceClassName="x"))])]
    )
    errs = validate_cluster(cluster)
    assert [e.field for e in errs] == ["spec.devices.requests[0].firstAvailable[1].deviceClassName"]


def test_present_device_class() -> None:
    assert validate_cluster(Cluster.from_objects([class_doc(), claim_doc()])) == []


def test_template_fields_are_under_spec_spec() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t1", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [exact("gpu", count=0)]}}},
    }
    err = assert_only(template, "spec.spec.devices.requests[0].exactly.count", "at least 1")
    assert err.obj == "ResourceClaimTemplate default/t1"


# --- DeviceClass ------------------------------------------------------------------------


def test_class_selector_cel_compiles() -> None:
    assert_only(class_doc("device.driver == "), "spec.selectors[0].cel.expression", "CEL compile error")


def test_class_selectors_at_most_32() -> None:
    assert_only(class_doc(*["true"] * 33), "spec.selectors", "at most 32 entries")


def test_selector_expression_at_most_10ki() -> None:
    assert_only(class_doc("'" + "x" * 10240 + "' == ''"), "spec.selectors[0].cel.expression", "at most 10 Ki")


# --- Pod --------------------------------------------------------------------------------


def test_pod_claim_exactly_one_source_neither() -> None:
    assert_only(
        pod_doc({"name": "gpu"}),
        "spec.resourceClaims[0]",
        "exactly one of resourceClaimName, resourceClaimTemplateName",
    )


def test_pod_claim_exactly_one_source_both() -> None:
    doc = pod_doc({"name": "gpu", "resourceClaimName": "c1", "resourceClaimTemplateName": "t1"})
    err = assert_only(
        doc, "spec.resourceClaims[0]", "exactly one of resourceClaimName, resourceClaimTemplateName"
    )
    assert "both" in err.reason


# --- ResourceSlice ----------------------------------------------------------------------


def test_slice_driver_required() -> None:
    assert_only(slice_doc(driver=""), "spec.driver", "required")


def test_slice_driver_is_dns_subdomain() -> None:
    assert_only(slice_doc(driver="GPU_driver"), "spec.driver", "DNS subdomain")


def test_slice_pool_name_required() -> None:
    assert_only(
        slice_doc(pool={"name": "", "generation": 1, "resourceSliceCount": 1}), "spec.pool.name", "required"
    )


def test_slice_pool_generation_not_negative() -> None:
    doc = slice_doc(pool={"name": "p", "generation": -1, "resourceSliceCount": 1})
    assert_only(doc, "spec.pool.generation", "must not be negative")


def test_slice_resource_slice_count_at_least_one() -> None:
    doc = slice_doc(pool={"name": "p", "generation": 0, "resourceSliceCount": 0})
    assert_only(doc, "spec.pool.resourceSliceCount", "must be at least 1")


def test_slice_exactly_one_node_scope_none() -> None:
    doc = slice_doc()
    del doc["spec"]["nodeName"]
    err = assert_only(doc, "spec", "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection")
    assert "none is set" in err.reason


def test_slice_exactly_one_node_scope_two() -> None:
    err = assert_only(slice_doc(allNodes=True), "spec", "exactly one of nodeName, nodeSelector, allNodes")
    assert "found nodeName, allNodes" in err.reason


def test_slice_node_selector_one_term() -> None:
    selector = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]
        * 2
    }
    doc = slice_doc(nodeSelector=selector)
    del doc["spec"]["nodeName"]
    assert_only(doc, "spec.nodeSelector.nodeSelectorTerms", "exactly one term")


def test_slice_devices_xor_shared_counters() -> None:
    doc = slice_doc(sharedCounters=[{"name": "mem", "counters": {"memory": {"value": "8Gi"}}}])
    assert_only(doc, "spec", "only one of devices or sharedCounters")


SLICE_1_33 = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 40Gi}}
  devices:
  - name: gpu-0-mig-1g
    basic:
      consumesCounters:
      - counterSet: gpu-0-counters
        counters: {memory: {value: 10Gi}}
"""


def test_a_slice_of_the_1_33_layout_is_told_where_its_counters_go_since_1_34(tmp_path: Path) -> None:
    # Kubernetes 1.33 (KEP-4815 alpha) kept a pool's devices and sharedCounters in one slice;
    # since 1.34 only one of them may be set per slice (k8s.io/api resource types: "Only one of
    # Devices and SharedCounters can be set in a ResourceSlice").
    path = tmp_path / "slice.yaml"
    path.write_text(SLICE_1_33)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    text = " ".join(result.stderr.split())
    assert (
        "ResourceSlice node-1-gpus (resource.k8s.io/v1beta1): spec: only one of devices or sharedCounters "
        "may be set, found both: this is the layout of Kubernetes 1.33, where devices and the counter "
        "sets they consume shared a slice; since 1.34 sharedCounters go in a slice of their own (same "
        "driver and pool, no devices), and the devices' consumesCounters name its counter sets"
    ) in text


def test_slice_device_names_unique() -> None:
    doc = slice_doc(devices=[{"name": "gpu-0"}, {"name": "gpu-0"}])
    assert_only(doc, "spec.devices[1].name", "duplicate device name 'gpu-0'")


def test_slice_device_name_is_dns_label() -> None:
    assert_only(slice_doc(devices=[{"name": "GPU0"}]), "spec.devices[0].name", "must be a DNS label")


def test_slice_devices_at_most_128() -> None:
    doc = slice_doc(devices=[{"name": f"d{i}"} for i in range(129)])
    assert_only(doc, "spec.devices", "at most 128 devices, got 129")


def test_slice_devices_at_most_64_with_taints() -> None:
    devices: list[dict[str, Any]] = [{"name": f"d{i}"} for i in range(65)]
    devices[0]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    assert_only(slice_doc(devices=devices), "spec.devices", "at most 64 devices when a device uses taints")


def test_device_node_fields_need_per_device_node_selection() -> None:
    assert_only(device_slice(nodeName="node-1"), "spec.devices[0].nodeName", "perDeviceNodeSelection")


def test_device_node_scope_required_with_per_device_node_selection() -> None:
    doc = slice_doc(perDeviceNodeSelection=True, devices=[{"name": "a", "nodeName": "node-1"}, {"name": "b"}])
    del doc["spec"]["nodeName"]
    assert_only(doc, "spec.devices[1]", "exactly one of nodeName, nodeSelector, allNodes")


def test_device_consumes_counters_at_most_2() -> None:
    consumes = [{"counterSet": f"set-{i}", "counters": {"memory": {"value": "1Gi"}}} for i in range(3)]
    assert_only(
        device_slice(consumesCounters=consumes), "spec.devices[0].consumesCounters", "at most 2 entries"
    )


def test_taint_effect() -> None:
    doc = device_slice(taints=[{"key": "broken", "effect": "NoPlacement"}])
    assert_only(doc, "spec.devices[0].taints[0].effect", "must be None, NoSchedule or NoExecute")


def test_attributes_and_capacities_at_most_32() -> None:
    attributes = {f"a{i}": {"int": i} for i in range(20)}
    capacity = {f"c{i}": {"value": "1"} for i in range(13)}
    doc = device_slice(attributes=attributes, capacity=capacity)
    assert_only(doc, "spec.devices[0]", "at most 32 attributes and capacities combined, got 33")


def test_attribute_name_is_qualified_name() -> None:
    doc = device_slice(attributes={"numa-node": {"int": 0}})
    assert_only(doc, "spec.devices[0].attributes.numa-node", "C identifier")


def test_attribute_name_id_at_most_32() -> None:
    name = "a" * 33
    assert_only(
        device_slice(attributes={name: {"int": 0}}), f"spec.devices[0].attributes.{name}", "at most 32"
    )


def test_attribute_name_domain_path_is_quoted() -> None:
    doc = device_slice(attributes={"Bad_Domain/numa": {"int": 0}})
    assert_only(doc, 'spec.devices[0].attributes["Bad_Domain/numa"]', "DNS subdomain")


def test_capacity_name_is_qualified_name() -> None:
    doc = device_slice(capacity={"gpu.example.com/": {"value": "1"}})
    assert_only(doc, 'spec.devices[0].capacity["gpu.example.com/"]', "must not be empty")


def test_attribute_exactly_one_value_none() -> None:
    err = assert_only(
        device_slice(attributes={"numa": {}}), "spec.devices[0].attributes.numa", "exactly one of"
    )
    assert "none is set" in err.reason


def test_attribute_exactly_one_value_two() -> None:
    doc = device_slice(attributes={"numa": {"int": 0, "string": "0"}})
    err = assert_only(doc, "spec.devices[0].attributes.numa", "exactly one of")
    assert "found int, string" in err.reason


def test_attribute_string_at_most_64() -> None:
    doc = device_slice(attributes={"model": {"string": "x" * 65}})
    assert_only(doc, "spec.devices[0].attributes.model.string", "at most 64 characters, got 65")


def test_attribute_version_is_semver() -> None:
    doc = device_slice(attributes={"driverVersion": {"version": "v1.2"}})
    assert_only(doc, "spec.devices[0].attributes.driverVersion.version", "not a valid semantic version")


@pytest.mark.parametrize("version", ["1.2.3", "1.0.0-rc.1", "2.0.0+build.5", "1.0.0-alpha-a.b-c+001"])
def test_attribute_version_valid_semver(version: str) -> None:
    assert errors(device_slice(attributes={"driverVersion": {"version": version}})) == []


def test_attribute_version_at_most_64() -> None:
    doc = device_slice(attributes={"driverVersion": {"version": "1.2.3-" + "a" * 60}})
    assert_only(doc, "spec.devices[0].attributes.driverVersion.version", "at most 64 characters")


def test_binding_conditions_at_most_4() -> None:
    doc = device_slice(bindsToNode=True, bindingConditions=["a", "b", "c", "d", "e"])
    assert_only(doc, "spec.devices[0].bindingConditions", "at most 4 entries")


# --- KEP-5075 request policy ------------------------------------------------------------

POLICY = "spec.devices[0].capacity.memory.requestPolicy"


def test_request_policy_only_with_allow_multiple_allocations() -> None:
    doc = shared_device({"default": "10Gi", "validRange": {"min": "10Gi"}}, multi=False)
    assert_only(doc, POLICY, "allowMultipleAllocations: true")


def test_request_policy_default_required() -> None:
    assert_only(
        shared_device({"validRange": {"min": "10Gi"}}),
        f"{POLICY}.default",
        "required when requestPolicy is set",
    )


def test_request_policy_valid_values_and_valid_range_not_both() -> None:
    doc = shared_device({"default": "10Gi", "validValues": ["10Gi"], "validRange": {"min": "10Gi"}})
    assert_only(doc, POLICY, "validValues and validRange must not both be set")


def test_request_policy_with_only_a_default_is_valid() -> None:
    assert errors(shared_device({"default": "10Gi"})) == []


def test_request_policy_default_in_valid_values() -> None:
    doc = shared_device({"default": "3Gi", "validValues": ["1Gi", "2Gi", "4Gi"]})
    assert_only(doc, f"{POLICY}.default", "must be one of validValues")


def test_valid_values_sorted_ascending() -> None:
    doc = shared_device({"default": "1Gi", "validValues": ["1Gi", "4Gi", "2Gi"]})
    assert_only(doc, f"{POLICY}.validValues[2]", "sorted in ascending order")


def test_valid_values_unique() -> None:
    doc = shared_device({"default": "1Gi", "validValues": ["1Gi", "2Gi", "2048Mi"]})
    assert_only(doc, f"{POLICY}.validValues[2]", "must be unique")


def test_valid_values_at_most_10() -> None:
    doc = shared_device({"default": "1Gi", "validValues": [f"{i}Gi" for i in range(1, 12)]})
    assert_only(doc, f"{POLICY}.validValues", "at most 10 entries, got 11")


def test_valid_values_within_capacity() -> None:
    doc = shared_device({"default": "1Gi", "validValues": ["1Gi", "100Gi"]})
    assert_only(doc, f"{POLICY}.validValues[1]", "must not exceed the capacity value 80Gi")


def test_request_policy_default_in_valid_range() -> None:
    doc = shared_device({"default": "5Gi", "validRange": {"min": "10Gi", "max": "40Gi"}})
    assert_only(doc, f"{POLICY}.default", "must be within validRange [10Gi, 40Gi]")


def test_request_policy_default_is_min_plus_multiple_of_step() -> None:
    doc = shared_device({"default": "15Gi", "validRange": {"min": "10Gi", "step": "10Gi"}})
    assert_only(doc, f"{POLICY}.default", "must be min (10Gi) plus a multiple of step (10Gi)")


def test_valid_range_min_le_max() -> None:
    doc = shared_device({"default": "30Gi", "validRange": {"min": "30Gi", "max": "20Gi"}})
    assert_has(doc, f"{POLICY}.validRange.max", "must not be less than min 30Gi")


def test_valid_range_max_is_min_plus_multiple_of_step() -> None:
    doc = shared_device({"default": "10Gi", "validRange": {"min": "10Gi", "max": "45Gi", "step": "10Gi"}})
    assert_only(doc, f"{POLICY}.validRange.max", "must be min (10Gi) plus a multiple of step (10Gi)")


def test_valid_range_min_within_capacity() -> None:
    doc = shared_device({"default": "90Gi", "validRange": {"min": "90Gi"}})
    assert_has(doc, f"{POLICY}.validRange.min", "must not exceed the capacity value 80Gi")


def test_valid_range_max_within_capacity() -> None:
    doc = shared_device({"default": "10Gi", "validRange": {"min": "10Gi", "max": "90Gi", "step": "10Gi"}})
    assert_only(doc, f"{POLICY}.validRange.max", "must not exceed the capacity value 80Gi")


def test_valid_range_min_plus_step_within_capacity() -> None:
    doc = shared_device({"default": "10Gi", "validRange": {"min": "10Gi", "step": "75Gi"}})
    assert_only(
        doc, f"{POLICY}.validRange.step", "min + step (10Gi + 75Gi) must not exceed the capacity value"
    )


def test_valid_range_min_required() -> None:
    assert_only(
        shared_device({"default": "10Gi", "validRange": {"max": "20Gi"}}),
        f"{POLICY}.validRange.min",
        "required",
    )


def test_valid_range_step_positive() -> None:
    doc = shared_device({"default": "10Gi", "validRange": {"min": "10Gi", "step": "0"}})
    assert_only(doc, f"{POLICY}.validRange.step", "greater than zero")


def test_request_policy_exact_fractions() -> None:
    """Steps are checked exactly (no float drift): 0.3 = 0.1 + 2 x 0.1."""
    doc = shared_device(
        {"default": "300m", "validRange": {"min": "100m", "max": "900m", "step": "100m"}}, value="1"
    )
    assert errors(doc) == []


# --- qualified names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kwargs", "problem"),
    [
        ("numa", {}, None),
        ("gpu.example.com/numa", {}, None),
        ("gpu.example.com/numa", {"fully_qualified": True}, None),
        ("numa", {"fully_qualified": True}, "fully qualified"),
        ("shared-numa-node", {}, "C identifier"),
        ("_x9", {}, None),
        ("9x", {}, "C identifier"),
        ("a" * 32, {}, None),
        ("a" * 33, {}, "at most 32"),
        ("d" * 64 + ".com/x", {}, "DNS subdomain"),
        ("/x", {}, "domain before '/'"),
        ("a/b/c", {}, "DNS subdomain"),
        ("", {}, "must not be empty"),
    ],
)
def test_qualified_name(name: str, kwargs: dict[str, bool], problem: str | None) -> None:
    got = qualified_name_problem(name, **kwargs)
    if problem is None:
        assert got is None
    else:
        assert got is not None and problem in got


def test_selector_must_evaluate_to_bool() -> None:
    assert_only(class_doc("device.driver"), "spec.selectors[0].cel.expression", "must evaluate to bool")


def test_derived_attribute_may_be_any_scalar() -> None:
    doc = derived_claim(
        [exact("gpu", derivedAttributes=derived("derived/d", expression="device.driver"))], "derived/d"
    )
    assert errors(doc) == []


def test_cel_compile_error_is_one_line() -> None:
    err = assert_only(class_doc("device.driver =="), "spec.selectors[0].cel.expression", "CEL compile error")
    assert "\n" not in err.reason
    assert "1:17" in err.reason


# --- KEP-5945 skipNodeOperations values and KEP-5963 compatibility groups ----------------


@pytest.mark.parametrize(
    "operations",
    [
        ["*"],
        ["NodeUnprepareResources"],
        ["NodePrepareResources", "NodeUnprepareResources"],
        ["NodePrepareResources", "*"],
    ],
)
def test_skip_node_operations_valid_values(operations: list[str]) -> None:
    assert errors(slice_doc(skipNodeOperations=operations)) == []


@pytest.mark.parametrize(
    ("operations", "field", "reason"),
    [
        (
            ["All"],
            "spec.skipNodeOperations[0]",
            "unsupported value 'All': must be one of 'NodePrepareResources'",
        ),
        (["*", "*"], "spec.skipNodeOperations[1]", "duplicate value '*'"),
        (
            ["NodePrepareResources"],
            "spec.skipNodeOperations",
            "may only be listed with 'NodeUnprepareResources'",
        ),
    ],
)
def test_skip_node_operations_invalid_values(operations: list[str], field: str, reason: str) -> None:
    """As upstream's validation of the merged field (docs/semantics.md, "KEP-5945 as merged upstream")."""
    err = assert_only(slice_doc(skipNodeOperations=operations), field, reason)
    assert "ResourceSlice s1" in err.message


def _groups_slice(groups: list[str]) -> dict[str, Any]:
    return device_slice(
        consumesCounters=[
            {"counterSet": "gpu-0", "counters": {"mem": {"value": "1"}}, "compatibilityGroups": groups}
        ]
    )


def test_compatibility_groups_valid() -> None:
    assert errors(_groups_slice(["mig", "vgpu"])) == []
    assert errors(_groups_slice([])) == []


@pytest.mark.parametrize(
    ("groups", "field", "reason"),
    [
        (
            ["a", "b", "c"],
            "spec.devices[0].consumesCounters[0].compatibilityGroups",
            "at most 2 entries, got 3",
        ),
        (
            ["mig", "mig"],
            "spec.devices[0].consumesCounters[0].compatibilityGroups[1]",
            "duplicate compatibility group 'mig'",
        ),
        ([""], "spec.devices[0].consumesCounters[0].compatibilityGroups[0]", "must not be empty"),
    ],
)
def test_compatibility_groups_invalid(groups: list[str], field: str, reason: str) -> None:
    """KEP-5963 as merged: at most two names per entry, each once (docs/semantics.md, "Device
    compatibility groups (KEP-5963)")."""
    assert_only(_groups_slice(groups), field, reason)


def test_device_name_is_not_a_cel_field() -> None:
    """Upstream's device has no name (docs/semantics.md, "KEP-6080 as merged upstream"): validate
    refuses a selector reading it, with cel-go's words."""
    assert_has(
        class_doc("device.name == 'gpu-0'"), "spec.selectors[0].cel.expression", "undefined field 'name'"
    )
