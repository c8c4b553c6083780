"""Loading objects (solver.api.load, Cluster.from_paths): every input form, every error form.

Why these tests: the CLI and the Python API accept the same inputs — multi-document
YAML, JSON, `kind: List`, directories, stdin — and every problem in them must come back as
an InputError naming the file, the object and the field, never as a pydantic or YAML
traceback.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
import yaml

from dra_solver.api.cluster import Cluster
from dra_solver.api.load import dump_yaml, expand_paths, load_paths, load_text
from dra_solver.api.models import DeviceClass, ResourceClaim, ResourceSlice
from dra_solver.api.quantity import Quantity
from dra_solver.errors import InputError, ValidationErrors

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
"""

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    capacity:
      memory: {value: 80Gi}
"""

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c1
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        count: 2
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data: {a: b}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def only_error(info: pytest.ExceptionInfo[ValidationErrors]) -> InputError:
    assert len(info.value.errors) == 1, info.value.errors
    return info.value.errors[0]


# --- input forms ------------------------------------------------------------------------


def test_multi_document_yaml() -> None:
    objects, warnings = load_text("---\n".join([CLASS, SLICE, CLAIM]), "x.yaml")
    assert [type(o) for o in objects] == [DeviceClass, ResourceSlice, ResourceClaim]
    assert warnings == []


def test_empty_documents_are_ignored() -> None:
    objects, _ = load_text("---\n---\n" + CLASS + "---\n", "x.yaml")
    assert len(objects) == 1


def test_json() -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a"}}
    objects, _ = load_text(json.dumps(doc), "x.json")
    assert isinstance(objects[0], DeviceClass)
    assert objects[0].metadata.name == "a"


def test_kind_list_is_flattened() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + doc.replace("\n", "\n  ").rstrip() + "\n" for doc in (CLASS, CLAIM)
    )
    objects, _ = load_text(text, "list.yaml")
    assert [o.kind for o in objects] == ["DeviceClass", "ResourceClaim"]


def test_typed_list_is_flattened() -> None:
    """`kubectl get resourceslices -o json` prints a ResourceSliceList."""
    import yaml

    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": [yaml.safe_load(SLICE)]}
    objects, _ = load_text(json.dumps(doc), "slices.json")
    assert [o.kind for o in objects] == ["ResourceSlice"]


def test_directory_reads_yaml_yml_json_recursively_in_order(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", CLAIM)
    write(tmp_path / "a.yml", CLASS)
    write(
        tmp_path / "sub" / "c.json",
        json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}),
    )
    write(tmp_path / "notes.txt", "not: [yaml")
    assert expand_paths([tmp_path]) == [tmp_path / "a.yml", tmp_path / "b.yaml", tmp_path / "sub" / "c.json"]
    objects, _ = load_paths([tmp_path])
    assert [o.kind for o in objects] == ["DeviceClass", "ResourceClaim", "Node"]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(CLASS + "---\n" + CLAIM))
    objects, _ = load_paths(["-"])
    assert [o.kind for o in objects] == ["DeviceClass", "ResourceClaim"]


def test_files_and_stdin_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(CLAIM))
    objects, _ = load_paths([write(tmp_path / "class.yaml", CLASS), "-"])
    assert [o.kind for o in objects] == ["DeviceClass", "ResourceClaim"]


def test_cluster_from_paths(tmp_path: Path) -> None:
    write(tmp_path / "all.yaml", "---\n".join([CLASS, SLICE, CLAIM]))
    cluster = Cluster.from_paths([tmp_path])
    assert cluster.counts()["slices"] == 1
    assert cluster.claim("default/c1").spec.devices.requests[0].exactly.count == 2
    assert cluster.slices[0].spec.devices[0].capacity["memory"].value == Quantity.parse("80Gi")


def test_unknown_kinds_are_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "mixed.yaml", CONFIGMAP + "---\n" + CLASS)
    cluster = Cluster.from_paths([tmp_path / "mixed.yaml"])
    assert list(cluster.classes) == ["gpu.example.com"]
    assert len(cluster.warnings) == 1
    assert "mixed.yaml" in cluster.warnings[0]
    assert "ConfigMap default/settings" in cluster.warnings[0]


def test_unknown_fields_are_errors() -> None:
    """Issue #9: a field dra-solver does not know is an error (was: silently kept)."""
    with pytest.raises(ValidationErrors) as info:
        load_text(CLASS.replace("spec:\n", "spec:\n  futureField: 7\n"), "x.yaml")
    err = only_error(info)
    assert err.field == "spec.futureField"
    assert 'unknown field "futureField"' in err.reason


# --- errors -----------------------------------------------------------------------------


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "kind: DeviceClass\nmetadata: {name: [unclosed\n")
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    err = only_error(info)
    assert err.source == str(path)
    assert "malformed YAML" in err.reason
    assert "line" in err.reason


