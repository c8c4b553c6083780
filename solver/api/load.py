"""Reading Kubernetes objects from files, directories, stdin, strings and dicts.

Why one module: every entry point (CLI, Python API, tests) must accept the same inputs —
multi-document YAML, JSON, `kind: List` as `kubectl get -o yaml` prints it — and turn
every parse problem into an InputError naming the file, the object and the field.
The steps between the YAML text and the models (apiVersion conversion, workload
expansion, one identity per object) live in `convert`, `workloads` and `identity`.
"""

from __future__ import annotations

import copy
import gc
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import InputError, ValidationErrors
from .blockread import read_documents
from .bounded import BoundExceeded, CachedTags, FastLoader, Loader, compose_fast, stop_reading_if_asked
from .convert import API_VERSIONS, check_api_version, object_ref, original_path, to_internal
from .emit import block_yaml
from .identity import Identity, dedupe, dedupe_lenient, identity, located
from .models import CLUSTER_SCOPED, KINDS, Pod, TypeMeta
from .strict import extra_field_reason
from .workloads import (
    EXPANDED_KINDS,
    NOT_EXPANDED,
    GeneratedNames,
    PodIndex,
    expand_workload,
    from_a_cluster,
    lacking_by_workload,
)

__all__ = [
    "Document",
    "Reader",
    "Unread",
    "collector_paused",
    "dumps",
    "expand_paths",
    "iter_positioned",
    "load_lenient",
    "load_paths",
    "load_sourced",
    "load_text",
    "object_ref",
    "parse_object",
]

YAML_SUFFIXES = (".yaml", ".yml", ".json")


@contextmanager
def collector_paused() -> Iterator[None]:
    """The body without the cyclic garbage collector, which is then put back as it was.

    Why: reading and writing make millions of small objects that stay alive until the end
    (nodes, dicts, models), and the collector traversed the growing heap again and again
    without finding garbage — more than half of `dump_yaml`'s time on a 2,000-node plan.
    Reference counting still frees everything outside cycles at once; cycles wait until
    the collector runs again. Changes no result."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Loader(Loader):
    """Bounded safe YAML (`api.bounded`) without the timestamp resolver: Kubernetes keeps
    timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

if FastLoader is not None:

    class _FastLoader(FastLoader):
        """libyaml's composer (`bounded.compose_fast`), resolving as `_Loader` does."""

    _FastLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers


def _read_fast(text: str) -> list[Any] | None:
    """The text's documents, composed by libyaml when no bound is near (`bounded.compose_fast`);
    None: read them with `_Loader`."""
    if FastLoader is None:
        return None
    loader = _FastLoader(text)
    try:
        plain = read_documents(text, loader)  # block YAML of plain data: line by line
        return plain if plain is not None else compose_fast(loader)
    finally:
        loader.dispose()


