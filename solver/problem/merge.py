"""One Problem for many pods over many nodes: the per-node Problems, merged.

Why merge instead of a new precompute: `build_problem` already answers, for one node, which
devices are visible and which are candidates of which request (selectors, taints, gates,
capacity left, node-declared features). Building it once per node (one shared EvalCache, so
each CEL program still runs once per device signature) and merging keeps one source of truth.

Merging rules:
- devices by identity (driver, pool, name), in order of first appearance (nodes in order);
  `DeviceInfo.nodes` = the nodes whose Problem holds the device; busy / in-use / capacity /
  counter facts are cluster-wide and so equal on every node;
- counters by (driver, pool, counter_set, name); device counter use re-indexed;
- alternatives per (claim, alternative name): the union of the candidates, re-indexed, each
  with `Candidate.nodes` = the nodes where it is a candidate (consumption and CEL errors do
  not depend on the node);
- constraints per (claim, position in the claim): value tables re-indexed (unioned);
- claims get `group` = their pod's index and the pod's priority; `Problem.nodes` lists the
  nodes. allocationMode All is node-dependent (its set is "every matching device on the
  node"): `Alternative.all_sets` holds the set per node where the request is not blocked
  (`encoders.nodes` takes exactly the set of the pod's node); `count` is the largest set.
Fatal errors of any node's precompute (CEL compile errors, invalid claims) propagate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypedDict

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..cel import EvalCache
from ..errors import InputError
from ..gates import FeatureGates
from ..reasons import Kind, Reason
from .build import build_problem
from .flat import (
    Alternative,
    Candidate,
    ClaimInfo,
    ConstraintInfo,
    CounterInfo,
    DeviceInfo,
    Problem,
    RequestInfo,
    ValueSet,
)

DevKey = tuple[str, str, str]


def build_multi_node_problem(
    cluster: Cluster,
    pods: Sequence[Sequence[ResourceClaim]],
    nodes: Sequence[str],
    gates: FeatureGates,
    cache: EvalCache | None = None,
    priorities: Sequence[int] | None = None,
    group_nodes: dict[int, tuple[str, ...]] | None = None,
) -> Problem:
    """The merged Problem: the claims of every pod (in pod order), over `nodes`."""
    if not nodes:
        raise InputError("no candidate nodes given")
    if len(set(nodes)) != len(nodes):
        raise InputError("candidate nodes must be distinct")
    cache = cache or EvalCache()
    claims = [c for pod in pods for c in pod]
    group_of = [g for g, pod in enumerate(pods) for _ in pod]
    per_node = [(n, build_problem(cluster, claims, n, gates, cache=cache)) for n in nodes]
    first = per_node[0][1]
    devices, counters, dev_maps = _merged_devices(per_node)
    alternatives = _merged_alternatives(first, per_node, dev_maps)
    allowed = _allowed_nodes(per_node, group_of, nodes, group_nodes)
    constraints = _merged_constraints(first, per_node, dev_maps)
    prios = list(priorities) if priorities is not None else [0] * len(pods)
    claim_infos = tuple(
        ClaimInfo(
            c.index,
            c.namespace,
            c.name,
            tuple(RequestInfo(r.name, r.alternatives, r.first_available) for r in c.requests),
            c.constraints,
            prios[group_of[c.index]],
            group_of[c.index],
        )
        for c in first.claims
    )
    invalid: list[Reason] = []
    left_out: list[Reason] = []
    incomplete: list[Reason] = []
    for _node, prob in per_node:
        invalid.extend(x for x in prob.invalid_pools if x not in invalid)
        left_out.extend(x for x in prob.left_out_pools if x not in left_out)
        incomplete.extend(x for x in prob.incomplete_pools if x not in incomplete)
    return Problem(
        node=None,
        gates=gates,
        devices=devices,
        counters=counters,
        alternatives=alternatives,
        claims=claim_infos,
        constraints=constraints,
        compat_baseline={k: v for _, prob in per_node for k, v in prob.compat_baseline.items()},
        invalid_pools=tuple(invalid),
        left_out_pools=tuple(left_out),
        incomplete_pools=tuple(incomplete),
        nodes=tuple(nodes),
        group_nodes=allowed,
    )


def _merged_devices(
    per_node: Sequence[tuple[str, Problem]],
) -> tuple[tuple[DeviceInfo, ...], tuple[CounterInfo, ...], list[dict[int, int]]]:
    """Devices by identity in order of first appearance, each with the nodes whose Problem
    holds it, and counters by (driver, pool, counter set, name), the devices' counter use
    re-indexed (module docstring); with, per node, its device indices -> the merged ones."""
    dev_index: dict[DevKey, int] = {}
    dev_nodes: dict[int, set[str]] = {}
    dev_proto: dict[int, DeviceInfo] = {}
    counter_index: dict[tuple[str, str, str, str], int] = {}
    counters: list[CounterInfo] = []
    dev_maps: list[dict[int, int]] = []
    for node, prob in per_node:
        cmap: dict[int, int] = {}
        for i, ctr in enumerate(prob.counters):
            key = (ctr.driver, ctr.pool, ctr.counter_set, ctr.name)
            if key not in counter_index:
                counter_index[key] = len(counters)
                counters.append(ctr)
            cmap[i] = counter_index[key]
        dmap: dict[int, int] = {}
        for dev in prob.devices:
            dkey = (dev.driver, dev.pool, dev.name)
            if dkey not in dev_index:
                idx = len(dev_index)
                dev_index[dkey] = idx
                dev_proto[idx] = replace(
                    dev, index=idx, counter_use={cmap[k]: v for k, v in dev.counter_use.items()}
                )
                dev_nodes[idx] = set()
            dmap[dev.index] = dev_index[dkey]
            dev_nodes[dev_index[dkey]].add(node)
        dev_maps.append(dmap)
    devices = tuple(replace(dev_proto[i], nodes=frozenset(dev_nodes[i])) for i in range(len(dev_index)))
    return devices, tuple(counters), dev_maps


def _merged_alternatives(
    first: Problem, per_node: Sequence[tuple[str, Problem]], dev_maps: Sequence[dict[int, int]]
) -> tuple[Alternative, ...]:
    """The alternatives (the same structure on every node: request specs do not depend on the
    node), each with the union of its candidates, re-indexed, and the nodes where each is one;
    allocationMode All with its set per node (`_all_fields`)."""
    cand: dict[int, dict[int, Candidate]] = {a.index: {} for a in first.alternatives}
    cand_nodes: dict[tuple[int, int], set[str]] = {}
    all_sets: dict[int, dict[str, tuple[int, ...]]] = {}
    all_blocked: dict[int, Reason] = {}
    for (node, prob), dmap in zip(per_node, dev_maps, strict=True):
        for alt in prob.alternatives:
            if alt.mode == "All":
                if alt.all_blocked is not None or not alt.candidates:
                    why = alt.all_blocked or _NONE
                    all_blocked.setdefault(alt.index, Reason(Kind.MEMBER, node, (("parts", (why,)),)))
                    continue  # this node can not serve the request: its devices do not count
                all_sets.setdefault(alt.index, {})[node] = tuple(dmap[c.device] for c in alt.candidates)
            mine = cand[alt.index]
            for c in alt.candidates:
                d = dmap[c.device]
                if d not in mine:
                    mine[d] = replace(c, device=d)
                cand_nodes.setdefault((alt.index, d), set()).add(node)
    return tuple(
        replace(
            alt,
            candidates=tuple(
                replace(c, nodes=frozenset(cand_nodes[(alt.index, d)]))
                for d, c in sorted(cand[alt.index].items())
            ),
            fatal=None,
            **_all_fields(alt, all_sets, all_blocked),
        )
        for alt in first.alternatives
    )


def _allowed_nodes(
    per_node: Sequence[tuple[str, Problem]],
    group_of: Sequence[int],
    nodes: Sequence[str],
    group_nodes: dict[int, tuple[str, ...]] | None,
) -> dict[int, tuple[str, ...]]:
    """Per pod (`group_nodes`, with the pods refused somewhere): the nodes it may use.
    allocationMode All on a pool not ready: the pod may not use that node at all, whatever its
    other requests (upstream's per-node failure, kubernetes#141898)."""
    refused: dict[int, set[str]] = {}
    for node, prob in per_node:
        for alt in prob.alternatives:
            if alt.fatal is not None:
                refused.setdefault(group_of[alt.claim], set()).add(node)
    allowed = dict(group_nodes or {})
    for g, bad in refused.items():
        allowed[g] = tuple(n for n in allowed.get(g, tuple(nodes)) if n not in bad)
    return allowed


def _merged_constraints(
    first: Problem, per_node: Sequence[tuple[str, Problem]], dev_maps: Sequence[dict[int, int]]
) -> tuple[ConstraintInfo, ...]:
    """Constraints by (claim, position in the claim), their value tables re-indexed and
    unioned over the nodes."""
    constraints: list[ConstraintInfo] = []
    for k in first.constraints:
        values: dict[tuple[int, int], ValueSet | None] = {}
        for (_node, prob), dmap in zip(per_node, dev_maps, strict=True):
            pos = first.claims[k.claim].constraints.index(k.index)
            other = prob.constraints[prob.claims[k.claim].constraints[pos]]
            for (a, d), v in other.values.items():
                values.setdefault((a, dmap[d]), v)
        constraints.append(replace(k, values=values))
    return tuple(constraints)


class _AllFields(TypedDict, total=False):
    """The fields of an All-mode Alternative that merging recomputes (`_all_fields`)."""

    all_sets: dict[str, tuple[int, ...]]
    count: int
    all_blocked: Reason | None


_NONE = Reason(Kind.ALL_NONE)
"""allocationMode All without a matching device."""


def _all_fields(
    alt: Alternative, all_sets: dict[int, dict[str, tuple[int, ...]]], blocked: dict[int, Reason]
) -> _AllFields:
    """All mode: the sets per node, the largest set's size as count, blocked on every node."""
    if alt.mode != "All":
        return {}
    sets = all_sets.get(alt.index, {})
    return {
        "all_sets": sets,
        "count": max((len(s) for s in sets.values()), default=0),
        "all_blocked": None if sets else blocked.get(alt.index, _NONE),
    }
