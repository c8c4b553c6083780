"""Mutation tests of the checker (issue #27 §5): one valid cluster state after a plan, and for
every rule kind in `KINDS` one mutation that breaks exactly that rule.

Why: a checker that approves everything passes every test that only feeds it correct plans.
Each mutation below changes one thing of a state the checker accepts (a pod onto a tainted
node, a result onto another device, a counter set shrunk, ...) and asserts that the checker
reports that rule's kind and no other. `test_every_kind_has_a_mutation` makes a new rule
without a mutation fail the suite. The state is written as data, not produced by a planner,
so the checker is tested on its own reading of the rules.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.check import KINDS, PodPlacement, Violation, check_cluster, check_placements
from dra_solver.gates import FeatureGates

Doc = dict[str, Any]

STATE = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1, zone: a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2, zone: b}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: xgpu}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: shared}
spec:
  selectors:
  - cel: {expression: 'device.driver == "mem.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: part}
spec:
  selectors:
  - cel: {expression: 'device.driver == "part.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: small}
spec:
  selectors:
  - cel: {expression: 'device.driver == "small.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  pool: {name: node-1-gpus, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - {name: gpu-0, attributes: {model: {string: A100}, numa: {int: 0}}}
  - {name: gpu-1, attributes: {model: {string: A100}, numa: {int: 0}}}
  - {name: gpu-2, attributes: {model: {string: A100}, numa: {int: 1}}}
  - {name: gpu-3, attributes: {model: {string: A100}, numa: {int: 2}}}
  - {name: gpu-4, attributes: {model: {string: A100}, numa: {int: 3}}}
  - {name: gpu-5, attributes: {model: {string: A100}, numa: {int: 3}}}
  - {name: gpu-6, attributes: {model: {string: A100}, numa: {int: 1}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-mem}
spec:
  driver: mem.example.com
  pool: {name: node-1-mem, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: mem-0
    allowMultipleAllocations: true
    capacity: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-part-counters}
spec:
  driver: part.example.com
  pool: {name: node-1-part, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: set
    counters: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-part-devices}
spec:
  driver: part.example.com
  pool: {name: node-1-part, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: half-0
    consumesCounters: [{counterSet: set, counters: {memory: {value: 20Gi}}}]
  - name: half-1
    consumesCounters: [{counterSet: set, counters: {memory: {value: 20Gi}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c-pair, namespace: default}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu
        count: 2
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
    constraints:
    - {matchAttribute: gpu.example.com/numa}
status:
  allocation:
    devices:
      results:
      - {request: gpus, driver: gpu.example.com, pool: node-1-gpus, device: gpu-0}
      - {request: gpus, driver: gpu.example.com, pool: node-1-gpus, device: gpu-1}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: pod-a, uid: uid-a}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c-distinct, namespace: default}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu, count: 2}
    constraints:
    - {distinctAttribute: gpu.example.com/numa}
status:
  allocation:
    devices:
      results:
      - {request: g, driver: gpu.example.com, pool: node-1-gpus, device: gpu-2}
      - {request: g, driver: gpu.example.com, pool: node-1-gpus, device: gpu-3}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: pod-b, uid: uid-b}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c-shared, namespace: default}
spec:
  devices:
    requests:
    - name: m
      exactly:
        deviceClassName: shared
        capacity: {requests: {memory: 10Gi}}
status:
  allocation:
    devices:
      results:
      - {request: m, driver: mem.example.com, pool: node-1-mem, device: mem-0,
         shareID: 0a8b3c3e-1111-4e0e-8f6f-000000000001, consumedCapacity: {memory: 10Gi}}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor:
  - {resource: pods, name: pod-a, uid: uid-a}
  - {resource: pods, name: pod-b, uid: uid-b}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c-mem2, namespace: default}
spec:
  devices:
    requests:
    - name: m
      exactly:
        deviceClassName: shared
        capacity: {requests: {memory: 20Gi}}
status:
  allocation:
    devices:
      results:
      - {request: m, driver: mem.example.com, pool: node-1-mem, device: mem-0,
         shareID: 0a8b3c3e-1111-4e0e-8f6f-000000000002, consumedCapacity: {memory: 20Gi}}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: pod-c, uid: uid-c}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c-part, namespace: default}
spec:
  devices:
    requests:
    - name: p
      exactly: {deviceClassName: part, count: 2}
status:
  allocation:
    devices:
      results:
      - {request: p, driver: part.example.com, pool: node-1-part, device: half-0}
      - {request: p, driver: part.example.com, pool: node-1-part, device: half-1}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: pod-c, uid: uid-c}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: pod-e-extended-resources
  namespace: default
  annotations: {resource.kubernetes.io/extended-resource-claim: "true"}
spec:
  devices:
    requests:
    - name: container-0-request-0
      exactly: {deviceClassName: xgpu, allocationMode: ExactCount, count: 1}
status:
  allocation:
    devices:
      results:
      - {request: container-0-request-0, driver: gpu.example.com, pool: node-1-gpus, device: gpu-4}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: pod-e, uid: uid-e}]
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g1, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: zone}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-a, namespace: default, uid: uid-a}
spec:
  nodeName: node-1
  containers: [{name: main, resources: {requests: {cpu: 500m}}}]
  resourceClaims: [{name: pair, resourceClaimName: c-pair}, {name: mem, resourceClaimName: c-shared}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-b, namespace: default, uid: uid-b}
spec:
  nodeName: node-1
  containers: [{name: main, resources: {requests: {cpu: 500m}}}]
  resourceClaims: [{name: d, resourceClaimName: c-distinct}, {name: mem, resourceClaimName: c-shared}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-c, namespace: default, uid: uid-c}
spec:
  nodeName: node-1
  containers: [{name: main, resources: {requests: {cpu: 500m}}}]
  resourceClaims: [{name: m, resourceClaimName: c-mem2}, {name: p, resourceClaimName: c-part}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-e, namespace: default, uid: uid-e}
spec:
  nodeName: node-1
  containers:
  - name: main
    resources: {requests: {cpu: 500m, example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}
status:
  phase: Running
  extendedResourceClaimStatus:
    resourceClaimName: pod-e-extended-resources
    requestMappings:
    - {containerName: main, resourceName: example.com/gpu, requestName: container-0-request-0}
---
apiVersion: v1
kind: Pod
metadata: {name: gang-0, namespace: default, uid: uid-g0}
spec:
  nodeName: node-1
  schedulingGroup: {podGroupName: g1}
  containers: [{name: main, resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: gang-1, namespace: default, uid: uid-g1}
spec:
  nodeName: node-1
  schedulingGroup: {podGroupName: g1}
  containers: [{name: main, resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-p, namespace: default, uid: uid-p}
spec:
  nodeName: node-1
  containers: [{name: main, resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
"""

