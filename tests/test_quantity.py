"""Tests of solver.api.quantity: parsing, canonical printing and arithmetic as upstream."""

from __future__ import annotations

import copy
import json
import math
import pickle
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from dra_solver.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    Quantity,
    QuantityError,
)
from dra_solver.errors import DRASolverError

Q = Quantity.parse

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
MAX_INT64 = 2**63 - 1


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("suffix,factor", sorted(BINARY.items()))
def test_parse_binary_suffixes(suffix: str, factor: int) -> None:
    q = Q(f"3{suffix}")
    assert q.as_fraction() == 3 * factor
    assert q.format == BINARY_SI
    assert q.original == f"3{suffix}"


@pytest.mark.parametrize("suffix,factor", sorted(DECIMAL.items()))
def test_parse_decimal_suffixes(suffix: str, factor: Fraction) -> None:
    q = Q(f"7{suffix}")
    assert q.as_fraction() == 7 * factor
    assert q.format == DECIMAL_SI


@pytest.mark.parametrize(
    "text,value",
    [
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1e+3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("1.5E-2", Fraction(15, 1000)),
        ("1.2e3", Fraction(1200)),
        ("1.3E+6", Fraction(1_300_000)),
        ("0.5e0", Fraction(1, 2)),
        ("0.5e-2", Fraction(5, 1000)),
        ("1e0", Fraction(1)),
        ("1e-9", Fraction(1, 10**9)),
        ("1e21", Fraction(10**21)),
        ("2e007", Fraction(2 * 10**7)),
    ],
)
def test_parse_exponent(text: str, value: Fraction) -> None:
    q = Q(text)
    assert q.as_fraction() == value
    assert q.format == DECIMAL_EXPONENT


def test_upper_e_alone_is_exa_not_exponent() -> None:
    assert Q("1E") == Quantity.from_number(10**18)
    assert Q("1E").format == DECIMAL_SI
    assert Q("1Ei").format == BINARY_SI


@pytest.mark.parametrize(
    "text,value,fmt",
    [
        ("0", Fraction(0), DECIMAL_SI),
        ("-0", Fraction(0), DECIMAL_SI),
        ("0Ki", Fraction(0), BINARY_SI),
        ("0m", Fraction(0), DECIMAL_SI),
        ("0e5", Fraction(0), DECIMAL_EXPONENT),
        ("+1", Fraction(1), DECIMAL_SI),
        ("-1", Fraction(-1), DECIMAL_SI),
        ("-1.5Gi", Fraction(-3 * 2**29), BINARY_SI),
        ("+2k", Fraction(2000), DECIMAL_SI),
        ("-2e-3", Fraction(-2, 1000), DECIMAL_EXPONENT),
        ("1.5", Fraction(3, 2), DECIMAL_SI),
        ("0.001", Fraction(1, 1000), DECIMAL_SI),
        (".001", Fraction(1, 1000), DECIMAL_SI),
        (".5", Fraction(1, 2), DECIMAL_SI),
        ("1.", Fraction(1), DECIMAL_SI),
        ("1.G", Fraction(10**9), DECIMAL_SI),
        ("100.035k", Fraction(100035), DECIMAL_SI),
        ("0.0005k", Fraction(1, 2), DECIMAL_SI),
        ("7.123456M", Fraction(7123456), DECIMAL_SI),
        ("1.01E", Fraction(101 * 10**16), DECIMAL_SI),
        ("00012", Fraction(12), DECIMAL_SI),
        ("100.035Ki", Fraction(10243584, 100), BINARY_SI),
        ("0.5Mi", Fraction(2**19), BINARY_SI),
        ("0.025Ti", Fraction(274877906944, 10), BINARY_SI),
        ("18446744073709551616", Fraction(2**64), DECIMAL_SI),  # decimal is not capped
    ],
)
def test_parse_numbers(text: str, value: Fraction, fmt: str) -> None:
    q = Q(text)
    assert q.as_fraction() == value
    assert q.format == fmt
    assert q.original == text


