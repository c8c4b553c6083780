"""The reference allocator: upstream's first-fit depth-first search, step for step.

Why: it is the oracle. For one allocation call (the claims of one pod, one node) it
answers exactly what the upstream structured allocator answers — the same device order,
the same first-fit choice, the same backtracking (docs/semantics.md, "The reference search")
— so that the CP-SAT allocator can be checked against it and hinted with it.

Deliberate differences from upstream, where upstream has bugs (docs/semantics.md,
"Deliberate differences from upstream bugs"): distinctAttribute compares every pair of
devices (Q1); counters are charged only once a placement passed every check and are given
back on every backtrack, so a rejected device leaves no charge behind (Q2, Q3); a shared
device is charged once (Q4).

As upstream (docs/semantics.md, "Device compatibility groups (KEP-5963)"): a device new to its
counter sets must fit the groups of their members, checked right after the counters.

As upstream (docs/semantics.md, "Admin access"): a dedicated device placed with admin access
for an earlier claim of the call is in use for the later claims' normal requests. As
upstream (docs/semantics.md, "allocationMode All"): an All-set is placed member by member, in
order, each member through upstream's checks in upstream's order, so the first member that
breaks a claim constraint is an error even when a later member is busy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Generator, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from ..errors import FailedOnNode, InputRefused, InvalidPools, SearchAborted
from ..problem.flat import (
    MAX_RESULTS_PER_CLAIM,
    Alternative,
    Assignment,
    Candidate,
    CompatKey,
    CompatState,
    DeviceInfo,
    Placement,
    Problem,
    ValueSet,
    compat_add,
    compat_admits,
    fits,
)
from ..problem.kinds import KINDS
from ..reasons import Kind, Reason
from ..reasons.words import of_node, say

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
    compat: list[tuple[CompatKey, CompatState | None]] = field(default_factory=list)
    """KEP-5963: each counter set the placement joined, with its state before."""


class ReferenceSearch:
    """One search over one Problem; `run()` returns the first assignment or None."""

    def __init__(self, problem: Problem, *, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self.p = problem
        self.max_steps = max_steps
        self.steps = 0
        n_claims = len(problem.claims)
        self.call_dedicated: dict[int, int] = {}
        """Dedicated device -> how many placements of this call hold it (admin ones included:
        upstream's allocatingDevices, which makes it in use for every later normal request)."""
        self.claim_dedicated: list[set[int]] = [set() for _ in range(n_claims)]
        self.allocating: dict[int, dict[str, Fraction]] = {}
        self.used: dict[int, int] = {}
        self.counter_used: dict[int, Fraction] = {}
        self.compat: dict[CompatKey, CompatState] = dict(problem.compat_baseline)
        """KEP-5963: per counter set, the running state of its members (allocated and placed)."""
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
        if not alt.candidates:
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
        candidates, devices, used = alt.candidates, self.p.devices, self.used
        for pos in range(start, len(candidates)):
            cand = candidates[pos]
            d = devices[cand.device]
            if (d.busy and not alt.admin) or (
                d.counters_short
                and cand.error is None
                and not (d.busy or d.shared_in_use or used.get(cand.device))
            ):
                # What `_place` rejects whatever the search holds, told at once (a network-
                # attached cluster walks thousands of taken devices per pod): busy, or its
                # counters charged and one of them short even with nothing charged in this
                # search (charges are never negative). No error can be raised before (a CEL
                # error is checked after busy; the short one has none), and the step counts
                # as `_place`'s would: the budget ends the search at the same step.
                self.steps += 1
                if self.steps > self.max_steps:
                    raise _aborted(self.max_steps)
                continue
            if not self._place(ci, alt, cand, all_mode=False):
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
            raise _aborted(self.max_steps)
        d = self.p.devices[cand.device]
        if alt.admin:
            if cand.device in self.claim_dedicated[ci]:
                return False
        elif d.busy or (not d.multi and self.call_dedicated.get(cand.device)):
            return False
        if cand.error is not None:
            raise cand.error
        # An All member goes through upstream's allocateDevice alone: a gate, the counters, a
        # taint, the constraints (an error), then the capacity left; an ExactCount candidate
        # has passed the static checks and the capacity precheck before it.
        if cand.refused is not None and not cand.refused_after_counters:
            return False
        if not all_mode and not self._capacity_fits(d, cand):
            return False
        charge = bool(d.counter_use) and not (d.busy or d.shared_in_use) and not self.used.get(cand.device)
        if charge and (d.counters_blocked or not self._counters_fit(d)):
            return False
        # KEP-5963 after the counters (docs/semantics.md, "Device compatibility groups
        # (KEP-5963)"): a device new to its counter sets must fit the groups there.
        joins = bool(d.compat) and not (d.busy or d.shared_in_use) and not self.used.get(cand.device)
        if joins and not all(compat_admits(self.compat.get(cset), groups) for cset, groups in d.compat):
            return False
        if cand.refused is not None:
            return False
        cons = self.by_alt.get(alt.index)
        touched = self._constrain(ci, alt, cand, d, all_mode, cons) if cons else []
        if touched is None:
            return False
        if all_mode and not self._capacity_fits(d, cand):
            self._unconstrain(touched)
            return False
        self._record(ci, alt, cand, d, charge, joins, touched)
        return True

    def _counters_fit(self, d: DeviceInfo) -> bool:
        """The device's counters, charged on top of what the search has charged, stay within
        what each counter has available (a device new to its counters: `_place`'s `charge`)."""
        for i, amount in d.counter_use.items():
            if self.counter_used.get(i, Fraction(0)) + amount > self.p.counters[i].available:
                return False
        return True

    def _constrain(
        self, ci: int, alt: Alternative, cand: Candidate, d: DeviceInfo, all_mode: bool, cons: list[int]
    ) -> list[int] | None:
        """The candidate's value pushed onto each claim constraint of its alternative (`cons`;
        `_place` calls it only when there are some: it is the search's innermost step); returns
        the constraints it was pushed onto, or None (nothing pushed) when one refuses it. An
        All member a constraint refuses fails the claim (upstream's error), it is not skipped."""
        touched: list[int] = []
        for con_i in cons:
            value = self.p.constraints[con_i].values.get((alt.index, cand.device))
            if value is None or not self._constraint_ok(con_i, value):
                if all_mode:
                    raise InputRefused(
                        f"claim {self.p.claims[ci].ref}: request {alt.name}: cannot add device {d.id} "
                        "because a claim constraint would not be satisfied"
                    )
                self._unconstrain(touched)
                return None
            self._constraint_push(con_i, value)
            touched.append(con_i)
        return touched

    def _unconstrain(self, touched: list[int]) -> None:
        """Undo `_constrain`'s pushes onto the constraints `touched`."""
        for t in touched:
            self.constraint_state[t].pop()

    def _record(
        self,
        ci: int,
        alt: Alternative,
        cand: Candidate,
        d: DeviceInfo,
        charge: bool,
        joins: bool,
        touched: list[int],
    ) -> None:
        """The candidate placed: the claim's result, the devices dedicated to the claim and the
        call, the shares allocated, the counters charged (`charge`), the compatibility groups
        joined (`joins`) and the undo record `_pop` reads."""
        placement = Placement(ci, alt.index, cand.device)
        dedicated = not d.multi
        if dedicated:
            self.claim_dedicated[ci].add(cand.device)
            self.call_dedicated[cand.device] = self.call_dedicated.get(cand.device, 0) + 1
        if d.multi and cand.consumed is not None:
            sums = self.allocating.setdefault(cand.device, {})
            for k, v in cand.consumed.items():
                sums[k] = sums.get(k, Fraction(0)) + v
        self.used[cand.device] = self.used.get(cand.device, 0) + 1
        if charge:
            for i, amount in d.counter_use.items():
                self.counter_used[i] = self.counter_used.get(i, Fraction(0)) + amount
        compat_before: list[tuple[CompatKey, CompatState | None]] = []
        if joins:
            for cset, groups in d.compat:
                compat_before.append((cset, self.compat.get(cset)))
                self.compat[cset] = compat_add(self.compat.get(cset), groups)
        self.results[ci].append(placement)
        self.undo.append(
            _Undo(placement, dedicated, charge, cand.consumed if d.multi else None, touched, compat_before)
        )

    def _capacity_fits(self, d: DeviceInfo, cand: Candidate) -> bool:
        """A share still fits with what the call already placed on its device."""
        if not d.multi or cand.consumed is None:
            return True
        used = dict(d.in_use)
        for k, v in self.allocating.get(cand.device, {}).items():
            used[k] = used.get(k, Fraction(0)) + v
        return fits(d.capacity, used, cand.consumed)

    def _pop(self, n: int) -> None:
        for _ in range(n):
            u = self.undo.pop()
            p = u.placement
            d = self.p.devices[p.device]
            self.results[p.claim].pop()
            for con_i in u.constraints:
                self.constraint_state[con_i].pop()
            if u.dedicated:
                self.claim_dedicated[p.claim].discard(p.device)
                self.call_dedicated[p.device] -= 1
            if u.consumed is not None:
                sums = self.allocating[p.device]
                for k, v in u.consumed.items():
                    sums[k] -= v
            self.used[p.device] -= 1
            if u.charged:
                for i, amount in d.counter_use.items():
                    self.counter_used[i] -= amount
            for cset, before in reversed(u.compat):
                if before is None:
                    del self.compat[cset]
                else:
                    self.compat[cset] = before

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


# --- twins: one search for Problems equal up to names ------------------------------------

PROBE_STEPS = 2_000
"""Searches that end within this many steps are not memoized: they cost less than their key."""

KEY_COST = 4
"""Steps of search that cost about as much as one candidate of `search_key` (`SearchMemo.search`)."""

SearchKey = tuple[int, Hashable]
"""(max_steps, `search_key`'s facts)."""

_Found = tuple[tuple[tuple[int, int], ...], ...]
"""An assignment in rank form: per claim, its placements as (alternative, device rank)."""


def search_key(problem: Problem) -> tuple[Hashable, tuple[int, ...]] | None:
    """Everything `ReferenceSearch` reads of `problem`, with devices named by their rank among
    the devices some candidate uses and counters by their rank among those such devices consume,
    and those devices in rank order; None when a candidate carries a CEL error.

    Why this decides the search: the search visits claims, requests, alternatives and candidates in the order
    they are listed here (alternatives and constraints by index, each alternative's candidates
    in their own order, which the key keeps as is), and every test it makes reads only these
    facts: a device's busy/multi flags, capacity, existing use, counter use and counter block,
    its compatibility groups per counter set (sets by rank, with their baseline state), a
    candidate's static refusal (All mode), a counter's availability, a constraint's kind,
    alternatives and value per (alternative, candidate device); a device is used only through
    its index, as a set member or a dict key, so a bijection of indices maps one run onto the
    other. Two Problems with equal keys therefore take the same steps in the same order and end
    alike: both find the assignment equal up to the renaming (`used[rank]`), both find none, or
    both exceed the same step budget. Names (device ids, claim refs) appear only in the texts of
    errors: a candidate's CEL error (hence None: no key) and the refusal of an All request
    (`InputRefused`, never memoized). The node, pools, slices, names, results' metadata and
    every fact the search does not read are left out, so twin nodes share one key."""
    used = sorted({c.device for a in problem.alternatives for c in a.candidates})
    rank = {d: r for r, d in enumerate(used)}
    counters = sorted({i for d in used for i in problem.devices[d].counter_use})
    crank = {i: r for r, i in enumerate(counters)}
    sets = sorted({cset for d in used for cset, _ in problem.devices[d].compat})
    srank = {cset: r for r, cset in enumerate(sets)}
    alternatives = []
    for a in problem.alternatives:
        if any(c.error is not None for c in a.candidates):
            return None
        candidates = tuple(
            (
                rank[c.device],
                None if c.consumed is None else tuple(sorted(c.consumed.items())),
                c.refused is not None,
                c.refused_after_counters,
            )
            for c in a.candidates
        )
        alternatives.append((a.index, a.mode, a.count, a.admin, candidates))
    devices = tuple(
        (
            dev.busy,
            dev.multi,
            tuple(sorted(dev.capacity.items())),
            tuple(sorted(dev.in_use.items())),
            dev.shared_in_use,
            tuple(sorted((crank[i], v) for i, v in dev.counter_use.items())),
            dev.counters_blocked,
            tuple((srank[cset], groups) for cset, groups in dev.compat),
        )
        for dev in (problem.devices[d] for d in used)
    )
    # A constraint's values as the search reads them: per covered alternative (in index order),
    # per candidate (in its order, which `alternatives` above fixes), the value set or None.
    constraints = tuple(
        (
            k.index,
            k.kind,
            tuple(
                (a, tuple(k.values.get((a, c.device)) for c in problem.alternatives[a].candidates))
                for a in sorted(k.alternatives)
            ),
        )
        for k in problem.constraints
    )
    facts = (
        MAX_RESULTS_PER_CLAIM,
        tuple(tuple(r.alternatives for r in c.requests) for c in problem.claims),
        tuple(alternatives),
        devices,
        tuple(problem.counters[i].available for i in counters),
        tuple(problem.compat_baseline.get(cset) for cset in sets),
        constraints,
    )
    return facts, tuple(used)


class SearchMemo:
    """The outcomes of long reference searches, by `search_key`: a Problem equal to one already
    searched up to names gets that search's outcome, its devices mapped rank for rank,
    without searching again.

    Why: a claim whose requests and constraints make the depth-first search explode (docs/
    benchmarks.md, workload (e)) costs the whole step budget on every node that holds the
    trap, and a cluster's nodes are mostly twins: first fit, the reasons of pods left out and
    `explain` searched each of them anew. The answer is the search's own (`search_key` says why
    it is the same), so every caller stays upstream-exact.

    Only searches longer than `probe` steps are memoized — a search is first run with that
    budget, and the key is computed only when it does not end within it (short searches cost
    less than their key, and the memo holds only what is worth holding); the search then runs
    again from the start on a miss. At most `capacity` outcomes are kept (least recently used
    out): a key of a large Problem holds every candidate and constraint value. Thread-safe."""

    def __init__(self, probe: int = PROBE_STEPS, capacity: int = 64, key_cost: int = 0) -> None:
        self.probe = probe
        self.key_cost = key_cost
        self.capacity = capacity
        self._outcomes: OrderedDict[SearchKey, _Found | bool] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def clear(self) -> None:
        """Forget every outcome (a benchmark's round that must search as a first call does)."""
        with self._lock:
            self._outcomes.clear()

    def search(self, problem: Problem, max_steps: int) -> Assignment | None:
        """`ReferenceSearch(problem, max_steps=max_steps).run()`: the same assignment, None or
        `SearchAborted`, from the memo when a twin of `problem` was searched.

        With `key_cost`, the probe grows with the Problem (that many steps per candidate): the
        key costs about as much, so a search that ends within it — a long but plain walk over
        thousands of network-attached devices, most of them taken — is cheaper to run than to
        key (the process's `MEMO`: `KEY_COST`)."""
        probe = self.probe
        if self.key_cost:
            probe = max(probe, self.key_cost * sum(len(a.candidates) for a in problem.alternatives))
        if max_steps > probe:
            try:
                return ReferenceSearch(problem, max_steps=probe).run()
            except SearchAborted:
                pass
        keyed = search_key(problem)
        if keyed is None:
            return ReferenceSearch(problem, max_steps=max_steps).run()
        facts, used = keyed
        key = (max_steps, facts)
        with self._lock:
            outcome = self._outcomes.get(key)
            if outcome is not None:
                self._outcomes.move_to_end(key)
                self.hits += 1
        if outcome is None:
            outcome = self._run(problem, max_steps, used)
            with self._lock:
                self.misses += 1
                self._outcomes[key] = outcome
                while len(self._outcomes) > self.capacity:
                    self._outcomes.popitem(last=False)
        if outcome is True:
            raise _aborted(max_steps)
        if outcome is False:
            return None
        return {
            ci: [Placement(ci, alt, used[r]) for alt, r in placements]
            for ci, placements in enumerate(outcome)
        }

    @staticmethod
    def _run(problem: Problem, max_steps: int, used: tuple[int, ...]) -> _Found | bool:
        """The search's outcome in rank form: the assignment, False (none) or True (aborted).
        Any other error propagates and nothing is kept (its text names this Problem's objects)."""
        try:
            found = ReferenceSearch(problem, max_steps=max_steps).run()
        except SearchAborted:
            return True
        if found is None:
            return False
        rank = {d: r for r, d in enumerate(used)}
        return tuple(
            tuple((p.alternative, rank[p.device]) for p in found.get(ci, ()))
            for ci in range(len(problem.claims))
        )


def aborted(max_steps: int) -> Reason:
    """Why the search gave up past its budget, as a value (`Kind.SEARCH_ABORTED`)."""
    return Reason.of(Kind.SEARCH_ABORTED, steps=max_steps)


def invalid_pools(problem: Problem) -> Reason:
    """Upstream's per-node error for a node with invalid pools and no allocation, as a value
    (`Kind.INVALID_POOLS`: each pool's words, the node's name in them a fact)."""
    return Reason.of(Kind.INVALID_POOLS, pools=tuple(of_node(p, problem.node) for p in problem.invalid_pools))


def _aborted(max_steps: int) -> SearchAborted:
    """The error `ReferenceSearch._place` raises past its budget (its words: `aborted`)."""
    return SearchAborted(say(aborted(max_steps)))


MEMO = SearchMemo(key_cost=KEY_COST)
"""The process's memo: every reference search of a plan — first fit, the hint, the expansion's
fast searches, the reasons of pods left out, `explain` — shares it (`search`)."""

Shared = Literal["shared"]


def search(
    problem: Problem, *, max_steps: int = DEFAULT_MAX_STEPS, memo: SearchMemo | Shared | None = "shared"
) -> Assignment | None:
    """The first assignment of the reference search, or None; `SearchAborted` past `max_steps`.
    Through `memo`: "shared" is the process's `MEMO` (read at the call), None searches every
    time, as `ReferenceSearch(problem, max_steps=max_steps).run()` does."""
    chosen = MEMO if isinstance(memo, str) else memo
    if chosen is None:
        return ReferenceSearch(problem, max_steps=max_steps).run()
    return chosen.search(problem, max_steps)


def allocate_reference(
    problem: Problem, *, max_steps: int = DEFAULT_MAX_STEPS, memo: SearchMemo | Shared | None = "shared"
) -> Assignment | None:
    """All claims of the problem together, or None (unschedulable on this node).

    Raises AllocationError for upstream's fatal errors, including the per-node error for
    invalid pools when no solution exists, and before any search the per-node error of an
    allocationMode All request on an incomplete or invalid pool (`Alternative.fatal`)."""
    fatal = next((a.fatal for a in problem.alternatives if a.fatal is not None), None)
    if fatal is not None:
        raise FailedOnNode(say(fatal))
    result = search(problem, max_steps=max_steps, memo=memo)
    if result is None and problem.invalid_pools:
        raise InvalidPools(say(invalid_pools(problem)))
    return result
