"""Overflow and NaN policies, explicit in every encode call (OFP8 §4.2, §5.4).

``saturate=True`` is OFP8 SATFINITE: overflow and ±inf become ±max.
``saturate=False`` is the non-saturating mode: overflow and ±inf become inf
where the format has it, else NaN. The NaN policy chooses the sign of every
NaN code emitted (NaN input, and overflow to NaN): ``canonical`` emits the
positive quiet NaN (CUDA host path), ``keep-sign`` keeps the input's sign where
the format has a negative NaN code (ml_dtypes).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fp8lab.formats import FormatSpec

__all__ = ["NanPolicy", "SpecialCodes", "nan_policy", "special_codes"]


class NanPolicy(enum.Enum):
    """Sign of the NaN codes an encoder emits."""

    CANONICAL = "canonical"
    KEEP_SIGN = "keep-sign"


def nan_policy(nan: str | NanPolicy) -> NanPolicy:
    """Parse a NaN policy.

    Raises:
        ValueError: for anything but ``"canonical"`` or ``"keep-sign"``.
    """
    if isinstance(nan, NanPolicy):
        return nan
    try:
        return NanPolicy(nan)
    except ValueError:
        known = ", ".join(repr(p.value) for p in NanPolicy)
        raise ValueError(f"unknown NaN policy {nan!r}; use one of {known}") from None


@dataclass(frozen=True)
class SpecialCodes:
    """Codes for the inputs that rounding does not decide, per sign (+, -)."""

    nan: tuple[int, int]
    inf: tuple[int, int]
    overflow: tuple[int, int]
    zero: tuple[int, int]


def special_codes(fmt: FormatSpec, *, saturate: bool, nan: str | NanPolicy) -> SpecialCodes:
    """Resolve the policy into the codes emitted for NaN, ±inf, overflow and ±0.

    Raises:
        TypeError: if ``saturate`` is not a bool (a hidden default is not allowed).
    """
    if not isinstance(saturate, bool):
        raise TypeError(f"saturate must be True or False, got {saturate!r}")
    policy = nan_policy(nan)
    nan_pos = fmt.canonical_nan_code
    nan_neg_candidate = nan_pos | fmt.sign_bit
    keep = policy is NanPolicy.KEEP_SIGN and fmt.is_nan_code(nan_neg_candidate)
    nan_codes = (nan_pos, nan_neg_candidate if keep else nan_pos)
    if saturate:
        overflow = (fmt.max_code, fmt.max_code | fmt.sign_bit)
    elif fmt.inf_code is not None:
        overflow = (fmt.inf_code, fmt.inf_code | fmt.sign_bit)
    else:
        overflow = nan_codes
    zero = (0, fmt.sign_bit if fmt.has_negative_zero else 0)
    return SpecialCodes(nan=nan_codes, inf=overflow, overflow=overflow, zero=zero)
