"""Static worst-case cost estimation, as the API server runs it when validating selectors.

Why: upstream's DRA compiler calls cel-go's ``env.EstimateCost`` with Kubernetes'
``library.CostEstimator`` and a size estimator that knows how large the ``device``
variable can be; ``validateCELSelector`` then refuses an expression whose estimated
maximum cost exceeds ``CELSelectorExpressionMaxCost`` (1,000,000) with "too complex,
exceeds cost limit". Without the estimate, such an expression passes ``validate`` here
and only fails at run time, on the first device evaluated. The runtime meter
(:mod:`solver.cel.runtime`) stays: the estimate is a gate at compile time, not a
replacement.

The model follows cel-go's ``checker/cost.go`` where it matters for the totals:

* literals cost 0, identifiers and field selections 1, indexing 1, a function call 1
  unless a library estimator prices it (string traversals cost 0.1 per character,
  ``find``/``findAll``/``matches`` the string cost times 0.25 per pattern character,
  list scans 1 per element, ``<format>.validate(s)`` the string cost times 32 (upstream's
  ``MaxNameFormatRegexSize`` 128 times 0.25, whatever the format), as in
  ``library/cost.go``); ``&&``, ``||`` and ``?:`` cost
  their operands (the dearer branch); ``has()`` costs its operand only;
* list literals 10 plus their elements, map literals 30 plus their entries;
* a comprehension costs its range, plus for every possible element the loop condition
  and step of cel-go's macro expansion (``all``: 3 plus the predicate), plus 1.

Sizes come from the API limits on a device: at most 32 attributes and capacities
(``ResourceSliceMaxAttributesAndCapacitiesPerDevice``), strings up to 64 characters
(``DeviceAttributeMaxValueLength``) and, for list attributes, 64 elements; constant
strings and lists have their own size. The upstream total for its own example (seven
nested ``all`` over ten-element lists, 85,555,551) is reproduced exactly; for other
expressions the estimate approximates cel-go's and is not byte-identical. Where cel-go
would know no bound (a function without a size rule), this estimator assumes the
device-sized bound of 64 instead of infinity, so it never refuses an expression only
because of a missing rule here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from .ast import Bind, Call, Comprehension, Ident, Index, ListLit, Lit, MapLit, Node, Select
from .lib_format import MAX_NAME_FORMAT_REGEX_SIZE

__all__ = ["estimate_cost"]

_MAX_ATTRS: Final = 32
_MAX_STRING: Final = 64
_MAX_LIST: Final = 64
_UNKNOWN: Final = 64


@dataclass(frozen=True)
class Size:
    """Largest length of a value (characters, elements or entries) and its elements' size."""

    n: float = 0
    elem: Size | None = None
    key: Size | None = None


_STR: Final = Size(_MAX_STRING)
_SCALAR: Final = Size(0)
#: one attribute value: a string or a list of strings (KEP-5491), whichever is larger
_ATTR_VALUE: Final = Size(_MAX_LIST, _STR)
_DEVICE_FIELDS: Final[dict[str, Size]] = {
    "driver": Size(63),
    "allowMultipleAllocations": _SCALAR,
    "attributes": Size(_MAX_ATTRS, Size(_MAX_ATTRS, _ATTR_VALUE, _STR), _STR),
    "capacity": Size(_MAX_ATTRS, Size(_MAX_ATTRS, _SCALAR, _STR), _STR),
}
_DEVICE: Final = Size(0)

# per-iteration overhead of cel-go's macro expansions (loop condition + step - body)
_LOOP: Final = {
    "all": 3,
    "exists": 3,
    "exists_one": 2,
    "map": 12,
    "filter": 13,
    "transformList": 12,
    "transformMap": 12,
    "sortBy": 12,
}

_TRAVERSE: Final = frozenset(
    {
        "lowerAscii",
        "upperAscii",
        "substring",
        "trim",
        "url",
        "isURL",
        "quantity",
        "isQuantity",
        "semver",
        "isSemver",
        "cidr",
        "isIP",
        "isCIDR",
        "contains",
        "startsWith",
        "endsWith",
        "charAt",
        "strings.quote",
        "format",
        "timestamp",
        "duration",
    }
)
_SAME_SIZE: Final = frozenset(
    {"lowerAscii", "upperAscii", "substring", "trim", "reverse", "sort", "distinct", "slice", "strings.quote"}
)
_LIST_SCAN: Final = frozenset({"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"})
_REGEX: Final = frozenset({"find", "findAll", "matches"})


