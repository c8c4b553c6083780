"""The cheaper paths a 50,000-pod plan takes give what the plain ones gave: a pod's allocated
claims found without building its template claims, template claims from dumps made once per
template, result claims copied shallowly, and the collector's freeze around a plan undone at
its end."""

from __future__ import annotations

import gc

import pytest

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import AllocationResult, ResourceClaim
from dra_solver.errors import InputError
from dra_solver.planners.run import fewer_collections
from dra_solver.problem.pods import pod_claims, uses_allocated_claim
from dra_solver.results import with_allocation

ALLOCATION = {
    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}
}

CLUSTER = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  metadata:
    labels: {team: a}
    annotations: {note: kept}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: free, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: generated-gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-1}]
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: x}}]
  resourceClaims: {entries}
"""
    for name, entries in (
        ("template-only", "[{name: gpu, resourceClaimTemplateName: one-gpu}]"),
        (
            "template-twice",
            "[{name: gpu, resourceClaimTemplateName: one-gpu}, "
            "{name: more, resourceClaimTemplateName: one-gpu}]",
        ),
        ("named-free", "[{name: gpu, resourceClaimName: free}]"),
        ("named-held", "[{name: a, resourceClaimTemplateName: one-gpu}, {name: b, resourceClaimName: held}]"),
        ("generated", "[{name: gpu, resourceClaimTemplateName: one-gpu}]"),
        ("missing-claim", "[{name: gpu, resourceClaimName: nowhere}]"),
        ("missing-template", "[{name: gpu, resourceClaimTemplateName: nowhere}]"),
    )
)


def _cluster() -> Cluster:
    return Cluster.from_yaml(CLUSTER)


def test_uses_allocated_claim_says_what_the_built_claims_say() -> None:
    cluster = _cluster()
    said = {}
    for key, pod in cluster.pods.items():
        if key[1].startswith("missing"):
            continue
        built = pod_claims(cluster, pod)
        assert uses_allocated_claim(cluster, pod) == any(
            c.status is not None and c.status.allocation is not None for c in built
        )
        said[key[1]] = uses_allocated_claim(cluster, pod)
    # a template claim the cluster holds already (`<pod>-<entry>`, allocated) counts as allocated
    assert said == {
        "template-only": False,
        "template-twice": False,
        "named-free": False,
        "named-held": True,
        "generated": True,
    }


@pytest.mark.parametrize("name", ["missing-claim", "missing-template"])
def test_uses_allocated_claim_refuses_what_pod_claims_refuses(name: str) -> None:
    cluster = _cluster()
    pod = cluster.pods[("default", name)]
    with pytest.raises(InputError) as built:
        pod_claims(cluster, pod)
    with pytest.raises(InputError) as asked:
        uses_allocated_claim(cluster, pod)
    assert str(asked.value) == str(built.value)


def test_claims_from_one_template_are_built_apart_and_leave_it_unchanged() -> None:
    cluster = _cluster()
    template = cluster.templates[("default", "one-gpu")]
    before = template.dump()
    first = pod_claims(cluster, cluster.pods[("default", "template-only")])[0]
    a, b = pod_claims(cluster, cluster.pods[("default", "template-twice")])
    again = pod_claims(cluster, cluster.pods[("default", "template-only")])[0]
    assert template.dump() == before
    assert first.dump() == again.dump() and first is not again
    assert [c.metadata.name for c in (first, a, b)] == [
        "template-only-gpu",
        "template-twice-gpu",
        "template-twice-more",
    ]
    assert a.metadata.annotations == {"note": "kept", "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert b.metadata.annotations == {"note": "kept", "resource.kubernetes.io/pod-claim-name": "more"}
    assert a.metadata.labels == b.metadata.labels == {"team": "a"}
    # nothing of one claim is another's: changing one leaves the other as built
    assert a.metadata.labels is not b.metadata.labels and a.spec is not b.spec
    a.metadata.labels["team"] = "b"
    assert b.metadata.labels == {"team": "a"} and template.dump() == before


def _as_rebuilt(claim: ResourceClaim, allocation: AllocationResult) -> ResourceClaim:
    """The claim with its allocation as a dump and a re-validation of the whole claim give it."""
    data = claim.dump()
    data["status"] = {**(data.get("status") or {}), "allocation": allocation.dump()}
    return ResourceClaim.model_validate(data)


@pytest.mark.parametrize("name", ["free", "held"])
def test_with_allocation_dumps_as_a_rebuilt_claim_and_leaves_the_input(name: str) -> None:
    claim = _cluster().claims[("default", name)]
    before = claim.dump()
    allocation = AllocationResult.model_validate(ALLOCATION)
    out = with_allocation(claim, allocation)
    assert out.dump() == _as_rebuilt(claim, allocation).dump()
    assert out.model_fields_set == _as_rebuilt(claim, allocation).model_fields_set
    assert claim.dump() == before
    assert out.status is not claim.status and out.status is not None and out.status.allocation is allocation
    assert out.converted_from is None


def test_with_allocation_keeps_the_status_fields_beside_the_allocation() -> None:
    claim = ResourceClaim.model_validate(
        {
            "metadata": {"name": "c"},
            "spec": {"devices": {"requests": []}},
            "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]},
        }
    )
    allocation = AllocationResult.model_validate(ALLOCATION)
    out = with_allocation(claim, allocation)
    assert out.dump() == _as_rebuilt(claim, allocation).dump()
    assert out.dump()["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u"}]
    assert claim.status is not None and claim.status.allocation is None


def test_fewer_collections_freezes_inside_and_unfreezes_at_the_last_exit() -> None:
    gc.unfreeze()
    kept = [object() for _ in range(10)]
    with fewer_collections():
        assert gc.get_freeze_count() > 0
        with fewer_collections():
            inner = [[i] for i in range(10)]
        assert gc.get_freeze_count() > 0  # an inner exit leaves the outer's freeze
        assert inner
    assert gc.get_freeze_count() == 0
    assert kept


def test_fewer_collections_leaves_a_freeze_of_the_process_as_it_is() -> None:
    gc.unfreeze()
    gc.freeze()  # as a process does before forking workers
    try:
        with fewer_collections():
            made = [[i] for i in range(10)]
        # not unfrozen at the end (the count only drops as frozen objects are freed)
        assert gc.get_freeze_count() > 0 and made
    finally:
        gc.unfreeze()
