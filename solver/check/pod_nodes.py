"""Pod on node: the scheduler's filters that decide whether a pod may run on a node.

Why a second reading: the planner refuses nodes in `problem.scheduling`; this module checks
the finished placements from the Pod and Node objects alone, as upstream's plugins do:

- NodeName (`pod-node-name`): a pod already bound (`spec.nodeName`) stays on that node.
- NodeUnschedulable (`pod-node-unschedulable`): a node with `spec.unschedulable` takes only
  pods tolerating `node.kubernetes.io/unschedulable:NoSchedule`.
- NodeAffinity: every `spec.nodeSelector` label equal (`pod-node-selector`), and one term of
  the required node affinity matching (`pod-node-affinity`): terms ORed, requirements ANDed,
  an empty term matches nothing; matchExpressions In/NotIn/Exists/DoesNotExist/Gt/Lt on the
  labels, matchFields on `metadata.name`. A node without a Node object has only its hostname
  label as far as we know: selecting on anything else cannot be shown to hold and is reported.
- TaintToleration (`pod-node-taint`): every NoSchedule / NoExecute taint of the node is
  tolerated; PreferNoSchedule only scores.
- A bound pod's node exists (`pod-node-missing`, the audit only: `check_nodes_exist`).

Only pods the plan places get the IgnoredDuringExecution filters (selector, affinity,
NoSchedule taints, unschedulable): a pod bound before its node was cordoned or relabelled
legitimately keeps running. A bound pod still gets `pod-node-name` and NoExecute taints
(upstream evicts a pod that does not tolerate one). `check_cluster` treats every bound pod as
placed, so an audit says whether each placement satisfies the rules now.
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import NodeSelectorRequirement, Pod, Taint
from .pods import PodPlacement, node_labels, pod_violation
from .scopes import requirement_matches
from .tolerations import tolerates
from .violations import Violation

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
HOSTNAME = "kubernetes.io/hostname"


def check_pod_node(cluster: Cluster, p: PodPlacement) -> list[Violation]:
    """Every scheduler filter the pod's node breaks (module docstring)."""
    pod, node, ref = p.pod, p.node, p.pod.namespaced_name
    out: list[Violation] = []
    if pod.spec.node_name and pod.spec.node_name != node:
        out.append(
            pod_violation(
                ref,
                "pod-node-name",
                f"is bound to node {pod.spec.node_name} (spec.nodeName), placed on {node}",
            )
        )
    obj = cluster.nodes.get(node)
    if p.new:
        out += _selection(cluster, ref, p)
        if obj is not None and obj.spec.unschedulable and not _tolerated(p, UNSCHEDULABLE, "", "NoSchedule"):
            out.append(
                pod_violation(
                    ref,
                    "pod-node-unschedulable",
                    f"node {node} is unschedulable (spec.unschedulable: true) "
                    f"and the pod does not tolerate {UNSCHEDULABLE}:NoSchedule",
                )
            )
    for taint in obj.spec.taints if obj is not None else []:
        if taint.effect == "NoExecute" or (p.new and taint.effect == "NoSchedule"):
            if not _tolerated(p, taint.key, taint.value or "", taint.effect):
                out.append(
                    pod_violation(
                        ref,
                        "pod-node-taint",
                        f"node {node} has taint {_show(taint)} that the pod does not tolerate",
                    )
                )
    return out


def check_nodes_exist(cluster: Cluster, pods: list[Pod]) -> list[Violation]:
    """`pod-node-missing`: each running pod's node is among the input's Nodes, when it has any
    (a dump without Node objects knows nodes from their slices only). Why only in the audit
    (`check_cluster`): a plan places pods on the input's nodes alone, while a cluster state may
    hold a pod whose node was deleted — upstream's pod garbage collector deletes such a pod
    (orphaned), so what it holds is about to be freed and nothing more runs there."""
    if not cluster.nodes:
        return []
    return [
        pod_violation(
            pod.namespaced_name,
            "pod-node-missing",
            f"is bound to node {pod.spec.node_name} (spec.nodeName), which is not among the input's "
            "Nodes (deleted? upstream's pod garbage collector deletes a pod whose node is gone)",
        )
        for pod in pods
        if pod.spec.node_name and pod.spec.node_name not in cluster.nodes
    ]


def _show(t: Taint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def _tolerated(p: PodPlacement, key: str, value: str, effect: str) -> bool:
    return any(tolerates(t, key, value, effect) for t in p.pod.spec.tolerations)


def _selection(cluster: Cluster, ref: str, p: PodPlacement) -> list[Violation]:
    spec, node = p.pod.spec, p.node
    labels, known = node_labels(cluster, node)
    out: list[Violation] = []
    for key, want in sorted(spec.node_selector.items()):
        if not known and key != HOSTNAME:
            out.append(
                pod_violation(
                    ref,
                    "pod-node-selector",
                    f"nodeSelector {key}={want}: node {node} has no Node object, its labels are unknown",
                )
            )
        elif labels.get(key) != want:
            have = labels.get(key)
            shown = f"{key}={have}" if have is not None else f"no label {key}"
            out.append(
                pod_violation(
                    ref, "pod-node-selector", f"nodeSelector {key}={want}, but node {node} has {shown}"
                )
            )
    affinity = spec.affinity.node_affinity if spec.affinity else None
    terms = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    if terms is None:
        return out
    if not known:
        out.append(
            pod_violation(
                ref,
                "pod-node-affinity",
                f"required node affinity: node {node} has no Node object, its labels are unknown",
            )
        )
        return out
    fields = {"metadata.name": node}
    failed: list[str] = []
    for i, term in enumerate(terms.node_selector_terms):
        if not term.match_expressions and not term.match_fields:
            failed.append(f"term #{i} is empty")
            continue
        bad = [r for r in term.match_expressions if not requirement_matches(r, labels)]
        bad += [
            r for r in term.match_fields if r.key != "metadata.name" or not requirement_matches(r, fields)
        ]
        if not bad:
            return out
        failed.append(f"term #{i}: {_req(bad[0], labels if bad[0] in term.match_expressions else fields)}")
    why = "; ".join(failed) or "no terms"
    out.append(
        pod_violation(ref, "pod-node-affinity", f"node {node} matches no required node affinity term ({why})")
    )
    return out


def _req(r: NodeSelectorRequirement, values: dict[str, str]) -> str:
    have = values.get(r.key)
    shown = repr(have) if have is not None else "absent"
    return f"{r.key} {r.operator} {list(r.values)} is false ({r.key} is {shown})"
