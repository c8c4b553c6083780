"""YAML text of plain data, written as libyaml's emitter writes it, without its events.

Why: writing a 10,000-pod plan took more CPU than planning it: PyYAML makes a node per value,
its serializer asks the resolver twice per scalar and libyaml's emitter then writes an event per
node — about 7 CPU seconds for 16 MB, 35 for a 50,000-pod plan. Block YAML of plain data is
simple enough to write directly: a mapping is `key: value` lines, a sequence `- item` lines,
nested ones indented by two (a sequence in a mapping not at all), empty ones `{}` and `[]`;
a string is written plain or single-quoted by libyaml's own rules (`_style`: the indicators
it looks for, whether the resolver would read the plain text back as a string), and a long
value is folded at a space past column 80 as libyaml folds it (`_folded`).

`block_yaml` writes exactly what `yaml.dump(doc, Dumper=CSafeDumper, sort_keys=False)` writes
for a dict whose strings are printable ASCII, whose keys are strings of at most `MAX_KEY`
characters, whose values are str, int, bool, None, dict and list (exact types, no float), and
in which no dict or list appears twice (that would be an anchor); for anything else it
returns None and the caller writes the document the usual way. `tests/test_load.py` compares
the two on random documents.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import ScalarNode

__all__ = ["MAX_KEY", "block_yaml"]

SCORE = 64
"""How far `_Writer.collection` lets a place's misses outrun its hits before it stops looking."""
WIDTH = 80
"""libyaml's best width (PyYAML's default): a scalar folds at a space once past this column."""
MAX_KEY = 100
"""Longest key written here: libyaml writes a key of more than 128 characters as a complex key
(`? key`); shorter than that is plain or quoted as any scalar, in one line."""

_STR = "tag:yaml.org,2002:str"
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_FLOW = frozenset(",?[]{}")
_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))


class _NotPlain(Exception):
    """The document has something `block_yaml` does not write."""


class _Resolver(yaml.resolver.Resolver):
    """The safe resolver (what CSafeDumper resolves with)."""


def _block_plain_allowed(s: str) -> bool:
    """libyaml's `analyze_scalar` for a string of printable ASCII without line breaks: whether
    it may be written plain in block context."""
    if s.startswith(("---", "...")):
        return False
    if s[0] == " " or s[-1] == " ":
        return False
    n = len(s)
    first = s[0]
    after_first = n == 1 or s[1] == " "
    if first in _FIRST_INDICATORS:
        return False
    if first in "?:-" and after_first:
        return False
    colon = s.find(":", 1)
    while colon != -1:
        if colon + 1 == n or s[colon + 1] == " ":
            return False
        colon = s.find(":", colon + 1)
    return " #" not in s


