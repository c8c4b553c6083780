"""The public surface is declared (issue #41): `dra_solver.__all__` plus the modules and names of
docs/python-api.md, "What is public"; everything else is internal. Why a test: a declaration
that the examples contradict (an example importing an internal name) or that names what no
longer exists tells a user nothing; this keeps the table, `__all__` and the examples in step.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import dra_solver

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "python-api.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def declared(text: str) -> dict[str, set[str]]:
    """Module -> its public names, from the table under "## What is public"."""
    section = text.split("## What is public", 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[str]] = {}
    for module, names in re.findall(r"^\| `([\w.]+)` \| (.+) \|$", section, re.M):
        out[module] = set(re.findall(r"`([\w.]+)`", names))
    return out


def imports(code: str) -> list[tuple[str, str | None]]:
    """(module, name) of each `from M import N` (name None for `import M`) of the package."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dra_solver"):
            out += [(node.module or "", a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.startswith("dra_solver")]
    return out


def outside(found: list[tuple[str, str | None]], public: dict[str, set[str]]) -> list[str]:
    """The imports of `found` that reach past the public surface."""
    top = set(dra_solver.__all__)
    wrong = []
    for module, name in found:
        if module == "dra_solver":
            ok = name is None or name in top
        else:
            ok = module in public and (name is None or name in public[module])
        if not ok:
            wrong.append(f"{module}:{name}")
    return wrong


def test_every_declared_name_exists() -> None:
    public = declared(API.read_text())
    assert public["dra_solver"] == {"__all__"} and len(public) > 5
    for name in dra_solver.__all__:
        assert getattr(dra_solver, name) is not None, name
    for module, names in public.items():
        if module == "dra_solver":
            continue
        loaded = importlib.import_module(module)
        assert [n for n in sorted(names) if not hasattr(loaded, n)] == [], module


def test_all_lists_every_lazy_export() -> None:
    exported = set(dra_solver._EXPORTS) | {"plan", "__version__"}
    assert sorted(dra_solver.__all__) == sorted(exported)


def test_the_docs_examples_import_only_public_names() -> None:
    public = declared(API.read_text())
    wrong = []
    for page in PAGES:
        for code in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            wrong += [f"{page.name}: {w}" for w in outside(imports(code), public)]
    assert wrong == []


def test_an_internal_import_is_found() -> None:
    """The check above can fail: an internal module, or a name a public module does not offer."""
    public = {"dra_solver.preempt": {"evicted_pod"}}
    code = (
        "from dra_solver import plan\n"
        "from dra_solver.preempt import evicted_pod, _victims\n"
        "import dra_solver.planners.firstfit.engine\n"
        "from dra_solver import not_public\n"
    )
    assert outside(imports(code), public) == [
        "dra_solver.preempt:_victims",
        "dra_solver.planners.firstfit.engine:None",
        "dra_solver:not_public",
    ]