def iter_positioned(text: str, source: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(position, object dict) for every object of a YAML/JSON text, `kind: List` flattened.

    The position names the document (1-based, as `---` separates them) and, inside a list,
    the item: `document 3`, `document 2, items[4]`. Reading is bounded (`api.bounded`):
    alias expansion, nesting depth and object size; a document past a bound is an error
    naming it, raised before anything is expanded."""
    fast = _read_fast(text)
    if fast is not None:
        for index, doc in enumerate(fast, 1):
            yield from _flatten(doc, source, f"document {index}")
        return
    loader = _Loader(text)
    try:
        while loader.check_data():
            doc = loader.get_data()
            yield from _flatten(doc, source, f"document {loader.document_index}")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        if isinstance(exc, BoundExceeded):
            raise InputError(f"document {exc.document}: {where}{problem}", source=source) from None
        raise InputError(f"malformed YAML: {where}{problem}", source=source) from None
    finally:
        loader.dispose()


def _flatten(doc: Any, source: str, position: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise InputError(
            f"{position}: expected a Kubernetes object (a mapping), got {type(doc).__name__}", source=source
        )
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            yield from _flatten(item, source, f"{position}, items[{i}]")
        return
    yield position, doc


@dataclass(frozen=True)
class Unread:
    """An object of a kind dra-solver reads that could not be read (an apiVersion it does not
    know, a field its model refuses, a workload whose pod template is broken): who it is and
    why. Strict loading refuses the input; lenient loading (`load_lenient`) leaves it out and
    `planning.triage` makes what depends on it unplaceable with this as the reason."""

    kind: str
    namespace: str
    name: str
    node_name: str
    """A Pod's `spec.nodeName` as written ("" when none): a bound pod holds its node."""
    errors: tuple[InputError, ...]
    doc: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The object as written, for outputs that write the input back; otherwise read only for
    a ResourceSlice's driver, pool and node scope (`planning.leftpools`)."""
    where: str = field(default="", compare=False)
    """Where the input has it (`file (document 2, items[4])`), when known: a second definition of
    its identity names both (`_finish`)."""

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @property
    def reason(self) -> str:
        return "; ".join(f"{e.field}: {e.reason}" if e.field else e.reason for e in self.errors)


def _unread(doc: Mapping[str, Any], errors: list[InputError], where: str = "") -> Unread | None:
    """The object `doc` names, when it is identifiable (a kind and a metadata.name): then its
    errors are its own, not the input's."""
    kind = doc.get("kind")
    meta = doc.get("metadata")
    if not isinstance(kind, str) or not isinstance(meta, dict):
        return None
    name = meta.get("name")
    if type(name) in (int, float, bool):  # `name: 12345`, refused for that (`_not_a_string`): still its name
        name = str(name).lower()
    if not isinstance(name, str):
        return None
    ns = meta.get("namespace")
    namespace = ns if isinstance(ns, str) and ns else ("" if kind in CLUSTER_SCOPED else "default")
    spec = doc.get("spec")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    return Unread(kind, namespace, name, node if isinstance(node, str) else "", tuple(errors), doc, where)


class Reader:
    """Turns raw object dicts into models, one input at a time.

    Why a class: some decisions depend on the whole input, not on one object — the
    index in a generated pod name (`workloads.GeneratedNames`) — so every object of one
    input goes through one Reader. Per object: kind and apiVersion check
    (`convert.check_api_version`), workload expansion (`workloads`), conversion to the
    stored version (`convert.to_internal`), then the strict models. Problems are
    collected (`errors`, `warnings`) so that a user sees all of them in one run.

    A cluster's workload (`workloads.from_a_cluster`: a dump's) is planned for the pods it
    lacks given every pod of the input, so it waits for `finish`, after the last object.
    """

    def __init__(self) -> None:
        self.names = GeneratedNames()
        self.errors: list[InputError] = []
        self.warnings: list[str] = []
        self.unread: list[Unread] = []
        """Identifiable objects with errors (their errors are also in `errors`)."""
        self.pods = PodIndex()
        self.cluster_workloads: list[Document] = []

    def read(self, doc: dict[str, Any], source: str = "", position: str = "") -> list[TypeMeta]:
        """The models for one raw object (several for a workload, none for a skipped
        kind, a cluster's workload — until `finish` — or an error, which is recorded; `unread`
        names the object of an error)."""
        before = len(self.errors)
        out = self._read(doc, source, position)
        if len(self.errors) > before:
            unread = _unread(doc, self.errors[before:], located(source, position))
            if unread is not None:
                self.unread.append(unread)
            elif position:  # an object without a name: where it is, so that it can be found
                self.errors[before:] = [
                    InputError(e.reason, obj=e.obj, field=e.field, source=located(e.source, position))
                    if type(e) is InputError and position not in e.source
                    else e
                    for e in self.errors[before:]
                ]
        return out

    def _read(self, doc: dict[str, Any], source: str, position: str) -> list[TypeMeta]:
        kind = doc.get("kind")
        if not isinstance(kind, str) or kind not in API_VERSIONS:
            where = f"{source}: " if source else ""
            self.warnings.append(f"{where}skipping {object_ref(doc)}: kind not used by dra-solver")
            return []
        try:
            check_api_version(doc, source)
        except InputError as exc:
            self.errors.append(exc)
            return []
        if kind in NOT_EXPANDED:
            where = f"{source}: " if source else ""
            self.warnings.append(f"{where}skipping {object_ref(doc)}: {NOT_EXPANDED[kind]}")
            return []
        if kind in EXPANDED_KINDS:
            if from_a_cluster(doc):
                self.cluster_workloads.append((source, position, doc))
                return []
            return self._read_workload(doc, source)
        named = self.names.name(doc)
        if kind == "Pod":
            self.pods.add(named)
        obj = self._read_one(named, source)
        return [] if obj is None else [obj]

    def finish(self) -> list[tuple[TypeMeta, str, str]]:
        """(model, source, position) of the pods the input's cluster workloads lack
        (`workloads.lacking_pods`), read as every pod is; with a warning counting them per
        source. Call once, after the last `read`."""
        workloads, self.cluster_workloads = self.cluster_workloads, []
        out: list[tuple[TypeMeta, str, str]] = []
        counted: dict[str, int] = {}
        for (source, _, workload), made in lacking_by_workload(workloads, self.pods, errors=self.errors):
            objects = self._read_pods(workload, [pod for _, _, pod in made], source)
            out.extend((obj, source, position) for obj, (_, position, _) in zip(objects, made, strict=False))
            counted[source] = counted.get(source, 0) + len(objects)
        for source, n in counted.items():
            where = f"{source}: " if source else ""
            self.warnings.append(
                f"{where}{n} pod{'s' if n != 1 else ''} that workloads will create but have not yet "
                "(named <workload>-<i>) are planned too"
            )
        return out

    def _read_one(self, doc: dict[str, Any], source: str) -> TypeMeta | None:
        try:
            converted, version = to_internal(doc, source)
        except ValidationErrors as exc:
            self.errors.extend(exc.errors)
            return None
        except InputError as exc:
            self.errors.append(exc)
            return None
        model = KINDS[converted["kind"]]
        try:
            obj = _validate_nulls_unset(model, converted)
        except ValidationError as exc:
            self.errors.extend(_to_input_error(e, model, doc, source, version) for e in exc.errors())
            return None
        if version is not None:  # None is the default (pydantic's private __setattr__ costs)
            obj._converted_from = version
        return obj

    def _read_workload(self, doc: dict[str, Any], source: str) -> list[TypeMeta]:
        """The workload's pods; a problem in the pod template is reported once, against
        the workload and its `spec.template` path, not once per replica."""
        try:
            pods = expand_workload(doc, source)
        except InputError as exc:
            self.errors.append(exc)
            return []
        return self._read_pods(doc, pods, source)

    def _read_pods(self, doc: dict[str, Any], pods: list[dict[str, Any]], source: str) -> list[TypeMeta]:
        """The Pod models of the workload `doc`'s pods; none, and one error per problem of its
        template, when they are not valid."""
        out: list[TypeMeta] = []
        for pod in pods:
            try:
                out.append(_validate_nulls_unset(Pod, pod))
            except ValidationError as exc:
                for e in exc.errors():
                    err = _to_input_error(e, Pod, pod, source, None)
                    field = f"spec.template.{err.field}" if err.field.startswith(("spec", "metadata")) else ""
                    ref = object_ref(doc)
                    self.errors.append(InputError(err.reason, obj=ref, field=field, source=source))
                return []
        return out


M = TypeVar("M", bound=TypeMeta)


def _validate_nulls_unset(model: type[M], doc: dict[str, Any]) -> M:
    """`model.model_validate(doc)`, with a `null` the model refuses read as the field unset.

    Why: Kubernetes decodes JSON `null` into a map, list or string as its zero value, so the
    API server accepts `labels:` written with nothing under it (YAML's null) as no labels; the
    models refuse None where they want a dict. Only on failure, and only the nulls a refusal
    names (a copy of `doc` without them is validated again; what is still wrong is raised):
    a valid object costs nothing more."""
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        stripped = _without_refused_nulls(doc, exc.errors())
        if stripped is None:
            raise
    return model.model_validate(stripped)


def _without_refused_nulls(doc: dict[str, Any], errors: Sequence[Any]) -> dict[str, Any] | None:
    """A copy of `doc` without the null values of a mapping's key that `errors` refuse, or None
    when there is none (a null list item is no unset field: it stays refused)."""
    paths = [
        [p for p in e["loc"] if not (isinstance(p, str) and p.startswith(("function-", "is-instance")))]
        for e in errors
        if e.get("input", 0) is None and e["type"] != "missing"
    ]
    paths = [p for p in paths if p != ["metadata"]]  # no metadata, no name: not Kubernetes at all
    if not paths:
        return None
    out = copy.deepcopy(doc)
    removed = False
    for path in paths:
        parent: Any = out
        for part in path[:-1]:
            if isinstance(parent, dict):
                parent = parent.get(part)
            elif isinstance(parent, list) and isinstance(part, int) and 0 <= part < len(parent):
                parent = parent[part]
            else:
                parent = None
                break
        if isinstance(parent, dict) and path and path[-1] in parent and parent[path[-1]] is None:
            del parent[path[-1]]
            removed = True
    return out if removed else None


def parse_object(doc: dict[str, Any], source: str = "") -> TypeMeta | None:
    """The model for one object dict (converted to v1); None for kinds dra-solver does not
    read as a single object (unknown kinds, workloads: see `Reader`). Raises
    ValidationErrors with every problem of the object."""
    reader = Reader()
    objects = reader.read(doc, source)
    if reader.errors:
        raise ValidationErrors(reader.errors)
    return objects[0] if len(objects) == 1 and doc.get("kind") not in EXPANDED_KINDS else None


def _to_input_error(
    err: Any, model: type[TypeMeta], doc: dict[str, Any], source: str, version: str | None
) -> InputError:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "is-instance")))]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "string_type" and type(err.get("input")) in (int, float, bool):
        msg = _not_a_string(err["input"])
    elif err["type"] == "extra_forbidden":
        msg = extra_field_reason(model, loc)
    ref = object_ref(doc)
    if version is not None:
        ref = f"{ref} ({version})"
        path = original_path(path, str(doc.get("kind")), version)
    return InputError(msg, obj=ref, field=path, source=source)


