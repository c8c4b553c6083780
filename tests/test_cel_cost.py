"""The cost budget (upstream: 1,000,000 units per evaluation): the static estimate refuses
expensive expressions at compile time, as the API server does, and the runtime meter (here
with the estimate switched off, like upstream's DisableCostEstimation) stops blow-ups quickly."""

from __future__ import annotations

import time

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.cel.checks import cel_compile_problem
from dra_solver.cel.estimate import estimate_cost
from dra_solver.cel.parser import parse
from dra_solver.errors import CelCompileError, CelRuntimeError

DEV = DeviceView("dra.example.com", "d", {"dra.example.com": {"s": "x" * 100}}, {})
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def exceeds(expression: str, budget_seconds: float = 3.0) -> None:
    """Refused at compile time by the estimate, and at run time by the meter, within
    `budget_seconds` of CPU time (this process's: the same at any load)."""
    with pytest.raises(CelCompileError, match="too complex, exceeds cost limit"):
        compile_expression(expression)
    p = compile_expression(expression, estimate_cost=False)
    start = time.process_time()
    with pytest.raises(CelRuntimeError, match="actual cost limit exceeded"):
        p.evaluate(DEV)
    assert time.process_time() - start < budget_seconds


def test_upstream_expensive_expression() -> None:
    # From upstream's DRA compile tests (estimated cost 85,555,551).
    inner = "int('1'.find('[0-9]*')) < 100"
    for var in ("z5", "z4", "z3", "z2", "z", "y", "x"):
        inner = f"{TEN}.all({var}, {inner})"
    assert estimate_cost(parse(inner)) == 85_555_551
    exceeds(inner)


def test_nested_comprehension_over_constant_lists_is_refused_by_validation() -> None:
    # three nested all() over a 100-element constant list: about 10^6 iterations of the
    # innermost predicate, which the API server refuses as too complex
    hundred = "[" + ", ".join(str(i) for i in range(100)) + "]"
    expr = f"{hundred}.all(a, {hundred}.all(b, {hundred}.all(c, a + b + c >= 0)))"
    problem = cel_compile_problem(expr, True)
    assert problem is not None and problem.startswith("too complex, exceeds cost limit")
    # one level less is fine, statically and at run time
    cheap = f"{hundred}.all(a, {hundred}.all(b, a + b >= 0))"
    assert cel_compile_problem(cheap, True) is None
    assert compile_expression(cheap).evaluate(DEV) is True


def test_device_sized_expressions_are_accepted() -> None:
    # the device's size limits (32 attributes, 64-character strings) bound the estimate
    for expr in (
        'device.attributes["d"].s.split(",").all(x, x.startsWith("a"))',
        'device.attributes["d"].all(k, device.attributes["d"].all(j, k != j))',
        'device.capacity["d"].mem.compareTo(quantity("1Gi")) > 0',
    ):
        assert compile_expression(expr).max_cost < 1_000_000


def test_nested_map_blowup() -> None:
    inner = "[a, b, c, d, e, f]"
    for var in "fedcba":
        inner = f"{TEN}.map({var}, {inner})"
    exceeds(inner)


def test_range_blowup() -> None:
    exceeds("lists.range(1000).map(x, lists.range(1000).map(y, x * y))")
    exceeds("lists.range(2000000).size() > 0")
    exceeds("lists.range(100000000000).size() > 0")


def test_string_doubling() -> None:
    e = "'0123456789'"
    for i in range(30):
        e = f"cel.bind(v{i}, {e}, v{i} + v{i})"
    exceeds(f"size({e}) > 0")


def test_repeated_replace_and_join() -> None:
    e = "device.attributes['dra.example.com'].s"
    for _ in range(8):
        e = f"{e}.replace('x', 'xxxxxxxxxx')"
    exceeds(f"size({e}) > 0")
    exceeds("lists.range(600000).map(x, 'abcdefghij').join().size() > 0")


def test_cheap_expressions_stay_under_the_limit() -> None:
    assert compile_expression(f"{TEN}.all(x, {TEN}.all(y, x * y > 0))").evaluate(DEV) is True
    assert compile_expression(f"{TEN}.all(x, {TEN}.all(y, x * y > 0))").max_cost == 851
    assert compile_expression("lists.range(10000).filter(x, x % 2 == 0).size()").evaluate(DEV) == 5000


def test_custom_cost_limit() -> None:
    with pytest.raises(CelCompileError, match="too complex"):
        compile_expression(f"{TEN}.all(x, x > 0)", cost_limit=5)
    p = compile_expression(f"{TEN}.all(x, x > 0)", cost_limit=5, estimate_cost=False)
    with pytest.raises(CelRuntimeError, match="actual cost limit exceeded"):
        p.evaluate(DEV)
    assert compile_expression(f"{TEN}.all(x, x > 0)").evaluate(DEV) is True


def test_cost_error_is_not_absorbed_by_logical_operators() -> None:
    exceeds("lists.range(2000000).size() > 0 || true")
    exceeds(f"{TEN}.exists(x, lists.range(2000000).size() == 0) || true")
