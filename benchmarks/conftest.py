"""Benchmarks run in one process: the suite's `-n auto` (pyproject.toml's addopts, pytest-xdist)
would spread them over workers that compete for the cores they measure, and pytest-benchmark
turns itself off under xdist. So a run of benchmarks/ takes no workers, whatever `-n` says."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) is not None:
        config.option.numprocesses = 0
        config.option.dist = "no"
