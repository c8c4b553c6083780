"""Minimal blocking set: which rule groups, together, leave a node's claims without an allocation.

Why CP-SAT assumptions: finding the set by deletion with the reference search costs one search
per rule group, each rebuilding and re-searching the node's problem from scratch, and a search
that says "no" explores its whole tree. Here the node's Problem becomes *one* CP-SAT model in
which each rule group is switched on by a literal of its own; solving under the assumption that
every literal is true, CP-SAT answers INFEASIBLE together with a core — a subset of the
literals that is already infeasible (`sufficient_assumptions_for_infeasibility`). The core is
then shrunk to a minimal one by deletion, re-solving the same model under fewer assumptions.

Rule groups (`Group`): each claim ("the claim is allocated") and each of a claim's
matchAttribute / distinctAttribute constraints. A claim whose literal is false is free (placed
or not, whatever suits the others), so it blocks nothing; a constraint whose literal is false
is not enforced, and the devices lacking its attribute become usable by its requests.

The model: the encoders' own families (`dra_solver.encoders`) over the Problem with its
constraints taken out, in mode "free" (placed[c] free), and without device groups (a group's
devices may differ in the values of an attribute a constraint reads). Then per claim
`placed[c] == 1` enforced by its literal; per constraint, `x[a, d] == 0` for the placements
whose device lacks the attribute and the constraint's own encoding
(`encoders.constraints.ENCODINGS`, over the remaining placements), every CP-SAT constraint it
adds enforced by the constraint's literal. With every literal true this is the model
`dra_solver.cpsat` solves, up to the static exclusions that became enforced equalities.

The result is minimal by inclusion (dropping any member makes the rest fit), not necessarily
the smallest such set. A solve that ends without an answer (the budget) counts as "fits", so a
member is only dropped when the rest is proven infeasible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# The status from the solver's extension: `cp_model` (pandas, half a CPU second) loads when a
# model is built (`encoders.model.new_cp_model`), so `explain` of a pod that fits everywhere
# and a run cut short by --timeout before a blocking set do not pay it.
from ortools.sat.python.cp_model_helper import CpSolverStatus

from dra_solver.encoders import constraints as constraint_family
from dra_solver.encoders import variables
from dra_solver.encoders.families import FAMILIES
from dra_solver.encoders.model import IntVar, Model

from .. import interrupt
from ..cpsat import cp_solver, found
from ..problem.flat import Problem, ValueSet

TIME_LIMIT = 5.0
"""Deterministic seconds per solve (CP-SAT's work counter): a node's problem is small."""


@dataclass(frozen=True)
class Group:
    """A rule group: claim `claim` (index into `Problem.claims`) is allocated, or, with
    `constraint` set, that claim's constraint number `constraint` (its position in the claim's
    `spec.devices.constraints`) holds."""

    claim: int
    constraint: int | None = None


@dataclass
class GuardedModel:
    """The node's model with one enforcement literal per rule group."""

    model: Model
    literals: dict[Group, IntVar]


def guarded_model(problem: Problem) -> GuardedModel:
    """The CP-SAT model of `problem` with each rule group guarded by a literal (module docstring)."""
    free = replace(
        problem,
        constraints=(),
        claims=tuple(replace(c, constraints=(), group=None) for c in problem.claims),
    )
    m = Model(free, "free")
    variables.add(m, group=False)
    for family in FAMILIES:
        if family is not constraint_family:
            family.add(m)
    cp = m.cp
    literals: dict[Group, IntVar] = {}
    for c in problem.claims:
        lit = cp.new_bool_var(f"claim[{c.index}]")
        literals[Group(c.index)] = lit
        cp.add(m.placed[c.index] == 1).only_enforce_if(lit)
    for c in problem.claims:
        for position, k in enumerate(c.constraints):
            lit = cp.new_bool_var(f"constraint[{c.index},{position}]")
            literals[Group(c.index, position)] = lit
            _guarded_constraint(m, problem, k, lit)
    return GuardedModel(m, literals)


def _guarded_constraint(m: Model, problem: Problem, k: int, lit: IntVar) -> None:
    """Constraint `k`: devices lacking the attribute excluded, and its encoding, all only when
    `lit` is true."""
    info = problem.constraints[k]
    items: list[tuple[ValueSet, IntVar, tuple[int, int] | None]] = []
    for a in sorted(info.alternatives):
        for d, var in m.x_by_alt.get(a, []):
            values = info.values.get((a, d))
            if values is None:
                m.cp.add(var == 0).only_enforce_if(lit)
            else:
                items.append((values, var, None))
    proto = m.cp.proto.constraints
    start = len(proto)
    constraint_family.ENCODINGS[info.kind](m, info, items)
    for i in range(start, len(proto)):
        proto[i].enforcement_literal.append(lit.index)


def minimal_blocking_set(problem: Problem, *, seed: int = 0) -> list[Group] | None:
    """A minimal set of rule groups without an allocation together (claims first, then
    constraints, each in claim order); None when all of them together are not proven
    infeasible (then nothing blocks, as far as CP-SAT can tell within its budget)."""
    g = guarded_model(problem)
    keep = list(g.literals)
    blocked, core = _infeasible(g, keep, seed)
    if not blocked:
        return None
    keep = [x for x in keep if x in core] or keep
    for member in list(keep):
        if member not in keep:
            continue  # a later core already left it out
        trial = [x for x in keep if x != member]
        blocked, core = _infeasible(g, trial, seed)
        if blocked:
            keep = [x for x in trial if x in core] or trial
    return keep


def allocation_exists(problem: Problem, *, seed: int = 0) -> bool | None:
    """Whether the node's claims have an allocation together, decided by CP-SAT: True when it
    finds one, False when it proves there is none, None when its budget ends first. Why: where
    the bounded reference search gives up (a claim that makes first fit explode), "no" would be
    a guess; this is the exact model with every rule group on (module docstring)."""
    g = guarded_model(problem)
    cp = g.model.cp
    cp.clear_assumptions()
    cp.add_assumptions(list(g.literals.values()))
    solver = cp_solver(seed, TIME_LIMIT)
    with interrupt.stoppable(solver.stop_search):
        status = solver.solve(cp)
    if found(status):
        return True
    return False if status == CpSolverStatus.INFEASIBLE else None


def _infeasible(g: GuardedModel, groups: list[Group], seed: int) -> tuple[bool, set[Group]]:
    """Whether `groups` together are proven infeasible, and a core of them that already is."""
    cp = g.model.cp
    cp.clear_assumptions()
    cp.add_assumptions([g.literals[x] for x in groups])
    solver = cp_solver(seed, TIME_LIMIT)
    with interrupt.stoppable(solver.stop_search):  # stopped: not proven, so not blocked
        status = solver.solve(cp)
    if status != CpSolverStatus.INFEASIBLE:
        return False, set()
    core = set(solver.sufficient_assumptions_for_infeasibility())
    return True, {x for x in groups if g.literals[x].index in core}


__all__ = ["Group", "GuardedModel", "allocation_exists", "guarded_model", "minimal_blocking_set"]
