"""Issue #9, rule 1: unknown fields are errors (kubectl --validate=strict), real API fields
dra-solver does not interpret are accepted, Pods/Nodes carry what is not interpreted.

Inputs are written in the shape of the dra-example-driver gpu-test specs."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest
import yaml

from dra_solver.api.load import load_text, parse_object
from dra_solver.api.models import Node, Pod
from dra_solver.errors import ValidationErrors

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  namespace: gpu-test1
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          count: 1
"""


def errors_of(text: str) -> list[Any]:
    with pytest.raises(ValidationErrors) as info:
        load_text(text, "in.yaml")
    return info.value.errors


def test_misspelt_count_is_an_error_with_path_and_suggestion() -> None:
    (err,) = errors_of(CLAIM.replace("count: 1", "cuont: 4"))
    assert err.obj == "ResourceClaimTemplate gpu-test1/single-gpu"
    assert err.field == "spec.spec.devices.requests[0].exactly.cuont"
    assert err.reason == 'unknown field "cuont" (did you mean "count"?)'


def test_selector_for_selectors_is_an_error_with_suggestion() -> None:
    text = CLAIM.replace("count: 1", "selector:\n          - cel: {expression: 'true'}")
    (err,) = errors_of(text)
    assert err.field == "spec.spec.devices.requests[0].exactly.selector"
    assert '(did you mean "selectors"?)' in err.reason


def test_unknown_field_without_near_match_lists_known_fields() -> None:
    (err,) = errors_of(CLAIM.replace("      - name: gpu\n", "      - name: gpu\n        zzz: 1\n"))
    assert err.field == "spec.spec.devices.requests[0].zzz"
    assert "known fields here: exactly, firstAvailable, name" in err.reason


def test_every_dra_kind_is_strict() -> None:
    docs = {
        "DeviceClass": {"spec": {"selectors": [], "selecters": []}},
        "ResourceSlice": {"spec": {"driver": "d", "pool": {"name": "p"}, "allNodes": True, "device": []}},
        "ResourceClaim": {"spec": {"device": {}}},
        "DeviceTaintRule": {"spec": {"taint": {"key": "k", "effect": "NoSchedule"}, "taints": []}},
    }
    for kind, body in docs.items():
        version = "resource.k8s.io/v1beta2" if kind == "DeviceTaintRule" else "resource.k8s.io/v1"
        doc = {"apiVersion": version, "kind": kind, "metadata": {"name": "x"}, **body}
        with pytest.raises(ValidationErrors) as info:
            parse_object(doc)
        assert any("unknown field" in e.reason for e in info.value.errors), kind


def test_real_but_uninterpreted_fields_are_accepted() -> None:
    """ObjectMeta bookkeeping (as kubectl get -o yaml prints it), opaque parameters,
    claim status.devices: all real API, none interpreted, all kept."""
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "creationTimestamp": "2025-06-01T10:00:00Z",
            "resourceVersion": "123",
            "uid": "0f6f9b7e",
            "generation": 2,
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}],
            "deletionTimestamp": "2025-06-01T11:00:00Z",
            "generateName": "c-",
            "labels": {"a": "b"},
            "annotations": {"x": "y"},
        },
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {
                            "driver": "gpu.example.com",
                            "parameters": {
                                "apiVersion": "gpu.resource.example.com/v1alpha1",
                                "kind": "GpuConfig",
                                "sharing": {"strategy": "TimeSlicing"},
                            },
                        },
                    }
                ],
            }
        },
        "status": {
            "devices": [
                {
                    "driver": "gpu.example.com",
                    "pool": "n",
                    "device": "gpu-0",
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "data": {"any": 1},
                }
            ]
        },
    }
    before = copy.deepcopy(doc)
    obj = parse_object(doc)
    assert obj is not None
    assert obj.dump() == doc
    assert doc == before, "the input dict must not be mutated"


POD = """
apiVersion: v1
kind: Pod
metadata:
  namespace: gpu-test1
  name: pod0
  labels: {app: pod}
spec:
  priorityClassName: high
  priority: 1000
  schedulerName: default-scheduler
  nodeSelector: {kubernetes.io/os: linux}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: gpu, operator: In, values: ["true"]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [node-9]}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}
  containers:
  - name: ctr0
    image: ubuntu:22.04
    command: ["bash", "-c"]
    args: ["export; trap 'exit 0' TERM; sleep 9999 & wait"]
    resources:
      requests: {cpu: 100m, memory: 1Gi}
      limits: {memory: 1Gi}
      claims:
      - name: gpu
  initContainers:
  - name: init
    image: busybox
    resources: {requests: {cpu: 10m}}
  overhead: {cpu: 250m}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: single-gpu
  volumes: [{name: v, emptyDir: {}}]
status:
  phase: Pending
"""


def test_pod_interpreted_fields_are_typed_and_the_rest_round_trips() -> None:
    doc = yaml.safe_load(POD)
    obj = parse_object(doc)
    assert isinstance(obj, Pod)
    spec = obj.spec
    assert spec.priority == 1000 and spec.priority_class_name == "high"
    assert spec.tolerations[0].toleration_seconds == 30
    required = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    assert required is not None and required.node_selector_terms[0].match_fields[0].key == "metadata.name"
    assert spec.containers[0].resources is not None
    assert spec.containers[0].resources.claims[0].name == "gpu"
    assert spec.overhead["cpu"].as_fraction() == Fraction(1, 4)
    assert obj.dump() == doc


def test_pod_typo_in_an_interpreted_field_is_an_error() -> None:
    (err,) = errors_of(POD.replace("tolerationSeconds: 30", "tolerationSecond: 30"))
    assert err.obj == "Pod gpu-test1/pod0"
    assert err.field == "spec.tolerations[0].tolerationSecond"
    assert '(did you mean "tolerationSeconds"?)' in err.reason
    (err,) = errors_of(POD.replace("resourceClaimTemplateName", "resourceClaimTemplate"))
    assert err.field == "spec.resourceClaims[0].resourceClaimTemplate"


def test_node_fields_are_typed_and_the_rest_round_trips() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"gpu": "true"}},
        "spec": {
            "taints": [
                {"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "2025-01-01T00:00:00Z"}
            ],
            "unschedulable": False,
            "podCIDR": "10.0.0.0/24",
        },
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "capacity": {"cpu": "8"},
            "declaredFeatures": ["DraOptionalNodePreparation"],
            "nodeInfo": {"kubeletVersion": "v1.36.0"},
        },
    }
    obj = parse_object(doc)
    assert isinstance(obj, Node)
    assert obj.spec.taints[0].effect == "NoSchedule"
    assert obj.status.allocatable["memory"].as_fraction() == 32 * 2**30
    assert obj.dump() == doc
    bad = copy.deepcopy(doc)
    bad["spec"]["taints"][0]["efect"] = "NoSchedule"
    with pytest.raises(ValidationErrors) as info:
        parse_object(bad)
    assert any(e.field == "spec.taints[0].efect" for e in info.value.errors)