def _not_a_string(value: float | bool) -> str:
    """Why a YAML number or boolean where Kubernetes wants a string (a label value `rack: 7`,
    hand-written) is refused, and the fix. Not read as its string: the API server refuses it
    too, and what was written cannot be told from the value (`1.10` reads as 1.1, `010` as 8,
    `yes` as true) — docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)"."""
    if isinstance(value, bool):
        return (
            f"must be a string, not the boolean {str(value).lower()} (YAML reads unquoted true, yes, on… "
            "as one): quote it, as the API server refuses a boolean here"
        )
    shown = json.dumps(str(value))
    fix = f"quote it ({shown})" if isinstance(value, int) else "quote it as written"
    return f"must be a string, not the number {value}: {fix}, as the API server refuses a number here"


def _finish(
    reader: Reader,
    pairs: list[tuple[TypeMeta, str]],
    positions: dict[int, str],
    *,
    strict: bool = True,
    duplicates_fatal: bool = True,
) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    """The pods of the input's cluster workloads (`Reader.finish`); duplicates found
    (`identity`, naming both positions); every error raised together — but for `strict=False`
    the errors of identifiable objects (`Reader.unread`), which the caller reads from the reader,
    and, unless `duplicates_fatal`, the duplicates: each costs only itself (`_lenient_duplicates`)."""
    for obj, source, position in reader.finish():
        pairs.append((obj, source))
        positions[id(obj)] = position
    if strict or duplicates_fatal:
        kept, dup_warnings, dup_errors = dedupe(pairs, positions)
    else:
        kept, dup_warnings, dup_errors = _lenient_duplicates(reader, pairs, positions), [], []
    own = {id(e) for u in reader.unread for e in u.errors} if not strict else set()
    errors = [e for e in reader.errors if id(e) not in own] + dup_errors
    if errors:
        raise ValidationErrors(errors)
    return kept, reader.warnings + dup_warnings


