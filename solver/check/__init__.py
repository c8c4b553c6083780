"""Independent verifier of DRA allocation results and pod placements: the API and the order
of the rules.

Why this package exists: dra-solver has two allocators (the upstream-faithful reference
and the CP-SAT optimiser) and both are built on the same precompute. A bug shared by
them would pass every differential test. This checker is a *second reading of the
rules*, written from the KEPs, the scheduler's plugins and the upstream rules as
docs/semantics.md states them (intended semantics, not the quirks of docs/semantics.md,
"Deliberate differences from upstream bugs") and deliberately importing nothing from
`solver.inventory`, `solver.problem`, `solver.reference`, `solver.cpsat` or our CEL
compiler `solver.cel` (a test keeps it so; the one exception is the recorded fallback of
`expressions`). It reads only the raw API objects (slices, classes, claims, pods, nodes,
PodGroups), the feature gates and quantities, and evaluates CEL with cel-python
(`celpy_env`). Nothing an allocator returns reaches a user without passing `check_or_raise`
(per allocation call) and the plan's final checks (`check_placements`, `check_node_resources`,
`check_gangs`); `check_cluster` audits a whole cluster state (`dra-solver check`).

It reports *every* violation it finds, each naming the object (claim, pod or PodGroup), the
request and device where there is one, and the rule, so a failing differential test says
what went wrong rather than only that something did. It never raises for a CEL problem: a
CEL compile or runtime error met while checking is itself a `selector` violation.

Decisions where the rules leave room (also listed in the docs):

- Pool generations follow upstream (docs/semantics.md, "Pools and generations"): the
  newest generation among the slices relevant to the node wins; only when those look
  incomplete is the whole cluster re-scanned (a newer generation elsewhere makes the pool
  obsolete).
- Admin-access results never make a device busy and never consume capacity, but a new
  admin placement does charge shared counters (upstream charges every placement of the
  call; existing admin results are not charged). Within one call a dedicated device given
  with admin access is in use for the later claims' normal requests: checked for one answer
  with `one_call`, and for every plan in `check_placements`, which reads each placed pod's
  newly allocated claims as one call (docs/semantics.md, "Admin access").
- Counters: as upstream, once a pool has any over-committed counter, no newly charged
  counter-consuming device of that pool may be placed.
- Attribute names are compared as fully qualified names: a bare name belongs to the
  device's driver domain (for both the device's attributes and the constraint).
- Derived attributes (KEP-6080) are only consulted with `DRADerivedAttributes` on, by
  exact name; list values use the KEP-5491 set semantics (always: with scalars only this
  is plain equality).
- `DRAPartitionableDevices` off: perDeviceNodeSelection slices are invisible; a
  counter-set slice still counts for pool completeness (upstream test
  "partitionable-devices-disabled-other-device-do-not-consume-counters"); a device that
  consumes counters, or one only visible through per-device selection, is a `gate`
  violation rather than an `unknown-device`.
- Placements: the scheduler's filters (nodeSelector, required node affinity, NoSchedule
  taints, unschedulable) apply to pods the plan places; a pod already bound keeps its node
  (`pod-node-name`) and must tolerate NoExecute taints, but not the IgnoredDuringExecution
  filters (it was bound before). `check_cluster` treats every bound pod as placed.
- Not checked (no rule kind for them): that the node declares `DraOptionalNodePreparation`
  (a pod/node concern of the planner); inter-pod affinity and anti-affinity, topology
  spread and preferred (scoring) rules, which the planner does not model either; that the
  consumers in a claim's `reservedFor` exist.

Layout: this module holds the public API (`check`, `check_or_raise`, `check_placements`,
`check_cluster`, `check_gangs`, `check_node_resources`, and `Violation`, `CheckFailed`,
`KINDS` from `violations`); `runner` runs the device rules in a fixed order — per result,
then per claim, then across claims — so the violations always come out in the same order.
How the cluster is read lives in `scopes`, `pools`, `world` and `pods`, CEL in `expressions`
and `celpy_env`, the per-call state in `context`; each rule family has a module of its own
(`results`, `feature_gates`, `nodes`, `selectors`, `tolerations`, `copies`, `sharing`, `capacity`,
`counts`, `constraints`, `counters`; for pods `pod_nodes`, `pod_claims`, `extended`,
`node_resources`, `gangs`), with `keys` and `amounts` shared by them; `placement` and
`cluster` run the pod rules over a plan and over a whole cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..api.cluster import Cluster
from ..api.models import ResourceClaim
from ..gates import FeatureGates
from .cluster import check_cluster
from .context import Context
from .gangs import check_gangs
from .node_resources import check_node_resources
from .placement import check_placements
from .pods import PodPlacement
from .preemption import PREEMPTION_KINDS, check_preemption
from .runner import run_context
from .violations import KINDS, CheckFailed, Violation

__all__ = [
    "KINDS",
    "PREEMPTION_KINDS",
    "CheckFailed",
    "PodPlacement",
    "Violation",
    "check",
    "check_cluster",
    "check_gangs",
    "check_node_resources",
    "check_or_raise",
    "check_placements",
    "check_preemption",
]


def check(
    cluster: Cluster,
    allocated: Sequence[ResourceClaim],
    *,
    node: str | None,
    gates: FeatureGates | None = None,
    one_call: bool = False,
) -> list[Violation]:
    """Every rule the allocations in `allocated` break, for claims placed on `node`.

    `cluster` is the input snapshot: its claims that already carry `status.allocation`
    (and are not in `allocated`, matched by namespace/name) are the devices in use.
    `node` None means no node: only allNodes and nodeSelector slices are visible.
    `one_call`: `allocated` are one pod's claims in the order of the call that allocated them,
    so the rules of one call apply too (a dedicated device given with admin access to a claim
    is in use for the later claims' normal requests); without it they may be several pods'.
    Nothing passed in is modified.
    """
    return run_context(Context(cluster, list(allocated), node, gates or FeatureGates(), one_call=one_call))


def check_or_raise(
    cluster: Cluster,
    allocated: Sequence[ResourceClaim],
    *,
    node: str | None,
    gates: FeatureGates | None = None,
    one_call: bool = False,
) -> None:
    """Raise `CheckFailed` (an `AllocationError`) listing all violations, if there are any.

    The library calls this on every allocator answer so that nothing unverified is returned.
    """
    violations = check(cluster, allocated, node=node, gates=gates, one_call=one_call)
    if violations:
        raise CheckFailed(violations)
