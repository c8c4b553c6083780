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
from example_counts import examples

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
    (it takes the plain documents, the others go through PyYAML). 1,000 random documents under
    the `ci` profile (3,000 took 7 CPU seconds of pure-Python dumping), ten times that under `long`."""
    rng = random.Random(40)
    for _ in range(examples(1000)):
        doc = _random_doc(rng)
        assert dump_yaml(doc) == yaml.safe_dump(doc, sort_keys=False)


def test_libyaml_composes_plain_documents_and_the_bounded_composer_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`iter_positioned` reads documents without aliases, and documents with a few aliases, through
    libyaml's composer (`bounded.compose_fast`); a cycle, aliasing past go-yaml's minimums, or
    nesting past MAX_DEPTH along an alias through the bounded composer; every one reads what the
    bounded composer alone reads (aliased nodes the same object, as it makes them)."""
    from dra_solver.api import load
    from dra_solver.api.bounded import MAX_DEPTH

    plain = "a: {b: [1, '2', true, null, 2024-01-01]}\n---\n---\nkind: X\nmetadata: {name: x}\n"
    aliased = "a: &x {b: [1]}\nc: *x\nd: [*x, *x]\n"
    cycle = "a: &x [1, *x]\n"
    many = "a: &x [" + ", ".join(["1"] * 200) + "]\n" + "".join(f"b{i}: *x\n" for i in range(5))
    deep = f"a: &x {'[' * 60}1{']' * 60}\nb: {'[' * 50}*x{']' * 50}\n"
    fast = {t: load._read_fast(t) for t in (plain, aliased, cycle, many, deep)}
    assert fast[plain] is not None and fast[aliased] is not None
    assert fast[cycle] is None and fast[many] is None and fast[deep] is None
    assert fast[aliased][0]["c"] is fast[aliased][0]["a"]  # the same node, the same object
    assert 60 + 50 > MAX_DEPTH > 60  # deep only along the alias: the bounded composer decides
    read = {t: list(load.iter_positioned(t, "s")) for t in (plain, aliased, many, deep)}
    monkeypatch.setattr(load, "_read_fast", lambda text: None)
    assert read == {t: list(load.iter_positioned(t, "s")) for t in (plain, aliased, many, deep)}
    with pytest.raises(InputError, match="cycle"):
        list(load.iter_positioned(cycle, "s"))


_SCALARS = [
    "x", "yes", "No", "~", "null", "0o17", "0x1F", "1_000", "1:20", ".nan", "-.inf", "1e3",
    "2024-01-01", "'q'", '"d"', "!!str 5", "!!int '7'", "!!binary aGVsbG8=", "!!float 1",
    "=", "!custom v", "''", "-1", "0b101", "+12", "3.", "true",
]  # fmt: skip
"""Scalars YAML 1.1 resolves to every type, explicit tags, `=`, an unknown tag."""


