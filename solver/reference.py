"""The reference allocator: upstream's first-fit depth-first search, step for step.

Why: it is the oracle. For one allocation call (the claims of one pod, one node) it
answers exactly what the upstream structured allocator answers — the same device order,
the same first-fit choice, the same backtracking (docs/semantics.md, "The reference search")
— so that the CP-SAT allocator can be checked against it and hinted with it.

Deliberate differences from upstream, where upstream has bugs (docs/semantics.md,
"Deliberate differences from upstream bugs"): distinctAttribute compares every pair of
devices (Q1); counters are charged only once a placement passed every check and are given
back on every backtrack, so a rejected device leaves no charge behind (Q2, Q3); a shared
device is charged once (Q4); an admin-access placement does not block other claims of the
call (Q7).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from fractions import Fraction

from .errors import InputRefused, InvalidPools, SearchAborted
from .problem.flat import (
    MAX_RESULTS_PER_CLAIM,
    Alternative,
    Assignment,
    Candidate,
    Placement,
    Problem,
    ValueSet,
    fits,
)
from .problem.kinds import KINDS

DEFAULT_MAX_STEPS = 5_000_000


class _MaxSize:
    """Upstream's errAllocationResultMaxSizeExceeded signal inside one claim."""


MAX_SIZE = _MaxSize()
Outcome = bool | _MaxSize
Step = Generator["Step", Outcome, Outcome]
"""One search step: yields the sub-steps it needs, receives their outcomes, returns its own."""


def _drive(root: Step) -> Outcome:
    """Run nested steps on an explicit stack instead of Python's call stack."""
    stack = [root]
    value: Outcome | None = None
    while True:
        try:
            top = stack[-1]
            sub = next(top) if value is None else top.send(value)  # a new step starts with next()
        except StopIteration as done:
            stack.pop()
            value = done.value
            if not stack:
                return value
            continue
        stack.append(sub)
        value = None


@dataclass
class _Undo:
    placement: Placement
    dedicated: bool
    charged: bool
    consumed: dict[str, Fraction] | None
    constraints: list[int] = field(default_factory=list)


