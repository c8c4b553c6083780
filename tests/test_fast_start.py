"""A fast start (issue #40, §4): each command imports only what it uses. Asserted on the import
graph, not on a time: commands run in a fresh interpreter, which then lists the modules loaded.
`--version` and `--help` load nothing of the solver; `validate` no CP-SAT; no command here the
report's page (jinja2, plotly), the Kubernetes client or Ray.

The commands that must leave modules out share one fresh interpreter (`IN_TURN`), run one after
another, each followed by the list of every module loaded so far: a module missing from that
list was loaded by none of the steps up to it, so each "loads no X" holds for its own command
alone too (a step run after others can only see more modules, never fewer), for one start-up's
imports instead of seven."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from dra_solver.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "docs" / "examples" / "gpu-cluster.yaml")

# Run steps in turn in this interpreter's process — a command line (its output swallowed: rich's
# consoles resolve sys.stdout/sys.stderr at print time) or modules to import — and after each
# print its exit code (None for imports) and every module loaded so far.
IN_TURN = """
import contextlib, importlib, io, json, sys
for kind, args in json.loads(sys.argv[1]):
    code = None
    if kind == "import":
        for name in args:
            importlib.import_module(name)
    else:
        sys.argv = ["dra-solver", *args]
        from dra_solver.cli import run
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                run()
            except SystemExit as exc:
                code = exc.code
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# Loaded by the commands that use them, never at start: CP-SAT (with numpy and pandas), the
# report's template engine and charts, the Kubernetes client, Ray.
NEVER_AT_START = ("ortools", "numpy", "pandas", "jinja2", "plotly", "kubernetes", "ray")
# Reading the input (the models, YAML, our CEL and cel-python's parser): not for --version/--help.
INPUT = ("pydantic", "yaml", "celpy", "lark")


