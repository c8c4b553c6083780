"""`-o table`: a plan as a person reads it (rich tables), not as the API server stores it.

Why a module of its own: the YAML/JSON output is for machines and `kubectl`; a person asks
"where did each pod go, on which devices, and what is left?". That needs the claims'
allocation results joined to their pods, and the nodes' devices joined to what is in use
after the plan — reading, not deciding, so nothing here changes a result.

Two tables:
- one row per pod: `namespace/name`, its node, then each claim's devices
  (`claim/request: driver/pool/device`, with the shareID and consumed capacity of a share of a
  multi-allocatable device) — or, for a pod not placed, the reason; with `plan --preempt`, then
  one row per evicted pod: its node, "evicted for" the placed pod that justifies it, and the
  claims the eviction releases (deallocated) or leaves to the pods still using them; with
  `--allow-moves`, one row per moved pod: `from → to`, "moved for" the placed pod that
  justifies it, and its new claims' devices;
- one row per node (up to `NODE_ROWS` nodes) or per node class above that (nodes with the same
  node-local devices: the same drivers and device counts): pods placed there, devices used
  of the node-local devices (slices with `spec.nodeName`; in use by the input's allocations or
  the plan's), and **stranded capacity**: what is left on shared devices the plan uses
  partly (a device with consumable capacity that holds at least one share), which only a
  request small enough for the remainder can still use; with `plan --preempt`, the pods
  evicted there.
Between them, the summary line the CLI prints on stderr otherwise (placed of total, status,
bound).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..api.cluster import Cluster
from ..api.models import Device, Pod, ResourceClaim, ResourceSlice
from ..api.quantity import Quantity, QuantityFormat
from ..gates import FeatureGates
from ..inventory import DeviceID, NodeView, gather_pools, in_use_from_claims, visible_devices
from ..planning.outcome import PlanOutcome, PodPlan

NODE_ROWS = 20
"""Up to this many nodes, one row per node; above, one row per node class, so the table
stays short whatever the size of the cluster."""


def claim_devices(claim: ResourceClaim) -> list[str]:
    """One line per allocated device: `claim/request: driver/pool/device`, then the share and
    the consumed capacity when the device is shared (`share 1a2b, memory 30Gi`)."""
    alloc = claim.status.allocation if claim.status else None
    if alloc is None:
        return [f"{claim.metadata.name}: not allocated"]
    lines = []
    for r in alloc.devices.results:
        extra = [f"share {r.share_id}"] if r.share_id else []
        extra += [f"{name} {q}" for name, q in sorted((r.consumed_capacity or {}).items())]
        if r.admin_access:
            extra.append("admin access")
        suffix = f" ({', '.join(extra)})" if extra else ""
        lines.append(f"{claim.metadata.name}/{r.request}: {r.driver}/{r.pool}/{r.device}{suffix}")
    return lines or [f"{claim.metadata.name}: no devices"]


class Eviction(Protocol):
    """What the table reads of an evicted pod (`preempt.Victim`; this floor does not import
    the preemption package, so it names the fields it reads)."""

    @property
    def name(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def preemptor(self) -> str: ...
    @property
    def pod(self) -> Pod | None: ...


class Relocation(Protocol):
    """What the table reads of a moved pod (`preempt.Move`)."""

    @property
    def name(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def to(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def preemptor(self) -> str: ...
    @property
    def plan(self) -> PodPlan | None: ...


def move_text(move: Relocation, preemptor_priority: int | None) -> str:
    """`moved for default/big (priority 100 > 0)`, then its new claims' devices on one line each."""
    words = f"moved for {move.preemptor}"
    if preemptor_priority is not None:
        words += f" (priority {preemptor_priority} > {move.priority})"
    claims = move.plan.claims if move.plan is not None else []
    return "\n".join([words, *(line for c in claims for line in claim_devices(c))])


def eviction_text(victim: Eviction, preemptor_priority: int | None, released: Sequence[ResourceClaim]) -> str:
    """`evicted for default/p (priority 100 > 10); releases a-gpu`: the pod that justifies
    the eviction, then each claim of the victim the plan changes — deallocated (`releases`)
    or still held by the pods left in its reservedFor (`leaves ... to`)."""
    words = f"evicted for {victim.preemptor}"
    if preemptor_priority is not None:
        words += f" (priority {preemptor_priority} > {victim.priority})"
    ns = victim.name.split("/", 1)[0]
    names = set()
    if victim.pod is not None:
        names = {c.resource_claim_name for c in victim.pod.spec.resource_claims if c.resource_claim_name}
        if victim.pod.status is not None:
            names |= {
                s.resource_claim_name
                for s in victim.pod.status.resource_claim_statuses
                if s.resource_claim_name
            }
    for c in released:
        if c.metadata.ns != ns or c.metadata.name not in names:
            continue
        alloc = c.status.allocation if c.status else None
        if alloc is None:
            words += f"; releases {c.metadata.name}"
        else:
            left = [
                f"{ns}/{r.name}" for r in (c.status.reserved_for if c.status else []) if r.resource == "pods"
            ]
            words += f"; leaves {c.metadata.name} to {', '.join(left) or 'its other users'}"
    return words


