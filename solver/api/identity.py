"""One identity per object: (kind, namespace, name) may appear once in an input.

Why: Kubernetes stores one object per identity. When an input holds two (two files
both defining `ResourceSlice node-1-gpu`, a dump concatenated with an edited copy), a
later one silently replacing the earlier one — or both being used, which doubles a
pool's devices and makes allocation report "0 match the selectors" — is a misreading.
Every second occurrence is an error naming both positions (file, document, list item),
identical copies included (`kubectl create` refuses them too: AlreadyExists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import InputError
from .models import CLUSTER_SCOPED, TypeMeta

Identity = tuple[str, str, str]


def identity(obj: TypeMeta) -> Identity:
    """(kind, namespace, name); cluster-scoped kinds have namespace "", namespaced kinds
    without one are in `default`, as kubectl would create them."""
    ns = "" if obj.kind in CLUSTER_SCOPED else obj.metadata.ns
    return (obj.kind, ns, obj.metadata.name)


def dedupe(
    items: Iterable[tuple[TypeMeta, str]], positions: Mapping[int, str] | None = None
) -> tuple[list[tuple[TypeMeta, str]], list[str], list[InputError]]:
    """The objects with each identity once (first occurrence kept, input order), warnings
    (none today; kept for callers) and an error for every identity seen again — an
    identical copy included: which one is meant cannot be known, and a copy that is
    identical today is one edit away from silently replacing the other. The error names
    both positions: the source (file) and, where known (`positions`, by `id(obj)`), the
    document and list item."""
    first: dict[Identity, tuple[TypeMeta, str]] = {}
    kept: list[tuple[TypeMeta, str]] = []
    warnings: list[str] = []
    errors: list[InputError] = []
    where_of = positions or {}

    def where(obj: TypeMeta, source: str) -> str:
        position = where_of.get(id(obj))
        return f"{source or '<input>'} ({position})" if position else source or "<input>"

    for obj, source in items:
        key = identity(obj)
        if not key[2]:
            kept.append((obj, source))  # unnamed: validation reports the missing name
            continue
        seen = first.get(key)
        if seen is None:
            first[key] = (obj, source)
            kept.append((obj, source))
            continue
        earlier, earlier_source = seen
        same = "an identical copy" if earlier.dump() == obj.dump() else "with different content"
        errors.append(
            InputError(
                f"defined twice, {same}: in {where(earlier, earlier_source)} and in {where(obj, source)}; "
                "one identity (kind, namespace, name) may appear once in an input",
                obj=obj.ref,
                source=source,
            )
        )
    return kept, warnings, errors
