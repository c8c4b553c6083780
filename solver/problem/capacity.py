"""Consumable capacity (KEP-5075): how much one placement consumes, and whether it fits.

Why pure functions over Fractions: precompute rounds each request once per candidate
device; the reference allocator, the CP-SAT encoders and the checker then only add and
compare. The rounding follows upstream exactly (docs/semantics.md, "Consumable capacity").

validRange with a step works on whole units u: to_u(x) = ceil_away(x / u), and a request
r >= min consumes
    min' + step' * ceil((to_u(r) - min') / step')  (times u),  min' = to_u(min), step' = to_u(step),
and a consumption c is on the grid iff (to_u(c) - min') mod step' = 0. In 1.36 u = 1
(Quantity.Value(): a fractional min, step or request is rounded up to an integer first; Q6 in
docs/semantics.md, "Deliberate differences from upstream bugs").
With DRAFractionalCapacityRange (1.37, off by default) u = 1/1000 (MilliValue()) when the
range needs it: some of min, max, step is fractional (MilliValue() mod 1000 != 0), all of
them fit milli units in int64 (Value() <= MaxInt64 / 1000) and step >= 1m. With integer
min and step both units give the same amount (ceil((ceil(r) - a) / b) = ceil((r - a) / b)
for integers a, b > 0), so the gate changes nothing for integer ranges.
Upstream (after July 2026, its shared tests `consumable-capacity-range-policy-*-rejected`,
`...-overflow-aborts-not-skip`, `...-allocation-mode-all-overflow-aborts`) reads the request
and the rounded amount of a step range as int64 units; one that does not fit int64 is not
skipped but aborts the allocation ("cannot be represented"), and so does a negative request
(which validation refuses first): `FatalCapacityRequest`, which the callers turn into the
call's error where upstream's search would meet the device. Not
modelled: a fractional request not exactly representable in milli units is rounded up
(MilliValue()) like every other quantity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..api.models import CapacityRequestPolicy, DeviceCapacity
from ..api.quantity import Quantity, quantity_format
from ..reasons import Kind, Reason
from .flat import fits

__all__ = ["Policy", "FatalCapacityRequest", "consumption", "device_consumption", "fits"]

MAX_INT64 = 2**63 - 1


class FatalCapacityRequest(ValueError):
    """A capacity request that upstream aborts the allocation for rather than skip the device:
    negative, or (with a validRange step) not readable as int64 units or rounding past int64."""


@dataclass(frozen=True)
class Policy:
    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] | None = None
    min: Fraction | None = None
    max: Fraction | None = None
    step: Fraction | None = None
    has_range: bool = False
    unit: Fraction = Fraction(1)
    """Rounding unit of validRange steps: 1 (Value()) or 1/1000 (MilliValue(), see above)."""

    @classmethod
    def of(cls, policy: CapacityRequestPolicy | None, *, fractional: bool) -> Policy | None:
        """`fractional`: the DRAFractionalCapacityRange gate."""
        if policy is None:
            return None
        rng = policy.valid_range
        bounds = [q.as_fraction() for q in (rng.min, rng.max, rng.step) if q is not None] if rng else []
        step = rng.step.as_fraction() if rng and rng.step is not None else None
        return cls(
            default=policy.default.as_fraction() if policy.default is not None else None,
            valid_values=tuple(v.as_fraction() for v in policy.valid_values) if policy.valid_values else None,
            min=rng.min.as_fraction() if rng and rng.min is not None else None,
            max=rng.max.as_fraction() if rng and rng.max is not None else None,
            step=rng.step.as_fraction() if rng and rng.step is not None else None,
            has_range=rng is not None,
            unit=MILLI if fractional and _use_milli(bounds, step) else Fraction(1),
        )


MILLI = Fraction(1, 1000)
MAX_MILLI_VALUE = (2**63 - 1) // 1000
"""resource.MaxMilliValue: the largest Value() whose MilliValue() fits int64."""


def _units(x: Fraction, unit: Fraction) -> int:
    """Value() (unit 1) or MilliValue() (unit 1/1000): rounded up, away from zero."""
    v = x / unit
    return math.ceil(v) if v >= 0 else math.floor(v)


def _plain(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else str(float(x))


def _use_milli(bounds: list[Fraction], step: Fraction | None) -> bool:
    """Upstream's useMilli, the gate being on: a fractional bound, all fit, step >= 1m."""
    if any(_units(b, Fraction(1)) > MAX_MILLI_VALUE for b in bounds):
        return False
    if not any(_units(b, MILLI) % 1000 for b in bounds):
        return False
    return step is None or _units(step, MILLI) >= 1


