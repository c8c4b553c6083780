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
"""

from __future__ import annotations

import re
from operator import sub
from typing import Any

from yaml.nodes import ScalarNode

from .bounded import MAX_DEPTH, MAX_OBJECT_CHARS, stop_reading_if_asked

__all__ = ["read_documents"]

_CONTROL = re.compile(r"[^\x20-\x7e\n]")
_SPACES_LINE = re.compile(r"\n +(?:\n|#)")
_OUTSIDE = (" #", "\n#", "\n\n", "\n...", "\n%", "\n--- ", "\n---\t")
"""What sends the whole text to libyaml, found before reading: a character other than printable
ASCII and line breaks (`_CONTROL`), a comment, an empty line (or one of spaces only) inside the
text, a document end marker, a directive, a `---` with something after it. (Anchors, tags,
flow collections, quoted and block scalars are refused where they appear.)"""
_FIRST = frozenset("#,[]{}&*!|>'\"%@`?:-")
"""A plain scalar starting with one of these is refused (libyaml's indicators; `-`, `?` and
`:` only matter before a space, but nothing here needs them)."""
_STR = "tag:yaml.org,2002:str"
_MISSING: Any = object()


class _Decline(Exception):
    """Not the subset: libyaml reads this text."""


class _Reader:
    def __init__(self, loader: Any, lines: list[str]) -> None:
        self.loader = loader
        self.contents = [line.lstrip(" ") for line in lines]
        if "" in self.contents:
            raise _Decline  # a line of spaces only
        self.cols = list(map(sub, map(len, lines), map(len, self.contents)))
        self.i = 0
        self.pending: tuple[int, str] | None = None
        """(column, content) of the rest of line `i` after a `- ` read on it."""
        self.scalars: dict[str, Any] = {}

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
        indentless sequence, or null."""
        cols, contents, i = self.cols, self.contents, self.i
        if i < len(cols) and cols[i] > col:
            # `collection(cols[i], depth + 1)`, its first line known
            if depth + 1 > MAX_DEPTH:
                raise _Decline
            if contents[i].startswith("- "):
                return self.sequence(cols[i], depth + 1)
            if _key_end(contents[i]) is None:
                raise _Decline  # a scalar on the next line: not written so here
            return self.mapping(cols[i], depth + 1)
        if i < len(cols) and cols[i] == col and contents[i].startswith("- "):
            return self.sequence(col, depth + 1)
        return self.plain("")

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
        or _CONTROL.search(text) is not None
        or _SPACES_LINE.search(text) is not None
    ):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    docs: list[list[str]] = [[]]
    for line in lines:
        if line == "---":
            docs.append([])
        elif line.startswith("---"):
            return None
        else:
            docs[-1].append(line)
    if not docs[0] and text.startswith("---"):
        docs.pop(0)
    out: list[Any] = []
    scalars: dict[str, Any] = {}
    for doc in docs:
        if not doc or doc[0].startswith(" ") or sum(map(len, doc)) + len(doc) > MAX_OBJECT_CHARS:
            return None
        stop_reading_if_asked(len(out))
        try:
            reader = _Reader(loader, doc)
            reader.scalars = scalars
            value = reader.collection(0, 1)
        except (_Decline, RecursionError, IndexError):  # any doubt: libyaml reads it
            return None
        if reader.i != len(doc) or reader.pending is not None:
            return None
        out.append(value)
    return out
