"""Constraints: a claim's matchAttribute and distinctAttribute hold (`match`, `distinct`).

Why a module: constraints span the results of several requests of one claim and compare
typed attribute values as sets: a device's value is its derived attribute (KEP-6080,
`DRADerivedAttributes` on, by exact name) or else its static attribute by fully qualified
name; list values use the KEP-5491 set semantics. matchAttribute needs a non-empty common
intersection, distinctAttribute pairwise disjoint values.
"""

from __future__ import annotations

from typing import Any, Literal

from ..api.models import DeviceAttribute, ResourceClaim
from .celpy_env import Version
from .context import Context
from .keys import claim_id, dev_id, fqn
from .results import Placed

Value = tuple[str, object]
"""A typed attribute value, e.g. ("int", 3): different types never compare equal."""


def attr_values(attr: DeviceAttribute, lists: bool = True) -> frozenset[Value] | None:
    """The attribute as a set (scalars are singletons, KEP-5491 lists their elements). With
    `lists` False (DRAListTypeAttributes off) a list-typed attribute is absent, as upstream's
    constraints read it: a device whose attribute is a list does not have it."""
    if attr.int_ is not None:
        return frozenset({("int", attr.int_)})
    if attr.bool_ is not None:
        return frozenset({("bool", attr.bool_)})
    if attr.string is not None:
        return frozenset({("string", attr.string)})
    if attr.version is not None:
        return frozenset({("version", attr.version)})
    if not lists:
        return None
    for kind, values in (("int", attr.ints), ("bool", attr.bools), ("string", attr.strings)):
        if values is not None:
            return frozenset((kind, v) for v in values)
    if attr.versions is not None:
        return frozenset(("version", v) for v in attr.versions)
    return None


def cel_values(value: Any) -> frozenset[Value] | None:
    """A derived attribute's CEL result as a set; None when the type is not allowed."""

    def one(v: Any) -> Value | None:
        if type(v) is bool:
            return ("bool", v)
        if type(v) is int:
            return ("int", v)
        if type(v) is str:
            return ("string", v)
        if isinstance(v, Version):
            return ("version", str(v))
        return None

    if isinstance(value, (tuple, list)):
        items = [one(v) for v in value]
        if any(i is None for i in items):
            return None
        return frozenset(i for i in items if i is not None)
    single = one(value)
    return None if single is None else frozenset({single})


def show_values(values: frozenset[Value]) -> str:
    shown = sorted(repr(v) for _, v in values)
    return shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"


def attribute(ctx: Context, p: Placed, name: str) -> frozenset[Value] | None | Literal["error"]:
    """The constraint value of a placed device: derived attribute first, then static."""
    assert p.dev is not None
    driver = p.dev.key[0]
    if ctx.gates.DRADerivedAttributes and p.alt is not None:
        for da in p.alt.derived_attributes:
            if da.name != name:
                continue
            ok, value, error = ctx.cel.evaluate(da.expression, p.dev, selector=False)
            values = cel_values(value) if ok else None
            if values is None:
                error = error or f"result {value!r} is not a scalar or a list of scalars"
                ctx.report(
                    p.claim_id,
                    p.result.request,
                    "selector",
                    f"derived attribute {name} CEL expression {da.expression!r} failed on device "
                    f"{dev_id(p.dev.key)}: {error}",
                )
                return "error"
            return values
    want = fqn(name, driver)
    for attr_name, attr in p.dev.device.attributes.items():
        if fqn(attr_name, driver) == want:
            return attr_values(attr, ctx.gates.DRAListTypeAttributes)
    return None


def check_constraints(ctx: Context, claim: ResourceClaim, mine: list[Placed]) -> None:
    """matchAttribute: non-empty common intersection; distinctAttribute: pairwise disjoint."""
    cid = claim_id(claim)
    for i, con in enumerate(claim.spec.devices.constraints):
        name = con.match_attribute or con.distinct_attribute
        if name is None:
            continue
        kind = "match" if con.match_attribute else "distinct"
        rule = f"constraint #{i} ({'matchAttribute' if kind == 'match' else 'distinctAttribute'} {name})"
        scope = set(con.requests)
        covered = [
            p
            for p in mine
            if p.dev is not None and (not scope or p.top in scope or p.result.request in scope)
        ]
        values: list[tuple[Placed, frozenset[Value]]] = []
        for p in covered:
            v = attribute(ctx, p, name)
            if v == "error":
                continue
            if v is None:
                ctx.report(
                    cid,
                    p.result.request,
                    kind,
                    f"{rule}: device {dev_id(p.key)} does not have the attribute",
                )
                continue
            values.append((p, v))
        if kind == "match":
            common: frozenset[Value] | None = None
            for p, v in values:
                common = v if common is None else common & v
                if not common:
                    shown = ", ".join(f"{dev_id(q.key)}={show_values(w)}" for q, w in values)
                    ctx.report(cid, p.result.request, kind, f"{rule}: values have no common value: {shown}")
                    break
        else:
            for a in range(len(values)):
                for b in range(a + 1, len(values)):
                    (pa, va), (pb, vb) = values[a], values[b]
                    if va & vb:
                        ctx.report(
                            cid,
                            pb.result.request,
                            kind,
                            f"{rule}: devices {dev_id(pa.key)} ({pa.result.request}) and "
                            f"{dev_id(pb.key)} ({pb.result.request}) share the value "
                            f"{show_values(va & vb)}",
                        )
