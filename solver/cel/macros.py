"""Comprehension macros compiled to closures: ``all``, ``exists``, ``exists_one``, ``map``,
``filter``, ``transformList``, ``transformMap`` and ``sortBy``.

Why their own closures: each iteration binds the variables into the activation's slots,
pays one cost unit (so runaway nesting hits the budget) and applies CEL's error rules:
``all``/``exists`` absorb an error when another element decides the result (like
``&&``/``||``), ``exists_one``, ``map`` and ``filter`` propagate it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

from .operators import no_overload
from .runtime import Activation, Fn, iterate, iterate_pairs, step
from .typesys import DYN, Type
from .values import EvalError, cel_compare, type_name

__all__ = ["MACRO_BUILDERS", "MacroBuilder"]

MacroBuilder = Callable[[Fn, int, int, list[Fn], list[Type], Type], tuple[Fn, Type]]


def _elements(i2: int, r: Any) -> Any:
    return iterate(r) if i2 < 0 else iterate_pairs(r)


def _bind_vars(ctx: Activation, i1: int, i2: int, x: Any) -> None:
    if i2 < 0:
        ctx.slots[i1] = x
    else:
        ctx.slots[i1], ctx.slots[i2] = x


def _quantifier(stop: bool, op: str) -> Callable[..., tuple[Fn, Type]]:
    """`all` (stop at the first false, like `&&`) and `exists` (stop at the first true, like
    `||`): errors are absorbed when the stop value is found later, as CEL's logic requires."""

    def build(rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type) -> tuple[Fn, Type]:
        (pf,) = fns

        def quantifier(ctx: Activation) -> bool:
            err: EvalError | None = None
            for x in _elements(i2, rf(ctx)):
                step(ctx)
                _bind_vars(ctx, i1, i2, x)
                try:
                    v = pf(ctx)
                except EvalError as e:
                    err = err or e
                    continue
                if v is stop:
                    return stop
                if v is not (not stop):
                    err = err or no_overload(op, v)
            if err is not None:
                raise err
            return not stop

        return quantifier, "bool"

    return build


_build_all = _quantifier(False, "_&&_")
_build_exists = _quantifier(True, "_||_")


def _build_exists_one(
    rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type
) -> tuple[Fn, Type]:
    (pf,) = fns

    def exists_one(ctx: Activation) -> bool:
        n = 0
        for x in _elements(i2, rf(ctx)):
            step(ctx)
            _bind_vars(ctx, i1, i2, x)
            v = pf(ctx)
            if v is True:
                n += 1
            elif v is not False:
                raise no_overload("exists_one", v)
        return n == 1

    return exists_one, "bool"


def _check_pred(v: Any, macro: str) -> bool:
    if v is True:
        return True
    if v is False:
        return False
    raise no_overload(macro, v)


def _build_map(rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type) -> tuple[Fn, Type]:
    if len(fns) == 1:
        (tf,) = fns

        def map_(ctx: Activation) -> tuple[Any, ...]:
            out = []
            for x in iterate(rf(ctx)):
                step(ctx)
                ctx.slots[i1] = x
                out.append(tf(ctx))
            return tuple(out)

        return map_, ("list", types[0])
    pf, tf = fns

    def map_filter(ctx: Activation) -> tuple[Any, ...]:
        out = []
        for x in iterate(rf(ctx)):
            step(ctx)
            ctx.slots[i1] = x
            if _check_pred(pf(ctx), "map"):
                out.append(tf(ctx))
        return tuple(out)

    return map_filter, ("list", types[1])


def _build_filter(rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type) -> tuple[Fn, Type]:
    (pf,) = fns

    def filter_(ctx: Activation) -> tuple[Any, ...]:
        out = []
        for x in iterate(rf(ctx)):
            step(ctx)
            ctx.slots[i1] = x
            if _check_pred(pf(ctx), "filter"):
                out.append(x)
        return tuple(out)

    elem: Type = rt[1] if isinstance(rt, tuple) else DYN
    return filter_, ("list", elem)


def _build_transform_list(
    rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type
) -> tuple[Fn, Type]:
    pf = fns[0] if len(fns) == 2 else None
    tf = fns[-1]

    def transform(ctx: Activation) -> tuple[Any, ...]:
        out = []
        for x in iterate_pairs(rf(ctx)):
            step(ctx)
            ctx.slots[i1], ctx.slots[i2] = x
            if pf is None or _check_pred(pf(ctx), "transformList"):
                out.append(tf(ctx))
        return tuple(out)

    return transform, ("list", types[-1])


def _build_transform_map(
    rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type
) -> tuple[Fn, Type]:
    pf = fns[0] if len(fns) == 2 else None
    tf = fns[-1]

    def transform(ctx: Activation) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in iterate_pairs(rf(ctx)):
            step(ctx)
            ctx.slots[i1], ctx.slots[i2] = k, v
            if pf is None or _check_pred(pf(ctx), "transformMap"):
                out[k] = tf(ctx)
        return out

    ktype: Type = (
        "int" if isinstance(rt, tuple) and rt[0] == "list" else (rt[1] if isinstance(rt, tuple) else DYN)
    )
    return transform, ("map", ktype, types[-1])


def _by_sort_key(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
    return cel_compare(a[0], b[0], "sortBy")


def _build_sort_by(rf: Fn, i1: int, i2: int, fns: list[Fn], types: list[Type], rt: Type) -> tuple[Fn, Type]:
    (kf,) = fns

    def sort_by(ctx: Activation) -> tuple[Any, ...]:
        items = rf(ctx)
        if type(items) is not tuple:
            raise EvalError(f"sortBy: got '{type_name(items)}', expected list")
        keyed = []
        for x in items:
            step(ctx)
            ctx.slots[i1] = x
            keyed.append((kf(ctx), x))
        if keyed:
            t0 = type(keyed[0][0])
            for k, _ in keyed:
                if type(k) is not t0:
                    raise EvalError("sortBy: sort keys must have the same type")
                cel_compare(k, k, "sortBy")
        keyed.sort(key=functools.cmp_to_key(_by_sort_key))
        return tuple(x for _, x in keyed)

    return sort_by, rt if isinstance(rt, tuple) else ("list", DYN)


MACRO_BUILDERS: Final[dict[str, MacroBuilder]] = {
    "all": _build_all,
    "exists": _build_exists,
    "exists_one": _build_exists_one,
    "map": _build_map,
    "filter": _build_filter,
    "transformList": _build_transform_list,
    "transformMap": _build_transform_map,
    "sortBy": _build_sort_by,
}
