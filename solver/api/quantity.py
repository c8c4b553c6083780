"""Exact Kubernetes ``resource.Quantity`` (k8s.io/apimachinery/pkg/api/resource).

Why exact: DRA capacity checks sum requested quantities and compare the sum against a
device's capacity ("does 3 x 333m fit into 1?", "do 1Gi + 512Mi fit into 1536Mi?").
With floats these comparisons drift (0.1 + 0.2 != 0.3) and an allocator would admit or
refuse a claim differently from Kubernetes. Here every value is a ``fractions.Fraction``
and every operation (parse, add, subtract, compare, multiply, round) is exact integer
arithmetic; the single float API is :meth:`Quantity.as_approximate_float`, for display.

Behaviour follows upstream ``quantity.go``:

* Parsing: ``<sign>? <digits>[.<digits>] <suffix>``, suffix one of the binary ``Ki Mi
  Gi Ti Pi Ei``, the decimal ``n u m "" k M G T P E`` or an exponent ``e``/``E`` plus a
  signed integer. The suffix decides the format (BinarySI, DecimalSI, DecimalExponent).
  A value finer than 1n is rounded away from zero to the next nano ("0.1n" is 1n), a
  BinarySI magnitude above 2^63-1 is capped at 2^63-1, and a BinarySI value strictly
  between -1 and 1 (non-zero) switches to DecimalSI, as upstream ``ParseQuantity`` does.
* Printing (``CanonicalizeBytes``): no fractional digits, the largest suffix that keeps
  the mantissa an integer. BinarySI prints in powers of 1024 when the value is an
  integer of magnitude >= 1024, and otherwise falls back to the decimal form.
  DecimalSI exponents beyond ``E`` (10^18) print as ``e<exp>``.
* ``value()``/``milli_value()`` round a fraction up, away from zero (upstream ``Value``).

Deliberate differences from upstream (documented, all on inputs no real object uses):

* A number needs at least one digit: upstream's scanner takes "Gi", "." or "-" as zero,
  contrary to its own documented grammar; they are errors here.
* Exponents above ``e1000`` are refused instead of building gigantic integers (upstream
  silently truncates exponents to int32).
* A BinarySI multiple of 1024^7 or more keeps ``Ei`` with a larger mantissa instead of
  losing its suffix.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn

from pydantic_core import core_schema

from ..errors import DRASolverError

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "QUANTITY_PATTERN",
    "Quantity",
    "QuantityError",
    "QuantityFormat",
    "quantity_format",
]

QuantityFormat = Literal["BinarySI", "DecimalSI", "DecimalExponent"]

BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
_FORMATS: Final = frozenset({BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT})

# suffix -> power of 10 (DecimalSI) / power of 2 (BinarySI)
_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[dict[str, int]] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT: Final[dict[int, str]] = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER: Final[tuple[str, ...]] = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

_NANO_PER_UNIT: Final = 10**9
_MAX_INT64: Final = 2**63 - 1
_MIN_INT64: Final = -(2**63)
_MAX_EXPONENT: Final = 1000

#: The exact syntax of a valid quantity string (also published in the JSON schema).
QUANTITY_PATTERN: Final = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"

# Splits any string into sign, integer digits, fraction digits and "the rest" (the suffix).
_SPLIT: Final = re.compile(r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?P<suffix>.*)", re.DOTALL)
_EXPONENT_SUFFIX: Final = re.compile(r"[eE](?P<exp>[+-]?[0-9]+)")

_ALLOWED: Final = (
    "a quantity is an optional sign, digits with an optional decimal point, and one suffix: "
    "binary Ki, Mi, Gi, Ti, Pi, Ei; decimal n, u, m, k, M, G, T, P, E (or none); "
    "or an exponent e<int>/E<int> such as 1e3 or 1.5E-2"
)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


_FORMAT_NAMED: Final[dict[str, QuantityFormat]] = {
    "BinarySI": "BinarySI",
    "DecimalSI": "DecimalSI",
    "DecimalExponent": "DecimalExponent",
}


def quantity_format(name: str) -> QuantityFormat | None:
    """The format named `name` (a plain string, as the flat Problem keeps it), else None."""
    return _FORMAT_NAMED.get(name)


class QuantityError(ValueError, DRASolverError):
    """A string that is not a valid Kubernetes quantity.

    ``text`` is the rejected input and ``reason`` says what is wrong with it; the message
    also lists the allowed suffixes.
    """

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"quantity {_quote(text)} is not valid: {reason}; {_ALLOWED}")


def _ceil_away(x: Fraction) -> int:
    """Round to an integer away from zero (upstream inf.RoundUp / Value())."""
    q, r = divmod(abs(x.numerator), x.denominator)
    if r:
        q += 1
    return q if x.numerator >= 0 else -q


def _round_nano(v: Fraction) -> Fraction:
    """``v`` rounded away from zero to a multiple of 1n (unchanged if it already is one)."""
    if _NANO_PER_UNIT % v.denominator == 0:
        return v
    return Fraction(_ceil_away(v * _NANO_PER_UNIT), _NANO_PER_UNIT)


def _strip_factor(n: int, base: int, limit: int | None = None) -> tuple[int, int]:
    """Divide ``base`` out of the non-zero ``n`` as often as possible (at most ``limit`` times)."""
    times = 0
    while n % base == 0 and (limit is None or times < limit):
        n //= base
        times += 1
    return n, times


def _fail(text: str, reason: str) -> NoReturn:
    raise QuantityError(text, reason)


def _scale(s: str, suffix: str) -> tuple[str, int, int]:
    """What a quantity's suffix says (upstream ``ParseQuantity``'s suffix table): its format
    and the power of 10 and of 2 it multiplies by; a bad suffix or exponent fails naming it."""
    if suffix in _DECIMAL_SUFFIXES:
        return DECIMAL_SI, _DECIMAL_SUFFIXES[suffix], 0
    if suffix in _BINARY_SUFFIXES:
        return BINARY_SI, 0, _BINARY_SUFFIXES[suffix]
    if (e := _EXPONENT_SUFFIX.fullmatch(suffix)) is not None:
        exp_digits = e["exp"].lstrip("+-").lstrip("0") or "0"
        exp10 = -_to_int(s, exp_digits) if e["exp"].startswith("-") else _to_int(s, exp_digits)
        if not _MIN_INT64 <= exp10 <= _MAX_INT64:  # upstream: strconv.ParseInt(..., 64) fails
            _fail(s, f"exponent {e['exp']} is out of range")
        if exp10 > _MAX_EXPONENT:
            _fail(s, f"exponent {exp10} is too large (at most {_MAX_EXPONENT})")
        return DECIMAL_EXPONENT, exp10, 0
    if suffix[:1] == ".":
        _fail(s, f"unexpected {_quote(suffix)} after the number (only one decimal point is allowed)")
    _fail(s, f"unknown suffix {_quote(suffix)}")


def _magnitude(mantissa: int, frac_len: int, fmt: str, exp10: int, exp2: int) -> tuple[Fraction, str]:
    """The value of ``mantissa`` (the digits, ``frac_len`` of them after the point) times
    10**exp10 (the decimal point already counted in it) and 2**exp2, rounded as upstream
    rounds at parse (away from zero to 1n; BinarySI capped at the int64 maximum), and the
    format it keeps: a BinarySI value below 1 becomes DecimalSI."""
    if mantissa == 0:
        return Fraction(0), fmt
    if fmt == BINARY_SI:
        value = _round_nano(Fraction(mantissa << exp2, 10**frac_len))
        if value > _MAX_INT64:  # upstream caps BinarySI at parse
            value = Fraction(_MAX_INT64)
        if value < 1:  # 0 < value < 1: "this avoids rounding and hopefully confusion, too"
            return value, DECIMAL_SI
        return value, fmt
    if exp10 >= 0:
        return Fraction(mantissa * 10**exp10), fmt
    if exp10 >= -9:
        return Fraction(mantissa, 10**-exp10), fmt
    drop = -9 - exp10  # decimal places beyond nano
    # mantissa < 10**len(digits) <= 10**drop means the value is below 1n: rounds to 1n.
    nanos = 1 if drop > len(str(mantissa)) else _ceil_away(Fraction(mantissa, 10**drop))
    return Fraction(nanos, _NANO_PER_UNIT), fmt


def _to_int(text: str, digits: str) -> int:
    digits = digits.lstrip("0")
    if not digits:
        return 0
    try:
        return int(digits)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        _fail(text, f"the number has too many digits ({len(digits)})")


def _restore(value: Fraction, fmt: str, original: str | None) -> Quantity:
    return Quantity._make(value, fmt, original)


class Quantity:
    """An immutable, exact Kubernetes quantity: a ``Fraction`` value plus its format.

    Build one with :meth:`parse` (``"10Gi"``, ``"500m"``, ``"1e3"``, or an ``int``) or
    :meth:`from_number`. ``str(q)`` is the canonical Kubernetes form; ``q.original`` is
    the string it was parsed from (``None`` when built from a number or by arithmetic).
    Comparison, equality and hashing use the value only, across formats.
    """

    __slots__ = ("_value", "_format", "_original")

    _value: Fraction
    _format: QuantityFormat
    _original: str | None

    def __init__(self, value: int | Fraction, fmt: QuantityFormat = "DecimalSI") -> None:
        if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
            raise TypeError(f"a Quantity value must be an int or a Fraction, not {type(value).__name__}")
        if fmt not in _FORMATS:
            raise ValueError(f"unknown quantity format {fmt!r}; expected one of {sorted(_FORMATS)}")
        object.__setattr__(self, "_value", Fraction(value))
        object.__setattr__(self, "_format", fmt)
        object.__setattr__(self, "_original", None)

    @classmethod
    def _make(cls, value: Fraction, fmt: str, original: str | None) -> Quantity:
        q = cls.__new__(cls)
        object.__setattr__(q, "_value", value)
        object.__setattr__(q, "_format", fmt)
        object.__setattr__(q, "_original", original)
        return q

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_number(cls, n: int | Fraction, fmt: QuantityFormat = "DecimalSI") -> Quantity:
        """An exact quantity of value ``n`` (no rounding until printed) in format ``fmt``."""
        return cls(n, fmt)

    @classmethod
    def parse(cls, s: str | int) -> Quantity:
        """Parse Kubernetes quantity syntax (upstream ``ParseQuantity``); ints are taken as is.

        Raises :class:`QuantityError` for a malformed string and ``TypeError`` for a value
        that is neither ``str`` nor ``int`` (floats are refused: they are not exact).
        """
        if isinstance(s, bool) or not isinstance(s, (str, int)):
            raise TypeError(f"a quantity must be a str or an int, not {type(s).__name__}")
        if isinstance(s, int):
            return cls(s, DECIMAL_SI)
        if s == "":
            _fail(s, "it is empty")
        if s != s.strip():
            _fail(s, "leading or trailing whitespace is not allowed")
        m = _SPLIT.fullmatch(s)
        assert m is not None  # the pattern matches every string
        int_digits, frac_digits, suffix = m["int"], m["frac"] or "", m["suffix"]
        if not int_digits and not frac_digits:
            number_part = s[: m.start("suffix")]
            if number_part:
                _fail(s, f"the number {_quote(number_part)} has no digits")
            _fail(
                s, "it must start with a number (an optional sign and digits with an optional decimal point)"
            )

        fmt, exp10, exp2 = _scale(s, suffix)
        mantissa = _to_int(s, int_digits + frac_digits)
        value, fmt = _magnitude(mantissa, len(frac_digits), fmt, exp10 - len(frac_digits), exp2)
        negative = m["sign"] == "-"
        if negative:
            value = -value
        return cls._make(value, fmt, s)

    # ------------------------------------------------------------------ attributes

    @property
    def format(self) -> QuantityFormat:
        """``"BinarySI"``, ``"DecimalSI"`` or ``"DecimalExponent"``."""
        return self._format

    @property
    def original(self) -> str | None:
        """The string this quantity was parsed from, or ``None``."""
        return self._original

    def as_fraction(self) -> Fraction:
        """The exact value."""
        return self._value

    def is_integer(self) -> bool:
        return self._value.denominator == 1

    def is_zero(self) -> bool:
        return self._value == 0

    def sign(self) -> int:
        """-1, 0 or 1 (upstream ``Sign``)."""
        return (self._value > 0) - (self._value < 0)

    def value(self) -> int:
        """The value as an integer, a fraction rounded up away from zero (upstream ``Value``)."""
        return _ceil_away(self._value)

    def milli_value(self) -> int:
        """The value in thousandths, rounded up away from zero (upstream ``MilliValue``)."""
        return _ceil_away(self._value * 1000)

    def scaled_value(self, scale: int) -> int:
        """``value / 10**scale`` rounded up away from zero (upstream ``ScaledValue``)."""
        return _ceil_away(self._value / Fraction(10) ** scale)

    def as_approximate_float(self) -> float:
        """The nearest float; the one inexact API, for display and plotting only."""
        try:
            return float(self._value)
        except OverflowError:
            return math.inf if self._value > 0 else -math.inf

    # ------------------------------------------------------------------ printing

    def canonical(self) -> str:
        """The canonical Kubernetes string (upstream ``String()`` / ``CanonicalizeBytes``)."""
        v = self._value
        if v == 0:
            return "0"
        v = _round_nano(v)
        sign = "-" if v < 0 else ""
        fmt = self._format
        if fmt == BINARY_SI:
            if -1024 < v < 1024 or v.denominator != 1:
                fmt = DECIMAL_SI  # upstream: "don't lose precision -- show as DecimalSI"
            else:
                mantissa, power = _strip_factor(abs(v.numerator), 1024, limit=len(_BINARY_BY_POWER) - 1)
                return f"{sign}{mantissa}{_BINARY_BY_POWER[power]}"
        # Decimal: strip every factor of 10 into the exponent, then lower the exponent to a
        # multiple of 3 (upstream AsCanonicalBytes).
        if v.denominator == 1:
            mantissa, exponent = _strip_factor(abs(v.numerator), 10)
        else:
            nanos = abs(v.numerator) * (_NANO_PER_UNIT // v.denominator)
            mantissa, exponent = _strip_factor(nanos, 10)
            exponent -= 9
        while exponent % 3:
            mantissa *= 10
            exponent -= 1
        if fmt == DECIMAL_SI and exponent in _DECIMAL_BY_EXPONENT:
            suffix = _DECIMAL_BY_EXPONENT[exponent]
        else:  # DecimalExponent, or DecimalSI beyond "E"
            suffix = f"e{exponent}" if exponent else ""
        return f"{sign}{mantissa}{suffix}"

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        text = self.canonical()
        try:
            again = Quantity.parse(text)
        except QuantityError:  # pragma: no cover - canonical output always parses
            again = None
        if again is not None and again._value == self._value and again._format == self._format:
            return f"Quantity({text!r})"
        return f"Quantity.from_number({self._value!r}, {self._format!r})"

    # ------------------------------------------------------------------ comparison

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 as ``self`` is less than, equal to or greater than ``other`` (upstream ``Cmp``)."""
        if not isinstance(other, Quantity):
            raise TypeError(f"cannot compare a Quantity with {type(other).__name__}")
        return (self._value > other._value) - (self._value < other._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value == other._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value < other._value

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value <= other._value

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value > other._value

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value >= other._value

    # ------------------------------------------------------------------ arithmetic

    def __add__(self, other: Quantity) -> Quantity:
        """Exact sum in the left operand's format (the right one's if the left is zero, as upstream)."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._format if self._value == 0 else self._format
        return Quantity._make(self._value + other._value, fmt, None)

    def __radd__(self, other: int) -> Quantity:
        # Lets sum() start from the int 0.
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def __sub__(self, other: Quantity) -> Quantity:
        """Exact difference in the left operand's format (the right one's if the left is zero)."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._format if self._value == 0 else self._format
        return Quantity._make(self._value - other._value, fmt, None)

    def __neg__(self) -> Quantity:
        return Quantity._make(-self._value, self._format, None)

    def __pos__(self) -> Quantity:
        return self

    def __abs__(self) -> Quantity:
        return self if self._value >= 0 else -self

    def __mul__(self, other: int) -> Quantity:
        """Multiplication by an integer (upstream ``Mul``), same format."""
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        return Quantity._make(self._value * other, self._format, None)

    def __rmul__(self, other: int) -> Quantity:
        return self.__mul__(other)

    # ------------------------------------------------------------------ immutability

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Quantity is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Quantity is immutable; cannot delete {name!r}")

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Quantity:
        return self

    def __reduce__(self) -> tuple[Any, tuple[Fraction, str, str | None]]:
        return (_restore, (self._value, self._format, self._original))

    # ------------------------------------------------------------------ pydantic

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source_type: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Accept ``str``, ``int`` or ``Quantity``; serialize to the original (else canonical) string."""
        return core_schema.no_info_plain_validator_function(
            _pydantic_validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _pydantic_serialize, return_schema=core_schema.str_schema(), when_used="always"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        string = {"type": "string", "pattern": QUANTITY_PATTERN}
        if getattr(handler, "mode", "validation") == "serialization":
            return {**string, "description": "Kubernetes quantity"}
        return {"anyOf": [string, {"type": "integer"}], "description": "Kubernetes quantity"}


_PARSED: dict[str, Quantity] = {}
"""Quantities read from text, by the text: an input repeats a few (`80Gi`, `1`) tens of
thousands of times, and a third of validating a 10,000-pod cluster's objects went to parsing
them again. A Quantity is immutable, so one may be shared. At most `_PARSED_MAX` are kept (an
input of millions of distinct quantities must not grow this without bound)."""
_PARSED_MAX = 4096


def _pydantic_validate(value: object) -> Quantity:
    if isinstance(value, Quantity):
        return value
    if isinstance(value, str):
        known = _PARSED.get(value)
        if known is not None:
            return known
        # Kubernetes' UnmarshalJSON trims surrounding whitespace before ParseQuantity.
        parsed = Quantity.parse(value.strip())
        if len(_PARSED) < _PARSED_MAX:
            _PARSED[value] = parsed
        return parsed
    if isinstance(value, int) and not isinstance(value, bool):
        return Quantity.parse(value)
    raise ValueError(f'a quantity must be a string such as "10Gi" or an integer, not {type(value).__name__}')


def _pydantic_serialize(value: Quantity) -> str:
    return value.original if value.original is not None else value.canonical()