def _factor(n: float, f: float) -> float:
    return math.ceil(n * f) if math.isfinite(n) else n


class _Estimator:
    def est(self, node: Node, scope: dict[str, Size]) -> tuple[float, Size]:
        if isinstance(node, Lit):
            v = node.value
            return 0, Size(len(v)) if isinstance(v, str | bytes) else _SCALAR
        if isinstance(node, Ident):
            if node.name in scope:
                return 1, scope[node.name]
            return 1, _DEVICE if node.name == "device" else _SCALAR
        if isinstance(node, Select):
            cost, size = self.est(node.target, scope)
            if node.test_only:
                return cost, _SCALAR
            if isinstance(node.target, Ident) and node.target.name == "device" and "device" not in scope:
                return cost + 1, _DEVICE_FIELDS.get(node.field, _SCALAR)
            return cost + 1, size.elem or Size(_UNKNOWN)
        if isinstance(node, Index):
            tc, ts = self.est(node.target, scope)
            kc, _ = self.est(node.key, scope)
            return tc + kc + 1, ts.elem or Size(_UNKNOWN)
        if isinstance(node, ListLit):
            parts = [self.est(i, scope) for i in node.items]
            elem = max((s for _, s in parts), key=lambda s: s.n, default=_SCALAR)
            return 10 + sum(c for c, _ in parts), Size(len(parts), elem)
        if isinstance(node, MapLit):
            keys = [self.est(k, scope) for k, _ in node.entries]
            vals = [self.est(v, scope) for _, v in node.entries]
            elem = max((s for _, s in vals), key=lambda s: s.n, default=_SCALAR)
            key = max((s for _, s in keys), key=lambda s: s.n, default=_SCALAR)
            return 30 + sum(c for c, _ in keys + vals), Size(len(keys), elem, key)
        if isinstance(node, Bind):
            ic, isz = self.est(node.init, scope)
            bc, bsz = self.est(node.body, {**scope, node.var: isz})
            return ic + bc, bsz
        if isinstance(node, Comprehension):
            return self.comprehension(node, scope)
        assert isinstance(node, Call)
        return self.call(node, scope)

    def comprehension(self, node: Comprehension, scope: dict[str, Size]) -> tuple[float, Size]:
        rc, rs = self.est(node.range, scope)
        inner = dict(scope)
        is_map = rs.key is not None
        if node.var2 is None:
            inner[node.var] = (rs.key or _STR) if is_map else (rs.elem or Size(_UNKNOWN))
        else:
            inner[node.var] = (rs.key or _STR) if is_map else _SCALAR
            inner[node.var2] = rs.elem or Size(_UNKNOWN)
        parts = [self.est(a, inner) for a in node.args]
        body = sum(c for c, _ in parts)
        per = _LOOP.get(node.macro, 3) + body
        cost = rc + rs.n * per + 1
        if node.macro in ("map", "filter", "transformList", "sortBy"):
            out = Size(rs.n, parts[-1][1] if node.macro != "filter" else rs.elem)
            return cost, out
        if node.macro == "transformMap":
            return cost, Size(rs.n, parts[-1][1], rs.key)
        return cost, _SCALAR

    def call(self, node: Call, scope: dict[str, Size]) -> tuple[float, Size]:
        fn = node.fn
        operands = ([node.target] if node.target is not None else []) + list(node.args)
        if (
            node.target is not None
            and isinstance(node.target, Ident)
            and node.target.name in ("optional", "strings", "sets", "lists", "ip", "format")
            and node.target.name not in scope
        ):
            fn = f"{node.target.name}.{fn}"
            operands = list(node.args)
        parts = [self.est(o, scope) for o in operands]
        args = sum(c for c, _ in parts)
        sizes = [s for _, s in parts]
        if fn in ("_&&_", "_||_"):
            return args, _SCALAR
        if fn == "_?_:_":
            (cc, _), (yc, ys), (nc, ns) = parts
            return cc + max(yc, nc), ys if ys.n >= ns.n else ns
        got = _operator_or_text(fn, node, operands, sizes, args)
        return got if got is not None else _collection(fn, operands, sizes, args)


