"""Reading Kubernetes objects from files, directories, stdin, strings and dicts.

Why one module: every entry point (CLI, Python API, tests) must accept the same inputs —
multi-document YAML, JSON, `kind: List` as `kubectl get -o yaml` prints it — and turn
every parse problem into an InputError naming the file, the object and the field.
The steps between the YAML text and the models (apiVersion conversion, workload
expansion, one identity per object) live in `convert`, `workloads` and `identity`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dra_solver.api.convert import API_VERSIONS, check_api_version, object_ref, original_path, to_internal
from dra_solver.api.identity import dedupe
from dra_solver.api.models import KINDS, Pod, TypeMeta
from dra_solver.api.strict import extra_field_reason
from dra_solver.api.workloads import EXPANDED_KINDS, NOT_EXPANDED, GeneratedNames, expand_workload
from dra_solver.errors import InputError, ValidationErrors

__all__ = [
    "Reader",
    "dumps",
    "expand_paths",
    "iter_documents",
    "load_paths",
    "load_sourced",
    "load_text",
    "object_ref",
    "parse_object",
]

YAML_SUFFIXES = (".yaml", ".yml", ".json")


_SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~10x faster


class _Loader(_SafeBase):  # type: ignore[misc, valid-type]
    """Safe YAML without the timestamp resolver: Kubernetes keeps timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def iter_documents(text: str, source: str) -> Iterator[dict[str, Any]]:
    """Yield object dicts from YAML/JSON text, flattening `kind: List`."""
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - safe loader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"malformed YAML: {where}{problem}", source=source) from None
    for doc in docs:
        yield from _flatten(doc, source)


def _flatten(doc: Any, source: str) -> Iterator[dict[str, Any]]:
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise InputError(f"expected a Kubernetes object (a mapping), got {type(doc).__name__}", source=source)
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            yield from _flatten(item, source)
        return
    yield doc


class Reader:
    """Turns raw object dicts into models, one input at a time.

    Why a class: some decisions depend on the whole input, not on one object — the
    index in a generated pod name (`workloads.GeneratedNames`) — so every object of one
    input goes through one Reader. Per object: kind and apiVersion check
    (`convert.check_api_version`), workload expansion (`workloads`), conversion to the
    stored version (`convert.to_internal`), then the strict models. Problems are
    collected (`errors`, `warnings`) so that a user sees all of them in one run.
    """

    def __init__(self) -> None:
        self.names = GeneratedNames()
        self.errors: list[InputError] = []
        self.warnings: list[str] = []

    def read(self, doc: dict[str, Any], source: str = "") -> list[TypeMeta]:
        """The models for one raw object (several for a workload, none for a skipped
        kind or an error, which is recorded)."""
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
            return self._read_workload(doc, source)
        obj = self._read_one(self.names.name(doc), source)
        return [] if obj is None else [obj]

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
            obj = model.model_validate(converted)
        except ValidationError as exc:
            self.errors.extend(_to_input_error(e, model, doc, source, version) for e in exc.errors())
            return None
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
        out: list[TypeMeta] = []
        for pod in pods:
            try:
                out.append(Pod.model_validate(pod))
            except ValidationError as exc:
                for e in exc.errors():
                    err = _to_input_error(e, Pod, pod, source, None)
                    field = f"spec.template.{err.field}" if err.field.startswith(("spec", "metadata")) else ""
                    ref = object_ref(doc)
                    self.errors.append(InputError(err.reason, obj=ref, field=field, source=source))
                return []
        return out


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
    elif err["type"] == "extra_forbidden":
        msg = extra_field_reason(model, loc)
    ref = object_ref(doc)
    if version is not None:
        ref = f"{ref} ({version})"
        path = original_path(path, str(doc.get("kind")), version)
    return InputError(msg, obj=ref, field=path, source=source)


def _finish(
    reader: Reader, pairs: list[tuple[TypeMeta, str]]
) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    """Duplicates resolved (`identity`); every error of the input raised together."""
    kept, dup_warnings, dup_errors = dedupe(pairs)
    errors = reader.errors + dup_errors
    if errors:
        raise ValidationErrors(errors)
    return kept, reader.warnings + dup_warnings


def load_text(text: str, source: str = "<string>") -> tuple[list[TypeMeta], list[str]]:
    """Objects and warnings (skipped kinds, dropped identical copies) from one text;
    all errors at once."""
    reader = Reader()
    pairs = [(obj, source) for doc in iter_documents(text, source) for obj in reader.read(doc, source)]
    kept, warnings = _finish(reader, pairs)
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


def load_sourced(paths: Iterable[str | Path]) -> tuple[list[tuple[TypeMeta, str]], list[str]]:
    """Every object of the given files/directories/stdin with the file it came from, and
    warnings; the errors of all files are raised together. The files are one input: a
    duplicate across two files is found, generated pod names count across files."""
    reader = Reader()
    pairs: list[tuple[TypeMeta, str]] = []
    for path in expand_paths(paths):
        source = "<stdin>" if path is None else str(path)
        try:
            text = sys.stdin.read() if path is None else path.read_text(encoding="utf-8")
            docs = list(iter_documents(text, source))
        except (OSError, UnicodeDecodeError) as exc:
            reader.errors.append(InputError(f"cannot read: {exc}", source=source))
            continue
        except InputError as exc:
            reader.errors.append(exc)
            continue
        pairs.extend((obj, source) for doc in docs for obj in reader.read(doc, source))
    return _finish(reader, pairs)


def load_paths(paths: Iterable[str | Path]) -> tuple[list[TypeMeta], list[str]]:
    """Load every object of the given files/directories/stdin; errors of all files together."""
    pairs, warnings = load_sourced(paths)
    return [obj for obj, _ in pairs], warnings


def dumps(objects: Iterable[dict[str, Any]], fmt: str = "yaml") -> str:
    """Print objects as one `kind: List`, the way kubectl does."""
    doc = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    return yaml.safe_dump(doc, sort_keys=False)
