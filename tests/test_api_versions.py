"""Issue #9, rule 2: v1beta1/v1beta2 converted to v1 as the API server does; DeviceTaintRule
v1alpha3/v1beta2 to one shape; unknown apiVersions are errors; PriorityClass is kept.

Inputs follow NVIDIA's k8s-dra-driver-gpu quickstart specs (v1beta1) and the
dra-example-driver ResourceSlices."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.api.load import load_text, parse_object
from dra_solver.api.models import DeviceTaintRule, PriorityClass, ResourceClaimTemplate, ResourceSlice
from dra_solver.errors import ValidationErrors

V1BETA1_TEMPLATE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  namespace: gpu-test
  name: two-gpus
spec:
  spec:
    devices:
      requests:
      - name: gpus
        deviceClassName: gpu.nvidia.com
        allocationMode: ExactCount
        count: 2
        selectors:
        - cel:
            expression: device.attributes['gpu.nvidia.com'].productName == 'A100'
        tolerations:
        - {key: maintenance, operator: Exists, effect: NoSchedule}
      - name: fallback
        firstAvailable:
        - name: big
          deviceClassName: gpu.nvidia.com
          count: 1
"""

V1BETA1_SLICE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: node-1-gpu.nvidia.com-abcde
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  allNodes: false
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes:
        productName: {string: NVIDIA A100-SXM4-40GB}
        index: {int: 0}
      capacity:
        memory: {value: 40Gi}
      taints:
      - {key: maintenance, effect: NoSchedule}
  - name: gpu-1
    basic:
      attributes: {}
      capacity: {}
"""


def one(text: str) -> Any:
    objects, _ = load_text(text, "in.yaml")
    assert len(objects) == 1
    return objects[0]


def test_v1beta1_request_flat_fields_become_exactly() -> None:
    obj = one(V1BETA1_TEMPLATE)
    assert isinstance(obj, ResourceClaimTemplate)
    dumped = obj.dump()
    assert dumped["apiVersion"] == "resource.k8s.io/v1"
    first, second = dumped["spec"]["spec"]["devices"]["requests"]
    assert first == {
        "name": "gpus",
        "exactly": {
            "deviceClassName": "gpu.nvidia.com",
            "allocationMode": "ExactCount",
            "count": 2,
            "selectors": [
                {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'A100'"}}
            ],
            "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    assert second == {
        "name": "fallback",
        "firstAvailable": [{"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 1}],
    }
    assert obj.converted_from == "resource.k8s.io/v1beta1"


def test_v1beta1_unset_values_do_not_create_exactly() -> None:
    """Upstream hasAnyMainRequestFieldsSet: "" / 0 / nil are "not set"."""
    doc = yaml.safe_load(V1BETA1_TEMPLATE)
    doc["spec"]["spec"]["devices"]["requests"][1].update({"deviceClassName": "", "count": 0})
    obj = parse_object(doc)
    assert obj is not None
    assert "exactly" not in obj.dump()["spec"]["spec"]["devices"]["requests"][1]


def test_v1beta1_device_basic_is_flattened() -> None:
    before = yaml.safe_load(V1BETA1_SLICE)
    doc = copy.deepcopy(before)
    obj = parse_object(doc)
    assert isinstance(obj, ResourceSlice)
    assert doc == before, "the input must not be mutated"
    dumped = obj.dump()
    assert "allNodes" not in dumped["spec"], "v1beta1 allNodes: false means unset"
    gpu0, gpu1 = dumped["spec"]["devices"]
    assert gpu0 == {
        "name": "gpu-0",
        "attributes": {"productName": {"string": "NVIDIA A100-SXM4-40GB"}, "index": {"int": 0}},
        "capacity": {"memory": {"value": "40Gi"}},
        "taints": [{"key": "maintenance", "effect": "NoSchedule"}],
    }
    assert gpu1 == {"name": "gpu-1"}, "empty maps are dropped, as upstream"


def test_v1beta1_errors_name_the_version_and_the_written_path() -> None:
    with pytest.raises(ValidationErrors) as info:
        load_text(V1BETA1_SLICE.replace("memory: {value: 40Gi}", "memory: {value: 40Gx}"), "in.yaml")
    (err,) = info.value.errors
    assert err.obj == "ResourceSlice node-1-gpu.nvidia.com-abcde (resource.k8s.io/v1beta1)"
    assert err.field == "spec.devices[0].basic.capacity.memory.value"

    with pytest.raises(ValidationErrors) as info:
        load_text(V1BETA1_SLICE.replace("      taints:", "      taint:"), "in.yaml")
    (err,) = info.value.errors
    assert err.field == "spec.devices[0].basic.taint"
    assert "resource.k8s.io/v1beta1" in err.reason and '"taints"' in err.reason

    with pytest.raises(ValidationErrors) as info:
        load_text(V1BETA1_TEMPLATE.replace("count: 2", "cuont: 2"), "in.yaml")
    (err,) = info.value.errors
    assert err.field == "spec.spec.devices.requests[0].cuont"
    assert '(did you mean "count"?)' in err.reason


def test_v1_shape_in_a_v1beta1_object_is_an_error() -> None:
    text = V1BETA1_TEMPLATE.replace(
        "        deviceClassName: gpu.nvidia.com\n        allocationMode",
        "        exactly: {deviceClassName: gpu.nvidia.com}\n        allocationMode",
    )
    with pytest.raises(ValidationErrors) as info:
        load_text(text, "in.yaml")
    assert [e.field for e in info.value.errors] == ["spec.spec.devices.requests[0].exactly"]


def test_v1beta2_is_read_as_v1() -> None:
    doc = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
    }
    obj = parse_object(doc)
    assert obj is not None and obj.dump() == {**doc, "apiVersion": "resource.k8s.io/v1"}
    assert obj.converted_from == "resource.k8s.io/v1beta2"


@pytest.mark.parametrize(
    "version", ["resource.k8s.io/v9", "resource.k8s.io/v1beat1", "resource.k8s.io/v1alpha3"]
)
def test_unknown_api_version_is_an_error(version: str) -> None:
    text = V1BETA1_SLICE.replace("resource.k8s.io/v1beta1", version)
    with pytest.raises(ValidationErrors) as info:
        load_text(text, "in.yaml")
    (err,) = info.value.errors
    assert err.obj == "ResourceSlice node-1-gpu.nvidia.com-abcde"
    assert err.field == "apiVersion"
    assert repr(version) in err.reason and "resource.k8s.io/v1" in err.reason


TAINT_RULE_V1ALPHA3 = """
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: gpu-maintenance}
spec:
  deviceSelector:
    deviceClassName: gpu.example.com
    driver: gpu.example.com
    pool: node-1
    selectors:
    - cel: {expression: "device.attributes['gpu.example.com'].index == 0"}
  taint: {key: example.com/maintenance, value: "true", effect: NoExecute, timeAdded: "2025-06-01T00:00:00Z"}
