"""`plan --report FILE.html`: one self-contained HTML page to look at a plan (issue #20).

Why a page: a capacity planner's answer is a picture before it is a table — which nodes are
full, where devices sit stranded, what the optimal plan gains over first fit, which pods are
left and why. On 500 nodes nobody reads YAML or stderr lines.

Why self-contained: a report is mailed, attached to tickets and opened on machines without
network; so plotly.js is inlined once and every figure is JSON in the page, drawn by the
page's own script (the Jinja2 template `report.html.j2`, shipped as package data). Nothing
is fetched at view time.

Why aggregated above `MAP_NODES` nodes: a heatmap row per node with hover text per device
grows with the cluster; above that many nodes the map starts as one bar per node class
(free / held before / placed per pod class) and each class's nodes are a drill-down drawn on
demand, in pages of at most `MAP_NODES` nodes — the page stays small and opens fast
(docs/benchmarks.md, "Plan report").

Reading, not deciding: the device lists and per-node use come from `solver.output.table`, the same
functions as `-o table`, so the two views count the same devices.
"""

from __future__ import annotations

import html
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..api.cluster import Cluster
from ..api.models import Device, DeviceAttribute, ResourceClaim
from ..api.quantity import Quantity
from ..api.templates import COST_ANNOTATION
from ..gates import FeatureGates
from ..inventory import DeviceID, in_use_from_claims
from ..planning.outcome import PlanOutcome, PlanSummary, PodPlan, number_text
from .table import NodeUse, node_devices, node_use

if TYPE_CHECKING:  # both load only when a report is written
    import plotly.graph_objects as go
    from jinja2 import Environment

MAP_NODES = 300
"""Up to this many nodes the cluster map shows every node; above, one bar per node class with
a drill-down per class (pages of this many nodes)."""

UNPLACED_ROWS = 500
"""At most this many rows in the unplaced pods table (the rest counted): the page stays small
when thousands of pods do not fit; `dra-solver explain` has the detail of any of them."""

FREE, HELD = 0, 1
"""Cluster map states; placed devices get 2 + their pod class's index."""

FREE_COLOUR, HELD_COLOUR = "#e5e7eb", "#6b7280"
POD_CLASS_COLOURS = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#db2777", "#65a30d"]
"""Pod classes beyond these colours share the last one ("other")."""


@dataclass
class PlanNumbers:
    """The summary of one plan: what the page shows and the browser test compares."""

    allocator: str
    placed: int
    total: int
    objective: int
    """The realized placed weight: each placed pod with its own priority (`solver.planning.outcome`)."""
    status: str
    bound: str
    """An upper bound on `objective` (same unit), from the allocator; `-` when none is known."""
    gap: str
    seconds: float
    devices_used: int
    nodes_opened: int
    stranded_devices: int | None
    """Free devices on nodes no unplaced pod fits on; None when the plan does not say per node
    why a pod was left (CP-SAT plans): `--compare` then shows first fit's count."""

    def rows(self) -> list[tuple[str, str]]:
        return [
            ("pods placed", f"{self.placed} / {self.total}"),
            ("objective (placed weight)", str(self.objective)),
            ("allocator", self.allocator),
            ("status", self.status),
            ("proven bound (on the objective)", self.bound),
            ("gap", self.gap),
            ("time", f"{self.seconds:.1f} s"),
            ("devices used by the plan", str(self.devices_used)),
            ("nodes opened", str(self.nodes_opened)),
            ("stranded devices", "-" if self.stranded_devices is None else str(self.stranded_devices)),
        ]


@dataclass
class _Cell:
    """One device on the map."""

    state: int
    text: str


@dataclass
class _Node:
    name: str
    klass: str
    added: bool
    cells: list[_Cell] = field(default_factory=list)


def _attr(a: DeviceAttribute) -> str:
    values = a.model_dump(exclude_none=True, by_alias=True)
    return str(next(iter(values.values()), ""))


def _bar(used: Fraction, total: Fraction, width: int = 20) -> str:
    """A text bar for hover labels: plotly hover is text, and a bar reads faster than numbers."""
    filled = 0 if total <= 0 else min(width, round(width * used / total))
    return "█" * filled + "░" * (width - filled)


