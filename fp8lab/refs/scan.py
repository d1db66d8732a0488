"""The scan reference: nearest finite magnitude by enumeration, ties to even.

Independent by construction: it imports only :mod:`fp8lab.specs`, numpy and
the standard library. It enumerates every finite magnitude of the format,
decodes each exactly from its field layout (``FormatSpec.magnitude_value``),
and picks the nearest; on an exact tie it prefers the even significand
(OFP8 §4.2: roundTiesToEven). The magnitude one past the largest finite one is
a candidate too, so the top tie (464 in e4m3fn, 248 in e4m3fnuz) is decided by
the same rule, and choosing it means overflow.

"Even" is read exactly: a tie between neighbours ``lo < hi`` goes to ``hi``
iff ``hi / (hi - lo)`` (hi's significand at lo's quantum) is even. With a
mantissa this is the even code index. With none (e8m0fnu, ``hi = 2 lo``) it
is always 2, so ties go up: IEEE 754 §4.3.1's "even least significant digit"
does not decide a one-digit significand, and this reading is the carry that
ml_dtypes 0.7 performs (the exhaustive proof against ml_dtypes checks it).
Inputs with no nearest code are the format's fields' business too: ±0 in a
format without zero (e8m0fnu) and negative values in an unsigned one encode
as NaN (ml_dtypes 0.7); a format without NaN codes (e2m1fn, e2m3fn, e3m2fn)
has no answer for NaN input, and the scan refuses it (ValueError).

Three evaluations share one table of decisions:

* :func:`scan_scalar` is the literal scan, in Fractions, one value at a time.
* :func:`scan_encode` evaluates arrays through the midpoints (binary search).
* :func:`scan_pattern_range` evaluates a contiguous range of float32 bit
  patterns: float32 patterns of one sign are ordered like their values, so the
  reference is a step function of the pattern whose steps sit at the float32
  patterns of the midpoints (each exactly representable), and a range expands
  from run lengths.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec

__all__ = [
    "NAN_PATTERN_RANGES",
    "ScanPolicy",
    "scan_encode",
    "scan_pattern_range",
    "scan_pattern_runs",
    "scan_scalar",
]

NAN_PATTERN_RANGES = ((0x7F80_0001, 0x8000_0000), (0xFF80_0001, 1 << 32))


@dataclass(frozen=True)
class ScanPolicy:
    """The reference's own statement of what it emits off the rounding path.

    Args:
        saturate: overflow and ±inf go to ±max (SATFINITE); else to inf if
            the format has it, otherwise NaN.
        keep_nan_sign: NaN codes carry the input's sign where one exists.
        all_ones_nan: the NaN code sets every exponent and mantissa bit where
            that code is a NaN (e5m2: 0x7F), else it is the canonical NaN.
    """

    saturate: bool
    keep_nan_sign: bool
    all_ones_nan: bool = False


def _nan_code(fmt: FormatSpec, negative: bool, policy: ScanPolicy) -> int:
    positive = fmt.canonical_nan_code
    if positive is None:
        raise ValueError(f"{fmt.name} has no NaN code: NaN input has no reference answer")
    every_bit = (1 << (fmt.exponent_bits + fmt.mantissa_bits)) - 1
    if policy.all_ones_nan and fmt.is_nan_code(every_bit):
        positive = every_bit
    signed = positive | fmt.sign_bit
    if negative and policy.keep_nan_sign and fmt.is_nan_code(signed):
        return signed
    return positive


def _beyond_max_code(fmt: FormatSpec, negative: bool, policy: ScanPolicy) -> int:
    sign = fmt.sign_bit if negative else 0
    if negative and not fmt.signed:
        return _nan_code(fmt, negative, policy)
    if policy.saturate:
        return fmt.max_code | sign
    if fmt.inf_code is not None:
        return fmt.inf_code | sign
    return _nan_code(fmt, negative, policy)


def _signed(fmt: FormatSpec, index: int, negative: bool, policy: ScanPolicy) -> int:
    """The code of magnitude ``index`` (``max_code + 1`` means overflow)."""
    if index > fmt.max_code:
        return _beyond_max_code(fmt, negative, policy)
    if negative and not fmt.signed:
        return _nan_code(fmt, negative, policy)
    if negative and (index > 0 or fmt.has_negative_zero):
        return index | fmt.sign_bit
    return index


def _zero_code(fmt: FormatSpec, negative: bool, policy: ScanPolicy) -> int:
    """The code of ±0: index 0 if the format has a zero, else its NaN."""
    if not fmt.has_zero:
        return _nan_code(fmt, negative, policy)
    return _signed(fmt, 0, negative, policy)


@cache
def _magnitudes(fmt: FormatSpec) -> tuple[Fraction, ...]:
    """Every finite magnitude in code order, plus the overflow candidate."""
    return tuple(fmt.magnitude_value(i) for i in range(fmt.max_code + 2))


@cache
def _ties_up(fmt: FormatSpec) -> tuple[bool, ...]:
    """For each midpoint i (between magnitudes i and i+1): does its tie go up?"""
    mags = _magnitudes(fmt)
    return tuple((hi / (hi - lo)) % 2 == 0 for lo, hi in itertools.pairwise(mags))


def scan_scalar(x: float, fmt: FormatSpec, policy: ScanPolicy) -> int:
    """The literal scan for one value: exact distances to every magnitude."""
    negative = math.copysign(1.0, x) < 0
    if math.isnan(x):
        return _nan_code(fmt, negative, policy)
    if math.isinf(x):
        return _beyond_max_code(fmt, negative, policy)
    target = abs(Fraction(x))
    if target == 0:
        return _zero_code(fmt, negative, policy)
    best, best_distance = 0, None
    ties_up = _ties_up(fmt)
    for index, magnitude in enumerate(_magnitudes(fmt)):
        distance = abs(magnitude - target)
        closer = best_distance is None or distance < best_distance
        even_tie = distance == best_distance and ties_up[index - 1]
        if closer or even_tie:
            best, best_distance = index, distance
    return _signed(fmt, best, negative, policy)


@cache
def _midpoints(fmt: FormatSpec) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Midpoints between neighbouring magnitudes, and whether each tie goes up."""
    mags = _magnitudes(fmt)
    mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(mags)]
    as_float = np.array([float(m) for m in mids], np.float64)
    if any(Fraction(f) != m for f, m in zip(as_float, mids, strict=False)):
        raise AssertionError(f"{fmt.name}: a midpoint is not exact in float64")
    return as_float, np.array(_ties_up(fmt), np.bool_)


