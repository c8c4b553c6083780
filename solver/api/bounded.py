"""Bounded YAML/JSON reading: alias expansion, nesting depth and object size are limited.

Why: the input is a file anyone can write, and three small texts used to end the process
badly — a "billion laughs" alias bomb in a free-form field (`opaque.parameters`,
annotations) passed loading as a few hundred shared nodes and then exploded to gigabytes
when the objects were copied or printed; JSON or YAML nested 200,000 levels deep
overflowed libyaml's recursive composer (a segfault); an object of hundreds of megabytes
was read whole. The API server refuses all three (CVE-2019-11253 bounded its YAML alias
expansion; a request body is at most 3 MiB), so dra-solver refuses them too, while the
document is being composed — before anything is expanded or walked.

How: libyaml (when installed) still tokenises and parses, which is iterative and fast; the
composition of events into nodes is done here in Python (`BoundedComposer`), which
  - counts every node a document stands for, aliases included, and stops when aliases make
    up too much of it (the rule and the numbers of go-yaml's CVE-2019-11253 fix, which the
    API server uses: above 100 aliased nodes in a document of over 1,000, aliases may make
    up 99% of a document of up to 400,000 nodes, falling linearly to 10% at 4,000,000);
  - refuses an alias to the node that contains it (a cycle) and more than `MAX_DEPTH`
    nested collections, so the recursion below stays shallow;
  - measures each object's text (a document, or an item of a `kind: List`) against
    `MAX_OBJECT_CHARS`.
Aliases are never expanded: the constructed objects share them, and a free-form field is
written back as given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, Event, MappingStartEvent, NodeEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from ..errors import StoppedReading

__all__ = [
    "ALIAS_MIN_ALIASED",
    "ALIAS_MIN_NODES",
    "MAX_DEPTH",
    "MAX_OBJECT_CHARS",
    "BoundExceeded",
    "Loader",
    "compose_fast",
    "construct_tree",
    "allowed_alias_ratio",
    "stop_reading_if_asked",
    "stop_reading_when",
]

_stop_when: list[Callable[[], str | None]] = []
"""The checks that end reading early (`stop_reading_when`), innermost last."""


@contextmanager
def stop_reading_when(stop: Callable[[], str | None]) -> Iterator[None]:
    """While inside, reading asks `stop()` between documents and objects and raises
    `StoppedReading` once it answers why (`cut short by --timeout after 5.0 s`; None: go on).
    Why: `plan --timeout` bounds the whole run, reading a large file included
    (docs/semantics.md, "Limits and determinism"); an input read half way is no cluster to
    plan, so the run ends with that error instead of a plan."""
    _stop_when.append(stop)
    try:
        yield
    finally:
        _stop_when.pop()


def stop_reading_if_asked(done: int, doing: str = "read") -> None:
    """Raise `StoppedReading` when a `stop_reading_when` check says so; `done`: how many
    documents or objects were `doing` ("read", "validated"), for the message."""
    why = _stop_when[-1]() if _stop_when else None
    if why is not None:
        raise StoppedReading(
            f"{why} while reading the input ({done} objects {doing}): no plan, since "
            "an input read in part is no cluster to plan"
        )


MAX_DEPTH = 100
"""Nested mappings and sequences in one document. The API server's JSON decoder stops at
10,000; this is lower because what reads the objects after loading recurses per level
(pydantic's serializer gives up at about 250), and no Kubernetes object comes near it (a
Pod's deepest field is about 15 levels down, a `kind: List` adds 2)."""

MAX_OBJECT_CHARS = 3 * 1024 * 1024
"""One object's text: the API server refuses a request body above 3 MiB
(`MaxRequestBodyBytes`), so no real object is larger. A `kind: List` (a dump) may be larger;
each of its items is measured. Counted in characters, which is at most the size in bytes."""

ALIAS_MIN_ALIASED = 100
ALIAS_MIN_NODES = 1000
"""Below these (aliased nodes, all nodes of a document) aliasing is never refused (go-yaml)."""
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


def allowed_alias_ratio(nodes: int) -> float:
    """Share of a document's nodes that may come from alias expansion (go-yaml
    `allowedAliasRatio`, the CVE-2019-11253 fix): 99% up to 400,000 nodes, then falling
    linearly to 10% at 4,000,000, so that aliases add at most about 400,000 nodes."""
    if nodes <= _RATIO_LOW:
        return 0.99
    if nodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


class BoundExceeded(yaml.YAMLError):
    """A document breaks one of the reading bounds; `document` is its 1-based index."""

    def __init__(self, document: int, problem: str, mark: Any = None) -> None:
        self.document = document
        self.problem = problem
        self.problem_mark = mark
        super().__init__(f"document {document}: {problem}")


class BoundedComposer(Composer):
    """PyYAML's composer with the bounds of the module docstring, counted as it composes."""

    def __init__(self) -> None:
        Composer.__init__(self)  # explicit: the next class in a loader's MRO may be its parser
        self.document_index = 0
        self._depth = 0
        self._nodes = 0
        self._aliased = 0
        self._sizes: dict[str, int] = {}

    # The parser beside this class in a loader's bases (CParser or yaml.Parser) provides it;
    # declared, not defined, so that the parser's method is the one found.
    peek_event: Callable[[], Event]

    def check_node(self) -> bool:
        try:
            return bool(super().check_node())
        except yaml.MarkedYAMLError as e:
            raise _nesting(e, self.document_index + 1) from None

    def compose_document(self) -> Node | None:
        self.document_index += 1
        self._depth = self._nodes = self._aliased = 0
        self._sizes = {}
        try:
            node = super().compose_document()
        except yaml.MarkedYAMLError as e:
            raise _nesting(e, self.document_index) from None
        self._sizes = {}
        if node is not None:
            _check_size(node, self.document_index)
        return node

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            self._alias(event)
            return super().compose_node(parent, index)
        nested = isinstance(event, SequenceStartEvent | MappingStartEvent)
        if nested:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise BoundExceeded(
                    self.document_index,
                    f"nested more than {MAX_DEPTH} levels deep (mappings and lists)",
                    event.start_mark,
                )
        before = self._nodes
        self._nodes += 1
        node = super().compose_node(parent, index)
        if nested:
            self._depth -= 1
        if isinstance(event, NodeEvent) and event.anchor is not None:  # (every node's event is one)
            self._sizes[event.anchor] = self._nodes - before
        return node

    def _alias(self, event: AliasEvent) -> None:
        """Count the nodes an alias stands for; refuse a cycle and excessive aliasing."""
        anchor = event.anchor
        if anchor is None or anchor not in self.anchors:
            return  # the composer reports the undefined alias
        size = self._sizes.get(anchor)
        if size is None:
            raise BoundExceeded(
                self.document_index,
                f"alias *{anchor} refers to a node that contains it (a cycle)",
                event.start_mark,
            )
        self._aliased += size
        self._nodes += size
        if (
            self._aliased > ALIAS_MIN_ALIASED
            and self._nodes > ALIAS_MIN_NODES
            and self._aliased / self._nodes > allowed_alias_ratio(self._nodes)
        ):
            raise BoundExceeded(
                self.document_index,
                f"excessive YAML aliasing: aliases expand to {self._aliased:,} of {self._nodes:,} "
                f"nodes so far (the limit of CVE-2019-11253's fix: "
                f"{allowed_alias_ratio(self._nodes):.0%} above {ALIAS_MIN_NODES:,} nodes)",
                event.start_mark,
            )


def _nesting(error: yaml.MarkedYAMLError, document: int) -> yaml.YAMLError:
    """Our nesting bound for libyaml's own, else the error unchanged.

    Why: libyaml's scanner (bundled with PyYAML 6.0.4 and later) refuses flow collections
    nested past its own limit, and it scans ahead of the events this composer counts, so a
    deep `[[[[...` stops there first with "exceeded maximum nesting depth". That limit is
    above `MAX_DEPTH`, so the document breaks our bound too; it is reported in our words,
    naming the document, whichever library release reads it."""
    if isinstance(error, BoundExceeded) or "nesting depth" not in str(error.problem):
        return error
    return BoundExceeded(
        document,
        f"nested more than {MAX_DEPTH} levels deep (mappings and lists)",
        error.problem_mark,
    )


def _check_size(node: Node | None, document: int) -> None:
    """Each object's text at most MAX_OBJECT_CHARS; a List's items are measured one by one."""
    if node is None or _span(node) <= MAX_OBJECT_CHARS:
        return
    items = _list_items(node)
    if items is None:
        raise BoundExceeded(
            document,
            f"object is {_mib(_span(node))} of text; the API server accepts at most "
            f"{_mib(MAX_OBJECT_CHARS)} per object (request size limit)",
            node.start_mark,
        )
    for i, item in enumerate(items.value):
        if _span(item) > MAX_OBJECT_CHARS and _list_items(item) is None:
            raise BoundExceeded(
                document,
                f"items[{i}]: object is {_mib(_span(item))} of text; the API server accepts at most "
                f"{_mib(MAX_OBJECT_CHARS)} per object (request size limit)",
                item.start_mark,
            )
        _check_size(item, document)


def _list_items(node: Node) -> SequenceNode | None:
    """The `items` of a `kind: ...List` mapping node, else None."""
    if not isinstance(node, MappingNode):
        return None
    fields = {k.value: v for k, v in node.value if isinstance(k, ScalarNode)}
    kind, items = fields.get("kind"), fields.get("items")
    if isinstance(kind, ScalarNode) and str(kind.value).endswith("List") and isinstance(items, SequenceNode):
        return items
    return None


def _span(node: Node) -> int:
    return int(node.end_mark.index - node.start_mark.index)


def _mib(chars: int) -> str:
    return f"{chars / (1024 * 1024):.1f} MiB"


if getattr(yaml, "__with_libyaml__", False):  # libyaml parses (iteratively, ~10x faster)
    from yaml._yaml import CParser

    class FastLoader(CParser, SafeConstructor, Resolver):
        """libyaml's parser and composer, the safe constructor: only for `compose_fast`.

        libyaml's composer asks the resolver for every node's tag (and tells it every step
        down and up, for path resolvers): Python calls per node, a fifth of the reading.
        Without path resolvers (none are registered: asserted below) a tag depends on the
        kind and the text alone, so `resolve` remembers it per scalar text and the steps are
        skipped; an input repeats its keys and values many times. Changes no tag."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._resolved: dict[tuple[Any, Any], str] = {}

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is not ScalarNode:
                return Resolver.resolve(self, kind, value, implicit)
            key = (value, implicit)
            tag = self._resolved.get(key)
            if tag is None:
                tag = self._resolved[key] = Resolver.resolve(self, kind, value, implicit)
            return tag

        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            pass  # no path resolvers: nothing to follow

        def ascend_resolver(self) -> None:
            pass

    assert not FastLoader.yaml_path_resolvers  # what `resolve` and the resolvers above rely on

    class Loader(BoundedComposer, CParser, SafeConstructor, Resolver):
        """Safe YAML: libyaml's parser, the bounded composer, the safe constructor."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            BoundedComposer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

else:  # pragma: no cover - depends on how PyYAML was built

    class Loader(BoundedComposer, yaml.SafeLoader):  # type: ignore[no-redef]  # the other branch's Loader
        """Safe YAML: PyYAML's pure-Python parser, the bounded composer."""

        def __init__(self, stream: str) -> None:
            yaml.SafeLoader.__init__(self, stream)
            BoundedComposer.__init__(self)

    FastLoader = None  # type: ignore[assignment,misc]  # no libyaml: always the bounded composer


def compose_fast(loader: Any) -> list[Any] | None:
    """Every document of `loader`'s text (a CParser with a resolver and a constructor),
    composed by libyaml, when no document comes near a bound — else None, and the caller
    reads the text with `Loader`.

    Why: composing in Python (`BoundedComposer`) was a third of the time a large input took
    to read. libyaml composes without expanding aliases (an aliased node is the same object
    twice) and refuses nesting past its own limit (1,000 levels), so its nodes are safe to
    walk: a document is taken as it is when the bounded composer would take it — no
    collection nested past `MAX_DEPTH`, no object's text past `MAX_OBJECT_CHARS`, and, where
    a node appears twice (an alias), no cycle and few aliased nodes (`_plain`). Anything
    else — a YAML error, aliasing near the bound — goes to `BoundedComposer`, which reports it
    with its counts and marks exactly as before; the nodes, and so the objects, are the same.
    A document of plain data (the usual one) is constructed by `construct_tree`, the others by
    the safe constructor; each as soon as it is composed, so its nodes are freed at once."""
    docs: list[Any] = []
    try:
        while loader.check_node():
            stop_reading_if_asked(len(docs))
            node = loader.get_node()
            _check_size(node, len(docs) + 1)
            if node is None:
                docs.append(None)
                continue
            data = construct_tree(loader, node)
            if data is NOT_A_TREE:
                if not _plain(node):
                    return None
                data = loader.construct_document(node)
            docs.append(data)
    except yaml.YAMLError:
        return None
    return docs


NOT_A_TREE: Any = object()
"""What `construct_tree` returns for a document it leaves to the safe constructor."""

_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{t}" for t in ("str", "map", "seq"))
_SCALARS = tuple(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float"))
"""The scalar tags `construct_tree` constructs (through the safe constructor's own function)."""


class _NotATree(Exception):
    pass


def construct_tree(loader: Any, root: Node) -> Any:
    """The document `root` as the safe constructor (`loader.construct_document`) makes it,
    when it is plain data that the bounded composer takes: mappings and sequences with the
    default tags whose scalars are strings, nulls, booleans, integers or floats and whose keys
    are scalars, no deeper than MAX_DEPTH, and, where a node is reached twice (an alias), no
    cycle and aliasing far from the CVE-2019-11253 bound (`_aliasing_allowed`); else
    `NOT_A_TREE` (and nothing changed).

    Why: the safe constructor is generic (a generator per collection, merge keys, recursive
    structures, a dispatch per node), and that was half the time libyaml's reading took.
    For such a document it does exactly this: a mapping is a dict filled in the document's
    order (a repeated key keeps its first place and its last value), a sequence a list, a
    string the scalar's text, the other scalars what the constructor's own function for their
    tag returns; a node reached again is the object made the first time. A merge key (`<<`),
    a `=` key, another tag, a collection as a key: the safe constructor, which knows them."""
    made: dict[int, Any] = {}
    building: set[int] = set()
    again: list[tuple[Node, int]] = []  # (a node reached again, the depth above it)
    makers = {tag: loader.yaml_constructors[tag] for tag in _SCALARS}

    def build(node: Node, depth: int) -> Any:
        key = id(node)
        if key in made:
            if key in building:
                raise _NotATree  # an alias to a node that contains it: a cycle
            again.append((node, depth))
            return made[key]
        kind = type(node)
        if kind is ScalarNode:
            if node.tag == _STR:
                value = made[key] = node.value
                return value
            make = makers.get(node.tag)
            if make is None:
                raise _NotATree
            value = made[key] = make(loader, node)
            return value
        depth += 1
        if depth > MAX_DEPTH:
            raise _NotATree
        building.add(key)
        if kind is MappingNode and node.tag == _MAP:
            out: dict[Any, Any] = {}
            made[key] = out
            for k, v in node.value:
                if type(k) is not ScalarNode:
                    raise _NotATree
                name = build(k, depth)
                out[name] = build(v, depth)
        elif kind is SequenceNode and node.tag == _SEQ:
            items: list[Any] = []
            made[key] = items
            items.extend([build(item, depth) for item in node.value])
        else:
            raise _NotATree
        building.discard(key)
        return made[key]

    try:
        data = build(root, 0)
    except _NotATree:
        return NOT_A_TREE
    if again and not _aliasing_allowed(again, len(made)):
        return NOT_A_TREE
    return data


def _aliasing_allowed(again: list[tuple[Node, int]], distinct: int) -> bool:
    """Whether a document of `distinct` nodes, of which those in `again` were reached again
    (each with the nesting depth above it), passes `BoundedComposer`: no collection nested
    past MAX_DEPTH along the aliases (a cycle nests without end), and aliasing that never
    trips the CVE-2019-11253 rule.

    Why exact: the bounded composer counts a document's nodes with every alias expanded (an
    alias adds its anchor's expanded size), so at the end it has counted `distinct` plus the
    expanded size of every node reached again. Both counts only grow as it composes, so when
    at the end the aliased ones are at most ALIAS_MIN_ALIASED or all of them at most
    ALIAS_MIN_NODES, the rule was never met by larger counts and it refused nothing. Depth is
    measured along the aliases too, which is never less than the composer's (it does not
    descend into an alias): a document deeper only through aliases goes to the bounded
    composer, which decides. Sizes are memoised per node, so an alias bomb costs its distinct
    nodes, not its expansion."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}

    def measure(node: Node, above: int) -> None:  # a cycle nests past MAX_DEPTH: refused
        key = id(node)
        if key in size:
            return
        nested = type(node) is not ScalarNode
        if above + nested > MAX_DEPTH:  # too deep whatever comes above it: stop recursing
            raise _NotATree
        kids = _children(node)
        for kid in kids:
            measure(kid, above + nested)
        size[key] = 1 + sum(size[id(k)] for k in kids)
        height[key] = nested + max((height[id(k)] for k in kids), default=0)

    aliased = 0
    try:
        for node, depth in again:
            measure(node, depth)
            if depth + height[id(node)] > MAX_DEPTH:
                return False
            aliased += size[id(node)]
    except _NotATree:
        return False
    return aliased <= ALIAS_MIN_ALIASED or distinct + aliased <= ALIAS_MIN_NODES


def _plain(root: Node) -> bool:
    """Whether the bounded composer takes `root`'s document: no collection nested past
    MAX_DEPTH and, where a node is reached twice (an alias), aliasing it takes
    (`_aliasing_allowed`, which also refuses a cycle)."""
    seen: set[int] = set()
    again: list[tuple[Node, int]] = []
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            again.append((node, depth))
            continue
        seen.add(id(node))
        kind = type(node)
        if kind is MappingNode:
            depth += 1
            if depth > MAX_DEPTH:
                return False
            for key, value in node.value:
                stack.append((key, depth))
                stack.append((value, depth))
        elif kind is SequenceNode:
            depth += 1
            if depth > MAX_DEPTH:
                return False
            stack.extend((item, depth) for item in node.value)
        elif kind is not ScalarNode:
            return False
    return not again or _aliasing_allowed(again, len(seen))


def _children(node: Node) -> list[Node]:
    if type(node) is MappingNode:
        return [n for pair in node.value for n in pair]
    if type(node) is SequenceNode:
        return list(node.value)
    return []