def _holders(
    claims: Sequence[ResourceClaim], pods_of: dict[tuple[str, str], str]
) -> dict[DeviceID, list[str]]:
    """Device -> `claim (pod)` for every allocated result: what the hover names."""
    out: dict[DeviceID, list[str]] = defaultdict(list)
    for c in claims:
        alloc = c.status.allocation if c.status else None
        if alloc is None:
            continue
        key = c.key
        pod = pods_of.get(key) or ", ".join(r.name for r in (c.status.reserved_for if c.status else []))
        for r in alloc.devices.results:
            label = f"{key[0]}/{key[1]}" + (f" (pod {pod})" if pod else "")
            out[(r.driver, r.pool, r.device)].append(label)
    return out


def _pod_class(p: PodPlan) -> str:
    """A placed pod's class for the map's colours: the devices it got per driver
    (`gpu.example.com x2`), which is what a reader compares across nodes."""
    drivers: Counter[str] = Counter()
    for c in p.claims:
        alloc = c.status.allocation if c.status else None
        for r in alloc.devices.results if alloc else []:
            drivers[r.driver] += 1
    return ", ".join(f"{d} x{n}" for d, n in sorted(drivers.items())) or "no devices"


def _class_label(signature: tuple[tuple[str, int], ...], added: bool) -> str:
    label = ", ".join(f"{driver} x{count}" for driver, count in signature) or "no devices"
    return f"{label} (added)" if added else label