class _RandomDocument:
    """One random YAML document in flow style (`_random_yaml`)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.done: list[str] = []  # anchors of finished nodes
        self.open: list[str] = []  # anchors of nodes being written (an alias to one: a cycle)
        self.count = 0

    def alias(self) -> str | None:
        """An alias to a node done, to one being written (a cycle), to none; or no alias."""
        pick = self.rng.random()
        if pick < 0.03:
            return "*nowhere"
        if pick < 0.08 and self.open:
            return "*" + self.rng.choice(self.open)
        return "*" + self.rng.choice(self.done) if self.done else None

    def node(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.12 and (self.done or self.open) and (alias := self.alias()) is not None:
            return alias
        anchor = ""
        if self.rng.random() < 0.3:
            self.count += 1
            anchor = f"a{self.count}"
        prefix = f"&{anchor} " if anchor else ""
        if depth > self.rng.choice([2, 3, 4, 6]) or r < 0.45:
            text = prefix + self.rng.choice(_SCALARS)
        else:
            if anchor:
                self.open.append(anchor)
            text = prefix + self.collection(depth)
            if anchor:
                self.open.remove(anchor)
        if anchor:
            self.done.append(anchor)
        return text

    def collection(self, depth: int) -> str:
        size = self.rng.choice([0, 1, 2, 3, 5, 12])
        if self.rng.random() < 0.45:
            tag = self.rng.choice(["", "", "", "!!seq ", "!!omap "])
            return tag + "[" + ", ".join(self.node(depth + 1) for _ in range(size)) + "]"
        tag = self.rng.choice(["", "", "", "!!map ", "!!set "])
        return tag + "{" + ", ".join(self.pair(depth) for _ in range(size)) + "}"

    def pair(self, depth: int) -> str:
        key = self.rng.choice(["k", "k", "name", "<<", "=", "1", "null", "? [a]", self.node(9)])
        if key == "<<" and self.done and self.rng.random() < 0.7:
            return "<<: *" + self.rng.choice(self.done)
        return f"{key}: {self.node(depth + 1)}"

    def text(self) -> str:
        rng = self.rng
        if rng.random() < 0.1:  # fan out: 10 aliases of 10 aliases of ...
            rows = ["a: &l0 [" + ", ".join(["x"] * rng.choice([2, 10])) + "]"]
            for level in range(1, rng.choice([2, 3, 4])):
                rows.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
            return "\n".join(rows)
        if rng.random() < 0.05:  # deeper along the alias than in the text
            inner, outer = rng.choice([(40, 50), (60, 50), (99, 1), (100, 0)])
            return f"a: &x {'[' * inner}1{']' * inner}\nb: {'[' * outer}*x{']' * outer}"
        return "top: " + self.node(0)


def _random_yaml(rng: random.Random) -> str:
    """A YAML text of 1-3 documents in flow style (`_RandomDocument`): scalars YAML 1.1
    resolves to every type (and explicit tags, `<<` merges, `=` keys, complex keys), anchors
    and aliases — to nodes done, to a node that contains them (a cycle), to no anchor —, alias
    chains that fan out (past go-yaml's minimums) or nest deeper along the aliases than in the
    text."""
    return "\n---\n".join(_RandomDocument(rng).text() for _ in range(rng.randrange(1, 4))) + "\n"


def _shape(value: object, ids: dict[int, int] | None = None) -> object:
    """`value` comparable across two readings: NaN as a word, and every dict and list tagged
    with the order in which it was first met, so that shared objects compare as shared."""
    ids = {} if ids is None else ids
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict | list | set):
        seen = id(value) in ids
        tag = ids.setdefault(id(value), len(ids))
        if seen:
            return ("again", tag)
        if isinstance(value, dict):
            return ("dict", tag, [(_shape(k, ids), _shape(v, ids)) for k, v in value.items()])
        if isinstance(value, set):
            return ("set", tag, sorted(map(repr, value)))
        return ("list", tag, [_shape(v, ids) for v in value])
    if isinstance(value, tuple):
        return tuple(_shape(v, ids) for v in value)
    return (type(value).__name__, value)


def test_libyaml_reads_what_the_bounded_composer_reads_on_random_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On random YAML texts (`_random_yaml`), whatever libyaml's path takes
    (`bounded.compose_fast`: `construct_tree`, or the safe constructor) is what the bounded
    composer alone reads — the same values and types, the same objects shared — and libyaml's
    path takes no text the bounded composer refuses. Both paths are exercised: plain texts,
    aliased ones taken, and ones left to the bounded composer. 750 texts under the `ci`
    profile (1,500 took 1.9 CPU s, most of it the pure-Python bounded composer), ten times
    that under `long`."""
    from dra_solver.api import bounded, load

    paths: list[bool] = []  # per document libyaml composed: whether `construct_tree` made it

    def tree(loader: object, root: object) -> object:
        made = construct_tree(loader, root)
        paths.append(made is not bounded.NOT_A_TREE)
        return made

    construct_tree = bounded.construct_tree
    monkeypatch.setattr(bounded, "construct_tree", tree)
    rng = random.Random(40)
    taken = aliased_taken = left = 0
    count = examples(750)
    for _ in range(count):
        text = _random_yaml(rng)
        fast = load._read_fast(text)
        loader = load._Loader(text)
        try:
            slow: list[object] | str = []
            while loader.check_data():
                slow.append(loader.get_data())
        except yaml.YAMLError as exc:
            slow = f"refused: {exc}"
        finally:
            loader.dispose()
        if fast is None:
            left += 1
            continue
        assert not isinstance(slow, str), (text, slow)
        assert _shape(fast) == _shape(slow), text
        taken += 1
        aliased_taken += "*" in text
    # 750 texts (seed 40): 262 taken, 44 of them aliased, 488 left to the bounded composer
    assert taken > count // 5 and aliased_taken > count // 30 and left > count // 15, (
        taken,
        aliased_taken,
        left,
    )
    assert paths.count(True) > 300 and paths.count(False) > 100, (paths.count(True), paths.count(False))
