"""Unknown-field errors worded like `kubectl apply --validate=strict`, with a did-you-mean.

Why a module of its own: pydantic (with `extra="forbid"`) detects an unknown field and its
location, but not which fields *would* have been valid there. A user who wrote `cuont: 4`
or `selector:` needs the path in wire form and the nearest known name of that level,
so this module walks the model classes along the error location to find that level's
known fields (their camelCase aliases) and picks the closest one with difflib.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel


def wire_names(model: type[BaseModel]) -> list[str]:
    """The field names of `model` as they are written in YAML (aliases)."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _field_annotation(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (info.alias, name):
            return info.annotation
    return None


def _unwrap_optional(tp: Any) -> Any:
    """`X | None` -> X; other unions are left alone (no model has them)."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class that validated the value at `loc` (pydantic's location, aliases
    and list indexes), or None when the location is not inside a model."""
    current: Any = root
    for part in loc:
        current = _unwrap_optional(current)
        origin = get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            current = _field_annotation(current, part)
        elif origin is list and isinstance(part, int):
            current = get_args(current)[0]
        elif origin is dict and isinstance(part, str):
            current = get_args(current)[1]
        else:
            return None
        if current is None:
            return None
    current = _unwrap_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def suggest(key: str, known: Sequence[str]) -> str | None:
    """The known name closest to `key`, when one is close enough to be a likely typo
    (`cuont` -> `count`, `selector` -> `selectors`, `DeviceClassName` -> `deviceClassName`)."""
    lowered = {k.lower(): k for k in known}
    if key.lower() in lowered:
        return lowered[key.lower()]
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`; did you mean "gpu.example.com"?` when a known name is close to `name`, else "": one
    wording for every "X not found" message (classes, claims, templates, pods, nodes), so a
    typo is fixed from the message instead of by reading the input again."""
    near = suggest(name, known)
    return f'; did you mean "{near}"?' if near is not None else ""


def unknown_field_reason(key: str, known: Sequence[str], where: str = "") -> str:
    """`unknown field "cuont" (did you mean "count"?)`, or the list of known fields when
    nothing is close (so the user still sees what this level accepts)."""
    reason = f'unknown field "{key}"{where}'
    hint = suggest(key, known)
    if hint is not None:
        return f'{reason} (did you mean "{hint}"?)'
    if known:
        return f"{reason}; known fields here: {', '.join(sorted(known))}"
    return reason


def extra_field_reason(root: type[BaseModel], loc: Sequence[str | int]) -> str:
    """The reason for pydantic's `extra_forbidden` error at `loc` (the last element is
    the unknown key)."""
    key = str(loc[-1])
    parent = model_at(root, loc[:-1])
    return unknown_field_reason(key, wire_names(parent) if parent is not None else [])
