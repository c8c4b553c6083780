"""Check a CEL syntax tree and compile it into Python closures.

Why closures instead of cel-python's runners: the ``InterpretedRunner`` walks the lark
tree on every evaluation (about 1,000 evaluations/s for a three-clause selector on the
development machine), and the ``CompiledRunner`` (about 4,800/s) keeps its activation
in a module global (not re-entrant), returns a raw Python ``bool`` from ``has()``, turns
every error into a generic "evaluation error" and inherits celpy's lax operators.
Compiling each node once into a small Python function that takes an
:class:`~solver.cel.runtime.Activation` gives strict semantics, a cost meter and about
200,000 evaluations/s.

Each step also infers the node's static type (see :mod:`solver.cel.typesys`) and raises
:class:`~solver.cel.parser.CompileIssue` where cel-go's checker would refuse the
expression. Calls on constant arguments to pure functions (``quantity("10Gi")``,
``semver("1.2.3")``) are evaluated once at compile time when they succeed cheaply; a
literal regular expression that does not compile is a compile error, as in Kubernetes.
The most common access paths (``device.attributes["d"].id``, ``device.capacity["d"][id]``)
are fused into a single closure.

Error values: CEL's ``&&``, ``||`` and the ``all``/``exists`` macros absorb an error when
the other side decides the result (``false && error`` is false). That is modelled by
raising :class:`~solver.cel.values.EvalError` and catching it exactly there;
:class:`~solver.cel.values.CostLimitExceeded` is never absorbed.
"""

from __future__ import annotations

from typing import Any, Final

# importing the libraries registers their overloads
from . import (  # noqa: F401
    lib_core,
    lib_format,
    lib_lists,
    lib_net,
    lib_quantity,
    lib_regex,
    lib_semver,
    lib_strings,
    lib_time,
    lib_url,
)
from .ast import Bind, Call, Comprehension, Ident, Index, ListLit, Lit, MapLit, Node, Select
from .functions import REGISTRY
from .lib_regex import REGEX_FUNCTIONS, compile_regex
from .macros import MACRO_BUILDERS
from .operators import StaticError, binary_result_type, neg, no_overload, unary_result_type
from .parser import CompileIssue
from .runtime import (
    BINARY_OPERATORS,
    LIB_ERRORS,
    Activation,
    Fn,
    charge_size,
    has_field,
    index_value,
    make_call,
    opt_index,
    opt_select,
    select_slow,
)
from .typesys import DEVICE_FIELDS, DYN, Type, common, compatible, display, is_dyn, unify
from .values import (
    ABSENT,
    CelType,
    CostLimitExceeded,
    DeviceValue,
    EvalError,
    Opt,
    UInt,
    map_find,
    type_name,
)


def _and(lf: Fn, rf: Fn, op: str) -> Fn:
    """CEL's `&&`, commutative over errors: false on either side decides, even where the other
    side is an error or not a bool (the right side is evaluated unless the left decides);
    otherwise the left side's error wins, then the right's. A function of its own so that
    `logic` is the type check alone."""

    def land(ctx: Activation) -> bool:
        err: EvalError | None = None
        try:
            a = lf(ctx)
            if a is False:
                return False
            if a is not True:
                err = no_overload(op, a)
        except EvalError as e:
            err = e
        b = rf(ctx)  # an error here wins only if the left side did not decide
        if b is False:
            return False
        if err is not None:
            raise err
        if b is True:
            return True
        raise no_overload(op, b)

    return land


def _or(lf: Fn, rf: Fn, op: str) -> Fn:
    """CEL's `||`, as `_and` with true deciding."""

    def lor(ctx: Activation) -> bool:
        err: EvalError | None = None
        try:
            a = lf(ctx)
            if a is True:
                return True
            if a is not False:
                err = no_overload(op, a)
        except EvalError as e:
            err = e
        b = rf(ctx)
        if b is True:
            return True
        if err is not None:
            raise err
        if b is False:
            return False
        raise no_overload(op, b)

    return lor


__all__ = ["Compiled", "compile_tree"]

#: Cost budget for evaluating constant sub-expressions at compile time.
_FOLD_BUDGET: Final = 1000

_TYPE_IDENTS: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
)
_NAMESPACES: Final = frozenset({"optional", "strings", "sets", "lists", "ip", "format"})


class Compiled:
    """A compiled node: its closure, static type and (when constant) its value."""

    __slots__ = ("fn", "type", "const", "value")

    def __init__(self, fn: Fn, type_: Type, const: bool = False, value: Any = None) -> None:
        self.fn = fn
        self.type = type_
        self.const = const
        self.value = value


