"""`dra-solver dump`: a live cluster's objects, the ones the planner reads, in one file.

Why a command: a live plan is of a moment; a dump can be planned again, shared, attached to an
issue, compared. It writes exactly what a live read lists (`api.live.read`: every kind of
`live.kinds_read()`, cluster-wide, each object as the server served it, in the version the
read chose, stamped with its kind and apiVersion), the workloads included, as one `kind: List`
— so `plan cluster.yaml` plans what `plan --kubeconfig` plans of the same state: the loader
takes a workload with a `metadata.uid` for a cluster's and plans the pods it lacks, as the live
read does (`api.workloads.from_a_cluster`). A `kubectl get` of the same kinds is the same file
but for kubectl's choices (it leaves managedFields out, picks each group's preferred version).

Read-only, as every live read: GET requests only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from enum import StrEnum
from typing import IO, Annotated, Any

import typer
import yaml

from ..api.live import KINDS_READ, LiveRead, Progress, Target
from ..api.live import read as read_cluster
from ..errors import DRASolverError, ValidationErrors
from .console import fail, print_warnings
from .inputs import live_target, read_live
from .options import ContextOpt, LiveOpt


class DumpFormat(StrEnum):
    yaml = "yaml"
    json = "json"


DumpKubeconfigOpt = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        metavar="PATH",
        help="Read the cluster from the API server of this kubeconfig (read-only: GET requests only; "
        "needs the dra-solver\\[live] extra).",
        show_default=False,
    ),
]
"""`--kubeconfig` as the other commands have it, but for its help: dump takes no PATHs."""

DumpOutputOpt = Annotated[
    DumpFormat,
    typer.Option("--output", "-o", help="yaml or json: one List of the objects, as kubectl prints one."),
]


def dump(
    kubeconfig: DumpKubeconfigOpt = None,
    context: ContextOpt = None,
    live: LiveOpt = False,
    output: DumpOutputOpt = DumpFormat.yaml,
) -> None:
    """Write a live cluster's objects — every kind the planner reads, across all namespaces, the
    workloads included — to stdout as one kind: List, so that `plan FILE` plans what
    `plan --kubeconfig` plans of the same state. Without a flag the cluster is found as with
    --live. Read-only: GET requests only.

    Exit 0, or 1 when the cluster cannot be read.
    """
    target = live_target(kubeconfig, context, live) or Target()

    def listed(progress: Progress | None) -> LiveRead:
        return read_cluster(target, progress, plan=False)

    try:
        got = read_live(target, listed)
    except ValidationErrors as exc:
        fail(exc.errors)
    except DRASolverError as exc:
        fail([exc])
    print_warnings(got.warnings)
    objects = (doc for k in KINDS_READ for _, _, doc in got.listed.get(k.kind, ()))
    write_list(sys.stdout, objects, output)


def write_list(stream: IO[str], objects: Iterable[dict[str, Any]], fmt: DumpFormat = DumpFormat.yaml) -> None:
    """`objects` as one `kind: List`, written one object at a time (a cluster of 100,000 pods is
    never one string)."""
    if fmt is DumpFormat.json:
        stream.write('{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [')
        for i, obj in enumerate(objects):
            text = json.dumps(obj, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            stream.write(f"{',' if i else ''}\n    {text}")
        stream.write("\n  ]\n}\n")
        return
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when there, for speed
    stream.write("apiVersion: v1\nkind: List\nitems:")
    empty = True
    for obj in objects:
        if empty:
            stream.write("\n")
            empty = False
        stream.write(yaml.dump([obj], Dumper=dumper, sort_keys=False, allow_unicode=True))
    stream.write(" []\n" if empty else "")


__all__ = ["DumpFormat", "dump", "write_list"]
