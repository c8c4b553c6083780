"""Hand-built Problems for the encoder and CP-SAT tests, plus a brute-force oracle.

Why a builder: the tests need tiny Problems that isolate one rule; writing the frozen
dataclasses by hand for each one would bury the point of the test. The brute force
enumerates every assignment of a tiny Problem and checks the rules directly (independently
of the encoders), so the CP-SAT model can be compared against it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from dra_solver.encoders.objective import device_ranks, opens, order_stage_name, request_order_weights
from dra_solver.errors import DRASolverError
from dra_solver.gates import FeatureGates
from dra_solver.problem.flat import (
    MAX_RESULTS_PER_CLAIM,
    Alternative,
    Assignment,
    Candidate,
    ClaimInfo,
    ConstraintInfo,
    CounterInfo,
    DeviceInfo,
    Placement,
    Problem,
    RequestInfo,
    ValueSet,
    claim_weight,
)


@dataclass
class Sub:
    """One alternative to build: devices are candidate device indices."""

    devices: Iterable[int]
    count: int = 1
    mode: str = "ExactCount"
    admin: bool = False
    consumed: dict[int, dict[str, Fraction]] | None = None
    errors: Iterable[int] = ()
    all_blocked: str | None = None


@dataclass
class PB:
    """Problem builder: add devices, counters, claims, requests, constraints; then build()."""

    devices: list[DeviceInfo] = field(default_factory=list)
    counters: list[CounterInfo] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)
    claim_requests: list[list[RequestInfo]] = field(default_factory=list)
    claim_constraints: list[list[int]] = field(default_factory=list)
    priorities: list[int] = field(default_factory=list)
    constraints: list[ConstraintInfo] = field(default_factory=list)

    def device(
        self,
        *,
        multi: bool = False,
        busy: bool = False,
        capacity: dict[str, int | Fraction] | None = None,
        in_use: dict[str, int | Fraction] | None = None,
        shared: bool = False,
        counter_use: dict[int, int | Fraction] | None = None,
        counters_blocked: bool = False,
    ) -> int:
        i = len(self.devices)
        self.devices.append(
            DeviceInfo(
                index=i,
                driver="drv",
                pool="pool",
                name=f"dev-{i}",
                slice_name="s",
                multi=multi,
                busy=busy,
                capacity={k: Fraction(v) for k, v in (capacity or {}).items()},
                in_use={k: Fraction(v) for k, v in (in_use or {}).items()},
                shared_in_use=shared,
                counter_use={k: Fraction(v) for k, v in (counter_use or {}).items()},
                counters_blocked=counters_blocked,
            )
        )
        return i

    def counter(self, available: int | Fraction) -> int:
        self.counters.append(CounterInfo("drv", "pool", "set", f"c{len(self.counters)}", Fraction(available)))
        return len(self.counters) - 1

    def claim(self, priority: int = 0) -> int:
        self.claim_requests.append([])
        self.claim_constraints.append([])
        self.priorities.append(priority)
        return len(self.claim_requests) - 1

    def request(self, claim: int, *subs: Sub) -> list[int]:
        """A request; with more than one Sub it is a firstAvailable request."""
        r = len(self.claim_requests[claim])
        name = f"r{r}"
        ids = []
        for pos, s in enumerate(subs):
            a = len(self.alternatives)
            errs = set(s.errors)
            cands = tuple(
                Candidate(
                    d,
                    (s.consumed or {}).get(d) if self.devices[d].multi else None,
                    DRASolverError("boom") if d in errs else None,
                )
                for d in s.devices
            )
            count = len(cands) if s.mode == "All" else s.count
            self.alternatives.append(
                Alternative(
                    index=a,
                    claim=claim,
                    request=r,
                    position=pos if len(subs) > 1 else 0,
                    name=f"{name}/s{pos}" if len(subs) > 1 else name,
                    class_name="c",
                    mode=s.mode,  # type: ignore[arg-type]
                    count=count,
                    admin=s.admin,
                    candidates=cands,
                    all_blocked=s.all_blocked,
                )
            )
            ids.append(a)
        self.claim_requests[claim].append(RequestInfo(name, tuple(ids), len(subs) > 1))
        return ids

    def exact(self, claim: int, devices: Iterable[int], count: int = 1, **kw: object) -> int:
        return self.request(claim, Sub(devices, count, **kw))[0]  # type: ignore[arg-type]

    def all(self, claim: int, devices: Iterable[int], **kw: object) -> int:
        return self.request(claim, Sub(devices, mode="All", **kw))[0]  # type: ignore[arg-type]

    def constraint(
        self, claim: int, kind: str, alts: Iterable[int], values: dict[int, ValueSet | None]
    ) -> int:
        """values: device -> value set, the same for every covered alternative."""
        alts = frozenset(alts)
        vals = {(a, c.device): values.get(c.device) for a in alts for c in self.alternatives[a].candidates}
        k = len(self.constraints)
        self.constraints.append(ConstraintInfo(k, claim, kind, "attr", alts, vals))  # type: ignore[arg-type]
        self.claim_constraints[claim].append(k)
        return k

    def build(self) -> Problem:
        claims = tuple(
            ClaimInfo(
                i, "ns", f"claim-{i}", tuple(reqs), tuple(self.claim_constraints[i]), self.priorities[i]
            )
            for i, reqs in enumerate(self.claim_requests)
        )
        return Problem(
            "node",
            FeatureGates(),
            tuple(self.devices),
            tuple(self.counters),
            tuple(self.alternatives),
            claims,
            tuple(self.constraints),
        )


def ints(*xs: int) -> ValueSet:
    return frozenset(("int", x) for x in xs)


# ---------------------------------------------------------------- brute force oracle


def violations(p: Problem, asg: Assignment, mode: str = "all") -> list[str]:
    """Every rule the assignment breaks (empty = valid), written straight from the rules: the
    claims' requests, the devices, the counters, then the constraints."""
    pls = [pl for c in sorted(asg) for pl in asg[c]]
    return [
        *_claim_violations(p, asg, mode),
        *_device_violations(p, pls),
        *_counter_violations(p, pls),
        *_constraint_violations(p, asg),
    ]