def _operator_or_text(
    fn: str, node: Call, operands: list[Node], sizes: list[Size], args: float
) -> tuple[float, Size] | None:
    """`_Estimator.call`'s cost of `+`, `in` and the string functions (regular expressions,
    `validate`, the traversals, `replace`, `split`), or None for another function
    (`_collection`, asked after it). `args`: the operands' cost, `sizes` their sizes. Two
    functions so that each reads as one table of cases."""
    first = sizes[0] if sizes else _SCALAR
    if fn == "_+_" and len(sizes) == 2:
        n = sizes[0].n + sizes[1].n
        elem = sizes[0].elem or sizes[1].elem
        return args + 1 + _factor(n, 0.1), Size(n, elem)
    if fn == "@in":
        return args + 1 + (sizes[1].n if sizes[1].key is None else 0), _SCALAR
    if fn in _REGEX and len(sizes) >= 2:
        pattern = operands[1]
        plen: float = sizes[1].n
        if isinstance(pattern, Lit) and isinstance(pattern.value, str):
            plen = len(pattern.value)
        cost = _factor(first.n + 1, 0.1) * _factor(plen, 0.25)
        return args + cost, Size(first.n, Size(first.n)) if fn == "findAll" else Size(first.n)
    if fn == "validate" and node.target is not None and len(sizes) == 2:
        # upstream cannot know the format statically: MaxNameFormatRegexSize (128) for all
        cost = _factor(_factor(sizes[1].n, 0.1), MAX_NAME_FORMAT_REGEX_SIZE * 0.25)
        return args + cost, Size(_UNKNOWN, Size(_UNKNOWN))
    if fn in _TRAVERSE:
        return args + max(_factor(first.n, 0.1), 1), first if fn in _SAME_SIZE else Size(_UNKNOWN)
    if fn in ("replace", "split"):
        cost = max(_factor(first.n, 0.2), 1)
        if fn == "split":
            return args + cost, Size(first.n, first)
        return args + cost, Size(_UNKNOWN if len(sizes) < 3 else max(first.n, first.n * sizes[2].n))
    return None


def _collection(fn: str, operands: list[Node], sizes: list[Size], args: float) -> tuple[float, Size]:
    """`_Estimator.call`'s cost of `join`, the list and set functions, the optionals and any
    other function (one step, a result of unknown size), as `_operator_or_text`."""
    first = sizes[0] if sizes else _SCALAR
    if fn == "join":
        n = first.n * (first.elem.n if first.elem else _UNKNOWN)
        return args + max(_factor(n, 0.1), 1), Size(n)
    if fn in _LIST_SCAN:
        if first.elem is not None:
            per = 1 + (_factor(first.elem.n, 0.1) if first.elem.n else 0)
            return args + max(first.n * per, 1), _SCALAR
        return args + max(_factor(first.n, 0.1), 1), _SCALAR
    if fn == "lists.range":
        arg = operands[0]
        n = arg.value if isinstance(arg, Lit) and type(arg.value) is int and arg.value >= 0 else _UNKNOWN
        return args + max(n, 1), Size(n, _SCALAR)
    if fn in _SAME_SIZE or fn in ("flatten",):
        return args + max(first.n, 1), first
    if fn in ("sets.contains", "sets.equivalent", "sets.intersects") and len(sizes) == 2:
        return args + max(sizes[0].n * sizes[1].n, 1), _SCALAR
    if fn in ("first", "last", "optional.of", "optional.ofNonZeroValue", "value", "orValue", "dyn"):
        return args + 1, first.elem if fn in ("first", "last") and first.elem else first
    return args + 1, Size(_UNKNOWN)


def estimate_cost(tree: Node) -> float:
    """The estimated worst-case cost of evaluating ``tree`` on any device (may be inf)."""
    cost, _ = _Estimator().est(tree, {})
    return cost
