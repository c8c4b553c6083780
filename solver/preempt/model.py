"""`plan --preempt`: which running pods must go so that the pending pods run, at least damage —
one CP-SAT model for the whole batch, proven lexicographically (docs/semantics.md, "Preemption").

Why an extension of the per-device model (`perdevice.model_problem`) and not a new one:
a running pod that may be evicted becomes a pod of the model whose claims may use only the
devices they hold now, on its node. Kept, its claims hold those devices, consuming counters and
capacity exactly as any placement does; evicted, they are released. So exclusivity, counters,
shared capacity and node resources need no new rule: the model only adds, per candidate
victim p, the literal kept[p] and

- claims: a claim's devices are released only when every pod using it is evicted —
  held[c] >= kept[p] for each consumer p of c, held[c] <= sum_p kept[p] (held[c] is the
  placed flag of the claim's own group, which may sit only on p's node and only on its
  devices);
- node resources: kept[p] is the placed flag of p's own bare group on its node (demand: its
  requests), so an evicted pod frees its cpu, memory, pod slot;
- justification: 1 - kept[p] <= sum of y[q, n] over the pending pods' forms q that may use
  p's node n, whose priority is above p's and whose preemptionPolicy is not Never;
- gangs: the existing all-or-nothing rule, so no pod is evicted for a gang that does not start;
- moves (`allow_moves`, `preempt.moves`): a movable victim's replacement is one more pod to
  place, on the other nodes, under the rules any pending pod meets; moved[p] (its placed flag)
  and kept[p] + moved[p] <= 1. It justifies no eviction (a replacement preempts no one).

Objective, lexicographic, one stage after the other (each optimum fixed before the next):
(1) the placed pending pods' weight, (2) PDB violations (evicted and moved pods), (3) the
highest evicted priority, (4) the sum of evicted priorities (each + 2^31, as upstream), (5) the
number of evicted pods — (3)-(5) over the evicted pods, 1 - kept[p] - moved[p] — and with moves
(6) the fewest moved pods. OPTIMAL only when every stage is proven; otherwise FEASIBLE and
`stage_status` says which were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ortools.sat.python.cp_model_helper import CpSolverStatus, LinearExpr  # not cp_model: `encoders.model`

from dra_solver.encoders import build
from dra_solver.encoders.model import IntVar, Model, weighted
from dra_solver.encoders.nodes import hint_nodes, pod_flags
from dra_solver.encoders.solution import decode, hint_values

from .. import interrupt
from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim, ResourceClaimStatus
from ..check import CheckFailed, check_preemption
from ..cpsat import Level, Lexicographic, StageStatus, cp_solver, found, hint_with, load_cp_model, work_done
from ..cpsat import proven as stages_proven
from ..deadline import passed
from ..errors import DRASolverError, InputError, SearchAborted
from ..gates import FeatureGates
from ..planners.aggregated.classes import LocalViews
from ..planners.bounds import reaches, verdict
from ..planners.firstfit.batch import FirstFit
from ..planners.perdevice import as_hint, interchangeable, model_problem, pod_forms
from ..planning.finish import per_pod, with_held
from ..planning.gangs import free_units, gang_infos
from ..planning.job import AllBut, AlsoBlocked, Job, Member, Options, Unit
from ..planning.ledger import Ledger
from ..planning.outcome import PlanOutcome, PodPlan, Stats, int_stat, record
from ..planning.resolve import (
    all_with_nodes,
    join_shared,
    make_job,
    resolve_nodes,
    resolve_units,
    with_nodes,
)
from ..planning.snapshot import Snapshot
from ..planning.triage import split_held, triaged
from ..problem.demand import Needs
from ..problem.flat import Alternative, Assignment, DeviceInfo, Problem
from ..problem.pods import pod_claims
from ..problem.resources import pod_demand
from ..problem.scheduling import pod_priority
from ..reasons import Kind, Reason
from ..reasons.words import insufficient
from . import clearing, counting
from .moves import FROM_HERE, not_movable, replacement
from .setting import Setting
from .victims import (
    NEVER,
    Candidate,
    budgets,
    candidates,
    pdb_violations,
    preemption_policy,
    running_pods,
)

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

SHIFT = 2**31
"""Added to each victim's priority in the sum (criterion 4), as upstream does, so that a pod of
negative priority never makes a set of victims cheaper by joining it."""
MOVES_BOUND = "moves_bound"
"""`_stages`' value of the moves stage's proven bound, when one is known (`stats["moves_bound"]`)."""
DTIME = "deterministic_ms"
"""`_stages`' value of the solves' deterministic time, in ms (`stats["deterministic_s"]`)."""
STAGES = ("placed", "pdb_violations", "highest_priority", "priority_sum", "evicted")
MOVES = "moves"
"""The sixth stage, with `--allow-moves` and some pod movable: fewest moved pods."""


@dataclass(frozen=True)
class Victim:
    """A running pod the plan evicts, and why."""

    name: str
    """`namespace/name`."""
    node: str
    priority: int
    preemptor: str
    """The placed pending pod on the same node that justifies the eviction (the highest
    priority one of those that may)."""
    reason: str
    budgets: tuple[str, ...] = ()
    """PodDisruptionBudgets it belongs to that the plan takes over their allowance."""
    pod: Pod | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Move:
    """A running pod the plan re-places on another node instead of evicting it (`--allow-moves`,
    `preempt.moves`)."""

    name: str
    """`namespace/name`: the pod its controller re-creates under the same name."""
    node: str
    """The node it leaves."""
    to: str
    """The node the plan places it on."""
    priority: int
    preemptor: str
    """The placed pending pod on `node` that justifies moving it (as for an eviction)."""
    reason: str
    budgets: tuple[str, ...] = ()
    """PodDisruptionBudgets it belongs to that the plan takes over their allowance."""
    plan: PodPlan | None = field(default=None, compare=False, repr=False)
    """The re-created pod on `to`: its Pod (`plan.pod`, not bound in the input) and its new
    claims, allocated there."""


@dataclass
class PreemptOutcome(PlanOutcome):
    """A plan with preemption: the pending pods (`pods`, as `plan()` returns them) and the
    running pods evicted for them (`victims`), with the claims they release (`released`:
    copies, `reservedFor` without the evicted pods, deallocated when no pod remains)."""

    victims: list[Victim] = field(default_factory=list)
    released: list[ResourceClaim] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    """With `allow_moves`: the running pods re-placed on another node (not among `victims`)."""

    @property
    def summary(self) -> str:
        """`evicts 3 pods (highest priority 100, 1 PDB violation)`, then `, moves 2 pods` when
        the plan moves any (the PDB count includes the moves: each is a disruption)."""
        n = len(self.victims)
        pdb = int_stat(self.stats, "pdb_violations", 0)
        words = f"{pdb} PDB violation{'s' if pdb != 1 else ''}"
        moves = len(self.moves)
        tail = f", moves {moves} pod{'s' if moves != 1 else ''}" if moves else ""
        if not n:
            return f"evicts no pods{tail} ({words})" if moves else "evicts no pods"
        top = max(v.priority for v in self.victims)
        return f"evicts {n} pod{'s' if n != 1 else ''} (highest priority {top}, {words}){tail}"


def _holders(
    cluster: Cluster,
    pending: list[Unit],
    cands: list[Candidate],
    freed: Sequence[ResourceClaim],
    gates: FeatureGates,
) -> tuple[dict[str, tuple[ResourceClaim, str, tuple[int, ...]]], dict[str, list[ResourceClaim]]]:
    """The allocated claims an eviction could release — claim ref -> (the input claim, its
    candidate's node, the candidates using it) — and each bound pod's allocated claims.

    Which claims: those deallocated among `freed`, the claims the snapshot's eviction of every
    candidate changed (`Snapshot.evict`): the ones no pod or other consumer that stays uses,
    so that the model's cluster (`setting`'s `released`) and its holders are one answer. In
    candidate order, each candidate's claims in its order, then any claim only a candidate's
    `reservedFor` names (its spec does not), at the first such candidate's node. A
    candidate's allocated claim a pending pod uses too is an InputError."""
    pending_uses = {
        c.namespaced_name: m.name
        for u in pending
        for m in u.members
        if m.pod is not None
        for c in pod_claims(cluster, m.pod, gates)
        if c.status is not None and c.status.allocation is not None
    }
    users: dict[str, set[str]] = {}
    claims_of: dict[str, list[ResourceClaim]] = {}
    for pod in cluster.pods.values():
        if not pod.spec.node_name:
            continue
        for c in pod_claims(cluster, pod, gates):
            if c.status is not None and c.status.allocation is not None:
                users.setdefault(c.namespaced_name, set()).add(pod.namespaced_name)
                claims_of.setdefault(pod.namespaced_name, []).append(c)
    index = {v.pod.namespaced_name: i for i, v in enumerate(cands)}
    deallocated = {c.key for c in freed if c.status is None or c.status.allocation is None}
    named = [(c, v) for v in cands for c in claims_of.get(v.pod.namespaced_name, [])]
    seen = {c.key for c, _ in named}
    reserved_only = [
        (cluster.claims[c.key], cands[min(_consumers(cluster.claims[c.key], users, index))])
        for c in freed
        if c.key in deallocated and c.key not in seen
    ]
    holders: dict[str, tuple[ResourceClaim, str, tuple[int, ...]]] = {}
    for c, v in (*named, *reserved_only):
        ref = c.namespaced_name
        if ref in pending_uses:
            raise InputError(
                f"running pod {v.pod.namespaced_name} (priority {v.priority}) may be preempted, but "
                f"its claim {ref} is also used by pending pod {pending_uses[ref]}: evicting it could "
                "not free the claim, and keeping it decides the pending pod's node; give the pending "
                "pod its own claim",
                obj=c.ref,
                field="status.reservedFor",
            )
        if c.key in deallocated:  # else a consumer stays: the claim keeps its devices
            holders.setdefault(ref, (c, v.node, tuple(sorted(_consumers(c, users, index)))))
    return holders, claims_of


