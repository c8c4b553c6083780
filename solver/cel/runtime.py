"""What compiled expressions call while they run: the activation, the cost meter,
member/index access, iteration, fast comparisons and function-call closures.

Why separate from the compiler: these functions run once per evaluation step and are
kept small and free of compile-time concerns; the compiler only decides which of them a
node needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from .functions import Overload
from .operators import add, compare, contains_op, div, mod, mul, no_overload, sub
from .values import (
    ABSENT,
    NONE,
    CostLimitExceeded,
    DeviceValue,
    DomainMap,
    EvalError,
    Opt,
    UInt,
    cel_equal,
    map_find,
    type_name,
)

__all__ = [
    "BINARY_OPERATORS",
    "LIB_ERRORS",
    "Activation",
    "Fn",
    "charge",
    "charge_size",
    "has_field",
    "index_value",
    "iterate",
    "iterate_pairs",
    "make_call",
    "opt_index",
    "opt_select",
    "select_slow",
    "step",
]

Fn = Callable[["Activation"], Any]

#: Exceptions a library function may raise for bad input; they become CEL errors.
LIB_ERRORS: Final = (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError)


class Activation:
    """Per-evaluation state: the device, comprehension variable slots and the cost meter."""

    __slots__ = ("device", "slots", "cost", "limit")

    def __init__(self, device: DeviceValue | None, nslots: int, limit: int) -> None:
        self.device = device
        self.slots: list[Any] = [None] * nslots
        self.cost = 0
        self.limit = limit


def charge(ctx: Activation, n: int) -> None:
    ctx.cost += n
    if ctx.cost > ctx.limit:
        raise CostLimitExceeded("actual cost limit exceeded")


def step(ctx: Activation) -> None:
    """One comprehension iteration: costs 1 and is where runaway loops are stopped."""
    ctx.cost += 1
    if ctx.cost > ctx.limit:
        raise CostLimitExceeded("actual cost limit exceeded")


def select_slow(m: Any, field: str) -> Any:
    """``m.field`` on anything but a plain map (maps take the fast path in the closure)."""
    tm = type(m)
    if tm is DeviceValue:
        return m.field(field)
    if tm is Opt:
        return opt_select(m, field)
    raise EvalError(f"type '{type_name(m)}' does not support field selection")


def opt_select(m: Any, field: str) -> Opt:
    tm = type(m)
    if tm is DomainMap:
        return Opt(m[field])  # an unknown domain is an empty map: always present
    if tm is dict:
        v = m.get(field, ABSENT)
        return NONE if v is ABSENT else Opt(v)
    if tm is Opt:
        return opt_select(m.value, field) if m.present else NONE
    if tm is DeviceValue:
        return Opt(m.field(field))
    raise EvalError(f"type '{type_name(m)}' does not support field selection")


def has_field(m: Any, field: str) -> bool:
    tm = type(m)
    if tm is dict:
        return field in m
    if tm is DomainMap:
        # Upstream's domain map answers every lookup (with an empty map), and cel-go's
        # presence test is a lookup: has(device.attributes.anything) is true.
        return True
    if tm is DeviceValue:
        return field in DeviceValue.FIELDS
    raise EvalError(f"invalid type for field selection: '{type_name(m)}'")


def index_value(c: Any, k: Any) -> Any:
    tc = type(c)
    if tc is dict or tc is DomainMap:
        if type(k) is str:
            try:
                return c[k]
            except KeyError:
                raise EvalError(f"no such key: {k}") from None
        v = map_find(c, k)
        if v is ABSENT:
            if tc is DomainMap:
                return {}
            raise EvalError(f"no such key: {k}")
        return v
    if tc is tuple:
        tk = type(k)
        if tk is int or tk is UInt:
            if 0 <= k < len(c):
                return c[k]
            raise EvalError(f"index out of range: {k}")
        raise no_overload("_[_]", c, k)
    if tc is Opt:
        return opt_index(c, k)
    raise no_overload("_[_]", c, k)


def opt_index(c: Any, k: Any) -> Opt:
    tc = type(c)
    if tc is DomainMap:
        return Opt(index_value(c, k))
    if tc is dict:
        v = map_find(c, k)
        return NONE if v is ABSENT else Opt(v)
    if tc is tuple:
        tk = type(k)
        if tk is int or tk is UInt:
            return Opt(c[k]) if 0 <= k < len(c) else NONE
        raise no_overload("_[?_]", c, k)
    if tc is Opt:
        return opt_index(c.value, k) if c.present else NONE
    raise no_overload("_[?_]", c, k)


def iterate(r: Any) -> tuple[Any, ...] | list[Any]:
    t = type(r)
    if t is tuple:
        return r
    if t is dict or t is DomainMap:
        return list(r)
    raise EvalError(f"got '{type_name(r)}', expected iterable type")


def iterate_pairs(r: Any) -> Iterator[tuple[Any, Any]]:
    t = type(r)
    if t is tuple:
        return iter(enumerate(r))
    if t is dict or t is DomainMap:
        return iter(list(r.items()))
    raise EvalError(f"got '{type_name(r)}', expected iterable type")


def less(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return bool(a < b)
    return compare("_<_", a, b)


def less_equal(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return bool(a <= b)
    return compare("_<=_", a, b)


def greater(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return bool(a > b)
    return compare("_>_", a, b)


def greater_equal(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return bool(a >= b)
    return compare("_>=_", a, b)


def equal(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int or ta is bool):
        return bool(a == b)
    return cel_equal(a, b)


def not_equal(a: Any, b: Any) -> bool:
    return not equal(a, b)


BINARY_OPERATORS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "_+_": add,
    "_-_": sub,
    "_*_": mul,
    "_/_": div,
    "_%_": mod,
    "_<_": less,
    "_<=_": less_equal,
    "_>_": greater,
    "_>=_": greater_equal,
    "_==_": equal,
    "_!=_": not_equal,
    "@in": contains_op,
}


def charge_size(ctx: Activation, r: Any) -> None:
    tr = type(r)
    if tr is str or tr is tuple or tr is bytes:
        n = len(r) // 10
        if n:
            charge(ctx, n)


# -- call closures --------------------------------------------------------------------------


def make_call(name: str, cands: list[Overload], fns: list[Fn], exact: bool) -> Fn:
    """The closure for a function call: direct when the overload is known statically."""
    if exact:
        return _direct(name, cands[0], fns)
    return _dispatch(name, cands, fns)


def _direct(name: str, o: Overload, fns: list[Fn]) -> Fn:
    """A call of the one overload `o`: no type test per call, and for one or two operands
    without a cost function no tuple either (the common case, kept short)."""
    impl, cost = o.impl, o.cost
    n = len(fns)
    if n == 1 and cost is None:
        (f0,) = fns

        def call1(ctx: Activation) -> Any:
            ctx.cost += 1
            try:
                return impl(f0(ctx))
            except LIB_ERRORS as ex:
                raise EvalError(f"{name}: {ex}") from None

        return call1
    if n == 2 and cost is None:
        f0, f1 = fns

        def call2(ctx: Activation) -> Any:
            ctx.cost += 1
            try:
                return impl(f0(ctx), f1(ctx))
            except LIB_ERRORS as ex:
                raise EvalError(f"{name}: {ex}") from None

        return call2

    def calln(ctx: Activation) -> Any:
        args = tuple([f(ctx) for f in fns])
        ctx.cost += 1
        try:
            r = impl(*args)
        except LIB_ERRORS as ex:
            raise EvalError(f"{name}: {ex}") from None
        if cost is not None:
            extra = cost(args, r)
            if extra:
                charge(ctx, extra)
        return r

    return calln


def _dispatch(name: str, cands: list[Overload], fns: list[Fn]) -> Fn:
    """A call whose overload is chosen per call, by the operands' runtime types: the first
    of `cands` that accepts them."""

    def dispatch(ctx: Activation) -> Any:
        args = tuple([f(ctx) for f in fns])
        ctx.cost += 1
        for o in cands:
            if o.accepts(args):
                try:
                    r = o.impl(*args)
                except LIB_ERRORS as ex:
                    raise EvalError(f"{name}: {ex}") from None
                if o.cost is not None:
                    extra = o.cost(args, r)
                    if extra:
                        charge(ctx, extra)
                return r
        raise no_overload(name, *args)

    return dispatch
