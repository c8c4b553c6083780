"""`explain`: why a claim (or a pod's claims) cannot be allocated, per node, in words.

Why a module beside `solver.reference.reasons`: that one explains one precomputed Problem in one line
(what `allocate` and `plan` print). A user asking "why not?" needs the detail behind it, per
node, with nodes that fail for the same reason grouped: the node constraints (nodeSelector,
affinity, taints, unschedulable: `problem.scheduling`), node resources (`solver.problem.demand`), and
per request how many devices the node has, how many the class and each selector keep (the
first selector that rejects devices is named with an example device), which matching devices
are held and by which claims, the capacity left on shared devices after rounding, devices
whose taints are not tolerated, and match/distinct constraints with the values available.

Where several rules interact (claims that fit alone but not together, constraints), a
*minimal blocking set* is found with CP-SAT assumptions over rule groups (the claims and the
claims' constraints, `solver.explain.blocking`): irreducible, dropping any one group of it makes the
rest fit. (Minimal by inclusion, not necessarily the smallest.)

The smallest change that makes it fit, when one is found by trying it: fewer devices for a
request (count = the usable devices), an allocated claim released (each holder of a matching
device, in order), or a node of a template (`solver.api.templates`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..api.cluster import Cluster
from ..api.models import Pod, ResourceClaim
from ..api.templates import NodeTemplate, with_copies
from ..cel import EvalCache, compile_expression
from ..deadline import Deadline, fired, passed
from ..errors import CelError, DRASolverError, InputError, SearchAborted
from ..gates import FeatureGates
from ..inventory import Pools, visible_devices
from ..pipeline import plan
from ..planners.aggregated.classes import LocalViews, problem_signature
from ..planning.resolve import known_nodes, resolve_claims
from ..planning.snapshot import Snapshot
from ..problem.build import invalid_pool, problem_from_context
from ..problem.capacity import FatalCapacityRequest, amount_words, device_consumption
from ..problem.demand import Needs, NodeBook
from ..problem.devices import BuildContext, build_context, context_from
from ..problem.flat import Problem
from ..problem.leftout import may_serve
from ..problem.nodealloc import FootprintBook
from ..problem.pods import node_conflict, pod_claims
from ..problem.requests import request_specs
from ..problem.scheduling import node_refusal
from ..reasons import Fact, Kind, Reason
from ..reasons.words import WITH_PLAN, alike_names, alike_note, alike_said, gave_up, of_node, say
from ..reference import search
from ..reference.reasons import why_unschedulable
from .blocking import Group, allocation_exists, minimal_blocking_set

STEPS = 200_000
GAVE_UP = gave_up(Reason.of(Kind.SEARCH_GAVE_UP, steps=STEPS))


@dataclass(frozen=True)
class NodeAnswer:
    """One node: whether the claims fit, the dominant reason and the detail lines, as values
    (`solver.reasons`; worded by `reasons.words.say`, the node left out: a line's head names
    it)."""

    node: str | None
    fits: bool
    why: Reason | None = None
    lines: tuple[Reason, ...] = ()
    fixed_by: Reason | None = None
    noted: Reason | None = None
    """A node that fits only by CP-SAT's word: the reference search gave up there."""

    @property
    def reason(self) -> str:
        return "" if self.why is None else say(self.why, where=False)

    @property
    def details(self) -> tuple[str, ...]:
        return tuple(say(d, where=False) for d in self.lines)

    @property
    def fix(self) -> str | None:
        return None if self.fixed_by is None else say(self.fixed_by)

    @property
    def note(self) -> str | None:
        return None if self.noted is None else say(self.noted)

    def alike(self) -> Hashable:
        """What nodes with the same answer share: the values without where they were found
        (`WHERE`: the node, also of the words made where a pool's problem was found)."""
        return (_alike(self.why), tuple(_alike(d) for d in self.lines), self.fixed_by)


