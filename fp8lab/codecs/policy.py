"""Overflow and NaN policies, explicit in every encode call (OFP8 §4.2, §5.4).

``saturate=True`` is OFP8 SATFINITE: overflow and ±inf become ±max.
``saturate=False`` is the non-saturating mode: overflow and ±inf become inf
where the format has it, else NaN. The NaN policy chooses the sign of every
NaN code emitted (NaN input, and overflow to NaN), by its name in the one
catalogue :data:`fp8lab.specs.nan.NAN_POLICIES`: ``canonical`` emits the
positive quiet NaN (CUDA host path), ``keep-sign`` keeps the input's sign where
the format has a negative NaN code (ml_dtypes). The catalogue's clamp policies
(NaN to ±max) are kernels' behaviour, not an encoder's: the codecs refuse them.

Formats outside OFP8 (OCP MX v1.0 §5) bring three more cases, all read off
the format's fields: a format with neither inf nor NaN (e2m1fn, e2m3fn,
e3m2fn) has no code for overflow, so only ``saturate=True`` is accepted, and
no code for NaN, so :func:`fp8lab.encode` refuses NaN input; a format without
zero (e8m0fnu) encodes ±0 as its NaN; an unsigned format encodes every
negative nonzero value (and -inf) as its NaN. The last two are what ml_dtypes
0.7 does, and the exhaustive proofs check it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fp8lab.specs.format import FormatSpec
from fp8lab.specs.nan import NAN_POLICIES, NanPolicy, nan_policy

__all__ = ["SpecialCodes", "codec_nan_policy", "special_codes"]


def codec_nan_policy(nan: str | NanPolicy) -> NanPolicy:
    """The catalogue's policy ``nan``, one the codecs emit (a NaN code).

    Raises:
        ValueError: for an unknown name, or a clamp policy (NaN to ±max).
    """
    policy = nan_policy(nan)
    if policy.to_max:
        codec = ", ".join(n for n, p in NAN_POLICIES.items() if not p.to_max)
        raise ValueError(
            f"NaN policy {policy.name!r} is a kernel's clamp; an encoder emits a NaN code: {codec}"
        )
    return policy


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
    policy = codec_nan_policy(nan)
    nan_pos = fmt.canonical_nan_code
    if nan_pos is None:
        if not saturate:
            raise ValueError(f"{fmt.name} has neither inf nor NaN: overflow needs saturate=True")
        if not fmt.signed:
            raise ValueError(f"{fmt.name}: an unsigned format needs a NaN code for negatives")
        zero = (0, fmt.sign_bit if fmt.has_negative_zero else 0)
        overflow = (fmt.max_code, fmt.max_code | fmt.sign_bit)
        return SpecialCodes(nan=zero, inf=overflow, overflow=overflow, zero=zero)
    nan_codes = policy.codes(fmt)
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
