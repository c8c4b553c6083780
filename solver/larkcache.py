"""Where lark keeps a parser's analysed tables between runs (its `cache` option).

Why: building a LALR parser for CEL's grammar takes 0.15-0.25 s, and every command that reads
CEL builds two — our compiler's (`cel.parser`) and cel-python's, the checker's
(`check.celpy_env`) — before it does anything (issue #40, "A fast start"). Loading the tables
lark saved takes a few milliseconds. Lark verifies a saved file against a hash of the grammar,
the options, its own version and Python's, and rebuilds (and saves again) when they differ or
the file cannot be read.

Why not lark's `cache=True`: that file sits in the shared temporary directory, and it is a
pickle, which is code: another user could put one there first. This one is in the user's own
cache directory (`$XDG_CACHE_HOME/dra-solver`, else `~/.cache/dra-solver`), used only when the
user owns it and nobody else may write to it; otherwise (or when it cannot be made) the parser
is built as before, nothing saved.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


def cache_file(name: str) -> str | None:
    """The file lark may keep the parser `name` in (`cache=` of `lark.Lark`), or None: build it
    without a cache. Named per lark and Python version, so that environments beside each other
    do not overwrite each other's tables."""
    try:
        import lark

        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        directory = Path(base) / "dra-solver"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
    except (OSError, RuntimeError):  # no home directory, a read-only one, ...
        return None
    getuid = getattr(os, "getuid", None)  # POSIX; elsewhere the directory's mode is all there is
    if (getuid is not None and info.st_uid != getuid()) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    version = f"lark{lark.__version__}-py{sys.version_info[0]}.{sys.version_info[1]}"
    return str(directory / f"{name}-{version}.lark")


__all__ = ["cache_file"]