@dataclass
class Explanation:
    """Per node why (or that) the subject fits; nodes with the same reason grouped."""

    subject: str
    nodes: list[NodeAnswer] = field(default_factory=list)
    template: str | None = None
    """A node template on whose fresh copy the subject fits, when templates were given."""
    with_plan: list[str] = field(default_factory=list)
    """What `dra-solver plan` does with the subject beside the input's other pending pods
    (`explain(with_plan=True)`): placed where, or why not — the per-node answers above are
    for the subject alone, and a pod that fits alone may still be left out of the plan."""
    held: str | None = None
    """Why no plan considers the pod at all (`Cluster.held`: a problem it depends on, its
    scheduling gates, bound without allocated claims); then there are no per-node answers."""
    cut: str | None = None
    """What the deadline (`--timeout`) left out when it passed (`explain(deadline=)`): the
    nodes not examined, the templates or the plan not tried; None: nothing."""

    @property
    def fits(self) -> list[str | None]:
        return [a.node for a in self.nodes if a.fits]

    def groups(self) -> list[tuple[NodeAnswer, list[str | None], bool]]:
        """Failing nodes grouped by their answers with the node and the names of the places
        found on it taken out (first node's answer as the group's), in order of the first
        node, and whether the group's reasons differ in those names (each its own pool)."""
        out: dict[Hashable, list[NodeAnswer]] = {}
        for a in self.nodes:
            if not a.fits:
                out.setdefault(a.alike(), []).append(a)
        return [(group[0], [a.node for a in group], _names_differ(group)) for group in out.values()]

    def text(self) -> str:
        """The explanation as a user reads it: first what it assumes (the subject alone on the
        cluster as the input has it), then per node, then what the plan does with it."""
        if self.held is not None:
            return f"{self.subject} is not planned: {self.held}"
        lines = [ALONE]
        if self.fits:
            lines.append(f"{self.subject} fits on: {_named(self.fits)}")
        noted: dict[Reason, list[NodeAnswer]] = {}
        for a in self.nodes:
            if a.fits and a.noted is not None:
                noted.setdefault(a.noted, []).append(a)
        for note, group in noted.items():
            nodes = [a.node for a in group]
            where = "on each of them" if nodes == self.fits else f"on {_named(nodes)}"
            lines.append(f"  - {where}: {say(note)}")
        for a, nodes, differ in self.groups():
            head = f"{len(nodes)} node(s) ({_named(nodes)})" if len(nodes) > 1 else f"node {nodes[0]}"
            lines.append(f"{head}: {_said(a.why)}{alike_note(nodes[0], len(nodes)) if differ else ''}")
            lines.extend(f"  - {_said(d)}" for d in a.lines)
            if a.fix:
                lines.append(f"  fix: {a.fix}")
        if self.template:
            lines.append(f"it fits on a new node of template {self.template}")
        lines.extend(self.with_plan)
        if self.cut is not None:
            lines.append(f"cut short by --timeout: {self.cut}; this answer depends on the machine's speed")
        return "\n".join(lines)


ALONE = (
    "alone on the cluster as the input has it (its allocated claims and bound pods hold what "
    "they hold; no other pending pod placed):"
)


def explain(
    cluster: Cluster,
    *,
    claim: str | Sequence[str] | None = None,
    pod: str | Pod | None = None,
    nodes: Sequence[str] | None = None,
    feature_gates: FeatureGates | str | None = None,
    node_templates: Sequence[NodeTemplate] = (),
    with_plan: bool = False,
    deadline: Deadline | None = None,
) -> Explanation:
    """Why `claim` (names; together, all or none) or `pod`'s unallocated claims cannot be
    allocated, on each of `nodes` (default: every node the input knows) — the subject alone on
    the cluster as the input has it. `with_plan`: also plan the input's pending pods (as
    `dra-solver plan` does, default options) and say whether the plan places the subject, and
    if not, why (the pods that take the room where it fits alone).

    `deadline` (`explain --timeout`): looked at before each node, each template and the plan;
    once it has passed the rest is not examined and `Explanation.cut` says what was left out
    — every answer given is whole (a node's search is never cut half way: it could call a
    node that fits full), and the plan is cut as `plan --timeout` cuts it (its checked plan so
    far)."""
    gates = FeatureGates.of(feature_gates)
    if (claim is None) == (pod is None):
        raise InputError("explain needs either a claim or a pod")
    pod_obj: Pod | None = None
    if pod is not None:
        pod_obj = cluster.pod(pod) if isinstance(pod, str) else pod
        held = cluster.held.get((pod_obj.metadata.ns, pod_obj.metadata.name))
        if held is not None:
            return Explanation(f"pod {pod_obj.namespaced_name}", held=held.reason)
        claims = [
            c for c in pod_claims(cluster, pod_obj, gates) if c.status is None or c.status.allocation is None
        ]
        subject = f"pod {pod_obj.namespaced_name}"
    else:
        names = [claim] if isinstance(claim, str) else list(claim or [])
        for name in names:
            held = cluster.held_claim(name)
            if held is not None:
                return Explanation(f"claim {held.name}", held=held.reason)
        claims = resolve_claims(cluster, names)
        subject = "claim " + ", ".join(c.ref.split(" ", 1)[-1] for c in claims)
    # The plan's nodes (`resolve.resolve_nodes`): the Node objects when the input has them — a
    # slice naming a node that is not among them is stale (its node was deleted), and a pod
    # said to fit there would be a pod the plan cannot place — else the slices' nodes.
    known: list[str | None] = list(cluster.nodes or known_nodes(cluster))
    node_list: list[str | None] = list(nodes) if nodes else known or [None]
    run = _Explaining(cluster, claims, pod_obj, gates)
    out = Explanation(subject)
    if not _each_node(run, out, node_list, deadline):
        return out
    if not out.fits and not _templates(run, out, node_templates, deadline):
        return out
    if with_plan:
        if passed(deadline):
            out.cut = "the plan of the other pending pods was not made"
            return out
        refs = [pod_obj.namespaced_name] if pod_obj is not None else [c.namespaced_name for c in claims]
        out.with_plan = _with_plan(cluster, refs, gates, deadline)
        if fired(deadline):
            out.cut = "the plan of the other pending pods is its checked plan so far"
    return out


