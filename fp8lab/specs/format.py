"""A floating-point format described by its independent fields (OCP OFP8 §5, OCP MX v1.0 §5).

Every other quantity (max, smallest normal, eps, NaN codes, ...) is a derived
property with the name ``numpy.finfo`` / ``ml_dtypes.finfo`` gives it. No code in
fp8lab branches on a format's name: it reads these fields.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

__all__ = ["FormatSpec", "NanEncoding"]


class NanEncoding(enum.Enum):
    """Where a format keeps its NaN codes (OFP8 §5.1, ml_dtypes naming)."""

    IEEE = "ieee"  # exponent all ones, mantissa nonzero (e5m2)
    ALL_ONES = "all_ones"  # only S.1111.111 (the ``fn`` suffix)
    NEGATIVE_ZERO = "negative_zero"  # only the code 1.0000.000 (the ``fnuz`` suffix)
    NONE = "none"  # no NaN code at all (MX FP6/FP4, OCP MX v1.0, FP6/FP4 elements)


@dataclass(frozen=True)
class FormatSpec:
    """An 8-bit (or narrower) binary floating-point format.

    The codes of magnitude are the linear indices ``exp_field << M | mant``
    below :attr:`magnitude_mask`; a signed format adds :attr:`sign_bit` above
    them. With ``has_subnormals`` the exponent field 0 holds zero and the
    subnormals (OFP8 §5.2); without it that field is one more normal binade
    and the format has no zero (E8M0, OCP MX v1.0, E8M0 scale).

    Args:
        name: catalogue key, for display only.
        exponent_bits: width of the exponent field.
        mantissa_bits: width of the trailing significand field.
        bias: exponent bias.
        nan_encoding: which codes are NaN.
        has_inf: whether exponent-all-ones with a zero mantissa means infinity.
        has_negative_zero: whether the code with only the sign bit set is -0.
        signed: whether the format has a sign bit.
        has_subnormals: whether exponent field 0 is the zero/subnormal binade.

    Raises:
        ValueError: for an inconsistent combination of fields.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    nan_encoding: NanEncoding
    has_inf: bool
    has_negative_zero: bool
    signed: bool = True
    has_subnormals: bool = True

    def __post_init__(self) -> None:
        if self.exponent_bits < 1 or self.mantissa_bits < 0 or self.bits > 8:
            raise ValueError(f"{self.name}: need sign+E+M <= 8 with E >= 1, M >= 0")
        if self.has_inf and self.nan_encoding is not NanEncoding.IEEE:
            raise ValueError(f"{self.name}: infinities need the IEEE NaN layout")
        if self.nan_encoding is NanEncoding.IEEE and self.mantissa_bits < 1:
            raise ValueError(f"{self.name}: the IEEE NaN layout needs a mantissa bit")
        if self.nan_encoding is NanEncoding.NEGATIVE_ZERO and self.has_negative_zero:
            raise ValueError(f"{self.name}: the -0 code is the NaN code")
        if self.has_negative_zero and not (self.signed and self.has_subnormals):
            raise ValueError(f"{self.name}: -0 needs a sign bit and a zero")
        if self.nan_encoding is NanEncoding.NEGATIVE_ZERO and not self.signed:
            raise ValueError(f"{self.name}: the -0 NaN code needs a sign bit")

    # ---- layout -------------------------------------------------------------
    @property
    def bits(self) -> int:
        """Total width: sign (if any) + exponent + mantissa."""
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def magnitude_mask(self) -> int:
        """The exponent and mantissa fields of a code."""
        return (1 << (self.exponent_bits + self.mantissa_bits)) - 1

    @property
    def sign_bit(self) -> int:
        """The sign mask of a code; 0 for an unsigned format."""
        return self.magnitude_mask + 1 if self.signed else 0

    @property
    def code_count(self) -> int:
        """Number of codes, ``2**bits``."""
        return 1 << self.bits

    @property
    def has_zero(self) -> bool:
        """Whether some code is zero (the subnormal binade holds it)."""
        return self.has_subnormals

    @property
    def max_code(self) -> int:
        """The positive code of the largest finite magnitude."""
        if self.nan_encoding is NanEncoding.IEEE:
            return self.magnitude_mask - (1 << self.mantissa_bits)  # exponent all ones is special
        if self.nan_encoding is NanEncoding.ALL_ONES:
            return self.magnitude_mask - 1
        return self.magnitude_mask

    @property
    def inf_code(self) -> int | None:
        """The positive infinity code, or None for a finite-only format."""
        if not self.has_inf:
            return None
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def canonical_nan_code(self) -> int | None:
        """The positive quiet NaN a conversion emits (ml_dtypes, CUDA host path); None if no NaN."""
        if self.nan_encoding is NanEncoding.NONE:
            return None
        if self.nan_encoding is NanEncoding.NEGATIVE_ZERO:
            return self.sign_bit
        if self.nan_encoding is NanEncoding.ALL_ONES:
            return self.magnitude_mask
        quiet = 1 << (self.mantissa_bits - 1)
        return (((1 << self.exponent_bits) - 1) << self.mantissa_bits) | quiet

    @cached_property
    def nan_codes(self) -> frozenset[int]:
        """Every code that decodes to NaN."""
        return frozenset(c for c in range(self.code_count) if self.is_nan_code(c))

    def is_nan_code(self, code: int) -> bool:
        """Whether ``code`` is a NaN under this layout."""
        if self.nan_encoding is NanEncoding.NONE or code >= self.code_count:
            return False
        if self.nan_encoding is NanEncoding.NEGATIVE_ZERO:
            return code == self.sign_bit
        magnitude = code & self.magnitude_mask
        if self.nan_encoding is NanEncoding.ALL_ONES:
            return magnitude == self.magnitude_mask
        exp_all_ones = magnitude >> self.mantissa_bits == (1 << self.exponent_bits) - 1
        return exp_all_ones and magnitude & ((1 << self.mantissa_bits) - 1) != 0

    def exact_value(self, code: int) -> Fraction:
        """The exact value of a finite code from its field layout (OFP8 §5.2).

        Raises:
            ValueError: if ``code`` is NaN or infinity.
        """
        magnitude = code & self.magnitude_mask
        if (
            self.is_nan_code(code)
            or code >= self.code_count
            or (self.has_inf and magnitude == self.inf_code)
        ):
            raise ValueError(f"{self.name}: code {code:#04x} is not finite")
        return self.layout_value(code)

    def layout_value(self, code: int) -> Fraction:
        """Value the field layout gives ``code``, ignoring special-code rules."""
        sign = -1 if code & self.sign_bit else 1
        return sign * self.magnitude_value(code & self.magnitude_mask)

    def magnitude_value(self, index: int) -> Fraction:
        """Magnitude of the linear index ``exp_field << M | mant`` (OFP8 §5.2).

        The index may run past :attr:`max_code`: ``max_code + 1`` is the
        magnitude the format would have next if its exponent range went on,
        the overflow candidate of round-to-nearest. Without subnormals the
        field 0 is a normal binade: ``2**-bias`` for index 0 (OCP MX v1.0, E8M0 scale).
        """
        exp_field = index >> self.mantissa_bits
        mant = index & ((1 << self.mantissa_bits) - 1)
        if exp_field == 0 and self.has_subnormals:
            return Fraction(mant, 1 << self.mantissa_bits) * Fraction(2) ** (1 - self.bias)
        significand = 1 + Fraction(mant, 1 << self.mantissa_bits)
        return significand * Fraction(2) ** (exp_field - self.bias)

    # ---- finfo-style derived properties -------------------------------------
    @property
    def nexp(self) -> int:
        """Exponent width (finfo ``nexp``, ``iexp``)."""
        return self.exponent_bits

    iexp = nexp

    @property
    def nmant(self) -> int:
        """Mantissa width (finfo ``nmant``)."""
        return self.mantissa_bits

    @property
    def minexp(self) -> int:
        """Exponent of the smallest normal (finfo ``minexp``)."""
        return (1 if self.has_subnormals else 0) - self.bias

    @property
    def maxexp(self) -> int:
        """One past the exponent of the largest finite value (finfo ``maxexp``)."""
        return (self.max_code >> self.mantissa_bits) - self.bias + 1

    @property
    def machep(self) -> int:
        """Exponent of eps (finfo ``machep``)."""
        return -self.mantissa_bits

    @property
    def negep(self) -> int:
        """Exponent of epsneg (finfo ``negep``)."""
        return self.epsneg.numerator.bit_length() - self.epsneg.denominator.bit_length()

    @property
    def eps(self) -> Fraction:
        """Gap from 1 to the next value up (finfo ``eps``)."""
        return Fraction(1, 1 << self.mantissa_bits)

    @cached_property
    def epsneg(self) -> Fraction:
        """Gap from 1 to the next value down (finfo ``epsneg``).

        Found among the magnitudes, not assumed to be ``2**-(M+1)``: where 1 is
        the smallest normal (e2m1fn, e2m3fn) the value below it is subnormal.
        """
        below = [self.magnitude_value(i) for i in range(self.max_code + 1)]
        return 1 - max(v for v in below if v < 1)

    @property
    def max(self) -> Fraction:
        """Largest finite value (finfo ``max``)."""
        return self.magnitude_value(self.max_code)

    @property
    def min(self) -> Fraction:
        """Least finite value (finfo ``min``): ``-max``, or the smallest code if unsigned."""
        return -self.max if self.signed else self.magnitude_value(0)

    @property
    def smallest_normal(self) -> Fraction:
        """Smallest positive normal (finfo ``smallest_normal``, alias ``tiny``)."""
        return Fraction(2) ** self.minexp

    tiny = smallest_normal

    @property
    def smallest_subnormal(self) -> Fraction:
        """Smallest positive subnormal (finfo ``smallest_subnormal``)."""
        if not self.has_subnormals:
            return self.smallest_normal
        return Fraction(2) ** (self.minexp - self.mantissa_bits)

    @property
    def finite_magnitude_count(self) -> int:
        """Distinct finite magnitudes, zero included if any (127 for e4m3fn)."""
        return self.max_code + 1
