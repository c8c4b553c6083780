"""The layers import one way (docs/architecture.md), the flat layers load nothing heavy, and the
spec is docs/semantics.md: nothing cites a spec outside the repository, every citation names a heading."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from parsed_sources import nodes

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"dra_solver": ROOT / "solver", "dra_solver.encoders": ROOT / "encoders"}

# The table reads by folder: a group is a folder of the package (a room of the data flow on one
# floor), a top-level module, or — where modules belong together without a folder — the modules
# of MEMBERS. Group -> the groups it may import (besides itself), listed in the order of
# docs/architecture.md, ground floor first: each group imports only groups listed before it
# (`test_no_upward_imports`, `test_the_floors_are_one_way`), except a type-only import listed
# in TYPE_ONLY. Inside a group its modules import each other one way too: FLOORS orders those
# that sit on floors of their own (`api.live` above the edge, each floor of `planners/`). A
# module belongs to the group of its longest matching member. The checker must not read
# precompute, the encoders only the flat Problem.
GROUND = "the ground floor"
ALLOWED: dict[str, set[str]] = {
    # errors, feature gates, the stop flag, the one deadline, the executors of independent units,
    # where lark keeps the CEL parsers' tables between runs (MEMBERS)
    GROUND: set(),
    # why a pod is not placed, as a value (`Reason`), and its words (`reasons.words`): found on
    # every floor above, so on the ground floor
    "dra_solver.reasons": set(),
    # the edge: pydantic models, loading, validation, node templates; a live cluster (GET only)
    # and its changes (`plan --watch`) above it (FLOORS)
    "dra_solver.api": {"dra_solver.reasons", GROUND},  # a left-out slice's stand-in holds its problem
    # pools and devices a node sees; why a pool is invalid or incomplete is a fact (`Reason`)
    "dra_solver.inventory": {"dra_solver.api", "dra_solver.reasons", GROUND},
    "dra_solver.cel": {"dra_solver.api", GROUND},
    # precompute: the flat Problem and its constraint kinds (plain data, importable alone:
    # MEMBERS), then everything that builds it, and the node resources a pod asks for
    # (why a device is rejected, a pool skipped: facts, `Reason`, made in problem/)
    "dra_solver.problem.flat": {"dra_solver.reasons", GROUND},
    "dra_solver.problem": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.inventory",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        GROUND,
    },
    # one node's allocation: the reference search and its "why not" in words, the CP-SAT model,
    # the result objects
    "dra_solver.reference": {"dra_solver.problem.flat", "dra_solver.reasons", GROUND},
    "dra_solver.encoders": {"dra_solver.problem.flat"},
    "dra_solver.cpsat": {"dra_solver.encoders", "dra_solver.problem.flat", GROUND},
    "dra_solver.results": {"dra_solver.api", "dra_solver.problem.flat", GROUND},
    # The checker reads the raw objects only: not the inventory, the precompute, the planners,
    # nor our CEL compiler (it evaluates CEL with cel-python, `check.celpy_env`) ...
    "dra_solver.check": {"dra_solver.api", "dra_solver.check.expressions", "dra_solver.reasons", GROUND},
    # ... except the one fallback for expressions cel-python cannot evaluate (listed in docs/status.md).
    "dra_solver.check.expressions": {"dra_solver.api", "dra_solver.cel", "dra_solver.check", GROUND},
    # planning/, the ground floor of the planning code: the plan's data (`job`), what it returns and
    # its reading (`outcome`), every gang rule, pods and nodes in, the snapshot, the ledger,
    # per-pod plans out
    "dra_solver.planning": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.check",
        "dra_solver.problem",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        "dra_solver.results",
        GROUND,
    },
    # output/: reading a PlanOutcome, not deciding (objects, table, report)
    "dra_solver.output": {
        "dra_solver.api",
        "dra_solver.inventory",
        "dra_solver.planning",
        "dra_solver.problem.flat",
        GROUND,
    },
    # planners/: every way a plan is made, one floor per module or folder in it (FLOORS)
    "dra_solver.planners": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.check",
        "dra_solver.cpsat",
        "dra_solver.encoders",
        "dra_solver.inventory",
        "dra_solver.planning",
        "dra_solver.problem",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        "dra_solver.reference",
        GROUND,
    },
    # the one run: plan(), allocate()
    "dra_solver.pipeline": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.planners",
        "dra_solver.planning",
        "dra_solver.problem",
        "dra_solver.reasons",
        GROUND,
    },
    # plans about plans, above the pipeline: `fill`, `--scenario`
    "dra_solver.whatif": {
        "dra_solver.api",
        "dra_solver.output",
        "dra_solver.pipeline",
        "dra_solver.planning",
        GROUND,
    },
    # re-planning: a plan kept between calls and updated incrementally (`Planner`)
    "dra_solver.replan": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.check",
        "dra_solver.cpsat",
        "dra_solver.pipeline",
        "dra_solver.planners",
        "dra_solver.planning",
        "dra_solver.problem",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        GROUND,
    },
    # explain/: `dra-solver explain` / `dra_solver.why`, with the minimal blocking set
    "dra_solver.explain": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.cpsat",
        "dra_solver.encoders",
        "dra_solver.inventory",
        "dra_solver.pipeline",
        "dra_solver.planners",
        "dra_solver.planning",
        "dra_solver.problem",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        "dra_solver.reference",
        GROUND,
    },
    # preempt/: `plan --preempt`, the batch models, and upstream's answer
    "dra_solver.preempt": {
        "dra_solver.api",
        "dra_solver.check",
        "dra_solver.cpsat",
        "dra_solver.encoders",
        "dra_solver.inventory",
        "dra_solver.pipeline",
        "dra_solver.planners",
        "dra_solver.planning",
        "dra_solver.problem",
        "dra_solver.problem.flat",
        "dra_solver.reasons",
        GROUND,
    },
    # the command line: loads, calls, prints
    "dra_solver.cli": {
        "dra_solver.api",
        "dra_solver.cel",
        "dra_solver.check",
        "dra_solver.explain",
        "dra_solver.output",
        "dra_solver.pipeline",
        "dra_solver.planners",
        "dra_solver.planning",
        "dra_solver.preempt",
        "dra_solver.reasons",
        "dra_solver.replan",
        "dra_solver.whatif",
        GROUND,
    },
}

MEMBERS: dict[str, tuple[str, ...]] = {
    GROUND: (
        "dra_solver.errors",
        "dra_solver.interrupt",
        "dra_solver.gates",
        "dra_solver.deadline",
        "dra_solver.executors",
        "dra_solver.larkcache",
    ),
    "dra_solver.problem.flat": ("dra_solver.problem.flat", "dra_solver.problem.kinds"),
}
"""Groups that are not one folder or module: their modules (a group not listed is its name)."""

FLOORS: dict[str, tuple[str, ...]] = {
    GROUND: MEMBERS[GROUND],
    # the edge; a live cluster's reading, which nothing of the edge reads back; its watch
    "dra_solver.api": ("dra_solver.api", "dra_solver.api.live", "dra_solver.api.watch"),
    "dra_solver.problem.flat": MEMBERS["dra_solver.problem.flat"],
    "dra_solver.planners": (
        "dra_solver.planners",  # the package itself, and a module not given its floor yet
        "dra_solver.planners.bounds",  # what a plan may claim: the valid bound, OPTIMAL
        "dra_solver.planners.firstfit",  # engine, batch, resumable, solo, words
        "dra_solver.planners.aggregated",  # classes, patterns, the master model, pools, expansion
        "dra_solver.planners.perdevice",  # the per-device model over every pod and node
        "dra_solver.planners.policy",  # which model plans a job (Reference, Cpsat)
        "dra_solver.planners.crowding",  # reasons of pods left out
        "dra_solver.planners.whatif",  # which node templates a plan adds
        "dra_solver.planners.run",  # one run: first fit, the chosen allocator, the reasons
        "dra_solver.planners.partition",  # `--partitions K`: parts planned apart, then a repair
    ),
}
"""Inside a group, the floors of its modules, lowest first: a module imports its own floor's
modules or those of floors before it (matched by the longest prefix, like the groups)."""

GROUPS_AT_MOST = 25
"""The table stays a page: a room gets a folder, not more rows."""

# Above every floor: the package root (the public API, loaded lazily) and `python -m dra_solver`.
TOP = {"dra_solver", "dra_solver.__main__"}

# (importer, imported): an import under `if TYPE_CHECKING:` only, for annotations, that goes up
# a floor. None today.
TYPE_ONLY: set[tuple[str, str]] = set()

# (importer, imported) modules whose import may close a circle of imports (one under
# TYPE_CHECKING counts as any other): none. A circle is a floor that does not know its place.
CIRCLES: set[tuple[str, str]] = set()

TOP_MODULES = 12
"""At most this many modules at the top of `solver/`: the ground floor, the one-node allocators,
the pipeline and the package's own; everything else lives in a folder of its room."""


