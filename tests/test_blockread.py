"""`api.blockread.read_documents` reads what libyaml reads, or declines."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import yaml
from example_counts import examples

from dra_solver.api.blockread import read_documents
from dra_solver.api.bounded import compose_fast
from dra_solver.api.load import _FastLoader, iter_positioned
from tests.test_emit import _plain_doc


def _both(text: str) -> tuple[list[Any] | None, list[Any] | None]:
    """(line by line, libyaml with `construct_tree`) for `text`."""
    mine = read_documents(text, _FastLoader(text))
    return mine, compose_fast(_FastLoader(text))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _without_comments(value: Any) -> Any:
    """`value` with `#` written `+`: a ` #` sends the whole text to libyaml (a comment)."""
    if isinstance(value, str):
        return value.replace("#", "+")
    if isinstance(value, dict):
        return {_without_comments(k): _without_comments(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_comments(v) for v in value]
    return value


def test_reads_what_libyaml_reads_on_random_documents() -> None:
    """Documents written by libyaml (folded long values, quoted keys and values, words the
    resolver reads as ints, bools, nulls, floats), several per text: the same values, types
    and key order. 500 texts under the `ci` profile, ten times that under `long`."""
    rng = random.Random(11)
    read = 0
    count = examples(500)
    for _ in range(count):
        docs = [_without_comments(_plain_doc(rng)) for _ in range(rng.randrange(1, 4))]
        text = yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)
        if rng.random() < 0.3:
            text = "---\n" + text
        mine, theirs = _both(text)
        if mine is not None:
            read += 1
            assert _same(mine, theirs), text
    assert read > count // 6  # many are read here (the others hold characters only libyaml reads)


def test_declines_what_it_does_not_read() -> None:
    """Everything outside block YAML of plain data goes to libyaml, which reads or refuses it."""
    for text in (
        "a: 1 # comment\n",
        "# comment\na: 1\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        'a: "quoted"\n',
        "a: |\n  block\n",
        "a: >\n  folded\n",
        "a: {b: 1}\n",
        "a: [1, 2]\n",
        "a:\tb\n",
        "a: é\n",
        "a: 1\n\nb: 2\n",
        "%YAML 1.1\n---\na: 1\n",
        "a: 1\n...\n",
        "--- a\n",
        "? a\n: b\n",
        "a:\n  b\n",
        "scalar\n",
        "a: 1\n---\n",
        "  a: 1\n",
        "a:  1\n",
        "a: 1 \n",
        "- \n",
        "a: b\n  c: d\n",
        "a:\n    b: 1\n  c: 2\n",
        "a: 1\n   ",
        "a: 1\n  \nb: 2\n",
        ":\n",
        ": x\n",
        "- :\n",
        "a:\n- \n",
    ):
        assert read_documents(text, _FastLoader(text)) is None, text


def test_reads_the_subset_as_libyaml_does() -> None:
    """Hand-written corners: indentless and nested sequences, mappings in sequences, folded
    plain and quoted values, quoted keys, null values, empty collections, resolved scalars,
    a repeated key (first place, last value), several documents."""
    text = (
        "---\n"
        "a:\n- 1\n- - x\n  - y: z\n    w: 'it''s'\n- k: long value\n    continued here\n"
        "'q: k': v\n"
        "n:\n"
        "e: {}\n"
        "l: []\n"
        "m:\n  b: true\n  c: ~\n  d: 0x1f\n  t: 2024-01-01\n  f: 1.5\n  s: '1'\n"
        "a: again\n"
        "---\n"
        "- x\n- 'a b\n  c'\n"
    )
    mine, theirs = _both(text)
    assert mine is not None
    assert _same(mine, theirs)
    assert list(mine[0]) == ["a", "q: k", "n", "e", "l", "m"] and mine[0]["a"] == "again"


def test_the_loader_reads_the_same_objects_either_way() -> None:
    """`iter_positioned` (what every command reads with) gives the same objects and positions
    as libyaml's path for a `kind: List` and plain documents."""
    text = yaml.dump_all(
        [
            {"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "p"}}]},
            {"kind": "Node", "metadata": {"name": "n", "labels": {"a": "1"}}},
        ],
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
    )
    assert read_documents(text, _FastLoader(text)) is not None
    assert list(iter_positioned(text, "f")) == [
        ("document 1, items[0]", {"kind": "Pod", "metadata": {"name": "p"}}),
        ("document 2", {"kind": "Node", "metadata": {"name": "n", "labels": {"a": "1"}}}),
    ]


def _containers(value: Any, seen: dict[int, int]) -> None:
    """Count every dict and list of `value` by id (`seen`)."""
    if isinstance(value, dict | list):
        seen[id(value)] = seen.get(id(value), 0) + 1
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, seen)


