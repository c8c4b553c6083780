"""encoders.capacity: consumable capacity sums, exact Fractions, scaling."""

from __future__ import annotations

from fractions import Fraction

from cpsat_builders import PB, feasible
from ortools.sat.python import cp_model

from dra_solver.encoders.model import add_scaled_le


def _two_shares(cap: dict, in_use: dict, each: dict) -> bool:
    pb = PB()
    d = pb.device(multi=True, capacity=cap, in_use=in_use, shared=bool(in_use))
    for _ in range(2):
        pb.exact(pb.claim(), [d], consumed={d: {k: Fraction(v) for k, v in each.items()}})
    return feasible(pb.build())


def test_capacity_sums_with_in_use() -> None:
    assert _two_shares({"mem": 10}, {"mem": 4}, {"mem": 3})
    assert not _two_shares({"mem": 10}, {"mem": 5}, {"mem": 3})


def test_every_capacity_is_checked() -> None:
    assert _two_shares({"mem": 10, "bw": 2}, {}, {"mem": 1, "bw": 1})
    assert not _two_shares({"mem": 10, "bw": 2}, {}, {"mem": 1, "bw": Fraction(3, 2)})


def test_fractions_are_exact() -> None:
    third = Fraction(1, 3)
    assert _two_shares({"mem": Fraction(2, 3)}, {}, {"mem": third})
    assert not _two_shares({"mem": Fraction(2, 3) - Fraction(1, 1000)}, {}, {"mem": third})


def test_no_capacities_is_unlimited() -> None:
    pb = PB()
    d = pb.device(multi=True)
    for _ in range(10):
        pb.exact(pb.claim(), [d])
    assert feasible(pb.build())


def test_admin_placements_consume() -> None:
    pb = PB()
    d = pb.device(multi=True, capacity={"mem": 4})
    pb.exact(pb.claim(), [d], consumed={d: {"mem": Fraction(3)}})
    pb.exact(pb.claim(), [d], consumed={d: {"mem": Fraction(3)}}, admin=True)
    assert not feasible(pb.build())


def test_scaling_divides_by_gcd() -> None:
    m = cp_model.CpModel()
    xs = [m.new_bool_var(f"x{i}") for i in range(3)]
    add_scaled_le(m, [(Fraction(4_000_000_000), x) for x in xs], Fraction(8_500_000_000), 1)
    (lin,) = [c.linear for c in m.proto.constraints]
    assert list(lin.coeffs) == [1, 1, 1] and lin.domain[1] == 2
    add_scaled_le(m, [(Fraction(1), x) for x in xs], Fraction(5), 1)  # never binds: skipped
    assert len(m.proto.constraints) == 1


def test_capacity_is_linked_to_used() -> None:
    """sum consumed * x <= left * used[d]: the "devices" LP bound sees the capacity."""
    from dra_solver.encoders import build

    pb = PB()
    ds = [pb.device(multi=True, capacity={"mem": 4}) for _ in range(2)]
    for _ in range(2):
        pb.exact(pb.claim(), ds, consumed={d: {"mem": Fraction(3)} for d in ds})
    m = build(pb.build())
    for d in ds:
        used = m.used[d].index
        rows = [
            c.linear
            for c in m.cp.proto.constraints
            if c.has_linear() and used in c.linear.vars and len(c.linear.vars) == 3
        ]
        assert len(rows) == 1
        coeffs = dict(zip(rows[0].vars, rows[0].coeffs, strict=True))
        sign = 1 if coeffs[used] < 0 else -1  # CP-SAT may store -row >= 0
        # 3 x + 3 x <= 4 used, divided by gcd 3 with the limit rounded down: x + x <= used
        assert {k: sign * v for k, v in coeffs.items()} == {
            m.x[(0, d)].index: 1,
            m.x[(1, d)].index: 1,
            used: -1,
        }
    assert feasible(pb.build())
