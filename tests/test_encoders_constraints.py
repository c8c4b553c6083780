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


# ---------------------------------------------------------------- viable match values


def _viable(p) -> set:
    from dra_solver.encoders import build
    from dra_solver.encoders.constraints import viable_values

    m = build(p)
    return {v for _, v in viable_values(m, p.constraints[0])}


def test_values_too_rare_for_the_whole_claim_are_not_viable() -> None:
    """hard_list_match in small: 4 one-device requests, value 1 on 3 devices, 0 on 4."""
    pb = PB()
    ds = [pb.device() for _ in range(7)]
    values = {d: ints(1 if d < 3 else 0, 10 + d) for d in ds}
    c = pb.claim()
    alts = [pb.exact(c, ds) for _ in range(4)]
    pb.constraint(c, "match", alts, values)
    assert _viable(pb.build()) == {0}
    assert feasible(pb.build()) and feasible(pb.build(), group=False)
    pb.exact(c, ds)  # 5 requests, only 4 devices carry 0
    pb.constraints[0] = pb.constraints[0].__class__(
        0, c, "match", "attr", frozenset(range(5)), {(a, d): values[d] for a in range(5) for d in ds}
    )
    assert _viable(pb.build()) == set()
    assert not feasible(pb.build())


def test_counts_and_all_mode_in_viability() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    values = {ds[0]: ints(1, 2), ds[1]: ints(1, 2), ds[2]: ints(2), ds[3]: ints(3)}
    c = pb.claim()
    a = pb.exact(c, ds, count=3)  # only 2 carries three devices
    pb.constraint(c, "match", [a], values)
    assert _viable(pb.build()) == {2}
    pb2 = PB()
    ds = [pb2.device() for _ in range(2)]
    c = pb2.claim()
    a = pb2.all(c, ds)  # every member must carry the value
    pb2.constraint(c, "match", [a], {ds[0]: ints(1, 2), ds[1]: ints(2)})
    assert _viable(pb2.build()) == {2}


def test_shared_devices_and_uncovered_alternatives_keep_values() -> None:
    # A multi device can serve both requests: no device-count argument applies.
    pb = PB()
    multi = pb.device(multi=True)
    c = pb.claim()
    alts = [pb.exact(c, [multi]) for _ in range(3)]
    pb.constraint(c, "match", alts, {multi: ints(5)})
    assert _viable(pb.build()) == {5} and feasible(pb.build())
    # A firstAvailable request with an uncovered subrequest needs no device with the value.
    pb2 = PB()
    ds = [pb2.device() for _ in range(2)]
    c = pb2.claim()
    a0 = pb2.exact(c, ds)
    covered, _ = pb2.request(c, Sub(ds), Sub(ds))
    pb2.constraint(c, "match", [a0, covered], {ds[0]: ints(1), ds[1]: ints(2)})
    assert _viable(pb2.build()) == {1, 2}
    assert feasible(pb2.build())
