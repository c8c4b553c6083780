"""A small CEL syntax tree, produced from cel-python's parse tree.

Why not work on the lark tree directly: cel-python's grammar nests every operand ten rules
deep (``expr -> conditionalor -> ... -> primary``) and keeps macros as ordinary member
calls. The checker, the closure compiler and the signature analysis all want the same
compact view: literals, identifiers, field selections, index operations, calls
(operators included, as cel-go names them: ``_+_``, ``_&&_``, ``_?_:_``), list/map
literals and the expanded macros (``has`` is a test-only selection, comprehensions and
``cel.bind`` are their own nodes). Every node keeps its source line and column for
error messages.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Bind", "Call", "Comprehension", "Ident", "Index", "ListLit", "Lit", "MapLit", "Node", "Select"]


class Node:
    """Base class; ``line``/``column`` are 1-based positions in the expression."""

    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column

    def children(self) -> tuple[Node, ...]:
        return ()


class Lit(Node):
    """A literal constant (already converted to its runtime value)."""

    __slots__ = ("value",)

    def __init__(self, value: Any, line: int, column: int) -> None:
        super().__init__(line, column)
        self.value = value


class Ident(Node):
    """A variable or type name (``device``, a comprehension variable, ``int``)."""

    __slots__ = ("name",)

    def __init__(self, name: str, line: int, column: int) -> None:
        super().__init__(line, column)
        self.name = name


class Select(Node):
    """``target.field``; ``optional`` for ``target.?field``; ``test_only`` for ``has(target.field)``."""

    __slots__ = ("target", "field", "optional", "test_only")

    def __init__(
        self,
        target: Node,
        field: str,
        line: int,
        column: int,
        *,
        optional: bool = False,
        test_only: bool = False,
    ) -> None:
        super().__init__(line, column)
        self.target = target
        self.field = field
        self.optional = optional
        self.test_only = test_only

    def children(self) -> tuple[Node, ...]:
        return (self.target,)


class Index(Node):
    """``target[key]``; ``optional`` for ``target[?key]``."""

    __slots__ = ("target", "key", "optional")

    def __init__(self, target: Node, key: Node, line: int, column: int, *, optional: bool = False) -> None:
        super().__init__(line, column)
        self.target = target
        self.key = key
        self.optional = optional

    def children(self) -> tuple[Node, ...]:
        return (self.target, self.key)


class Call(Node):
    """A function, method or operator call; ``target`` is the receiver of a method call."""

    __slots__ = ("fn", "target", "args")

    def __init__(self, fn: str, target: Node | None, args: tuple[Node, ...], line: int, column: int) -> None:
        super().__init__(line, column)
        self.fn = fn
        self.target = target
        self.args = args

    def children(self) -> tuple[Node, ...]:
        return ((self.target,) if self.target is not None else ()) + self.args


class ListLit(Node):
    """``[a, b, ?c]``; ``optional`` holds the indices of ``?`` elements."""

    __slots__ = ("items", "optional")

    def __init__(
        self, items: tuple[Node, ...], line: int, column: int, *, optional: frozenset[int] = frozenset()
    ) -> None:
        super().__init__(line, column)
        self.items = items
        self.optional = optional

    def children(self) -> tuple[Node, ...]:
        return self.items


class MapLit(Node):
    """``{k: v, ?k2: v2}``; ``optional`` holds the indices of ``?`` entries."""

    __slots__ = ("entries", "optional")

    def __init__(
        self,
        entries: tuple[tuple[Node, Node], ...],
        line: int,
        column: int,
        *,
        optional: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__(line, column)
        self.entries = entries
        self.optional = optional

    def children(self) -> tuple[Node, ...]:
        return tuple(n for kv in self.entries for n in kv)


class Comprehension(Node):
    """An expanded macro over ``range``: ``all``, ``exists``, ``exists_one``, ``map``,
    ``filter``, ``transformList``, ``transformMap``, ``sortBy``.

    ``var2`` is set for the two-variable forms (index/key and value). ``args`` are the
    macro's expressions after the variables (predicate and/or transform).
    """

    __slots__ = ("macro", "range", "var", "var2", "args")

    def __init__(
        self,
        macro: str,
        range_: Node,
        var: str,
        var2: str | None,
        args: tuple[Node, ...],
        line: int,
        column: int,
    ) -> None:
        super().__init__(line, column)
        self.macro = macro
        self.range = range_
        self.var = var
        self.var2 = var2
        self.args = args

    def children(self) -> tuple[Node, ...]:
        return (self.range, *self.args)


class Bind(Node):
    """``cel.bind(var, init, body)``."""

    __slots__ = ("var", "init", "body")

    def __init__(self, var: str, init: Node, body: Node, line: int, column: int) -> None:
        super().__init__(line, column)
        self.var = var
        self.init = init
        self.body = body

    def children(self) -> tuple[Node, ...]:
        return (self.init, self.body)
