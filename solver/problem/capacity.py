"""Consumable capacity (KEP-5075): how much one placement consumes, and whether it fits.

Why pure functions over Fractions: precompute rounds each request once per candidate
device; the reference allocator, the CP-SAT encoders and the checker then only add and
compare. The rounding follows upstream exactly (UPSTREAM-SEMANTICS §4.9.1): validRange
rounds up from `min` in `step`s on integer units (Quantity.Value(), i.e. ceil).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dra_solver.api.models import CapacityRequestPolicy, DeviceCapacity
from dra_solver.problem.flat import fits

__all__ = ["Policy", "consumption", "device_consumption", "fits"]


@dataclass(frozen=True)
class Policy:
    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] | None = None
    min: Fraction | None = None
    max: Fraction | None = None
    step: Fraction | None = None
    has_range: bool = False

    @classmethod
    def of(cls, policy: CapacityRequestPolicy | None) -> Policy | None:
        if policy is None:
            return None
        rng = policy.valid_range
        return cls(
            default=policy.default.as_fraction() if policy.default is not None else None,
            valid_values=tuple(v.as_fraction() for v in policy.valid_values) if policy.valid_values else None,
            min=rng.min.as_fraction() if rng and rng.min is not None else None,
            max=rng.max.as_fraction() if rng and rng.max is not None else None,
            step=rng.step.as_fraction() if rng and rng.step is not None else None,
            has_range=rng is not None,
        )


def _value(x: Fraction) -> int:
    """Quantity.Value(): integer units, fractional values rounded up."""
    return math.ceil(x)


def consumption(value: Fraction, policy: Policy | None, requested: Fraction | None) -> Fraction | None:
    """Amount one placement consumes of a capacity; None when the request violates the policy."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    amount = requested
    if policy.has_range:
        low = policy.min if policy.min is not None else Fraction(0)
        if requested < low:
            amount = low
        elif policy.step is not None and policy.step > 0:
            lo, st, rq = _value(low), _value(policy.step), _value(requested)
            amount = Fraction(lo + math.ceil(Fraction(rq - lo, st)) * st)
    elif policy.valid_values is not None:
        amount = next((v for v in policy.valid_values if v >= requested), requested)
    if policy.default is not None and amount == policy.default:
        return amount  # upstream skips the policy check for the default
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return None
        if policy.step is not None and policy.step > 0:
            low = policy.min if policy.min is not None else Fraction(0)
            if (amount - low) % policy.step != 0:
                return None
    elif policy.valid_values is not None and amount not in policy.valid_values:
        return None
    return amount


def device_consumption(
    capacity: dict[str, DeviceCapacity], requests: dict[str, Fraction]
) -> dict[str, Fraction] | None:
    """Consumption of every capacity of a device for one placement; None if ineligible
    (a requested capacity the device lacks, or a policy violation)."""
    if any(name not in capacity for name in requests):
        return None
    out: dict[str, Fraction] = {}
    for name, cap in capacity.items():
        amount = consumption(cap.value.as_fraction(), Policy.of(cap.request_policy), requests.get(name))
        if amount is None:
            return None
        out[name] = amount
    return out
