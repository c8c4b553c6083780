"""Parse CEL text with cel-python's grammar into :mod:`solver.cel.ast` nodes.

Why cel-python's grammar, extended: it is a faithful LALR transcription of the CEL spec
grammar, but predates CEL's optional syntax. Kubernetes enables optional types, and
``device.attributes["d"].?x.orValue(...)`` is one of the documented safe patterns, so the
grammar text shipped in ``celpy/cel.lark`` is loaded and two rules are added:
``member "." "?" IDENT`` and ``member "[" "?" expr "]"``.

Literals are decoded here (celpy's ``celstr`` drops newlines in multi-line strings and
does not reject invalid escapes), macros are expanded (``has``, ``all``, ``exists``,
``exists_one``/``existsOne``, ``map``, ``filter``, two-variable comprehensions,
``transformList``/``transformMap``, ``sortBy``, ``cel.bind``), and nesting deeper than
:data:`MAX_DEPTH` is refused before any recursive walk could exhaust Python's stack.
"""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path
from typing import Final

import lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from ..larkcache import cache_file
from .ast import Bind, Call, Comprehension, Ident, Index, ListLit, Lit, MapLit, Node, Select
from .values import INT64_MAX, INT64_MIN, UINT64_MAX, UInt

__all__ = ["MAX_DEPTH", "CompileIssue", "parse"]

#: Maximum nesting of CEL constructs (cel-go's parser refuses 250; kept lower so that
#: compiling and evaluating the deepest accepted expression stays within Python's
#: default recursion limit).
MAX_DEPTH: Final = 100


