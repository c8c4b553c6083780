"""Docs that cannot rot (issue #41): every backticked code reference in README.md, docs/*.md and
the docstrings under solver/ and encoders/ resolves. Why: modules move (solver/planners/,
solver/reasons/, planning/snapshot.py, ...) and a reference to the old place sends a reader to
nothing; this makes the stale reference a failing test instead.

What counts as a reference (conservative; everything else -- CLI flags, YAML keys, CEL, shell
commands -- is ignored):

- a path: a token with a `/` ending in .py, .md, .yaml or .j2 (a `*` is a glob that must match
  something). It resolves relative to the repository root, to the referencing file's folder, or
  to solver/, tests/, benchmarks/ or docs/ (so `planners/run.py` means solver/planners/run.py).
- a dotted name: identifiers joined by dots (a trailing `()` allowed) whose first part is
  `dra_solver` or a top-level package/module of the package (solver/*, `encoders`). Short names
  are relative to `dra_solver`. The longest importable module prefix is imported, the rest are
  attributes (class attributes include dataclass, pydantic and annotated fields).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

from parsed_sources import nodes

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dra_solver"
PATH_BASES = ("", "solver", "tests", "benchmarks", "docs")

_BACKTICKED = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_PATH = re.compile(r"^[\w.*/-]*/[\w.*-]+\.(?:py|md|yaml|j2)$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# CEL's own names that look like ours (`cel.bind` is CEL's macro, not dra_solver.cel.bind).
_NOT_OURS = {"cel.bind", "cel.index"}
_FILE_SUFFIXES = {"py", "md", "yaml", "yml", "json", "j2", "html", "txt", "csv", "png", "toml"}


def top_level_names(root: Path = ROOT) -> set[str]:
    """`dra_solver` and the names directly under it: solver/'s packages and modules, encoders."""
    names = {PACKAGE, "solver", "encoders"}
    for child in (root / "solver").iterdir():
        if child.suffix == ".py" and child.stem != "__init__":
            names.add(child.stem)
        elif (child / "__init__.py").is_file():
            names.add(child.name)
    return names


def backticked(text: str) -> Iterator[str]:
    """The backticked tokens of a text (``double`` too), outside fenced code blocks."""
    for match in _BACKTICKED.finditer(_FENCE.sub("", text)):
        yield match.group(2).strip()


def kind(token: str, tops: set[str]) -> str | None:
    """ "path", "name" or None (not a code reference this test checks)."""
    token = token.split("::")[0]
    if "://" not in token and _PATH.match(token):
        return "path"
    name = token.removesuffix("()")
    if name in _NOT_OURS:
        return None
    if _DOTTED.match(name) and name.split(".")[0] in tops and name.rsplit(".", 1)[1] not in _FILE_SUFFIXES:
        return "name"
    return None


def _resolve_path(token: str, source: Path, root: Path) -> bool:
    token = token.split("::")[0]
    for base in (source.parent, *(root / b for b in PATH_BASES)):
        if "*" in token:
            if any(base.glob(token)):
                return True
        elif (base / token).exists():
            return True
    return False


def _self_attributes(klass: type) -> set[str]:
    """The attributes a class's methods assign on `self` (instance attributes)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    except (OSError, TypeError):
        return set()
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def _has_attribute(obj: object, attr: str) -> bool:
    if hasattr(obj, attr):
        return True
    if isinstance(obj, type):
        for klass in obj.__mro__:
            fields = (
                getattr(klass, "__dataclass_fields__", {}),
                getattr(klass, "model_fields", {}),
                klass.__dict__.get("__annotations__", {}),
            )
            if any(attr in f for f in fields) or attr in _self_attributes(klass):
                return True
    return False


def _resolve_name(token: str) -> bool:
    parts = token.removesuffix("()").split(".")
    if parts[0] == "solver":  # the repository's folder for the package
        parts = parts[1:]
    if parts[0] != PACKAGE:
        parts = [PACKAGE, *parts]
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj: object = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name is not None and module_name.startswith(e.name):
                continue
            raise
        for attr in parts[i:]:
            if not _has_attribute(obj, attr):
                return False
            obj = getattr(obj, attr, None)
        return True
    return False


def check(token: str, source: Path, root: Path = ROOT, tops: set[str] | None = None) -> str | None:
    """None if the token is no reference or resolves; else why it is stale."""
    what = kind(token, top_level_names(root) if tops is None else tops)
    if what == "path" and not _resolve_path(token, source, root):
        return "no such file"
    if what == "name" and not _resolve_name(token):
        return f"does not import as {PACKAGE} module/attribute"
    return None


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string statement: docstrings of modules, classes and functions, and the attribute
    docstrings under module and class variables."""
    for node in nodes(path):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            if isinstance(node.value.value, str):
                yield (node.lineno, node.value.value)


def references(root: Path = ROOT) -> Iterator[tuple[Path, int, str]]:
    """(file, line, token) for every backticked token of the docs and docstrings (a token does
    not span lines)."""
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for lineno, line in enumerate(
            _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text()).splitlines(), 1
        ):
            for token in backticked(line):
                yield (page, lineno, token)
    for folder in ("solver", "encoders"):
        for source in sorted((root / folder).rglob("*.py")):
            for lineno, doc in _docstrings(source):
                for offset, line in enumerate(doc.splitlines()):
                    for token in backticked(line):
                        yield (source, lineno + offset, token)


def stale(root: Path = ROOT) -> tuple[int, list[str]]:
    """(how many references were checked, the stale ones as `file:line: token: why`)."""
    tops = top_level_names(root)
    checked, bad = 0, []
    for source, lineno, token in references(root):
        if kind(token, tops) is None:
            continue
        checked += 1
        why = check(token, source, root, tops)
        if why is not None:
            bad.append(f"{source.relative_to(root)}:{lineno}: `{token}`: {why}")
    return checked, bad


def test_every_code_reference_resolves() -> None:
    checked, bad = stale()
    assert checked > 100, f"only {checked} references found: is the extraction broken?"
    assert not bad, "stale references in docs/docstrings:\n" + "\n".join(bad)


def test_checker_catches_broken_references(tmp_path: Path) -> None:
    """The checker is not vacuous: a page with stale paths and names fails, the real ones pass."""
    (tmp_path / "solver" / "planners").mkdir(parents=True)
    (tmp_path / "solver" / "planners" / "run.py").write_text("")
    (tmp_path / "solver" / "planning").mkdir()
    (tmp_path / "solver" / "planning" / "__init__.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "See `solver/planners/run.py`, `planners/run.py`, `solver/nowhere.py`, "
        "`dra_solver.planners.bounds`, `planning.snapshot.Snapshot`, "
        "`dra_solver.planners.no_such_module`, `planning.snapshot.NoSuchClass`, "
        "`--flag`, `spec.devices.requests`, `kubectl apply -f x.yaml`.\n"
        "```sh\ncat `solver/also_nowhere.py`\n```\n"
    )
    (tmp_path / "docs" / "x.md").write_text("`docs/x.md` and `docs/gone.md`\n")
    checked, bad = stale(tmp_path)
    assert checked == 9
    assert [line.split(": ")[1] for line in bad] == [
        "`solver/nowhere.py`",
        "`dra_solver.planners.no_such_module`",
        "`planning.snapshot.NoSuchClass`",
        "`docs/gone.md`",
    ]
