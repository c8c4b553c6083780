"""The distribution: one import package `dra_solver`, its metadata, entry points and docs example."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import dra_solver

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_holds_one_top_level_package_with_py_typed(tmp_path: Path) -> None:
    # Built from a copy of what the wheel is made of: a build in the repository writes its
    # build/ and egg-info there, which two suites running at once would share.
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for top in ("solver", "encoders"):
        shutil.copytree(ROOT / top, source / top, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    # The build backend's PEP 517 hook, as `pip wheel --no-build-isolation` calls it, without
    # pip's own start (more than half the CPU); the test extra brings setuptools and wheel.
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["build-backend"]
    hook = f"import sys, importlib; importlib.import_module({backend!r}).build_wheel(sys.argv[1])"
    subprocess.run(
        [sys.executable, "-c", hook, str(tmp_path / "dist")], cwd=source, check=True, capture_output=True
    )
    (wheel,) = (tmp_path / "dist").glob("dra_solver-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"dra_solver"}
    assert "dra_solver/py.typed" in names
    assert "dra_solver/encoders/__init__.py" in names and "dra_solver/problem/flat.py" in names


def test_version_comes_from_the_package_metadata() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert match and dra_solver.__version__ == match.group(1)


def test_python_dash_m_runs_the_cli() -> None:
    out = subprocess.run([sys.executable, "-m", "dra_solver", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "validate" in out.stdout and "plan" in out.stdout


def test_public_api_is_importable_from_the_top() -> None:
    from dra_solver import AllocationOutcome, Cluster, FeatureGates, Options, PlanOutcome, allocate, plan

    assert all((AllocationOutcome, Cluster, FeatureGates, Options, PlanOutcome, allocate, plan))
    with pytest.raises(AttributeError):
        dra_solver.no_such_name  # noqa: B018


def test_python_api_doc_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for code in blocks:
        exec(compile(code, "docs/python-api.md", "exec"), {})


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "README.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})