def test_a_block_read_again_is_the_same_and_a_copy() -> None:
    """A block remembered from an earlier document (`_Reader.below`) reads as libyaml reads it
    where it comes again — at the same place, at another column or depth, followed by more
    items of its indentless sequence, by a line continuing its last value, or cut short — and
    every document has its own dicts and lists."""
    devices = "  devices:\n  - name: a\n    attributes:\n      size:\n        string: whole\n  - name: b\n"
    docs = [
        f"kind: S\nspec:\n{devices}",
        f"kind: S\nspec:\n{devices}  - name: c\n",  # the sequence goes on
        f"kind: S\nspec:\n{devices}    more: x\n",  # its last item goes on
        f"kind: S\nspec:\n{devices}  pool: p\n",
        f"kind: S\nspec:\n{devices}",
        "kind: S\nspec:\n  devices:\n  - name: a\n    attributes:\n      size:\n        string: half\n",
        "kind: S\nwrapped:\n  spec:\n  " + devices.replace("\n  ", "\n    ").rstrip(" ") + "x: 1\n",
        f"kind: S\nspec:\n{devices}  - name: d\n    attributes:\n      size:\n        string: whole\n",
        "kind: S\nspec:\n  devices:\n  - name: a\n    attributes:\n      size:\n"
        "        string: whole\n          long\n",  # its last value goes on
    ]
    for order in (docs, docs[::-1]):
        text = "---\n".join(order)
        mine, theirs = _both(text)
        assert mine is not None, text
        assert _same(mine, theirs), text
        seen: dict[int, int] = {}
        _containers(mine, seen)
        assert set(seen.values()) == {1}  # nothing shared between two places


def _readable_doc(rng: random.Random) -> Any:
    """A random plain document (`_plain_doc`, without comments) that the block reader reads on
    its own: about half are; the others hold something only libyaml reads."""
    while True:
        doc = _without_comments(_plain_doc(rng))
        text = yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False)
        if read_documents(text, _FastLoader(text)) is not None:
            return doc


def test_repeated_random_blocks_read_as_libyaml_reads_them() -> None:
    """Texts whose documents repeat random blocks, alike and slightly changed: the same values
    as libyaml's, nothing shared. Each text's blocks come from two documents the reader reads
    alone and one random one, so about half the texts are read and the others declined (they
    repeat a block it declines). Blocks of three random documents had nine texts in ten
    declined whole, and making them was most of the test's time. 150 texts under the `ci`
    profile (73 read; before, 61 of 600), ten times that under `long`."""
    rng = random.Random(5)
    read = 0
    count = examples(150)
    for _ in range(count):
        pool = [_readable_doc(rng), _readable_doc(rng), _without_comments(_plain_doc(rng))]
        docs = []
        for _ in range(rng.randrange(2, 7)):
            base = copy.deepcopy(rng.choice(pool))
            doc = {"kind": "K", "spec": base} if isinstance(base, dict) else {"kind": "K", "items": base}
            if rng.random() < 0.4:
                doc = {**doc, "extra": copy.deepcopy(rng.choice(pool))}
            docs.append(doc)
        text = yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)
        mine, theirs = _both(text)
        if mine is not None:
            read += 1
            assert _same(mine, theirs), text
            seen: dict[int, int] = {}
            _containers(mine, seen)
            assert set(seen.values()) == {1}
    assert count // 3 < read < count, read  # both: texts read, and texts declined


def test_document_separators() -> None:
    """`---` lines split documents as libyaml splits them; empty documents and lines that only
    start with `---` go to libyaml."""
    for text in ("---\na: 1\n---\nb: 2\n", "a: 1\n---\nb: 2", "---\n- 1\n"):
        mine, theirs = _both(text)
        assert mine is not None and _same(mine, theirs), text
    declined = (
        "---\n",
        "---",
        "a: 1\n---",
        "a: 1\n---\n",
        "a: 1\n---\n---\nb: 2\n",
        "a: 1\n----\nb: 1\n",
        "---x\n",
    )
    for text in declined:
        assert read_documents(text, _FastLoader(text)) is None, text