def _rounded(policy: Policy, requested: Fraction) -> Fraction:
    """`requested` rounded up as the requestPolicy says: to its minimum, then to its step on a
    range; to the next valid value of a list (unchanged past the last)."""
    if policy.has_range:
        low = policy.min if policy.min is not None else Fraction(0)
        if requested < low:
            return low
        if policy.step is None or policy.step <= 0:
            return requested
        u = policy.unit
        lo, st, rq = _units(low, u), _units(policy.step, u), _units(requested, u)
        if rq > MAX_INT64:
            raise FatalCapacityRequest(f"capacity request {_plain(requested)} cannot be represented as int64")
        rounded = lo + math.ceil(Fraction(rq - lo, st)) * st
        if rounded > MAX_INT64:
            raise FatalCapacityRequest(
                f"capacity request {_plain(requested)} rounded up to the step of its requestPolicy "
                "cannot be represented as int64"
            )
        return rounded * u
    if policy.valid_values is not None:
        return next((v for v in policy.valid_values if v >= requested), requested)
    return requested


def consumption(value: Fraction, policy: Policy | None, requested: Fraction | None) -> Fraction | None:
    """Amount one placement consumes of a capacity; None when the request violates the policy."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if requested < 0:
        raise FatalCapacityRequest(f"capacity request {_plain(requested)} is negative")
    if policy is None:
        return requested
    amount = _rounded(policy, requested)
    if policy.default is not None and amount == policy.default:
        return amount  # upstream skips the policy check for the default
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return None
        if policy.step is not None and policy.step > 0:
            low = policy.min if policy.min is not None else Fraction(0)
            u = policy.unit  # upstream checks the grid in the same units it rounds in
            if (_units(amount, u) - _units(low, u)) % _units(policy.step, u) != 0:
                return None
    elif policy.valid_values is not None and amount not in policy.valid_values:
        return None
    return amount


def device_consumption(
    capacity: dict[str, DeviceCapacity], requests: dict[str, Fraction], *, fractional: bool
) -> dict[str, Fraction] | None:
    """Consumption of every capacity of a device for one placement; None if ineligible
    (a requested capacity the device lacks, or a policy violation). `fractional`: the
    DRAFractionalCapacityRange gate (milli-unit steps). Raises `FatalCapacityRequest` (capacity
    name prefixed) for a request upstream's step rounding cannot read."""
    if any(name not in capacity for name in requests):
        return None
    out: dict[str, Fraction] = {}
    for name, cap in capacity.items():
        policy = Policy.of(cap.request_policy, fractional=fractional)
        try:
            amount = consumption(cap.value.as_fraction(), policy, requests.get(name))
        except FatalCapacityRequest as exc:
            raise FatalCapacityRequest(f"capacity {name}: {exc}") from None
        if amount is None:
            return None
        out[name] = amount
    return out


def amount_words(value: Fraction | int, fmt: str) -> str:
    """An amount of a capacity as the device publishes its quantities (`80Gi`, not a
    fraction of bytes), for reasons only: an unknown format falls back to the plain number."""
    form = quantity_format(fmt)
    try:
        if form is None:
            raise ValueError(f"unknown quantity format {fmt!r}")
        return str(Quantity.from_number(Fraction(value), form))
    except (TypeError, ValueError):
        return str(value)


def too_small(
    capacity: dict[str, Fraction],
    formats: dict[str, str],
    requests: dict[str, Fraction],
    amounts: dict[str, Fraction],
) -> Reason | None:
    """Why a device cannot serve the request even unused — a capacity whose whole value is less
    than the placement consumes — as a fact with the amounts as the device publishes them
    (`Kind.TOO_SMALL`, worded `have memory 40Gi, less than the 80Gi asked`), or None when the
    device could serve it once free. Why apart from "not enough capacity left": a request no
    device is big enough for is never served by waiting."""
    for name in sorted(amounts):
        total = capacity.get(name)
        if total is None or amounts[name] <= total:
            continue
        fmt = formats.get(name, "DecimalSI")
        asked = requests.get(name)
        return Reason.of(
            Kind.TOO_SMALL,
            name=name,
            total=amount_words(total, fmt),
            asked=None if asked is None else amount_words(asked, fmt),
            consumed=amount_words(amounts[name], fmt),
            rounded=int(asked is not None and amounts[name] != asked),
        )
    return None
