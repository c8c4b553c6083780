"""CP-SAT encoders: one module per constraint family over the flat Problem (`dra_solver.problem.flat`).

`build` runs them in order; each module's docstring states the math it adds:
variables (x, n, chosen, placed, used) -> the families of `encoders.families` (requests ->
nodes -> resources -> gangs -> exclusive -> capacity -> counters -> constraints) -> symmetry (optional: orders
interchangeable alternatives of a claim);
`objective.stages` then adds the objective levels and `solution` decodes/hints.
Encoders import only the flat Problem (`dra_solver.problem.flat`, `.kinds`), fractions and ortools.
"""

from __future__ import annotations

from dra_solver.problem.flat import Problem

from . import symmetry, variables
from .families import FAMILIES
from .model import Model


def build(problem: Problem, *, mode: str = "all", group: bool = True, break_symmetry: bool = True) -> Model:
    """The CP-SAT model of `problem` with every hard rule (no objective yet).

    `break_symmetry` adds `encoders.symmetry` (it keeps an optimal solution of every
    orbit; off for tests and measurements)."""
    if mode not in ("all", "free"):
        raise ValueError(f"unknown mode {mode!r}")
    m = Model(problem, mode)
    variables.add(m, group=group)
    for family in FAMILIES:
        family.add(m)
    if break_symmetry:
        symmetry.add(m)
    return m


__all__ = ["Model", "build"]
