"""What one bad object costs: the input's per-object problems turned into pods left pending,
as the scheduler leaves them (docs/semantics.md, "Messy clusters").

Why: a real cluster is never all valid. A pod names a template someone deleted, a claim's CEL
does not compile, a DeviceClass was renamed, a Kueue job waits behind its scheduling gate. The
API server accepts such objects and the scheduler simply leaves the pods that depend on them
pending — the rest of the cluster schedules. Refusing the whole input for one of them would
stop every answer (`plan`, `check`, the `--watch` console) for everyone.

`triage` takes the validation's problems (`cel.checks.validate_all`) and returns a cluster the
planners can read whole: each problem is kept with the object it names, and costs exactly what
depends on that object —

* a pending Pod with a problem, or depending on an object with one (its ResourceClaim,
  ResourceClaimTemplate, the DeviceClass of one of them, its PriorityClass, its PodGroup or
  that group's Workload), is *held*: not planned, listed with that problem as its reason
  (`Cluster.held`);
* an unallocated claim or template with a problem, a DeviceClass, PriorityClass, PodGroup or
  Workload with one, is left out, and holds what depends on it;
* an allocated claim keeps its allocation (the devices are taken whatever its spec says), a
  bound Pod its node resources (its broken references are dropped from a copy): a warning;
* a ResourceSlice with a problem, or one that could not be read, takes its pool's generation
  out of the plan (a partial pool would be an incomplete one): its slices become device-free
  stand-ins (`planning.leftpools`), so the pool is an invalid one the pods it would have served
  name; a DeviceTaintRule, PodDisruptionBudget, Namespace or Node with one is left out
  — each a warning saying what the plan then assumes.

It also holds what the scheduler skips although it is valid: a pod with `spec.schedulingGates`
(unless `ignore_scheduling_gates`), and a pod bound by `spec.nodeName` whose claims were never
allocated (upstream never allocates for a pod that bypassed the scheduler; the kubelet will not
start it). A problem naming no object of the input is fatal, as before.

Every warning names the object and the field, once per problem; the objects are never
modified (a bound pod's copy is a new object).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from pydantic import ValidationError

from ..api.cluster import Cluster, HeldPod
from ..api.load import Unread
from ..api.models import (
    DeviceTaintRule,
    Node,
    Pod,
    PriorityClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    TypeMeta,
)
from ..api.validate import BUILTIN_PRIORITY_CLASSES, error_ref
from ..errors import CelError, InputError
from ..gates import FeatureGates
from ..problem.pods import pod_claims
from ..problem.resources import holds_node
from ..problem.scheduling import default_priority_class
from ..reasons import Reason
from .fields import unmodelled_field_warnings
from .job import Unit
from .leftpools import not_valid, stand_in, unread_stand_in, with_pool
from .resolve import pending

C = TypeVar("C", bound=Cluster)

Key = tuple[str, str]

GATES_FLAG = "--ignore-scheduling-gates"


@dataclass
class Triaged(Generic[C]):
    """The cluster the planners read (`cluster`, with `held` pods), the warnings to print once,
    and the problems that name no object (fatal: the caller refuses the input)."""

    cluster: C
    warnings: list[str] = field(default_factory=list)
    fatal: list[InputError] = field(default_factory=list)


def _said(errors: Sequence[InputError]) -> str:
    """An object's problems as one reason: `field: reason; field: reason`."""
    return "; ".join(f"{e.field}: {e.reason}" if e.field else e.reason for e in errors)


def _names(pods: Iterable[str], limit: int = 5) -> str:
    names = list(pods)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _allocated(claim: ResourceClaim) -> bool:
    return claim.status is not None and claim.status.allocation is not None


def _classes_of(obj: ResourceClaim | ResourceClaimTemplate) -> list[str]:
    devices = obj.spec.devices if isinstance(obj, ResourceClaim) else obj.spec.spec.devices
    out: list[str] = []
    for req in devices.requests:
        if req.exactly is not None and req.exactly.device_class_name:
            out.append(req.exactly.device_class_name)
        out.extend(sub.device_class_name for sub in req.first_available or [] if sub.device_class_name)
    return out


