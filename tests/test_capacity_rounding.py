"""validRange step rounding (KEP-5075) in precompute and in the checker, with and without
DRAFractionalCapacityRange: integer units (Quantity.Value()) in 1.36, milli-units
(Quantity.MilliValue()) for fractional ranges with the 1.37 gate on. Both readings must agree."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dra_solver.api.models import CapacityRequestPolicy, DeviceCapacity
from dra_solver.api.quantity import Quantity
from dra_solver.check.amounts import round_request
from dra_solver.gates import FeatureGates
from dra_solver.problem.capacity import device_consumption


def policy(min: str, step: str, max: str | None = None) -> CapacityRequestPolicy:
    rng = {"min": min, "step": step} | ({"max": max} if max is not None else {})
    return CapacityRequestPolicy.model_validate({"validRange": rng})


def both(
    pol: CapacityRequestPolicy, request: str, fractional: bool
) -> tuple[Fraction | None, Fraction | None]:
    """(precompute, checker) consumption of `request` under `pol` on a 100-unit capacity."""
    req = Quantity.parse(request).as_fraction()
    cap = DeviceCapacity(value=Quantity.parse("100"), request_policy=pol)
    pre = device_consumption({"bw": cap}, {"bw": req}, fractional=fractional)
    chk, _ = round_request(req, pol, fractional=fractional)
    return (pre["bw"] if pre is not None else None), chk


def test_gate_is_off_by_default() -> None:
    assert FeatureGates().DRAFractionalCapacityRange is False
    assert FeatureGates.of("DRAFractionalCapacityRange=true").DRAFractionalCapacityRange is True


def test_fractional_range_rounds_on_integers_with_the_gate_off() -> None:
    """1.36 (Q6): Value() first — min 1, step 1, request 2 — so 1200m consumes 2."""
    assert both(policy("500m", "500m"), "1200m", fractional=False) == (Fraction(2), Fraction(2))


def test_fractional_range_rounds_in_milli_units_with_the_gate_on() -> None:
    """500m + ceil((1200 - 500) / 500) * 500m = 1500m."""
    assert both(policy("500m", "500m"), "1200m", fractional=True) == (Fraction(3, 2), Fraction(3, 2))


def test_milli_units_round_the_bounds_up_too() -> None:
    """MilliValue() rounds up: step 1.5m counts as 2m, min 1.5m as 2m; 3m -> 2m + 1 x 2m = 4m
    (exact arithmetic would give 3m)."""
    assert both(policy("1500u", "1500u"), "3m", fractional=True) == (Fraction(4, 1000), Fraction(4, 1000))


@pytest.mark.parametrize("fractional", [False, True])
def test_integer_range_is_the_same_with_either_gate(fractional: bool) -> None:
    """No fractional bound: useMilli is false, and Value() of a fractional request rounds up
    just as milli-units would (ceil((ceil(r) - a) / b) = ceil((r - a) / b) for integers a, b)."""
    assert both(policy("5Gi", "5Gi"), "12.5Gi", fractional) == (Fraction(15 * 2**30), Fraction(15 * 2**30))
    assert both(policy("2", "3"), "2500m", fractional) == (Fraction(5), Fraction(5))


def test_integer_units_when_a_bound_does_not_fit_milli_units() -> None:
    """A max above MaxInt64 / 1000 keeps Value() arithmetic even with the gate on."""
    pol = policy("500m", "500m", max="10000000000000000")
    assert both(pol, "1200m", fractional=True) == (Fraction(2), Fraction(2))


def test_fractional_step_grid_is_checked_in_the_units_it_rounds_in() -> None:
    """Gate off, step 1.5: Value() rounds with step 2 to 2, and upstream checks the grid in the
    same integer units ((2 - 0) mod 2 = 0), so 2 is consumed, not refused as off the 1.5 grid."""
    assert both(policy("0", "1500m"), "1", fractional=False) == (Fraction(2), Fraction(2))
    assert both(policy("0", "1500m"), "1", fractional=True) == (Fraction(3, 2), Fraction(3, 2))


def test_rounding_above_max_is_refused_by_both() -> None:
    assert both(policy("500m", "500m", max="1"), "1200m", fractional=True) == (None, None)
    assert both(policy("500m", "500m", max="1500m"), "1200m", fractional=False) == (None, None)
