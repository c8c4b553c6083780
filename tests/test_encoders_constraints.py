"""encoders.constraints: matchAttribute and distinctAttribute over value sets."""

from __future__ import annotations

from cpsat_builders import PB, Sub, feasible, ints


def _claim(kind: str, values: list, count: int, group: bool = True) -> bool:
    pb = PB()
    ds = [pb.device() for _ in values]
    c = pb.claim()
    a = pb.exact(c, ds, count=count)
    pb.constraint(c, kind, [a], dict(zip(ds, values, strict=True)))
    return feasible(pb.build(), group=group)


def test_match() -> None:
    assert _claim("match", [ints(1), ints(2), ints(1)], 2)
    assert not _claim("match", [ints(1), ints(2), ints(3)], 2)


def test_match_needs_a_common_value_not_pairwise_overlap() -> None:
    assert _claim("match", [ints(1, 2), ints(2, 3), ints(2, 9)], 3)
    assert not _claim("match", [ints(1, 2), ints(2, 3), ints(3, 1)], 3)


def test_distinct() -> None:
    assert _claim("distinct", [ints(1), ints(1), ints(2)], 2)
    assert not _claim("distinct", [ints(1), ints(1), ints(2)], 3)
    assert not _claim("distinct", [ints(1, 2), ints(2, 3)], 2)


def test_missing_attribute() -> None:
    assert _claim("match", [ints(1), None, ints(1)], 2)
    assert not _claim("match", [ints(1), None, ints(1)], 3)


def test_types_differ() -> None:
    pb = PB()
    d0, d1 = pb.device(), pb.device()
    c = pb.claim()
    a = pb.exact(c, [d0, d1], count=2)
    pb.constraint(c, "match", [a], {d0: frozenset({("int", 1)}), d1: frozenset({("string", "1")})})
    assert not feasible(pb.build())


def test_across_requests_and_grouped_devices() -> None:
    # Four identical devices per value: groups with constraints.
    for group in (True, False):
        pb = PB()
        ds = [pb.device() for _ in range(8)]
        values = {d: ints(d // 4) for d in ds}
        c = pb.claim()
        a0 = pb.exact(c, ds, count=1)
        a1 = pb.request(c, Sub(ds, 2))[0]
        pb.constraint(c, "match", [a0, a1], values)
        assert feasible(pb.build(), group=group)
        a2 = pb.exact(c, ds, count=2)
        pb.constraint(c, "match", [a0, a1, a2], values)  # 5 devices can not share one value of 4
        assert not feasible(pb.build(), group=group)


def test_distinct_with_groups() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(6)]
    c = pb.claim()
    a = pb.exact(c, ds, count=3)
    pb.constraint(c, "distinct", [a], {d: ints(d // 2) for d in ds})
    assert feasible(pb.build())
    pb.exact(c, ds, count=1)
    pb.constraint(c, "distinct", [a, 1], {d: ints(d // 2) for d in ds})
    assert not feasible(pb.build())