def _lenient_duplicates(
    reader: Reader, pairs: list[tuple[TypeMeta, str]], positions: dict[int, str]
) -> list[tuple[TypeMeta, str]]:
    """`pairs` with each identity once, as the planning commands read an input
    (`identity.dedupe_lenient`): an identical copy read once (a warning in `reader.warnings`);
    an identity defined with different content — or defined by an object that could not be read
    and again by one that could — becomes one `Unread` whose errors name both positions, so that
    what depends on it is held with that reason (docs/semantics.md, "Messy clusters: what one
    bad object costs (issue #39)")."""
    kept, warnings, conflicts = dedupe_lenient(pairs, positions)
    reader.warnings.extend(warnings)
    source_of = {id(obj): source for obj, source in pairs}

    def where(obj: TypeMeta) -> str:
        return located(source_of.get(id(obj), ""), positions.get(id(obj)))

    for first, errors in conflicts.values():
        unread = _unread(first.dump(), errors, where(first))
        if unread is not None:
            reader.unread.append(unread)
    # An identity also defined by an object that could not be read: every definition left out.
    merged: dict[Identity, Unread] = {}
    for u in reader.unread:
        key: Identity = (u.kind, "" if u.kind in CLUSTER_SCOPED else u.namespace, u.name)
        earlier = merged.get(key)
        merged[key] = u if earlier is None else _again(earlier, u.where, u.errors)
    out: list[tuple[TypeMeta, str]] = []
    for obj, source in kept:
        found = merged.get(identity(obj))
        if found is None:
            out.append((obj, source))
        else:
            merged[identity(obj)] = _again(found, where(obj))
    reader.unread[:] = merged.values()
    return out


