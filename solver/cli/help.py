"""Help that reads cleanly (`HelpGroup`), and the click classes the command line needs.

Why here: typer labels every option with its Python type and keeps a docstring's source line
breaks; both are fixed once, on the app's group, so every command — including one added later —
gets clean help without doing anything.
"""

from __future__ import annotations

import inspect

import typer
import typer.core

try:  # typer >= 0.20 vendors click; older releases use click itself
    from typer import _click as click
    from typer._click.exceptions import NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    import click  # type: ignore[no-redef]  # older typer: click itself, the same classes
    from click.exceptions import NoArgsIsHelpError, UsageError  # type: ignore[assignment]  # (as above)


def _reflow(text: str) -> str:
    """Help text with each paragraph on one line: docstrings are wrapped at the source's line
    length, and rich would otherwise keep those breaks and wrap again at the terminal's width
    (ragged lines). A paragraph starting with `\\b` keeps its breaks, as in click."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _tidy_help(command: typer.core.TyperCommand | typer.core.TyperGroup, ctx: click.Context) -> None:
    """Make one command's help read cleanly: typer labels every option with its Python type,
    which for a flag (`--any-node`, `--version`, `--help`) is a meaningless `<bool>` and for a
    repeatable option `<list[str]>`; flags get no label, repeatable options their element's
    (`<str>`, the help says "repeatable"). Idempotent, so every help request may call it."""
    if command.help:
        command.help = _reflow(command.help)
    for param in [*command.params, command.get_help_option(ctx)]:
        if not isinstance(param, typer.core.TyperOption) or param.metavar is not None:
            continue
        if param.is_bool_flag:
            param.metavar = ""
        else:
            label = param.display_type(ctx)
            if label.startswith("<list[") and label.endswith("]>"):
                param.metavar = f"<{label[6:-2]}>"


class HelpGroup(typer.core.TyperGroup):
    """The app's group: tidies the help of itself and of every command (`_tidy_help`), so
    commands added later get clean help without doing anything."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup):
            _tidy_help(command, ctx)
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _tidy_help(self, ctx)
        for command in self.commands.values():
            if isinstance(command, typer.core.TyperCommand | typer.core.TyperGroup):
                _tidy_help(command, ctx)
        super().format_help(ctx, formatter)


__all__ = ["HelpGroup", "NoArgsIsHelpError", "UsageError", "click"]
