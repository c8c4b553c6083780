"""One update of a cluster: objects added and removed, validated, applied to a copy.

Why a module of its own: `Planner.update` must refuse a bad update before anything changes
(removing what is not there, adding what is there already, an invalid object, a reference
an update breaks), and must know what an update can have changed, so that it re-plans only
that: the nodes whose devices, devices in use or node resources may differ (`Changes.nodes`),
the pending pods added, removed or whose claims changed (`Changes.pods`), or — for a change
not tied to one node, such as a DeviceClass or a slice without a node name — every node
(`Changes.everywhere`). The input Cluster and objects are never modified: the result is a
new Cluster whose containers are copies (the objects themselves are shared, as they are
never mutated).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..api.cluster import Cluster
from ..api.identity import Identity, identity
from ..api.load import Reader
from ..api.models import (
    CLUSTER_SCOPED,
    ObjectMeta,
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    TypeMeta,
)
from ..cel.checks import validate_all, validate_object
from ..errors import InputError
from ..problem.resources import holds_node

Ref = tuple[str, str | None, str]
"""What `update(remove=...)` names: (kind, namespace, name); the namespace is None (or "")
for cluster-scoped kinds, and None means `default` for namespaced ones."""

KINDS = frozenset(
    {
        "ResourceSlice",
        "DeviceClass",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "Pod",
        "Node",
        "DeviceTaintRule",
        "PriorityClass",
        "PodGroup",
        "Workload",
        "Namespace",
    }
)
"""The kinds a Cluster holds (`api.cluster.Cluster.add`)."""


PodKey = tuple[str, str]


class Naming:
    """Which pods name each object they depend on (claims, claim templates, priority classes,
    PodGroups: `_names`), for one cluster. Why: an update that adds or removes a claim must
    find the pods naming it (they are touched, and must still be valid); reading every pod for
    that costs what the cluster costs, the index what the update changes. Never modified:
    `after` gives the index of the cluster after an update."""

    def __init__(self, by_name: dict[Identity, frozenset[PodKey]]) -> None:
        self._by_name = by_name

    @classmethod
    def of(cls, cluster: Cluster) -> Naming:
        by_name: dict[Identity, set[PodKey]] = {}
        for pod in cluster.pods.values():
            for name in _names(pod):
                by_name.setdefault(name, set()).add(pod.key)
        return cls({k: frozenset(v) for k, v in by_name.items()})

    def pods(self, name: Identity) -> frozenset[PodKey]:
        return self._by_name.get(name, frozenset())

    def after(self, added: Iterable[Pod], removed: Iterable[Pod]) -> Naming:
        by_name = dict(self._by_name)
        for pod, add in [*((p, False) for p in removed), *((p, True) for p in added)]:
            for name in _names(pod):
                now = by_name.get(name, frozenset())
                now = now | {pod.key} if add else now - {pod.key}
                if now:
                    by_name[name] = now
                else:
                    by_name.pop(name, None)
        return Naming(by_name)


@dataclass(frozen=True)
class Changes:
    """An update applied: the cluster after it and what it may have changed."""

    cluster: Cluster
    added: tuple[TypeMeta, ...]
    removed: tuple[TypeMeta, ...]
    nodes: frozenset[str]
    """Nodes whose devices, devices in use or node resources may differ: added or removed
    Nodes, nodes of added or removed node-local slices, of allocated claims' pools, of bound
    pods."""
    pods: frozenset[tuple[str, str]]
    """Pending pods (namespace, name) added, removed, or whose claims or templates changed."""
    everywhere: str | None
    """Why every node may differ (a change tied to no one node), else None."""
    naming: Naming
    """Which pods of `cluster` name which objects."""


def apply_changes(
    cluster: Cluster,
    add: Iterable[TypeMeta | dict[str, Any]],
    remove: Iterable[Ref],
    naming: Naming | None = None,
) -> Changes:
    """`cluster` without the objects `remove` names and with `add` (models, or dicts read
    like file contents), as a new Cluster. Raises InputError naming the object when an update
    is bad: a removed object that is not there (or named twice), an added object whose
    identity is present (remove it in the same update to replace it) or given twice, an
    invalid added object, or a reference the update breaks (a pod left naming a removed claim).
    `naming`: the index of `cluster`'s pods (`Naming`; built when not given).
    Nothing is modified, whatever happens."""
    removed = _removed(cluster, remove)
    gone = {identity(o) for o in removed}
    added = _parsed(add)
    seen: set[Identity] = set()
    for obj in added:
        key = identity(obj)
        if not key[2]:
            raise InputError("required: the object must have a name", obj=obj.ref, field="metadata.name")
        if key in seen:
            raise InputError("added twice in one update", obj=obj.ref)
        seen.add(key)
        if key in cluster._identities and key not in gone:
            raise InputError(
                "already in the cluster: an update adds new objects "
                "(remove it in the same update to replace it)",
                obj=obj.ref,
            )
    _refuse_left_out_pools(cluster, [*removed, *added])
    after = _copy_without(cluster, removed)
    for obj in added:
        after.add(obj)
    before = naming if naming is not None else Naming.of(cluster)
    index = before.after([o for o in added if isinstance(o, Pod)], [o for o in removed if isinstance(o, Pod)])
    touched = _pods_naming(after, added, removed, index)
    _validate(after, added, removed, touched)
    nodes, pods, everywhere = _reach(cluster, after, added, removed, touched)
    return Changes(after, tuple(added), tuple(removed), frozenset(nodes), frozenset(pods), everywhere, index)


def _refuse_left_out_pools(cluster: Cluster, changed: Sequence[TypeMeta]) -> None:
    """A slice of a pool `planning.triage` left out for a problem (its slices stand-ins,
    `planning.leftpools`) cannot be added or removed by an update: the stand-ins would stay
    beside it. Refused (InputError), so that a fresh plan triages the pool again."""
    left = {(s.spec.driver, s.spec.pool.name) for s in cluster.slices if s.left_out is not None}
    for obj in changed:
        if isinstance(obj, ResourceSlice) and (obj.spec.driver, obj.spec.pool.name) in left:
            raise InputError(
                f"pool {obj.spec.driver}/{obj.spec.pool.name} was left out of the plan for a problem: "
                "only a fresh plan reads it again",
                obj=obj.ref,
            )


def _removed(cluster: Cluster, remove: Iterable[Ref]) -> list[TypeMeta]:
    out: list[TypeMeta] = []
    seen: set[Identity] = set()
    for ref in remove:
        if not (isinstance(ref, tuple | list) and len(ref) == 3):
            raise InputError(f"a removal is (kind, namespace, name), got {ref!r}")
        kind, namespace, name = ref
        if kind not in KINDS:
            raise InputError(f"unknown kind {kind!r} in a removal; known: {', '.join(sorted(KINDS))}")
        ns = "" if kind in CLUSTER_SCOPED else ObjectMeta(namespace=namespace or None).ns
        key: Identity = (kind, ns, str(name))
        where = f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
        if key in seen:
            raise InputError("removed twice in one update", obj=where)
        seen.add(key)
        obj = cluster._identities.get(key)
        if obj is None:
            raise InputError("not in the cluster: nothing to remove", obj=where)
        out.append(obj)
    return out


def _parsed(add: Iterable[TypeMeta | dict[str, Any]]) -> list[TypeMeta]:
    reader = Reader()
    out: list[TypeMeta] = []
    for i, obj in enumerate(add):
        if isinstance(obj, dict):
            out.extend(reader.read(obj, f"added object #{i}"))
        elif isinstance(obj, TypeMeta):
            out.append(obj)
        else:
            raise InputError(f"added object #{i} is neither an API object nor a dict: {type(obj).__name__}")
    if reader.errors:
        raise _one(reader.errors)
    return out


def _copy_without(cluster: Cluster, gone: Sequence[TypeMeta]) -> Cluster:
    """A Cluster with copies of every container of `cluster`, the `gone` objects left out
    (each taken out of its container by its key: an update costs what it changes, plus the
    copies). Of `cluster`'s own type: a subclass's extra fields (the CLI's file names for
    messages) are copied like the rest."""
    values: dict[str, Any] = {}
    for f in fields(cluster):
        value = getattr(cluster, f.name)
        values[f.name] = (
            list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value
        )
    if any(isinstance(o, ResourceSlice) for o in gone):
        ids = {id(o) for o in gone}
        values["slices"] = [s for s in values["slices"] if id(s) not in ids]
    for obj in gone:
        values["_identities"].pop(identity(obj), None)
        container = _CONTAINERS.get(obj.kind)
        if container is not None:
            key = obj.metadata.name if obj.kind in CLUSTER_SCOPED else obj.key
            values[container].pop(key, None)
    return type(cluster)(**values)


_CONTAINERS = {
    "DeviceClass": "classes",
    "ResourceClaim": "claims",
    "ResourceClaimTemplate": "templates",
    "Pod": "pods",
    "Node": "nodes",
    "DeviceTaintRule": "taint_rules",
    "PriorityClass": "priority_classes",
    "PodGroup": "pod_groups",
    "Workload": "workloads",
    "Namespace": "namespaces",
}
"""Kind -> the Cluster's dict of it (`api.cluster.Cluster.add`); slices are a list."""