MANY = "\n".join(f"  - name: m-{i}" for i in range(33))
SMALL = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node-1-many}}
spec:
  driver: small.example.com
  pool: {{name: node-1-many, generation: 1, resourceSliceCount: 1}}
  nodeName: node-1
  devices:
{MANY}
"""


def _docs() -> list[Doc]:
    """The state's documents, a fresh copy each call (a mutation changes its own)."""
    return copy.deepcopy(_parsed())


@functools.cache
def _parsed() -> list[Doc]:
    """The state's documents, read once per test process: a copy of them costs a sixtieth of
    reading the YAML again (1.2 ms against 73, busy), and each test reads them for each
    mutation. Never given out: `_docs` copies."""
    return [d for d in yaml.safe_load_all(STATE + "---\n" + SMALL) if d]


def _find(docs: list[Doc], kind: str, name: str) -> Doc:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def _results(docs: list[Doc], claim: str) -> list[Doc]:
    return _find(docs, "ResourceClaim", claim)["status"]["allocation"]["devices"]["results"]


def _gpu(device: str) -> Doc:
    return {"request": "gpus", "driver": "gpu.example.com", "pool": "node-1-gpus", "device": device}


def _small(request: str, device: str) -> Doc:
    return {"request": request, "driver": "small.example.com", "pool": "node-1-many", "device": device}


# --- the mutations: one per kind, each changing one thing ------------------------------------

Mutation = Callable[[list[Doc]], None]


def _unknown_device(docs: list[Doc]) -> None:
    _results(docs, "c-pair")[1]["device"] = "gpu-9"


def _request(docs: list[Doc]) -> None:
    _results(docs, "c-part").append(_small("nope", "m-0"))


def _count(docs: list[Doc]) -> None:
    _results(docs, "c-distinct").append({**_gpu("gpu-5"), "request": "g"})


def _duplicate(docs: list[Doc]) -> None:
    _results(docs, "c-pair")[1]["device"] = "gpu-0"


def _selector(docs: list[Doc]) -> None:
    req = _find(docs, "ResourceClaim", "c-pair")["spec"]["devices"]["requests"][0]
    req["exactly"]["selectors"][0]["cel"]["expression"] = (
        'device.attributes["gpu.example.com"].model == "H100"'
    )


