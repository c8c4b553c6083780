"""Docs that run (issue #12, point 5): every `dra-solver ...` command shown in a ```sh block of
README.md and docs/*.md runs and exits as documented, and docs/cli.md lists exactly the options
the program has. Why: a documented command that stopped working, or an option the reference
page forgot, is a bug a user meets first; this makes it a failing test instead.

Conventions of the sh blocks: a line's `dra-solver` commands (also after `&&`, also as
`.venv/bin/dra-solver`) are run from the repository root, in-process; `< FILE` is stdin,
`> FILE` writes stdout to a temporary file that later commands of the same page read under
that name; a comment saying `exit N` is the expected exit code (else 0), and one quoting
`placed N of M pods` is checked against the summary line. Usage synopses are in ```text blocks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from dra_solver.cli.main import app, load_command

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
runner = CliRunner()


@dataclass
class Command:
    line: str
    args: list[str]
    stdin: str | None
    stdout: str | None
    exit_code: int
    placed: str | None


def _commands(page: Path) -> list[Command]:
    """The `dra-solver` commands of the page's sh blocks, in page order."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text(), re.S):
        for line in block.splitlines():
            code, _, comment = line.partition("#")
            expected = re.search(r"\bexit (\d+)", comment)
            placed = re.search(r"placed \d+ of \d+ pods?\b", comment)
            for part in code.split("&&"):
                words = shlex.split(part)
                if not words or Path(words[0]).name != "dra-solver":
                    continue
                args, stdin, stdout = [], None, None
                it = iter(words[1:])
                for word in it:
                    if word == "<":
                        stdin = next(it)
                    elif word == ">":
                        stdout = next(it)
                    else:
                        args.append(word)
                out.append(
                    Command(
                        line.strip(),
                        args,
                        stdin,
                        stdout,
                        int(expected.group(1)) if expected else 0,
                        placed.group(0) if placed else None,
                    )
                )
    return out


def test_the_docs_show_commands_to_run() -> None:
    pages = {page.name for page in PAGES if _commands(page)}
    assert {"README.md", "cli.md"} <= pages, pages


@pytest.mark.parametrize("page", [p for p in PAGES if _commands(p)], ids=lambda p: p.name)
def test_every_documented_command_runs_with_its_documented_exit_code(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    written: dict[str, Path] = {}  # files the page's commands wrote, under their names in the page
    for command in _commands(page):
        args = [str(written.get(a, a)) for a in command.args]
        for i, arg in enumerate(args[:-1]):  # a report page is written to the temporary directory
            if arg == "--report":
                args[i + 1] = str(tmp_path / Path(args[i + 1]).name)
        stdin = None
        if command.stdin is not None:
            stdin = Path(written.get(command.stdin, ROOT / command.stdin)).read_text()
        result = runner.invoke(app, args, input=stdin, env={"COLUMNS": "200"})
        assert result.exit_code == command.exit_code, (command.line, result.stderr[-2000:])
        assert not glitches(result.stdout + result.stderr), (
            command.line,
            glitches(result.stdout + result.stderr),
        )
        if command.placed:
            # the summary line: on stderr, or in the table (stdout) with -o table
            assert command.placed in result.stderr + result.stdout, (command.line, result.stderr[-2000:])
        if command.stdout is not None:
            written[command.stdout] = tmp_path / Path(command.stdout).name
            written[command.stdout].write_text(result.stdout)


LONGEST_LINE = 1_000
"""No line of a documented command's output is longer (issue #41: an `explain` line of 7,023
characters named every node). The docs' longest today, about 750, are reasons over a few nodes
each worded (`reasons.words.DETAIL_NODES`), bounded by construction."""
_DOUBLED = re.compile(r"(?<![\w./-])([\w./-]+(?: [\w./-]+)?): \1:")
"""A prefix said twice: `request gpu: gpu:`, `not placed: not placed:`."""
_NODE_TWICE = re.compile(r"(?<![\w./-])([\w.-]+): [^;]*\(on node \1\)")
"""A node named twice in a line that lists nodes: `n1: claim c: ... (on node n1)`."""


def glitches(output: str) -> list[str]:
    """What a user should never see in the output (issue #41's list of seams between places
    that built reasons as sentences): a placeholder (`<node>`, `<nodes>`, `<claim>`), a prefix
    said twice, `1 errors`, a line of thousands of characters."""
    found = [m.group(0) for m in re.finditer(r"<(node|nodes|claim|pod)>", output)]
    found += [m.group(0) for m in _DOUBLED.finditer(output)]
    found += [m.group(0) for m in _NODE_TWICE.finditer(output)]
    found += re.findall(r"\b1 errors\b", output)
    found += [f"a line of {len(line)} characters" for line in output.splitlines() if len(line) > LONGEST_LINE]
    return found


def test_glitches_finds_what_users_saw() -> None:
    """`glitches` catches each kind of glitch the issue lists, and nothing in plain words."""
    assert glitches("claim a/b: request gpu-1: gpu-1: needs 2")
    assert glitches("x: not placed: not placed: its preemptionPolicy is Never")
    assert glitches("(on node <node>)") and glitches("fits on <nodes> alone")
    assert glitches("(1 errors on stderr)") and glitches("x" * (LONGEST_LINE + 1))
    assert glitches("no node fits the pod: n1: claim a/b: request gpu: needs 2 device(s) (on node n1)")
    assert not glitches("claim a/b: request gpu: needs 2 device(s); node n1: fits (1 error on stderr)")


def _documented_options(command: str) -> dict[str, str]:
    """docs/cli.md's option rows of one command's section: option names -> default column."""
    text = (ROOT / "docs" / "cli.md").read_text()
    heading = "## Global options" if command == "" else f"## `dra-solver {command} "
    section = text[text.index(heading) :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`-"):
            names = ", ".join(re.findall(r"`(-[^`]+)`", cells[0]))
            rows[names] = cells[1].strip("`")
    return rows


def _program_options(command: str) -> dict[str, str]:
    """The typer app's options of one command (its `--help` aside): names -> default, as the
    page shows it (empty for flags and options without a default)."""
    params = typer.main.get_command(app).params if command == "" else load_command(command).params
    options: dict[str, str] = {}
    for param in params:
        if param.param_type_name != "option":
            continue
        default = param.default
        shown = "" if default is None or default is False else str(getattr(default, "value", default))
        options[", ".join(param.opts)] = shown
    if command == "":
        options["--help"] = ""
    return options


@pytest.mark.parametrize("command", ["", "validate", "allocate", "plan", "explain", "check", "dump"])
def test_cli_reference_lists_every_option_of_each_command_with_its_default(command: str) -> None:
    assert _documented_options(command) == _program_options(command)


def test_cli_reference_covers_every_command() -> None:
    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    text = (ROOT / "docs" / "cli.md").read_text()
    assert commands == set(re.findall(r"^## `dra-solver (\w+) ", text, re.M))