class ReferenceSearch:
    """One search over one Problem; `run()` returns the first assignment or None."""

    def __init__(self, problem: Problem, *, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self.p = problem
        self.max_steps = max_steps
        self.steps = 0
        n_claims = len(problem.claims)
        self.nonadmin_dedicated: set[int] = set()
        self.claim_dedicated: list[set[int]] = [set() for _ in range(n_claims)]
        self.allocating: dict[int, dict[str, Fraction]] = {}
        self.used: dict[int, int] = {}
        self.counter_used: dict[int, Fraction] = {}
        self.constraint_state: list[list[ValueSet]] = [[] for _ in problem.constraints]
        self.by_alt: dict[int, list[int]] = {}
        for con in problem.constraints:
            for a in con.alternatives:
                self.by_alt.setdefault(a, []).append(con.index)
        self.results: list[list[Placement]] = [[] for _ in range(n_claims)]
        self.undo: list[_Undo] = []

    def run(self) -> Assignment | None:
        if _drive(self._claim(0)) is True:
            return {ci: list(res) for ci, res in enumerate(self.results)}
        return None

    # --- the search -------------------------------------------------------------------------
    # Each step is a generator that yields the sub-step it needs and receives its outcome:
    # the depth-first search reads like recursion but runs on an explicit stack (`_drive`),
    # so deep searches neither hit Python's recursion limit nor slow down with stack depth.

    def _claim(self, ci: int) -> Step:
        if ci == len(self.p.claims):
            return True
        outcome = yield self._request(ci, 0)
        return outcome is True  # the max-size signal ends at claim boundaries

    def _request(self, ci: int, ri: int) -> Step:
        claim = self.p.claims[ci]
        if ri == len(claim.requests):
            return (yield self._claim(ci + 1))
        only_max = True
        for a in claim.requests[ri].alternatives:
            outcome = yield self._alternative(ci, ri, self.p.alternatives[a])
            if outcome is True:
                return True
            if outcome is not MAX_SIZE:
                only_max = False
        return MAX_SIZE if only_max else False

    def _alternative(self, ci: int, ri: int, alt: Alternative) -> Step:
        if len(self.results[ci]) + alt.count > MAX_RESULTS_PER_CLAIM:
            return MAX_SIZE
        if alt.mode == "ExactCount":
            return (yield self._devices(ci, ri, alt, 0, 0))
        if alt.all_blocked is not None or not alt.candidates:
            return False
        placed = 0
        for cand in alt.candidates:
            if not self._place(ci, alt, cand, all_mode=True):
                self._pop(placed)
                return False
            placed += 1
        outcome = yield self._request(ci, ri + 1)
        if outcome is not True:
            self._pop(placed)
        return outcome

    def _devices(self, ci: int, ri: int, alt: Alternative, k: int, start: int) -> Step:
        if k == alt.count:
            return (yield self._request(ci, ri + 1))
        for pos in range(start, len(alt.candidates)):
            if not self._place(ci, alt, alt.candidates[pos], all_mode=False):
                continue
            outcome = yield self._devices(ci, ri, alt, k + 1, pos + 1)
            if outcome is True:
                return True
            self._pop(1)
            if outcome is MAX_SIZE:
                return MAX_SIZE
        return False

    # --- one placement ----------------------------------------------------------------------

    def _place(self, ci: int, alt: Alternative, cand: Candidate, *, all_mode: bool) -> bool:
        self.steps += 1
        if self.steps > self.max_steps:
            raise SearchAborted(
                f"filter operation aborted: the search exceeded {self.max_steps} steps "
                "(upstream would hit its filter timeout)"
            )
        d = self.p.devices[cand.device]
        if alt.admin:
            if cand.device in self.claim_dedicated[ci]:
                return False
        elif d.busy or (
            not d.multi
            and (cand.device in self.nonadmin_dedicated or cand.device in self.claim_dedicated[ci])
        ):
            return False
        if cand.error is not None:
            raise cand.error
        if d.multi and cand.consumed is not None:
            used = dict(d.in_use)
            for k, v in self.allocating.get(cand.device, {}).items():
                used[k] = used.get(k, Fraction(0)) + v
            if not fits(d.capacity, used, cand.consumed):
                return False
        charge = bool(d.counter_use) and not (d.busy or d.shared_in_use) and not self.used.get(cand.device)
        if charge:
            if d.counters_blocked:
                return False
            for i, amount in d.counter_use.items():
                if self.counter_used.get(i, Fraction(0)) + amount > self.p.counters[i].available:
                    return False
        touched: list[int] = []
        for con_i in self.by_alt.get(alt.index, ()):
            value = self.p.constraints[con_i].values.get((alt.index, cand.device))
            if value is None or not self._constraint_ok(con_i, value):
                if all_mode:
                    raise InputRefused(
                        f"claim {self.p.claims[ci].ref}: request {alt.name}: cannot add device {d.id} "
                        "because a claim constraint would not be satisfied"
                    )
                for t in touched:
                    self.constraint_state[t].pop()
                return False
            self._constraint_push(con_i, value)
            touched.append(con_i)
        # record
        placement = Placement(ci, alt.index, cand.device)
        dedicated = not d.multi
        if dedicated:
            self.claim_dedicated[ci].add(cand.device)
            if not alt.admin:
                self.nonadmin_dedicated.add(cand.device)
        if d.multi and cand.consumed is not None:
            sums = self.allocating.setdefault(cand.device, {})
            for k, v in cand.consumed.items():
                sums[k] = sums.get(k, Fraction(0)) + v
        self.used[cand.device] = self.used.get(cand.device, 0) + 1
        if charge:
            for i, amount in d.counter_use.items():
                self.counter_used[i] = self.counter_used.get(i, Fraction(0)) + amount
        self.results[ci].append(placement)
        self.undo.append(_Undo(placement, dedicated, charge, cand.consumed if d.multi else None, touched))
        return True

    def _pop(self, n: int) -> None:
        for _ in range(n):
            u = self.undo.pop()
            p = u.placement
            alt = self.p.alternatives[p.alternative]
            d = self.p.devices[p.device]
            self.results[p.claim].pop()
            for con_i in u.constraints:
                self.constraint_state[con_i].pop()
            if u.dedicated:
                self.claim_dedicated[p.claim].discard(p.device)
                if not alt.admin:
                    self.nonadmin_dedicated.discard(p.device)
            if u.consumed is not None:
                sums = self.allocating[p.device]
                for k, v in u.consumed.items():
                    sums[k] -= v
            self.used[p.device] -= 1
            if u.charged:
                for i, amount in d.counter_use.items():
                    self.counter_used[i] -= amount

    # --- constraints ------------------------------------------------------------------------

    def _constraint_ok(self, con_i: int, value: ValueSet) -> bool:
        if not value:
            return False
        stack = self.constraint_state[con_i]
        if not stack:
            return True
        return KINDS[self.p.constraints[con_i].kind].admits(stack[-1], value)

    def _constraint_push(self, con_i: int, value: ValueSet) -> None:
        stack = self.constraint_state[con_i]
        stack.append(KINDS[self.p.constraints[con_i].kind].fold(stack[-1], value) if stack else value)


def allocate_reference(problem: Problem, *, max_steps: int = DEFAULT_MAX_STEPS) -> Assignment | None:
    """All claims of the problem together, or None (unschedulable on this node).

    Raises AllocationError for upstream's fatal errors, including the per-node error for
    invalid pools when no solution exists."""
    result = ReferenceSearch(problem, max_steps=max_steps).run()
    if result is None and problem.invalid_pools:
        raise InvalidPools("invalid resource pools were encountered: " + "; ".join(problem.invalid_pools))
    return result