def _consumers(claim: ResourceClaim, users: dict[str, set[str]], index: dict[str, int]) -> set[int]:
    """The candidates (by index) using a claim every consumer of which is a candidate: the
    running pods naming it and the pods its `reservedFor` names."""
    status = claim.status or ResourceClaimStatus()
    reserved = {f"{claim.metadata.ns}/{r.name}" for r in status.reserved_for if r.resource == "pods"}
    return {index[p] for p in users.get(claim.namespaced_name, set()) | reserved}


def setting(
    cluster: Cluster,
    pods: Sequence[Any] | None,
    nodes: Sequence[str] | None,
    options: Options,
    allow_moves: bool = False,
) -> Setting:
    """Resolve the pending pods, the candidates and what they hold (see the module docstring);
    with `allow_moves`, the replacement of each movable candidate (`preempt.moves`)."""
    gates = options.feature_gates
    node_list = resolve_nodes(cluster, nodes)
    pending = join_shared(resolve_units(cluster, pods, None, gates))
    levels: list[int | None] = []
    for u in pending:
        prios = [
            pod_priority(cluster, m.pod)
            for m in u.members
            if m.pod is not None and preemption_policy(cluster, m.pod) != NEVER
        ]
        levels.append(max(prios) if prios else None)
    running = running_pods(cluster, node_list)
    warnings: list[str] = []
    budget_list = budgets(cluster, running, warnings)
    memo: dict[tuple[str, str | None], Reason | None] = {}
    pending = [with_nodes(cluster, u, node_list, memo, gates) for u in pending]
    # Only pods some pending pod that outranks them and may preempt could go beside: any other
    # is kept by the justification rule anyway, and leaving it out keeps the model small.
    cands = [
        v
        for v in candidates(cluster, running, [lv for lv in levels if lv is not None])
        if any(
            lv is not None and lv > v.priority and v.node not in u.blocked
            for u, lv in zip(pending, levels, strict=True)
        )
    ]
    # The model's cluster: every candidate gone as the snapshot evicts (`Snapshot.evict`); the
    # candidates come back as pods of the model, the claims it deallocates as its holders.
    released, freed = cluster_after_evictions(cluster, {v.pod.namespaced_name for v in cands}, options)
    holders, claims_of = _holders(cluster, pending, cands, freed, gates)
    movers: dict[int, Unit] = {}
    unmovable: dict[int, str] = {}
    if allow_moves:
        for k, v in enumerate(cands):
            name = v.pod.namespaced_name
            mine = [c.namespaced_name for c in claims_of.get(name, [])]
            why = not_movable(v.pod, holders, mine)
            if why is not None:
                unmovable[k] = why
                continue
            (movers[k],) = resolve_units(cluster, [replacement(cluster, v.pod)], None, gates)
        # Replacements of one scheduling key share their refusals (`all_with_nodes`): one
        # pass over the nodes per Deployment, not per pod.
        placed = all_with_nodes(cluster, list(movers.values()), node_list, memo, gates)
        for k, done in zip(list(movers), placed, strict=True):
            blocked = AlsoBlocked(done.blocked, cands[k].node, FROM_HERE)
            movers[k] = replace(done, name=f"move {cands[k].pod.namespaced_name}", blocked=blocked)
    return Setting(
        cluster,
        released,
        pending,
        levels,
        cands,
        holders,
        budget_list,
        node_list,
        warnings,
        movers,
        unmovable,
    )


