"""Load -> dump -> load round trips over every real object we have (nothing may be lost).

Why: dra-solver reads objects that kubectl printed and writes objects (allocation results)
that users apply back. If a field were dropped, renamed or re-typed on the way through the
pydantic models, a user's object would silently change. The corpus is every object of the
shared conformance cases and every YAML example in the shared reference texts (KEPs,
blog, concepts page) that parses as one of the kinds we read.

The shared directory is `../shared` next to the repository (or $DRA_SHARED); the tests
skip only when it does not exist, and never under CI (`CI` set: CI runs with it beside the
clone, so its absence there is a failure, not a skip).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from yaml_text import read_yaml

from dra_solver.api.load import parse_object
from dra_solver.api.models import KINDS

SHARED = Path(os.environ.get("DRA_SHARED") or Path(__file__).resolve().parents[2] / "shared")
CASES_DIR = SHARED / "conformance" / "cases"
REFERENCE_DIR = SHARED / "reference"

pytestmark = pytest.mark.skipif(
    not SHARED.is_dir() and not os.environ.get("CI"), reason=f"shared directory {SHARED} not found"
)


# --- corpus -----------------------------------------------------------------------------


def case_objects() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    # libyaml where PyYAML has it: read at collection, in every xdist worker (as conformance_cases)
    for path in sorted(CASES_DIR.glob("*.yaml")) if CASES_DIR.is_dir() else []:
        case = read_yaml(path.read_text(encoding="utf-8"))
        for i, doc in enumerate(case.get("objects") or []):
            out.append((f"{path.stem}/objects[{i}]", doc))
    return out


def _yaml_blocks(text: str, markdown: bool) -> list[str]:
    """Candidate YAML texts: fenced ```yaml blocks in Markdown; in the plain-text captures,
    runs of lines from an `apiVersion:` line up to the next blank line."""
    if markdown:
        return re.findall(r"```ya?ml\n(.*?)```", text, flags=re.DOTALL)
    blocks: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("apiVersion:"):
            indent = len(line) - len(line.lstrip())
            block: list[str] = []
            for follow in lines[i:]:
                if not follow.strip():
                    break
                block.append(follow[indent:] if follow[:indent].strip() == "" else follow)
            blocks.append("\n".join(block) + "\n")
    return blocks


def _documents(block: str) -> list[Any]:
    """The documents of a block; when the block as a whole is not valid YAML, each
    `---`-separated part on its own (the captures contain some damaged separators)."""
    try:
        return list(yaml.safe_load_all(block))
    except yaml.YAMLError:
        pass
    docs: list[Any] = []
    # `---`, or a separator damaged by a bad text conversion (dra-concepts.md has `â€“--`)
    for part in re.split(r"(?m)^[^\s:]{0,3}--\s*$", block):
        try:
            docs.extend(yaml.safe_load_all(part))
        except yaml.YAMLError:
            continue
    return docs


def reference_objects() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(REFERENCE_DIR.glob("*")) if REFERENCE_DIR.is_dir() else []:
        text = path.read_text(encoding="utf-8", errors="replace")
        for b, block in enumerate(_yaml_blocks(text, markdown=path.suffix == ".md")):
            for d, doc in enumerate(_documents(block)):
                if not isinstance(doc, dict) or doc.get("kind") not in KINDS:
                    continue
                try:
                    KINDS[doc["kind"]].model_validate(doc)
                except ValidationError:
                    continue  # a fragment ("...") that is not a whole object of ours
                out.append((f"{path.name}#block{b}.doc{d}", doc))
    return out


CORPUS = case_objects() + reference_objects()


# --- tests ------------------------------------------------------------------------------


def test_corpus_is_not_empty() -> None:
    """Guards against the extraction silently finding nothing."""
    names = [name for name, _ in CORPUS]
    assert sum(1 for n in names if "/objects[" in n) > 300
    assert any(n.startswith("kep-6080") for n in names), "the KEP-6080 ResourceClaim example was not found"
    # dra-concepts.md also shows a v1alpha3 DeviceClass with a top-level `name:` and a
    # v1alpha2 template with flat request fields: both are (rightly) rejected since
    # unknown fields and apiVersions are errors (issue #9), so only its Pod is here.
    assert sum(1 for n in names if n.startswith("dra-concepts.md")) >= 1


@pytest.mark.parametrize(("name", "doc"), CORPUS, ids=[name for name, _ in CORPUS])
def test_round_trip(name: str, doc: dict[str, Any]) -> None:
    first = parse_object(doc, name)
    assert first is not None
    dumped = first.dump()
    again = parse_object(dumped, name)
    assert again == first
    assert again is not None and again.dump() == dumped
    assert dumped == doc, f"{name}: the dump differs from the input"


def test_the_shared_corpus_is_there() -> None:
    """An empty corpus would leave the round trips above with nothing to test."""
    assert SHARED.is_dir(), f"shared directory {SHARED} not found"
    assert case_objects(), f"no conformance case objects under {CASES_DIR}"