class _Builder:
    """Joins the cluster, the plan and the devices into the page's figures and tables."""

    def __init__(self, cluster: Cluster, outcome: PlanOutcome, nodes: Sequence[str], gates: FeatureGates):
        added = {n.metadata.name: n for n in outcome.added_nodes}
        self.cluster = replace(
            cluster,
            slices=[*cluster.slices, *outcome.added_slices],
            nodes={**cluster.nodes, **added},
        )
        self.outcome = outcome
        self.gates = gates
        self.added = added
        self.nodes = list(dict.fromkeys([*nodes, *added]))
        self.devices = node_devices(self.cluster, self.nodes, gates)
        self.use = node_use(self.cluster, outcome, self.nodes, gates)
        planned = [c for p in outcome.pods if p.placed for c in p.claims]
        self.before = in_use_from_claims(cluster.claims.values(), gates)
        self.after = in_use_from_claims([*cluster.claims.values(), *planned], gates)
        pods_of = {c.key: p.name for p in outcome.pods for c in p.claims}
        self.holders = _holders([*cluster.claims.values(), *planned], pods_of)
        self.pod_classes: list[str] = [
            k for k, _ in Counter(_pod_class(p) for p in outcome.pods if p.placed).most_common()
        ]
        self.placed_class: dict[DeviceID, int] = {}
        for p in outcome.pods:
            if not p.placed:
                continue
            k = min(self.pod_classes.index(_pod_class(p)), len(POD_CLASS_COLOURS) - 1)
            for c in p.claims:
                alloc = c.status.allocation if c.status else None
                for r in alloc.devices.results if alloc else []:
                    self.placed_class[(r.driver, r.pool, r.device)] = k
        self.stranded_nodes = self._stranded_nodes()

    def _stranded_nodes(self) -> set[str] | None:
        """Nodes no pending pod fits on: every pod left unplaced has a reason for the node (first
        fit's per-node reasons). Free devices there are stranded for this workload. None: not
        known (a pod left without per-node reasons, as CP-SAT leaves them)."""
        unplaced = [p for p in self.outcome.pods if not p.placed]
        if any(not p.node_reasons for p in unplaced):
            return None
        if not unplaced:
            return set()
        return {n for n in self.nodes if all(n in p.node_reasons for p in unplaced)}

    def state(self, dev: DeviceID) -> int:
        if dev in self.placed_class:
            return 2 + self.placed_class[dev]
        return HELD if self.before.allocated(dev) else FREE

    def map_nodes(self) -> list[_Node]:
        """Every node with its devices' states and hover texts, largest node classes first."""
        out = []
        for n in self.nodes:
            signature, _ = self.use[n]
            node = _Node(n, _class_label(signature, n in self.added), n in self.added)
            for dev, d in self.devices[n]:
                node.cells.append(_Cell(self.state(dev), self._hover(n, dev, d)))
            out.append(node)
        sizes = Counter(x.klass for x in out)
        return sorted(out, key=lambda x: (x.added, -sizes[x.klass], x.klass))

    def _hover(self, node: str, dev: DeviceID, d: Device) -> str:
        state = self.state(dev)
        what = ["free", "held before the plan"][state] if state < 2 else "placed by the plan"
        lines = [f"<b>{html.escape('/'.join(dev))}</b> on {html.escape(node)}: {what}"]
        attrs = [f"{k}={_attr(v)}" for k, v in sorted(d.attributes.items())][:6]
        if attrs:
            lines.append(html.escape(", ".join(attrs)))
        lines += [f"claim {html.escape(h)}" for h in self.holders.get(dev, [])[:4]]
        consumed = self.after.capacity.get(dev)
        if consumed is not None:
            for name, cap in sorted(d.capacity.items()):
                total = cap.value.as_fraction()
                used = consumed.get(name, Fraction(0))
                q = Quantity(used, cap.value.format)
                lines.append(f"{html.escape(name)} {_bar(used, total)} {q} of {cap.value}")
        return "<br>".join(lines)

    # -- figures --------------------------------------------------------------------------

    def colourscale(self) -> tuple[list[list[Any]], int]:
        colours = [FREE_COLOUR, HELD_COLOUR, *POD_CLASS_COLOURS[: max(1, len(self.pod_classes))]]
        top = len(colours) - 1
        scale = []
        for i, c in enumerate(colours):
            scale += [[i / (top + 1), c], [(i + 1) / (top + 1), c]]
        return scale, top

    def heatmap(self, nodes: list[_Node], title: str) -> go.Figure:
        """Nodes (rows) x devices (columns), one colour per state."""
        import plotly.graph_objects as go  # plotly loads only when a report is drawn

        width = max((len(n.cells) for n in nodes), default=0)
        z: list[list[int | None]] = []
        text: list[list[str]] = []
        labels = []
        for n in nodes:
            z.append([c.state for c in n.cells] + [None] * (width - len(n.cells)))
            text.append([c.text for c in n.cells] + [""] * (width - len(n.cells)))
            cost = n.name in self.added and self.added[n.name].metadata.annotations.get(COST_ANNOTATION, "1")
            labels.append(f"+ {n.name} (cost {cost})" if n.added else n.name)
        scale, top = self.colourscale()
        fig = go.Figure(
            go.Heatmap(
                z=z,
                x=[f"device {i}" for i in range(width)],
                y=labels,
                text=text,
                hovertemplate="%{text}<extra></extra>",
                colorscale=scale,
                zmin=-0.5,
                zmax=top + 0.5,
                showscale=False,
                xgap=1,
                ygap=1,
            )
        )
        fig.update_layout(
            title=title,
            height=max(260, 60 + 16 * len(nodes)),
            yaxis={"autorange": "reversed", "type": "category"},
            margin={"l": 10, "r": 10, "t": 40, "b": 30},
        )
        return fig

    def class_bars(self, nodes: list[_Node]) -> go.Figure:
        """The aggregated map: per node class, devices free / held before / placed per pod class."""
        import plotly.graph_objects as go  # plotly loads only when a report is drawn

        classes = list(dict.fromkeys(n.klass for n in nodes))
        counts: dict[str, Counter[int]] = {k: Counter() for k in classes}
        sizes = Counter(n.klass for n in nodes)
        for n in nodes:
            counts[n.klass].update(c.state for c in n.cells)
        labels = [f"{k} ({sizes[k]} nodes)" for k in classes]
        names = ["free", "held before the plan", *(f"placed: {k}" for k in self.pod_classes)]
        colours = [FREE_COLOUR, HELD_COLOUR, *POD_CLASS_COLOURS]
        fig = go.Figure()
        for state in range(min(len(names), len(colours))):
            fig.add_bar(
                name=names[state] if state < len(POD_CLASS_COLOURS) + 1 else "placed: other",
                y=labels,
                x=[counts[k][state] for k in classes],
                orientation="h",
                marker_color=colours[state],
                hovertemplate="%{y}: %{x} devices<extra>%{fullData.name}</extra>",
            )
        fig.update_layout(
            barmode="stack",
            title="Devices per node class (choose a class below to see its nodes)",
            height=max(220, 80 + 40 * len(classes)),
            yaxis={"autorange": "reversed"},
            margin={"l": 10, "r": 10, "t": 40, "b": 30},
        )
        return fig

    def utilisation(self) -> go.Figure:
        """Devices per driver and shared capacity per name: in use before and after the plan."""
        import plotly.graph_objects as go  # plotly loads only when a report is drawn

        total: Counter[str] = Counter()
        before: Counter[str] = Counter()
        after: Counter[str] = Counter()
        cap_total: dict[str, Fraction] = defaultdict(Fraction)
        cap_before: dict[str, Fraction] = defaultdict(Fraction)
        cap_after: dict[str, Fraction] = defaultdict(Fraction)
        for n in self.nodes:
            for dev, d in self.devices[n]:
                total[dev[0]] += 1
                before[dev[0]] += self.before.allocated(dev)
                after[dev[0]] += self.after.allocated(dev)
                if not d.allow_multiple_allocations:
                    continue
                for name, cap in d.capacity.items():
                    cap_total[name] += cap.value.as_fraction()
                    cap_before[name] += self.before.capacity.get(dev, {}).get(name, Fraction(0))
                    cap_after[name] += self.after.capacity.get(dev, {}).get(name, Fraction(0))
        labels = [f"devices: {d}" for d in total] + [f"shared {n}" for n in cap_total]

        def pct(part: Fraction | int, whole: Fraction | int) -> float:
            return round(100 * float(part) / float(whole), 1) if whole else 0.0

        b = [pct(before[d], total[d]) for d in total] + [pct(cap_before[n], cap_total[n]) for n in cap_total]
        a = [pct(after[d], total[d]) for d in total] + [pct(cap_after[n], cap_total[n]) for n in cap_total]
        fig = go.Figure()
        fig.add_bar(name="before the plan", x=labels, y=b, marker_color=HELD_COLOUR)
        fig.add_bar(name="after the plan", x=labels, y=a, marker_color=POD_CLASS_COLOURS[0])
        fig.update_layout(
            barmode="group",
            title="Utilisation (% in use)",
            yaxis={"range": [0, 100], "ticksuffix": "%"},
            height=320,
            margin={"l": 10, "r": 10, "t": 40, "b": 30},
        )
        return fig

    # -- tables ---------------------------------------------------------------------------

    def numbers(self, outcome: PlanOutcome, seconds: float) -> PlanNumbers:
        told = PlanSummary.of(outcome)  # the same numbers as the summary line
        status: str | None = None if told.status is None else told.status.value
        if told.fallback:
            status = f"{status or ''} (kept {told.fallback})".strip()
        if status is None:
            status = "first fit" if outcome.allocator == "reference" else "-"
        used = {dev for p in outcome.pods if p.placed for dev in _devices_of(p)}
        opened = {p.node for p in outcome.pods if p.placed and p.node}
        planned = [c for p in outcome.pods if p.placed for c in p.claims]
        after = in_use_from_claims([*self.cluster.claims.values(), *planned], self.gates)
        unplaced = [p for p in outcome.pods if not p.placed]
        stranded: int | None = 0
        if any(not p.node_reasons for p in unplaced):
            stranded = None  # a pod left without per-node reasons (CP-SAT's): not known
        elif unplaced:
            stranded = sum(
                not after.allocated(dev)
                for n in self.nodes
                if all(n in p.node_reasons for p in unplaced)
                for dev, _ in self.devices[n]
            )
        return PlanNumbers(
            allocator=outcome.allocator,
            placed=told.placed,
            total=told.total,
            objective=told.objective,
            status=str(status),
            bound=number_text(told.bound),
            gap=number_text(told.gap),
            seconds=seconds,
            devices_used=len(used),
            nodes_opened=len(opened),
            stranded_devices=stranded,
        )

    def class_rows(self) -> list[dict[str, str]]:
        """The `-o table` node-class rows (same `NodeUse`), plus the stranded free devices."""
        rows: dict[str, NodeUse] = {}
        free_stranded: Counter[str] = Counter()
        for n in self.nodes:
            signature, use = self.use[n]
            label = _class_label(signature, n in self.added)
            rows.setdefault(label, NodeUse()).add(use)
            if self.stranded_nodes is not None and n in self.stranded_nodes:
                free_stranded[label] += sum(not self.after.allocated(dev) for dev, _ in self.devices[n])
        ordered = sorted(rows.items(), key=lambda kv: (kv[0].endswith("(added)"), -kv[1].nodes, kv[0]))
        return [
            {
                "class": label,
                "nodes": str(use.nodes),
                "pods": str(use.pods),
                "used": f"{use.used} of {use.devices}",
                "stranded_devices": "-" if self.stranded_nodes is None else str(free_stranded[label]),
                "stranded_capacity": use.stranded_text(),
            }
            for label, use in ordered
        ]

    def unplaced(self, inputs: Sequence[str]) -> tuple[list[dict[str, str]], int]:
        files = " ".join(inputs) or "FILE"
        rows = []
        left = [p for p in self.outcome.pods if not p.placed]
        for p in sorted(left, key=lambda p: -p.priority)[:UNPLACED_ROWS]:
            group = ""
            if p.pod is not None and p.pod.spec.scheduling_group is not None:
                group = p.pod.spec.scheduling_group.pod_group_name
            flag = p.explain_flags
            rows.append(
                {
                    "pod": p.name,
                    "group": group,
                    "reason": p.reason or "",
                    "explain": f"dra-solver explain {files} {flag}",
                }
            )
        return rows, len(left) - len(rows)

    def added_rows(self) -> list[dict[str, str]]:
        rows = []
        for name, node in self.added.items():
            _, use = self.use[name]
            rows.append(
                {
                    "node": name,
                    "cost": node.metadata.annotations.get(COST_ANNOTATION, "1"),
                    "pods": str(use.pods),
                    "used": f"{use.used} of {use.devices}",
                }
            )
        return rows