def _names_differ(group: Sequence[NodeAnswer]) -> bool:
    """Whether a group of nodes' answers (alike with the names of their places taken out)
    differ in those names from the first's (each node its own pool)."""
    first = group[0].why
    return first is not None and any(
        a.why is not None and alike_said(a.why) != alike_said(first) for a in group[1:]
    )


def _each_node(
    run: _Explaining, out: Explanation, nodes: Sequence[str | None], deadline: Deadline | None
) -> bool:
    """Each node's answer into `out`, the deadline looked at before each: False once it
    passed (`out.cut` says how far it got)."""
    for n in nodes:
        if passed(deadline):
            out.cut = f"{len(out.nodes)} of {len(nodes)} nodes examined, the others not"
            return False
        out.nodes.append(run.node(n))
    return True


def _templates(
    run: _Explaining, out: Explanation, templates: Sequence[NodeTemplate], deadline: Deadline | None
) -> bool:
    """The first template on whose fresh copy the subject fits, into `out.template`, the
    deadline looked at before each: False once it passed (`out.cut` says so)."""
    for t in templates:
        if passed(deadline):
            out.cut = "not every node template was tried"
            return False
        grown, copies = with_copies(run.cluster, [t], [1])
        if _Explaining(grown, run.claims, run.pod, run.gates, run.cache).node(copies[0][0]).fits:
            out.template = t.name
            break
    return True


def _with_plan(
    cluster: Cluster, refs: list[str], gates: FeatureGates, deadline: Deadline | None = None
) -> list[str]:
    """What the plan of the input's pending pods does with each of `refs` (a pod, or claims
    planned as pods of their own when the input has no Pods), in lines under `WITH_PLAN`;
    none when the subject is not among the plan's pods (a bound pod, an allocated claim).
    `deadline`: the plan's (`plan(deadline=)`)."""
    try:
        outcome = plan(cluster, feature_gates=gates, deadline=deadline)
    except DRASolverError as exc:
        return [WITH_PLAN, "  " + say(Reason.of(Kind.PLAN_FAILS, why=str(exc)))]
    by_name = {p.name: p for p in outcome.pods}
    found: list[Reason] = []
    for ref in refs:
        p = by_name.get(ref)
        if p is None:
            continue
        if p.placed:
            found.append(Reason.of(Kind.PLAN_PLACES, ref, node=p.node))
        elif p.why is not None:
            found.append(Reason.of(Kind.PLAN_LEAVES, ref, parts=(p.why,)))
        else:
            found.append(Reason.of(Kind.PLAN_LEAVES, ref, words=p.reason))
    if not found:
        return []
    head = Reason.of(Kind.PLAN_COUNT, placed=outcome.placed, pods=len(outcome.pods))
    return [say(head), *("  " + say(r) for r in found)]