class _Triage:
    """One triage: the problems by object, then the cascade from classes to pods."""

    def __init__(self, cluster: Cluster, errors: Sequence[InputError]) -> None:
        self.cluster = cluster
        # by the name errors give them (none to find in a valid input: not worked out)
        # (a nameless object is not one to hold or leave out: its problem is fatal, as the
        # loader's for one without metadata — docs/semantics.md, "Messy clusters: what one bad
        # object costs (issue #39)")
        by_ref = {error_ref(o): o for o in cluster.objects() if o.metadata.name} if errors else {}
        self.problems: dict[int, list[InputError]] = {}
        self.fatal: list[InputError] = []
        for e in map(self.unread_named, errors):
            obj = by_ref.get(e.obj)
            if obj is None:
                self.fatal.append(e)
            else:
                self.problems.setdefault(id(obj), []).append(e)
        self.warnings: list[str] = []

    def unread_named(self, error: InputError) -> InputError:
        """`error` with "X not found in the input" said as what it is when X is an object of
        the input that could not be read (`Cluster.unread`): the true cause."""
        reason = error.reason
        for u in self.cluster.unread:
            why = f"{u.ref} could not be read ({u.reason})"
            for missing in (f"{u.ref} not found in the input", f"{u.kind} {u.name!r} not found in the input"):
                # a near name's hint (`strict.did_you_mean`) is no answer: the object is there
                marked = reason.replace(missing, why + _HINT_MARK)
                reason = _HINT_AFTER.sub("", marked).replace(_HINT_MARK, "")
        if reason == error.reason:
            return error
        return InputError(reason, obj=error.obj, field=error.field, source=error.source)

    def own(self, obj: TypeMeta) -> list[InputError]:
        return self.problems.get(id(obj), [])

    def warn(self, obj: TypeMeta, consequence: str) -> None:
        """One warning per problem of `obj`, each saying what it costs."""
        for e in self.own(obj):
            self.warnings.append(f"{e.message}; {consequence}")


def name_unread(cluster: Cluster, errors: Sequence[InputError]) -> list[InputError]:
    """`errors` with "X not found in the input" said as "X could not be read (why)" where X is
    an object of the input that could not be read (`Cluster.unread`): the true cause, as
    triage says it (`validate` lists these beside the unread objects' own errors)."""
    t = _Triage(cluster, [])
    return [t.unread_named(e) for e in errors]


_HINT_MARK = "\x00"
"""Marks the end of a "could not be read" put in place of a "not found" (`unread_named`)."""
_HINT_AFTER = re.compile(_HINT_MARK + r'; did you mean "[^"]*"\?')


@dataclass(frozen=True)
class _Why:
    """Why an object is left out: the object whose problem it is (`root`, the one warning that
    names the pods it holds) and the reason, as the pods that depend on it will read it."""

    root: str
    reason: str