def _claim_violations(p: Problem, asg: Assignment, mode: str) -> list[str]:
    """Per claim: placed (mode "all"), few enough results, one alternative per request, its
    devices candidates, each once, as many as asked (All: every candidate)."""
    out: list[str] = []
    if mode == "all" and set(asg) != {c.index for c in p.claims}:
        out.append("not all claims placed")
    for c in p.claims:
        if c.index not in asg:
            continue
        mine = asg[c.index]
        if len(mine) > MAX_RESULTS_PER_CLAIM:
            out.append("too many results")
        for r in c.requests:
            used_alts = {pl.alternative for pl in mine if pl.alternative in r.alternatives}
            if len(used_alts) != 1:
                out.append(f"request {r.name}: {len(used_alts)} alternatives")
                continue
            alt = p.alternatives[used_alts.pop()]
            devs = [pl.device for pl in mine if pl.alternative == alt.index]
            cands = {cd.device: cd for cd in alt.candidates}
            if len(set(devs)) != len(devs):
                out.append("duplicate device")
            if any(d not in cands or cands[d].error is not None for d in devs):
                out.append("not a candidate")
            if alt.mode == "All":
                if alt.all_blocked or not alt.candidates or sorted(devs) != sorted(cands):
                    out.append("All-set not taken")
            elif len(devs) != alt.count:
                out.append("wrong count")
    return out


def _device_violations(p: Problem, pls: list[Placement]) -> list[str]:
    """Per device: not busy, a dedicated one placed once (admin access aside), a shared one
    within its capacity."""
    out: list[str] = []
    for d in p.devices:
        on = [pl for pl in pls if pl.device == d.index]
        plain = [pl for pl in on if not p.alternatives[pl.alternative].admin]
        if d.busy and plain:
            out.append("busy device placed")
        if not d.multi:
            if len(plain) > 1:
                out.append("dedicated device shared")
            claims = [pl.claim for pl in on]
            if len(claims) != len(set(claims)):
                out.append("dedicated device twice in one claim")
            admin_claims = [pl.claim for pl in on if p.alternatives[pl.alternative].admin]
            if any(
                pl.claim > a and p.claims[pl.claim].group == p.claims[a].group
                for a in admin_claims
                for pl in plain
            ):
                out.append("admin placement in use for a later claim")  # upstream's rule (#42)
        elif d.capacity:
            for k, cap in d.capacity.items():
                total = d.in_use.get(k, Fraction(0))
                for pl in on:
                    cd = next(x for x in p.alternatives[pl.alternative].candidates if x.device == d.index)
                    total += (cd.consumed or {}).get(k, Fraction(0))
                if on and total > cap:
                    out.append("capacity exceeded")
    return out


def _counter_violations(p: Problem, pls: list[Placement]) -> list[str]:
    """The devices newly charged to counters: none blocked, no counter over what it has."""
    out: list[str] = []
    charged = [
        d
        for d in p.devices
        if d.counter_use and not (d.busy or d.shared_in_use) and any(pl.device == d.index for pl in pls)
    ]
    if any(d.counters_blocked for d in charged):
        out.append("counters blocked")
    for i, ctr in enumerate(p.counters):
        if sum((d.counter_use.get(i, Fraction(0)) for d in charged), Fraction(0)) > ctr.available:
            out.append("counter exceeded")
    return out