class CompileIssue(Exception):
    """A syntax or type error at a position (converted to CelCompileError by the caller)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _grammar() -> str:
    # cel-python's file, found without importing cel-python (the checker's, not needed here)
    spec = find_spec("celpy")
    if spec is None or spec.origin is None:  # pragma: no cover - cel-python is a dependency
        raise RuntimeError("cel-python is not installed: its grammar cel.lark is needed")
    text = (Path(spec.origin).parent / "cel.lark").read_text()
    old = "member         : member_dot | member_dot_arg | member_index | member_object | primary"
    if old not in text:  # pragma: no cover - guards against a changed cel-python grammar
        raise RuntimeError("unexpected cel-python grammar: cannot add optional selection")
    text = text.replace(
        old,
        "member         : member_dot | member_dot_opt | member_dot_arg | member_index"
        " | member_index_opt | member_object | primary\n"
        'member_dot_opt : member "." "?" IDENT\n'
        'member_index_opt : member "[" "?" expr "]"',
    )
    for old, new in (
        (
            'list_lit       : "[" [exprlist] "]"',
            'list_lit       : "[" [listelems] "]"\n'
            'listelems      : listelem ("," listelem)* [","]\n'
            "listelem       : opt_elem | expr\n"
            'opt_elem       : "?" expr',
        ),
        (
            'map_lit        : "{" [mapinits] "}"',
            'map_lit        : "{" [mapentries] "}"\n'
            'mapentries     : mapentry ("," mapentry)* [","]\n'
            'mapentry       : opt_key ":" expr | expr ":" expr\n'
            'opt_key        : "?" expr',
        ),
    ):
        if old not in text:  # pragma: no cover - guards against a changed cel-python grammar
            raise RuntimeError("unexpected cel-python grammar: cannot add optional entries")
        text = text.replace(old, new)
    return text


def _ambiguous_literals(t: lark.Token) -> lark.Token:
    if t.value in ("true", "false"):
        return lark.Token.new_borrow_pos("BOOL_LIT", t.value, t)  # keep the position
    return t


_PARSER: Final = lark.Lark(
    _grammar(),
    parser="lalr",
    start="expr",
    g_regex_flags=re.M,
    lexer_callbacks={"IDENT": _ambiguous_literals},
    propagate_positions=True,
    maybe_placeholders=False,
    priority="invert",
    cache=cache_file("cel-parser") or False,  # the analysed tables, kept between runs
)

_PASS_THROUGH: Final = frozenset(
    {
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
        "paren_expr",
    }
)

_LOGIC_CHAINS: Final = frozenset({"conditionalor", "conditionaland"})

_BINARY_OPS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}

_OP_LENGTH: Final = {op: (2 if op == "@in" else len(op) - 2) for op in _BINARY_OPS.values()}

# macro name -> accepted argument counts (after the receiver) for the one- and
# two-variable forms
_MACROS: Final[dict[str, tuple[int, ...]]] = {
    "all": (2, 3),
    "exists": (2, 3),
    "exists_one": (2, 3),
    "existsOne": (2, 3),
    "map": (2, 3),
    "filter": (2,),
    "transformList": (3, 4),
    "transformMap": (3, 4),
    "sortBy": (2,),
}
_TWO_VAR_MACROS: Final = frozenset({"transformList", "transformMap"})


def parse(text: str) -> Node:
    """Parse ``text``; raises :class:`CompileIssue` with a 1-based position."""
    try:
        tree = _PARSER.parse(text)
    except UnexpectedEOF:
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        raise CompileIssue("Syntax error: unexpected end of expression", line, column) from None
    except UnexpectedToken as ex:
        tok = ex.token
        if tok.type == "$END":
            line = text.count("\n") + 1
            column = len(text) - (text.rfind("\n") + 1) + 1
            raise CompileIssue("Syntax error: unexpected end of expression", line, column) from None
        raise CompileIssue(f"Syntax error: mismatched input {str(tok)!r}", ex.line, ex.column) from None
    except UnexpectedCharacters as ex:
        pos: int | None = ex.pos_in_stream  # lark declares it None on the base class; here an int
        ch = text[pos] if pos is not None and 0 <= pos < len(text) else ""
        raise CompileIssue(f"Syntax error: token recognition error at: {ch!r}", ex.line, ex.column) from None
    except LarkError as ex:  # pragma: no cover - other lark failures
        raise CompileIssue(f"Syntax error: {ex}", 1, 1) from None
    _check_depth(tree)
    return _Converter().convert(tree)


def _pos(tree: lark.Tree | lark.Token) -> tuple[int, int]:
    if isinstance(tree, lark.Token):
        return (tree.line or 1, tree.column or 1)
    meta = tree.meta
    if getattr(meta, "empty", True):
        return (1, 1)
    return (meta.line or 1, meta.column or 1)


def _check_depth(tree: lark.Tree) -> None:
    """Refuse deeply nested expressions without recursing (counts non-trivial nodes only)."""
    stack: list[tuple[lark.Tree, int, str]] = [(tree, 0, "")]
    while stack:
        node, depth, parent = stack.pop()
        # single-child rules (wrappers, operator tokens, parentheses) add no nesting,
        # except list and map literals
        trivial = len(node.children) == 1 and node.data not in ("list_lit", "map_lit")
        # a chain of && (or ||) becomes a balanced tree: its length does not add depth
        chained = node.data in _LOGIC_CHAINS and node.data == parent
        d = depth if trivial or chained else depth + 1
        if d > MAX_DEPTH:
            line, column = _pos(node)
            raise CompileIssue(f"expression nesting exceeds the maximum depth of {MAX_DEPTH}", line, column)
        for c in node.children:
            if isinstance(c, lark.Tree):
                stack.append((c, d, str(node.data)))


_ESCAPES: Final = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_ESCAPE_RE: Final = re.compile(
    r"\\(?:(?P<simple>[abfnrtv\\'\"`?])|x(?P<x>[0-9a-fA-F]{2})|u(?P<u>[0-9a-fA-F]{4})"
    r"|U(?P<U>[0-9a-fA-F]{8})|(?P<oct>[0-3][0-7]{2})|(?P<bad>.?))",
    re.DOTALL,
)


def _unquote(token: lark.Token, *, as_bytes: bool) -> str | bytes:
    text = str(token.value)
    if as_bytes:
        text = text[1:]
    raw = text[:1] in ("r", "R")
    if raw:
        text = text[1:]
    quote = 3 if text[:3] in ('"""', "'''") else 1
    body = text[quote:-quote]
    if raw:
        return body.encode("utf-8") if as_bytes else body
    out_b = bytearray()
    out_s: list[str] = []
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        chunk = body[pos : m.start()]
        pos = m.end()
        if as_bytes:
            out_b += chunk.encode("utf-8")
        else:
            out_s.append(chunk)
        if m["bad"] is not None:
            line, column = _pos(token)
            raise CompileIssue(f"Syntax error: invalid escape sequence '\\{m['bad']}'", line, column)
        if m["simple"] is not None:
            ch = _ESCAPES[m["simple"]]
            if as_bytes:
                out_b += ch.encode("utf-8")
            else:
                out_s.append(ch)
            continue
        code = int(m["x"] or m["u"] or m["U"] or m["oct"], 16 if m["oct"] is None else 8)
        if as_bytes:
            if m["u"] is not None or m["U"] is not None:
                out_b += chr(code).encode("utf-8")
            else:
                out_b.append(code)
        else:
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                line, column = _pos(token)
                raise CompileIssue("Syntax error: invalid unicode code point in escape", line, column)
            out_s.append(chr(code))
    rest = body[pos:]
    if as_bytes:
        out_b += rest.encode("utf-8")
        return bytes(out_b)
    out_s.append(rest)
    return "".join(out_s)


def _int_literal(text: str) -> int:
    neg = text.startswith("-")
    digits = text[1:] if neg else text
    value = int(digits[2:], 16) if digits[:2].lower() == "0x" else int(digits, 10)
    return -value if neg else value


