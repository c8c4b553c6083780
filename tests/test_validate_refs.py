"""Issue #9, rules 4-6: one identity per object, references and pools validated, layering
(api does not import cel; the combined check is in dra_solver.cel.checks)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from parsed_sources import nodes

from dra_solver.api.cluster import Cluster
from dra_solver.api.load import load_paths, load_text
from dra_solver.api.validate import validate_cluster
from dra_solver.cel.checks import validate_all
from dra_solver.errors import ValidationErrors
from dra_solver.pipeline import load

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
"""


def slice_yaml(
    name: str, devices: list[str], *, pool: str = "node-1", count: int = 1, generation: int = 1
) -> str:
    devs = "".join(f"  - name: {d}\n" for d in devices)
    return (
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {name}}}\nspec:\n"
        f"  driver: gpu.example.com\n  nodeName: node-1\n"
        f"  pool: {{name: {pool}, generation: {generation}, resourceSliceCount: {count}}}\n  devices:\n{devs}"
    )


POD = """
apiVersion: v1
kind: Pod
metadata: {namespace: gpu-test1, name: pod0}
spec:
  priorityClassName: prio-x
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: single-gpu
  - name: shared
    resourceClaimName: shared-gpu
  containers: [{name: c, image: busybox}]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- rule 4: one identity per object ----------------------------------------------------


def test_same_identity_with_different_content_is_an_error_naming_both_files(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", slice_yaml("s1", ["gpu-0"]))
    b = write(tmp_path / "b.yaml", slice_yaml("s1", ["gpu-0", "gpu-1"]))
    with pytest.raises(ValidationErrors) as info:
        load_paths([a, b])
    (err,) = info.value.errors
    assert err.obj == "ResourceSlice s1"
    assert str(a) in err.reason and str(b) in err.reason


def test_identical_duplicate_is_an_error_naming_both_documents() -> None:
    """Issue #16: an identical copy is an error too (which one is meant cannot be known)."""
    text = "---\n".join(slice_yaml(name, ["gpu-0"]) for name in ("s1", "s2", "s1"))
    with pytest.raises(ValidationErrors) as info:
        load_text(text, "in.yaml")
    (err,) = info.value.errors
    assert err.obj == "ResourceSlice s1"
    assert "identical copy" in err.reason
    assert "in.yaml (document 1)" in err.reason and "in.yaml (document 3)" in err.reason


def test_same_name_in_other_namespace_or_kind_is_not_a_duplicate() -> None:
    claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{namespace: {ns}, name: c}}\n"
    objects, _ = load_text(claim.format(ns="a") + "---\n" + claim.format(ns="b"), "in.yaml")
    assert len(objects) == 2


def test_from_objects_rejects_conflicting_duplicates() -> None:
    import yaml

    with pytest.raises(ValidationErrors) as info:
        Cluster.from_objects(
            [yaml.safe_load(slice_yaml("s1", ["a"])), yaml.safe_load(slice_yaml("s1", ["b"]))]
        )
    (err,) = info.value.errors
    assert "object #0" in err.reason and "object #1" in err.reason


# --- rule 5: references and pools -------------------------------------------------------


def test_pod_references_that_do_not_exist_are_errors() -> None:
    cluster = Cluster.from_yaml(CLASS + "---\n" + POD)
    errs = [(e.obj, e.field, e.reason) for e in validate_cluster(cluster)]
    assert errs == [
        (
            "Pod gpu-test1/pod0",
            "spec.resourceClaims[0].resourceClaimTemplateName",
            "ResourceClaimTemplate gpu-test1/single-gpu not found in the input",
        ),
        (
            "Pod gpu-test1/pod0",
            "spec.resourceClaims[1].resourceClaimName",
            "ResourceClaim gpu-test1/shared-gpu not found in the input",
        ),
        ("Pod gpu-test1/pod0", "spec.priorityClassName", "PriorityClass 'prio-x' not found in the input"),
    ]


