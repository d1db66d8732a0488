"""The codec atlas: every code of a format and its rounding boundaries, from the fields."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from fp8lab.specs.format import FormatSpec

__all__ = ["Boundary", "CodeRow", "code_table", "rounding_boundaries"]


@dataclass(frozen=True)
class CodeRow:
    """One code: its fields, its kind and its exact value (None for NaN)."""

    code: int
    sign: int
    exponent_field: int
    mantissa_field: int
    kind: str  # zero, subnormal, normal, inf, nan
    value: float | None


@dataclass(frozen=True)
class Boundary:
    """The midpoint between two neighbouring magnitudes and where its tie goes."""

    lower: float
    upper: float
    midpoint: float
    tie_to: float
    overflows: bool


def code_table(fmt: FormatSpec) -> list[CodeRow]:
    """Every code of ``fmt`` (OFP8 §5.2 field layout; OCP MX v1.0 §5 for MX formats)."""
    rows = []
    mant_mask = (1 << fmt.mantissa_bits) - 1
    for code in range(fmt.code_count):
        magnitude = code & fmt.magnitude_mask
        exp_field, mant = magnitude >> fmt.mantissa_bits, magnitude & mant_mask
        sign = 1 if code & fmt.sign_bit else 0
        if fmt.is_nan_code(code):
            kind, value = "nan", None
        elif fmt.inf_code is not None and magnitude == fmt.inf_code:
            kind, value = "inf", (-1.0 if sign else 1.0) * float("inf")
        else:
            zero = magnitude == 0 and fmt.has_zero
            subnormal = exp_field == 0 and fmt.has_subnormals
            kind = "zero" if zero else "subnormal" if subnormal else "normal"
            value = float(fmt.exact_value(code))
            if kind == "zero" and sign:
                value = -0.0
        rows.append(CodeRow(code, sign, exp_field, mant, kind, value))
    return rows


def rounding_boundaries(fmt: FormatSpec) -> list[Boundary]:
    """Every midpoint of the positive magnitudes, the overflow candidate's included."""
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]
    out = []
    for index, (lo, hi) in enumerate(pairwise(mags)):
        upper_even = (hi / (hi - lo)) % 2 == 0  # hi's significand at lo's quantum
        tie_to: Fraction = hi if upper_even else lo
        out.append(
            Boundary(
                float(lo),
                float(hi),
                float((lo + hi) / 2),
                float(tie_to),
                overflows=upper_even and index + 1 > fmt.max_code,
            )
        )
    return out