def _again(u: Unread, where: str, errors: tuple[InputError, ...] = ()) -> Unread:
    """`u` defined again at `where` (with `errors` of its own when that one could not be read
    either): one more error naming both positions."""
    again = InputError(
        f"defined twice: in {u.where or '<input>'} and in {where or '<input>'}, not both readable: "
        "which one the cluster has cannot be told, so neither is read",
        obj=u.ref,
    )
    return replace(u, errors=(*u.errors, again, *errors))


Document = tuple[str, str, dict[str, Any]]
"""(source, position, object dict): an object already parsed — as the API server serves it
(`api.live`) — read exactly as an object of a file is (`load_sourced(documents=...)`)."""


def _read_docs(
    reader: Reader,
    docs: Iterable[tuple[str, dict[str, Any]]],
    source: str,
    pairs: list[tuple[TypeMeta, str]],
    positions: dict[int, str],
) -> int:
    """Read (position, object dict) pairs into `pairs` (and where each was into `positions`);
    returns how many object dicts there were (skipped kinds included)."""
    n = 0
    for position, doc in docs:
        n += 1
        stop_reading_if_asked(len(pairs))
        for obj in reader.read(doc, source, position):
            pairs.append((obj, source))
            positions[id(obj)] = position
    return n


def _read_text(
    reader: Reader, text: str, source: str, pairs: list[tuple[TypeMeta, str]], positions: dict[int, str]
) -> int:
    """Read one text's objects into `pairs` (and where each was into `positions`); returns
    how many object dicts the text holds (skipped kinds included)."""
    return _read_docs(reader, list(iter_positioned(text, source)), source, pairs, positions)


def load_text(text: str, source: str = "<string>") -> tuple[list[TypeMeta], list[str]]:
    """Objects and warnings (skipped kinds) from one text; all errors at once."""
    reader = Reader()
    pairs: list[tuple[TypeMeta, str]] = []
    positions: dict[int, str] = {}
    _read_text(reader, text, source, pairs, positions)
    kept, warnings = _finish(reader, pairs, positions)
    return [obj for obj, _ in kept], warnings


def expand_paths(paths: Iterable[str | Path]) -> list[Path | None]:
    """Files as given, directories as their sorted YAML/JSON files; `-` means stdin (None)."""
    out: list[Path | None] = []
    for raw in paths:
        if str(raw) == "-":
            out.append(None)
            continue
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file()))
        elif path.is_file():
            out.append(path)
        else:
            raise InputError("no such file or directory", source=str(path))
    return out


def load_lenient(
    paths: Iterable[str | Path], documents: Iterable[Document] = (), *, duplicates_fatal: bool = False
) -> tuple[list[tuple[TypeMeta, str]], list[str], list[Unread]]:
    """`load_sourced`, but an object that names itself (kind and name) and cannot be read is
    returned as `Unread` instead of failing the input: one bad object costs only what depends
    on it (docs/semantics.md, "Messy clusters"). So does a duplicate (`identity.dedupe_lenient`):
    an identical copy is read once with a warning, an identity defined with different content is
    an `Unread` — unless `duplicates_fatal` (`validate`: every duplicate is an error). Input
    that is not Kubernetes at all (not YAML, no objects, an object without kind or name)
    still raises."""
    reader = Reader()
    pairs, warnings = _load_into(reader, paths, documents, strict=False, duplicates_fatal=duplicates_fatal)
    return pairs, warnings, list(reader.unread)