class _Explaining:
    """One explanation: what every node shares, computed once.

    Why: at 1,000 nodes the per-node work must not read the whole cluster. Each node's claims
    are precomputed on its local view (`classes.LocalViews`: the pools visible from the node
    and the claims holding their devices — every fact its allocation depends on), the holders
    of devices are indexed once, and the minimal blocking set is found once per abstracted
    Problem (`classes.problem_signature`: nodes with equal signatures accept exactly the same
    sets of claims, so a set minimal on one is minimal on the other)."""

    def __init__(
        self,
        cluster: Cluster,
        claims: list[ResourceClaim],
        pod: Pod | None,
        gates: FeatureGates,
        cache: EvalCache | None = None,
    ) -> None:
        self.cluster, self.claims, self.pod, self.gates = cluster, claims, pod, gates
        self.cache = cache or EvalCache()
        self.views = LocalViews(cluster)
        self.holders = _holders(cluster)
        self.pod_claims = pod_claims(cluster, pod, gates) if pod is not None else []
        self.blocking: dict[Hashable, list[Group] | None] = {}
        self.exists: dict[Hashable, bool | None] = {}

    def local(self, node: str | None, cluster: Cluster | None = None) -> Cluster:
        """`cluster` (default: the run's) as seen from `node`."""
        cluster = cluster or self.cluster
        return self.views.of(cluster, node) if node is not None else cluster

    def fits(
        self, claims: list[ResourceClaim], node: str | None, cluster: Cluster | None = None
    ) -> bool | None:
        """Whether `claims` fit on `node` (`decide`). A what-if, not the subject's own search: a
        CEL runtime error its search meets (a device the subject's search never reached, as
        upstream's would not) answers "does not fit" instead of stopping the explanation
        (docs/semantics.md, "CEL errors: lazy, as upstream")."""
        ctx = build_context(self.local(node, cluster), claims, node, self.gates, self.cache)
        try:
            return self.decide(problem_from_context(ctx, claims))
        except CelError:
            return False

    def decide(self, problem: Problem) -> bool | None:
        """Whether the Problem has an allocation: the reference search's answer, or where it
        gives up (`STEPS`), CP-SAT's (`allocation_exists`, once per `problem_signature`: nodes
        with equal signatures accept the same claims); None when neither can tell."""
        found = _solves(problem)
        if found is not None:
            return found
        key = problem_signature(problem)
        if key not in self.exists:
            self.exists[key] = allocation_exists(problem)
        return self.exists[key]

    def node(self, node: str | None) -> NodeAnswer:
        cluster, pod, claims = self.cluster, self.pod, self.claims
        if pod is not None:
            why = node_refusal(cluster, pod, node) or node_conflict(cluster, pod, self.pod_claims, node)
            if why:
                return NodeAnswer(node, False, Reason.of(Kind.NODE_CONSTRAINTS, parts=(why,)))
            book = NodeBook(cluster, [node], self.gates)
            dra = (
                None if pod.spec.node_name else FootprintBook(cluster, self.gates).footprint(pod)
            )  # KEP-5517
            short = book.refusal(book.variant((Needs.of(pod, dra),), node), node)
            if short:
                return NodeAnswer(node, False, Reason.of(Kind.NODE_RESOURCES, short=short))
        if not claims:
            return NodeAnswer(node, True)
        local = self.local(node)
        ctx = build_context(local, claims, node, self.gates, self.cache)
        problem = problem_from_context(ctx, claims)
        searched = _solves(problem)
        if searched:
            return NodeAnswer(node, True)
        if searched is None:
            exists = self.decide(problem)
            if exists:
                return NodeAnswer(node, True, noted=Reason.of(Kind.SEARCH_GAVE_UP, steps=STEPS))
            if exists is None:
                return NodeAnswer(node, False, Reason.of(Kind.NOT_DECIDED, steps=STEPS))
        details = _request_details(local, ctx, problem, claims, self.holders)
        reason, extra = _dominant(claims, problem, self.blocking_set(problem))
        if len(claims) > 1:  # each claim's own blocker first: the joint set names only one of them
            extra = [*self.each_alone(node), *extra]
        unknown = [
            invalid_pool(p)
            for p in ctx.pools.invalid()
            if p.left_out and may_serve(local, claims, p.driver, self.gates)
        ]
        invalid = self.invalid_cause(ctx, claims)
        if invalid:  # the real cause: the devices are there, in a pool upstream skips
            reason = Reason.of(Kind.INVALID_CAUSE, pools=tuple(of_node(fact, node) for fact in invalid))
        elif unknown:  # a pool left out for a problem: its devices are unknown, it may be the cause
            pools = tuple(of_node(fact, node) for fact in unknown)
            reason = Reason.of(Kind.INVALID_CAUSE, pools=pools, unknown=True)
        fix = _fix(self, node, problem)
        return NodeAnswer(node, False, reason, (*details, *extra), fix)

    def each_alone(self, node: str | None) -> list[Reason]:
        """Per claim, whether it fits on `node` by itself. Why: a minimal blocking set is one
        irreducible set, so of two claims that are each impossible it names one; the other's
        own blocker would stay hidden until the first is fixed."""
        lines = []
        for c in self.claims:
            fits = self.fits([c], node)
            lines.append(
                Reason.of(
                    Kind.ALONE, c.namespaced_name, fits=None if fits is None else int(fits), steps=STEPS
                )
            )
        return lines

    def invalid_cause(self, ctx: BuildContext, claims: list[ResourceClaim]) -> list[Reason]:
        """The invalid pools (`Kind.POOL_INVALID`) whose devices would make the claims
        fit — each alone, else all together — or none: an invalid pool that would not help (other
        drivers, or too few devices) is not the cause, and the reason stays the shortage."""
        bad = ctx.pools.invalid()
        if not bad:
            return []
        for chosen in [*([p] for p in bad), bad] if len(bad) > 1 else [bad]:
            ids = {id(p) for p in chosen}
            pools = Pools([replace(p, invalid=None) if id(p) in ids else p for p in ctx.pools.pools], [])
            grown = context_from(ctx.cluster, ctx.node, pools, ctx.in_use, self.gates, self.cache)
            try:
                helps = self.decide(problem_from_context(grown, claims))
            except CelError:  # a what-if: its CEL error is not the subject's (`fits`)
                helps = False
            if helps:
                return [invalid_pool(p) for p in chosen]
        return []

    def blocking_set(self, problem: Problem) -> list[Group] | None:
        key = problem_signature(problem)
        if key not in self.blocking:
            self.blocking[key] = minimal_blocking_set(problem)
        return self.blocking[key]


