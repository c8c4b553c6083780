"""Compile and evaluate DRA CEL expressions: :func:`compile_expression` and :class:`Program`.

Why this layer: it is the only place that turns internal failures into the project's
error types. A parse or type error becomes :class:`~solver.errors.CelCompileError` with
the position; a runtime error (missing key, no such overload, invalid device, cost limit)
becomes :class:`~solver.errors.CelRuntimeError` naming the expression and the device.
No cel-python or lark exception ever escapes.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, Final

from ..api.quantity import Quantity
from ..errors import CelCompileError, CelRuntimeError
from .compiler import compile_tree
from .device import DeviceView, prepare
from .estimate import estimate_cost as _estimate
from .parser import CompileIssue, parse
from .runtime import Activation
from .semver import Semver
from .signature import ReadPlan, analyse, make_signature
from .typesys import display
from .values import CelType, CostLimitExceeded, DomainMap, EvalError, Opt, UInt, type_name

__all__ = ["DEFAULT_COST_LIMIT", "DEFAULT_MAX_LENGTH", "Program", "compile_expression", "to_python"]

#: Upstream ``resourceapi.CELSelectorExpressionMaxCost``.
DEFAULT_COST_LIMIT: Final = 1_000_000
#: Upstream ``resourceapi.CELSelectorExpressionMaxLength`` (10 Ki).
DEFAULT_MAX_LENGTH: Final = 10 * 1024


def to_python(v: Any) -> Any:
    """Turn a CEL result into plain Python: uint -> int, lists -> tuples, maps -> dicts.

    bool/int/str/float/bytes/None, :class:`Semver` and :class:`Quantity` are returned as
    they are; an optional becomes its value (or None); a type becomes its name.
    """
    t = type(v)
    if t is bool or t is int or t is str or t is Semver or t is Quantity or t is float or v is None:
        return v
    if t is UInt:
        return int(v)
    if t is tuple:
        return tuple(to_python(x) for x in v)
    if t is dict or t is DomainMap:
        return {to_python(k): to_python(x) for k, x in v.items()}
    if t is Opt:
        return to_python(v.value) if v.present else None
    if t is CelType:
        return v.name
    return v


def _snippet(expression: str, line: int, column: int) -> str:
    lines = expression.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else lines[-1]
    return f"\n | {src}\n | {'.' * max(column - 1, 0)}^"


class Program:
    """A compiled expression; evaluate it against :class:`DeviceView` objects.

    Immutable and safe to share between threads (each evaluation has its own state).
    ``result_type`` is the statically known result type (``"bool"``, ``"string"``,
    ``"list(string)"``, ``"dyn"`` when it depends on attribute values).
    """

    __slots__ = (
        "expression",
        "result_type",
        "cost_limit",
        "max_cost",
        "reads",
        "_fn",
        "_nslots",
        "_signature",
    )

    def __init__(self, expression: str, cost_limit: int = DEFAULT_COST_LIMIT) -> None:
        self.expression = expression
        self.cost_limit = cost_limit
        try:
            tree = parse(expression)
            fn, rtype, nslots = compile_tree(tree)
            #: the estimated worst-case cost (cel-go's ``EstimateCost(...).Max``)
            self.max_cost: float = _estimate(tree)
        except CompileIssue as ex:
            err = CelCompileError(
                f"compilation failed: ERROR: <input>:{ex.line}:{ex.column}: {ex.message}"
                + _snippet(expression, ex.line, ex.column),
                expression=expression,
            )
            err.line = ex.line
            err.column = ex.column
            raise err from None
        except RecursionError:
            raise CelCompileError(
                "compilation failed: expression too deeply nested", expression=expression
            ) from None
        self.result_type: str = display(rtype)
        self._fn = fn
        self._nslots = nslots
        self.reads: ReadPlan = analyse(tree)
        self._signature = make_signature(self.reads)

    def __repr__(self) -> str:
        return f"Program({self.expression!r})"

    def _error(self, reason: str, device: DeviceView) -> CelRuntimeError:
        return CelRuntimeError(reason, expression=self.expression, device=device.ref)

    def evaluate(self, device: DeviceView) -> Any:
        """The expression's value for ``device`` as plain Python (see :func:`to_python`).

        Raises :class:`CelRuntimeError` for any runtime error.
        """
        p = device._prepared or prepare(device)
        if p.error is not None:
            raise self._error(p.error, device)
        ctx = Activation(p.value, self._nslots, self.cost_limit)
        try:
            v = self._fn(ctx)
        except EvalError as ex:
            raise self._error(ex.message, device) from None
        except CostLimitExceeded:
            raise self._error("operation cancelled: actual cost limit exceeded", device) from None
        except RecursionError:
            raise self._error("evaluation too deeply nested", device) from None
        except Exception as ex:  # a bug in a library function must not leak as a traceback
            raise self._error(f"internal error: {type(ex).__name__}: {ex}", device) from None
        return to_python(v)

    def evaluate_bool(self, device: DeviceView) -> bool:
        """For selectors: the result must be a bool."""
        return self.check_bool(self.evaluate(device), device)

    def check_bool(self, value: Any, device: DeviceView) -> bool:
        if type(value) is not bool:
            raise self._error(f"CEL result of type {type_name(value)} could not be converted to bool", device)
        return value

    def signature(self, device: DeviceView) -> Hashable:
        """The part of ``device`` this program can read; equal signatures, equal results."""
        return self._signature(device)


@functools.lru_cache(maxsize=4096)
def _compile_cached(expression: str, cost_limit: int) -> Program:
    return Program(expression, cost_limit)


def compile_expression(
    expression: str,
    *,
    max_length: int = DEFAULT_MAX_LENGTH,
    expect_bool: bool = False,
    cost_limit: int = DEFAULT_COST_LIMIT,
    estimate_cost: bool = True,
) -> Program:
    """Compile (or fetch from the cache) a DRA CEL expression.

    With ``estimate_cost`` (the default), an expression whose estimated worst-case cost
    exceeds ``cost_limit`` is refused here, before any evaluation, as the API server's
    validation refuses it ("too complex, exceeds cost limit"); see
    :mod:`solver.cel.estimate`. ``estimate_cost=False`` keeps only the runtime limit
    (upstream's ``DisableCostEstimation``), for tests of the runtime meter.

    ``max_length`` is in bytes of UTF-8, like the API validation. With ``expect_bool``
    (selectors) an expression whose static type is neither bool nor dynamic is refused
    at compile time, as upstream does ("must evaluate to bool or the unknown type").
    """
    if not isinstance(expression, str):
        raise CelCompileError("expression must be a string", expression=str(expression))
    size = len(expression.encode("utf-8"))
    if size > max_length:
        raise CelCompileError(
            f"compilation failed: expression is {size} bytes long, the maximum is {max_length}",
            expression=expression[:100] + ("..." if len(expression) > 100 else ""),
        )
    program = _compile_cached(expression, cost_limit)
    if estimate_cost and program.max_cost > cost_limit:
        shown = "infinite" if program.max_cost == float("inf") else f"{int(program.max_cost):,}"
        raise CelCompileError(
            f"too complex, exceeds cost limit (estimated worst-case cost {shown}, limit {cost_limit:,})",
            expression=expression,
        )
    if expect_bool and program.result_type not in ("bool", "dyn"):
        raise CelCompileError(
            f"compilation failed: must evaluate to bool or the unknown type, not {program.result_type}",
            expression=expression,
        )
    return program