class _Writer:
    def __init__(self, distinct: bool = False) -> None:
        self.out: list[str] = []
        self.style: dict[str, str] = {}
        self.resolver = _Resolver()
        self.seen: set[int] = set()
        self.heads: dict[int, dict[str, tuple[str, str, int]]] = {}
        self.texts: dict[tuple[int, bool, str], str] | None = {} if distinct else None
        """`distinct`: (indent, first inline, `repr` of a sub-tree) -> its text (`collection`)."""
        self.scores: dict[tuple[str, int], int] = {}
        """Per place (the key or `-` above a sub-tree, its indent): recent hits less misses of
        `texts`, at most `SCORE`; at `-SCORE` the place is no longer looked up."""

    def collection(self, v: Any, indent: int, first_inline: bool, place: tuple[str, int]) -> None:
        """Non-empty dict `v` (its keys at `indent`) or list (its dashes at `indent`) written,
        as `mapping` or `sequence` writes it, or, when an equal sub-tree (same `repr`: the same
        keys, values and types, in the same order) was written at the same indent before, that
        text again. Why: a plan's Pods and claims repeat their specs, containers, conditions and
        node selectors thousands of times. Only when the caller promised no dict or list appears
        twice (`block_yaml`'s `distinct`): the text reused is then what writing it gives; else a
        container inside both would be an anchor. A place where equal sub-trees do not come back
        (names, uids, devices) soon stops paying for the `repr`."""
        texts = self.texts
        score = self.scores.get(place, 0)
        if texts is None or score <= -SCORE:
            self._collection(v, indent, first_inline)
            return
        key = (indent, first_inline, repr(v))
        text = texts.get(key)
        out = self.out
        if text is not None:
            self.scores[place] = min(score + 1, SCORE)
            out.append(text)
            return
        self.scores[place] = score - 1
        start = len(out)
        self._collection(v, indent, first_inline)
        text = texts[key] = "".join(out[start:])
        del out[start:]
        out.append(text)

    def _collection(self, v: Any, indent: int, first_inline: bool) -> None:
        if type(v) is dict:
            self.mapping(v, indent, first_inline)
        else:
            self.sequence(v, indent, first_inline)

    def scalar(self, s: str) -> tuple[str, bool]:
        """The text of `s` in one line (plain or single-quoted) and whether it is quoted."""
        text = self.style.get(s)
        if text is None:
            if not _PRINTABLE.issuperset(s):
                raise _NotPlain
            plain = (
                s != ""
                and self.resolver.resolve(ScalarNode, s, (True, False)) == _STR
                and _block_plain_allowed(s)
            )
            text = self.style[s] = s if plain else "'" + s.replace("'", "''") + "'"
        return text, text is not s

    def value_text(self, v: Any, column: int, indent: int) -> str | None:
        """The text of scalar `v` written from `column` (continuation lines at `indent`); None
        when `v` is a non-empty collection."""
        t = type(v)
        if t is str:
            text, quoted = self.scalar(v)
            if column + len(text) > WIDTH + 1 and " " in v:
                return _folded(text, quoted, column, indent)
            return text
        if t is int:
            return str(v)
        if t is bool:
            return "true" if v else "false"
        if v is None:
            return "null"
        if t is dict or t is list:
            if not v:
                return "{}" if t is dict else "[]"
            key = id(v)
            if key in self.seen:
                raise _NotPlain  # written twice: libyaml writes an anchor and an alias
            self.seen.add(key)
            return None
        raise _NotPlain

    def head(self, k: Any, indent: int) -> tuple[str, str, int]:
        """Key `k`'s line at `indent` up to its colon, the same without the indent (the first
        key of a sequence item, after its `- `), and the column of its value; kept per indent
        (`heads`). Why: a plan's objects repeat a few dozen keys millions of times."""
        if type(k) is not str or not k or len(k) > MAX_KEY:
            raise _NotPlain
        key, _ = self.scalar(k)
        head = (" " * indent + key + ":", key + ":", indent + len(key) + 2)
        self.heads.setdefault(indent, {})[k] = head
        return head

    def mapping(self, d: dict[Any, Any], indent: int, first_inline: bool) -> None:
        out = self.out
        append = out.append
        style = self.style
        seen = self.seen
        heads = self.heads.get(indent) or {}
        cache = self.texts is not None
        scores = self.scores
        first = first_inline
        for k, v in d.items():
            if type(k) is not str:
                raise _NotPlain
            h = heads.get(k) or self.head(k, indent)
            line = h[1] if first else h[0]
            first = False
            # `value_text`'s usual cases inline: a string written before, an int, a collection
            t = type(v)
            if t is str:
                text = style.get(v)
                if text is None or h[2] + len(text) > WIDTH + 1:
                    text = self.value_text(v, h[2], indent + 2)
                append(f"{line} {text}\n")
            elif t is int:
                append(f"{line} {v}\n")
            elif (t is dict or t is list) and v:
                if id(v) in seen:
                    raise _NotPlain  # written twice: libyaml writes an anchor and an alias
                seen.add(id(v))
                append(line + "\n")
                if indent and cache and scores.get((k, indent), 0) > -SCORE:
                    self.collection(v, indent + 2 if t is dict else indent, False, (k, indent))
                elif t is dict:
                    self.mapping(v, indent + 2, False)
                else:
                    self.sequence(v, indent, False)
            else:
                append(f"{line} {self.value_text(v, h[2], indent + 2)}\n")

    def sequence(self, items: list[Any], indent: int, first_inline: bool) -> None:
        append = self.out.append
        seen = self.seen
        dash = " " * indent + "- "
        cache = self.texts is not None
        scores = self.scores
        first = first_inline
        for v in items:
            head = "- " if first else dash
            first = False
            t = type(v)
            if t is dict and v:
                if id(v) in seen:
                    raise _NotPlain  # written twice: libyaml writes an anchor and an alias
                seen.add(id(v))
                append(head)
                if indent and cache and scores.get(("-", indent), 0) > -SCORE:
                    self.collection(v, indent + 2, True, ("-", indent))
                else:
                    self.mapping(v, indent + 2, True)
                continue
            text = self.value_text(v, indent + 2, indent + 2)
            if text is not None:
                append(f"{head}{text}\n")
            elif t is dict:
                append(head)
                self.mapping(v, indent + 2, True)
            else:
                append(head)
                self.sequence(v, indent + 2, True)


def _folded(text: str, quoted: bool, column: int, indent: int) -> str:
    """`text` (a scalar's plain or single-quoted text) as libyaml writes it from `column`: at a
    space (not the first or last character of a quoted one, not followed by another space,
    not after one) once the column is past `WIDTH`, a line break and `indent` spaces instead.

    Why by `str.find` from the first column past `WIDTH` rather than a character at a time:
    a line's column is its start's plus the distance, so the first space it may break at is
    found in one call — the reasons of 4,000 pods left out, one annotation of 3.6 MB, took
    half a CPU second looked at one character at a time."""
    parts: list[str] = []
    start = 0
    col = column  # the column of text[start]
    last = len(text) - 1
    find = text.find
    pad = "\n" + " " * indent
    while True:
        i = find(" ", max(start, start + WIDTH + 1 - col))  # the first space past WIDTH
        while i != -1 and (
            (i > 0 and text[i - 1] == " ")
            or (i < last and text[i + 1] == " ")
            or (quoted and (i == 1 or i == last - 1))
        ):
            i = find(" ", i + 1)
        if i == -1:
            break
        parts.append(text[start:i])
        parts.append(pad)
        start = i + 1
        col = indent
    parts.append(text[start:])
    return "".join(parts)


def block_yaml(doc: Any, *, distinct: bool = False) -> str | None:
    """`doc` as `yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False)` writes it, when it is
    plain data this module writes (see the module's docstring); else None. `distinct`: the
    caller promises that no dict or list appears twice in `doc` (fresh dumps): equal sub-trees
    are then written once and their text reused (`_Writer.collection`)."""
    if type(doc) is not dict or not doc:
        return None
    writer = _Writer(distinct)
    writer.seen.add(id(doc))
    try:
        writer.mapping(doc, 0, False)
    except (_NotPlain, RecursionError):
        return None
    return "".join(writer.out)