def triage(
    cluster: C,
    errors: Sequence[InputError],
    gates: FeatureGates | None = None,
    *,
    ignore_scheduling_gates: bool = False,
) -> Triaged[C]:
    """The cluster with what `errors` break held or left out (module docstring). `cluster` is
    not modified; the result is a copy of the same type (a `SourcedCluster` keeps its files)."""
    gates = gates or FeatureGates()
    t = _Triage(cluster, errors)

    def own(obj: TypeMeta) -> _Why | None:
        problems = t.own(obj)
        return _Why(obj.ref, f"{obj.ref} is not valid: {_said(problems)}") if problems else None

    why_class = {name: why for name, c in cluster.classes.items() if (why := own(c)) is not None}

    def claim_why(obj: ResourceClaim | ResourceClaimTemplate) -> _Why | None:
        mine = own(obj)
        if mine is not None:
            return mine
        for name in _classes_of(obj):
            if name in why_class:
                return _Why(why_class[name].root, f"{obj.ref}: {why_class[name].reason}")
        return None

    # Claims and templates: their own problems, or a class of theirs left out; an allocated
    # claim keeps its allocation whatever its spec says.
    why_claim: dict[Key, _Why] = {}
    unplaceable: dict[Key, _Why] = {}
    """Allocated claims kept whose node selector cannot be read: what uses them is held."""
    held_claims: dict[Key, HeldPod] = dict(cluster.held_claims)
    deleting: dict[Key, _Why] = {}
    """Allocated claims being deleted: a pending pod that uses them waits."""
    for key, claim in cluster.claims.items():
        why = claim_why(claim)
        if why is None and claim.metadata.deletion_timestamp is not None:
            # upstream's DynamicResources (PreEnqueue, PreFilter): `resourceclaim "x" is being
            # deleted`, the pod waits; an allocated one keeps its devices until it is gone
            why = _Why(claim.ref, f"{claim.ref} is being deleted (metadata.deletionTimestamp): the pod waits")
            if _allocated(claim):
                deleting[key] = why  # a bound pod that uses it is as it was: only pending pods wait
                continue
        if why is None:
            continue
        if _allocated(claim):
            if any(e.field.startswith("status.allocation.nodeSelector") for e in t.own(claim)):
                unplaceable[key] = why  # where its devices are cannot be told: no pod placed with it
                t.warn(claim, "its allocation is kept; a pending pod that uses it is left pending")
            else:
                t.warn(claim, "its allocation is kept as the cluster has it")
            continue
        why_claim[key] = why
        held_claims[key] = HeldPod(None, why.reason, claim=claim)
    why_template = {key: why for key, tpl in cluster.templates.items() if (why := claim_why(tpl)) is not None}
    why_priority = {
        name: why
        for name, pc in cluster.priority_classes.items()
        if (why := own(pc)) is not None and not _second_default_only(t.own(pc))
    }
    why_workload = {key: why for key, w in cluster.workloads.items() if (why := own(w)) is not None}
    why_group: dict[Key, _Why] = {}
    for key, group in cluster.pod_groups.items():
        ns = key[0]
        found = own(group)
        for entry in group.spec.resource_claims:
            found = (
                found
                or why_claim.get((ns, entry.resource_claim_name or ""))
                or why_template.get((ns, entry.resource_claim_template_name or ""))
            )
        ref = group.spec.workload_ref
        if found is None and ref is not None and ref.workload_name:
            found = why_workload.get((ns, ref.workload_name))
        if found is not None:
            why_group[key] = (
                found if found.root == group.ref else _Why(found.root, f"{group.ref}: {found.reason}")
            )
    refs = _Refs({**unplaceable, **why_claim}, why_template, why_priority, why_group, cluster.claims.keys())
    waiting = replace(refs, claims={**deleting, **refs.claims}) if deleting else refs
    """What a pending pod reads: `refs` and the allocated claims being deleted."""

    # Pods: held when pending, a stripped copy with a warning when bound.
    pods: dict[Key, Pod] = {}
    held: dict[Key, HeldPod] = dict(cluster.held)
    costs: dict[str, list[str]] = {}
    """A root problem's object -> the pending pods it holds (for its warning)."""
    left_nodes = {u.name for u in cluster.unread if u.kind == "Node"} | {
        name for name, n in cluster.nodes.items() if t.own(n) and not _taint_effects_only(t.own(n))
    }
    """Nodes the plan leaves out for a problem (their warnings say which)."""
    for key, pod in cluster.pods.items():
        mine = t.own(pod)
        depends = (waiting if pending(pod) else refs).of(pod)
        if pending(pod):
            if mine:
                held[key] = HeldPod(pod, _said(mine))
                t.warn(pod, "the pod is left pending; the rest is planned")
            elif depends is not None:
                held[key] = HeldPod(pod, depends.reason)
                costs.setdefault(depends.root, []).append(pod.namespaced_name)
            elif pod.metadata.deletion_timestamp is not None:  # upstream's skipPodSchedule
                held[key] = HeldPod(
                    pod, "the pod is being deleted (metadata.deletionTimestamp): the scheduler skips it"
                )
            elif pod.spec.scheduling_gates and not ignore_scheduling_gates:
                names = ", ".join(g.name for g in pod.spec.scheduling_gates)
                held[key] = HeldPod(
                    pod, f"waiting for scheduling gates {names} (spec.schedulingGates; {GATES_FLAG} plans it)"
                )
            else:
                pods[key] = pod
            continue
        if mine or depends is not None:
            bound = f"the pod is bound to {pod.spec.node_name}: its node resources are counted"
            t.warn(pod, f"{bound}, its broken references left out")
            if not mine and depends is not None:
                t.warnings.append(f"{pod.ref}: {depends.reason}; {bound}, its broken references left out")
            pod = _strip(pod, cluster, refs)
        pods[key] = pod
        if not holds_node(pod):  # finished: it holds nothing, nothing of it is planned
            continue
        if pod.spec.node_name in left_nodes:  # its Node is in the input but left out
            t.warnings.append(
                f"{pod.ref}: spec.nodeName: bound to {pod.spec.node_name}, whose Node is left out for a "
                "problem (its warning says which): nothing is planned there; its claims keep their devices"
            )
        elif cluster.nodes and pod.spec.node_name not in cluster.nodes:  # its node was deleted
            t.warnings.append(
                f"{pod.ref}: spec.nodeName: bound to {pod.spec.node_name}, which is not among the input's "
                "Nodes (deleted?): nothing is planned there; its claims keep their devices"
            )
        unallocated = _never_allocated(cluster, pod, gates)
        if unallocated:
            bypass = (
                f"bound by nodeName to {pod.spec.node_name} without allocated claims "
                f"({_names(unallocated)}): the kubelet will not start it"
            )
            held[key] = HeldPod(
                pod, f"{bypass} (the scheduler never allocates claims for a pod that bypassed it)"
            )
            t.warnings.append(f"{pod.ref}: spec.nodeName: {bypass}; not planned")

    unread_claims: dict[Key, ResourceClaim] = {}
    """Allocated claims that could not be read, as stand-ins of their status: what they hold."""
    # Objects that could not be read: a pending pod is held (a Pod of its name, nothing else
    # known), anything else is left out, and what names it is held by its own problem above.
    for u in cluster.unread:
        consequence = _LEFT_OUT.get(u.kind, "left out of the plan")
        if u.kind == "Pod" and not u.node_name:
            stub = Pod.model_validate({"metadata": {"name": u.name, "namespace": u.namespace}})
            held.setdefault(
                (u.namespace, u.name), HeldPod(stub, f"the pod could not be read: {u.reason}", stub=True)
            )
            consequence = "the pod is left pending; the rest is planned"
        elif u.kind == "Pod":
            consequence = f"the pod is bound to {u.node_name}: its node resources are not counted"
        elif u.kind == "ResourceClaim" and (allocated := _allocation_of(u)) is not None:
            unread_claims[(u.namespace, u.name)] = allocated
            consequence = "its allocation is read from its status alone: the devices it names stay in use"
        elif u.kind == "ResourceClaim":  # named by `explain --claim`, `allocate --claim`: its reason
            stub_claim = ResourceClaim.model_validate(
                {
                    "metadata": {"name": u.name, "namespace": u.namespace},
                    "spec": {"devices": {"requests": []}},
                }
            )
            held_claims.setdefault(
                (u.namespace, u.name),
                HeldPod(None, f"the claim could not be read: {u.reason}", stub=True, claim=stub_claim),
            )
        elif u.kind == "ResourceSlice":
            continue  # its pool's warning, below
        t.warnings.extend(f"{e.message}; {consequence}" for e in u.errors)

    # The problems that hold pods, each once, with the pods it costs.
    for obj in [
        *cluster.classes.values(),
        *(c for c in cluster.claims.values() if not _allocated(c)),
        *cluster.templates.values(),
        *cluster.priority_classes.values(),
        *cluster.pod_groups.values(),
        *cluster.workloads.values(),
    ]:
        if isinstance(obj, PriorityClass) and t.own(obj) and obj.metadata.name not in why_priority:
            t.warn(obj, _second_default(cluster))
            continue
        t.warn(obj, _holding(costs.get(obj.ref, [])))

    # Objects left out of the plan: pools of bad slices, bad nodes, rules, budgets, namespaces.
    slices = _left_out_pools(cluster, t)
    t.warnings.extend(_unpublished_devices(cluster, slices))
    for node in cluster.nodes.values():
        t.warn(node, _node_consequence(t.own(node)))
    for rule in cluster.taint_rules.values():
        taints_only = _taint_effects_only(t.own(rule))
        t.warn(rule, _TAINT_KEPT["DeviceTaintRule"] if taints_only else _LEFT_OUT["DeviceTaintRule"])
    for pdb in cluster.pdbs.values():
        t.warn(pdb, _LEFT_OUT["PodDisruptionBudget"])
    for nso in cluster.namespaces.values():
        t.warn(nso, _LEFT_OUT["Namespace"])

    def keep(obj: TypeMeta) -> bool:
        return not t.own(obj) or (isinstance(obj, Node | DeviceTaintRule) and _taint_effects_only(t.own(obj)))

    out = replace(
        cluster,
        slices=slices,
        classes={k: v for k, v in cluster.classes.items() if k not in why_class},
        claims={**{k: v for k, v in cluster.claims.items() if k not in why_claim}, **unread_claims},
        templates={k: v for k, v in cluster.templates.items() if k not in why_template},
        pods=pods,
        nodes={k: v for k, v in cluster.nodes.items() if keep(v)},
        taint_rules={k: v for k, v in cluster.taint_rules.items() if keep(v)},
        priority_classes={k: v for k, v in cluster.priority_classes.items() if k not in why_priority},
        pod_groups={k: v for k, v in cluster.pod_groups.items() if k not in why_group},
        workloads={k: v for k, v in cluster.workloads.items() if k not in why_workload},
        namespaces={k: v for k, v in cluster.namespaces.items() if keep(v)},
        pdbs={k: v for k, v in cluster.pdbs.items() if keep(v)},
        warnings=list(cluster.warnings),
        held=held,
        held_claims=held_claims,
        triaged=True,
    )
    kept = {id(o) for o in out.objects() if not (isinstance(o, ResourceSlice) and o.left_out is not None)}
    out.left_out = [*cluster.left_out, *(o for o in cluster.objects() if id(o) not in kept)]
    planned = [p for key, p in pods.items() if key not in held and pending(p)]
    return Triaged(out, [*t.warnings, *unmodelled_field_warnings(planned)], t.fatal)