def plan_preempt(
    cluster: Cluster,
    pods: Sequence[Any] | None = None,
    nodes: Sequence[str] | None = None,
    options: Options | None = None,
    allow_moves: bool = False,
    **changes: Any,
) -> PreemptOutcome:
    """Place the pending pods as `plan()` does, evicting lower-priority running pods where that
    places more weight, at least damage (module docstring). `allow_moves`: a controller-owned
    running pod with only its own template claims may be re-placed on another node instead of
    evicted (`preempt.moves`; fewest moves is the last stage). The input is never modified; every
    plan returned passes the checker, the preemption rules included (`check.preemption`).
    `dra_solver.plan(preempt=True)` and the CLI call it with the garbage collector's
    thresholds raised (`planners.run.fewer_collections`, which sits above this floor)."""
    opts = Options.of(options, **changes)
    cluster = triaged(cluster, opts.feature_gates, ignore_scheduling_gates=opts.ignore_scheduling_gates)
    asked, held = split_held(cluster, pods)
    s = setting(cluster, asked, nodes, opts, allow_moves)
    return with_held(solve_setting(s, opts), held)


def solve_setting(s: Setting, opts: Options, model: str = "auto") -> PreemptOutcome:
    """The batch model of `s`, solved in stages, decoded, verified. `model`: "auto" (the
    counting model where it applies, `preempt.counting`, else the per-device one), "devices"
    or "counts" (tests compare the two; "counts" raises ValueError where it does not apply),
    or "counts-by-weight" (the counting model without merging kinds, `_solve_counts`)."""
    everywhere = frozenset(s.nodes)

    def all_but(node: str, why: Reason) -> AllBut:
        return AllBut(s.nodes, everywhere, node, why)

    holder_units = [
        Unit(f"claim {ref}", (s.released.claims[c.key],), 0, blocked=all_but(node, Reason.of(Kind.HELD_HERE)))
        for ref, (c, node, _) in s.holders.items()
    ]
    pod_units = [
        Unit(
            v.pod.namespaced_name,
            (),
            v.priority,
            blocked=all_but(v.node, Reason.of(Kind.RUNS_ELSEWHERE)),
            members=(Member(v.pod.namespaced_name, v.pod, ()),),
            needs=(Needs(v.pod, pod_demand(v.pod)),),
        )
        for v in s.victims
    ]
    movers = list(s.movers)
    units = [*s.pending, *holder_units, *pod_units, *(s.movers[k] for k in movers)]
    job = make_job(s.released, units, s.nodes, opts)
    P, H = len(s.pending), len(holder_units)
    V = P + H + len(pod_units)  # the first replacement's unit
    for k, v in enumerate(s.victims):  # a pod that does not fit where it runs: an over-committed node
        short = job.book.refusal(job.book.variant(units[P + H + k].needs, v.node), v.node)
        if short:
            raise InputError(
                f"running pod does not fit its node {v.node} as the input has it ({insufficient(short)})",
                obj=v.pod.ref,
            )
    forms = pod_forms(job)
    if not forms:
        return _nothing(s, opts)
    if not load_cp_model(opts.deadline):  # the time left does not cover CP-SAT's import: it fired
        raise _no_plan(opts)
    why = "asked for (model='devices')"
    if model != "devices":
        counts = counting.prepare(s, job, forms, P, H, movers)
        if not isinstance(counts, str):
            return _solve_counts(s, opts, job, forms, counts, merge=model != "counts-by-weight")
        if model in ("counts", "counts-by-weight"):
            raise ValueError(f"the counting model does not apply to this input: {counts}")
        why = counts
    problem, offsets = model_problem(job, forms)
    problem = _only_held(problem, forms, offsets, s, P, H)
    empty = PlanOutcome([PodPlan(u.name, None, [], None, u.priority) for u in units])
    if job.gangs:
        problem = replace(problem, gangs=gang_infos(job, [f.unit for f in forms], empty))
    problem = replace(problem, ordered_pods=_ordered(job, forms, s.levels, P))
    m = build(problem, mode="free", break_symmetry=False)
    lits = _literals(m, s, forms, P, H, V, movers)
    _device_counts(m, forms, offsets)
    _hint(m, s, job, forms, offsets, units, lits)
    result = _stages(m.cp, lits, opts)
    if result is None:
        raise _no_plan(opts)
    values, stage_status, stage_value = result

    def val(v: IntVar) -> int:
        return int(values[v.index])

    assignment = decode(m, val)
    chosen_nodes = {g: n for (g, n), y in m.node_y.items() if val(y)}
    chosen: dict[int, tuple[int, str, Problem, Assignment]] = {}
    for g, f in enumerate(forms):
        if P <= f.unit < V or not (offsets[g] in assignment if f.claims else g in chosen_nodes):
            continue
        node = chosen_nodes.get(g, f.nodes[0]) if problem.nodes else f.nodes[0]
        assert node is not None  # a pending pod's form names real nodes
        local = {k: assignment[offsets[g] + k] for k in range(len(f.claims)) if offsets[g] + k in assignment}
        chosen[f.unit] = (g, node, replace(problem, node=node), local)
    moved = {movers[i - V]: chosen.pop(i) for i in sorted(chosen) if i >= V}
    evicted = [k for k, lit in enumerate(lits.kept) if not val(lit) and k not in moved]
    out = _decode(s, opts, job, forms, (evicted, chosen, moved), stage_status, "devices", stage_value)
    out.stats["preempt_model_reason"] = why
    return out


def _no_plan(opts: Options) -> DRASolverError:
    if opts.deadline is not None and opts.deadline.fired:
        return SearchAborted(
            "the preemption model found no plan before the deadline (cut short by the timeout: "
            "a longer one, or none, lets it finish)"
        )
    return InputError(
        f"the preemption model found no plan within the time limit ({opts.time_limit} s), although "
        "the input as it is (nothing evicted) should be one: a running pod's allocation could not be "
        "reproduced (a device taint or a change to its slice since it was allocated?), or the run was "
        "interrupted"
    )


def _solve_counts(
    s: Setting, opts: Options, job: Job, forms: list[Any], counts: counting.Counting, merge: bool = True
) -> PreemptOutcome:
    """The counting model (`preempt.counting`): built, solved in the same stages, decoded.
    First with the kinds merged (`counting.merged`) and every pending pod placed; when the
    greedy hint cannot place them all there, as it is, with the weights."""
    result, merged = None, False
    if merge:
        one = counting.merged(s, counts)
        built = counting.build_model(s, one, s.budgets, all_placed=True)
        pods = sum(len(k.units) for k in one.kinds)
        if counting.greedy_hint(s, one, built) == pods:
            # The hint places every pending pod: the first stage is at its bound (counted in
            # pods here, every kind's weight being 1).
            lits = objective(built.cp, s, built.kept, built.weight, dict(built.moved))
            result, counts, built = _by_ceiling(s, opts, one, built, lits, pods)
            merged = True
    if not merged:
        built = counting.build_model(s, counts, s.budgets)
        lits = objective(built.cp, s, built.kept, built.weight, dict(built.moved))
        start = counting.greedy_hint(s, counts, built)
        everything = sum(u.weight for k in counts.kinds for u in (s.pending[i] for i in k.units))
        # The hint places every pending pod the model has: the first stage is at its bound.
        result = _stages(built.cp, lits, opts, {"placed": start} if start == everything else {})
    if result is None:
        raise _no_plan(opts)
    values, stage_status, stage_value = result
    picked = counting.decode(s, counts, built, values, forms)
    out = _decode(s, opts, job, forms, picked, stage_status, "counts", stage_value)
    out.stats["kinds_merged"] = merged
    return out


