"""Overflow and NaN policies, explicit in every encode call (OFP8 §4.2, §5.4).

``saturate=True`` is OFP8 SATFINITE: overflow and ±inf become ±max.
``saturate=False`` is the non-saturating mode: overflow and ±inf become inf
where the format has it, else NaN. The NaN policy chooses the sign of every
NaN code emitted (NaN input, and overflow to NaN): ``canonical`` emits the
positive quiet NaN (CUDA host path), ``keep-sign`` keeps the input's sign where
the format has a negative NaN code (ml_dtypes).

Formats outside OFP8 (OCP MX v1.0 §5) bring three more cases, all read off
the format's fields: a format with neither inf nor NaN (e2m1fn, e2m3fn,
e3m2fn) has no code for overflow, so only ``saturate=True`` is accepted, and
no code for NaN, so :func:`fp8lab.encode` refuses NaN input; a format without
zero (e8m0fnu) encodes ±0 as its NaN; an unsigned format encodes every
negative nonzero value (and -inf) as its NaN. The last two are what ml_dtypes
0.7 does, and the exhaustive proofs check it.
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
    negative: int | None = None  # every negative nonzero finite value, for an unsigned format


def special_codes(fmt: FormatSpec, *, saturate: bool, nan: str | NanPolicy) -> SpecialCodes:
    """Resolve the policy into the codes emitted for NaN, ±inf, overflow and ±0.

    For a format without NaN codes the ``nan`` entries are the zero codes, a
    filler no caller reaches: :func:`fp8lab.encode` refuses NaN input for it.

    Raises:
        TypeError: if ``saturate`` is not a bool (a hidden default is not allowed).
        ValueError: ``saturate=False`` for a format with neither inf nor NaN,
            or an unsigned format without a NaN code.
    """
    if not isinstance(saturate, bool):
        raise TypeError(f"saturate must be True or False, got {saturate!r}")
    policy = nan_policy(nan)
    nan_pos = fmt.canonical_nan_code
    if nan_pos is None:
        if not saturate:
            raise ValueError(f"{fmt.name} has neither inf nor NaN: overflow needs saturate=True")
        if not fmt.signed:
            raise ValueError(f"{fmt.name}: an unsigned format needs a NaN code for negatives")
        zero = (0, fmt.sign_bit if fmt.has_negative_zero else 0)
        overflow = (fmt.max_code, fmt.max_code | fmt.sign_bit)
        return SpecialCodes(nan=zero, inf=overflow, overflow=overflow, zero=zero)
    nan_neg_candidate = nan_pos | fmt.sign_bit
    keep = policy is NanPolicy.KEEP_SIGN and fmt.is_nan_code(nan_neg_candidate)
    nan_codes = (nan_pos, nan_neg_candidate if keep else nan_pos)
    if saturate:
        overflow = (fmt.max_code, fmt.max_code | fmt.sign_bit)
    elif fmt.inf_code is not None:
        overflow = (fmt.inf_code, fmt.inf_code | fmt.sign_bit)
    else:
        overflow = nan_codes
    if not fmt.signed:
        overflow = (overflow[0], nan_codes[1])
    zero = (0, fmt.sign_bit if fmt.has_negative_zero else 0) if fmt.has_zero else nan_codes
    negative = None if fmt.signed else nan_codes[1]
    return SpecialCodes(
        nan=nan_codes, inf=overflow, overflow=overflow, zero=zero, negative=negative
    )