def pods_table(
    pods: Sequence[PodPlan],
    wide: bool = False,
    evicted: Sequence[Eviction] = (),
    released: Sequence[ResourceClaim] = (),
    moved: Sequence[Relocation] = (),
) -> Table:
    """One row per pod, in plan order, then one per evicted pod (`evicted`, with the claims of
    `released`), then one per moved pod (`moved`); `wide` (`-o wide`) adds the pod's priority
    and the claims it names that were already allocated (shared with running pods: reservedFor
    grows)."""
    table = Table(title="Pods", title_justify="left")
    table.add_column("pod", overflow="fold", ratio=1)
    if wide:
        table.add_column("priority", justify="right")
    table.add_column("node", overflow="fold")
    devices = "devices (claim/request: driver/pool/device) or why not placed"
    if evicted:
        devices = "devices (claim/request: driver/pool/device), why not placed, or why evicted"
    if moved:
        devices = "devices (claim/request: driver/pool/device), why not placed, or why evicted or moved"
    table.add_column(devices, overflow="fold", ratio=3)
    if wide:
        table.add_column("claims already allocated (reserved for it too)", overflow="fold", ratio=1)
    for p in pods:
        name = p.name.replace(",", ", ")  # a pod of plain claims is named by its claims
        first = [name, str(p.priority)] if wide else [name]
        last = ["\n".join(c.namespaced_name for c in p.reserved) or "-"] if wide else []
        if p.placed:
            lines = [line for c in p.claims for line in claim_devices(c)] or ["no claims"]
            table.add_row(*first, p.node or "(no node)", "\n".join(lines), *last)
        else:
            table.add_row(*first, Text("not placed", style="red"), Text(p.reason or "", style="red"), *last)
    priority = {p.name: p.priority for p in pods}
    for v in evicted:
        first = [v.name, str(v.priority)] if wide else [v.name]
        words = eviction_text(v, priority.get(v.preemptor), released)
        table.add_row(*first, v.node, Text(words, style="yellow"), *(["-"] if wide else []))
    for m in moved:
        first = [m.name, str(m.priority)] if wide else [m.name]
        words = move_text(m, priority.get(m.preemptor))
        table.add_row(*first, f"{m.node} → {m.to}", Text(words, style="cyan"), *(["-"] if wide else []))
    return table


@dataclass
class NodeUse:
    """What one node (or a class of nodes) holds after the plan."""

    nodes: int = 0
    pods: int = 0
    evicted: int = 0
    devices: int = 0
    used: int = 0
    stranded: dict[str, Fraction] = field(default_factory=dict)
    formats: dict[str, QuantityFormat] = field(default_factory=dict)
    left_out: set[str] = field(default_factory=set)
    """Pools left out for a problem that the node would see (`left_out_pools`): their devices
    are not counted, so the count says which."""

    def add(self, other: NodeUse) -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.left_out |= other.left_out
        self.evicted += other.evicted
        self.devices += other.devices
        self.used += other.used
        for name, left in other.stranded.items():
            self.stranded[name] = self.stranded.get(name, Fraction(0)) + left
        self.formats.update(other.formats)

    def stranded_text(self) -> str:
        parts = [
            f"{name} {Quantity(left, self.formats.get(name, 'DecimalSI'))}"
            for name, left in sorted(self.stranded.items())
            if left > 0
        ]
        return ", ".join(parts) or "-"


def node_devices(
    cluster: Cluster, nodes: Iterable[str], gates: FeatureGates
) -> dict[str, list[tuple[DeviceID, Device]]]:
    """Per node, its node-local devices (slices with `spec.nodeName`, valid pools, visible from
    the node) in pool order. Shared by the table's counts and the HTML report's cluster map
    (`solver.output.report`), so both count the same devices."""
    by_node: dict[str, list[ResourceSlice]] = defaultdict(list)
    for s in cluster.slices:
        if s.spec.node_name:
            by_node[s.spec.node_name].append(s)
    out = {}
    for n in nodes:
        view = NodeView.of(n, cluster.nodes)
        pools = gather_pools(by_node.get(n, []), view, gates).valid()
        out[n] = [
            ((pool.driver, pool.name, d.name), d) for pool in pools for _, d in visible_devices(pool, view)
        ]
    return out


def left_out_pools(cluster: Cluster, nodes: Iterable[str], gates: FeatureGates) -> dict[str, set[str]]:
    """Per node, the pools (`driver/pool`) left out for a problem that it would see
    (`Pool.left_out`, `planning.leftpools`): none of their devices is counted or used."""
    stand_ins = [s for s in cluster.slices if s.left_out is not None]
    if not stand_ins:
        return {}
    out: dict[str, set[str]] = {}
    for n in nodes:
        pools = gather_pools(stand_ins, NodeView.of(n, cluster.nodes), gates).invalid()
        out[n] = {f"{p.driver}/{p.name}" for p in pools if p.left_out}
    return out