def _solves(problem: Problem) -> bool | None:
    """The bounded reference search's answer; None when it gives up."""
    try:
        return search(problem, max_steps=STEPS) is not None
    except SearchAborted:
        return None


def _holders(cluster: Cluster) -> dict[tuple[str, str, str], list[str]]:
    """(driver, pool, device) -> refs of the allocated claims that use it."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for key, c in cluster.claims.items():
        alloc = c.status.allocation if c.status else None
        if alloc is None:
            continue
        for r in alloc.devices.results:
            out.setdefault((r.driver, r.pool, r.device), []).append(f"{key[0]}/{key[1]}")
    return out


def _request_details(
    cluster: Cluster,
    ctx: BuildContext,
    problem: Problem,
    claims: list[ResourceClaim],
    holders: dict[tuple[str, str, str], list[str]],
) -> list[Reason]:
    """Per request: the device funnel (node, class, each selector), static rejections, held
    devices and their holders, capacity left on shared devices."""
    lines: list[Reason] = []
    for ci, claim in enumerate(claims):
        ref = claim.namespaced_name
        for _, _, specs in request_specs(claim, ctx.gates):
            for spec in specs:
                alt = next(a for a in problem.alternatives if a.claim == ci and a.name == spec.name)
                lines.append(_funnel(ref, cluster, ctx, spec, alt, holders))
    return lines


def _funnel(
    ref: str,
    cluster: Cluster,
    ctx: BuildContext,
    spec: Any,
    alt: Any,
    holders: dict[tuple[str, str, str], list[str]],
) -> Reason:
    cls = cluster.classes.get(spec.class_name)
    selectors: list[tuple[str, str]] = []
    if cls is not None:
        selectors += [
            (f"class {spec.class_name} selector", s.cel.expression) for s in cls.spec.selectors if s.cel
        ]
    selectors += [("selector", s.cel.expression) for s in spec.selectors if s.cel]
    devices = list(range(len(ctx.devices)))
    on_node = len(devices)
    skipped = sum(len(visible_devices(p, ctx.node)) for p in ctx.pools.invalid())
    rejecting: list[Reason] = []
    for label, expr in selectors:
        program = compile_expression(expr, expect_bool=True)
        kept: list[int] = []
        dropped: list[int] = []
        for d in devices:
            try:
                ok = ctx.cache.evaluate_bool(program, ctx.views[d])
            except CelError:
                ok = True  # the runtime error is the candidate's (reported by allocate)
            (kept if ok else dropped).append(d)
        if dropped:
            eg = ctx.devices[dropped[0]]
            rejecting.append(
                Reason.of(
                    Kind.SELECTOR,
                    label=label,
                    expression=expr,
                    rejects=len(dropped),
                    example=f"{eg.pool}/{eg.name}",
                    left=len(kept),
                )
            )
        devices = kept
    held = [
        c.device
        for c in alt.candidates
        if not alt.admin and not ctx.devices[c.device].multi and ctx.devices[c.device].busy
    ]
    who: list[str] = []
    for d in held:
        info = ctx.devices[d]
        who += holders.get((info.driver, info.pool, info.name), [])
    return Reason.of(
        Kind.FUNNEL,
        ref,
        request=spec.name,
        count=alt.count if alt.mode == "ExactCount" else "all",
        devices=on_node,
        skipped=skipped,
        selectors=tuple(rejecting),
        rejected=alt.rejected,
        capacity=tuple(_capacity_left(ctx, spec, devices)),
        held=len(held),
        holders=tuple(dict.fromkeys(who)),
        usable=len(alt.candidates) - len(held),
    )


def _capacity_left(ctx: BuildContext, spec: Any, devices: list[int]) -> list[Reason]:
    """Shared devices the request's capacity does not fit: `needs 30Gi, 20Gi left on pool/dev`."""
    out = []
    for d in devices:
        info = ctx.devices[d]
        if not info.multi or not spec.capacity:
            continue
        _, raw = ctx.raw[d]
        try:
            amounts = device_consumption(
                raw.capacity, spec.capacity, fractional=ctx.gates.DRAFractionalCapacityRange
            )
        except FatalCapacityRequest:  # the allocation's own error names it
            continue
        if amounts is None:
            continue
        for name, need in sorted(amounts.items()):
            total = info.capacity.get(name)
            if total is None:
                continue
            left = total - info.in_use.get(name, 0)
            if need > left:
                fmt = info.capacity_format.get(name, "DecimalSI")
                out.append(
                    Reason.of(
                        Kind.CAPACITY_LEFT,
                        needs=amount_words(need, fmt),
                        name=name,
                        left=amount_words(left, fmt),
                        device=f"{info.pool}/{info.name}",
                    )
                )
    return out[:3]


