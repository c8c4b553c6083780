"""Reading block YAML of plain data line by line, as libyaml and the safe constructor read it.

Why: reading a 50,000-pod cluster spent most of its time in libyaml's binding — an event and two
marks per scalar, a node per value, then a walk over the nodes (`bounded.construct_tree`) —
although such a file is the simplest YAML there is: what `kubectl get -o yaml`, PyYAML or this
project's own output (`api.emit`) write. Each line of it is `key: value`, `key:` (a block
below, an indentless sequence, or null), `- item` (an item that may start a mapping or
another sequence on the same line), a long value continued on lines indented further.

`read_documents` reads exactly that subset and returns what libyaml with `construct_tree`
returns for it — the same dicts (keys in order, a repeated key keeping its first place and
its last value), lists and scalars (a plain scalar resolved and constructed by the loader's
own resolver and constructors, a single-quoted one a string, folded lines joined by a
space). At the first line it is not sure of — a comment, a tag, an anchor or alias, a flow
collection other than `{}` and `[]`, a double-quoted or block scalar, a tab, a non-ASCII or
control character, an empty line, a directive or `...`, a document past `MAX_OBJECT_CHARS` or
nested past `MAX_DEPTH` — it returns None and the caller reads the text with libyaml as
before, which also reports every error. `tests/test_blockread.py` compares the two on random
documents and on texts that must be declined.

A block read once is not read again: a cluster's objects repeat the same blocks thousands of
times (a GPU's attributes and counters on every node of a shape, a pod template's containers),
and what a block under a `key:` reads as depends only on its lines. `_Reader.below` remembers
the blocks it read (`_Blocks`) and, where the same lines come again, ends in the same place
and gives a copy of what they read as: every document its own dicts and lists, as libyaml gives
them. The copy is `marshal`'s (its C code writes and reads dicts, lists, strings, ints, floats,
booleans and None exactly, 5 times faster than a copy made in Python).
"""

from __future__ import annotations

import marshal
from operator import sub
from typing import Any

from yaml.nodes import ScalarNode

from .bounded import MAX_DEPTH, MAX_OBJECT_CHARS, stop_reading_if_asked

__all__ = ["read_documents"]

_OUTSIDE = (" #", "\n#", "\n\n", "\n...", "\n%", "\n--- ", "\n---\t")
"""What sends the whole text to libyaml, found before reading: a comment, an empty line inside
the text, a document end marker, a directive, a `---` with something after it; so does a
character other than printable ASCII and line breaks (`_printable`). (A line of spaces only is
refused by `_Reader`; anchors, tags, flow collections, quoted and block scalars where they
appear.)"""
_FIRST = frozenset("#,[]{}&*!|>'\"%@`?:-")
"""A plain scalar starting with one of these is refused (libyaml's indicators; `-`, `?` and
`:` only matter before a space, but nothing here needs them)."""
_STR = "tag:yaml.org,2002:str"
_MISSING: Any = object()
MIN_BLOCK_LINES = 3
"""Blocks shorter than this are read again each time: remembering them costs what reading does."""
MAX_BLOCKS_PER_START = 16
"""Blocks remembered per first line: a block that starts alike but differs below (a pod's
`metadata:` block, a node's `spec:`) is compared with at most this many (`_Reader.below`)."""

_Blocks = dict[tuple[str, int, int], list[tuple[list[str], bytes]]]
"""(first line, column of the key above, depth) -> [(the block's lines, what they read as,
marshalled)]."""


class _Decline(Exception):
    """Not the subset: libyaml reads this text."""