@cache
def _signed_codes(fmt: FormatSpec, policy: ScanPolicy) -> npt.NDArray[np.uint8]:
    """Row 0: code of each magnitude index when positive; row 1: when negative (read-only)."""
    count = fmt.max_code + 2
    table = np.array(
        [[_signed_or_nan(fmt, i, neg, policy) for i in range(count)] for neg in (False, True)],
        np.uint8,
    )
    table.flags.writeable = False
    return table


def _signed_or_nan(fmt: FormatSpec, index: int, negative: bool, policy: ScanPolicy) -> int:
    """:func:`_signed`, with 0 standing in where it has no answer (never read)."""
    try:
        return _signed(fmt, index, negative, policy)
    except ValueError:
        return 0


def scan_encode(x: np.ndarray, fmt: FormatSpec, policy: ScanPolicy) -> npt.NDArray[np.uint8]:
    """Evaluate the scan on a float32/float64/bfloat16 array through its midpoints.

    Raises:
        TypeError: for a non-float array.
        ValueError: for NaN input to a format without NaN codes.
    """
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise TypeError(f"scan_encode needs floats, got {x.dtype}")
    with np.errstate(invalid="ignore"):
        wide = np.asarray(x, np.float64).reshape(-1)
    is_nan = np.isnan(wide)
    if is_nan.any():
        _nan_code(fmt, False, policy)  # raises where the format has no NaN code
    mids, tie_up = _midpoints(fmt)
    magnitude = np.abs(wide)
    index = np.searchsorted(mids, magnitude, side="left")
    at_tie = np.zeros(wide.shape, np.bool_)
    inside = index < mids.size
    at_tie[inside] = mids[index[inside]] == magnitude[inside]
    index[at_tie] += tie_up[index[at_tie]]
    negative = np.signbit(wide)
    out = _signed_codes(fmt, policy)[negative.astype(np.intp), np.minimum(index, fmt.max_code + 1)]
    is_inf = np.isinf(wide)
    out[is_inf & ~negative] = _beyond_max_code(fmt, False, policy)
    out[is_inf & negative] = _beyond_max_code(fmt, True, policy)
    is_zero = wide == 0
    out[is_zero & ~negative] = _zero_code(fmt, False, policy)
    out[is_zero & negative] = _zero_code(fmt, True, policy)
    if is_nan.any():
        out[is_nan & ~negative] = _nan_code(fmt, False, policy)
        out[is_nan & negative] = _nan_code(fmt, True, policy)
    return out.reshape(x.shape)


