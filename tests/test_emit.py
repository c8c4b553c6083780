"""`api.emit.block_yaml` writes what libyaml writes, byte for byte, or declines."""

from __future__ import annotations

import copy
import random

import yaml
from example_counts import examples

from dra_solver.api.emit import SCORE, block_yaml


def _plain_doc(rng: random.Random) -> dict[str, object]:
    """A `kind: List` of the data `block_yaml` writes: printable ASCII strings of every length
    around the folding width, with the characters that make libyaml quote them (indicators,
    `: `, ` #`, leading and trailing spaces, quotes, words the resolver reads as other types),
    runs of spaces, ints, bools, nulls, nested and empty dicts and lists."""
    chars = "".join(chr(c) for c in range(0x20, 0x7F)) + "     ::--##''"
    words = ["true", "null", "~", "1", "1.0", "0x1f", "-", "", "yes", "No", ".inf", "1e5", "<<", "---", "..."]
    words += [
        "2024-01-01",
        "- a",
        "? x",
        ": y",
        "a: b",
        "a #b",
        "a#b",
        "'q'",
        "x:",
        "-1",
        "+1",
        "0o7",
        "=",
        " a",
        "a ",
    ]

    def text(key: bool = False) -> str:
        if rng.random() < 0.2:
            return rng.choice(words)
        n = rng.choice([1, 3, 10, 40, 70, 79, 80, 81, 90, 119, 200] if not key else [1, 3, 10, 40, 99, 100])
        if rng.random() < 0.5:  # words: where libyaml folds
            out = ""
            while len(out) < n:
                out += rng.choice(
                    ["ab", "c", "word", "x" * rng.randrange(1, 30), "'", ":", "#"]
                ) + " " * rng.choice([1, 1, 1, 2])
            return out[:n]
        return "".join(rng.choice(chars) for _ in range(n))

    def value(depth: int = 0) -> object:
        r = rng.random()
        if depth > 4 or r < 0.5:
            return rng.choice([text(), text(), rng.randrange(-(10**12), 10**12), True, False, None])
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {text(key=True) or "k": value(depth + 1) for _ in range(rng.randrange(4))}

    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [value() for _ in range(4)],
        text(True) or "k": value(),
    }


def test_block_yaml_writes_what_libyaml_writes() -> None:
    """Random plain documents (600 under the `ci` profile, ten times that under `long`): what
    `block_yaml` writes is libyaml's text, and PyYAML's pure-Python dumper's (the costly half)."""
    rng = random.Random(7)
    written = 0
    count = examples(600)
    for _ in range(count):
        doc = _plain_doc(rng)
        text = block_yaml(doc)
        expected = yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False)
        if text is not None:
            written += 1
            assert text == expected
            assert yaml.safe_dump(doc, sort_keys=False) == expected
    assert written > count * 5 // 6  # the plain documents are written here, not declined


def test_distinct_documents_reuse_equal_parts_and_write_what_libyaml_writes() -> None:
    """`distinct`: equal sub-trees (copies, as a plan's Pods and claims repeat their specs) are
    written once and their text reused at the same indent — the text libyaml writes, whether
    the part comes back at the same depth, at another, first in a sequence item or not, and
    after a place stopped looking (`emit.SCORE` misses: each document's unique `metadata`
    misses `SCORE + 32` times, so 32 items follow the place's last look). 12 documents of
    `2 * (SCORE + 32)` items under the `ci` profile, ten times that under `long`."""
    rng = random.Random(11)
    written = 0
    count = examples(12)
    for _ in range(count):
        parts = [_plain_doc(rng)["items"] for _ in range(3)]
        items: list[object] = []
        for i in range(SCORE + 32):
            part = rng.choice(parts)
            unique = {"name": f"object-{i}", "list": [i, {"n": i}]}
            more = [copy.deepcopy(part[:1]), {"k": copy.deepcopy(part)}]
            items.append({"kind": "Thing", "metadata": unique, "spec": copy.deepcopy(part), "more": more})
            items.append([copy.deepcopy(part), {"deep": {"deeper": copy.deepcopy(part)}}])
        doc = {"apiVersion": "v1", "kind": "List", "items": items}
        text = block_yaml(doc, distinct=True)
        if text is not None:
            written += 1
            assert text == yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False)
    assert written > count * 2 // 3  # most are plain: written here, not declined


def test_block_yaml_declines_what_it_does_not_write() -> None:
    shared = {"a": 1}
    for doc in (
        {"a": 1.5},  # floats: SafeRepresenter's own text
        {"a": shared, "b": shared},  # an anchor and an alias
        {"a": "tab\there"},  # escapes
        {"a": "é"},
        {"": 1},
        {"k" * 101: 1},
        {1: 2},
        [],
        {},
    ):
        assert block_yaml(doc) is None
