"""Reading Kubernetes objects from files, directories, stdin, strings and dicts.

Why one module: every entry point (CLI, Python API, tests) must accept the same inputs —
multi-document YAML, JSON, `kind: List` as `kubectl get -o yaml` prints it — and turn
every parse problem into an InputError naming the file, the object and the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dra_solver.api.models import KINDS, TypeMeta
from dra_solver.errors import InputError, ValidationErrors

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


def parse_object(doc: dict[str, Any], source: str = "") -> TypeMeta | None:
    """Build the model for one object dict; None for kinds dra-solver does not read."""
    kind = doc.get("kind")
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return None
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        raise ValidationErrors([_to_input_error(e, doc, source) for e in exc.errors()]) from None


def object_ref(doc: dict[str, Any]) -> str:
    raw = doc.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    ns, name = meta.get("namespace"), meta.get("name") or "<unnamed>"
    return f"{doc.get('kind', '<no kind>')} {f'{ns}/' if ns else ''}{name}"


def _to_input_error(err: Any, doc: dict[str, Any], source: str) -> InputError:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "is-instance")))]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "missing":
        msg = "required field is missing"
    return InputError(msg, obj=object_ref(doc), field=path, source=source)


def load_text(text: str, source: str = "<string>") -> tuple[list[TypeMeta], list[str]]:
    """Objects and warnings (skipped unknown kinds) from one text; all errors at once."""
    objects: list[TypeMeta] = []
    warnings: list[str] = []
    errors: list[InputError] = []
    for doc in iter_documents(text, source):
        try:
            obj = parse_object(doc, source)
        except ValidationErrors as exc:
            errors.extend(exc.errors)
            continue
        if obj is None:
            warnings.append(f"{source}: skipping {object_ref(doc)}: kind not used by dra-solver")
        else:
            objects.append(obj)
    if errors:
        raise ValidationErrors(errors)
    return objects, warnings


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
    warnings; the errors of all files are raised together."""
    objects: list[tuple[TypeMeta, str]] = []
    warnings: list[str] = []
    errors: list[InputError] = []
    for path in expand_paths(paths):
        source = "<stdin>" if path is None else str(path)
        try:
            text = sys.stdin.read() if path is None else path.read_text(encoding="utf-8")
            objs, warns = load_text(text, source)
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(InputError(f"cannot read: {exc}", source=source))
            continue
        except ValidationErrors as exc:
            errors.extend(exc.errors)
            continue
        except InputError as exc:
            errors.append(exc)
            continue
        objects.extend((obj, source) for obj in objs)
        warnings.extend(warns)
    if errors:
        raise ValidationErrors(errors)
    return objects, warnings


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
