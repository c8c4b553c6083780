"""The moves no plan avoids: a lower bound on the counting model's last stage (fewest moves,
docs/semantics.md, "Preemption", "Moves") and the nodes to clear that meet it.

Why: on issue #43's 10,000 nodes CP-SAT's search of the moves stage (300,000 variables) ends
its budget with its own bound still 0, so no gap is proven, and its plan is no better than
the greedy hint it started from. Yet most of the stage's answer is forced: a pending 8-GPU
pod fills its node's 8 GPUs, so every pod holding one of them must leave that node. Which
nodes to clear is a much smaller question (a yes/no per node, weighed by the pods that must
leave it), which CP-SAT answers at once; its optimum bounds every plan's moves, and the plan
that clears exactly those nodes (`counting.greedy_hint` with `hosts`) usually meets it.

The bound, for a model in which every pending pod is placed (`counting.build_model`'s
`all_placed`), at the values the earlier stages fixed (at most V PDB violations, at most E
evicted pods). For a kind K (pending pods alike) and a node n where K may go, let F(K, n) be
the victims using a releasable claim h on n that holds devices of a group j where one pod of
K and h do not fit together (need[K, n, j] + occ[h][j] > |U_n^j|: `counting._whole`'s
condition): in every plan with a pod of K on n, h is released, so each of its users is not
kept — moved or evicted. The relaxation keeps only that: per (K, n) the count x[K, n] (kinds
that differ only by level, weight, node demand or gang merged: all pods are placed, and
justification, gangs and node resources are dropped), the device rows counting only the
pending pods, sum_n x[K, n] = |K|, and a victim of F(K, n) leaves when x[K, n] >= 1. Victims
that may not leave at all (not movable and E = 0, or above the stage's ceiling) forbid the
node. Each PodDisruptionBudget counts its members that leave; those beyond its allowance add
up to at most V. The victims not movable that leave number at most E. Where the moved pods go
is dropped (they may go anywhere). Every plan at the earlier stages' values gives a solution
of this relaxation (x its counts, "leaves" its victims not kept restricted to the forced
ones), so min (victims that leave) <= the plan's victims not kept = moves + evicted <=
moves + E: moves >= (the relaxation's bound) - E. Its optimum is a bound CP-SAT proves; when
the search is cut short, its proven bound of it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ortools.sat.python.cp_model_helper import (  # not cp_model: `encoders.model`
    CpSolverStatus,
    IntVar,
    LinearExpr,
)

from dra_solver.encoders.model import new_cp_model

from ..cpsat import cp_solver, found, work_done
from ..deadline import Deadline
from .counting import Counting
from .setting import Setting

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


@dataclass
class Clearing:
    """The relaxation's answer (module docstring)."""

    bound: int
    """A lower bound of the moves of every plan at the earlier stages' values (>= 0)."""
    hosts: dict[str, int]
    """Node -> pending pods the relaxation's best solution puts there (empty without one)."""
    optimal: bool
    """The relaxation was solved to optimality (else `bound` is CP-SAT's bound of it)."""
    deterministic_s: float


def clearing(
    s: Setting,
    c: Counting,
    violations: int,
    evicted: int,
    seed: int,
    budget: float,
    deadline: Deadline | None = None,
) -> Clearing | None:
    """The relaxation of the module docstring, solved within `budget` deterministic seconds,
    for a model in which every pending pod is placed, at most `violations` PDB violations and
    at most `evicted` evictions; None when it has no solution (no plan at those values
    either: the caller has one, so None only says the bound is unknown)."""
    r = _Relaxation(s, c, evicted)
    if not r.pending():
        return None
    r.leaving()
    r.limits(violations, evicted)
    solver = cp_solver(seed, max(budget, 0.05), deadline)
    status = solver.solve(r.cp)
    spent = work_done(solver)
    if not found(status):
        # INFEASIBLE: no plan (not the caller's case); UNKNOWN: no bound proven
        return None if status == CpSolverStatus.INFEASIBLE else Clearing(0, {}, False, spent)
    hosts: dict[str, int] = {}
    for (_, n), v in r.x.items():
        got = int(solver.value(v))
        if got:
            hosts[n] = hosts.get(n, 0) + got
    bound = max(0, _ceil(solver.best_objective_bound) - evicted)
    return Clearing(bound, hosts, status == CpSolverStatus.OPTIMAL, spent)


