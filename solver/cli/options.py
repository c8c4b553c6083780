"""The options more than one command takes, declared once (typer `Annotated` aliases), and the
values they parse into: `Search` (how to search: one `Options`) and `Output` (what to print).

Why here: a command's signature is its help, so every shared option must read the same in every
command; declaring it once keeps the flag, the help text and the checks of its value in one
place. Options whose help differs per command (`--node`, `--pod`, `--claim`, `--allocator`) are
declared by their command.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

import typer

from ..api.load import dumps
from ..deadline import parse_duration
from ..errors import DRASolverError
from ..gates import FeatureGates
from ..output.objects import OutputMode
from ..planning.job import Options
from .console import fail


class AllocatorChoice(StrEnum):
    """`--allocator` / `--repair`: the names of `planners.policy.ALLOCATORS`."""

    reference = "reference"
    cpsat = "cpsat"


class StrategyChoice(StrEnum):
    pack = "pack"
    spread = "spread"


class ExecutorChoice(StrEnum):
    auto = "auto"
    """A local process pool when the units are whole plans (`--partitions`, `--scenario`) or
    `--workers` is given; else this process (`executors.open_executor`)."""
    local = "local"
    ray = "ray"
    inline = "inline"


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"
    table = "table"
    wide = "wide"
    """The table with more columns (kubectl's `-o wide`)."""
    name = "name"
    """One `kind.group/name` per object of the yaml output (kubectl's `-o name`)."""

    @property
    def tabular(self) -> bool:
        return self in (OutputFormat.table, OutputFormat.wide)


# --- every command: the inputs ----------------------------------------------------------

PathsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="YAML/JSON files (multi-document and `kind: List` allowed), directories "
        "(their *.yaml, *.yml, *.json files, recursively) or `-` for stdin; also as -f.",
        metavar="PATH",
        show_default=False,
    ),
]
FilenameOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filename",
        "-f",
        help="An input, as a PATH argument (kubectl's habit), repeatable; read after the PATHs.",
        show_default=False,
    ),
]
FeatureGatesOpt = Annotated[
    str | None,
    typer.Option("--feature-gates", help="Comma-separated Name=true|false; others keep defaults."),
]
KubernetesVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--kubernetes-version",
        metavar="1.36|1.37",
        help="The Kubernetes version whose feature-gate defaults apply (default 1.37); "
        "--feature-gates changes single gates on top.",
        show_default=False,
    ),
]
IgnoreGatesOpt = Annotated[
    bool,
    typer.Option(
        "--ignore-scheduling-gates",
        help='Plan pods that have spec.schedulingGates as if the gates were lifted ("what if Kueue '
        'admitted it"); default: such a pod is not planned and its gates are its reason, as the '
        "scheduler leaves it pending.",
    ),
]
KubeconfigOpt = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        metavar="PATH",
        # `\[`: rich would read `[live]` as markup and print nothing of it.
        help="Read the cluster's current state from the API server of this kubeconfig (read-only: "
        "GET requests only; needs the dra-solver\\[live] extra); PATHs add objects to it.",
        show_default=False,
    ),
]
ContextOpt = Annotated[
    str | None,
    typer.Option(
        "--context",
        metavar="NAME",
        help="The kubeconfig context to read (default: its current context); implies --live.",
        show_default=False,
    ),
]
LiveOpt = Annotated[
    bool,
    typer.Option(
        "--live",
        help="Read the cluster's current state, the kubeconfig found as kubectl finds it "
        "(KUBECONFIG, ~/.kube/config, the in-cluster service account); read-only.",
    ),
]


# --- allocate and plan: the search and the output ----------------------------------------


def _positive_seconds(value: float) -> float:
    """`--time-limit` is a budget: 0, a negative number or NaN leave no search at all."""
    if not value > 0:
        raise typer.BadParameter(f"must be a positive number of seconds, got {value:g}")
    return value


StrategyOpt = Annotated[StrategyChoice, typer.Option(help="CP-SAT placement preference.")]
TimeLimitOpt = Annotated[
    float,
    typer.Option(
        "--time-limit",
        callback=_positive_seconds,
        help=(
            "Budget of the CP-SAT search in deterministic seconds (CP-SAT's work count, about "
            "seconds on an idle machine, so the same input and seed give the same plan at any "
            "load); no wall clock stops it."
        ),
    ),
]