def _busy(docs: list[Doc]) -> None:
    _results(docs, "c-distinct")[0]["device"] = "gpu-0"


def _capacity(docs: list[Doc]) -> None:
    claim = _find(docs, "ResourceClaim", "c-mem2")
    claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["memory"] = "35Gi"
    claim["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]["memory"] = "35Gi"


def _rounding(docs: list[Doc]) -> None:
    _results(docs, "c-mem2")[0]["consumedCapacity"]["memory"] = "19Gi"


def _share(docs: list[Doc]) -> None:
    _results(docs, "c-mem2")[0]["shareID"] = _results(docs, "c-shared")[0]["shareID"]


def _counters(docs: list[Doc]) -> None:
    _find(docs, "ResourceSlice", "node-1-part-counters")["spec"]["sharedCounters"][0]["counters"][
        "memory"
    ] = {"value": "30Gi"}


def _compatibility(docs: list[Doc]) -> None:
    devices = _find(docs, "ResourceSlice", "node-1-part-devices")["spec"]["devices"]
    devices[0]["consumesCounters"][0]["compatibilityGroups"] = ["mig"]
    devices[1]["consumesCounters"][0]["compatibilityGroups"] = ["vgpu"]


def _match(docs: list[Doc]) -> None:
    _results(docs, "c-pair")[1]["device"] = "gpu-5"


def _distinct(docs: list[Doc]) -> None:
    _results(docs, "c-distinct")[1]["device"] = "gpu-6"


def _taint(docs: list[Doc]) -> None:
    device = _find(docs, "ResourceSlice", "node-1-gpus")["spec"]["devices"][0]
    device["taints"] = [{"key": "broken", "value": "ecc", "effect": "NoSchedule"}]


def _copies(docs: list[Doc]) -> None:
    _results(docs, "c-pair")[0]["tolerations"] = [
        {"key": "broken", "operator": "Exists"}
    ]  # not the request's


def _gate(docs: list[Doc]) -> None:
    _find(docs, "ResourceSlice", "node-1-mem")["spec"]["skipNodeOperations"] = True  # gate off


def _skip_node_operations(docs: list[Doc]) -> None:
    _find(docs, "ResourceSlice", "node-1-mem")["spec"]["skipNodeOperations"] = True  # gate on


def _node_selector(docs: list[Doc]) -> None:
    alloc = _find(docs, "ResourceClaim", "c-pair")["status"]["allocation"]
    alloc["nodeSelector"] = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}
        ]
    }


def _admin(docs: list[Doc]) -> None:
    _results(docs, "c-pair")[0]["adminAccess"] = True


def _limit(docs: list[Doc]) -> None:
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c-many", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "s", "exactly": {"deviceClassName": "small", "count": 33}}]}
            },
            "status": {
                "allocation": {
                    "devices": {"results": [_small("s", f"m-{i}") for i in range(33)]},
                    "nodeSelector": _find(docs, "ResourceClaim", "c-pair")["status"]["allocation"][
                        "nodeSelector"
                    ],
                }
            },
        }
    )


