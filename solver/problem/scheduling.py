"""Pod scheduling constraints: may this pod run on this node, and at what priority?

Why here: a plan must never put a pod where the scheduler would not. These are the scheduler's
filters that decide feasibility for one pod and one node, read from the Pod and Node objects:
- `spec.nodeName` (NodeName): a bound pod stays on its node;
- `Node.spec.unschedulable` (NodeUnschedulable): only pods tolerating the
  `node.kubernetes.io/unschedulable:NoSchedule` taint go there;
- `spec.nodeSelector` and required node affinity (NodeAffinity): every selector label equal,
  and one of the `nodeSelectorTerms` matching (matchExpressions with In, NotIn, Exists,
  DoesNotExist, Gt, Lt; matchFields on metadata.name);
- node taints with effect NoSchedule or NoExecute (TaintToleration) must be tolerated; so must
  one of an effect the API server refuses (a hand-edited dump: `planning.triage` warns), as the
  plan cannot know what it was meant to forbid.
PreferNoSchedule taints and preferred affinity only score nodes upstream; they do not decide
feasibility and are not considered here (nor inter-pod affinity or topology spread).

A node known only from its slices (no Node object) has no labels and no taints we can see:
a pod that selects on labels other than `kubernetes.io/hostname` cannot be shown to fit it, so
it is refused with a reason saying so — never placed on a guess.

Priority (`pod_priority`): `spec.priority` when set (the admission controller writes it),
else the value of the PriorityClass named by `spec.priorityClassName`, else that of the
PriorityClass with `globalDefault: true` (`default_priority_class`), else 0.
"""

from __future__ import annotations

from ..api.cluster import Cluster
from ..api.models import Node, Pod, PriorityClass, Taint
from ..errors import InputError
from ..inventory import NodeView, node_selector_matches
from ..reasons import Kind, Reason
from .taints import tolerated

UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
HOSTNAME = "kubernetes.io/hostname"


def node_refusal(cluster: Cluster, pod: Pod, node: str | None) -> Reason | None:
    """Why the scheduler would not run `pod` on `node` (None: it may, as far as these rules
    go): a value naming the node (`reasons.words` says it, or "the node" for a group)."""
    spec = pod.spec
    if spec.node_name and node != spec.node_name:
        return Reason.of(Kind.BOUND, node=node, bound=spec.node_name)
    if node is None:
        return None
    obj = cluster.nodes.get(node)
    required = spec.affinity.node_affinity if spec.affinity and spec.affinity.node_affinity else None
    terms = required.required_during_scheduling_ignored_during_execution if required else None
    if obj is None and (any(k != HOSTNAME for k in spec.node_selector) or terms is not None):
        return Reason.of(Kind.NO_NODE_OBJECT, node=node)
    if spec.node_selector or terms is not None:  # the view copies the labels: only when read
        view = NodeView.of(node, cluster.nodes)
        assert view is not None
        for key, value in spec.node_selector.items():
            if view.labels.get(key) != value:
                return Reason.of(Kind.NODE_SELECTOR, node=node, key=key, value=value)
        if terms is not None and not node_selector_matches(terms, view, pod.ref):
            return Reason.of(Kind.NODE_AFFINITY, node=node)
    if obj is not None:
        return _taint_refusal(pod, obj)
    return None


def _taint_refusal(pod: Pod, node: Node) -> Reason | None:
    if node.spec.unschedulable and not tolerated(UNSCHEDULABLE_TAINT, pod.spec.tolerations):
        return Reason.of(Kind.UNSCHEDULABLE, node=node.metadata.name)
    for taint in node.spec.taints:
        if not tolerated(taint, pod.spec.tolerations):  # an effect the API server refuses blocks
            shown = f"{taint.key}={taint.value}" if taint.value else taint.key
            return Reason.of(Kind.TAINT, node=node.metadata.name, taint=shown, effect=taint.effect)
    return None


def pod_priority(cluster: Cluster, pod: Pod) -> int:
    """The pod's scheduling priority (module docstring)."""
    if pod.spec.priority is not None:
        return pod.spec.priority
    name = pod.spec.priority_class_name
    if name:
        pc = cluster.priority_classes.get(name)
        if pc is None:
            raise InputError(
                f"PriorityClass {name} not found in the input", obj=pod.ref, field="spec.priorityClassName"
            )
        return pc.value
    default = default_priority_class(cluster)
    return default.value if default is not None else 0


def default_priority_class(cluster: Cluster) -> PriorityClass | None:
    """The PriorityClass a pod without one is given: the one with `globalDefault: true`. The
    API server allows one, but two may race past its check (or an input mixes cluster states;
    `validate` refuses it): upstream's admission then picks the lowest value (the API's
    documented rule for `globalDefault`), and of equal values we take the first by name —
    docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)"."""
    defaults = [pc for pc in cluster.priority_classes.values() if pc.global_default]
    return min(defaults, key=lambda pc: (pc.value, pc.metadata.name), default=None)