@pytest.mark.parametrize(
    "text,value,fmt",
    [
        # values finer than 1n round away from zero (upstream inf.RoundUp at Nano scale)
        ("0.1n", Fraction(1, 10**9), DECIMAL_SI),
        ("0.9n", Fraction(1, 10**9), DECIMAL_SI),
        ("-0.1n", Fraction(-1, 10**9), DECIMAL_SI),
        ("3.001n", Fraction(4, 10**9), DECIMAL_SI),
        ("1.1E-9", Fraction(2, 10**9), DECIMAL_EXPONENT),
        ("0.5e-9", Fraction(1, 10**9), DECIMAL_EXPONENT),
        ("0.0000000001", Fraction(1, 10**9), DECIMAL_SI),
        ("0.00000012345", Fraction(124, 10**9), DECIMAL_SI),
        ("1e-99999999", Fraction(1, 10**9), DECIMAL_EXPONENT),
        # BinarySI below 1 switches to DecimalSI; above 2^63-1 it is capped
        ("0.000000000001Ki", Fraction(2, 10**9), DECIMAL_SI),
        ("9Ei", Fraction(MAX_INT64), BINARY_SI),
        ("-9Ei", Fraction(-MAX_INT64), BINARY_SI),
        ("9223372036854775807Ki", Fraction(MAX_INT64), BINARY_SI),
        ("7Ei", Fraction(7 * 2**60), BINARY_SI),
    ],
)
def test_parse_rounding_and_caps(text: str, value: Fraction, fmt: str) -> None:
    q = Q(text)
    assert q.as_fraction() == value
    assert q.format == fmt


def test_parse_int() -> None:
    q = Q(1000)
    assert q.as_fraction() == 1000
    assert q.format == DECIMAL_SI
    assert q.original is None
    assert str(q) == "1k"
    assert Q(-5) == Q("-5")


@pytest.mark.parametrize("bad", [1.5, True, None, b"1", Fraction(1, 2)])
def test_parse_wrong_type(bad: object) -> None:
    with pytest.raises(TypeError):
        Q(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text,reason",
    [
        ("10Gx", 'unknown suffix "Gx"'),
        ("", "empty"),
        ("1.2.3", "only one decimal point"),
        ("1.1.M", "only one decimal point"),
        ("Gi", "must start with a number"),
        ("aoeu", "must start with a number"),
        (".", "has no digits"),
        ("-", "has no digits"),
        ("+Ki", "has no digits"),
        (" 1", "whitespace"),
        ("1 ", "whitespace"),
        ("1\n", "whitespace"),
        ("1 Gi", "unknown suffix"),
        ("1i", "unknown suffix"),
        (".5i", "unknown suffix"),
        ("-3.01i", "unknown suffix"),
        ("0.1mi", "unknown suffix"),
        ("0.1am", "unknown suffix"),
        ("1K", "unknown suffix"),  # kilo is lower-case k
        ("1KiB", "unknown suffix"),
        ("1e", "unknown suffix"),
        ("1e+", "unknown suffix"),
        ("-3.01e-", "unknown suffix"),
        ("1e3k", "unknown suffix"),
        ("1e1.5", "unknown suffix"),
        ("1+1.0M", "unknown suffix"),
        ("++1", "has no digits"),
        ("1e99999999999999999999", "out of range"),
        ("1e1001", "too large"),
        ("1\u0661", "unknown suffix"),  # non-ASCII digit
    ],
)
def test_parse_invalid(text: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        Q(text)
    message = str(info.value)
    assert message.startswith(f"quantity {json.dumps(text, ensure_ascii=False)} is not valid: ")
    assert reason in message
    # the message lists what is allowed
    assert "Ki, Mi, Gi, Ti, Pi, Ei" in message
    assert "n, u, m, k, M, G, T, P, E" in message
    assert info.value.text == text
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, DRASolverError)


# --------------------------------------------------------------------------- printing