def _by_ceiling(
    s: Setting, opts: Options, c: counting.Counting, built: counting.Built, lits: _Lits, pods: int
) -> tuple[Stages | None, counting.Counting, counting.Built]:
    """The merged counting model's stages, stages 2 and 3 found by ceilings where they can be.

    Why: stage 3 minimises a maximum, and on a full cluster CP-SAT takes long to find a plan
    at the bound its relaxation proves — while the model in which only the candidates up to a
    priority may be evicted is smaller (the others are kept; only the priorities left separate
    levels, so more kinds merge: `counting.merged`), and asking it whether every pending pod
    still fits within a number of budget violations is quick to answer either way. So, for
    each ceiling from "nothing evicted" up through the candidates' priorities, the model up to
    it is asked for a plan (`_ceilings`): the first one that has a plan (each lower one proven
    to have none) gives stage 3's optimum — a plan evicts at most that priority, none evicts
    less — and stages 4 and 5 are solved on it. First with no budget violated, stage 2's
    trivial bound, so that a plan proves stages 2 and 3 at once; where no ceiling has such a
    plan, stage 2 on the whole model, then the ceilings again with its optimum. Where stage 2
    is not proven or a ceiling is not answered within its share of the budget, the whole
    model goes on from stage 2 as before."""
    spent = 0.0
    apply = lits.order[2] == "highest_priority" and bool(s.victims)
    if apply:
        got, spent = _ceilings(s, opts, c, pods, 0, spent, CEILING_SHARE / 3)
        if not isinstance(got, str):
            return got
    first = _stages(built.cp, lits, opts, {"placed": pods}, spent, upto="pdb_violations")
    if first is None:
        return None, c, built
    _, status_of, value_of = first
    spent = value_of[DTIME] / 1000
    if apply and status_of["pdb_violations"] in (StageStatus.OPTIMAL, StageStatus.FIXED):
        got, spent = _ceilings(s, opts, c, pods, value_of["pdb_violations"], spent, CEILING_SHARE)
        if not isinstance(got, str):
            return got
    # The whole model from stage 2 on (its optimum so far is a row and the hint).
    return _stages(built.cp, lits, opts, {"placed": pods}, spent, clear=_Clear(s, c, built)), c, built


def _ceilings(
    s: Setting, opts: Options, c: counting.Counting, pods: int, violations: int, spent: float, share: float
) -> tuple[tuple[Stages | None, counting.Counting, counting.Built] | str, float]:
    """The ceilings in turn with at most `violations` budget violations (`_by_ceiling`): the
    stages of the first one with a plan, or "none" (every ceiling proven to have none) or
    "unknown" (one not answered within `share` of the budget left); and the deterministic
    seconds spent so far."""
    prios = sorted({v.priority for v in s.victims})
    for level, ceiling in enumerate([prios[0] - 1, *prios]):
        left = opts.time_limit - spent
        one = counting.merged(s, c, ceiling)
        sub = counting.build_model(s, one, s.budgets, all_placed=True)
        sub_lits = objective(sub.cp, s, sub.kept, sub.weight, dict(sub.moved))
        sub.cp.add(sub_lits.stages["pdb_violations"][0] <= violations)
        answer = CpSolverStatus.UNKNOWN
        if counting.greedy_hint(s, one, sub) == pods:
            # The greedy places every pending pod under this ceiling: if its hint meets every
            # row (CP-SAT with the hinted values fixed: no search), the ceiling has a plan —
            # at 5,000 nodes a search from the hint took 15 deterministic s to say so.
            solver, answer = _hint_checked(sub.cp, opts, max(min(CEILING_PROBE, left * share), 0.05))
            spent += work_done(solver)
            left = opts.time_limit - spent
            if not found(answer):
                answer = CpSolverStatus.UNKNOWN  # the hint is not a plan here: search as below
        for hinted, most in ((False, CEILING_PROBE), (True, float(opts.time_limit))):
            # First without the hint and briefly: a ceiling too low is mostly refuted by presolve
            # alone; then from the greedy's hint.
            if answer != CpSolverStatus.UNKNOWN:
                break
            if hinted:
                counting.greedy_hint(s, one, sub)
            else:
                sub.cp.clear_hints()
            solver = cp_solver(opts.seed, max(min(most, left * share), 0.05), opts.deadline)
            with interrupt.stoppable(solver.stop_search):
                answer = solver.solve(sub.cp)
            spent += work_done(solver)
            left = opts.time_limit - spent
            if answer != CpSolverStatus.UNKNOWN or interrupt.requested() or passed(opts.deadline):
                break
        if answer == CpSolverStatus.INFEASIBLE:
            continue
        if not found(answer):
            return "unknown", spent
        hint_with(sub.cp, solver.response_proto.solution)
        reached = {"placed": pods, "pdb_violations": violations, "highest_priority": level}
        if level == 0:  # nothing evicted (every level literal 0 bounds every eviction to 0)
            reached.update(evicted=0, priority_sum=0)
        rest = _stages(sub.cp, sub_lits, opts, reached, spent, clear=_Clear(s, one, sub))
        if rest is None:
            return "unknown", spent
        return (rest, one, sub), spent
    return "none", spent


def _ordered(job: Job, forms: list[Any], levels: list[int | None], P: int) -> tuple[Any, ...]:
    """Queue-order symmetry breaking among interchangeable pending pods only, and only among
    pods that may preempt alike (a pod with policy Never is not interchangeable with one
    without): running pods differ by their budgets and devices."""
    out = []
    for cls in interchangeable(job, forms):
        if not all(forms[gs[0]].unit < P for gs in cls):
            continue
        by_level: dict[int | None, list[tuple[int, ...]]] = {}
        for gs in cls:
            by_level.setdefault(levels[forms[gs[0]].unit], []).append(gs)
        out += [tuple(part) for part in by_level.values() if len(part) > 1]
    return tuple(out)


@dataclass
class _Lits:
    kept: list[IntVar]
    """Per candidate victim."""
    stages: dict[str, tuple[cp_model.LinearExprT, bool]]
    """Stage -> (expression, maximise)."""
    order: tuple[str, ...] = STAGES
    """The stages in solving order: with small priorities, (4) is solved as the count, then
    the sum of the priorities — its exact equivalent (`_literals`)."""