@functools.cache
def _modules() -> dict[str, Path]:
    out = {}
    for pkg, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([pkg, *parts])] = path
    return out


def _longest(name: str, prefixes: Iterable[str]) -> str | None:
    """The longest of `prefixes` that is `name` or a package above it."""
    best = None
    for g in prefixes:
        if (name == g or name.startswith(g + ".")) and (best is None or len(g) > len(best)):
            best = g
    return best


@functools.cache
def _group(name: str) -> str | None:
    """The group of ALLOWED a module belongs to (None: TOP, above every floor)."""
    of = {member: group for group in ALLOWED for member in MEMBERS.get(group, (group,))}
    member = _longest(name, of)
    return None if member is None else of[member]


@functools.cache
def _floor(module: str) -> tuple[int, int] | None:
    """Where a module sits: its group's index in ALLOWED, then its floor inside the group
    (FLOORS; 0 where the group has one floor); None above every floor (TOP)."""
    group = _group(module)
    if group is None:
        return None
    inner = FLOORS.get(group, ())
    at = _longest(module, inner)
    return list(ALLOWED).index(group), 0 if at is None else inner.index(at)


def _resolved(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> set[str]:
    """The modules an import statement loads, relative imports resolved against `module`
    (`from . import interrupt` in dra_solver.cpsat is dra_solver.interrupt)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if node.level:
        base = (module if is_package else module.rpartition(".")[0]).split(".")
        base = base[: len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    known = _modules()
    named = {f"{origin}.{a.name}" for a in node.names if f"{origin}.{a.name}" in known}
    return named or {origin}


def _imports_in(body: list[ast.stmt], path: Path, module: str) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Import | ast.ImportFrom):
            out |= _resolved(node, module, path.name == "__init__.py")
    return {m for m in out if m.startswith("dra_solver")}


def _imports(path: Path, module: str) -> set[str]:
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.Import | ast.ImportFrom):
            out |= _resolved(node, module, is_package)
    return {m for m in out if m.startswith("dra_solver")}


def _type_checking_imports(path: Path, module: str) -> set[str]:
    """What a module imports under `if TYPE_CHECKING:` (annotations only)."""
    out: set[str] = set()
    for node in nodes(path):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out |= _imports_in(node.body, path, module)
    return out


@functools.cache
def _edges() -> tuple[tuple[str, str], ...]:
    """Every import of the package's modules (importer, imported), TYPE_CHECKING ones too
    (found once per test process: several tests read them)."""
    return tuple((m, imported) for m, path in _modules().items() for imported in _imports(path, m))


def test_layers_import_one_way() -> None:
    """Each import goes to the importer's own group or one ALLOWED lists for it."""
    wrong = []
    type_only = {m: _type_checking_imports(p, m) for m, p in _modules().items()}
    for module, imported in _edges():
        group, target = _group(module), _group(imported)
        if group is None or target is None or target == group:
            continue  # TOP may import any floor; a group's own modules: FLOORS
        if target not in ALLOWED[group]:
            wrong.append(f"{module} imports {imported}")
        if (group, target) in TYPE_ONLY and imported not in type_only[module]:
            wrong.append(f"{module} imports {imported} outside TYPE_CHECKING")
    assert wrong == []


def test_every_module_has_a_floor() -> None:
    """A new module or folder is placed on a floor, not left free to import anything."""
    assert sorted(m for m in _modules() if _group(m) is None) == sorted(TOP)


def test_the_table_reads_by_folder() -> None:
    """A page of groups: every group is a folder or a module of the package, or MEMBERS says
    which modules it holds, and each FLOORS entry names modules of its own group."""
    assert len(ALLOWED) <= GROUPS_AT_MOST
    known = _modules()
    for group in ALLOWED:
        for member in MEMBERS.get(group, (group,)):
            assert member in known, member
    for group, floors in FLOORS.items():
        assert all(_group(f) == group and f in known for f in floors), group


def test_the_floors_are_one_way() -> None:
    """Each group imports only groups listed before it in ALLOWED (the floors below it), so the
    map has no cycle; the exceptions are TYPE_ONLY and a package reading its own module listed
    after it (the checker's `check.expressions`, which reads the checker back)."""
    order = list(ALLOWED)
    up = [
        f"{group} -> {target}"
        for group, targets in ALLOWED.items()
        for target in targets
        if order.index(target) >= order.index(group)
        and (group, target) not in TYPE_ONLY
        and not target.startswith(group + ".")
    ]
    assert up == []


def _upward(edges: Iterable[tuple[str, str]]) -> list[str]:
    """The imports that run back up: to a later group of ALLOWED, or inside a group to a later
    floor of FLOORS (a package reading its own module listed after it, `check.expressions`,
    and the type-only imports of TYPE_ONLY excepted)."""
    up = []
    for module, imported in edges:
        floor, target = _floor(module), _floor(imported)
        if floor is None or target is None or target <= floor:
            continue
        group, other = list(ALLOWED)[floor[0]], list(ALLOWED)[target[0]]
        if other != group and (other.startswith(group + ".") or (group, other) in TYPE_ONLY):
            continue
        up.append(f"{module} imports {imported}")
    return up


def test_no_upward_imports() -> None:
    """Every import of the package goes to the importer's own floor or one below it: none runs
    back up, between groups or inside one."""
    assert _upward(_edges()) == []


def test_an_upward_import_is_found() -> None:
    """The check above can fail: up a group, and up a floor inside a group, are found; down
    one, along one floor, and the checker reading its fallback are not."""
    edges = [
        ("dra_solver.errors", "dra_solver.cli.main"),  # the ground floor reads the CLI
        ("dra_solver.planners.bounds", "dra_solver.planners.run"),  # up a floor of planners/
        ("dra_solver.api.models", "dra_solver.api.live"),  # the edge reads the live cluster
        ("dra_solver.errors", "dra_solver.gates"),  # up a floor of the ground floor
        ("dra_solver.cli.main", "dra_solver.errors"),
        ("dra_solver.planners.run", "dra_solver.planners.bounds"),
        ("dra_solver.planners.firstfit.batch", "dra_solver.planners.firstfit.engine"),
        ("dra_solver.check", "dra_solver.check.expressions"),
    ]
    assert _upward(edges) == [f"{a} imports {b}" for a, b in edges[:4]]


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (under TYPE_CHECKING too), without CIRCLES."""
    known = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for imported in _imports(path, module):
            while imported not in known and "." in imported:  # a name of a module: the module
                imported = imported.rpartition(".")[0]
            if imported in known and imported != module and (module, imported) not in CIRCLES:
                targets.add(imported)
        graph[module] = targets
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    """No module imports itself through others, also not for annotations only (TYPE_CHECKING)."""
    assert _circles(_import_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check above can fail: a circle of three and one of two are found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    assert sorted(_circles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_few_modules_at_the_top() -> None:
    top = sorted(p.name for p in (ROOT / "solver").glob("*.py"))
    assert len(top) <= TOP_MODULES, top


def test_no_function_level_imports_of_the_package() -> None:
    """Cycles are not dodged by importing inside functions."""
    hidden = []
    for module, path in _modules().items():
        for node in nodes(path):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import | ast.ImportFrom) and any(
                        m.startswith("dra_solver") for m in _imports_of(inner)
                    ):
                        hidden.append(f"{module}.{node.name}")
    assert hidden == []


def _imports_of(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module or ""] if not node.level else ["dra_solver"]


def test_encoders_load_no_pydantic_cel_or_checker() -> None:
    code = (
        "import dra_solver.encoders, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'celpy', 'lark') "
        "or m.startswith(('dra_solver.check', 'dra_solver.cel', 'dra_solver.api'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_definition_of_the_default_namespace() -> None:
    """`ObjectMeta.ns` and `TypeMeta.key` say once that an unset namespace is `default`; a
    second spelling of that rule could drift (issue #28: it was written 35 times)."""
    models = ROOT / "solver" / "api" / "models.py"
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for top in ("solver", "encoders")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != models
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"namespace or [\"']default[\"']", line)
    ]
    assert found == []


