"""The package's source files parsed once per test process, for the tests that read the code
itself (test_architecture, test_verdict, test_doc_references, test_reasons_as_values, test_snapshot,
test_validate_refs).

Why: each of those tests parsed and walked every module of the package again (`ast.parse` and
`ast.walk` over some 200 files, 1.5-3 CPU s a test, about 16 s of the suite); the tree of a file
does not change while the suite runs, so it is parsed once and its nodes listed once. The
collector is off while a file is parsed: the parse makes a tree's objects, none of them garbage,
and in a test process whose heap is large the collections they set off traversed that heap
(0.74 CPU s to parse the package with it off, 1.7-3.4 s with it on, busy, 2026-11-29). A file is
keyed by its path and its modification time and size, so a file written during the run is read
again. The trees are shared: a caller reads them and never changes them."""

from __future__ import annotations

import ast
import functools
import gc
from pathlib import Path

__all__ = ["nodes", "tree"]


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[ast.Module, tuple[ast.AST, ...]]:
    text = path.read_text(encoding="utf-8")
    collecting = gc.isenabled()
    gc.disable()
    try:
        module = ast.parse(text, str(path))
        return module, tuple(ast.walk(module))
    finally:
        if collecting:
            gc.enable()


def _of(path: Path) -> tuple[ast.Module, tuple[ast.AST, ...]]:
    stat = path.stat()
    return _parsed(path.resolve(), stat.st_mtime_ns, stat.st_size)


def tree(path: Path) -> ast.Module:
    """`ast.parse` of the file at `path` (shared: not to be changed)."""
    return _of(path)[0]


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in `ast.walk`'s order."""
    return _of(path)[1]