def _validate(
    after: Cluster, added: Sequence[TypeMeta], removed: Sequence[TypeMeta], touched: set[tuple[str, str]]
) -> None:
    """The added objects' own rules (CEL compiled), then the cross-object rules over the
    objects an update can break: added and touched pods (their claims, templates, priority
    classes and PodGroups must exist), added claims and templates (their DeviceClasses)."""
    errors = [e for obj in added for e in validate_object(obj)]
    if errors:
        raise _one(errors)
    claims = {c.key: c for c in added if isinstance(c, ResourceClaim)}
    templates = {t.key: t for t in added if isinstance(t, ResourceClaimTemplate)}
    if any(o.kind == "DeviceClass" for o in removed):  # every claim's class must still exist
        claims, templates = dict(after.claims), dict(after.templates)
    pods = {k: after.pods[k] for k in sorted(touched) if k in after.pods}
    for pod in pods.values():
        for entry in pod.spec.resource_claims:
            name = entry.resource_claim_name
            if name and (c := after.claims.get((pod.metadata.ns, name))) is not None:
                claims[c.key] = c
            tname = entry.resource_claim_template_name
            if tname and (t := after.templates.get((pod.metadata.ns, tname))) is not None:
                templates[t.key] = t
    part = Cluster(
        classes=after.classes,
        claims=claims,
        templates=templates,
        pods=pods,
        priority_classes=after.priority_classes,
        pod_groups=after.pod_groups,
        namespaces=after.namespaces,
    )
    errors = validate_all(part)
    if errors:
        raise _one(errors)


