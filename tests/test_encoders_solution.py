"""encoders.solution: decoding order, group expansion, hints that are complete and consistent."""

from __future__ import annotations

from cpsat_builders import PB, Sub, ints
from ortools.sat.python import cp_model

from dra_solver.encoders import build
from dra_solver.encoders.objective import stages
from dra_solver.encoders.solution import decode, hint_values
from dra_solver.problem.flat import Assignment, Placement, Problem


def _fixed_to_hint(p: Problem, asg: Assignment, mode: str = "all") -> Assignment | None:
    """Solve with every variable fixed to its hinted value: feasible iff the hint is a solution."""
    m = build(p, mode=mode)
    stages(m, "pack")  # objective auxiliaries must be hinted too
    for var, val in hint_values(m, asg):
        m.cp.add_hint(var, val)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.fix_variables_to_their_hinted_value = True
    if solver.solve(m.cp) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return decode(m, lambda v: int(solver.value(v)))


def _problem() -> Problem:
    pb = PB()
    gpus = [pb.device() for _ in range(4)]  # one group
    nic0, nic1 = pb.device(), pb.device()
    shared = pb.device(multi=True)
    c = pb.claim()
    pb.request(c, Sub(gpus, 3), Sub(gpus, 1))
    a_nic = pb.exact(c, [nic0, nic1])
    pb.constraint(c, "match", [a_nic], {nic0: ints(1, 2), nic1: ints(2)})
    pb.exact(c, [shared], admin=True)
    pb.exact(pb.claim(), [shared])
    return pb.build()


def test_valid_hint_round_trips() -> None:
    p = _problem()
    asg = {
        0: [
            Placement(0, 0, 0),
            Placement(0, 0, 1),
            Placement(0, 0, 2),
            Placement(0, 2, 5),
            Placement(0, 3, 6),
        ],
        1: [Placement(1, 4, 6)],
    }
    assert _fixed_to_hint(p, asg) == asg


def test_invalid_hint_is_rejected() -> None:
    p = _problem()
    asg = {0: [Placement(0, 0, 0), Placement(0, 2, 5), Placement(0, 3, 6)], 1: [Placement(1, 4, 6)]}
    assert _fixed_to_hint(p, asg) is None  # two devices short for the first request


def test_decode_order_and_group_expansion() -> None:
    pb = PB()
    ds = [pb.device() for _ in range(4)]
    c = pb.claim()
    pb.exact(c, ds, count=2)
    pb.exact(c, ds, count=1)
    m = build(pb.build())
    assert len(m.groups) == 1
    values = {m.n[(0, 0)]: 2, m.n[(1, 0)]: 1}
    asg = decode(m, lambda v: values.get(v, 1))
    assert [(pl.alternative, pl.device) for pl in asg[0]] == [(0, 0), (0, 1), (1, 2)]