def _devices_of(p: PodPlan) -> list[DeviceID]:
    out = []
    for c in p.claims:
        alloc = c.status.allocation if c.status else None
        out += [(r.driver, r.pool, r.device) for r in (alloc.devices.results if alloc else [])]
    return out


def _figure_json(fig: go.Figure) -> str:
    """A figure as JSON that is safe inside `<script type="application/json">`: `<` escaped,
    so no text in a hover label can close the script element."""
    import plotly.io as pio

    return pio.to_json(fig, validate=False, engine="json").replace("<", "\\u003c")


def _environment() -> Environment:
    from jinja2 import Environment, StrictUndefined, select_autoescape

    return Environment(autoescape=select_autoescape(default=True), undefined=StrictUndefined)


@dataclass(frozen=True)
class ReportExtras:
    """What a report page shows beside the plan, as the CLI gives it: `inputs`, the files, for
    the `dra-solver explain` commands of unplaced pods; `steps` (number, command, note) and
    `readings` (label, free, stranded, largest, per node): a preemption plan's steps in order
    and its fragmentation before and after, as the CLI reads them (`preempt.steps`), shown as
    given. Why one value: `write_report` passes them on to `render_report` untouched."""

    inputs: Sequence[str] = ()
    steps: Sequence[Mapping[str, str]] = ()
    readings: Sequence[Mapping[str, str]] = ()