CANONICAL = [
    ("0", "0"),
    ("0Ki", "0"),
    ("0e3", "0"),
    ("-0", "0"),
    ("1024", "1024"),
    ("1000", "1k"),
    ("1500", "1500"),
    ("1Ki", "1Ki"),
    ("1024Ki", "1Mi"),
    ("1024Mi", "1Gi"),
    ("1Gi", "1Gi"),
    ("10Gi", "10Gi"),
    ("0.5Gi", "512Mi"),
    ("1.5Gi", "1536Mi"),
    ("1536Ki", "1536Ki"),
    ("1025Ki", "1025Ki"),
    ("1000Ki", "1000Ki"),
    ("0.5Ki", "512"),  # BinarySI below 1024 prints as decimal
    ("1.1Ki", "1126400m"),  # non-integer BinarySI falls back to decimal
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    ("9Ei", "9223372036854775807"),
    ("1000m", "1"),
    ("1.5", "1500m"),
    ("0.5", "500m"),
    ("0.0001", "100u"),
    ("100m", "100m"),
    ("1000M", "1G"),
    ("1.08", "1080m"),
    ("1080000000n", "1080m"),
    ("0.001T", "1G"),
    ("300M", "300M"),
    ("1234567M", "1234567M"),
    ("1E", "1E"),
    ("1000E", "1e21"),  # no decimal suffix beyond E: exponent notation
    ("5000E", "5e21"),
    ("0.1n", "1n"),
    ("0.9n", "1n"),
    ("3.001n", "4n"),
    ("1e3", "1e3"),
    ("1E3", "1e3"),
    ("1e0", "1"),
    ("1.5e3", "1500"),
    ("1.5E-2", "15e-3"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    (".001e12", "1e9"),
    ("80e-3", "80e-3"),
    ("300e6", "300e6"),
    ("1.3E+6", "1300e3"),
    ("-1Ki", "-1Ki"),
    ("-1.5", "-1500m"),
    ("-1e3", "-1e3"),
    ("-0.1n", "-1n"),
    ("+10Gi", "10Gi"),
]


@pytest.mark.parametrize("text,expected", CANONICAL)
def test_canonical(text: str, expected: str) -> None:
    q = Q(text)
    assert str(q) == expected
    assert q.canonical() == expected
    # canonical output parses back to the same value and prints the same
    again = Q(expected)
    assert again == q
    assert str(again) == expected


@pytest.mark.parametrize(
    "value,fmt,expected",
    [
        (1024, BINARY_SI, "1Ki"),
        (1024 * 1024, BINARY_SI, "1Mi"),
        (1025, BINARY_SI, "1025"),
        (5, BINARY_SI, "5"),
        (Fraction(1, 2), BINARY_SI, "500m"),
        (Fraction(1024, 1000), BINARY_SI, "1024m"),
        (2**70, BINARY_SI, "1024Ei"),  # keeps the largest suffix rather than losing it
        (1000, DECIMAL_SI, "1k"),
        (1234000, DECIMAL_SI, "1234k"),
        (10**6, DECIMAL_EXPONENT, "1e6"),
        (Fraction(1, 3), DECIMAL_SI, "333333334n"),  # rounded up to 1n when printed
        (Fraction(-1, 3), DECIMAL_SI, "-333333334n"),
        (Fraction(1, 10**12), DECIMAL_SI, "1n"),
        (0, BINARY_SI, "0"),
    ],
)
def test_canonical_from_number(value: int | Fraction, fmt: str, expected: str) -> None:
    assert str(Quantity.from_number(value, fmt)) == expected  # type: ignore[arg-type]


def test_from_number_is_exact_until_printed() -> None:
    third = Quantity.from_number(Fraction(1, 3))
    assert third.as_fraction() == Fraction(1, 3)
    assert third.original is None
    assert (third * 3) == Quantity.from_number(1)


def test_from_number_rejects_bad_input() -> None:
    with pytest.raises(TypeError):
        Quantity.from_number(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Quantity.from_number(True)
    with pytest.raises(ValueError):
        Quantity.from_number(1, "Binary")  # type: ignore[arg-type]


def test_repr() -> None:
    assert repr(Q("1024Mi")) == "Quantity('1Gi')"
    assert repr(Quantity.from_number(Fraction(1, 3))) == "Quantity.from_number(Fraction(1, 3), 'DecimalSI')"


# --------------------------------------------------------------------------- arithmetic


def test_add_sub_exact() -> None:
    assert Q("1Gi") + Q("512Mi") == Q("1536Mi")
    assert str(Q("1Gi") + Q("512Mi")) == "1536Mi"
    assert Q("100m") + Q("200m") == Q("300m")
    thirds = Q("333m") + Q("333m") + Q("333m")
    assert thirds < Q("1")
    assert Q("1") - thirds == Q("1m")
    assert str(Q("1") - Q("1500m")) == "-500m"
    assert sum([Q("1Gi"), Q("1Gi"), Q("2Gi")]) == Q("4Gi")


def test_arithmetic_format_rules() -> None:
    # result keeps the left operand's format ...
    r = Q("1Gi") + Q("1G")
    assert r.format == BINARY_SI
    assert r.original is None
    assert (Q("1G") + Q("1Gi")).format == DECIMAL_SI
    assert (Q("1e3") - Q("1Ki")).format == DECIMAL_EXPONENT
    # ... unless the left operand is zero: then the right one's (upstream Add/Sub)
    assert str(Q("0") + Q("1Gi")) == "1Gi"
    assert str(Q("0") - Q("1Gi")) == "-1Gi"
    assert str(Q("1Gi") + Q("0")) == "1Gi"
    assert str(Q("100m") - Q("0")) == "100m"


def test_neg_mul_abs() -> None:
    assert str(-Q("1Gi")) == "-1Gi"
    assert str(-Q("9.01")) == "-9010m"
    assert (-Q("1Gi")).format == BINARY_SI
    assert str(Q("1Gi") * 3) == "3Gi"
    assert str(3 * Q("100m")) == "300m"
    assert Q("1Gi") * 0 == Q("0")
    assert abs(Q("-2k")) == Q("2k")
    assert +Q("2k") == Q("2k")
    with pytest.raises(TypeError):
        Q("1") * Fraction(1, 2)  # type: ignore[operator]
    with pytest.raises(TypeError):
        Q("1") * 1.5  # type: ignore[operator]
    with pytest.raises(TypeError):
        Q("1") + 1  # type: ignore[operator]


def test_ordering_and_equality_across_formats() -> None:
    assert Q("1Ki") == Q("1024") == Q("1.024k") == Q("1024e0")
    assert Q("1k") != Q("1Ki")
    assert Q("1k") < Q("1Ki")
    assert Q("10000T") > Q("100Gi")
    assert Q("100m") > Q("50m")
    assert Q("0.1n") == Q("1n")
    assert Q("1Gi") <= Q("1024Mi")
    assert Q("1Gi") >= Q("1024Mi")
    assert sorted([Q("1Gi"), Q("1k"), Q("1"), Q("-1")]) == [Q("-1"), Q("1"), Q("1k"), Q("1Gi")]
    assert Q("1Ki").cmp(Q("1k")) == 1
    assert Q("1k").cmp(Q("1Ki")) == -1
    assert Q("1Ki").cmp(Q("1024")) == 0
    assert len({Q("1Ki"), Q("1024"), Q("1024e0"), Q("1k")}) == 2
    assert Q("1") != 1  # only quantities compare equal to quantities
    with pytest.raises(TypeError):
        _ = Q("1") < 2  # type: ignore[operator]
    with pytest.raises(TypeError):
        Q("1").cmp(1)  # type: ignore[arg-type]


def test_sign_and_predicates() -> None:
    assert Q("-1m").sign() == -1
    assert Q("0Gi").sign() == 0
    assert Q("1n").sign() == 1
    assert Q("0").is_zero()
    assert Q("1Ki").is_integer()
    assert not Q("1.5").is_integer()


@pytest.mark.parametrize(
    "text,value,milli",
    [
        ("1", 1, 1000),
        ("1.5", 2, 1500),
        ("1001m", 2, 1001),
        ("1n", 1, 1),
        ("0.5m", 1, 1),  # 500u -> milli 0.5 rounds up to 1
        ("1Ki", 1024, 1024000),
        ("-1.5", -2, -1500),  # away from zero, as upstream
        ("-1n", -1, -1),
        ("0", 0, 0),
        ("9.01", 10, 9010),
        ("1e3", 1000, 1000000),
        ("1.1Ki", 1127, 1126400),
    ],
)
def test_value_and_milli_value_round_up(text: str, value: int, milli: int) -> None:
    q = Q(text)
    assert q.value() == value
    assert q.milli_value() == milli
    assert isinstance(q.value(), int)


def test_scaled_value() -> None:
    assert Q("1").scaled_value(-3) == 1000
    assert Q("1500").scaled_value(3) == 2
    assert Q("1G").scaled_value(9) == 1


def test_as_approximate_float() -> None:
    assert Q("1.5").as_approximate_float() == 1.5
    assert Q("100m").as_approximate_float() == pytest.approx(0.1)
    assert Quantity.from_number(10**400).as_approximate_float() == math.inf
    assert Quantity.from_number(-(10**400)).as_approximate_float() == -math.inf


def test_immutable_and_copyable() -> None:
    q = Q("10Gi")
    with pytest.raises(AttributeError):
        q._value = Fraction(1)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        q.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del q._format
    assert copy.copy(q) is q
    assert copy.deepcopy(q) is q
    restored = pickle.loads(pickle.dumps(q))
    assert restored == q
    assert restored.format == BINARY_SI
    assert restored.original == "10Gi"


# --------------------------------------------------------------------------- properties

_SUFFIXES = list(BINARY) + list(DECIMAL) + [f"e{e}" for e in range(-9, 25)] + ["E3", "e+6", "E-6"]


def _multiplier(suffix: str) -> Fraction:
    if suffix in BINARY:
        return Fraction(BINARY[suffix])
    if suffix in DECIMAL:
        return DECIMAL[suffix]
    return Fraction(10) ** int(suffix[1:])


@st.composite
def quantities(draw: st.DrawFn) -> tuple[Quantity, Fraction]:
    """A quantity built from a random integer mantissa and suffix, with its exact value."""
    suffix = draw(st.sampled_from(_SUFFIXES))
    factor = _multiplier(suffix)
    bound = 10**15
    if suffix in BINARY:  # keep below the upstream BinarySI cap of 2^63-1
        bound = min(bound, MAX_INT64 // int(factor))
    mantissa = draw(st.integers(-bound, bound))
    sign = draw(st.sampled_from(["", "+"])) if mantissa >= 0 else ""
    return Q(f"{sign}{mantissa}{suffix}"), mantissa * factor


@st.composite
def decimal_strings(draw: st.DrawFn) -> tuple[str, Fraction]:
    """A decimal-point number (e.g. "-12.0345") with a random suffix, and its exact value."""
    whole = draw(st.integers(0, 10**6))
    frac = draw(st.text(alphabet="0123456789", min_size=1, max_size=6))
    suffix = draw(st.sampled_from([s for s in _SUFFIXES if s not in ("Pi", "Ei")]))  # stay below the cap
    negative = draw(st.booleans())
    text = f"{'-' if negative else ''}{whole}.{frac}{suffix}"
    value = (whole + Fraction(int(frac), 10 ** len(frac))) * _multiplier(suffix)
    return text, -value if negative else value


@given(quantities())
def test_property_parse_value_is_exact(item: tuple[Quantity, Fraction]) -> None:
    q, value = item
    assert q.as_fraction() == value


@given(quantities())
def test_property_canonical_round_trip(item: tuple[Quantity, Fraction]) -> None:
    q, _ = item
    text = str(q)
    again = Q(text)
    assert again == q
    assert str(again) == text  # canonical form is a fixed point
    assert "." not in text  # no fractional digits are ever emitted


@given(decimal_strings())
def test_property_decimal_numbers_round_trip(item: tuple[str, Fraction]) -> None:
    text, value = item
    q = Q(text)
    nanos = value * 10**9
    if nanos.denominator == 1:
        assert q.as_fraction() == value
    else:  # finer than 1n: rounded away from zero to the next nano
        assert abs(q.as_fraction()) > abs(value)
        assert abs(q.as_fraction() - value) < Fraction(1, 10**9)
    assert Q(str(q)) == q


@given(quantities(), quantities())
def test_property_ordering_matches_fractions(
    a: tuple[Quantity, Fraction], b: tuple[Quantity, Fraction]
) -> None:
    (qa, fa), (qb, fb) = a, b
    assert (qa < qb) == (fa < fb)
    assert (qa <= qb) == (fa <= fb)
    assert (qa > qb) == (fa > fb)
    assert (qa == qb) == (fa == fb)
    assert qa.cmp(qb) == (fa > fb) - (fa < fb)
    assert (qa + qb).as_fraction() == fa + fb
    assert (qa - qb).as_fraction() == fa - fb
    if qa == qb:
        assert hash(qa) == hash(qb)


@given(quantities())
def test_property_value_is_ceiling_away_from_zero(item: tuple[Quantity, Fraction]) -> None:
    q, value = item
    v = q.value()
    assert abs(v) >= abs(value)
    assert abs(v) - abs(value) < 1
    assert v == 0 or (v > 0) == (value > 0)
    m = q.milli_value()
    assert abs(m) >= abs(value * 1000) and abs(m) - abs(value * 1000) < 1


# --------------------------------------------------------------------------- pydantic


class Capacity(BaseModel):
    value: Quantity
    limit: Quantity | None = None
    items: list[Quantity] = []


def test_pydantic_accepts_str_int_quantity() -> None:
    m = Capacity.model_validate({"value": "1024Mi", "limit": 1000, "items": [Q("1Gi"), "500m"]})
    assert m.value == Q("1Gi")
    assert m.limit == Q("1k")
    assert m.items == [Q("1Gi"), Q("0.5")]


def test_pydantic_serializes_original_else_canonical() -> None:
    m = Capacity(value=Q("1024Mi"), limit=Q("0") + Q("1Gi") * 2, items=[Q(1000)])
    expected = {"value": "1024Mi", "limit": "2Gi", "items": ["1k"]}
    assert m.model_dump() == expected
    assert m.model_dump(mode="json") == expected
    assert m.model_dump_json() == '{"value":"1024Mi","limit":"2Gi","items":["1k"]}'


def test_pydantic_round_trip() -> None:
    m = Capacity.model_validate({"value": "1.5Gi", "limit": "100m", "items": ["1e3", "7"]})
    again = Capacity.model_validate_json(m.model_dump_json())
    assert again == m
    assert again.value.original == "1.5Gi"
    assert str(again.value) == "1536Mi"


def test_pydantic_trims_whitespace_like_unmarshal_json() -> None:
    assert Capacity.model_validate({"value": " 1Gi "}).value == Q("1Gi")


@pytest.mark.parametrize("bad", ["10Gx", "", 1.5, None, True, [1]])
def test_pydantic_validation_error(bad: object) -> None:
    with pytest.raises(ValidationError) as info:
        Capacity.model_validate({"value": bad})
    if bad == "10Gx":
        assert 'quantity "10Gx" is not valid: unknown suffix "Gx"' in str(info.value)
    assert info.value.errors()[0]["loc"] == ("value",)


def test_pydantic_json_schema() -> None:
    schema = Capacity.model_json_schema()
    value_schema = schema["properties"]["value"]
    assert {"type": "integer"} in value_schema["anyOf"]
    serialized = Capacity.model_json_schema(mode="serialization")["properties"]["value"]
    assert serialized["type"] == "string"