def _only_held(problem: Problem, forms: list[Any], offsets: list[int], s: Setting, P: int, H: int) -> Problem:
    """The holders' claims may use only the devices they hold now (same request, same device)."""
    originals = [c for c, _, _ in s.holders.values()]
    held: dict[int, set[tuple[str, str, str, str]]] = {}
    for g, f in enumerate(forms):
        if P <= f.unit < P + H:
            alloc = originals[f.unit - P].status
            assert alloc is not None and alloc.allocation is not None  # holders are allocated claims
            results = alloc.allocation.devices.results
            held[offsets[g]] = {(r.request, r.driver, r.pool, r.device) for r in results}
    if not held:
        return problem
    devices = problem.devices
    alts: list[Alternative] = []
    for a in problem.alternatives:
        keep = held.get(a.claim)
        if keep is None:
            alts.append(a)
            continue
        cands = tuple(c for c in a.candidates if _id(a, devices[c.device]) in keep)
        alts.append(replace(a, candidates=cands))
    return replace(problem, alternatives=tuple(alts))


def _id(a: Alternative, d: DeviceInfo) -> tuple[str, str, str, str]:
    return (a.name, d.driver, d.pool, d.name)


def _literals(
    m: Model, s: Setting, forms: list[Any], P: int, H: int, V: int, movers: Sequence[int] = ()
) -> _Lits:
    """`V`: the first replacement's unit; `movers`: the victim index of each replacement unit
    from `V` on. A victim's replacement is placed (moved[k], the sum of its forms' flags) only
    if the victim is not kept: kept[k] + moved[k] <= 1."""
    cp = m.cp
    flags = pod_flags(m)
    placed: list[list[IntVar]] = [[] for _ in range(P)]
    holder_flag: dict[int, IntVar] = {}
    pod_flag: dict[int, IntVar] = {}
    move_flags: dict[int, list[IntVar]] = {}
    for g, f in enumerate(forms):
        if f.unit < P:
            placed[f.unit].append(flags[g])
        elif f.unit < P + H:
            holder_flag[f.unit - P] = flags[g]
        elif f.unit < V:
            pod_flag[f.unit - P - H] = flags[g]
        else:
            move_flags.setdefault(movers[f.unit - V], []).append(flags[g])
    kept = [pod_flag[k] if k in pod_flag else cp.new_bool_var(f"kept[{k}]") for k in range(len(s.victims))]
    moved: dict[int, cp_model.LinearExpr] = {}
    for k, fl in move_flags.items():
        moved[k] = LinearExpr.sum(fl)
        cp.add(kept[k] + moved[k] <= 1)
    for h, (ref, (_, _, users)) in enumerate(s.holders.items()):
        flag = holder_flag.get(h)
        if flag is None:
            raise InputError(f"claim {ref} of a running pod cannot be modelled as it is allocated")
        for p in users:
            cp.add(flag >= kept[p])
        cp.add(flag <= sum(kept[p] for p in users))
    for k, v in enumerate(s.victims):  # justification: a higher-priority pod that may preempt, there
        by = []
        for g, f in enumerate(forms):
            lv = s.levels[f.unit] if f.unit < P else None
            if lv is None or lv <= v.priority or v.node not in f.nodes:
                continue
            by.append(m.node_y[(g, v.node)] if m.problem.nodes else flags[g])
        if by:
            cp.add(1 - kept[k] <= sum(by))
        else:
            cp.add(kept[k] == 1)
    weights = [u.weight for u in s.pending]
    weight = sum(w * x for w, fl in zip(weights, placed, strict=True) for x in fl)
    return objective(cp, s, kept, weight, moved)


def objective(
    cp: cp_model.CpModel,
    s: Setting,
    kept: list[IntVar],
    weight: cp_model.LinearExprT,
    moved: dict[int, cp_model.LinearExpr] | None = None,
) -> _Lits:
    """The five stages over the victims' kept literals (module docstring); shared by the
    per-device and the counting model (`preempt.counting`), so both order plans alike.
    `moved` (victim index -> its replacement placed, `--allow-moves`): a moved pod is disrupted
    (stage 2 counts it) but not evicted (stages 3-5 count only the pods not kept and not
    moved); a sixth stage then takes the fewest moves, so a pod is moved only for a gain."""
    moved = moved or {}
    stages: dict[str, tuple[cp_model.LinearExprT, bool]] = {"placed": (weight, True)}
    lits = _Lits(kept, stages)
    over = []
    index = {v.pod.namespaced_name: k for k, v in enumerate(s.victims)}
    for b in s.budgets:
        members = [index[p] for p in sorted(b.pods) if p in index]
        if len(members) <= b.allowed:
            continue
        o = cp.new_int_var(0, len(members) - b.allowed, f"over[{b.name}]")
        cp.add(o >= sum(1 - kept[k] for k in members) - b.allowed)
        over.append(o)
    stages["pdb_violations"] = (sum(over), False)
    # (3) the highest evicted priority, as a chain over the candidates' distinct priorities
    # p_1 < ... < p_L: level[j] = "a pod of priority >= p_j is evicted", level[j] >= level[j+1];
    # the highest evicted priority is p_J with J = sum_j level[j] (none when 0) — small
    # coefficients, where an integer maximum with big-M rows would be weak.
    prios = sorted({v.priority for v in s.victims})
    level = [cp.new_bool_var(f"level[{p}]") for p in prios]
    for at, above in zip(level, level[1:], strict=False):
        cp.add(at >= above)
    gone = [1 - kept[k] - moved[k] if k in moved else 1 - kept[k] for k in range(len(s.victims))]
    for k, v in enumerate(s.victims):
        cp.add(gone[k] <= level[prios.index(v.priority)])
    stages["highest_priority"] = (sum(level), False)
    raw = sum(v.priority * g for v, g in zip(s.victims, gone, strict=True))
    if sum(abs(v.priority) for v in s.victims) < 2**30:
        # (4) sum of (priority + 2^31) = 2^31 * count + sum of priorities, and the sum of the
        # priorities varies by less than 2^31: lexicographically (count, sum) — two stages with
        # small coefficients; then (5), the count, is already fixed.
        stages["evicted"] = (sum(gone), False)
        stages["priority_sum"] = (raw, False)
        lits.order = ("placed", "pdb_violations", "highest_priority", "evicted", "priority_sum")
    else:
        stages["priority_sum"] = (
            sum((v.priority + SHIFT) * g for v, g in zip(s.victims, gone, strict=True)),
            False,
        )
        stages["evicted"] = (sum(gone), False)
    if moved:
        stages[MOVES] = (sum(moved.values()), False)
        lits.order = (*lits.order, MOVES)
    return lits