def test_no_old_import_names_remain() -> None:
    """One import name: `solver` and `encoders` are taken on PyPI by unrelated projects."""
    stale = []
    for top in ("solver", "encoders", "tests", "benchmarks", "docs"):
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in (".py", ".md") or not path.is_file():
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                text = line.strip()
                if text.startswith(("import solver", "from solver", "import encoders", "from encoders")):
                    stale.append(f"{path.relative_to(ROOT)}:{n}")
    readme = (ROOT / "README.md").read_text()
    stale += [f"README.md: {w}" for w in ("from solver", "import solver", "from encoders") if w in readme]
    assert stale == []


def test_every_constraint_kind_has_an_encoding() -> None:
    """A kind declared for precompute and the reference search is also encoded for CP-SAT."""
    from dra_solver.encoders.constraints import ENCODINGS
    from dra_solver.problem.kinds import KINDS

    assert set(ENCODINGS) == set(KINDS)


def test_every_encoder_family_is_built_and_declares_its_device_key() -> None:
    """A module with rules over devices is built only through `encoders.families`, which
    requires the facts it reads of a device: forgetting them would merge devices it tells apart."""
    from dra_solver.encoders.families import FAMILIES

    helpers = {"__init__", "families", "groups", "model", "objective", "solution", "symmetry", "variables"}
    with_rules = {p.stem for p in (ROOT / "encoders").glob("*.py") if p.stem not in helpers}
    assert {f.__name__.rsplit(".", 1)[1] for f in FAMILIES} == with_rules
    assert all(callable(getattr(f, "device_key", None)) and callable(f.add) for f in FAMILIES)