_NO_EXTRAS = ReportExtras()
"""The default: no input files, no preemption steps (frozen, so one value serves every call)."""


def render_report(
    cluster: Cluster,
    outcome: PlanOutcome,
    nodes: Sequence[str],
    gates: FeatureGates,
    *,
    seconds: float,
    compare: PlanOutcome | None = None,
    compare_seconds: float = 0.0,
    extras: ReportExtras = _NO_EXTRAS,
) -> str:
    """The report page as one string. `nodes`: the plan's candidate nodes (added what-if nodes
    are taken from `outcome`); `compare`: first fit's plan on the same input, shown side by
    side; `extras`: the input files and a preemption plan's steps and readings
    (`ReportExtras`)."""
    from plotly.offline import get_plotlyjs

    b = _Builder(cluster, outcome, nodes, gates)
    figures, drill = _maps(b)
    legend = [("free", FREE_COLOUR), ("held before the plan", HELD_COLOUR)]
    legend += [
        (f"placed: {k}" if i < len(POD_CLASS_COLOURS) - 1 else "placed: other", POD_CLASS_COLOURS[i])
        for i, k in enumerate(b.pod_classes[: len(POD_CLASS_COLOURS)])
    ]
    summary = b.numbers(outcome, seconds)
    unplaced, more = b.unplaced(extras.inputs)
    template = resources.files("dra_solver.output").joinpath("report.html.j2").read_text(encoding="utf-8")
    return (
        _environment()
        .from_string(template)
        .render(
            title=f"dra-solver plan: placed {summary.placed} of {summary.total} pods",
            plotly_js=get_plotlyjs(),
            summary=summary,
            compare=b.numbers(compare, compare_seconds) if compare is not None else None,
            figures=figures,
            drill=drill,
            legend=legend,
            aggregated=bool(drill),
            map_nodes=MAP_NODES,
            classes=b.class_rows(),
            unplaced=unplaced,
            unplaced_more=more,
            added=b.added_rows(),
            added_summary=outcome.stats.get("added"),
            added_cost=outcome.stats.get("added_cost"),
            summary_json=json.dumps({"placed": summary.placed, "total": summary.total}),
            steps=extras.steps,
            readings=extras.readings,
        )
    )