"""


def test_device_taint_rule_versions_give_one_shape() -> None:
    cluster = Cluster.from_yaml(TAINT_RULE_V1ALPHA3)
    rule = cluster.taint_rules["gpu-maintenance"]
    assert isinstance(rule, DeviceTaintRule)
    assert (
        rule.spec.device_selector is not None
        and rule.spec.device_selector.device_class_name == "gpu.example.com"
    )
    assert rule.spec.taint.effect == "NoExecute"
    assert rule.converted_from == "resource.k8s.io/v1alpha3"

    v1beta2 = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "device": "gpu-0"},
            "taint": {"key": "k", "effect": "NoSchedule"},
        },
    }
    obj = parse_object(v1beta2)
    assert obj is not None and obj.dump() == v1beta2

    v1beta2["spec"]["deviceSelector"]["deviceClassName"] = "gpu.example.com"  # v1alpha3 only
    with pytest.raises(ValidationErrors) as info:
        parse_object(v1beta2)
    (err,) = info.value.errors
    assert err.field == "spec.deviceSelector.deviceClassName" and "v1beta2" in err.reason


def test_priority_class_is_kept_by_name() -> None:
    cluster = Cluster.from_yaml(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
        "value: 100000\nglobalDefault: false\npreemptionPolicy: Never\ndescription: for GPU jobs\n"
    )
    pc = cluster.priority_classes["high"]
    assert isinstance(pc, PriorityClass) and pc.value == 100000 and pc.preemption_policy == "Never"


def test_device_taint_rule_v1_is_read_with_v1beta2_fields() -> None:
    """Issue #32 §3: DeviceTaintRule served as resource.k8s.io/v1 loads, means what the same
    rule in v1beta2 means, and refuses v1alpha3's selector fields as v1beta2 does."""
    spec = {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
        "taint": {"key": "k", "value": "v", "effect": "NoExecute"},
    }
    rules = {
        version: parse_object(
            {"apiVersion": version, "kind": "DeviceTaintRule", "metadata": {"name": "r"}, "spec": spec}
        )
        for version in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2")
    }
    v1, v1beta2 = rules["resource.k8s.io/v1"], rules["resource.k8s.io/v1beta2"]
    assert isinstance(v1, DeviceTaintRule) and isinstance(v1beta2, DeviceTaintRule)
    assert v1.dump() == v1beta2.dump() and v1.dump()["spec"] == spec
    assert v1.converted_from == "resource.k8s.io/v1" and v1beta2.converted_from is None
    bad = {**spec, "deviceSelector": {**spec["deviceSelector"], "selectors": []}}
    with pytest.raises(ValidationErrors) as info:
        parse_object(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "r"},
                "spec": bad,
            }
        )
    (err,) = info.value.errors
    assert err.field == "spec.deviceSelector.selectors" and "in resource.k8s.io/v1" in err.reason
