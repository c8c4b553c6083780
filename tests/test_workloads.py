"""Issue #9, rule 3: workloads expand into deterministic Pods; generateName pods get
deterministic names; DaemonSet and CronJob are announced as not expanded.

Inputs follow the dra-example-driver gpu-test specs (a Deployment whose pods share a
ResourceClaim template)."""

from __future__ import annotations

import copy

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.api.load import load_text
from dra_solver.errors import ValidationErrors

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: gpu-test5, name: single-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""

POD_TEMPLATE = """
    metadata:
      labels: {app: pod}
      annotations: {note: x}
    spec:
      containers:
      - name: ctr0
        image: ubuntu:22.04
        resources:
          claims: [{name: gpu}]
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
"""


def workload(kind: str, api: str, spec: str) -> str:
    return (
        f"apiVersion: {api}\nkind: {kind}\nmetadata: {{namespace: gpu-test5, name: w, uid: u-1}}\n"
        f"spec:\n{spec}  template:{POD_TEMPLATE}"
    )


def test_deployment_expands_to_replicas_pods_with_owner() -> None:
    cluster = Cluster.from_yaml(TEMPLATE + "---\n" + workload("Deployment", "apps/v1", "  replicas: 3\n"))
    assert sorted(cluster.pods) == [("gpu-test5", "w-0"), ("gpu-test5", "w-1"), ("gpu-test5", "w-2")]
    pod = cluster.pods[("gpu-test5", "w-1")]
    assert pod.metadata.labels == {"app": "pod"} and pod.metadata.annotations == {"note": "x"}
    assert pod.spec.resource_claims[0].resource_claim_template_name == "single-gpu"
    (owner,) = pod.metadata.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller) == (
        "apps/v1",
        "Deployment",
        "w",
        "u-1",
        True,
    )


def test_default_replicas_is_one_and_zero_gives_none() -> None:
    objects, _ = load_text(workload("ReplicaSet", "apps/v1", ""), "in.yaml")
    assert [o.metadata.name for o in objects] == ["w-0"]
    objects, _ = load_text(workload("ReplicaSet", "apps/v1", "  replicas: 0\n"), "in.yaml")
    assert objects == []


def test_statefulset_pods_are_named_by_ordinal() -> None:
    objects, _ = load_text(workload("StatefulSet", "apps/v1", "  replicas: 2\n"), "in.yaml")
    assert [o.metadata.name for o in objects] == ["w-0", "w-1"]
    assert objects[1].metadata.labels["statefulset.kubernetes.io/pod-name"] == "w-1"
    assert objects[1].metadata.labels["apps.kubernetes.io/pod-index"] == "1"


def test_job_runs_parallelism_pods_capped_by_completions() -> None:
    objects, _ = load_text(workload("Job", "batch/v1", "  parallelism: 4\n  completions: 2\n"), "in.yaml")
    assert [o.metadata.name for o in objects] == ["w-0", "w-1"]
    assert objects[0].metadata.owner_references[0].api_version == "batch/v1"
    objects, _ = load_text(workload("Job", "batch/v1", "  parallelism: 3\n"), "in.yaml")
    assert len(objects) == 3
    objects, _ = load_text(workload("Job", "batch/v1", "  completions: 5\n"), "in.yaml")
    assert len(objects) == 1


def test_bad_replicas_is_an_error_naming_the_workload() -> None:
    with pytest.raises(ValidationErrors) as info:
        load_text(workload("Deployment", "apps/v1", "  replicas: two\n"), "in.yaml")
    (err,) = info.value.errors
    assert (err.obj, err.field) == ("Deployment gpu-test5/w", "spec.replicas")


def test_template_error_is_reported_once_against_the_workload() -> None:
    text = workload("Deployment", "apps/v1", "  replicas: 5\n").replace(
        "resourceClaimTemplateName", "resourceClaimTemplateNam"
    )
    with pytest.raises(ValidationErrors) as info:
        load_text(text, "in.yaml")
    (err,) = info.value.errors
    assert err.obj == "Deployment gpu-test5/w"
    assert err.field == "spec.template.spec.resourceClaims[0].resourceClaimTemplateNam"


def test_expansion_does_not_mutate_the_input() -> None:
    doc = yaml.safe_load(workload("Deployment", "apps/v1", "  replicas: 2\n"))
    before = copy.deepcopy(doc)
    cluster = Cluster.from_objects([doc])
    cluster.pods[("gpu-test5", "w-0")].spec.containers[0].resources.claims[0].name = "changed"  # type: ignore[union-attr]
    assert doc == before


def test_generate_name_pods_get_deterministic_names() -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {namespace: ns, generateName: gpu-pod-}\nspec: {}\n"
    other = "apiVersion: v1\nkind: Pod\nmetadata: {namespace: ns, generateName: cpu-pod-}\nspec: {}\n"
    objects, _ = load_text("---\n".join([pod, other, pod, pod]), "in.yaml")
    assert [o.metadata.name for o in objects] == ["gpu-pod-0", "cpu-pod-0", "gpu-pod-1", "gpu-pod-2"]
    assert all(o.metadata.generate_name for o in objects)


@pytest.mark.parametrize(
    ("kind", "api", "why"), [("DaemonSet", "apps/v1", "node matching"), ("CronJob", "batch/v1", "schedule")]
)
def test_daemonset_and_cronjob_are_not_expanded_with_a_warning(kind: str, api: str, why: str) -> None:
    objects, warnings = load_text(workload(kind, api, ""), "in.yaml")
    assert objects == []
    (warning,) = warnings
    assert f"{kind} gpu-test5/w" in warning and "not expanded" in warning and why in warning


def test_kinds_not_used_are_still_skipped_with_a_warning() -> None:
    objects, warnings = load_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "in.yaml")
    assert objects == [] and "kind not used by dra-solver" in warnings[0]