def node_use(
    cluster: Cluster,
    outcome: PlanOutcome,
    nodes: Iterable[str],
    gates: FeatureGates,
    evicted: Sequence[Eviction] = (),
) -> dict[str, tuple[tuple[tuple[str, int], ...], NodeUse]]:
    """Per node: its device signature (driver, count) and what it holds after the plan (and
    how many pods of `evicted` left it)."""
    planned = {c.key: c for p in outcome.pods for c in p.claims}
    claims = {**cluster.claims, **planned}
    in_use = in_use_from_claims(claims.values(), gates)
    pods_on = Counter(p.node for p in outcome.pods if p.placed)
    gone_from = Counter(v.node for v in evicted)
    nodes = list(nodes)
    left_out = left_out_pools(cluster, nodes, gates)
    out = {}
    for n, devices in node_devices(cluster, nodes, gates).items():
        use = NodeUse(nodes=1, pods=pods_on.get(n, 0), evicted=gone_from.get(n, 0), devices=len(devices))
        use.left_out = left_out.get(n, set())
        for dev, d in devices:
            if in_use.allocated(dev):
                use.used += 1
            consumed = in_use.capacity.get(dev)
            if not consumed:
                continue
            for name, cap in d.capacity.items():
                left = cap.value.as_fraction() - consumed.get(name, Fraction(0))
                use.stranded[name] = use.stranded.get(name, Fraction(0)) + max(left, Fraction(0))
                use.formats[name] = cap.value.format
        signature = tuple(sorted(Counter(dev[0] for dev, _ in devices).items()))
        out[n] = (signature, use)
    return out


def nodes_table(
    per_node: dict[str, tuple[tuple[tuple[str, int], ...], NodeUse]],
    wide: bool = False,
    evictions: bool = False,
) -> Table:
    """One row per node, or per node class when there are more than `NODE_ROWS` nodes (never
    with `wide`); `wide` adds the node's devices by driver, `evictions` the pods evicted."""
    by_class = len(per_node) > NODE_ROWS and not wide
    rows: dict[str, NodeUse] = {}
    for n, (signature, use) in per_node.items():
        if by_class:
            label = ", ".join(f"{driver} x{count}" for driver, count in signature) or "no devices"
            rows.setdefault(label, NodeUse()).add(use)
        else:
            rows[n] = use
    table = Table(title="Node classes" if by_class else "Nodes", title_justify="left")
    table.add_column("node devices (driver x count)" if by_class else "node", no_wrap=True)
    if by_class:
        table.add_column("nodes", justify="right")
    table.add_column("pods placed", justify="right")
    if evictions:
        table.add_column("pods evicted", justify="right")
    table.add_column("devices used", justify="right")
    table.add_column("stranded capacity (left on shared devices in use)", overflow="fold")
    if wide:
        table.add_column("node devices (driver x count)", overflow="fold")
    for label, use in rows.items():
        cells = [label, *([str(use.nodes)] if by_class else [])]
        cells += [str(use.pods), *([str(use.evicted)] if evictions else [])]
        left = f" (pool {', '.join(sorted(use.left_out))} left out)" if use.left_out else ""
        cells += [f"{use.used} of {use.devices}{left}", use.stranded_text()]
        if wide:
            signature = per_node[label][0]
            cells.append(", ".join(f"{driver} x{count}" for driver, count in signature) or "-")
        table.add_row(*cells)
    return table


def plan_tables(
    cluster: Cluster,
    outcome: PlanOutcome,
    nodes: Sequence[str],
    gates: FeatureGates,
    summary: str,
    wide: bool = False,
    evicted: Sequence[Eviction] | None = None,
    released: Sequence[ResourceClaim] = (),
    moved: Sequence[Relocation] = (),
) -> RenderableType:
    """The pods table, the summary line and the nodes table, ready for `Console.print`;
    `wide` (`-o wide`): more columns, and a row per node however many. With `evicted` (a plan
    with preemption, even one that evicts nothing; `cluster` is then the cluster after the
    evictions): a row per evicted pod, and the nodes' evictions; with `moved`, a row per moved
    pod, counted (with its new devices) on the node it moves to."""
    style = "bold" if outcome.placed == len(outcome.pods) else "bold yellow"
    gone = evicted or ()
    arrived = [m.plan for m in moved if m.plan is not None]
    both = PlanOutcome([*outcome.pods, *arrived], outcome.allocator, outcome.stats) if arrived else outcome
    per_node = node_use(cluster, both, nodes, gates, gone)
    return Group(
        pods_table(outcome.pods, wide, gone, released, moved),
        Text(summary, style=style),
        nodes_table(per_node, wide, evictions=evicted is not None),
    )


__all__ = [
    "NODE_ROWS",
    "Eviction",
    "Relocation",
    "claim_devices",
    "eviction_text",
    "move_text",
    "node_devices",
    "node_use",
    "nodes_table",
    "plan_tables",
    "pods_table",
]