def _in_turn(steps: list[tuple[str, list[str]]]) -> list[tuple[int | None, set[str]]]:
    """(exit code, every module loaded so far) after each step, from one fresh interpreter."""
    run = subprocess.run(
        [sys.executable, "-c", IN_TURN, json.dumps(steps)], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(results) == len(steps), run.stdout[-3000:]
    return [(r["code"], set(r["modules"])) for r in results]


def _loaded(*args: str) -> tuple[int | None, set[str]]:
    """One command line alone in a fresh interpreter."""
    (result,) = _in_turn([("run", list(args))])
    return result


def _tops(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(names))


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_load_nothing_of_the_solver(args: list[str]) -> None:
    code, modules = _loaded(*args)
    assert code in (0, 1)  # `dra-solver` alone prints the help and exits 1
    assert _tops(modules, NEVER_AT_START + INPUT) == []
    solver = sorted(m for m in modules if m.startswith("dra_solver."))
    assert solver == [
        "dra_solver.cli",
        "dra_solver.cli.console",
        "dra_solver.cli.help",
        "dra_solver.cli.main",
        "dra_solver.deadline",  # --timeout counts from the process's start (`deadline.process_run`)
        "dra_solver.errors",
        "dra_solver.interrupt",
    ]


def test_each_command_is_listed_with_the_first_paragraph_of_its_docstring() -> None:
    """`--help` lists the commands from `COMMANDS` without importing them; the lines there are
    their docstrings' first paragraphs (edit both together)."""
    for name, line in COMMANDS.items():
        function = getattr(import_module(f"dra_solver.cli.{name}"), name)
        first = (inspect.getdoc(function) or "").split("\n\n")[0]
        assert line == " ".join(first.split()), name


Loaded = dict[str, tuple[int | None, set[str]]]
"""A step's name -> its exit code (None for imports) and every module loaded up to it."""

# Each step of `IN_TURN`: a name, and a command line to run or modules to import.
STEPS: list[tuple[str, str, list[str]]] = [
    ("validate", "run", ["validate", EXAMPLE]),
    ("plan-reference", "run", ["plan", EXAMPLE, "--allocator", "reference"]),
    ("models", "import", ["dra_solver.cli.plan", "dra_solver.preempt.model", "dra_solver.replan.planner"]),
    (
        "allocate",
        "run",
        ["allocate", EXAMPLE, "--node", "node-1", "--feature-gates", "DRADerivedAttributes=true"],
    ),
    ("plan", "run", ["plan", EXAMPLE]),
    ("explain", "run", ["explain", EXAMPLE, "--claim", "gpu-with-nic"]),
    ("check", "run", ["check", EXAMPLE]),
]


@pytest.fixture(scope="module")
def in_turn() -> Loaded:
    """Step name -> (exit code, every module loaded up to and with that step), from one fresh
    interpreter that runs `STEPS` in order."""
    results = _in_turn([(kind, args) for _, kind, args in STEPS])
    return {name: result for (name, _, _), result in zip(STEPS, results, strict=True)}


def test_validate_loads_no_cp_sat_and_no_checker(in_turn: Loaded) -> None:
    code, modules = in_turn["validate"]  # the first step: as in an interpreter of its own
    assert code == 0
    assert _tops(modules, (*NEVER_AT_START, "celpy")) == []
    assert not any(
        m.startswith(("dra_solver.cpsat", "dra_solver.encoders", "dra_solver.check")) for m in modules
    )


def test_a_plan_that_builds_no_model_loads_no_cp_model(in_turn: Loaded) -> None:
    """CP-SAT's Python layer (`cp_model`, which imports pandas and numpy) loads when a model is
    built (`cpsat.new_cp_model`, `cpsat.cp_solver`), not with the planners and the CLI: first
    fit alone never loads it, so neither does a run cut short before its search."""
    code, modules = in_turn["plan-reference"]  # `plan --allocator reference`, after `validate`
    assert code in (0, 2)
    assert "ortools.sat.python.cp_model" not in modules
    assert _tops(modules, ("pandas", "numpy")) == []


def test_the_models_modules_load_no_cp_model_until_a_model_is_built(
    in_turn: Loaded,
) -> None:
    """Importing every module that builds a CP-SAT model (the planners, preemption, the local
    re-solve of `Planner.update`) loads the solver's extension only, not `cp_model`."""
    _, modules = in_turn["models"]  # imported after the first-fit `plan` above, before any model
    assert sorted(m for m in ("ortools.sat.python.cp_model", "pandas", "numpy") if m in modules) == []


@pytest.mark.parametrize("command", ["allocate", "plan", "explain", "check"])
def test_commands_load_no_report_no_kubernetes_no_ray(in_turn: Loaded, command: str) -> None:
    """The report's page (jinja2, plotly), the live-cluster client and Ray load only when
    `--report`, `--kubeconfig`/`--live` and `--executor ray` ask for them."""
    _, modules = in_turn[command]  # this command's step and every step before it
    assert _tops(modules, ("jinja2", "plotly", "kubernetes", "ray")) == []


# --- the CEL parsers' tables, kept between runs (`dra_solver.larkcache`) -----------------------

# Parse with both parsers; print the trees (ours as nested lists) and lark's log on stderr.
PARSE = """
import json, logging, sys
import lark
logging.getLogger("lark").setLevel(logging.DEBUG)
from dra_solver.cel.ast import Node
from dra_solver.cel.parser import parse
from dra_solver.check.celpy_env import _ENV

def dump(node):
    if isinstance(node, Node):
        slots = [s for c in type(node).__mro__ for s in getattr(c, "__slots__", ())]
        return [type(node).__name__, *(dump(getattr(node, s)) for s in slots)]
    if isinstance(node, lark.Tree):  # a rule's name is a str, or a Token (a str) when built
        return [str(node.data), *(dump(n) for n in node.children)]
    if isinstance(node, lark.Token):
        return [node.type, str(node), node.line, node.column]
    if isinstance(node, (list, tuple)):
        return [dump(n) for n in node]
    return repr(node)

texts = json.loads(sys.argv[1])
print(json.dumps([[dump(parse(t)), dump(_ENV.compile(t))] for t in texts]))
"""
TEXTS = [
    'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model in ["a", "b"]',
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0",
    "[1, 2, 3].all(x, x > 0) ? size(device.driver) : -1",
]


def _parse_in(cache_home: Path) -> tuple[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    run = subprocess.run(
        [sys.executable, "-c", PARSE, json.dumps(TEXTS)], env=env, capture_output=True, text=True, check=True
    )
    return run.stdout, run.stderr


def test_the_parsers_tables_are_saved_once_then_loaded(tmp_path: Path) -> None:
    first, said = _parse_in(tmp_path)
    saved = sorted(p.name.split("-lark")[0] for p in (tmp_path / "dra-solver").iterdir())
    assert saved == ["cel-parser", "celpy-parser"]
    assert said.count("Saving grammar to cache") == 2 and "Loading grammar from cache" not in said
    again, said = _parse_in(tmp_path)
    assert said.count("Loading grammar from cache") == 2 and "Saving" not in said
    assert again == first  # the same trees from the loaded tables
    assert (tmp_path / "dra-solver").stat().st_mode & 0o077 == 0


def test_without_a_private_directory_the_parsers_are_built_as_before(tmp_path: Path) -> None:
    """A cache directory others may write to is not read (its files are pickles): nothing is
    saved, and the parsers are built as they were without a cache; a cache home that cannot
    be made is the same."""
    shared = tmp_path / "dra-solver"
    shared.mkdir()
    shared.chmod(0o777)
    built, said = _parse_in(tmp_path)
    assert list(shared.iterdir()) == [] and "cache" not in said
    (tmp_path / "file").write_text("")
    assert _parse_in(tmp_path / "file")[0] == built