def test_document_that_is_not_a_mapping() -> None:
    with pytest.raises(InputError) as info:
        load_text("- just\n- a list\n", "x.yaml")
    assert "expected a Kubernetes object" in info.value.reason
    assert info.value.source == "x.yaml"


def test_wrong_type_names_file_object_and_field(tmp_path: Path) -> None:
    path = write(tmp_path / "claim.yaml", CLAIM.replace("count: 2", "count: two"))
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    err = only_error(info)
    assert err.source == str(path)
    assert err.obj == "ResourceClaim default/c1"
    assert err.field == "spec.devices.requests[0].exactly.count"
    assert "integer" in err.reason


def test_bad_quantity_names_file_object_and_field(tmp_path: Path) -> None:
    path = write(tmp_path / "slice.yaml", SLICE.replace("80Gi", "10Gx"))
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    err = only_error(info)
    assert (err.source, err.obj, err.field) == (
        str(path),
        "ResourceSlice node-1-gpu",
        "spec.devices[0].capacity.memory.value",
    )
    assert "10Gx" in err.reason
    assert "suffix" in err.reason
    assert err.message.startswith(
        f"{path}: ResourceSlice node-1-gpu: spec.devices[0].capacity.memory.value: "
    )


def test_missing_required_field(tmp_path: Path) -> None:
    path = write(tmp_path / "slice.yaml", SLICE.replace("  driver: gpu.example.com\n", ""))
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    err = only_error(info)
    assert (err.field, err.reason) == ("spec.driver", "required field is missing")


def test_all_errors_of_all_files_are_reported(tmp_path: Path) -> None:
    write(
        tmp_path / "a.yaml", CLAIM.replace("count: 2", "count: two") + "---\n" + SLICE.replace("80Gi", "10Gx")
    )
    write(tmp_path / "b.yaml", "kind: [\n")
    with pytest.raises(ValidationErrors) as info:
        load_paths([tmp_path])
    got = [(Path(e.source).name, e.obj, e.field) for e in info.value.errors]
    assert got == [
        ("a.yaml", "ResourceClaim default/c1", "spec.devices.requests[0].exactly.count"),
        ("a.yaml", "ResourceSlice node-1-gpu", "spec.devices[0].capacity.memory.value"),
        ("b.yaml", "", ""),
    ]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_paths([tmp_path / "nope.yaml"])
    assert "no such file or directory" in info.value.reason
    assert info.value.source.endswith("nope.yaml")


def _random_doc(rng: random.Random) -> dict[str, object]:
    """A `kind: List` of random values: keys and strings of every length around 128 and of
    characters that need quoting, escaping or folding, shared and nested dicts and lists."""
    chars = "".join(chr(c) for c in range(0x20, 0x7F)) + "    -:#&*!|>'\"%@`?,[]{}\\\t\né中"
    words = ["true", "null", "~", "1", "1.0", "0x1f", "-", "", "yes", "No", ".inf", "1e5", "<<", "---"]

    def text() -> str:
        if rng.random() < 0.15:
            return rng.choice(words)
        n = rng.choice([0, 1, 3, 10, 40, 79, 80, 81, 119, 122, 123, 126, 128, 129, 200, 400])
        pool = chars if rng.random() < 0.3 else chars[: 0x7F - 0x20]
        return "".join(rng.choice(pool) for _ in range(n))

    def value(depth: int = 0) -> object:
        r = rng.random()
        if depth > 4 or r < 0.5:
            return rng.choice([text(), text(), rng.randrange(-(10**12), 10**12), rng.random(), True, None])
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {text(): value(depth + 1) for _ in range(rng.randrange(4))}

    shared = {"shared": [text()]}
    return {"apiVersion": "v1", "kind": "List", "items": [value(), shared, value(), shared]}


def test_dump_yaml_writes_what_pyyaml_writes() -> None:
    """The libyaml fast path of `dump_yaml` is byte for byte `yaml.safe_dump(sort_keys=False)`
    (it takes the plain documents, the others go through PyYAML)."""
    rng = random.Random(40)
    for _ in range(3000):
        doc = _random_doc(rng)
        assert dump_yaml(doc) == yaml.safe_dump(doc, sort_keys=False)


def test_libyaml_composes_plain_documents_and_the_bounded_composer_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`iter_positioned` reads a document without aliases through libyaml's composer
    (`bounded.compose_fast`) and one with an alias through the bounded composer; both read
    what the bounded composer alone reads."""
    from dra_solver.api import load

    plain = "a: {b: [1, '2', true, null, 2024-01-01]}\n---\n---\nkind: X\nmetadata: {name: x}\n"
    aliased = "a: &x {b: [1]}\nc: *x\n"
    fast = {t: load._read_fast(t) for t in (plain, aliased)}
    assert fast[plain] is not None and fast[aliased] is None
    read = {t: list(load.iter_positioned(t, "s")) for t in (plain, aliased)}
    monkeypatch.setattr(load, "_read_fast", lambda text: None)
    assert read == {t: list(load.iter_positioned(t, "s")) for t in (plain, aliased)}
