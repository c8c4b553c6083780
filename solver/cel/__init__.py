"""The Kubernetes DRA flavour of CEL, for device selectors and derived attributes (KEP-6080).

Public API
==========

``compile_expression(expression, *, max_length=10240, expect_bool=False, cost_limit=1_000_000)``
    Parse, type-check and compile; cached by expression. Raises
    :class:`~solver.errors.CelCompileError` (reason starts with
    ``compilation failed: ERROR: <input>:LINE:COLUMN: ...`` and shows the source line with a
    caret; the error also has ``line``/``column`` attributes) for syntax and type errors and
    for expressions longer than ``max_length`` UTF-8 bytes. ``expect_bool=True`` (selectors)
    refuses a statically non-bool expression like upstream ("must evaluate to bool or the
    unknown type").

:class:`Program`
    ``expression``, ``result_type`` (``"bool"``, ``"string"``, ``"list(string)"``, ``"dyn"``...),
    ``reads`` (what of the device it reads), ``evaluate(device)`` (plain Python: bool, int,
    str, float, bytes, None, :class:`Semver`, :class:`~solver.api.quantity.Quantity`,
    tuples for lists, dicts for maps), ``evaluate_bool(device)`` (selectors; a non-bool
    result is a :class:`~solver.errors.CelRuntimeError` "CEL result of type X could not be
    converted to bool") and ``signature(device)``.

:class:`EvalCache`
    ``evaluate(program, device)`` / ``evaluate_bool(program, device)`` evaluate once per
    distinct ``(program, program.signature(device))``; results and errors are memoised;
    ``stats`` gives hits and misses.

:class:`DeviceView`
    ``DeviceView(driver, name, attributes, capacity, allow_multiple_allocations=False)``,
    plain data built by the caller; attributes are domain -> id -> value with bare names
    already under the driver's domain; values are int, bool, str, :class:`Semver` or tuples
    of those (KEP-5491 lists); capacities are domain -> id -> Quantity.

:class:`Semver`
    ``Semver(text)`` never raises (an invalid version makes every evaluation on the device
    fail, naming the attribute, like upstream); ``Semver.parse(text, normalize=False)`` raises.

The ``device`` variable
=======================

``device.driver``, ``device.attributes``, ``device.capacity``,
``device.allowMultipleAllocations`` as in upstream's ``CELDeviceSelector``, plus
``device.name`` (for KEP-6080's ``device.name.replace('gpu', '')``; upstream selectors do
not have it). An unknown *domain* reads as an empty map (``"x" in
device.attributes["other.example.com"]`` is false); an unknown *id* is the runtime error
``no such key: <id>``; ``has(device.attributes["d"].x)``, ``"x" in device.attributes["d"]``,
``device.attributes["d"].?x.orValue(...)`` and ``cel.bind(...)`` work;
``"d" in device.attributes`` tests real presence of the domain.

Libraries
=========

Standard CEL (arithmetic, comparisons, ``in``, ``size``, ``contains``, ``startsWith``,
``endsWith``, ``matches``, conversions ``int/uint/double/string/bool/bytes/type/dyn``,
macros ``has/all/exists/exists_one/map/filter``), timestamps and durations
(:mod:`~solver.cel.lib_time`), ``cel.bind``, optional types (``.?``, ``[?]``, optional
entries ``[?x]``/``{?k: v}``, ``optional.of/none/ofNonZeroValue``,
``hasValue/value/orValue/or``), two-variable comprehensions
(``all/exists/existsOne/transformList/transformMap``), cel-go strings v2, lists v3
(``lists.range``, ``slice``, ``flatten``, ``distinct``, ``reverse``, ``sort``, ``sortBy``,
``first``, ``last``), sets, and the Kubernetes libraries: lists (``isSorted``, ``sum``,
``min``, ``max``, ``indexOf``, ``lastIndexOf``), regex (``find``, ``findAll``, on RE2),
url (:mod:`~solver.cel.lib_url`), ip and cidr (:mod:`~solver.cel.lib_net`), quantity,
semver, the named formats (``format.named``, ``format.dns1123Label()`` ...,
``<format>.validate(s)``: :mod:`~solver.cel.lib_format`), and DRA's ``includes`` (KEP-5491).

Strictness
==========

Enforced (cel-go has no such overload; compile error when the types are known
statically, runtime error when a ``dyn`` attribute value is involved):

* arithmetic only between equal types: ``int+uint``, ``int+double``, ``string+int``,
  ``bool+int``, ``list+int`` are errors; int64/uint64 overflow, division and modulus by
  zero are errors; integer division truncates, ``%`` takes the dividend's sign;
* ordering (``< <= > >=``) only for same-typed bool/string/bytes and across
  int/uint/double (Kubernetes' cross-type numeric comparisons); **quantities and semvers
  have no ordering or arithmetic operators** (use ``compareTo``/``isLessThan``/``add``);
* ``&&``, ``||``, ``!``, ``?:`` and macro predicates need bools (a non-bool is an error,
  absorbed only where CEL absorbs errors: ``false && x``, ``true || x``, an ``all`` with a
  false element, an ``exists`` with a true element);
* no indexing of strings, no field selection on non-maps, list index bounds checked,
  ``no such key`` for missing map keys, repeated map-literal keys rejected;
* list and map literals must be homogeneous (Kubernetes' HomogeneousAggregateLiterals):
  ``["a", 1]`` is a compile error, ``["a", dyn(1)]`` is fine;
* overload type parameters are unified (``[1].indexOf("a")`` is a compile error);
* literal regular expressions are validated at compile time; RE2 syntax;
* conversions follow Go's ``strconv`` (``int(" 1")``, ``int("1_000")`` are errors).

Not enforced / differences from cel-go's checker: equality is heterogeneous at run time
(``dyn(1) == "1"`` is false, ``dyn(1) == 1.0`` is true, as in cel-go) but statically
mismatched equality (``1 == 1u``, ``1 == "a"``) is a compile error here as there; the
checker is not a complete cel-go checker, so some statically ill-typed expressions that
cel-go refuses compile here and fail (or compute a non-true value) at run time instead.

Cost
====

Two limits, as upstream. At compile time the worst-case cost is estimated
(:mod:`~solver.cel.estimate`, cel-go's ``EstimateCost`` model with the device's size
limits; ``Program.max_cost``) and an expression above the limit is refused with
"too complex, exceeds cost limit", as the API server's validation refuses it
(``compile_expression(..., estimate_cost=False)`` skips this, like upstream's
``DisableCostEstimation``). At run time every evaluation has a budget of 1,000,000 units
(upstream ``CELSelectorExpressionMaxCost``): each function/operator call costs 1, each
comprehension iteration 1, list/map literals their size, string/list-producing
operations a tenth of their size, regex operations by string x pattern length.
Operations that would build a string/list larger than 10,000,000 elements fail before
building it. Exceeding the budget is the runtime error "operation cancelled: actual cost
limit exceeded", never absorbed by ``&&``/``||``.

Known deviations from upstream
==============================

* Evaluation engine: cel-python's parser (its grammar, extended with ``.?``/``[?]``) and
  this package's own checker/compiler; cel-python's runners are not used (lax operators,
  no ``cel.bind``/optionals, a module-global activation in ``CompiledRunner``).
* The runtime cost model and the static estimate approximate cel-go's (the estimate is
  exact on upstream's own test expression, 85,555,551); an expression close to the limit
  may pass on one side and fail on the other. Where cel-go knows no size bound for a
  function result, the estimate assumes 64 elements, so it errs towards accepting.
* Nesting deeper than 100 levels is a compile error (cel-go: 250); ``&&``/``||`` chains
  are balanced as in cel-go, so long chains are fine.
* Not available: the image and authz libraries (no authorizer exists in DRA), ``math``
  extensions, message construction, ``strings.reverse`` (strings v3).
* The static estimate prices ``==`` between two formats at 1 (cel-go: up to 7); it
  cannot see types.
* ``url()`` reimplements Go's ``url.ParseRequestURI`` (not ``urllib.parse``, which accepts
  far more); ``ip()``/``cidr()`` use :mod:`ipaddress` with netip's extra refusals. Time
  zone names need the system's IANA database (``zoneinfo``).
* ``"...".format()``: ``%e`` prints Go's plain ``2.718280e+00`` (cel-go's locale printer
  writes ``2.718280×10⁰⁰``); ``%f`` groups thousands like cel-go's en-US printer.
* ``has(device.attributes.somedomain)`` is true for any domain (upstream's domain map
  answers every lookup; derived from upstream's code, not observed).
* ``includes`` on a list longer than 48 values is an error (newest upstream); older
  upstream versions silently looked at the first 48 only.
* Maps iterate in insertion order (cel-go iterates Go maps in random order).
* Error texts follow cel-go's where known but are not byte-identical.
"""

from __future__ import annotations

from .cache import CacheStats, EvalCache
from .device import AttrValue, DeviceView
from .env import DEFAULT_COST_LIMIT, DEFAULT_MAX_LENGTH, Program, compile_expression
from .semver import Semver, SemverError
from .signature import ReadPlan

__all__ = [
    "DEFAULT_COST_LIMIT",
    "DEFAULT_MAX_LENGTH",
    "AttrValue",
    "CacheStats",
    "DeviceView",
    "EvalCache",
    "Program",
    "ReadPlan",
    "Semver",
    "SemverError",
    "compile_expression",
]