def _device_counts(m: Model, forms: list[Any], offsets: list[int]) -> None:
    """A redundant row per node, for the LP: the pods placed there (pending pods and the claims
    victims keep) take at least sum(need) distinct devices among those any of them may take
    there. need(form) = per request, the fewest devices any of its alternatives takes. Valid
    when every placement is exclusive (no multi-allocatable device, no adminAccess) and every
    request is ExactCount; skipped otherwise. Why: the per-device rows alone give the LP no
    capacity per node, and proving that fewer or cheaper victims cannot make room is bin
    packing — this is its classic bound."""
    p = m.problem
    if any(a.mode != "ExactCount" or a.admin for a in p.alternatives) or any(d.multi for d in p.devices):
        return
    flags = pod_flags(m)
    for n in p.nodes or (p.node,):
        terms: list[tuple[int, IntVar]] = []
        devices: set[int] = set()
        for g, f in enumerate(forms):
            if n not in f.nodes or not f.claims:
                continue
            need = 0
            for k in range(len(f.claims)):
                for r in p.claims[offsets[g] + k].requests:
                    alts = [p.alternatives[a] for a in r.alternatives]
                    need += min((a.count for a in alts), default=0)
                    devices.update(
                        c.device for a in alts for c in a.candidates if c.nodes is None or n in c.nodes
                    )
            if need:
                terms.append((need, m.node_y[(g, n)] if p.nodes and n is not None else flags[g]))
        if sum(c for c, _ in terms) > len(devices):
            m.cp.add(weighted(terms) <= len(devices))


def _hint(
    m: Model,
    s: Setting,
    job: Job,
    forms: list[Any],
    offsets: list[int],
    units: list[Unit],
    lits: _Lits,
) -> None:
    """Hint: first fit's plan of the pending pods without preemption, every victim kept on its
    devices (a complete solution of the model). The units are `solve_setting`'s: the pending
    pods, one per held claim (`s.holders`), then the victims."""
    P, H = len(s.pending), len(s.holders)
    first_job = replace(
        job,
        cluster=s.cluster,
        units=tuple(s.pending),
        book=make_job(s.cluster, s.pending, s.nodes, _opts(job)).book,
    )
    first = FirstFit().plan(first_job)
    pods = list(first.pods)
    for h, (_, (c, node, _)) in enumerate(s.holders.items()):
        pods.append(PodPlan(units[P + h].name, node, [c], None, 0, placed=True))
    for v in s.victims:
        pods.append(PodPlan(v.pod.namespaced_name, v.node, [], None, v.priority, placed=True))
    pods += [PodPlan(units[i].name, None, [], None, units[i].priority) for i in range(len(pods), len(units))]
    outcome = PlanOutcome(pods)
    hint, nodes = as_hint(m.problem, forms, offsets, outcome)
    for g, f in enumerate(forms):
        if P + H <= f.unit < P + H + len(s.victims) and not f.claims:
            nodes[g] = s.victims[f.unit - P - H].node
    pairs = hint_values(m, hint) + hint_nodes(m, hint, nodes)
    for var, val in pairs:
        m.cp.add_hint(var, val)
    hinted = {var.index for var, _ in pairs}
    for k in lits.kept:
        if k.index not in hinted:
            m.cp.add_hint(k, 1)


def _opts(job: Job) -> Options:
    return Options(feature_gates=job.gates, seed=job.seed, time_limit=job.time_limit, deadline=job.deadline)


Stages = tuple[list[int], dict[str, StageStatus], dict[str, int]]
"""`_stages`' answer: the solution, each stage's status and value."""


STAGE_FLOOR = 0.05
"""Least deterministic seconds one stage's call gets (`_stages`), budget left or not."""
CEILING_SHARE = 0.3
"""Most of the deterministic budget left that one ceiling's question may take (`_by_ceiling`)."""
CEILING_PROBE = 0.2
"""Deterministic seconds for a ceiling's first, unhinted question (`_by_ceiling`)."""


@dataclass(frozen=True)
class _Clear:
    """What the moves stage's bound and guided hint read (`preempt.clearing`): the setting,
    the merged counting facts and their model, in which every pending pod is placed."""

    s: Setting
    c: counting.Counting
    built: counting.Built


CLEAR_SHARE = 0.25
"""Most of the deterministic budget left that the moves stage's relaxation may take."""
CLEAR_MOST = 10.0
"""Most deterministic seconds the moves stage's relaxation may take (`preempt.clearing`)."""
CHECK = 1.0
"""Deterministic seconds for checking a complete hint with its values fixed (no search)."""


def _stages(
    cp: cp_model.CpModel,
    lits: _Lits,
    opts: Options,
    reached: dict[str, int] | None = None,
    spent: float = 0.0,
    upto: str | None = None,
    clear: _Clear | None = None,
) -> Stages | None:
    """Optimise the stages in order, each optimum fixed before the next (`cpsat.Lexicographic`,
    the per-device model's runner); each stage gets what is left of the deterministic budget
    (the last stages need least), at least `STAGE_FLOOR`. `reached`: stages whose optimum the
    caller has proven (a trivial bound, or `_by_ceiling`): fixed at that value without a
    solve, so the hint carries on to the next stage. `spent`: deterministic seconds of the
    time limit already used (they count in `DTIME`); `upto`: the last stage to solve (the
    others NOT_RUN). `clear`: the moves stage, last, is first bounded and hinted by
    `preempt.clearing` (`_fewest_moves`), proven without a search when a plan meets the bound;
    its bound is then `value_of[MOVES_BOUND]`."""
    levels = [
        Level(name, expr, maximize, fixed=isinstance(expr, int))
        for name in lits.order
        for expr, maximize in (lits.stages[name],)
    ]
    run = Lexicographic(cp, levels, float(opts.time_limit), opts.seed, opts.deadline, spent, STAGE_FLOOR)
    bound: int | None = None
    last = levels[-1]
    if clear is not None and last.name == MOVES and upto is None:
        if run.required(levels[:-1], reached) is not None:
            return None
        if all(lv.name in run.values for lv in levels[:-1]):  # every earlier stage fixed
            bound = _fewest_moves(run, last, clear, opts)
            if run.status[MOVES] == StageStatus.NOT_RUN and run.required([last]) is not None:
                return None
            if MOVES in run.bounds:
                bound = max(bound or 0, run.bounds[MOVES])
            if run.status[MOVES] == StageStatus.FEASIBLE and reaches(run.values[MOVES], bound):
                run.status[MOVES] = StageStatus.OPTIMAL
    elif run.required(levels, reached, upto) is not None:
        return None
    used = run.spent
    run.feasible(hint=False)  # every stage fixed: one solve for the values
    best = run.solution()
    status_of = dict(run.status)
    for name in (*STAGES, *lits.order):
        status_of.setdefault(name, StageStatus.NOT_RUN)
    value_of = dict(run.values)
    value_of[DTIME] = round(used * 1000)
    if bound is not None:
        value_of[MOVES_BOUND] = bound
    return (best, status_of, value_of) if best is not None else None