def parse_timeout(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def timeout_option(help: str) -> Any:
    """`--timeout DURATION` with `help` (`plan`'s `TimeoutOpt`; `explain` has its own words)."""
    return typer.Option("--timeout", metavar="DURATION", parser=parse_timeout, help=help, show_default=False)


TimeoutOpt = Annotated[
    float | None,
    timeout_option(
        "Wall-clock limit of the whole run from the process's start (reading, first fit, the "
        "models, the reasons, the check, the output), as kubectl's --timeout (30s, 5m, 1m30s): "
        "when it passes, the best checked plan so far is printed and says it was cut short "
        "(that answer depends on the machine's speed); passed before any pod was placed (while "
        "reading, say): no plan, exit 1. "
        "Default: none — --time-limit's deterministic budget bounds the search."
    ),
]
MAX_SEED = 2**31 - 1
"""CP-SAT's random_seed is a 32-bit integer."""
SeedOpt = Annotated[
    int,
    typer.Option(
        min=0,
        max=MAX_SEED,
        help="Seed for CP-SAT and shareIDs (0 to 2147483647): same input + seed = same output.",
    ),
]
OutputOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--output",
        "-o",
        help="yaml/json: Kubernetes objects (a List, the run's facts in its annotations); name: "
        "kind.group/name of each, a line each; table: rows per pod and per node; wide: the table "
        "with more columns.",
    ),
]
OutputModeOpt = Annotated[
    OutputMode,
    typer.Option(
        "--output-mode",
        help="What -o yaml|json prints: changed = the Pods and claims the run changes; full = every "
        "input object after the run (the cluster after the plan: give it as the next run's input).",
    ),
]


@dataclass(frozen=True)
class Search:
    """How `allocate` and `plan` are asked to search (--allocator, --strategy, --time-limit,
    --seed), turned into the run's one `Options` once the feature gates are known (they are read
    with the input, so that a bad gate is reported after the input's own errors, as always)."""

    allocator: AllocatorChoice
    strategy: StrategyChoice
    time_limit: float
    seed: int

    def options(self, gates: FeatureGates, **more: Any) -> Options:
        """The run's Options (`more`: a command's own fields, e.g. plan's partitions); a value
        they refuse is the user's error (one line, exit 1), not a bug."""
        try:
            return Options.of(
                allocator=self.allocator.value,
                feature_gates=gates,
                seed=self.seed,
                strategy=self.strategy.value,
                time_limit=self.time_limit,
                **more,
            )
        except DRASolverError as exc:
            fail([exc])


@dataclass(frozen=True)
class Output:
    """What `allocate` and `plan` print on stdout (-o, --output-mode), checked together: a table
    is one view of the run, not a set of objects, so `--output-mode full` needs yaml/json."""

    format: OutputFormat
    mode: OutputMode

    def __post_init__(self) -> None:
        if self.format.tabular and self.mode is OutputMode.full:
            raise typer.BadParameter(
                "--output-mode full needs -o yaml or -o json", param_hint="--output-mode"
            )

    @property
    def tabular(self) -> bool:
        return self.format.tabular

    @property
    def wide(self) -> bool:
        return self.format is OutputFormat.wide

    def write(
        self, objects: Sequence[dict[str, Any]], notes: dict[str, str], *, distinct: bool = False
    ) -> None:
        """yaml/json: one `kind: List` with the run's annotations; name: a line per object.
        `distinct`: no dict or list appears twice in `objects` and `notes` (`api.load.dumps`)."""
        if self.format is OutputFormat.name:
            sys.stdout.write("".join(f"{object_name(o)}\n" for o in objects))
        else:
            sys.stdout.write(dumps(objects, self.format.value, notes, distinct=distinct))


def object_name(obj: Mapping[str, Any]) -> str:
    """As `kubectl get -o name` prints it: `pod/web-0` for the core group,
    `resourceclaim.resource.k8s.io/web-0-gpu` for the others (no namespace, as kubectl)."""
    group = str(obj.get("apiVersion", "v1")).rpartition("/")[0]
    kind = str(obj.get("kind", "")).lower()
    return f"{kind}.{group}/{obj['metadata']['name']}" if group else f"{kind}/{obj['metadata']['name']}"


__all__ = [
    "MAX_SEED",
    "AllocatorChoice",
    "ExecutorChoice",
    "FeatureGatesOpt",
    "KubernetesVersionOpt",
    "FilenameOpt",
    "Output",
    "OutputFormat",
    "OutputModeOpt",
    "OutputOpt",
    "PathsArg",
    "Search",
    "SeedOpt",
    "StrategyChoice",
    "StrategyOpt",
    "TimeLimitOpt",
    "TimeoutOpt",
    "object_name",
    "parse_timeout",
    "timeout_option",
]