def load_sourced(
    paths: Iterable[str | Path], documents: Iterable[Document] = ()
) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    """Every object of the given files/directories/stdin with the file it came from, and
    warnings; the errors of all files are raised together. The files are one input: a
    duplicate across two files is found, generated pod names count across files.

    `documents` are objects already parsed (a live cluster's, `api.live`), read first and
    as part of the same input: the files add objects to them, and an object of a file that
    the documents already hold is a duplicate like any other. One Reader for both, so a
    served object goes through exactly the steps an object of a file does (apiVersion
    check, conversion, strict models), once.

    An argument without any object (an empty file, only comments, a directory without
    YAML) is an error, as `kubectl apply` says "no objects passed": a wrong path or an
    empty pipe must not pass as a valid, empty cluster."""
    return _load_into(Reader(), paths, documents, strict=True)


def _load_into(
    reader: Reader,
    paths: Iterable[str | Path],
    documents: Iterable[Document],
    *,
    strict: bool,
    duplicates_fatal: bool = True,
) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    """`load_sourced` with `reader`; `strict=False`: see `load_lenient`. Without the cyclic
    collector (`collector_paused`): everything read stays alive."""
    with collector_paused():
        return _read_into(reader, paths, documents, strict=strict, duplicates_fatal=duplicates_fatal)


def _read_into(
    reader: Reader,
    paths: Iterable[str | Path],
    documents: Iterable[Document],
    *,
    strict: bool,
    duplicates_fatal: bool,
) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    pairs: list[tuple[TypeMeta, str]] = []
    positions: dict[int, str] = {}
    for source, position, doc in documents:
        try:
            _read_docs(reader, [(position, doc)], source, pairs, positions)
        except InputError as exc:
            reader.errors.append(exc)
    seen: set[Path] = set()
    """Files read (resolved): a file given twice (`plan a.yaml dir/`, dir holding a.yaml) is one
    input file, read once — not each of its objects a duplicate of itself."""
    for raw in paths:
        found = 0
        failed = False
        for path in expand_paths([raw]):
            source = "<stdin>" if path is None else str(path)
            if path is not None and path.resolve() in seen:
                reader.warnings.append(f"{source}: given more than once: read once")
                found += 1
                continue
            if path is not None:
                seen.add(path.resolve())
            try:
                text = sys.stdin.read() if path is None else path.read_text(encoding="utf-8")
                found += _read_text(reader, text, source, pairs, positions)
            except (OSError, UnicodeDecodeError) as exc:
                reader.errors.append(InputError(f"cannot read: {exc}", source=source))
                failed = True
            except InputError as exc:
                reader.errors.append(exc)
                failed = True
            except MemoryError:
                size = "" if path is None else f" ({path.stat().st_size:,} bytes)"
                reason = f"out of memory reading this file{size}: the input is too large"
                reader.errors.append(InputError(reason, source=source))
                failed = True
        if not found and not failed:
            where = "<stdin>" if str(raw) == "-" else str(raw)
            what = "no *.yaml, *.yml or *.json file with an object" if Path(where).is_dir() else "empty input"
            reader.errors.append(InputError(f"no objects in {where} ({what})"))
    return _finish(reader, pairs, positions, strict=strict, duplicates_fatal=duplicates_fatal)


def load_paths(paths: Iterable[str | Path]) -> tuple[list[TypeMeta], list[str]]:
    """Load every object of the given files/directories/stdin; errors of all files together."""
    pairs, warnings = load_sourced(paths)
    return [obj for obj, _ in pairs], warnings


