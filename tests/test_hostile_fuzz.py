"""Issue #16, property: mutated inputs end in exit 0, 1 or 2 with messages, never a crash.

Why at the CLI: a traceback or a death by signal is what a user sees, and both happen only
where the whole path runs — YAML text, loading, validation, the plan, the printing. Valid
inputs (the conformance cases, the bundled example) are mutated the ways hostile or broken
files differ from good ones — a node dropped, an object or list item duplicated, a value
nested deeper, a node replaced by an alias of another (and, now and then, an alias bomb) —
and written out as YAML; `validate` and `plan` run on the text in-process.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml
from conformance_cases import load_cases
from example_counts import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dra_solver.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "gpu-cluster.yaml"
SOURCES: list[list[dict[str, Any]]] = [
    *(case["objects"] for case in load_cases()),
    list(yaml.safe_load_all(EXAMPLE.read_text(encoding="utf-8"))),
]
runner = CliRunner()

KINDS = (
    "DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|DeviceTaintRule|PriorityClass|Pod|Node"
    "|Deployment|ReplicaSet|StatefulSet|Job"
)
NAMED = re.compile(rf"(\b({KINDS}) \S+|document \d+|no objects in )")
"""An error line names the object (`Kind ns/name`), the document, or the empty argument."""


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


def _bomb(levels: int) -> list[Any]:
    """Shared lists: `yaml.safe_dump` writes each level once and aliases it ten times."""
    node: list[Any] = ["lol"] * 10
    for _ in range(levels):
        node = [node] * 10
    return node


@st.composite
def mutated_input(draw: st.DrawFn) -> str:
    """The YAML text of a mutated input (text, not objects: an example that shares a bomb's
    lists would be expanded by its own repr when Hypothesis reports it)."""
    objects = copy.deepcopy(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["drop", "duplicate", "nest", "alias", "bomb", "duplicate-object"]))
        if op == "duplicate-object" and objects:
            objects.append(copy.deepcopy(draw(st.sampled_from(objects))))
            continue
        target = draw(st.sampled_from(objects)) if objects else None
        paths = _paths(target)
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        parent = _get(target, path[:-1])
        key = path[-1]
        if op == "drop":
            del parent[key]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == "nest":
            value = parent[key]
            for _ in range(draw(st.sampled_from([1, 3, 60, 150]))):
                value = [value] if draw(st.booleans()) else {"x": value}
            parent[key] = value
        elif op == "alias":  # shared: an alias in YAML; a cycle when it is an ancestor
            parent[key] = _get(target, draw(st.sampled_from(paths)))
            break  # walking a cycle's paths would not end
        elif op == "bomb":  # the last mutation: walking a bomb's paths would expand it
            parent[key] = _bomb(draw(st.integers(2, 8)))
            break
    return _dump(objects)


def _dump(objects: list[Any]) -> str:
    try:
        return yaml.safe_dump_all(objects, sort_keys=False)
    except RecursionError:  # a node aliased into itself: write it as far as PyYAML can
        return "a: &a [*a]\n"


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_input())
def test_mutated_input_ends_in_messages_never_a_crash(tmp_path_factory: Any, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "input.yaml"
    path.write_text(text, encoding="utf-8")
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exception is None or isinstance(checked.exception, SystemExit), checked.exception
    assert checked.exit_code in (0, 1), checked.stderr
    assert "Traceback" not in checked.stderr
    if checked.exit_code == 1:
        errors = [line for line in checked.stderr.splitlines() if not re.fullmatch(r"\d+ errors?", line)]
        errors = [line for line in errors if not line.startswith("warning:")]
        assert errors and all(NAMED.search(line) for line in errors), checked.stderr
        return
    planned = runner.invoke(app, ["plan", str(path), "--time-limit", "1"])
    assert planned.exception is None or isinstance(planned.exception, SystemExit), planned.exception
    assert planned.exit_code in (0, 1, 2), planned.stderr
    assert "Traceback" not in planned.stderr
