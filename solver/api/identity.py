"""One identity per object: (kind, namespace, name) may appear once in an input.

Why: Kubernetes stores one object per identity. When an input holds two (two files
both defining `ResourceSlice node-1-gpu`, a dump concatenated with an edited copy), a
later one silently replacing the earlier one — or both being used, which doubles a
pool's devices and makes allocation report "0 match the selectors" — is a misreading.
Every second occurrence is an error naming both positions (file, document, list item),
identical copies included (`kubectl create` refuses them too: AlreadyExists) — where the input
is read strictly (`validate`, `dra_solver.load()`). Read leniently, as the commands that plan
read it (docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)"), a
duplicate costs only itself: an identical copy is read once with a warning, and an identity
defined with different content is not read at all (`dedupe_lenient`): which one the cluster
has cannot be told, so what depends on it is held with that as the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ..errors import InputError
from .models import CLUSTER_SCOPED, TypeMeta

Identity = tuple[str, str, str]


def identity(obj: TypeMeta) -> Identity:
    """(kind, namespace, name); cluster-scoped kinds have namespace "", namespaced kinds
    without one are in `default`, as kubectl would create them."""
    ns = "" if obj.kind in CLUSTER_SCOPED else obj.metadata.ns
    return (obj.kind, ns, obj.metadata.name)


def located(source: str, position: str | None) -> str:
    """Where an object is in the input, as errors and warnings say it: its file (`<input>` for
    stdin or objects given in memory) and, when known, its document and list item."""
    return f"{source or '<input>'} ({position})" if position else source or "<input>"


def _repeats(
    items: Iterable[tuple[TypeMeta, str]], positions: Mapping[int, str] | None
) -> Iterator[tuple[TypeMeta, str, tuple[TypeMeta, str] | None, bool, str]]:
    """(object, source, its identity's first occurrence or None, whether a repeat is an
    identical copy of it, what is said of a repeat) for every item in order; unnamed objects
    are never a repeat (validation reports the missing name). The saying names both positions:
    the source (file) and, where known (`positions`, by `id(obj)`), the document and list item."""
    first: dict[Identity, tuple[TypeMeta, str]] = {}
    where_of = positions or {}

    def where(obj: TypeMeta, source: str) -> str:
        return located(source, where_of.get(id(obj)))

    for obj, source in items:
        key = identity(obj)
        seen = first.get(key) if key[2] else None
        if seen is None:
            if key[2]:
                first[key] = (obj, source)
            yield obj, source, None, False, ""
            continue
        earlier, earlier_source = seen
        identical = earlier.dump() == obj.dump()
        same = "an identical copy" if identical else "with different content"
        said = f"defined twice, {same}: in {where(earlier, earlier_source)} and in {where(obj, source)}"
        yield obj, source, seen, identical, said


def dedupe(
    items: Iterable[tuple[TypeMeta, str]], positions: Mapping[int, str] | None = None
) -> tuple[list[tuple[TypeMeta, str]], list[str], list[InputError]]:
    """The objects with each identity once (first occurrence kept, input order), warnings
    (none today; kept for callers) and an error for every identity seen again — an
    identical copy included: which one is meant cannot be known, and a copy that is
    identical today is one edit away from silently replacing the other. The error names
    both positions (`_repeats`)."""
    kept: list[tuple[TypeMeta, str]] = []
    errors: list[InputError] = []
    for obj, source, seen, _, said in _repeats(items, positions):
        if seen is None:
            kept.append((obj, source))
            continue
        errors.append(
            InputError(
                f"{said}; one identity (kind, namespace, name) may appear once in an input",
                obj=obj.ref,
                source=source,
            )
        )
    return kept, [], errors


def dedupe_lenient(
    items: Iterable[tuple[TypeMeta, str]], positions: Mapping[int, str] | None = None
) -> tuple[list[tuple[TypeMeta, str]], list[str], dict[Identity, tuple[TypeMeta, list[InputError]]]]:
    """`dedupe` as the planning commands read an input: a duplicate costs only itself.

    An identical copy is read once (the first), with a warning naming both positions: the API
    server would hold one object (`kubectl apply` of the second changes nothing). An identity
    defined again with different content is left out whole — every copy — and returned as a
    conflict (its first occurrence and one error per repeat): which copy the cluster has cannot
    be told, so the caller makes it an object that could not be read (`load.Unread`) and what
    depends on it is held with that reason."""
    kept: list[tuple[TypeMeta, str]] = []
    warnings: list[str] = []
    conflicts: dict[Identity, tuple[TypeMeta, list[InputError]]] = {}
    for obj, source, seen, identical, said in _repeats(items, positions):
        if seen is None:
            kept.append((obj, source))
        elif identical:
            where = f"{source}: " if source else ""
            warnings.append(f"{where}{obj.ref}: {said}; read once")
        else:
            first, _ = seen
            why = f"{said}: which one the cluster has cannot be told, so neither is read"
            error = InputError(why, obj=obj.ref, source=source)
            conflicts.setdefault(identity(obj), (first, []))[1].append(error)
    if conflicts:
        kept = [(obj, source) for obj, source in kept if identity(obj) not in conflicts]
    return kept, warnings, conflicts