def _fewest_moves(run: Lexicographic, last: Level, clear: _Clear, opts: Options) -> int | None:
    """Before the moves stage's search: its bound by `clearing.clearing` (None: none), and a
    hint clearing the nodes the relaxation chose (`counting.greedy_hint` with `hosts`), kept
    when it moves fewer pods than the incumbent (the earlier stages' solution, or the hint
    they left). When the better of the two meets the bound, it is the stage's proven answer
    and no search runs. Why: at 10,000 nodes the search from the greedy hint neither improves
    it nor proves a bound within the budget (docs/benchmarks.md, "Defragmentation")."""
    s, c, built = clear.s, clear.c, clear.built
    cp = run.cp
    got = clearing.clearing(
        s,
        c,
        run.values["pdb_violations"],
        run.values["evicted"],
        opts.seed,
        min(CLEAR_SHARE * run.budget, CLEAR_MOST),
        opts.deadline,
    )
    if got is None:
        return None
    run.spend(got.deterministic_s)
    moved = list(built.moved.values())
    hint = cp.proto.solution_hint
    saved = (list(hint.vars), list(hint.values))
    incumbent = run.solution()
    if incumbent is None and saved[0] == list(range(len(cp.proto.variables))):
        incumbent = saved[1]
    best, value = run.best, None if incumbent is None else clearing.moves_of(incumbent, moved)
    pods = sum(len(k.units) for k in c.kinds)
    if got.hosts and counting.greedy_hint(s, c, built, hosts=got.hosts) == pods:
        guided = _checked(run, opts)
        if guided is not None:
            mine = clearing.moves_of(guided.response_proto.solution, moved)
            if value is None or mine < value:
                best, value = guided, mine
    if best is not None and best is not run.best:
        hint_with(cp, best.response_proto.solution)
    else:
        cp.clear_hints()
        cp.proto.solution_hint.vars.extend(saved[0])
        cp.proto.solution_hint.values.extend(saved[1])
    if value is not None and reaches(value, got.bound):
        if best is None:
            best = _checked(run, opts)  # the incumbent hint, with its values fixed
        if best is not None:
            run.adopt(last, best, value, proven=True)
    return got.bound


def _checked(run: Lexicographic, opts: Options) -> cp_model.CpSolver | None:
    """The model's hint checked with its values fixed (no search; the objective aux variables
    the hint leaves out are found): the solver holding it, or None when it is no solution."""
    run.cp.clear_objective()
    solver, status = _hint_checked(run.cp, opts, CHECK)
    run.spend(work_done(solver))
    return solver if found(status) else None


def _hint_checked(
    cp: cp_model.CpModel, opts: Options, budget: float
) -> tuple[cp_model.CpSolver, CpSolverStatus]:
    """CP-SAT on `cp` with every hinted variable fixed to its hint: no search, only whether
    the hint (completed where it leaves variables out) meets every row — the ceilings' and the
    moves stage's check of a greedy plan."""
    solver = cp_solver(opts.seed, budget, opts.deadline)
    solver.parameters.fix_variables_to_their_hinted_value = True
    return solver, solver.solve(cp)


def _decode(
    s: Setting,
    opts: Options,
    job: Job,
    forms: list[Any],
    picked: tuple[list[int], counting.Placed, counting.Placed],
    stage_status: dict[str, StageStatus],
    model: str,
    stage_value: dict[str, int],
) -> PreemptOutcome:
    """The plan of a solution, `picked` as both models read theirs back (`counting.decode`):
    the evicted victim indices; per placed pending unit its form, node, a Problem the
    placements index and the placements by claim position; the same per moved victim index
    (its replacement's placement)."""
    evicted, chosen, moved = picked
    P = len(s.pending)
    gone = {s.victims[k].pod.namespaced_name for k in evicted}
    away = gone | {s.victims[k].pod.namespaced_name for k in moved}
    after, released = cluster_after_evictions(s.cluster, away, opts)
    pending_job = replace(
        job, cluster=after, units=tuple(s.pending), book=make_job(after, s.pending, s.nodes, opts).book
    )
    empty = PlanOutcome([PodPlan(u.name, None, [], None, u.priority) for u in s.pending])
    modelled = {f.unit for f in forms if f.unit < P}
    free = free_units(pending_job, modelled, empty, {i: g for i, (g, _, _, _) in chosen.items()})
    ledger = Ledger(pending_job)
    plans: list[PodPlan] = []
    on_node: dict[str | None, list[ResourceClaim]] = {}
    for i, unit in enumerate(s.pending):
        if i not in chosen:
            if i in free:
                plans.append(free[i])
                continue
            plans.append(
                PodPlan(unit.name, None, list(unit.claims), None, unit.priority, why=_left_out(s, i))
            )
            continue
        g, node, problem, local = chosen[i]
        form = forms[g]
        done = ledger.results(problem, form.claims, local) if form.claims else []
        on_node.setdefault(node, []).extend(done)
        plans.append(
            PodPlan(unit.name, node, done, None, unit.priority, placed=True, extended=form.variant.statuses)
        )
    move_plans: list[PodPlan] = []
    for k, (g, node, problem, local) in sorted(moved.items()):
        form, unit = forms[g], s.movers[k]
        done = ledger.results(problem, form.claims, local) if form.claims else []
        on_node.setdefault(node, []).extend(done)
        move_plans.append(
            PodPlan(unit.name, node, done, None, unit.priority, placed=True, extended=form.variant.statuses)
        )
    views = LocalViews(pending_job.cluster) if model == "counts" else None
    for n in s.nodes:
        if on_node.get(n):  # the counting model's nodes are independent: each checked in its view
            ledger.commit(on_node[n], n, views.of(ledger.cluster, n) if views is not None else None)
    proven = stages_proven(stage_status)
    stats: Stats = {
        "stage_status": {k: v.value for k, v in stage_status.items()},
        "preempt_model": model,
        "deterministic_s": stage_value.get(DTIME, 0) / 1000,
        "candidates": len(s.victims),
        "evicted": len(evicted),
        "pdb_violations": pdb_violations(s.budgets, away),
        "evicted_priority_sum": sum(s.victims[k].priority for k in evicted),
        "highest_evicted_priority": max((s.victims[k].priority for k in evicted), default=None),
    }
    if moved:
        stats["moved"] = len(moved)
    if MOVES_BOUND in stage_value:  # the moves stage's proven bound (`_fewest_moves`) and gap
        stats["moves_bound"] = stage_value[MOVES_BOUND]
        stats["moves_gap"] = len(moved) - stage_value[MOVES_BOUND]
    record(stats, opts.deadline)
    outcome = per_pod(after, s.pending, PlanOutcome(plans, "cpsat-preempt", stats), opts.feature_gates)
    # the verdict of the plan returned: pods joined by a shared claim count each with its own weight
    told = verdict(outcome.weight, None, "every stage of the preemption model proven", proven=proven)
    outcome.stats.update(stats)
    _warn(outcome.stats, s.warnings)
    moved_pods: list[PodPlan] = []
    if moved:  # verified beside the pending pods (node resources, devices), then split off
        units = [*s.pending, *(s.movers[k] for k in sorted(moved))]
        both = per_pod(after, units, PlanOutcome([*plans, *move_plans], "cpsat-preempt"), opts.feature_gates)
        moved_pods = both.pods[len(outcome.pods) :]
    victims = _victims(s, evicted, plans, proven, away)
    moves = _moves(s, sorted(moved), plans, moved_pods, proven, away)
    violations = check_preemption(
        s.cluster, outcome.pods, [v.name for v in victims], released, opts.feature_gates, moved_pods
    )
    if violations:
        raise CheckFailed(violations)
    return PreemptOutcome(
        outcome.pods,
        outcome.allocator,
        outcome.stats,
        verdict=told,
        victims=victims,
        released=released,
        moves=moves,
    )