@dataclass(frozen=True)
class _Refs:
    """The objects left out that a pod may name, by kind."""

    claims: dict[Key, _Why]
    templates: dict[Key, _Why]
    priorities: dict[str, _Why]
    groups: dict[Key, _Why]
    cluster_claims: Collection[Key] = ()
    """Every claim of the input (a pod's claim made from a template is read, not the template)."""

    def of(self, pod: Pod) -> _Why | None:
        """The first object the pod depends on that is left out, with the pod's reason."""
        if not (self.claims or self.templates or self.priorities or self.groups):
            return None  # nothing is left out (a valid input)
        ns = pod.metadata.ns
        for i, entry in enumerate(pod.spec.resource_claims):
            where = f"spec.resourceClaims[{i}]"
            found = self.claims.get((ns, entry.resource_claim_name or ""))
            made = None
            for status in pod.status.resource_claim_statuses if pod.status else []:
                if (
                    status.name == entry.name
                    and status.resource_claim_name
                    and entry.resource_claim_template_name
                ):
                    made = (ns, status.resource_claim_name)
            if made is not None and (made in self.claims or made in self.cluster_claims):
                # the claim made from the template is what upstream reads: its problem, not the template's
                found = found or self.claims.get(made)
            elif found is None:
                found = self.templates.get((ns, entry.resource_claim_template_name or ""))
            if found is not None:
                return _Why(found.root, f"{where}: {found.reason}")
        name = pod.spec.priority_class_name
        if pod.spec.priority is None and name and name in self.priorities:
            return _Why(self.priorities[name].root, f"spec.priorityClassName: {self.priorities[name].reason}")
        group = pod.spec.scheduling_group
        if group is not None and (ns, group.pod_group_name) in self.groups:
            why = self.groups[(ns, group.pod_group_name)]
            return _Why(why.root, f"spec.schedulingGroup: {why.reason}")
        return None

    def usable_claim(self, cluster: Cluster, ns: str, name: str) -> bool:
        return (ns, name) in cluster.claims and (ns, name) not in self.claims

    def usable_template(self, cluster: Cluster, ns: str, name: str) -> bool:
        return (ns, name) in cluster.templates and (ns, name) not in self.templates


