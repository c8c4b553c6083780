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
    def __init__(self) -> None:
        self.out: list[str] = []
        self.style: dict[str, str] = {}
        self.resolver = _Resolver()
        self.seen: set[int] = set()

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

    def mapping(self, d: dict[Any, Any], indent: int, first_inline: bool) -> None:
        out = self.out
        style = self.style
        seen = self.seen
        pad = " " * indent
        first = first_inline
        for k, v in d.items():
            if type(k) is not str or not k or len(k) > MAX_KEY:
                raise _NotPlain
            key = style.get(k)
            if key is None:
                key, _ = self.scalar(k)
            head = key if first else pad + key
            first = False
            # `value_text`'s usual cases inline: a string written before, an int, a collection
            t = type(v)
            if t is str:
                text = style.get(v)
                if text is None or indent + len(key) + 2 + len(text) > WIDTH + 1:
                    text = self.value_text(v, indent + len(key) + 2, indent + 2)
            elif t is int:
                text = str(v)
            elif (t is dict or t is list) and v:
                if id(v) in seen:
                    raise _NotPlain  # written twice: libyaml writes an anchor and an alias
                seen.add(id(v))
                out.append(head + ":\n")
                if t is dict:
                    self.mapping(v, indent + 2, False)
                else:
                    self.sequence(v, indent, False)
                continue
            else:
                text = self.value_text(v, indent + len(key) + 2, indent + 2)
            if text is not None:
                out.append(f"{head}: {text}\n")
            elif type(v) is dict:
                out.append(f"{head}:\n")
                self.mapping(v, indent + 2, False)
            else:
                out.append(f"{head}:\n")
                self.sequence(v, indent, False)

    def sequence(self, items: list[Any], indent: int, first_inline: bool) -> None:
        out = self.out
        pad = " " * indent
        first = first_inline
        for v in items:
            head = "- " if first else pad + "- "
            first = False
            text = self.value_text(v, indent + 2, indent + 2)
            if text is not None:
                out.append(f"{head}{text}\n")
            elif type(v) is dict:
                out.append(head)
                self.mapping(v, indent + 2, True)
            else:
                out.append(head)
                self.sequence(v, indent + 2, True)


def _folded(text: str, quoted: bool, column: int, indent: int) -> str:
    """`text` (a scalar's plain or single-quoted text) as libyaml writes it from `column`: at a
    space (not the first or last character of a quoted one, not followed by another space,
    not after one) once the column is past `WIDTH`, a line break and `indent` spaces instead."""
    parts: list[str] = []
    start = 0
    col = column
    last = len(text) - 1
    prev_space = False
    for i, ch in enumerate(text):
        if ch == " ":
            if (
                not prev_space
                and col > WIDTH
                and not (quoted and (i == 1 or i == last - 1))
                and (i + 1 > last or text[i + 1] != " ")
            ):
                parts.append(text[start:i])
                parts.append("\n" + " " * indent)
                start = i + 1
                col = indent
                prev_space = True
                continue
            prev_space = True
        else:
            prev_space = False
        col += 1
    parts.append(text[start:])
    return "".join(parts)


def block_yaml(doc: Any) -> str | None:
    """`doc` as `yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False)` writes it, when it is
    plain data this module writes (see the module's docstring); else None."""
    if type(doc) is not dict or not doc:
        return None
    writer = _Writer()
    writer.seen.add(id(doc))
    try:
        writer.mapping(doc, 0, False)
    except (_NotPlain, RecursionError):
        return None
    return "".join(writer.out)