def _constant(value: Any, type_: Type) -> Compiled:
    return Compiled(lambda ctx: value, type_, True, value)


def _lit_type(v: Any) -> Type:
    t = type(v)
    if v is None:
        return "null"
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is UInt:
        return "uint"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    raise AssertionError(t)  # pragma: no cover


def _issue(node: Node, message: str) -> CompileIssue:
    return CompileIssue(message, node.line, node.column)


# -- the compiler -------------------------------------------------------------------------


Scope = dict[str, tuple[int, Type]]


def _device(ctx: Activation) -> DeviceValue:
    """The device under evaluation (an Activation without one only folds constants)."""
    device = ctx.device
    assert device is not None, "a device field read outside an evaluation"
    return device


class _Compiler:
    def __init__(self) -> None:
        self.nslots = 0

    def slot(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    def compile(self, node: Node, scope: Scope) -> Compiled:
        if isinstance(node, Lit):
            return _constant(node.value, _lit_type(node.value))
        if isinstance(node, Ident):
            return self.ident(node, scope)
        if isinstance(node, Select):
            return self.select(node, scope)
        if isinstance(node, Index):
            return self.index(node, scope)
        if isinstance(node, Call):
            return self.call(node, scope)
        if isinstance(node, ListLit):
            return self.list_lit(node, scope)
        if isinstance(node, MapLit):
            return self.map_lit(node, scope)
        if isinstance(node, Comprehension):
            return self.comprehension(node, scope)
        if isinstance(node, Bind):
            return self.bind(node, scope)
        raise _issue(node, f"unsupported expression {type(node).__name__}")  # pragma: no cover

    # -- identifiers and member access -------------------------------------------------

    def ident(self, node: Ident, scope: Scope) -> Compiled:
        if node.name in scope:
            i, t = scope[node.name]
            return Compiled(lambda ctx: ctx.slots[i], t)
        if node.name == "device":
            return Compiled(lambda ctx: ctx.device, "device")
        if node.name in _TYPE_IDENTS:
            return _constant(CelType(node.name), "type")
        raise _issue(node, f"undeclared reference to '{node.name}' (in container '')")

    def _is_device(self, node: Node, scope: Scope) -> bool:
        return isinstance(node, Ident) and node.name == "device" and "device" not in scope

    def _device_domain(self, node: Node, scope: Scope) -> tuple[str, str] | None:
        """``device.attributes[<const>]`` / ``device.capacity.<dom>``: (field, domain)."""
        if isinstance(node, Index) and not node.optional and isinstance(node.key, Lit):
            target, key = node.target, node.key.value
        elif isinstance(node, Select) and not node.optional and not node.test_only:
            target, key = node.target, node.field
        else:
            return None
        if (
            type(key) is str
            and isinstance(target, Select)
            and not target.optional
            and not target.test_only
            and target.field in ("attributes", "capacity")
            and self._is_device(target.target, scope)
        ):
            return (target.field, key)
        return None

    def select(self, node: Select, scope: Scope) -> Compiled:
        field = node.field
        # fused fast paths for the device
        if not node.optional and not node.test_only:
            if self._is_device(node.target, scope):
                return self._device_field(node, field)
            dom = self._device_domain(node.target, scope)
            if dom is not None:
                return self._device_attr(dom[0], dom[1], field)
            dom = self._device_domain(node, scope)
            if dom is not None:
                return self._device_map(dom[0], dom[1])
        target = self.compile(node.target, scope)
        tf = target.fn
        rtype = self._select_type(node, target.type, field)
        if node.test_only:

            def has(ctx: Activation) -> bool:
                return has_field(tf(ctx), field)

            return Compiled(has, "bool")
        if node.optional:
            return Compiled(lambda ctx: opt_select(tf(ctx), field), rtype)
        missing = f"no such key: {field}"

        def sel(ctx: Activation) -> Any:
            m = tf(ctx)
            try:
                return m[field]
            except KeyError:
                raise EvalError(missing) from None
            except TypeError:
                return select_slow(m, field)

        return Compiled(sel, rtype)

    def _select_type(self, node: Select, t: Type, field: str) -> Type:
        if node.test_only:
            if t == "device" and field not in DEVICE_FIELDS:
                raise _issue(node, f"undefined field '{field}'")
            if t == "device" or is_dyn(t) or (isinstance(t, tuple) and t[0] == "map"):
                return "bool"
            raise _issue(node, f"invalid type for field selection: '{display(t)}'")
        if isinstance(t, tuple) and t[0] == "opt":
            inner = self._select_type(Select(node.target, field, node.line, node.column), t[1], field)
            return inner if isinstance(inner, tuple) and inner[0] == "opt" else ("opt", inner)
        if t == "device":
            if field not in DEVICE_FIELDS:
                raise _issue(node, f"undefined field '{field}'")
            r = DEVICE_FIELDS[field]
        elif is_dyn(t):
            r = DYN
        elif isinstance(t, tuple) and t[0] == "map":
            if not compatible(t[1], "string"):
                raise _issue(node, f"type '{display(t)}' does not support field selection")
            r = t[2]
        else:
            raise _issue(node, f"type '{display(t)}' does not support field selection")
        return ("opt", r) if node.optional else r

    def _device_field(self, node: Select, field: str) -> Compiled:
        if field not in DEVICE_FIELDS:
            raise _issue(node, f"undefined field '{field}'")
        # Device fields are never constant, so never folded: they run only in an evaluation,
        # whose Activation holds the device (`_device`).
        getter: Fn
        if field == "attributes":
            getter = lambda ctx: _device(ctx).attributes  # noqa: E731
        elif field == "capacity":
            getter = lambda ctx: _device(ctx).capacity  # noqa: E731
        elif field == "driver":
            getter = lambda ctx: _device(ctx).driver  # noqa: E731
        else:
            getter = lambda ctx: _device(ctx).allow_multiple_allocations  # noqa: E731
        return Compiled(getter, DEVICE_FIELDS[field])

    def _device_map(self, kind: str, domain: str) -> Compiled:
        t = DEVICE_FIELDS[kind][2]
        if kind == "attributes":
            return Compiled(lambda ctx: _device(ctx).attributes[domain], t)
        return Compiled(lambda ctx: _device(ctx).capacity[domain], t)

    def _device_attr(self, kind: str, domain: str, key: str) -> Compiled:
        missing = f"no such key: {key}"
        t = DEVICE_FIELDS[kind][2][2]
        if kind == "attributes":

            def attr(ctx: Activation) -> Any:
                try:
                    return _device(ctx).attributes[domain][key]
                except KeyError:
                    raise EvalError(missing) from None

            return Compiled(attr, t)

        def cap(ctx: Activation) -> Any:
            try:
                return _device(ctx).capacity[domain][key]
            except KeyError:
                raise EvalError(missing) from None

        return Compiled(cap, t)

    def index(self, node: Index, scope: Scope) -> Compiled:
        if not node.optional and isinstance(node.key, Lit) and type(node.key.value) is str:
            dom = self._device_domain(node.target, scope)
            if dom is not None:
                return self._device_attr(dom[0], dom[1], node.key.value)
            dom = self._device_domain(node, scope)
            if dom is not None:
                return self._device_map(dom[0], dom[1])
        target = self.compile(node.target, scope)
        key = self.compile(node.key, scope)
        rtype = self._index_type(node, target.type, key.type)
        tf, kf = target.fn, key.fn
        if node.optional:
            return Compiled(lambda ctx: opt_index(tf(ctx), kf(ctx)), rtype)
        if key.const and type(key.value) is str:
            k = key.value
            missing = f"no such key: {k}"

            def idx_str(ctx: Activation) -> Any:
                c = tf(ctx)
                try:
                    return c[k]
                except KeyError:
                    raise EvalError(missing) from None
                except TypeError:
                    return index_value(c, k)

            return Compiled(idx_str, rtype)
        return Compiled(lambda ctx: index_value(tf(ctx), kf(ctx)), rtype)

    def _index_type(self, node: Index, t: Type, k: Type) -> Type:
        r: Type
        if is_dyn(t):
            r = DYN
        elif isinstance(t, tuple) and t[0] == "list":
            if not (is_dyn(k) or k in ("int", "uint")):
                raise _issue(
                    node, f"found no matching overload for '_[_]' applied to '({display(t)}, {display(k)})'"
                )
            r = t[1]
        elif isinstance(t, tuple) and t[0] == "map":
            if not compatible(t[1], k):
                raise _issue(
                    node, f"found no matching overload for '_[_]' applied to '({display(t)}, {display(k)})'"
                )
            r = t[2]
        elif isinstance(t, tuple) and t[0] == "opt":
            inner = self._index_type(Index(node.target, node.key, node.line, node.column), t[1], k)
            return inner if isinstance(inner, tuple) and inner[0] == "opt" else ("opt", inner)
        else:
            raise _issue(
                node, f"found no matching overload for '_[_]' applied to '({display(t)}, {display(k)})'"
            )
        return ("opt", r) if node.optional else r

    # -- calls ---------------------------------------------------------------------------

    def call(self, node: Call, scope: Scope) -> Compiled:
        fn = node.fn
        if fn == "_&&_" or fn == "_||_":
            return self.logic(node, scope)
        if fn == "_?_:_":
            return self.conditional(node, scope)
        if fn in ("!_", "-_"):
            return self.unary(node, scope)
        if fn in BINARY_OPERATORS:
            return self.binary(node, scope)
        target = node.target
        if (
            isinstance(target, Ident)
            and target.name in _NAMESPACES
            and target.name not in scope
            and f"{target.name}.{fn}" in REGISTRY
        ):
            return self.function(node, f"{target.name}.{fn}", None, scope)
        if fn == "dyn" and target is None and len(node.args) == 1:
            arg = self.compile(node.args[0], scope)
            return Compiled(arg.fn, DYN, arg.const, arg.value)
        return self.function(node, fn, target, scope)

    def logic(self, node: Call, scope: Scope) -> Compiled:
        left = self.compile(node.args[0], scope)
        right = self.compile(node.args[1], scope)
        for side in (left, right):
            if not (is_dyn(side.type) or side.type == "bool"):
                raise _issue(
                    node,
                    f"found no matching overload for '{node.fn}' applied to "
                    f"'({display(left.type)}, {display(right.type)})'",
                )
        make = _and if node.fn == "_&&_" else _or
        return Compiled(make(left.fn, right.fn, node.fn), "bool")

    def conditional(self, node: Call, scope: Scope) -> Compiled:
        cond, yes, no = (self.compile(a, scope) for a in node.args)
        if not (is_dyn(cond.type) or cond.type == "bool"):
            raise _issue(
                node, f"found no matching overload for '_?_:_' applied to '({display(cond.type)}, ...)'"
            )
        if not compatible(yes.type, no.type) and "null" not in (yes.type, no.type):
            raise _issue(
                node,
                f"found no matching overload for '_?_:_' applied to "
                f"'(bool, {display(yes.type)}, {display(no.type)})'",
            )
        cf, yf, nf = cond.fn, yes.fn, no.fn

        def ternary(ctx: Activation) -> Any:
            c = cf(ctx)
            if c is True:
                return yf(ctx)
            if c is False:
                return nf(ctx)
            raise no_overload("_?_:_", c)

        return Compiled(ternary, common(yes.type, no.type))

    def unary(self, node: Call, scope: Scope) -> Compiled:
        arg = self.compile(node.args[0], scope)
        try:
            rtype = unary_result_type(node.fn, arg.type)
        except StaticError as ex:
            raise _issue(node, str(ex)) from None
        af = arg.fn
        if node.fn == "!_":

            def lnot(ctx: Activation) -> bool:
                v = af(ctx)
                if v is True:
                    return False
                if v is False:
                    return True
                raise no_overload("!_", v)

            out = Compiled(lnot, rtype)
        else:
            out = Compiled(lambda ctx: neg(af(ctx)), rtype)
        return self._fold(out, (arg,))

    def binary(self, node: Call, scope: Scope) -> Compiled:
        left = self.compile(node.args[0], scope)
        right = self.compile(node.args[1], scope)
        try:
            rtype = binary_result_type(node.fn, left.type, right.type)
        except StaticError as ex:
            raise _issue(node, str(ex)) from None
        op = BINARY_OPERATORS[node.fn]
        lf, rf = left.fn, right.fn
        sized = node.fn == "_+_" and (
            is_dyn(rtype) or rtype in ("string", "bytes") or (isinstance(rtype, tuple) and rtype[0] == "list")
        )
        if sized:

            def plus(ctx: Activation) -> Any:
                r = op(lf(ctx), rf(ctx))
                charge_size(ctx, r)
                return r

            out = Compiled(plus, rtype)
        else:

            def binop(ctx: Activation) -> Any:
                ctx.cost += 1
                return op(lf(ctx), rf(ctx))

            out = Compiled(binop, rtype)
        return self._fold(out, (left, right))

    def _fold(self, out: Compiled, args: tuple[Compiled, ...]) -> Compiled:
        """Evaluate a pure operation on constants once, now (unless it fails)."""
        if not all(a.const for a in args):
            return out
        try:
            # a small budget: anything costly stays a runtime computation, where the
            # program's cost limit applies
            value = out.fn(Activation(None, 0, _FOLD_BUDGET))
        except (EvalError, CostLimitExceeded, *LIB_ERRORS):
            return out
        return _constant(value, out.type)

    def function(self, node: Call, name: str, target: Node | None, scope: Scope) -> Compiled:
        overloads = REGISTRY.get(name)
        if overloads is None:
            raise _issue(node, f"undeclared reference to '{name}' (in container '')")
        compiled: list[Compiled] = []
        if target is not None:
            compiled.append(self.compile(target, scope))
        compiled.extend(self.compile(a, scope) for a in node.args)
        types = tuple(c.type for c in compiled)
        member = target is not None
        cands = [
            o
            for o in overloads
            if o.member == member and len(o.params) == len(types) and unify(o.params, types)
        ]
        if not cands:
            shown = (
                ", ".join(display(t) for t in types[1:] if member)
                if member
                else ", ".join(map(display, types))
            )
            applied = f"{display(types[0])}.({shown})" if member else f"({shown})"
            raise _issue(node, f"found no matching overload for '{name}' applied to '{applied}'")
        rtype: Type = cands[0].result_type(types)
        for o in cands[1:]:
            rtype = common(rtype, o.result_type(types))
        if name in REGEX_FUNCTIONS:
            # like Kubernetes' regex literal validation: only a literal pattern is checked
            nodes = ([target] if target is not None else []) + list(node.args)
            pattern_node = nodes[REGEX_FUNCTIONS[name]] if len(nodes) > REGEX_FUNCTIONS[name] else None
            if isinstance(pattern_node, Lit) and type(pattern_node.value) is str:
                try:
                    compile_regex(pattern_node.value)
                except ValueError as ex:
                    raise _issue(node, f"invalid regular expression {pattern_node.value!r}: {ex}") from None
        if name in ("timestamp", "duration") and target is None and len(node.args) == 1:
            # Kubernetes' ValidateTimestampLiterals / ValidateDurationLiterals
            arg = node.args[0]
            if isinstance(arg, Lit) and type(arg.value) is str:
                try:
                    (lib_time.parse_timestamp if name == "timestamp" else lib_time.parse_duration)(arg.value)
                except EvalError as ex:
                    raise _issue(node, f"invalid {name} {arg.value!r}: {ex.message}") from None
        exact = len(cands) == 1 and all(
            check is None or not is_dyn(t) for check, t in zip(cands[0].checks, types, strict=True)
        )
        out = Compiled(make_call(name, cands, [c.fn for c in compiled], exact), rtype)
        if all(o.pure for o in cands):
            return self._fold(out, tuple(compiled))
        return out

    # -- literals --------------------------------------------------------------------------

    def _optional_entry(self, n: Node, t: Type) -> Type:
        """The element type behind a ``?`` entry, which must be an optional (or dyn)."""
        if is_dyn(t):
            return DYN
        if isinstance(t, tuple) and t[0] == "opt":
            return t[1]
        raise _issue(n, f"expected type 'optional_type(T)' but found '{display(t)}'")

    def list_lit(self, node: ListLit, scope: Scope) -> Compiled:
        items = [self.compile(i, scope) for i in node.items]
        elem: Type | None = None
        for idx, (it, n) in enumerate(zip(items, node.items, strict=True)):
            t = self._optional_entry(n, it.type) if idx in node.optional else it.type
            if elem is None:
                elem = t
            elif not compatible(elem, t):
                raise _issue(n, f"expected type '{display(elem)}' but found '{display(t)}'")
            else:
                elem = common(elem, t)
        ltype: Type = ("list", elem if elem is not None else DYN)
        if node.optional:
            entries = tuple((i.fn, idx in node.optional) for idx, i in enumerate(items))
            size = len(entries) + 1

            def build_opt_list(ctx: Activation) -> tuple[Any, ...]:
                ctx.cost += size
                out: list[Any] = []
                for f, opt in entries:
                    v = f(ctx)
                    if not opt:
                        out.append(v)
                    elif type(v) is not Opt:
                        raise no_overload("optional entry", v)
                    elif v.present:
                        out.append(v.value)
                return tuple(out)

            return Compiled(build_opt_list, ltype)
        if all(i.const for i in items):
            return _constant(tuple(i.value for i in items), ltype)
        fns = tuple(i.fn for i in items)
        size = len(fns) + 1

        def build_list(ctx: Activation) -> tuple[Any, ...]:
            ctx.cost += size
            return tuple([f(ctx) for f in fns])

        return Compiled(build_list, ltype)

    def map_lit(self, node: MapLit, scope: Scope) -> Compiled:
        entries = [(self.compile(k, scope), self.compile(v, scope)) for k, v in node.entries]
        ktype: Type | None = None
        vtype: Type | None = None
        for idx, ((k, v), (kn, vn)) in enumerate(zip(entries, node.entries, strict=True)):
            vt = self._optional_entry(vn, v.type) if idx in node.optional else v.type
            if not (is_dyn(k.type) or k.type in ("int", "uint", "bool", "string")):
                raise _issue(kn, f"unsupported map key type: {display(k.type)}")
            if ktype is not None and not compatible(ktype, k.type):
                raise _issue(kn, f"expected type '{display(ktype)}' but found '{display(k.type)}'")
            if vtype is not None and not compatible(vtype, vt):
                raise _issue(vn, f"expected type '{display(vtype)}' but found '{display(vt)}'")
            ktype = k.type if ktype is None else common(ktype, k.type)
            vtype = vt if vtype is None else common(vtype, vt)
        mtype: Type = ("map", ktype or DYN, vtype or DYN)
        pairs = tuple((k.fn, v.fn, idx in node.optional) for idx, (k, v) in enumerate(entries))

        size = 2 * len(pairs) + 1

        def build(ctx: Activation) -> dict[Any, Any]:
            ctx.cost += size
            out: dict[Any, Any] = {}
            for kf, vf, opt in pairs:
                key = kf(ctx)
                tk = type(key)
                if tk is not str and tk is not int and tk is not UInt and tk is not bool:
                    raise EvalError(f"unsupported key type: {type_name(key)}")
                if map_find(out, key) is not ABSENT:
                    raise EvalError(f"Failed with repeated key: {key!r}")
                val = vf(ctx)
                if opt:
                    if type(val) is not Opt:
                        raise no_overload("optional entry", val)
                    if not val.present:
                        continue
                    val = val.value
                out[key] = val
            return out

        if all(k.const and v.const for k, v in entries):
            try:
                value = build(Activation(None, 0, 0))
            except EvalError:
                return Compiled(build, mtype)
            return Compiled(lambda ctx: value, mtype, True, value)
        return Compiled(build, mtype)

    # -- macros ----------------------------------------------------------------------------

    def bind(self, node: Bind, scope: Scope) -> Compiled:
        init = self.compile(node.init, scope)
        i = self.slot()
        body = self.compile(node.body, {**scope, node.var: (i, init.type)})
        inf, bf = init.fn, body.fn

        def bound(ctx: Activation) -> Any:
            ctx.slots[i] = inf(ctx)
            return bf(ctx)

        return Compiled(bound, body.type)

    def comprehension(self, node: Comprehension, scope: Scope) -> Compiled:
        rng = self.compile(node.range, scope)
        rt = rng.type
        if is_dyn(rt):
            t1: Type = DYN
            t2: Type = DYN
        elif isinstance(rt, tuple) and rt[0] == "list":
            t1, t2 = ("int", rt[1]) if node.var2 is not None else (rt[1], DYN)
        elif isinstance(rt, tuple) and rt[0] == "map":
            t1, t2 = rt[1], rt[2]
        else:
            raise _issue(
                node,
                f"expression of type '{display(rt)}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)",
            )
        i1 = self.slot()
        inner: Scope = {**scope, node.var: (i1, t1)}
        i2 = -1
        if node.var2 is not None:
            i2 = self.slot()
            inner[node.var2] = (i2, t2)
        args = [self.compile(a, inner) for a in node.args]
        macro = node.macro
        has_pred = macro in ("all", "exists", "exists_one", "filter") or (
            macro in ("map", "transformList", "transformMap") and len(args) == 2
        )
        if has_pred:
            pred = args[0]
            if not (is_dyn(pred.type) or pred.type == "bool"):
                raise _issue(node.args[0], f"{macro}() predicate must be bool, not {display(pred.type)}")
        maker = MACRO_BUILDERS[macro]
        fn, rtype = maker(rng.fn, i1, i2, [a.fn for a in args], [a.type for a in args], rt)
        return Compiled(fn, rtype)


def compile_tree(tree: Node) -> tuple[Fn, Type, int]:
    """Compile a parsed expression: (closure, static type, number of variable slots)."""
    c = _Compiler()
    out = c.compile(tree, {})
    return out.fn, out.type, c.nslots