# --- the spec lives in the repository (issue #28, item 5) ------------------------------------

SPEC = ROOT / "docs" / "semantics.md"
OUTSIDE_SPEC = "UPSTREAM" + "-SEMANTICS"  # split, so that this file does not mention it
CITATION = re.compile(r"docs/semantics\.md`?\s*[,(]\s*\"([^\"]+)\"")


def _repository_texts() -> dict[str, str]:
    """Every text file under solver/, encoders/, tests/, benchmarks/, docs/, and README.md."""
    paths = [ROOT / "README.md"]
    for top in ("solver", "encoders", "tests", "benchmarks", "docs"):
        paths += sorted(p for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    texts = {}
    for path in paths:
        if path.suffix in (".py", ".md", ".yaml", ".yml", ".json", ".toml", ".txt", ".sh"):
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def test_no_citation_of_the_outside_spec() -> None:
    """The semantics are stated in docs/semantics.md; a spec outside the repository is not
    something a maintainer has, so nothing cites it."""
    texts = _repository_texts()
    assert len(texts) > 100
    assert [name for name, text in texts.items() if OUTSIDE_SPEC in text] == []


def _headings(text: str) -> list[str]:
    return [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]


def _cites(heading: str, cited: str) -> bool:
    """A citation names a heading, or its beginning up to a word boundary (`"Gangs"` for
    "Gangs: PodGroups placed all or nothing (issue #19, KEP-4671)")."""
    return heading == cited or heading.startswith((cited + " ", cited + ":"))


def test_every_citation_of_semantics_names_a_heading() -> None:
    """A citation — `docs/semantics.md`, a comma or an opening parenthesis, then a heading in
    double quotes, also broken over lines or comment lines — names a heading of
    docs/semantics.md, so renaming a section cannot leave its citations pointing nowhere."""
    headings = _headings(SPEC.read_text())
    found = 0
    dangling = []
    for name, text in _repository_texts().items():
        joined = re.sub(r"\s*\n\s*(?:#+\s*)?", " ", text)  # continuation lines, comment markers
        for match in CITATION.finditer(joined):
            found += 1
            cited = " ".join(match.group(1).split())
            if not any(_cites(h, cited) for h in headings):
                dangling.append(f'{name}: "{cited}"')
    assert found >= 30  # the pattern still finds the citations
    assert dangling == []
