"""The shared state every encoder reads and extends: the CpModel plus the variable maps.

Why one mutable dataclass: each encoder module is a function `add(m: Model) -> None` that
reads the Problem and the variables made by `encoders.variables`, and adds its own
constraints (and, rarely, auxiliary variables it records here so hints and decoding can
find them). Keeping the maps in one place lets the modules stay independent of each other.

Placements are counted in two ways:
- `x[(a, d)]` — boolean, alternative `a` takes device `d` (a device kept on its own);
- `n[(a, g)]` — integer, how many devices of group `g` alternative `a` takes (a group is a
  set of interchangeable devices, see `encoders.groups`); expanded to the lowest device
  indices of the group when decoding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

# The variable and expression types come from the solver's extension (`cp_model` re-exports
# them); `cp_model` itself imports pandas, half a second of CPU, so it loads when a model is
# made (`new_cp_model`), not when the planners are imported (issue #40, "A fast start").
from ortools.sat.python.cp_model_helper import IntVar, LinearExpr

from dra_solver.problem.flat import Alternative, Candidate, Problem, Value

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


def new_cp_model() -> cp_model.CpModel:
    """An empty CpModel, `cp_model` imported now (see the note at the imports), without the
    deprecated CamelCase aliases (`_model_class`)."""
    return _model_class()()


@lru_cache(maxsize=1)
def _model_class() -> type[cp_model.CpModel]:
    """`CpModel` whose instances skip `_add_pre_pep8_methods`.

    Why: in ortools 9.15 (and whichever versions have the method), `CpModel.__init__` gives
    every instance a deprecated CamelCase alias (`AddBoolOr`, `NewIntVar`, ...) of each of its
    methods through `dir`, `getattr` and a wrapper per name: 0.21-0.25 ms of CPU per model
    (0.002 without), where the package makes thousands of small models (14,594 in one run of
    the test suite in one process, about 3.1 CPU s; the aggregated plan's pricing models,
    preemption's, the stages'). Each alias also holds the instance, so a model was freed only
    by the cyclic garbage collector. No module of the package calls those names, and the
    aliases add nothing to the model: every other step of `__init__` runs as before
    (tests/test_encoders_model.py checks that the two build the same proto and differ only in
    the aliases). A version without the method calls it never, so nothing changes there."""
    from ortools.sat.python import cp_model

    class Model(cp_model.CpModel):
        def _add_pre_pep8_methods(self) -> None:
            return None

    return Model


Allowed = dict[int, dict[int, Candidate]]
"""alternative -> device -> candidate, after the static exclusions (`encoders.variables`)."""
Cover = dict[int, list[int]]
"""alternative -> the constraints covering it (`encoders.constraints.covering`)."""


@dataclass(frozen=True)
class DeviceGroup:
    """Interchangeable devices, in ascending index order; expanded lowest-first at decode."""

    index: int
    devices: tuple[int, ...]


@dataclass
class Model:
    """CP-SAT model of one Problem: variables by role, filled by `encoders.variables.add`."""

    problem: Problem
    mode: str
    cp: cp_model.CpModel = field(default_factory=new_cp_model)
    allowed: dict[int, dict[int, Candidate]] = field(default_factory=dict)
    """alternative -> device -> candidate, after every static exclusion (empty if impossible)."""
    impossible: set[int] = field(default_factory=set)
    """Alternatives that can never be chosen (prep error, blocked All-set, too few candidates)."""
    groups: list[DeviceGroup] = field(default_factory=list)
    group_of: dict[int, int] = field(default_factory=dict)
    x: dict[tuple[int, int], IntVar] = field(default_factory=dict)
    n: dict[tuple[int, int], IntVar] = field(default_factory=dict)
    chosen: dict[int, IntVar] = field(default_factory=dict)
    placed: dict[int, IntVar] = field(default_factory=dict)
    used: dict[int, IntVar] = field(default_factory=dict)
    """device -> boolean "has any placement in this call" (only devices with an x variable)."""
    group_used: dict[int, IntVar] = field(default_factory=dict)
    """group -> how many of its devices are used (= sum of n over alternatives)."""
    match_y: dict[int, dict[Value, IntVar]] = field(default_factory=dict)
    """match constraint -> value -> boolean "the common value is v"."""
    match_b: dict[tuple[int, int, int], IntVar] = field(default_factory=dict)
    """(constraint, alternative, group) -> boolean "n[(a, g)] >= 1"."""
    group_order_cost: dict[int, IntVar] = field(default_factory=dict)
    """group -> sum of the tie-break ranks of its first `group_used` devices (objective)."""
    group_prefix: dict[int, list[int]] = field(default_factory=dict)
    """group -> prefix sums of those ranks in device order (the element table of the cost)."""
    pod_placed: dict[int, IntVar] = field(default_factory=dict)
    """Bare group (a pod without claims, `Problem.bare_groups`) -> boolean "placed"."""
    gang_on: dict[int, IntVar] = field(default_factory=dict)
    """Gang index (`Problem.gangs`) -> boolean "the gang is placed" (`encoders.gangs`)."""
    node_y: dict[tuple[int, str], IntVar] = field(default_factory=dict)
    """(group, node) -> boolean "the pod runs on this node" (multi-node Problems, see
    `encoders.nodes`)."""
    # Indices for the encoders: filled together with x and n.
    x_by_alt: dict[int, list[tuple[int, IntVar]]] = field(default_factory=dict)
    x_by_dev: dict[int, list[tuple[int, IntVar]]] = field(default_factory=dict)
    n_by_alt: dict[int, list[tuple[int, IntVar]]] = field(default_factory=dict)
    n_by_group: dict[int, list[tuple[int, IntVar]]] = field(default_factory=dict)

    def alt_vars(self, a: int) -> list[IntVar]:
        """The variables whose sum is the number of devices alternative `a` takes."""
        return [v for _, v in self.x_by_alt.get(a, [])] + [v for _, v in self.n_by_alt.get(a, [])]

    def alt_count(self, a: int) -> LinearExpr:
        """Number of devices alternative `a` takes."""
        return total(self.alt_vars(a))

    def alt_max(self, a: int) -> int:
        """Upper bound of `alt_count(a)`."""
        return len(self.x_by_alt.get(a, [])) + sum(
            len(self.groups[g].devices) for g, _ in self.n_by_alt.get(a, [])
        )


def value_key(v: Value) -> tuple[str, str, str]:
    """Deterministic order of typed values (frozenset order depends on string hashing)."""
    return (v[0], type(v[1]).__name__, repr(v[1]))


def sorted_values(values: frozenset[Value] | set[Value]) -> list[Value]:
    if isinstance(values, frozenset):
        return list(_sorted_frozen(values))
    return sorted(values, key=value_key)


@lru_cache(maxsize=1 << 14)
def _sorted_frozen(values: frozenset[Value]) -> tuple[Value, ...]:
    """`sorted_values` of a frozen set, kept: precompute shares one value set among the
    requests that read a device's attribute, and the model and the node signatures sort it
    once per (request, device) — 100,000 sorts for a plan of workload (e). Equal sets give
    equal sorts (the typed values carry their kind, so no two distinct values compare equal)."""
    return tuple(sorted(values, key=value_key))


def total(vs: list[IntVar]) -> LinearExpr:
    """Sum of variables (flat, unlike Python's nested `sum`)."""
    return LinearExpr.sum(vs)


def weighted(terms: list[tuple[int, IntVar]] | tuple[tuple[int, IntVar], ...]) -> LinearExpr:
    """sum c * v over (c, v) terms."""
    return LinearExpr.weighted_sum([v for _, v in terms], [c for c, _ in terms])


def lcm_of_denominators(values: list[Fraction]) -> int:
    """Smallest integer factor that makes every value an integer."""
    return math.lcm(1, *(Fraction(v).denominator for v in values))


def add_scaled_le(
    cp: cp_model.CpModel, terms: list[tuple[Fraction, IntVar]], rhs: Fraction, scale: int
) -> None:
    """Add `sum c * v <= rhs` over non-negative integer variables with small integer coefficients.

    `scale` makes every coefficient and `rhs` integral (the lcm of their denominators, chosen
    per capacity/counter name by the caller); the gcd of the integer coefficients then divides
    both sides (rhs rounded down, exact for integer variables). Constraints that can never bind
    (all variables at their upper bound fit) are skipped to keep the model small.
    """
    ints = [(int(c * scale), v) for c, v in terms if c != 0]
    limit_frac = rhs * scale
    if not ints:
        return  # nothing here consumes; over-committed devices are excluded statically
    g = math.gcd(*(c for c, _ in ints))
    ints = [(c // g, v) for c, v in ints]
    limit = (limit_frac.numerator // limit_frac.denominator) // g  # floor twice: exact for integers
    worst = sum(max(c, 0) * upper_bound(v) for c, v in ints)
    if worst <= limit:
        return
    cp.add(weighted(ints) <= limit)


def upper_bound(v: IntVar) -> int:
    """Upper bound of a variable's domain as built by the encoders (contiguous domains)."""
    dom = v.proto.domain
    return int(dom[len(dom) - 1])  # the proto's repeated field does not support negative indices


def viable_all_sets(alt: Alternative, ok: dict[int, Candidate]) -> dict[str, tuple[int, ...]]:
    """Multi-node All: node -> its All-set, for the nodes whose non-empty set is entirely in
    `ok` (the allowed candidates)."""
    return {n: s for n, s in (alt.all_sets or {}).items() if s and all(d in ok for d in s)}
