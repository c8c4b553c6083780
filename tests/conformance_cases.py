"""Loading and comparing the conformance cases (tests/conformance/cases and
tests/conformance/upstream-diff, copied from ../shared/conformance).

Format: tests/conformance/README.md. Shared by the API and CLI conformance tests.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

from yaml_text import read_yaml

from dra_solver.api.quantity import Quantity

CASES_DIR = Path(__file__).parent / "conformance" / "cases"
# Disagreements with the real upstream allocator, shrunk (issue #42); same format as cases/.
UPSTREAM_DIFF_DIR = Path(__file__).parent / "conformance" / "upstream-diff"


def load_cases() -> list[dict[str, Any]]:
    """Every case (the shared corpus, then upstream-diff's), parsed by libyaml where PyYAML has
    it (four test modules load the cases when they are collected, in each xdist worker:
    pure-Python parsing took seconds of it)."""
    paths = [*sorted(CASES_DIR.glob("*.yaml")), *sorted(UPSTREAM_DIFF_DIR.glob("*.yaml"))]
    return [read_yaml(p.read_text()) for p in paths]


def _q(v: object) -> Fraction:
    return Quantity.parse(v if isinstance(v, (str, int)) else str(v)).as_fraction()


def normalise(results: list[dict[str, Any]]) -> list[tuple]:
    """Comparable form of a claim's device results (shareID ignored, quantities by value)."""
    out = []
    for r in results:
        consumed = tuple(sorted((k, _q(v)) for k, v in (r.get("consumedCapacity") or {}).items()))
        out.append((r["request"], r["driver"], r["pool"], r["device"], consumed))
    return out


def per_request_counts(results: list[dict[str, Any]]) -> Counter:
    return Counter(r["request"].split("/")[0] for r in results)


def per_subrequest_counts(results: list[dict[str, Any]]) -> Counter:
    """Devices per result name (`req` or `req/sub`): what CP-SAT must match even where it may
    choose other devices — the same firstAvailable subrequests as upstream (its objective
    prefers the fewest fallback steps, then upstream's search order among equal totals)."""
    return Counter(r["request"] for r in results)


def gates_arg(case: dict[str, Any]) -> str:
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in (case.get("featureGates") or {}).items())