def _pods_naming(
    after: Cluster, added: Sequence[TypeMeta], removed: Sequence[TypeMeta], naming: Naming
) -> set[tuple[str, str]]:
    """The pods of `after` that are added, or name (a claim, template, priority class or
    PodGroup) an object the update adds or removes (`naming`: the index of `after`)."""
    out = {p.key for p in added if isinstance(p, Pod)}
    for obj in (*added, *removed):
        if isinstance(obj, Pod):
            continue
        name = (obj.kind, "" if obj.kind in CLUSTER_SCOPED else obj.metadata.ns, obj.metadata.name)
        out |= {k for k in naming.pods(name) if k in after.pods}
    return out


def _names(pod: Pod) -> set[tuple[str, str, str]]:
    """The objects a pod names: its claims, claim templates, priority class and PodGroup."""
    ns = pod.metadata.ns
    out: set[tuple[str, str, str]] = set()
    for entry in pod.spec.resource_claims:
        if entry.resource_claim_name:
            out.add(("ResourceClaim", ns, entry.resource_claim_name))
        if entry.resource_claim_template_name:
            out.add(("ResourceClaimTemplate", ns, entry.resource_claim_template_name))
    if pod.spec.priority_class_name:
        out.add(("PriorityClass", "", pod.spec.priority_class_name))
    group = pod.spec.scheduling_group
    if group is not None:
        out.add(("PodGroup", ns, group.pod_group_name))
    return out