def _dominant(
    claims: list[ResourceClaim], problem: Problem, keep: list[Group] | None
) -> tuple[Reason, list[Reason]]:
    """The one-line reason (`reference.reasons.why_unschedulable`), and for interacting rules the
    minimal blocking set `keep` (`solver.explain.blocking`) in words: not for a single claim that
    cannot be allocated whatever its constraints (nothing interacts)."""
    reason = why_unschedulable(problem)
    if not keep or (len(keep) == 1 and len(claims) == 1):
        return reason, []
    per_claim: dict[int, list[Reason]] = {}  # a claim named once, with every rule of it in the set
    requests: set[int] = set()
    for g in keep:
        c = claims[g.claim]
        rules = per_claim.setdefault(g.claim, [])
        if g.constraint is None:
            requests.add(g.claim)
        else:
            con = c.spec.devices.constraints[g.constraint]
            kind = "matchAttribute" if con.match_attribute else "distinctAttribute"
            attr = con.match_attribute or con.distinct_attribute
            values = _values(problem, problem.claims[g.claim].constraints[g.constraint])
            rules.append(Reason.of(Kind.RULE, rule=kind, attribute=attr, values=values))
    named = tuple(
        Reason.of(
            Kind.BLOCKING_CLAIM, claims[ci].namespaced_name, requests=int(ci in requests), rules=tuple(rules)
        )
        for ci, rules in per_claim.items()
    )
    return reason, [Reason.of(Kind.BLOCKING_SET, claims=named)]