def dumps(
    objects: Iterable[dict[str, Any]],
    fmt: str = "yaml",
    annotations: dict[str, str] | None = None,
    *,
    distinct: bool = False,
) -> str:
    """Print objects as one `kind: List`, the way kubectl does; `annotations` go on the List's
    own metadata (what a run says of itself: kubectl applies the items and ignores them, and
    the loader reads only the items). `distinct`: the caller promises no dict or list appears
    twice in the objects and annotations (fresh dumps), so that equal parts are written once
    (`api.emit.block_yaml`); the same text."""
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "List"}
    if annotations:
        doc["metadata"] = {"annotations": annotations}
    doc["items"] = list(objects)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    return dump_yaml(doc, distinct=distinct)


_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_ESCAPED = re.compile(r'\\[^"]')
"""In `json.dumps` text: an escape other than a quote's (`\\"`)."""
_ODD_KEY = re.compile(r'(?<!\\)"(?:(?:[^"\\]|\\"){100,300})?": ')
"""In `json.dumps` text whose only escapes are quotes': an empty key, or one whose length is near
the 128 characters where the two emitters decide differently whether a key is simple."""


if hasattr(yaml, "CSafeDumper"):

    class _FastDumper(CachedTags, yaml.CSafeDumper):
        """libyaml's emitter with SafeRepresenter's nodes, made without its per-node dispatch.

        `represent_data` makes exactly the nodes SafeRepresenter makes for the exact types str,
        int, bool, None, dict and list (a dict or list met twice is the same node, which the
        serializer writes as an anchor and aliases); any other value goes to SafeRepresenter.
        The resolver's answers are remembered per scalar (`bounded.CachedTags`, as the fast
        loader's)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._resolved = {}

        def represent_data(self, data: Any) -> Node:
            t = type(data)
            if t is str:
                return ScalarNode(_STR, data)
            if t is dict or t is list:
                key = id(data)
                seen = self.represented_objects.get(key)
                if seen is not None:
                    return seen
                self.object_keeper.append(data)
                if t is dict:
                    pairs: list[tuple[Node, Node]] = []
                    node: Node = MappingNode(_MAP, pairs, flow_style=self.default_flow_style)
                    self.represented_objects[key] = node
                    rep = self.represent_data
                    pairs.extend([(rep(k), rep(v)) for k, v in data.items()])
                else:
                    items: list[Node] = []
                    node = SequenceNode(_SEQ, items, flow_style=self.default_flow_style)
                    self.represented_objects[key] = node
                    items.extend([self.represent_data(v) for v in data])
                return node
            if t is int:
                return ScalarNode(_INT, str(data))
            if t is bool:
                return ScalarNode(_BOOL, "true" if data else "false")
            if data is None:
                return ScalarNode(_NULL, "null")
            return super().represent_data(data)

    assert not _FastDumper.yaml_path_resolvers  # what `resolve` and the resolvers above rely on
    _FAST: type | None = _FastDumper
else:  # pragma: no cover - depends on how PyYAML was built
    _FAST = None


def dump_yaml(doc: Any, *, distinct: bool = False) -> str:
    """`yaml.safe_dump(doc, sort_keys=False)`, byte for byte, in a fraction of the time.

    Why: PyYAML's representer and emitter are pure Python; a 10,000-pod plan spent most of its
    output time there. libyaml's emitter writes the same text as PyYAML's for every string of
    printable ASCII — they differ only in how they escape and fold other characters (tabs, line
    breaks, non-ASCII, control characters), in empty keys and in keys of 123-128 characters.
    So `_FastDumper` writes `doc` when all its strings are plain: its JSON text (`json.dumps`
    escapes exactly those characters, and quotes and backslashes, with a backslash) has no
    escape but a quote's and no empty or near-128 key; anything else — or a value JSON cannot
    write, or a dict or list that contains itself — goes through PyYAML's emitter as before.
    `tests/test_load.py` compares the two on random documents. `distinct`: no dict or list
    appears twice in `doc` (`block_yaml`)."""
    with collector_paused():
        # plain data: written directly, as libyaml writes it (`api.emit`)
        plain = block_yaml(doc, distinct=distinct)
        if plain is not None:
            return plain
        if _FAST is not None:
            try:
                text = json.dumps(doc, check_circular=False)
            except (TypeError, ValueError, RecursionError):
                text = "\\"
            if _ESCAPED.search(text) is None and _ODD_KEY.search(text) is None:
                return yaml.dump(doc, Dumper=_FAST, sort_keys=False)
        return yaml.safe_dump(doc, sort_keys=False)