def _reach(
    before: Cluster,
    after: Cluster,
    added: Sequence[TypeMeta],
    removed: Sequence[TypeMeta],
    touched: set[tuple[str, str]],
) -> tuple[set[str], set[tuple[str, str]], str | None]:
    """What the update may have changed (`Changes`): nodes, pending pods, or everything.
    `touched`: the pods of `after` that are added or name an added or removed object (a
    removed pod is among the removed objects)."""
    nodes: set[str] = set()
    pods: set[tuple[str, str]] = set()
    everywhere: str | None = None
    for obj in (*removed, *added):
        match obj:
            case Pod():
                if holds_node(obj):
                    nodes.add(obj.spec.node_name or "")
                else:
                    pods.add(obj.key)
            case ResourceSlice():
                if obj.spec.node_name:
                    nodes.add(obj.spec.node_name)
                elif everywhere is None:
                    everywhere = f"{obj.ref} has no nodeName"
            case ResourceClaim():
                owners, why = _claim_reach(before, after, obj)
                nodes |= owners
                everywhere = everywhere or why
            case ResourceClaimTemplate():
                pass  # the pods that name it are touched (below)
            case _ if obj.kind == "Node":
                nodes.add(obj.metadata.name)
            case _:
                if everywhere is None:
                    everywhere = f"{obj.ref} may change what every pod or node does"
    pods |= touched
    return nodes, {p for p in pods if p in after.pods or p in before.pods}, everywhere


def _claim_reach(before: Cluster, after: Cluster, claim: ResourceClaim) -> tuple[set[str], str | None]:
    """What an allocated claim added or removed may change: the nodes whose pools it holds
    devices of, and why it may change every node (the first pool of it seen from many nodes),
    or None. An unallocated claim changes no node (the pods that name it are touched)."""
    nodes: set[str] = set()
    why: str | None = None
    alloc = claim.status.allocation if claim.status else None
    for r in alloc.devices.results if alloc is not None else ():
        owner = _pool_node(before, after, r.driver, r.pool)
        if owner is not None:
            nodes.add(owner)
        elif why is None:
            why = f"{claim.ref} holds devices of pool {r.driver}/{r.pool}, seen from many nodes"
    return nodes, why


def _pool_node(before: Cluster, after: Cluster, driver: str, pool: str) -> str | None:
    """The one node whose slices hold `driver/pool` (before or after), None when a slice of it
    has no node name or names another node."""
    owners = {
        s.spec.node_name
        for c in (before, after)
        for s in c.slices
        if s.spec.driver == driver and s.spec.pool.name == pool
    }
    if len(owners) == 1 and (only := next(iter(owners))):
        return only
    return None


def _one(errors: Sequence[InputError]) -> InputError:
    """One InputError for a bad update: the first problem, naming its object, the others after."""
    first = errors[0]
    if len(errors) == 1:
        return first
    more = "; ".join(e.message for e in errors[1:4])
    tail = f" (and {len(errors) - 4} more)" if len(errors) > 4 else ""
    return InputError(
        f"{first.reason}; also: {more}{tail}", obj=first.obj, field=first.field, source=first.source
    )


__all__ = ["KINDS", "Changes", "Naming", "Ref", "apply_changes"]
