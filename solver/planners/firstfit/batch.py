"""First fit over a whole job: the scheduler's pod-after-pod plan (`FirstFit`).

Why apart from the engine: the batch order (priorities, PodGroup cycles, gangs as blocks) is
the scheduler's queue; the engine (`firstfit.engine`) only answers one pod on one node.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ... import interrupt
from ...planning.gangs import domain_choices, gang_counts, in_domain, no_domain, short_gangs
from ...planning.job import Job, Progress, Unit
from ...planning.ledger import Ledger
from ...planning.outcome import PlanOutcome, PodPlan, Stats
from ...problem.build import build_problem
from ...problem.demand import demand_total
from ...reasons import Kind, Reason
from ...reference import DEFAULT_MAX_STEPS
from .engine import NodeState, ShapeKey, _fit_on, _nowhere, _Placing, _refs, _shape, _Tried, _unplaced


@dataclass(frozen=True)
class FirstFit:
    """The scheduler's way: pod after pod (higher priority first, then input order), each on
    the first node, in the given order, where all its claims fit — each pod seeing what the
    earlier pods took. `max_steps` bounds each search: past it the search is aborted, which is
    an error (upstream's filter timeout) at the full budget and a per-node reason below it.

    Gangs (`Job.gangs`) as upstream's PodGroup scheduling cycle: when the queue reaches a
    gang's first pod, all its pods are placed tentatively, one after the other in queue order,
    each by first fit on what the earlier ones took and never revisited; if fewer than
    minCount fit (counting its pods already bound), every tentative placement is undone and
    each pod of the gang says why (`_place_gang`). Pods above minCount that do not fit stay
    unplaced while the others keep their places. The pods of a PodGroup with the basic policy
    are placed together too, where the queue reaches the first of them (`_cycle_order`), each
    kept where it fits.

    Incremental (see the module docstring); `progress` is told (pods decided, pods)."""

    max_steps: int = DEFAULT_MAX_STEPS
    progress: Progress | None = field(default=None, compare=False)

    def plan(self, job: Job) -> PlanOutcome:
        started = time.perf_counter()
        run = _Placing(job, Ledger(job), self.max_steps)
        out: list[PodPlan | None] = [None] * len(job.units)
        order = _cycle_order(job, sorted(range(len(job.units)), key=lambda i: -job.units[i].priority))
        gang_of = [u.gang_pods(job.gangs) for u in job.units]
        done = 0
        for i in order:
            if out[i] is not None:
                continue  # placed with its gang
            block = _gang_block(order, i, gang_of) if gang_of[i] else [i]
            if len(block) > 1 or gang_of[i]:
                placed = self._place_gang(run, job, block, gang_of)
            else:
                placed = {i: self._place_one(run, job.units[i])}
            for j, p in placed.items():
                out[j] = p
            done += len(placed)
            if self.progress is not None:
                self.progress(done, len(order))
        plans = [p for p in out if p is not None]
        pods = [max(len(u.members), 1) for u in job.units]  # pods sharing a claim are one unit
        stats: Stats = {
            "nodes": len(job.nodes),
            "reference_placed": sum(k for k, p in zip(pods, plans, strict=True) if p.placed),
            "first_fit_seconds": round(time.perf_counter() - started, 3),
        }
        return PlanOutcome(plans, "reference", stats)

    def _place_one(self, run: _Placing, unit: Unit) -> PodPlan:
        if interrupt.requested():  # Ctrl-C: the pods placed so far are kept
            return PodPlan(
                unit.name, None, list(unit.claims), None, unit.priority, why=Reason.of(Kind.INTERRUPTED)
            )
        return self._place(run, unit)

    def _place_gang(
        self, run: _Placing, job: Job, block: list[int], gang_of: list[dict[str, int]]
    ) -> dict[int, PodPlan]:
        """The units of one or more gangs (joined by shared claims), all or nothing: each
        placed by first fit in queue order on what the earlier ones took; if a gang ends
        short of its minCount, the block is undone and every pod says why — the gang, how
        many fit, and the first pod that did not with its own reason.

        Topology constraints (KEP-5732) as upstream's placement cycle: one candidate placement
        per domain (per combination of domains when the block holds several constrained gangs),
        in order of label value; the block is placed tentatively in each, restricted to the
        domain's nodes, and undone; among the placements where every gang reaches minCount the
        one placing most of the block's gang pods is taken (upstream's PodGroupPodsCount score;
        its NodeResourcesFit placement score is not modelled, so ties go to the first domain),
        and the block is placed there again."""
        choices = domain_choices(job, block, gang_of)
        if len(choices) == 1:
            return self._try_block(run, job, block, gang_of, choices[0], undo_short=True)[0]
        best: tuple[int, dict[str, str]] | None = None
        tried: list[tuple[dict[str, str], dict[int, PodPlan], int]] = []
        for choice in choices:
            free = run.fork()
            plans, ok = self._try_block(run, job, block, gang_of, choice, undo_short=False)
            run.revert(free)
            score = sum(k for j in block if plans[j].placed for k in gang_of[j].values())
            tried.append((choice, plans, score))
            if ok and (best is None or score > best[0]):
                best = (score, choice)
        if best is not None:
            return self._try_block(run, job, block, gang_of, best[1], undo_short=True)[0]
        return no_domain(job, block, gang_of, tried)

    def _try_block(
        self,
        run: _Placing,
        job: Job,
        block: list[int],
        gang_of: list[dict[str, int]],
        choice: Mapping[str, str],
        undo_short: bool,
    ) -> tuple[dict[int, PodPlan], bool]:
        """Place the block's units (restricted to the domains of `choice`: gang -> label
        value); whether every gang reaches minCount. Short and `undo_short`: undone, and each
        pod says why."""
        free = run.fork()
        plans = {j: self._place_one(run, in_domain(job, job.units[j], choice)) for j in block}
        count = gang_counts(job, [j for j in block if plans[j].placed])
        short = short_gangs(job, count, {g for j in block for g in gang_of[j]})
        if not short or not undo_short:
            run.keep()
            return plans, not short
        run.revert(free)
        why = job.gangs[short[0]].short(count[short[0]])
        if choice:
            domain = ", ".join(f"{job.gangs[g].topology}={v}" for g, v in sorted(choice.items()))
            why = Reason(why.kind, why.subject, (*why.facts, ("domain", domain)))
        blocker = next((plans[j] for j in block if not plans[j].placed), None)
        out: dict[int, PodPlan] = {}
        for j in block:
            p, unit = plans[j], job.units[j]
            if p.placed:
                facts = () if blocker is None else (("blocker", blocker.name), ("blocked", blocker.reason))
                tail = Reason(why.kind, why.subject, (*why.facts, *facts))
                out[j] = PodPlan(unit.name, None, list(unit.claims), None, unit.priority, why=tail)
            else:
                own = Reason(why.kind, why.subject, (*why.facts, ("own", p.reason)))
                out[j] = replace(p, reason=None, why=own)
        return out, False

    def _place(self, run: _Placing, unit: Unit) -> PodPlan:
        if run.collides(unit):
            return self._place_slowly(run, unit)
        base = _shape(unit.claims)
        uniform = run.uniform(unit)
        at = run.floor(base) if uniform else 0
        known = uniform  # every node before this one fails for the shape at its current version
        while at < len(run.nodes):
            if uniform:  # the claims are the same on every node: skip those they never fit
                at = run.next_try(base, at)
                if at == len(run.nodes):
                    break
            node = run.nodes[at]
            at += 1
            why, variant = run.may_try(unit, node)
            if variant is None:
                known = False
                continue
            placed, shape = _fit_on(run, unit, variant, node, base)
            if placed is not None:
                return placed
            if known:
                run.floors[shape] = (node.index + 1, len(run.changes))
        key = (base, frozenset(unit.blocked.items()), tuple(sorted(demand_total(unit.needs).items())))
        seen = run.nowhere.get(key) if uniform else None
        if seen is None or seen[0] != len(run.changes):
            # Only the nodes changed since the last answer can answer differently (a node's
            # version and its free node resources change only with an entry in `changes`).
            again = range(len(run.nodes)) if seen is None else sorted(set(run.changes[seen[0] :]))
            tried = list(seen[2]) if seen is not None else [_Tried(node) for node in run.nodes]
            for i in again:
                tried[i] = self._try(run, unit, base, run.nodes[i])
            before = seen[1] if seen is not None else None
            seen = (len(run.changes), _nowhere(tried, before, again), tried)
            if uniform:
                run.nowhere[key] = seen
        return _unplaced(unit, seen[1], len(run.nodes))

    @staticmethod
    def _try(run: _Placing, unit: Unit, base: ShapeKey, node: NodeState) -> _Tried:
        """Why `node` does not take `unit` now: a refusal, or the reference search's answer."""
        why, variant = run.may_try(unit, node)
        if variant is None:
            return _Tried(node, why)
        claims = (*unit.claims, *variant.claims)
        shape = _shape(claims) if variant.claims else base
        refs = _refs(claims) if variant.claims else None
        return _Tried(node, None, run.answer(claims, shape, node), refs)

    def _place_slowly(self, run: _Placing, unit: Unit) -> PodPlan:
        """The per-pod path (a fresh Problem from the whole cluster per node), for the rare pod
        whose claim names collide with allocated claims."""
        tried = []
        for node in run.nodes:
            why, variant = run.may_try(unit, node)
            if variant is None:
                tried.append(_Tried(node, why))
                continue
            claims = (*unit.claims, *variant.claims)
            if not claims:
                run.placed(variant, node)
                return PodPlan(unit.name, node.name, [], None, unit.priority, placed=True)
            problem = build_problem(run.ledger.cluster, claims, node.name, run.job.gates, cache=run.job.cache)
            answer = run._search(problem, node, tuple(c.key for c in claims), claims)
            if answer.assignment is not None:
                done = run.ledger.results(problem, claims, answer.assignment)
                run.commit(done, node)
                run.recount()
                run.placed(variant, node)
                return PodPlan(
                    unit.name, node.name, done, None, unit.priority, placed=True, extended=variant.statuses
                )
            tried.append(_Tried(node, None, answer, _refs(claims)))
        return _unplaced(unit, _nowhere(tried), len(run.nodes))