def _constraint_violations(p: Problem, asg: Assignment) -> list[str]:
    """Per constraint of a placed claim: the attribute on every device, matching or distinct."""
    out: list[str] = []
    for k in p.constraints:
        if k.claim not in asg:
            continue
        sets = [
            k.values.get((pl.alternative, pl.device))
            for pl in asg[k.claim]
            if pl.alternative in k.alternatives
        ]
        if any(s is None for s in sets):
            out.append("attribute missing")
            continue
        if k.kind == "match" and sets and not frozenset.intersection(*sets):  # type: ignore[arg-type]
            out.append("match violated")
        if k.kind == "distinct":
            for s1, s2 in itertools.combinations(sets, 2):
                if s1 & s2:  # type: ignore[operator]
                    out.append("distinct violated")
    return out


def objective(p: Problem, asg: Assignment, strategy: str) -> dict[str, int]:
    """The stage values of an assignment (same definitions as encoders.objective)."""
    pls = [pl for c in asg for pl in asg[c]]
    used = {pl.device for pl in pls}
    ranks = device_ranks(p, strategy)
    if strategy == "pack":
        devices = sum(1 for d in used if opens(p.devices[d]))
    else:
        devices = len(used)
    chosen = {pl.alternative for pl in pls}
    order = {
        order_stage_name(i): sum(w * p.alternatives[a].position for a, w in weights.items() if a in chosen)
        for i, weights in enumerate(request_order_weights(p))
    }
    return {
        "placed": sum(claim_weight(p.claims[c].priority) for c in asg),
        "first_available": sum(p.alternatives[a].position for a in chosen),
        **order,
        "devices": devices,
        "order": sum(ranks[d] for d in used),
    }


def search_order(p: Problem, asg: Assignment) -> tuple[int, ...]:
    """Positions of the chosen subrequests, request by request in (claim, request) order (0 for
    an unplaced claim): upstream's search order, compared as a tuple."""
    chosen = {pl.alternative for c in asg for pl in asg[c]}
    return tuple(
        next((p.alternatives[a].position for a in r.alternatives if a in chosen), 0)
        for c in p.claims
        for r in c.requests
        if r.first_available
    )


def _claim_options(p: Problem, c: ClaimInfo) -> Iterator[list[Placement]]:
    """Every way to give claim c one alternative per request and devices for it."""
    per_request = []
    for r in c.requests:
        opts = []
        for a in r.alternatives:
            alt = p.alternatives[a]
            devs = [cd.device for cd in alt.candidates]
            if alt.mode == "All":
                opts.append([Placement(c.index, a, d) for d in devs])
            else:
                for combo in itertools.combinations(devs, alt.count):
                    opts.append([Placement(c.index, a, d) for d in combo])
        per_request.append(opts)
    for choice in itertools.product(*per_request):
        yield [pl for part in choice for pl in part]


def brute_force(p: Problem, mode: str, strategy: str) -> tuple[dict[str, int] | None, Assignment | None]:
    """Lexicographically best valid assignment by enumeration (stages compared in order; the
    firstAvailable search order as the plain tuple of positions, not through the weights of the
    "first_available_order" stages, so those weights are checked too)."""
    per_claim = []
    for c in p.claims:
        opts: list[list[Placement] | None] = list(_claim_options(p, c))
        if mode == "free":
            opts.append(None)
        per_claim.append(opts)
    best_key: tuple[int, ...] | None = None
    best: tuple[dict[str, int] | None, Assignment | None] = (None, None)
    for combo in itertools.product(*per_claim):
        asg = {i: pls for i, pls in enumerate(combo) if pls is not None}
        if violations(p, asg, mode):
            continue
        obj = objective(p, asg, strategy)
        key = (
            -obj["placed"],
            obj["first_available"],
            *search_order(p, asg),
            -obj["devices"] if strategy == "spread" else obj["devices"],
            obj["order"],
        )
        if best_key is None or key < best_key:
            best_key, best = key, (obj, asg)
    return best


# ---------------------------------------------------------------- model-level helpers


def feasible(p: Problem, mode: str = "all", *, group: bool = True) -> bool:
    """Does the model of `p` (hard rules only, no objective) have a solution?"""
    from ortools.sat.python import cp_model

    from dra_solver.encoders import build

    m = build(p, mode=mode, group=group)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(m.cp)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE), solver.status_name(status)
    return status != cp_model.INFEASIBLE


def devices_of(asg: Assignment | None, claim: int = 0) -> list[int]:
    """The devices given to one claim, in result order."""
    assert asg is not None
    return [pl.device for pl in asg[claim]]