def cluster_after_evictions(
    cluster: Cluster, gone: set[str], opts: Options
) -> tuple[Cluster, list[ResourceClaim]]:
    """The input without the evicted pods, and the claims they used: `reservedFor` without them,
    deallocated when no pod remains (as the resource claim controller does;
    `planning.snapshot.Snapshot.evict`). Returns the cluster and the changed claims (copies;
    the input is not modified)."""
    after = Snapshot(cluster, opts.feature_gates)
    released = after.evict(gone)
    return after.cluster, released


def _victims(
    s: Setting, evicted: list[int], plans: list[PodPlan], proven: bool, away: set[str]
) -> list[Victim]:
    """The evicted pods with their reasons; "the plan places the most ..." only when every stage
    is proven (else "the best plan found"). `away`: the evicted and the moved pods (the budgets
    count both)."""
    over = [b for b in s.budgets if b.over(away) > 0]
    out = []
    for k in evicted:
        v = s.victims[k]
        lv, name = _preemptor(s, k, plans)
        names = tuple(b.name for b in over if v.pod.namespaced_name in b.pods)
        pdb = f"; over the budget of PodDisruptionBudget {', '.join(names)}" if names else ""
        reason = (
            f"evicted from {v.node} for {name} (priority {lv} > {v.priority}): "
            f"{'the plan places' if proven else 'the best plan found (not proven) places'} the most "
            "pending weight at least damage (fewest PDB violations, lowest highest priority, lowest sum, "
            f"fewest pods){pdb}{_not_moved(s, k, proven)}"
        )
        out.append(Victim(v.pod.namespaced_name, v.node, v.priority, name, reason, names, v.pod))
    return out


def _not_moved(s: Setting, k: int, proven: bool) -> str:
    """With `--allow-moves`: why an evicted pod is not moved instead. A movable pod evicted by
    a proven plan: moving it would be better on stages 3-5 with the rest unchanged, so no plan
    placing as much with no more damage has room for it elsewhere."""
    if k in s.unmovable:
        return f"; not moved: {s.unmovable[k]}"
    if k in s.movers:
        if proven:
            return "; not moved: no plan placing as much at no more damage has room for it on another node"
        return "; not moved: the best plan found (not proven) has no room for it on another node"
    return ""


def _preemptor(s: Setting, k: int, plans: list[PodPlan]) -> tuple[int, str]:
    """The placed pending pod that justifies evicting or moving victim `k`: the highest
    priority one on its node that may preempt (ties: the first name), with that priority."""
    v = s.victims[k]
    by = [
        (s.levels[i] or 0, p.name)
        for i, p in enumerate(plans)
        if p.placed and p.node == v.node and s.levels[i] is not None and (s.levels[i] or 0) > v.priority
    ]
    return max(by, key=lambda t: (t[0], [-ord(ch) for ch in t[1]]))


def _moves(
    s: Setting,
    moved: list[int],
    plans: list[PodPlan],
    moved_pods: list[PodPlan],
    proven: bool,
    away: set[str],
) -> list[Move]:
    """The moved pods with their reasons, in victim order (as `moved`, and `moved_pods`)."""
    over = [b for b in s.budgets if b.over(away) > 0]
    out = []
    for k, plan in zip(moved, moved_pods, strict=True):
        v = s.victims[k]
        lv, name = _preemptor(s, k, plans)
        names = tuple(b.name for b in over if v.pod.namespaced_name in b.pods)
        pdb = f"; over the budget of PodDisruptionBudget {', '.join(names)}" if names else ""
        reason = (
            f"moved from {v.node} to {plan.node} for {name} (priority {lv} > {v.priority}): its controller "
            f"re-creates it, and {'the plan' if proven else 'the best plan found (not proven)'} places "
            f"it on {plan.node} instead of evicting it (most pending weight, then least damage, then "
            f"fewest moves){pdb}"
        )
        assert plan.node is not None  # a moved pod is placed on a node
        out.append(Move(v.pod.namespaced_name, v.node, plan.node, v.priority, name, reason, names, plan))
    return out


def _left_out(s: Setting, i: int) -> Reason:
    """Why a pending pod is not placed, preemption considered."""
    unit = s.pending[i]
    if s.levels[i] is None:
        plain = not any(m.pod is not None for m in unit.members)
        return Reason.of(Kind.PREEMPT_NEVER, unit.name, plain=int(plain))
    lower = [v for v in s.victims if v.priority < (s.levels[i] or 0) and v.node not in unit.blocked]
    if not lower:
        return Reason.of(Kind.PREEMPT_NO_VICTIM, unit.name)
    return Reason.of(Kind.PREEMPT_NOT_ENOUGH, unit.name)


def _nothing(s: Setting, opts: Options) -> PreemptOutcome:
    plans = [
        PodPlan(u.name, None, list(u.claims), None, u.priority, why=_left_out(s, i))
        for i, u in enumerate(s.pending)
    ]
    told = verdict(0, None, "no pending pod may go on any node, with or without evictions")
    stats: Stats = {
        "evicted": 0,
        "pdb_violations": 0,
        "candidates": len(s.victims),
    }
    outcome = per_pod(s.cluster, s.pending, PlanOutcome(plans, "cpsat-preempt", stats), opts.feature_gates)
    outcome.stats.update(stats)
    _warn(outcome.stats, s.warnings)
    return PreemptOutcome(outcome.pods, outcome.allocator, outcome.stats, verdict=told)


def _warn(stats: Stats, warnings: list[str]) -> None:
    """The setting's warnings after the plan's own (`stats["warnings"]`, printed by the CLI)."""
    if warnings:
        before = stats.get("warnings")
        stats["warnings"] = [*(before if isinstance(before, list) else []), *warnings]


def evicted_pod(pod: Pod, preemptor_scheduler: str = "default-scheduler") -> dict[str, Any]:
    """The evicted Pod as the scheduler leaves it before deleting it: status condition
    DisruptionTarget=True, reason PreemptionByScheduler (a copy; the input is not modified)."""
    doc = pod.dump()
    status = doc.setdefault("status", {})
    conditions = [c for c in status.get("conditions", []) if c.get("type") != "DisruptionTarget"]
    conditions.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": f"{preemptor_scheduler}: preempting to accommodate a higher priority pod",
        }
    )
    status["conditions"] = conditions
    return doc


__all__ = [
    "MOVES",
    "Move",
    "PreemptOutcome",
    "Setting",
    "Victim",
    "cluster_after_evictions",
    "evicted_pod",
    "plan_preempt",
    "setting",
    "solve_setting",
]
