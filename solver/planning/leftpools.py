"""Pools left out for a problem, kept as device-free stand-ins so that the pods they would
have served name them (docs/semantics.md, "Messy clusters").

Why: `planning.triage` takes a pool out of the plan when one of its slices has a problem (it
cannot be read, or the API server would refuse it): a partial pool would be an incomplete one,
and a broken device must not be allocated. Dropping the slices outright made the pool vanish:
a pod that needed its devices read `needs 1 device(s), 0 match the selectors`, as on a node
with no devices at all, and the table showed `0 of 0` — the wrong cause. Instead, each slice
of the pool's generation is replaced by a stand-in: the same name, driver, pool and node scope,
no devices and no counters, marked with the problem (`ResourceSlice.left_out`). The inventory
(`inventory.gather_pools`) reads such a pool as an invalid pool whose devices are unknown, as
upstream reads an invalid pool: skipped, and named in the per-node error of a pod it leaves
without a fit (`invalid resource pools were encountered: pool D/P generation G is invalid:
ResourceSlice S could not be read (...)`).

The stand-ins are never written out: the slices themselves are `Cluster.left_out`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..api.load import Unread
from ..api.models import ResourceSlice
from ..api.validate import validate_object
from ..reasons import Kind, Reason

_SCOPES = ("nodeName", "nodeSelector", "allNodes")


def not_valid(s: ResourceSlice, problems: str) -> Reason:
    """Why `s` is left out: it is not valid (`problems`: the input errors' own words)."""
    name = _name(s.metadata.namespace, s.metadata.name)
    return Reason.of(Kind.SLICE_NOT_VALID, slice=name, problems=problems)


def with_pool(s: ResourceSlice) -> Reason:
    """Why `s` is left out: only because its pool is (another slice's problem)."""
    return Reason.of(Kind.SLICE_WITH_POOL, slice=_name(s.metadata.namespace, s.metadata.name))


def unread(u: Unread) -> Reason:
    """Why the slice `u` is left out: it could not be read (the reader's own words)."""
    return Reason.of(Kind.SLICE_UNREAD, slice=_name(u.namespace, u.name), error=u.reason)


def _name(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def stand_in(s: ResourceSlice, reason: Reason) -> ResourceSlice:
    """`s` without its devices and counters, marked with `reason` (`with_pool` for a slice
    left out only because its pool is). A scope read from the devices (per-device node selection) or
    none (a counter-set slice) becomes all nodes: without the devices the nodes they would be
    seen from are unknown, and the pool is named wherever it might have served; so does a node
    selector that cannot be evaluated."""
    spec = s.spec
    update: dict[str, object] = {"devices": [], "shared_counters": []}
    if spec.node_name is None and spec.node_selector is None and not spec.all_nodes:
        update |= {"all_nodes": True, "per_device_node_selection": None}
    out = s.model_copy(update={"spec": spec.model_copy(update=update)})
    if any(e.field.startswith("spec.nodeSelector") for e in validate_object(out)):
        # a selector that cannot be evaluated (an unknown operator) would stop every node's
        # gathering: all nodes instead, as for a scope that cannot be read
        scope = {"node_selector": None, "all_nodes": True}
        out = s.model_copy(update={"spec": spec.model_copy(update={**update, **scope})})
    out._left_out = reason
    return out


def unread_stand_in(u: Unread) -> ResourceSlice | None:
    """The stand-in of a ResourceSlice that could not be read (`unread`), from what of it can be (its
    driver, pool and node scope as written), or None when not even its pool can be read (then
    nothing names the pool: its other slices make it incomplete)."""
    spec = u.doc.get("spec")
    if not isinstance(spec, Mapping):
        return None
    base: dict[str, Any] = {"driver": spec.get("driver"), "pool": spec.get("pool")}
    scope = {k: spec[k] for k in _SCOPES if spec.get(k) is not None}
    for attempt in ({**base, **scope}, {**base, "allNodes": True}):
        try:
            s = ResourceSlice.model_validate({"metadata": {"name": u.name}, "spec": attempt})
        except ValidationError:
            continue
        return stand_in(s, unread(u))
    return None


__all__ = ["not_valid", "stand_in", "unread", "unread_stand_in", "with_pool"]
