"""Amounts: quantities as exact fractions, and what one placement consumes (KEP-5075).

Why a module: the per-result rules (`selector` for missing capacities, `capacity` and
`rounding`), the All-set of `count` and the capacity totals across claims all need the
same reading of a device's capacities and of its requestPolicy rounding, and the
`capacity`, `rounding` and `counters` messages show amounts in one canonical form.
The rounding is written here again on purpose (not taken from `solver.problem.capacity`), so
that the checker stays a second reading of the rules.

validRange steps, as upstream's roundUpRange: a request below `min` takes `min`; otherwise,
counting in whole units (Quantity.Value() = integers, or with DRAFractionalCapacityRange and
a range that needs it, Quantity.MilliValue() = thousandths; both round up), the amount is
min + step * ceil((request - min) / step). The milli-unit reading applies when the gate is on,
one of min/max/step is not a whole number, each fits milli units in int64 and step >= 1m.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..api.models import CapacityRequestPolicy, CapacityRequestPolicyRange, Device
from ..api.quantity import Quantity
from .keys import Alt, fqn


def frac(q: Quantity) -> Fraction:
    return q.as_fraction()


def fmt(x: Fraction) -> str:
    """A quantity value for messages (canonical Kubernetes form)."""
    if x.denominator == 1:
        return str(Quantity(x, "BinarySI")) if x >= 1024 else str(int(x))
    return str(Quantity(x))


def capacity_requests(alt: Alt) -> dict[str, Quantity]:
    return dict(alt.capacity.requests) if alt.capacity is not None else {}


MAX_MILLI_VALUE = (2**63 - 1) // 1000
"""resource.MaxMilliValue."""


def milli_range(rng: CapacityRequestPolicyRange, fractional: bool) -> bool:
    """Whether validRange `rng` rounds in thousandths (upstream's useMilli)."""
    if not fractional:
        return False
    bounds = [q for q in (rng.min, rng.max, rng.step) if q is not None]
    if any(q.value() > MAX_MILLI_VALUE for q in bounds):
        return False
    if all(q.milli_value() % 1000 == 0 for q in bounds):
        return False
    return rng.step is None or rng.step.milli_value() >= 1


def round_request(
    req: Fraction, policy: CapacityRequestPolicy | None, *, fractional: bool
) -> tuple[Fraction | None, str]:
    """The amount a request consumes under `policy`, or (None, why) when it is not allowed.
    `fractional`: the DRAFractionalCapacityRange gate."""
    if policy is None:
        return req, ""
    if policy.valid_values:
        fits = [frac(v) for v in policy.valid_values if frac(v) >= req]
        if not fits:
            return None, f"{fmt(req)} exceeds every valid value"
        return min(fits), ""
    rng = policy.valid_range
    if rng is not None:
        low = frac(rng.min) if rng.min is not None else Fraction(0)
        if req < low:  # at `min` itself the step rounding applies (a fractional min rounds up)
            amount = low
        elif rng.step is not None and frac(rng.step) > 0:
            milli = milli_range(rng, fractional)

            def whole(q: Quantity) -> int:
                return q.milli_value() if milli else q.value()

            lo = whole(rng.min) if rng.min is not None else 0
            step = whole(rng.step)
            n = math.ceil(Fraction(whole(Quantity(req)) - lo, step))
            amount = Fraction(lo + n * step, 1000 if milli else 1)
        else:
            amount = req
        if rng.max is not None and amount > frac(rng.max):
            return None, f"{fmt(req)} (rounded {fmt(amount)}) is above the maximum {fmt(frac(rng.max))}"
        return amount, ""
    return req, ""


@dataclass
class Consumption:
    """What one placement of a request on a device consumes, per capacity as published."""

    amounts: dict[str, Fraction]
    lacking: list[str]
    """Requested capacities the device does not have (the device is not a candidate)."""
    refused: dict[str, str]
    """Capacity -> why the policy does not allow the requested amount."""


def consumption(
    device: Device, driver: str, requests: dict[str, Quantity], *, fractional: bool
) -> Consumption:
    """`fractional`: the DRAFractionalCapacityRange gate (validRange steps in milli-units)."""
    by_fqn = {fqn(k, driver): (k, frac(v)) for k, v in requests.items()}
    have = {fqn(k, driver) for k in device.capacity}
    lacking = sorted(orig for f, (orig, _) in by_fqn.items() if f not in have)
    amounts: dict[str, Fraction] = {}
    refused: dict[str, str] = {}
    for name, cap in device.capacity.items():
        requested = by_fqn.get(fqn(name, driver))
        policy = cap.request_policy
        if requested is None:
            if policy is not None and policy.default is not None:
                amounts[name] = frac(policy.default)
            else:
                amounts[name] = frac(cap.value)
            continue
        amount, why = round_request(requested[1], policy, fractional=fractional)
        if amount is None:
            refused[name] = why
        else:
            amounts[name] = amount
    return Consumption(amounts, lacking, refused)
