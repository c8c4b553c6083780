"""The first page (issue #41, "A first page, and docs that cannot rot"): README.md stays a page,
the output it shows is what its commands print, and its links lead somewhere.

Why: the README's ```text blocks show commands with their output, which no other test runs
(`tests/test_docs_commands.py` runs the ```sh blocks), and its feature table links into docs/ by
heading anchors, which a renamed heading breaks without a sound.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dra_solver.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINES_AT_MOST = 150
ELLIPSIS = "..."
_SECONDS = re.compile(r"planned in \d+(\.\d+)? s")


def _shown() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) of each ```text block opened by `$ dra-solver`."""
    out = []
    for block in re.findall(r"```text\n(.*?)```", README.read_text(), re.S):
        first, *rest = block.rstrip("\n").split("\n")
        if first.startswith("$ dra-solver "):
            out.append((first.removeprefix("$ "), rest))
    return out


def _in_order(shown: list[str], printed: list[str]) -> str | None:
    """None when every shown line (but `...`, which stands for lines left out) is a printed line,
    in the printed order; else the first shown line that is not."""
    at = 0
    for line in shown:
        if line == ELLIPSIS:
            continue
        want = _SECONDS.sub("planned in N s", line)
        while at < len(printed) and _SECONDS.sub("planned in N s", printed[at]) != want:
            at += 1
        if at == len(printed):
            return line
        at += 1
    return None


def test_the_readme_is_a_page() -> None:
    assert len(README.read_text().splitlines()) <= LINES_AT_MOST


def test_the_readme_shows_output_its_commands_print(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _shown()
    assert len(shown) >= 2  # the two commands, each with its output
    monkeypatch.chdir(ROOT)
    for command, lines in shown:
        result = CliRunner().invoke(app, shlex.split(command)[1:], env={"COLUMNS": "200"})
        printed = (result.stdout + result.stderr).splitlines()
        assert _in_order(lines, printed) is None, (command, _in_order(lines, printed))


def test_a_line_not_printed_is_found() -> None:
    """The comparison above can fail: a changed line, or lines out of order, are found."""
    printed = ["a", "b", "placed 1 of 1 pod, planned in 0.3 s", "c"]
    assert _in_order(["a", ELLIPSIS, "placed 1 of 1 pod, planned in 9.0 s", "c"], printed) is None
    assert _in_order(["a", "x"], printed) == "x"
    assert _in_order(["c", "a"], printed) == "a"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_every_link_of_the_readme_leads_to_a_file_and_heading() -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    assert links
    broken = []
    for link in links:
        if "://" in link:
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        if not target.is_file() or (anchor and anchor not in _anchors(target)):
            broken.append(link)
    assert broken == []


def test_a_slug_is_githubs() -> None:
    assert _slug(" `dra-solver plan PATH...`") == "dra-solver-plan-path"
    assert _slug("Defragmenting GPU nodes with the fewest moves (issue #43)") == (
        "defragmenting-gpu-nodes-with-the-fewest-moves-issue-43"
    )
    assert _slug("Today's device shapes") == "todays-device-shapes"