def triaged(cluster: C, gates: FeatureGates | None = None, *, ignore_scheduling_gates: bool = False) -> C:
    """`cluster` as the planners read it: as given when it was triaged already (`Cluster.triaged`:
    the CLI and `dra_solver.load(strict=False)` triage with the validation's problems), else
    triaged without problems — the pods the scheduler skips (gated, bound without allocated
    claims) held, their warnings added to `cluster.warnings` of the copy."""
    if cluster.triaged:
        return cluster
    done = triage(cluster, [], gates, ignore_scheduling_gates=ignore_scheduling_gates)
    if not done.cluster.held and not done.cluster.left_out:
        return cluster  # nothing skipped: the cluster itself (`Planner.cluster is cluster`)
    done.cluster.warnings.extend(done.warnings)
    return done.cluster


def held_for_cel_error(units: Sequence[Unit], error: CelError) -> tuple[list[Unit], list[HeldPod]] | None:
    """`units` without those whose claim `error` names (a CEL runtime error met where the search
    reached a device), and their pods held with it as the reason — or None when it names no
    claim of theirs. Why: upstream's error fails that pod's scheduling attempt only (its Filter
    returns an error status, the pod is retried later); every other pod still schedules. The
    planners raise it for the whole call ("CEL errors: lazy, as upstream"), so the plan runs
    again without the pods it costs (`pipeline.plan`)."""
    ref = error.claim  # a fact of the error, not read out of its words
    if not ref:
        return None
    hit = [u for u in units if any(c.namespaced_name == ref for c in u.claims)]
    if not hit:
        return None
    reason = str(error).replace("\nhint: ", "; hint: ")
    held: list[HeldPod] = []
    for u in hit:
        for m in u.members:
            claim = next((c for c in u.claims if c.namespaced_name == ref), None)
            held.append(HeldPod(m.pod, reason) if m.pod is not None else HeldPod(None, reason, claim=claim))
    return [u for u in units if not any(u is h for h in hit)], held