class _Converter:
    """Walks the lark tree into :mod:`solver.cel.ast` nodes."""

    def convert(self, tree: lark.Tree | lark.Token) -> Node:
        # Skip single-child wrapper rules iteratively (cheap and stack-friendly).
        while isinstance(tree, lark.Tree) and tree.data in _PASS_THROUGH and len(tree.children) == 1:
            tree = tree.children[0]
        if isinstance(tree, lark.Token):  # pragma: no cover - the grammar wraps all tokens
            raise CompileIssue(f"Syntax error: unexpected {tree!s}", *_pos(tree))
        handler = getattr(self, "_" + str(tree.data), None)
        if handler is None:
            raise CompileIssue(f"unsupported syntax: {tree.data}", *_pos(tree))
        node: Node = handler(tree)
        return node

    # -- operators ---------------------------------------------------------------------

    def _expr(self, tree: lark.Tree) -> Node:
        cond, left, right = (self.convert(c) for c in tree.children)
        return Call("_?_:_", None, (cond, left, right), *_pos(tree))

    def _chain(self, tree: lark.Tree, fn: str) -> Node:
        """``a && b && c ...`` as a balanced tree, as cel-go's parser builds it.

        The grammar is left-recursive, so a long chain would otherwise nest as deep as it
        is long. ``&&``/``||`` are associative (errors included), so balancing keeps the
        result and bounds the depth by log2 of the chain length.
        """
        operands: list[lark.Tree | lark.Token] = []
        node: lark.Tree | lark.Token = tree
        while isinstance(node, lark.Tree) and node.data == tree.data and len(node.children) == 2:
            operands.append(node.children[1])
            node = node.children[0]
        operands.append(node)
        operands.reverse()
        converted = [self.convert(o) for o in operands]
        line, column = _pos(tree)

        def build(lo: int, hi: int) -> Node:
            if hi - lo == 1:
                return converted[lo]
            mid = (lo + hi) // 2
            return Call(fn, None, (build(lo, mid), build(mid, hi)), line, column)

        return build(0, len(converted))

    def _conditionalor(self, tree: lark.Tree) -> Node:
        return self._chain(tree, "_||_")

    def _conditionaland(self, tree: lark.Tree) -> Node:
        return self._chain(tree, "_&&_")

    def _binary(self, tree: lark.Tree) -> Node:
        op_tree, right_tree = tree.children
        assert isinstance(op_tree, lark.Tree)
        left = self.convert(op_tree.children[0])
        right = self.convert(right_tree)
        op = _BINARY_OPS[str(op_tree.data)]
        # the operator is the last token of op_tree: point at it, as cel-go does
        meta = op_tree.meta
        if getattr(meta, "empty", True):  # pragma: no cover
            line, column = _pos(op_tree)
        else:
            line, column = meta.end_line, meta.end_column - _OP_LENGTH[op]
        return Call(op, None, (left, right), line, column)

    _relation = _binary
    _addition = _binary
    _multiplication = _binary

    def _unary(self, tree: lark.Tree) -> Node:
        op_tree, operand = tree.children
        assert isinstance(op_tree, lark.Tree)
        fn = "!_" if op_tree.data == "unary_not" else "-_"
        return Call(fn, None, (self.convert(operand),), *_pos(tree))

    # -- members -----------------------------------------------------------------------

    def _member_dot(self, tree: lark.Tree) -> Node:
        target, name = tree.children
        return Select(self.convert(target), str(name), *_pos(name))

    def _member_dot_opt(self, tree: lark.Tree) -> Node:
        target, name = tree.children
        return Select(self.convert(target), str(name), *_pos(name), optional=True)

    def _member_index(self, tree: lark.Tree) -> Node:
        target, key = tree.children
        return Index(self.convert(target), self.convert(key), *_pos(tree))

    def _member_index_opt(self, tree: lark.Tree) -> Node:
        target, key = tree.children
        return Index(self.convert(target), self.convert(key), *_pos(tree), optional=True)

    def _member_object(self, tree: lark.Tree) -> Node:
        raise CompileIssue("message construction is not supported in DRA expressions", *_pos(tree))

    def _args(self, children: list[lark.Tree | lark.Token]) -> tuple[Node, ...]:
        if not children:
            return ()
        exprlist = children[0]
        assert isinstance(exprlist, lark.Tree) and exprlist.data == "exprlist"
        return tuple(self.convert(c) for c in exprlist.children)

    def _member_dot_arg(self, tree: lark.Tree) -> Node:
        target_tree, name_tok = tree.children[0], tree.children[1]
        name = str(name_tok)
        line, column = _pos(name_tok)
        args = self._args(tree.children[2:])
        target = self.convert(target_tree)
        if isinstance(target, Ident) and target.name == "cel" and name == "bind":
            if len(args) != 3 or not isinstance(args[0], Ident):
                raise CompileIssue("cel.bind() requires an identifier and two expressions", line, column)
            return Bind(args[0].name, args[1], args[2], line, column)
        if name in _MACROS and len(args) in _MACROS[name]:
            return self._macro(name, target, args, line, column)
        return Call(name, target, args, line, column)

    def _macro(self, name: str, target: Node, args: tuple[Node, ...], line: int, column: int) -> Node:
        two_var = name in _TWO_VAR_MACROS or (
            name in ("all", "exists", "exists_one", "existsOne") and len(args) == 3
        )
        nvars = 2 if two_var else 1
        if name == "map" and len(args) == 3:
            nvars = 1  # map(x, filter, transform)
        names: list[str] = []
        for a in args[:nvars]:
            if not isinstance(a, Ident):
                raise CompileIssue(f"{name}() variable names must be simple identifiers", a.line, a.column)
            names.append(a.name)
        if nvars == 2 and names[0] == names[1]:
            raise CompileIssue(f"{name}() variables must have different names", line, column)
        macro = "exists_one" if name == "existsOne" else name
        var2 = names[1] if nvars == 2 else None
        return Comprehension(macro, target, names[0], var2, args[nvars:], line, column)

    # -- primaries ---------------------------------------------------------------------

    def _ident(self, tree: lark.Tree) -> Node:
        tok = tree.children[0]
        return Ident(str(tok), *_pos(tok))

    def _dot_ident(self, tree: lark.Tree) -> Node:
        return self._ident(tree)

    def _ident_arg(self, tree: lark.Tree) -> Node:
        tok = tree.children[0]
        name = str(tok)
        line, column = _pos(tok)
        args = self._args(tree.children[1:])
        if name == "has":
            if len(args) != 1 or not isinstance(args[0], Select) or args[0].optional:
                raise CompileIssue("invalid argument to has() macro", line, column)
            sel = args[0]
            return Select(sel.target, sel.field, sel.line, sel.column, test_only=True)
        return Call(name, None, args, line, column)

    _dot_ident_arg = _ident_arg

    def _list_lit(self, tree: lark.Tree) -> Node:
        """``[a, ?b]``: ``?`` marks an optional element (included only when present)."""
        items: list[Node] = []
        optional: list[int] = []
        elems = [c for c in tree.children if isinstance(c, lark.Tree)]
        for elem in elems[0].children if elems else ():
            assert isinstance(elem, lark.Tree) and elem.data == "listelem"
            inner = elem.children[0]
            if isinstance(inner, lark.Tree) and inner.data == "opt_elem":
                optional.append(len(items))
                inner = inner.children[0]
            items.append(self.convert(inner))
        return ListLit(tuple(items), *_pos(tree), optional=frozenset(optional))

    def _map_lit(self, tree: lark.Tree) -> Node:
        """``{k: v, ?k2: v2}``: ``?`` marks an optional entry (set only when v2 is present)."""
        entries: list[tuple[Node, Node]] = []
        optional: list[int] = []
        inits = [c for c in tree.children if isinstance(c, lark.Tree)]
        for entry in inits[0].children if inits else ():
            assert isinstance(entry, lark.Tree) and entry.data == "mapentry"
            key_tree, value_tree = entry.children
            if isinstance(key_tree, lark.Tree) and key_tree.data == "opt_key":
                optional.append(len(entries))
                key_tree = key_tree.children[0]
            entries.append((self.convert(key_tree), self.convert(value_tree)))
        return MapLit(tuple(entries), *_pos(tree), optional=frozenset(optional))

    def _literal(self, tree: lark.Tree) -> Node:
        tok = tree.children[0]
        assert isinstance(tok, lark.Token)
        line, column = _pos(tok)
        kind, text = tok.type, str(tok.value)
        value: object
        if kind == "INT_LIT":
            value = _int_literal(text)
            if not INT64_MIN <= value <= INT64_MAX:
                raise CompileIssue(f"invalid int literal {text}: out of range", line, column)
        elif kind == "UINT_LIT":
            value = _int_literal(text[:-1])
            if not 0 <= value <= UINT64_MAX:
                raise CompileIssue(f"invalid uint literal {text}: out of range", line, column)
            value = UInt(value)
        elif kind == "FLOAT_LIT":
            value = float(text)
        elif kind in ("STRING_LIT", "MLSTRING_LIT"):
            value = _unquote(tok, as_bytes=False)
        elif kind == "BYTES_LIT":
            value = _unquote(tok, as_bytes=True)
        elif kind == "BOOL_LIT":
            value = text == "true"
        elif kind == "NULL_LIT":
            value = None
        else:  # pragma: no cover - the grammar has no other literal
            raise CompileIssue(f"unsupported literal {text}", line, column)
        return Lit(value, line, column)