def _cycle_order(job: Job, order: list[int]) -> list[int]:
    """The queue order with the pods of each PodGroup (whatever its policy) moved up to where
    the first of them is, in their queue order; units joined by a shared claim join their
    groups. Why: upstream sends every pod that names a PodGroup to the PodGroup cycle, which
    takes all the group's pending pods when the queue reaches one of them, sorted by priority
    then queue time (pkg/scheduler/schedule_one.go ScheduleOne, schedule_one_podgroup.go
    podGroupInfoForPod); a plain pod between two of them in the queue comes after the group."""
    if not job.gates.GenericWorkload:
        return order
    root: dict[str, str] = {}

    def find(g: str) -> str:
        while root.setdefault(g, g) != g:
            g = root[g]
        return g

    groups = [sorted({m.group for m in job.units[i].members if m.group}) for i in range(len(job.units))]
    for gs in groups:
        for g in gs[1:]:
            root[find(g)] = find(gs[0])
    by_root: dict[str, list[int]] = {}
    for i in order:
        if groups[i]:
            by_root.setdefault(find(groups[i][0]), []).append(i)
    out: list[int] = []
    taken: set[str] = set()
    for i in order:
        if not groups[i]:
            out.append(i)
        elif (r := find(groups[i][0])) not in taken:
            taken.add(r)
            out.extend(by_root[r])
    return out


def _gang_block(order: list[int], first: int, gang_of: list[dict[str, int]]) -> list[int]:
    """The units placed together with `first` (in queue order): every unit of its gangs, and
    of the gangs those units belong to in turn (units joined by a shared claim)."""
    gangs = set(gang_of[first])
    while True:
        block = [j for j in order if gangs & gang_of[j].keys()]
        more = {g for j in block for g in gang_of[j]} - gangs
        if not more:
            return block
        gangs |= more