def split_held(
    cluster: Cluster, pods: Sequence[object] | None
) -> tuple[Sequence[object] | None, list[HeldPod]]:
    """The pods a plan was asked for, without the held ones, and the held ones it must list:
    every held pod when `pods` is None (plan everything), else those `pods` names (by name or
    as the Pod object)."""
    if pods is None:
        if not cluster.pods and not cluster.held:  # no Pods: each claim is a pod (`resolve_units`)
            return None, list(cluster.held_claims.values())
        return None, list(cluster.held.values())
    if not cluster.held:
        return pods, []
    rest: list[object] = []
    held: list[HeldPod] = []
    for item in pods:
        key: Key | None = None
        if isinstance(item, Pod):
            key = (item.metadata.ns, item.metadata.name)
        elif isinstance(item, str):
            try:
                found = cluster.pod(item)
            except InputError:
                found = None
            key = (found.metadata.ns, found.metadata.name) if found is not None else None
        if key is not None and key in cluster.held:
            held.append(cluster.held[key])
        else:
            rest.append(item)
    return rest, held


def _left_out_pools(cluster: Cluster, t: _Triage) -> list[ResourceSlice]:
    """The slices the plan reads: those of a pool generation with a slice that has a problem
    or could not be read replaced by device-free stand-ins (`planning.leftpools`), so that the
    pool is an invalid one, named where it would have served; one warning per problem."""

    def problem(s: ResourceSlice) -> Reason:
        return not_valid(s, _said(t.own(s))) if t.own(s) else with_pool(s)

    bad = {_gen(s) for s in cluster.slices if t.own(s) and not _taint_effects_only(t.own(s))}
    unread: list[tuple[Unread, ResourceSlice]] = []
    for u in cluster.unread:
        if u.kind != "ResourceSlice":
            continue
        found = unread_stand_in(u)
        if found is not None:
            unread.append((u, found))
            bad.add(_gen(found))
        else:  # not even its pool can be read
            t.warnings.extend(f"{e.message}; left out of the plan" for e in u.errors)
    newest: dict[tuple[str, str], int] = {}
    for driver, pool, gen in [*map(_gen, cluster.slices), *(_gen(x) for _, x in unread)]:
        newest[(driver, pool)] = max(newest.get((driver, pool), gen), gen)

    def left(key: tuple[str, str, int]) -> str:
        driver, pool, gen = key
        top = newest[(driver, pool)]
        if gen < top:
            return (
                f"pool {driver}/{pool} generation {gen} is left out "
                f"(generation {top}, the newest, is planned)"
            )
        return (
            f"pool {driver}/{pool} is left out of the plan (none of its devices is used; the pods "
            "it would serve name it)"
        )

    for s in cluster.slices:
        taints_only = _gen(s) not in bad
        t.warn(s, _TAINT_KEPT["ResourceSlice"] if taints_only else left(_gen(s)))
    for u, x in unread:
        t.warnings.extend(f"{e.message}; {left(_gen(x))}" for e in u.errors)
    kept = [stand_in(s, problem(s)) if _gen(s) in bad else s for s in cluster.slices]
    return [*kept, *(x for _, x in unread)]


