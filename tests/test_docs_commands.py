"""Docs that run (issue #12, point 5): every `dra-solver ...` command shown in a ```sh block of
README.md and docs/*.md runs and exits as documented, and docs/cli.md lists exactly the options
the program has. Why: a documented command that stopped working, or an option the reference
page forgot, is a bug a user meets first; this makes it a failing test instead.

Conventions of the sh blocks: a line's `dra-solver` commands (also after `&&`, also as
`.venv/bin/dra-solver`) are run from the repository root, in-process; `< FILE` is stdin,
`> FILE` writes stdout to a temporary file that later commands of the same page read under
that name; a comment saying `exit N` is the expected exit code (else 0), and one quoting
`placed N of M pods` is checked against the summary line. Usage synopses are in ```text blocks.

Each page's commands' outputs (stdout and stderr, timings and temporary paths masked: `masked`)
are compared with a stored golden, `tests/goldens/docs/PAGE.txt`. Why: a glitch in the words
(issue #41: `not placed: not placed:`, a placeholder, a count with the wrong plural) shows in
the docs' examples first, and a reviewer reads the golden's diff. After a deliberate change of
output, regenerate the goldens and read their diff before committing it:

    DRA_SOLVER_UPDATE_GOLDENS=1 .venv/bin/pytest tests/test_docs_commands.py -n 0
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from typer.testing import CliRunner
from yaml_text import SAFE_LOADER

from dra_solver.cli.main import app, load_command

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GOLDENS = ROOT / "tests" / "goldens" / "docs"
UPDATE = os.environ.get("DRA_SOLVER_UPDATE_GOLDENS") == "1"
runner = CliRunner()
"""libyaml's safe loader where PyYAML has it: the same documents as PyYAML's own (the clusters
the commands write are plain YAML: tests/test_load.py, tests/test_blockread.py compare the two
readers), in a tenth of the time — reading them back with the pure-Python loader was about a
quarter of this file's CPU; what is read is the test's data, not what it tests."""


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
    transcript: list[str] = []
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
        stdout = result.stdout if command.stdout is None else _words_of(result.stdout)
        transcript.append(_said(command, result.exit_code, stdout, result.stderr, tmp_path))
    golden = GOLDENS / f"{page.stem}.txt"
    got = "\n".join(transcript)
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert golden.exists(), f"no golden {golden}: run with DRA_SOLVER_UPDATE_GOLDENS=1 (module docstring)"
    want = golden.read_text()
    if got != want:  # the first differing line, for a readable failure; the full diff: regenerate
        pairs = zip(got.splitlines(), want.splitlines(), strict=False)
        at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(got), len(want)))
        raise AssertionError(
            f"{page.name}'s output differs from {golden.relative_to(ROOT)} at line {at + 1}:\n"
            f"  got:  {got.splitlines()[at] if at < len(got.splitlines()) else '(end)'}\n"
            f"  want: {want.splitlines()[at] if at < len(want.splitlines()) else '(end)'}\n"
            "if the change is meant, regenerate (module docstring) and read the diff"
        )


_MASKS = (
    (re.compile(r"\b\d+\.\d+ s\b"), "N s"),  # wall-clock timings: `planned in 0.5 s`, `[plan 0.12 s]`
    (re.compile(r"\bdra-solver \d+\.\d+\.\d+\S*"), "dra-solver VERSION"),
)


def masked(text: str, tmp: Path) -> str:
    """`text` without what differs between runs of the same command: timings, the version,
    the temporary directory."""
    text = text.replace(str(tmp), "$TMP")
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


def _words_of(written: str) -> str:
    """What a golden keeps of a cluster written to a file (`--output-mode full > FILE`, read by
    the page's later commands, which check its rules): how many objects of each kind, and the
    words a user reads in it: the plan's `dra-solver.io/` annotations and the messages of the
    Pods' conditions (an unplaced pod's reason). Why not all of it: thousands of lines of YAML
    the checker already vouches for would drown a golden's diff."""
    items: list[Any] = []
    for doc in yaml.load_all(written, Loader=SAFE_LOADER):
        if isinstance(doc, dict):
            items += doc.get("items") or [] if doc.get("kind") == "List" else [doc]
            if doc.get("kind") == "List":
                items.append({"kind": "List", "metadata": doc.get("metadata") or {}})
    kinds: dict[str, int] = {}
    lines = []
    for item in items:
        kinds[item.get("kind", "?")] = kinds.get(item.get("kind", "?"), 0) + 1
        meta = item.get("metadata") or {}
        name = "/".join(filter(None, (meta.get("namespace"), meta.get("name")))) or item.get("kind")
        for key, value in sorted((meta.get("annotations") or {}).items()):
            if key.startswith("dra-solver.io/"):
                lines.append(f"{name}: {key}: {value}")
        for c in (item.get("status") or {}).get("conditions") or []:
            if isinstance(c, dict) and c.get("message") and item.get("kind") == "Pod":
                lines.append(f"{name}: {c.get('type')} {c.get('reason')}: {c['message']}")
    counted = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    return "\n".join([f"(written: {counted})", *lines])


def _said(command: Command, exit_code: int, stdout: str, stderr: str, tmp: Path) -> str:
    """One command's part of a page's golden: the line, the exit code, stdout, stderr."""
    parts = [f"$ {command.line}", f"[exit {exit_code}]"]
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        if text:
            parts += [f"--- {name}", masked(text, tmp).rstrip("\n")]
    return "\n".join(parts) + "\n"


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
