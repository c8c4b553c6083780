"""Auditing a cluster state: every allocated claim and every bound pod, against every rule.

Why a module: `dra-solver check` (and `dra_solver.check_cluster`) verifies a cluster as it
is — a plan's `--output-mode full` output or a `kubectl get -o yaml` dump — rather than one
allocator answer. It runs the same rules as the plan's checks, from the objects alone:

- allocated claims, grouped by the node they serve (the node a single-node
  `allocation.nodeSelector` names, else that of a running pod using the claim, else none:
  a pod elsewhere is then `pod-claim-node`, not a device violation), each group
  checked as one allocation call on that node (`check`): devices exist, selectors, counts,
  capacity and its rounding, counters, constraints, unique shareIDs, adminAccess, taints;
- every running pod (bound, not Succeeded/Failed) as if just placed (`check_placements`):
  the scheduler's node filters, its claims allocated, reserved for it and on its node, the
  KEP-5004 special claim; node resources (`check_node_resources`) and gangs (`check_gangs`);
  its node among the input's Nodes (`check_nodes_exist`: upstream deletes a pod whose node is gone).
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..gates import FeatureGates
from .context import Context
from .gangs import check_gangs
from .keys import claim_id
from .node_resources import check_node_resources
from .placement import check_placements
from .pod_nodes import check_nodes_exist
from .pods import PodPlacement, claim_uses, running
from .runner import run_context
from .violations import Violation
from .world import Reading


def claim_nodes(cluster: Cluster, gates: FeatureGates) -> dict[str, str | None]:
    """Each allocated claim (`namespace/name`) and the node it is checked for (module docstring)."""
    used_on: dict[str, set[str]] = {}
    for pod in cluster.pods.values():
        if running(pod):
            for use in claim_uses(cluster, pod, {}, gates):
                used_on.setdefault(use.ref, set()).add(pod.spec.node_name or "")
            status = pod.status.extended_resource_claim_status if pod.status else None
            if status is not None:
                ref = f"{pod.metadata.ns}/{status.resource_claim_name}"
                used_on.setdefault(ref, set()).add(pod.spec.node_name or "")
    out: dict[str, str | None] = {}
    for claim in cluster.allocated_claims():
        cid = claim_id(claim)
        nodes = sorted(used_on.get(cid, ()))
        named = _selected_node(claim)
        out[cid] = named if named is not None else (nodes[0] if nodes else None)
    return out


def _selected_node(claim: ResourceClaim) -> str | None:
    """The node a `metadata.name In [node]` nodeSelector names (node-local devices), or None."""
    allocation = claim.status.allocation if claim.status is not None else None
    sel = allocation.node_selector if allocation is not None else None
    if sel is None or len(sel.node_selector_terms) != 1:
        return None
    term = sel.node_selector_terms[0]
    fields = [r for r in term.match_fields if r.key == "metadata.name" and r.operator == "In"]
    if len(fields) == 1 and len(fields[0].values) == 1 and not term.match_expressions:
        return fields[0].values[0]
    return None


def check_cluster(cluster: Cluster, gates: FeatureGates | None = None) -> list[Violation]:
    """Every rule the cluster's allocated claims and bound pods break (module docstring).
    Nothing passed in is modified."""
    gates = gates or FeatureGates()
    nodes = claim_nodes(cluster, gates)
    groups: dict[str | None, list[ResourceClaim]] = {}
    for claim in cluster.allocated_claims():
        if not claim.unread:  # a stand-in's spec is unknown: it only holds its devices (World)
            groups.setdefault(nodes[claim_id(claim)], []).append(claim)
    out: list[Violation] = []
    reading = Reading(cluster)  # read once for every node's context
    for node in sorted(groups, key=lambda n: (n is None, n or "")):
        out += run_context(Context(cluster, groups[node], node, gates, reading=reading))
    pods = [p for p in cluster.pods.values() if running(p)]
    placed = [
        PodPlacement(
            p,
            p.spec.node_name or "",
            new=True,
            extended=p.status.extended_resource_claim_status if p.status else None,
        )
        for p in pods
    ]
    out += check_nodes_exist(cluster, pods)
    out += check_placements(cluster, placed, {}, gates, bound=False)
    out += check_node_resources(cluster, [], gates)
    if gates.GenericWorkload and cluster.pod_groups:
        where = {p.key: p.spec.node_name for p in pods}
        out += check_gangs(cluster, pods, where, topology=gates.TopologyAwareWorkloadScheduling)
    return list(dict.fromkeys(out))