@cache
def _pattern_runs(
    fmt: FormatSpec, policy: ScanPolicy
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """First float32 pattern of each run, and its code, over all 2**32 patterns.

    A format without NaN codes gets code 0 on the NaN runs, which
    :func:`scan_pattern_range` never returns (it refuses NaN patterns there).
    """
    mids, tie_up = _midpoints(fmt)
    mid_patterns = mids.astype(np.float32).view(np.uint32).astype(np.int64)
    # The run of magnitude index i+1 starts at its midpoint if the tie goes up, else one after.
    # Pattern 0 (±0) is a run of its own; index 0's run resumes at pattern 1.
    starts = [1, *list(mid_patterns + np.where(tie_up, 0, 1))]
    indices = list(range(fmt.max_code + 2))
    inf_pattern, nan_pattern = 0x7F80_0000, 0x7F80_0001
    firsts: list[int] = []
    codes: list[int] = []
    for negative, base in ((False, 0), (True, 0x8000_0000)):
        firsts.append(base)
        codes.append(_zero_code(fmt, negative, policy))
        for start, index in zip(starts, indices, strict=False):
            if start < inf_pattern:
                firsts.append(base + int(start))
                codes.append(_signed(fmt, index, negative, policy))
        firsts += [base + inf_pattern, base + nan_pattern]
        codes += [_beyond_max_code(fmt, negative, policy), _nan_or_none(fmt, negative, policy)]
    return np.array(firsts, np.int64), np.array(codes, np.uint8)


def scan_pattern_runs(
    fmt: FormatSpec, policy: ScanPolicy
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """The reference as runs: the first float32 pattern of each run (ascending) and its code.

    Pattern p's code is ``codes[searchsorted(firsts, p, side="right") - 1]``;
    an array module other than numpy (cupy) can expand it on its own device.
    """
    firsts, codes = _pattern_runs(fmt, policy)
    return firsts.copy(), codes.copy()


def _nan_or_none(fmt: FormatSpec, negative: bool, policy: ScanPolicy) -> int:
    return 0 if fmt.canonical_nan_code is None else _nan_code(fmt, negative, policy)


def scan_pattern_range(
    start: int, stop: int, fmt: FormatSpec, policy: ScanPolicy
) -> npt.NDArray[np.uint8]:
    """The reference code of every float32 bit pattern in ``[start, stop)``.

    Raises:
        ValueError: unless ``0 <= start <= stop <= 2**32``; for a range with
            NaN patterns in a format without NaN codes.
    """
    if not 0 <= start <= stop <= 1 << 32:
        raise ValueError(f"pattern range [{start}, {stop}) is not inside [0, 2**32)")
    if fmt.canonical_nan_code is None and any(
        start < hi and lo < stop for lo, hi in NAN_PATTERN_RANGES
    ):
        raise ValueError(f"{fmt.name} has no NaN code: [{start:#x}, {stop:#x}) holds NaN patterns")
    firsts, codes = _pattern_runs(fmt, policy)
    first_run = int(np.searchsorted(firsts, start, side="right")) - 1
    last_run = int(np.searchsorted(firsts, stop, side="left"))
    bounds = np.clip(np.append(firsts[first_run:last_run], stop), start, stop)
    return np.repeat(codes[first_run:last_run], np.diff(bounds))