def _maps(b: _Builder) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The page's figures (the cluster map and the utilisation) and, when there are more nodes
    than one map shows (`MAP_NODES`), the map per node class a page of nodes at a time (the
    drill-down; the map then shows the classes)."""
    mapped = b.map_nodes()
    figures: dict[str, str] = {}
    drill: list[dict[str, str]] = []
    if len(mapped) <= MAP_NODES:
        figures["map"] = _figure_json(b.heatmap(mapped, "Cluster map: nodes x devices"))
    else:
        figures["map"] = _figure_json(b.class_bars(mapped))
        by_class: dict[str, list[_Node]] = defaultdict(list)
        for n in mapped:
            by_class[n.klass].append(n)
        for klass, members in by_class.items():
            for start in range(0, len(members), MAP_NODES):
                page = members[start : start + MAP_NODES]
                label = f"{klass}: nodes {start + 1}-{start + len(page)} of {len(members)}"
                drill.append({"label": label, "figure": _figure_json(b.heatmap(page, label))})
    figures["utilisation"] = _figure_json(b.utilisation())
    return figures, drill


def write_report(
    path: str | Path,
    cluster: Cluster,
    outcome: PlanOutcome,
    nodes: Sequence[str],
    gates: FeatureGates,
    *,
    seconds: float = 0.0,
    first_fit: Callable[[], PlanOutcome] | None = None,
    extras: ReportExtras = _NO_EXTRAS,
) -> Path:
    """Write the report page (see `render_report`) to `path`; returns the path. `first_fit`:
    runs first fit on the same input (`plan --compare`), timed here so the page shows its
    wall clock beside the plan's."""
    compare: PlanOutcome | None = None
    compare_seconds = 0.0
    if first_fit is not None:
        started = time.perf_counter()
        compare = first_fit()
        compare_seconds = time.perf_counter() - started
    out = Path(path)
    page = render_report(
        cluster,
        outcome,
        nodes,
        gates,
        seconds=seconds,
        compare=compare,
        compare_seconds=compare_seconds,
        extras=extras,
    )
    out.write_text(page, encoding="utf-8")
    return out


__all__ = ["MAP_NODES", "PlanNumbers", "ReportExtras", "render_report", "write_report"]