class _Relaxation:
    """The relaxation's model (module docstring), built in steps."""

    def __init__(self, s: Setting, c: Counting, evicted: int) -> None:
        self.s, self.c, self.evicted = s, c, evicted
        self.cp = new_cp_model()
        self.movable = c.movable()
        index = {v.pod.namespaced_name: k for k, v in enumerate(s.victims)}
        self.members: dict[int, set[str]] = {}
        """Victim -> the budgets it counts in."""
        for b in s.budgets:
            for name in b.pods:
                if name in index:
                    self.members.setdefault(index[name], set()).add(b.name)
        self.x: dict[tuple[int, str], IntVar] = {}
        self.tops: dict[tuple[int, str], int] = {}
        self.sets: dict[tuple[int, str], frozenset[int]] = {}
        """(kind, node) -> F(K, n)."""
        self.by_node: dict[str, list[tuple[int, int, IntVar]]] = {}
        """Node -> (kind, spec, x) of the kinds that may go there."""
        self.leave: dict[int, IntVar] = {}
        self.cost: list[cp_model.LinearExprT] = []

    def may_leave(self, k: int) -> bool:
        """A victim that may leave its node at all: movable, or evictable under the ceiling when
        the earlier stages allow an eviction."""
        ceiling = self.c.ceiling
        return k in self.movable or (
            self.evicted > 0 and (ceiling is None or self.s.victims[k].priority <= ceiling)
        )

    def pending(self) -> bool:
        """x[K, n] per merged kind and node where it may go with its forced victims able to
        leave; every pending pod placed. False: some kind has no node."""
        s, c = self.s, self.c
        holders_on: dict[str, list[int]] = {}
        for h, (_, node, _) in enumerate(s.holders.values()):
            holders_on.setdefault(node, []).append(h)
        users = [u for _, _, u in s.holders.values()]
        sizes: dict[tuple[int, frozenset[str]], int] = {}
        for kind in c.kinds:
            key = (kind.spec, kind.nodes)
            sizes[key] = sizes.get(key, 0) + len(kind.units)
        for ki, ((spec, nodes), size) in enumerate(sizes.items()):
            row = []
            for n in sorted(nodes):
                nf = c.facts.get(n)
                need = nf.need.get(spec) if nf is not None else None
                if nf is None or need is None:
                    continue
                top = min([size] + [len(g) // q for g, q in zip(nf.groups, need, strict=True) if q])
                out: set[int] = set()
                for h in holders_on.get(n, ()):
                    held = c.held_per_group[h]
                    if any(q and q + o > len(g) for q, o, g in zip(need, held, nf.groups, strict=True)):
                        out.update(users[h])
                if top <= 0 or not all(self.may_leave(k) for k in out):
                    continue  # no room, or a pod of this shape on n needs a victim gone that may not go
                v = self.cp.new_int_var(0, top, f"x[{ki},{n}]")
                self.x[(ki, n)], self.tops[(ki, n)], self.sets[(ki, n)] = v, top, frozenset(out)
                self.by_node.setdefault(n, []).append((ki, spec, v))
                row.append(v)
            if not row:
                return False
            self.cp.add(sum(row) == size)
        return True

    def leaving(self) -> None:
        """Per node: its device rows over the pending pods, and each forced victim leaving when
        a pod that forces it is there — the plain ones (movable, in no budget) as one count per
        node where every kind there forces the same ones."""
        for n, here in self.by_node.items():
            nf = self.c.facts[n]
            for j, group in enumerate(nf.groups):
                terms = [
                    (nf.need[spec][j], v, self.tops[(ki, n)]) for ki, spec, v in here if nf.need[spec][j]
                ]
                if sum(a * top for a, _, top in terms) > len(group):
                    self.cp.add(sum(a * v for a, v, _ in terms) <= len(group))
            used = [self._used(ki, n, v) for ki, _, v in here]
            forced = [self.sets[(ki, n)] for ki, _, _ in here]
            plain = {frozenset(k for k in f if k in self.movable and k not in self.members) for f in forced}
            alone = forced
            if len(plain) == 1 and (common := next(iter(plain))):
                on = used[0] if len(used) == 1 else self.cp.new_bool_var(f"cleared[{n}]")
                for y in used if len(used) > 1 else ():
                    self.cp.add(on >= y)
                self.cost.append(len(common) * on)
                alone = [f - common for f in forced]
            for y, f in zip(used, alone, strict=True):
                for k in sorted(f):
                    if k not in self.leave:
                        self.leave[k] = self.cp.new_bool_var(f"leaves[{k}]")
                    self.cp.add(self.leave[k] >= y)

    def _used(self, ki: int, n: str, v: IntVar) -> IntVar:
        """x[K, n] >= 1 as a literal."""
        if self.tops[(ki, n)] == 1:
            return v
        y = self.cp.new_bool_var(f"used[{ki},{n}]")
        self.cp.add(v <= self.tops[(ki, n)] * y)
        return y

    def limits(self, violations: int, evicted: int) -> None:
        """The budgets' violations at most `violations`, the victims not movable that leave at
        most `evicted`; the objective: the victims that leave."""
        over = []
        for b in self.s.budgets:
            inside = [self.leave[k] for k in sorted(self.leave) if b.name in self.members.get(k, ())]
            if len(inside) > b.allowed:
                o = self.cp.new_int_var(0, len(inside) - b.allowed, f"over[{b.name}]")
                self.cp.add(o >= sum(inside) - b.allowed)
                over.append(o)
        if over:
            self.cp.add(sum(over) <= violations)
        gone = [self.leave[k] for k in sorted(self.leave) if k not in self.movable]
        if gone:
            self.cp.add(sum(gone) <= evicted)
        self.cp.minimize(LinearExpr.sum([*self.cost, *self.leave.values()]))


def _ceil(raw: float) -> int:
    """CP-SAT's bound of an integer objective, rounded up (a float a hair below an integer)."""
    low = int(raw)
    return low if raw - low <= 1e-6 else low + 1


def moves_of(values: Sequence[int], moved: Sequence[IntVar]) -> int:
    """The moves of a solution (one value per variable)."""
    return sum(int(values[v.index]) for v in moved)


__all__ = ["Clearing", "clearing", "moves_of"]
