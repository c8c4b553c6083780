"""Example counts of the property tests, by Hypothesis profile (tests/conftest.py)."""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 100
"""Examples of a property test that sets no count of its own, under `ci`."""
LONG_EXAMPLES = 5000
"""The same under `long`."""
LONG_FACTOR = 10
"""How many times more examples `long` runs of a test that sets its own count."""


def examples(ci: int) -> int:
    """A property test's `max_examples`: `ci` under the `ci` profile (the default),
    LONG_FACTOR times that under `long`. Read when the test module is imported, after the
    profile given on the command line is loaded."""
    return ci * LONG_FACTOR if settings.get_current_profile_name() == "long" else ci


def sized(ci: int, long: int) -> int:
    """A generated case's size where the rule it shows holds at any size and the big one is the
    thorough repeat: `ci` under the `ci` profile, `long` under `long`."""
    return long if settings.get_current_profile_name() == "long" else ci