class _Reader:
    def __init__(self, loader: Any, lines: list[str]) -> None:
        self.loader = loader
        # `str.lstrip` strips spaces only here: the other whitespace is control characters,
        # which `read_documents` declines before
        self.contents = list(map(str.lstrip, lines))
        if "" in self.contents:
            raise _Decline  # a line of spaces only
        self.cols = list(map(sub, map(len, lines), map(len, self.contents)))
        self.i = 0
        self.pending: tuple[int, str] | None = None
        """(column, content) of the rest of line `i` after a `- ` read on it."""
        self.scalars: dict[str, Any] = {}
        self.lines = lines
        self.blocks: _Blocks = {}
        self.resolved_starts: frozenset[str] | _Everything = _Everything()
        """First characters a plain scalar must be resolved for (`_resolved_starts`)."""

    def peek(self) -> tuple[int, str] | None:
        if self.pending is not None:
            return self.pending
        if self.i >= len(self.cols):
            return None
        return self.cols[self.i], self.contents[self.i]

    def advance(self) -> None:
        self.pending = None
        self.i += 1

    def collection(self, col: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _Decline
        at = self.peek()
        assert at is not None
        if at[1].startswith("- "):
            return self.sequence(col, depth)
        return self.mapping(col, depth)

    def sequence(self, col: int, depth: int) -> list[Any]:
        items: list[Any] = []
        while (at := self.peek()) is not None and at[0] == col and at[1].startswith("- "):
            rest = at[1][2:]
            if not rest or rest[0] == " ":
                raise _Decline
            if rest.startswith("- ") or _key_end(rest) is not None:
                self.pending = (col + 2, rest)
                items.append(self.collection(col + 2, depth + 1))
            else:
                self.advance()
                items.append(self.value(rest, col, depth + 1))
        return items

    def mapping(self, col: int, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        cols, contents, n = self.cols, self.contents, len(self.cols)
        scalars = self.scalars
        while True:
            if self.pending is not None:
                at, content = self.pending
            elif self.i < n:
                at, content = cols[self.i], contents[self.i]
            else:
                break
            if at != col or content.startswith("- "):
                break
            colon = content.find(": ") if content[0] != "'" else 0
            if colon == -1 and content[-1] == ":":
                colon = len(content) - 1  # `key:`
            if colon > 0:  # the usual key: plain, before the line's first `: ` (`_key_end`)
                raw, after = content[:colon], content[colon + 1 :]
                key = scalars.get(raw, _MISSING)
                if key is _MISSING:
                    key = self.plain(raw)
            else:
                key, after = self.key(content)
            self.pending = None
            self.i += 1
            i = self.i
            if after == "":
                value = self.below(col, depth)
            elif after[0] != " " or len(after) < 2 or after[1] == " ":
                raise _Decline
            elif (i >= n or cols[i] <= col) and after[1] not in "'{[":
                value = scalars.get(after[1:], _MISSING)  # the usual line: `key: plain`
                if value is _MISSING:
                    value = self.plain(after[1:])
            else:
                value = self.value(after[1:], col, depth + 1)
            out[key] = value
        return out

    def key(self, content: str) -> tuple[Any, str]:
        """The mapping key `content` starts with, and what follows its `:`."""
        end = _key_end(content)
        if end is None:
            raise _Decline
        raw = content[:end]
        if raw[0] == "'":
            return self.quoted(raw), content[end + 1 :]
        key = self.scalars.get(raw, _MISSING)
        if key is _MISSING:
            key = self.plain(raw)
        return key, content[end + 1 :]

    def below(self, col: int, depth: int) -> Any:
        """The value of a `key:` that ends its line (at column `col`): the block below it, an
        indentless sequence, or null. A block of the same lines as one read before (same place:
        the key's column and depth) is that block's value again, copied (module docstring)."""
        cols, contents, i = self.cols, self.contents, self.i
        n = len(cols)
        if i < n and (cols[i] > col or (cols[i] == col and contents[i].startswith("- "))):
            if depth + 1 > MAX_DEPTH:
                raise _Decline
            lines = self.lines
            start = (lines[i], col, depth)
            known = self.blocks.get(start)
            if known is not None:
                for block, value in known:
                    end = i + len(block)
                    # the same lines, and the next one not in the block (nor in an indentless
                    # sequence at `col`): where reading them ended
                    if lines[i:end] == block and (
                        end >= n
                        or cols[end] < col
                        or (cols[end] == col and not contents[end].startswith("- "))
                    ):
                        self.i = end
                        return marshal.loads(value)
            value = self._block(col, depth)
            if self.i - i >= MIN_BLOCK_LINES and self.pending is None:
                if known is None:
                    known = self.blocks[start] = []
                if len(known) < MAX_BLOCKS_PER_START:
                    self._remember(known, lines[i : self.i], value)
            return value
        return self.plain("")

    @staticmethod
    def _remember(known: list[tuple[list[str], bytes]], block: list[str], value: Any) -> None:
        try:
            known.append((block, marshal.dumps(value)))
        except ValueError:  # a scalar marshal does not write (none that the loader makes today)
            pass

    def _block(self, col: int, depth: int) -> Any:
        """`collection(cols[i], depth + 1)` for the block below a `key:` at column `col`, its
        first line known (`below`)."""
        cols, contents, i = self.cols, self.contents, self.i
        if cols[i] == col:
            return self.sequence(col, depth + 1)  # indentless
        if contents[i].startswith("- "):
            return self.sequence(cols[i], depth + 1)
        if _key_end(contents[i]) is None:
            raise _Decline  # a scalar on the next line: not written so here
        return self.mapping(cols[i], depth + 1)

    def value(self, text: str, col: int, depth: int) -> Any:
        """The scalar (or `{}`, `[]`, nested `depth` deep) starting with `text`, continued on
        the lines below indented past `col`."""
        if text in ("{}", "[]") and depth > MAX_DEPTH:
            raise _Decline
        if text == "{}":
            return {}
        if text == "[]":
            return []
        parts = [text]
        while (at := self.peek()) is not None and at[0] > col and self.pending is None:
            parts.append(at[1])
            self.advance()
        if text[0] == "'":
            joined = " ".join(parts)
            if not (len(joined) > 1 and joined.endswith("'")):
                raise _Decline
            return self.quoted(joined)
        for part in parts[1:]:
            if part[0] in _FIRST:
                raise _Decline
        return self.plain(" ".join(parts))

    def quoted(self, text: str) -> str:
        """A single-quoted scalar's string (`''` is a quote), the whole of `text`."""
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Decline
        return inner.replace("''", "'")

    def plain(self, text: str) -> Any:
        """A plain scalar: resolved and constructed as the loader does."""
        known = self.scalars.get(text, self)
        if known is not self:
            return known
        if text and (text[0] in _FIRST or ": " in text or text.endswith((":", " "))):
            raise _Decline
        loader = self.loader
        if text and text[0] not in self.resolved_starts:
            tag = _STR  # no implicit resolver for its first character: the resolver's default
        else:
            tag = loader.resolve(ScalarNode, text, (True, False))
        if tag == _STR:
            value: Any = text
        else:
            make = loader.yaml_constructors.get(tag)
            if make is None:
                raise _Decline
            value = make(loader, ScalarNode(tag, text))
        self.scalars[text] = value
        return value


def _resolved_starts(loader: Any) -> frozenset[str] | _Everything:
    """The first characters of the plain scalars the loader's implicit resolvers may give
    another tag than str (PyYAML's `Resolver.resolve` looks its resolvers up by the first
    character); every character when a resolver matches any (None) or a path resolver exists."""
    resolvers = loader.yaml_implicit_resolvers
    if None in resolvers or getattr(loader, "yaml_path_resolvers", None):
        return _Everything()
    return frozenset(resolvers)


class _Everything:
    """Contains every character."""

    def __contains__(self, item: object) -> bool:
        return True


def _key_end(content: str) -> int | None:
    """Where the `:` after a mapping key ends the key on this line (`key: v`, `key:`), else None."""
    if content[0] == "'":
        close = 1
        while True:
            close = content.find("'", close)
            if close == -1:
                return None
            if content.startswith("''", close):
                close += 2
                continue
            break
        if content.startswith(":", close + 1) and (len(content) == close + 2 or content[close + 2] == " "):
            return close + 1
        return None
    colon = content.find(": ")
    if colon == -1:
        colon = len(content) - 1 if content.endswith(":") else -1
    return colon if colon > 0 else None  # no key before the `:`: not written so here


def read_documents(text: str, loader: Any) -> list[Any] | None:
    """Every document of `text` as libyaml and `bounded.construct_tree` read it, when the text is
    block YAML of plain data (see the module's docstring); else None. `loader`: the resolver and
    constructors to read plain scalars with (the caller's libyaml loader)."""
    if (
        not text.isascii()
        or text.startswith(("#", "%", "...", " "))
        or any(marker in text for marker in _OUTSIDE)
        or not _printable(text)
    ):
        return None
    docs = _documents(text)
    if docs is None:
        return None
    out: list[Any] = []
    scalars: dict[str, Any] = {}
    blocks: _Blocks = {}
    starts = _resolved_starts(loader)
    for doc in docs:
        if not doc or doc[0].startswith(" ") or sum(map(len, doc)) + len(doc) > MAX_OBJECT_CHARS:
            return None
        stop_reading_if_asked(len(out))
        try:
            reader = _Reader(loader, doc)
            reader.scalars, reader.blocks, reader.resolved_starts = scalars, blocks, starts
            value = reader.collection(0, 1)
        except (_Decline, RecursionError, IndexError):  # any doubt: libyaml reads it
            return None
        if reader.i != len(doc) or reader.pending is not None:
            return None
        out.append(value)
    return out


def _printable(text: str) -> bool:
    """Whether the ASCII `text` is printable characters (space to `~`) and line breaks only:
    `str.isprintable` refuses exactly the other ASCII characters (controls, DEL) and is a
    third faster than a regular expression's search."""
    return text.replace("\n", "").isprintable()


def _documents(text: str) -> list[list[str]] | None:
    """The lines of each document of `text`: split at its `---` lines (a first one left out) and
    without the final line break. None (libyaml reads the text) when a line starts with `---`
    but is not `---` alone, or two `---` lines make an empty document; the others are found
    empty by the caller."""
    body = text
    if text.startswith("---"):
        if not text.startswith("---\n"):
            return None
        body = text[4:]
    if body.startswith("---") or body.endswith("\n---"):
        return None  # an empty document
    if body.count("\n---") != body.count("\n---\n"):
        return None  # a line starting with `---` that is not a separator (or two separators in a row)
    docs = [piece.split("\n") for piece in body.split("\n---\n")]
    if docs[-1][-1] == "":
        docs[-1].pop()
    return docs