def test_pod_references_that_exist_are_fine() -> None:
    template = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {namespace: gpu-test1, "
        "name: single-gpu}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: "
        "{deviceClassName: gpu.example.com}}]}}}\n"
    )
    claim = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {namespace: gpu-test1, "
        "name: shared-gpu}\nspec: {devices: {requests: [{name: gpu, exactly: "
        "{deviceClassName: gpu.example.com}}]}}\n"
    )
    prio = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: prio-x}\nvalue: 10\n"
    cluster = Cluster.from_yaml("---\n".join([CLASS, template, claim, prio, POD]))
    assert validate_all(cluster) == []
    builtin = Cluster.from_yaml(
        "---\n".join([CLASS, template, claim, POD.replace("prio-x", "system-node-critical")])
    )
    assert validate_all(builtin) == []


def test_pool_with_disagreeing_slice_counts_is_a_pool_problem() -> None:
    cluster = Cluster.from_yaml(
        slice_yaml("s1", ["gpu-0"], count=2) + "---\n" + slice_yaml("s2", ["gpu-1"], count=3)
    )
    (err,) = validate_cluster(cluster)
    assert err.obj == "ResourceSlice s1" and err.field == "spec.pool.resourceSliceCount"
    assert "pool gpu.example.com/node-1 (generation 1) is incomplete" in err.reason
    assert "disagree on resourceSliceCount (2, 3)" in err.reason


def test_pool_missing_slices_at_newest_generation_is_a_pool_problem() -> None:
    cluster = Cluster.from_yaml(
        slice_yaml("old", ["gpu-0"], count=2) + "---\n" + slice_yaml("new", ["gpu-0"], count=2, generation=2)
    )
    (err,) = validate_cluster(cluster)
    assert "(generation 2) is incomplete: resourceSliceCount is 2 but 1 slice" in err.reason
    assert validate_all(cluster) == [], "the CLI's check leaves pools to the allocator (see validate_all)"
    assert len(validate_all(cluster, pools=True)) == 1


def test_duplicate_device_names_across_slices_of_a_pool_are_a_pool_problem() -> None:
    cluster = Cluster.from_yaml(
        slice_yaml("s1", ["gpu-0"], count=2) + "---\n" + slice_yaml("s2", ["gpu-0"], count=2)
    )
    (err,) = validate_cluster(cluster)
    assert err.field == "spec.devices"
    assert "is invalid: duplicate device name gpu-0 (in slices s1 and s2)" in err.reason


def test_load_validates_what_it_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "in.yaml", CLASS + "---\n" + POD)
    assert len(Cluster.from_paths([path]).pods) == 1, "from_paths keeps loading without validating"
    with pytest.raises(ValidationErrors) as info:
        load([path])
    assert len(info.value.errors) == 3
    assert len(load([path], validate=False).pods) == 1
    bad_cel = write(tmp_path / "cel.yaml", CLASS.replace("device.driver ==", "device.driver ==" + " ("))
    with pytest.raises(ValidationErrors) as info:
        load([bad_cel])
    assert "CEL compile error" in info.value.errors[0].reason


# --- rule 6: layering -------------------------------------------------------------------


def test_api_layer_does_not_import_cel() -> None:
    """Static check (the package `__init__` loads the allocator, so sys.modules cannot
    tell): no module of solver/api imports dra_solver.cel, at top level or lazily."""
    api_dir = Path(__file__).resolve().parents[1] / "solver" / "api"
    offenders = []
    for path in sorted(api_dir.glob("*.py")):
        for node in nodes(path):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [
                f"{path.name}: {n}" for n in names if n.startswith(("dra_solver.cel", "solver.cel"))
            ]
    assert offenders == []


def test_structural_validation_skips_cel_and_the_combined_check_compiles_it() -> None:
    cluster = Cluster.from_yaml(CLASS.replace("device.driver == 'gpu.example.com'", "device.driver =="))
    assert validate_cluster(cluster) == []
    (err,) = validate_all(cluster)
    assert err.field == "spec.selectors[0].cel.expression" and "CEL compile error" in err.reason