def _values(problem: Problem, constraint: int) -> str:
    """The values the constraint's candidate devices carry (`(missing)` for those that lack it)."""
    seen: set[str] = set()
    for v in problem.constraints[constraint].values.values():
        if v is None:
            seen.add("(missing)")
        else:
            seen.update(str(x[1]) for x in v)
    return ", ".join(sorted(seen)) or "none"


def _fix(run: _Explaining, node: str | None, problem: Problem) -> Reason | None:
    """The smallest change found that makes it fit: fewer devices, then a claim released."""
    claims, cluster = run.claims, run.cluster
    for ci, c in enumerate(claims):
        for ri, req in enumerate(c.spec.devices.requests):
            e = req.exactly
            if e is None or (e.allocation_mode or "ExactCount") != "ExactCount":
                continue
            alt = next((a for a in problem.alternatives if a.claim == ci and a.name == req.name), None)
            if alt is None:
                continue
            usable = sum(
                1
                for x in alt.candidates
                if not problem.devices[x.device].busy or alt.admin or problem.devices[x.device].multi
            )
            if 0 < usable < alt.count:
                fewer = _with_count(c, ri, usable)
                if run.fits([*claims[:ci], fewer, *claims[ci + 1 :]], node):  # a fix only when it surely fits
                    return Reason.of(Kind.FEWER_DEVICES, c.metadata.name, request=req.name, count=usable)
    tried: list[str] = []
    trial: Snapshot | None = None  # each holder released in a layer of its own, then reverted
    for alt in problem.alternatives:
        for cand in alt.candidates:
            d = problem.devices[cand.device]
            for ref in run.holders.get((d.driver, d.pool, d.name), []):
                if ref in tried or len(tried) >= 10:
                    continue
                tried.append(ref)
                ns, name = ref.split("/", 1)
                trial = trial or Snapshot(cluster)
                trial.fork()
                held = trial.cluster.claims[(ns, name)]
                trial.allocate([held.model_copy(update={"status": None})])
                fits = run.fits(claims, node, trial.cluster)
                trial.revert()
                if fits:
                    return Reason.of(Kind.RELEASED, ref)
    return None


def _with_count(claim: ResourceClaim, ri: int, count: int) -> ResourceClaim:
    reqs = list(claim.spec.devices.requests)
    e = reqs[ri].exactly
    assert e is not None
    reqs[ri] = reqs[ri].model_copy(update={"exactly": e.model_copy(update={"count": count})})
    devices = claim.spec.devices.model_copy(update={"requests": reqs})
    return claim.model_copy(update={"spec": claim.spec.model_copy(update={"devices": devices})})


NAMED_NODES = 8
"""At most this many nodes are named in a line of `explain` (then "and K more"): a line per
reason stays readable on a cluster of thousands of nodes."""


def _named(nodes: Sequence[str | None]) -> str:
    """The first `NAMED_NODES` of `nodes`, then how many more."""
    names = ", ".join(map(str, nodes[:NAMED_NODES]))
    return names if len(nodes) <= NAMED_NODES else f"{names} and {len(nodes) - NAMED_NODES} more"


WHERE = ("node", "example", "device")
"""Facts that say where an answer was found (a device as an example, on a node; the node of
words made where a pool's problem was found, `Kind.NODE_NAMED`): nodes whose answers differ
only in them, and in the names of the pools and slices found there (`alike_names`), are one
group, worded with its first node's."""


def _alike(r: Reason | None) -> Reason | None:
    """`r` as the key of its group: without `WHERE`, in it and in the reasons among its facts."""
    return None if r is None else _key(alike_names(r))


def _key(r: Reason) -> Reason:
    facts: list[tuple[str, Fact]] = []
    for k, v in r.facts:
        if k in WHERE:
            continue
        if isinstance(v, Reason):
            v = _key(v)
        elif isinstance(v, tuple) and v and all(isinstance(x, Reason) for x in v):
            v = tuple(_key(x) for x in v if isinstance(x, Reason))
        facts.append((k, v))
    return Reason(r.kind, r.subject, tuple(facts))


def _said(r: Reason | None) -> str:
    """`r`'s words without the node (the line's head names it, or the group's first node's
    words are said of each: a pool's words name its own pool, `Kind.NODE_NAMED`)."""
    return "" if r is None else say(r, where=False)


why = explain
"""The top-level name (`dra_solver.why`): `dra_solver.reference.reasons` is the module of one-line reasons."""

__all__ = ["Explanation", "NodeAnswer", "explain", "why"]
