"""Claim-constraint kinds, declared once: what each one means for the allocators.

Why a registry: a constraint kind (matchAttribute, distinctAttribute, ...) used to be a string
branched on in precompute, the reference search, the CP-SAT encoder and explain. Here each
kind states, once, its API field and the incremental rule the reference search applies (its
words are `reasons.words.MUST`); `encoders.constraints.ENCODINGS` holds its CP-SAT encoding and a test
keeps the two registries' keys equal. The checker (`check/constraints.py`) keeps its own
reading of the API on purpose: it is the independent second opinion.

The incremental rule: the search keeps, per constraint, a `state` value set folded over the
placements so far; a new placement with value set `v` is admitted when `admits(state, v)`, and
the state becomes `fold(state, v)`. A device without the attribute is never admitted.
- match: the values in common must stay non-empty (`state & v`), KEP-5491 lists included;
- distinct: no value may repeat (`state | v`, admitted when disjoint).

Plain data only: importable without pydantic or CEL (the encoders read it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .flat import KindName, ValueSet


@dataclass(frozen=True)
class ConstraintKind:
    name: KindName
    """The value of `ConstraintInfo.kind`."""
    api_field: str
    """The DeviceConstraint field that selects this kind (snake_case, as the models spell it)."""
    wire_field: str
    """The same field as written in YAML, for messages."""
    admits: Callable[[ValueSet, ValueSet], bool]
    fold: Callable[[ValueSet, ValueSet], ValueSet]


KINDS: dict[str, ConstraintKind] = {
    k.name: k
    for k in (
        ConstraintKind(
            "match",
            "match_attribute",
            "matchAttribute",
            admits=lambda state, v: bool(state & v),
            fold=lambda state, v: state & v,
        ),
        ConstraintKind(
            "distinct",
            "distinct_attribute",
            "distinctAttribute",
            admits=lambda state, v: not (state & v),
            fold=lambda state, v: state | v,
        ),
    )
}
