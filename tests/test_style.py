"""Checked style: the README's test command runs ruff's linter and formatter check over the
repository, so CI fails on a finding (DEVELOPERS.md: `.ci/run` runs them through pytest).

Why in the suite rather than a separate CI step: one command, the README's, is what a developer
and CI run; a finding fails it the same way everywhere. ruff is in `[test]`; where it is missing
the tests skip outside CI and fail under `CI=1`, as the browser and Ray tests do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    """The tool installed beside this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed (it is in the [test] extra)")
        pytest.skip(f"{name} is not installed")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


def test_ruff_check_finds_nothing() -> None:
    run = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]


def test_ruff_format_changes_nothing() -> None:
    run = _run(_tool("ruff"), "format", "--check", "--no-cache", ".")
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]


def _link_tree(root: Path) -> Path:
    """`root/dra_solver`: the package as it is imported, built from the repository's layout.

    Why: pyproject.toml maps `dra_solver` to solver/ and `dra_solver.encoders` to encoders/, so
    a tool that reads the tree (mypy) finds no `dra_solver` there; links (one per entry of
    solver/, plus encoders/) spell the package under its import name without copying it."""
    package = root / "dra_solver"
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "solver").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "encoders").symlink_to(ROOT / "encoders", target_is_directory=True)
    return root


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    """mypy over the package with the project's settings ([tool.mypy] in pyproject.toml)."""
    mypy = _tool("mypy")
    tree = _link_tree(tmp_path / "tree")
    cache = ROOT / ".mypy_cache"  # reused between runs (a cold run takes about 10 s)
    run = subprocess.run(
        (mypy, "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), "-p", "dra_solver"),
        cwd=tree,
        env={**os.environ, "MYPYPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]


KNOWN_COMPLEX = ROOT / "tests" / "complexity_known.txt"


def _complex_functions() -> set[str]:
    """`path::function rule` for each function ruff's C901 (complexity over 14) or PLR0913
    (over 8 arguments) flags in the package; the function is named from its `def` line, so
    the list does not churn when lines move."""
    run = _run(_tool("ruff"), "check", "--no-cache", "--select", "C901,PLR0913", "--output-format", "json")
    found: set[str] = set()
    for finding in json.loads(run.stdout or "[]"):
        path = Path(finding["filename"])
        line = path.read_text().splitlines()[finding["location"]["row"] - 1]
        name = re.search(r"def\s+(\w+)", line)
        where = path.relative_to(ROOT).as_posix()
        found.add(f"{where}::{name.group(1) if name else line.strip()} {finding['code']}")
    return found


def test_complexity_and_argument_counts_only_shrink() -> None:
    """No new function past ruff's complexity (C901, 14) or argument-count (PLR0913, 8) limits;
    today's offenders are listed in tests/complexity_known.txt, and one that is fixed must
    leave the list (so it cannot come back unnoticed)."""
    known = {line for line in KNOWN_COMPLEX.read_text().splitlines() if line and not line.startswith("#")}
    found = _complex_functions()
    assert not found - known, f"new offenders (split the function): {sorted(found - known)}"
    assert not known - found, f"fixed: remove from {KNOWN_COMPLEX.name}: {sorted(known - found)}"
