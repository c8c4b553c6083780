"""Hypothesis profiles: `ci` (the default) and `long` (`--hypothesis-profile=long`); the
workers of pytest-xdist.

`ci` is what the README's test command and CI run: small example counts, derandomized (the same
cases on every run, so a failure is reproducible and the suite's time is known). `long` is for a
thorough run: random cases, 5,000 per test, or `LONG_FACTOR` times its own count where a test
sets one, written `examples(n)` (tests/example_counts.py)."""

from __future__ import annotations

import os

from example_counts import CI_EXAMPLES, LONG_EXAMPLES
from hypothesis import HealthCheck, settings

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist starts its workers with COLUMNS=80; rich fixes a console's width from COLUMNS
    # when it is created (on import of dra_solver.cli), where the tests set COLUMNS per call
    # (CliRunner's env) as in a run without workers.
    os.environ.pop("COLUMNS", None)

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=_QUIET,
)
settings.register_profile(
    "long",
    max_examples=LONG_EXAMPLES,
    deadline=None,
    suppress_health_check=_QUIET,
)
settings.load_profile("ci")