def _node_resources(docs: list[Doc]) -> None:
    _find(docs, "Pod", "pod-p")["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "9"


def _gang(docs: list[Doc]) -> None:
    del _find(docs, "Pod", "gang-1")["spec"]["nodeName"]


def _gang_topology(docs: list[Doc]) -> None:
    _find(docs, "Pod", "gang-1")["spec"]["nodeName"] = "node-2"


def _pod_node_unschedulable(docs: list[Doc]) -> None:
    _find(docs, "Node", "node-1")["spec"] = {"unschedulable": True}


def _pod_node_selector(docs: list[Doc]) -> None:
    _find(docs, "Pod", "pod-p")["spec"]["nodeSelector"] = {"zone": "b"}


def _pod_node_affinity(docs: list[Doc]) -> None:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    _find(docs, "Pod", "pod-p")["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }


def _pod_node_taint(docs: list[Doc]) -> None:
    _find(docs, "Node", "node-1")["spec"] = {
        "taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    }


def _pod_node_missing(docs: list[Doc]) -> None:
    """A pod left bound to a node the cluster no longer has (deleted, the pod not yet collected)."""
    meta = {"name": "orphan", "namespace": "default"}
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": "node-9"}})


def _pod_claim_allocated(docs: list[Doc]) -> None:
    del _find(docs, "ResourceClaim", "c-pair")["status"]


def _pod_claim_reserved(docs: list[Doc]) -> None:
    _find(docs, "ResourceClaim", "c-pair")["status"]["reservedFor"] = []


def _pod_claim_node(docs: list[Doc]) -> None:
    _find(docs, "Pod", "pod-b")["spec"]["nodeName"] = "node-2"  # shares c-shared with pod-a


def _pod_extended_resource(docs: list[Doc]) -> None:
    res = _find(docs, "Pod", "pod-e")["spec"]["containers"][0]["resources"]
    res["requests"]["example.com/gpu"] = res["limits"]["example.com/gpu"] = "2"


MUTATIONS: dict[str, tuple[Mutation, FeatureGates]] = {
    "unknown-device": (_unknown_device, FeatureGates()),
    "request": (_request, FeatureGates()),
    "count": (_count, FeatureGates()),
    "duplicate": (_duplicate, FeatureGates()),
    "selector": (_selector, FeatureGates()),
    "busy": (_busy, FeatureGates()),
    "capacity": (_capacity, FeatureGates()),
    "rounding": (_rounding, FeatureGates()),
    "share": (_share, FeatureGates()),
    "counters": (_counters, FeatureGates()),
    "compatibility": (_compatibility, FeatureGates(DRADeviceCompatibilityGroups=True)),
    "match": (_match, FeatureGates()),
    "distinct": (_distinct, FeatureGates()),
    "taint": (_taint, FeatureGates()),
    "copies": (_copies, FeatureGates()),
    "gate": (_gate, FeatureGates(DRAOptionalNodePreparation=False)),
    "skip-node-operations": (_skip_node_operations, FeatureGates(DRAOptionalNodePreparation=True)),
    "node-selector": (_node_selector, FeatureGates()),
    "admin": (_admin, FeatureGates()),
    "limit": (_limit, FeatureGates()),
    "node-resources": (_node_resources, FeatureGates()),
    "gang": (_gang, FeatureGates()),
    "gang-topology": (_gang_topology, FeatureGates()),
    "pod-node-unschedulable": (_pod_node_unschedulable, FeatureGates()),
    "pod-node-selector": (_pod_node_selector, FeatureGates()),
    "pod-node-affinity": (_pod_node_affinity, FeatureGates()),
    "pod-node-taint": (_pod_node_taint, FeatureGates()),
    "pod-node-missing": (_pod_node_missing, FeatureGates()),
    "pod-claim-allocated": (_pod_claim_allocated, FeatureGates()),
    "pod-claim-reserved": (_pod_claim_reserved, FeatureGates()),
    "pod-claim-node": (_pod_claim_node, FeatureGates()),
    "pod-extended-resource": (_pod_extended_resource, FeatureGates()),
}
"""Kind -> (the mutation of the valid state, the gates to check it with)."""

PLACEMENT_MUTATIONS = {"pod-node-name"}
"""Kinds only a plan can break (a cluster state has each pod where its nodeName says):
tested on `check_placements` below."""


def _kinds(violations: list[Violation]) -> set[str]:
    return {v.kind for v in violations}


def test_the_valid_state_passes() -> None:
    for gates in {g for _, g in MUTATIONS.values()}:
        assert check_cluster(Cluster.from_objects(_docs()), gates) == []


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_one_mutation_breaks_exactly_its_rule(kind: str) -> None:
    mutate, gates = MUTATIONS[kind]
    docs = _docs()
    mutate(docs)
    violations = check_cluster(Cluster.from_objects(copy.deepcopy(docs)), gates)
    assert _kinds(violations) == {kind}, [str(v) for v in violations]


def test_a_bound_pod_placed_elsewhere_breaks_pod_node_name() -> None:
    cluster = Cluster.from_objects(_docs())
    pod = cluster.pods[("default", "pod-p")]
    assert check_placements(cluster, [PodPlacement(pod, "node-1", new=True)], bound=False) == []
    moved = check_placements(cluster, [PodPlacement(pod, "node-2", new=True)], bound=False)
    assert _kinds(moved) == {"pod-node-name"}, [str(v) for v in moved]
    assert "bound to node node-1" in moved[0].message


def test_every_kind_has_a_mutation() -> None:
    """A new rule kind without a mutation here fails: every rule must be shown to bite."""
    assert set(MUTATIONS) | PLACEMENT_MUTATIONS == set(KINDS)
    assert not set(MUTATIONS) & PLACEMENT_MUTATIONS


def test_mutations_do_not_leak_into_the_fixture() -> None:
    """Each mutation works on its own copy (so the parametrized tests are independent)."""
    before = _docs()
    for mutate, _ in MUTATIONS.values():
        mutate(_docs())
    assert _docs() == before