def _unpublished_devices(cluster: Cluster, slices: Sequence[ResourceSlice]) -> list[str]:
    """A warning for each allocated device its pool's slices do not publish (a driver that
    republished its devices under other names, or a device removed while allocated): the plan
    cannot hold a device it does not know, as upstream's scheduler cannot, so whatever took its
    place is offered again — said, not silent (`check` reports it as `unknown-device`). Only
    pools the input has slices of, and not left out (`_left_out_pools`): a dump without a
    driver's slices says nothing about its devices."""
    results = [
        (claim, i, r)
        for claim in cluster.allocated_claims()
        if claim.status is not None and claim.status.allocation is not None
        for i, r in enumerate(claim.status.allocation.devices.results)
    ]
    wanted = {(r.driver, r.pool) for _, _, r in results}
    published: dict[tuple[str, str], set[str]] = {}
    left: set[tuple[str, str]] = set()
    for s in slices:
        key = (s.spec.driver, s.spec.pool.name)
        if key not in wanted:
            continue
        if s.left_out is not None:
            left.add(key)
        else:
            published.setdefault(key, set()).update(d.name for d in s.spec.devices)
    return [
        f"{claim.ref}: status.allocation.devices.results[{i}]: device {r.driver}/{r.pool}/{r.device} "
        "is published by no ResourceSlice of its pool (the driver republished its devices?): the "
        "plan cannot hold it, as the scheduler cannot"
        for claim, i, r in results
        if (r.driver, r.pool) in published
        and (r.driver, r.pool) not in left
        and r.device not in published[(r.driver, r.pool)]
    ]


_LEFT_OUT = {
    "Node": "the node is left out of the plan",
    "DeviceTaintRule": "its taints are not applied: the devices it selects count as untainted",
    "PodDisruptionBudget": "the budget is not counted (plan --preempt may evict what it protects)",
    "Namespace": "the Namespace is left out (its labels are not read)",
}
"""What leaving out an object of these kinds costs, said in its warning (read with a problem,
or not read at all: the same consequence)."""


_TAINT_EFFECT = re.compile(r"^spec\.(taints\[\d+\]|devices\[\d+\]\.taints\[\d+\]|taint)\.(effect|key)$")
"""The field of a taint's effect (or key): a Node's, a slice's device's, a DeviceTaintRule's."""

_TAINT_KEPT = {
    "ResourceSlice": "the taint counts as blocking: only requests that tolerate it get the device",
    "DeviceTaintRule": (
        "the taint counts as blocking: only requests that tolerate it get the devices it selects"
    ),
}


def _taint_effects_only(problems: Sequence[InputError]) -> bool:
    """Whether an object's problems are all unknown or missing taint effects, or missing taint
    keys (a Node's, a slice's device's, a DeviceTaintRule's): the object is kept, each such taint
    blocking what does not tolerate it (`problem.taints.tolerated`), not the whole node, pool or
    rule left out — an effect a newer API server knows, or a taint written without its effect,
    costs only what does not tolerate it."""
    return bool(problems) and all(_TAINT_EFFECT.match(e.field) for e in problems)


def _second_default_only(problems: Sequence[InputError]) -> bool:
    """Whether a PriorityClass's problems are all that it is a second global default: it is
    kept (a pod naming it has its value), the default read as upstream's admission reads it."""
    return all(e.field == "globalDefault" for e in problems)


