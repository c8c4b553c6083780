"""One identity per object: (kind, namespace, name) may appear once in an input.

Why: Kubernetes stores one object per identity. When an input holds two (two files
both defining `ResourceSlice node-1-gpu`, a dump concatenated with an edited copy), a
later one silently replacing the earlier one — or both being used, which doubles a
pool's devices and makes allocation report "0 match the selectors" — is a misreading.
Two identical copies are harmless and dropped with a warning; two different ones are an
error naming both sources.
"""

from __future__ import annotations

from collections.abc import Iterable

from dra_solver.api.models import CLUSTER_SCOPED, TypeMeta
from dra_solver.errors import InputError

Identity = tuple[str, str, str]


def identity(obj: TypeMeta) -> Identity:
    """(kind, namespace, name); cluster-scoped kinds have namespace "", namespaced kinds
    without one are in `default`, as kubectl would create them."""
    ns = "" if obj.kind in CLUSTER_SCOPED else (obj.metadata.namespace or "default")
    return (obj.kind, ns, obj.metadata.name)


def dedupe(
    items: Iterable[tuple[TypeMeta, str]],
) -> tuple[list[tuple[TypeMeta, str]], list[str], list[InputError]]:
    """The objects with each identity once (first occurrence kept, input order), the
    warnings for dropped identical copies and the errors for conflicting ones."""
    first: dict[Identity, tuple[TypeMeta, str]] = {}
    kept: list[tuple[TypeMeta, str]] = []
    warnings: list[str] = []
    errors: list[InputError] = []
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
        where = f"{earlier_source or '<input>'} and {source or '<input>'}"
        if earlier.dump() == obj.dump():
            warnings.append(f"{obj.ref}: identical copy in {where}; the second one is ignored")
        else:
            errors.append(
                InputError(
                    f"defined twice with different content ({where}); one identity "
                    "(kind, namespace, name) may appear once",
                    obj=obj.ref,
                    source=source,
                )
            )
    return kept, warnings, errors
