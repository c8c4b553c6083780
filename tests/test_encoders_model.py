"""encoders.model: the CpModel every model of the package starts from."""

from __future__ import annotations

from ortools.sat.python import cp_model

from dra_solver.encoders.model import new_cp_model


def _fill(m: cp_model.CpModel) -> None:
    xs = [m.new_bool_var(f"x{i}") for i in range(4)]
    n = m.new_int_var(0, 3, "n")
    m.add(sum(xs) == n)
    m.add_bool_or([xs[0], xs[1].Not()])
    m.add_implication(xs[2], xs[3])
    m.maximize(n)
    m.add_hint(xs[0], 1)


def test_a_new_model_builds_what_a_plain_cp_model_builds() -> None:
    ours, plain = new_cp_model(), cp_model.CpModel()
    assert isinstance(ours, cp_model.CpModel)
    _fill(ours)
    _fill(plain)
    assert str(ours.proto) == str(plain.proto)


def test_a_new_model_lacks_only_the_deprecated_camel_case_aliases() -> None:
    """What `CpModel.__init__` sets on an instance and `new_cp_model` skips: nothing but the
    CamelCase names, so a future ortools that sets more there is noticed here."""
    ours, plain = vars(new_cp_model()), vars(cp_model.CpModel())
    assert set(ours) <= set(plain)
    skipped = set(plain) - set(ours)
    assert all(name[:1].isupper() and "_" not in name for name in skipped), sorted(skipped)