def _second_default(cluster: Cluster) -> str:
    pc = default_priority_class(cluster)
    assert pc is not None  # there are two
    return (
        f"it is kept; a pod without spec.priority or spec.priorityClassName gets the lowest global "
        f"default's value, {pc.value} (PriorityClass {pc.metadata.name}), as upstream's admission picks"
    )


def _node_consequence(problems: Sequence[InputError]) -> str:
    if problems and _taint_effects_only(problems):
        return "the taint counts as blocking: only pods that tolerate it are placed on the node"
    return _LEFT_OUT["Node"]


def _gen(s: ResourceSlice) -> tuple[str, str, int]:
    return (s.spec.driver, s.spec.pool.name, s.spec.pool.generation)


def _holding(pods: list[str]) -> str:
    if not pods:
        return "it is left out of the plan"
    many = "s" if len(pods) > 1 else ""
    verb = "depend on it and stay" if many else "depends on it and stays"
    return f"left out of the plan; pending pod{many} {_names(pods)} {verb} pending"


def _allocation_of(u: Unread) -> ResourceClaim | None:
    """The stand-in of an unreadable claim whose `status.allocation` can be read: that status
    alone (allocation, reservedFor) on an empty spec. Why: the cluster has the claim allocated,
    and leaving it out would offer its devices to the plan as free (a double booking). None when
    the claim is not allocated or its allocation cannot be read either (then nothing is known)."""
    status = u.doc.get("status")
    if not isinstance(status, Mapping) or not isinstance(status.get("allocation"), Mapping):
        return None
    doc = {
        "metadata": {"name": u.name, "namespace": u.namespace},
        "spec": {"devices": {"requests": []}},
        "status": {"allocation": status["allocation"], "reservedFor": status.get("reservedFor") or []},
    }
    try:
        claim = ResourceClaim.model_validate(doc)
    except ValidationError:
        return None
    claim._unread = True
    return claim


def _strip(pod: Pod, cluster: Cluster, refs: _Refs) -> Pod:
    """A copy of a bound pod without the references that name nothing usable: missing or
    broken claims and templates, a missing PriorityClass (its `spec.priority` stays), a missing
    or broken PodGroup. What it holds on its node (cpu, memory, pod slot) stays counted."""
    ns = pod.metadata.ns
    unread = {(u.namespace, u.name) for u in cluster.unread if u.kind == "ResourceClaim"}
    made = {
        st.name: st.resource_claim_name for st in (pod.status.resource_claim_statuses if pod.status else [])
    }

    def usable_made(entry: str, template: str) -> bool:
        """A template entry: its made claim when the status records one the input holds (or
        could not read), else the template."""
        name = made.get(entry)
        if name and (ns, name) in cluster.claims:
            return refs.usable_claim(cluster, ns, name)
        if name and (ns, name) in unread:
            return False
        return refs.usable_template(cluster, ns, template)

    entries = [
        e
        for e in pod.spec.resource_claims
        if (e.resource_claim_name and refs.usable_claim(cluster, ns, e.resource_claim_name))
        or (e.resource_claim_template_name and usable_made(e.name, e.resource_claim_template_name))
    ]
    update: dict[str, object] = {"resource_claims": entries}
    name = pod.spec.priority_class_name
    if name and name not in cluster.priority_classes and name not in BUILTIN_PRIORITY_CLASSES:
        update["priority_class_name"] = None
    group = pod.spec.scheduling_group
    if group is not None and (
        (ns, group.pod_group_name) not in cluster.pod_groups or (ns, group.pod_group_name) in refs.groups
    ):
        update["scheduling_group"] = None
    return pod.model_copy(update={"spec": pod.spec.model_copy(update=update)})


def _never_allocated(cluster: Cluster, pod: Pod, gates: FeatureGates) -> list[str]:
    """The claims of a bound pod that hold no allocation (`namespace/name`)."""
    try:
        claims = pod_claims(cluster, pod, gates)
    except InputError:
        return []
    return [c.namespaced_name for c in claims if not _allocated(c)]


__all__ = [
    "GATES_FLAG",
    "HeldPod",
    "Triaged",
    "held_for_cel_error",
    "name_unread",
    "split_held",
    "triage",
    "triaged",
]
