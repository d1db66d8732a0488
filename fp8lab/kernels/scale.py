"""Static per-tensor scale: validation and the per-shard collapse.

A scale is usable when it is a real in [smallest normal float32, 2**126],
checked on the user's exact value before it is rounded once to float32, so
that its float32 reciprocal is finite and normal. A subnormal scale gives ``inv = inf`` and
then ``0 * inf = NaN``; a scale above 2**126 gives a subnormal reciprocal that
flushes on devices with FTZ. Upstream collapses per-shard input scales with
``.max()`` (vLLM modelopt.py:528 at 5559679); a kernel handed several shard
scales collapses them itself (:func:`static_scale`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "MAX_SCALE",
    "MIN_SCALE",
    "CheckedScale",
    "check_scale",
    "collapse_shard_scales",
    "reciprocal",
    "static_scale",
    "validate_scale",
]

MIN_SCALE = np.float32(np.finfo(np.float32).smallest_normal)
MAX_SCALE = np.float32(2.0**126)


@dataclass(frozen=True)
class CheckedScale:
    """A valid scale: the user's exact value and the float32 the kernels use."""

    given: Fraction
    value: np.float32

    @property
    def rounded(self) -> bool:
        """True when float32 rounding changed the user's value."""
        return Fraction(float(self.value)) != self.given

    def to_dict(self) -> dict[str, Any]:
        """The record: both values, exactly, and whether rounding changed the scale."""
        return {
            "given": str(self.given),
            "given_hex": float(self.given).hex(),
            "float32_hex": float(self.value).hex(),
            "rounded": self.rounded,
        }


def _exact(scale: Any) -> Fraction:
    """The exact rational value of one real scale; bools, complex, text are refused."""
    if np.ndim(scale) != 0:
        arr = np.asarray(scale)
        if arr.size != 1:
            raise TypeError(f"scale must be one real number, got {scale!r}")
        scale = arr.reshape(())[()]
    if isinstance(scale, bool | np.bool_):
        raise TypeError(f"scale must be one real number, got {scale!r}")
    if isinstance(scale, numbers.Rational):
        return Fraction(int(scale.numerator), int(scale.denominator))
    if isinstance(scale, float | np.floating) or _is_ml_dtypes_float(scale):
        value = float(scale)  # exact: float16/32/64 and ml_dtypes floats fit in float64
        if not math.isfinite(value):
            raise ValueError(f"scale {scale!r} is not finite; it must be finite")
        return Fraction(value)
    raise TypeError(f"scale must be a real number, got {scale!r} ({type(scale).__name__})")


def _is_ml_dtypes_float(scale: Any) -> bool:
    """An ml_dtypes scalar (bfloat16, float8, ...): kind "V", exact in float64."""
    dtype = getattr(scale, "dtype", None)
    return (
        isinstance(dtype, np.dtype)
        and dtype.kind == "V"
        and bool(np.can_cast(dtype, np.float64, "safe"))
    )


def _nearest_float32(q: Fraction) -> np.float32:
    """``q`` rounded once to float32 (RNE), with no double rounding through float64."""
    c = np.float32(float(q))
    candidates = (np.nextafter(c, np.float32(-np.inf)), c, np.nextafter(c, np.float32(np.inf)))

    def key(f: np.float32) -> tuple[Fraction, int]:
        return abs(Fraction(float(f)) - q), int(np.array(f).view(np.uint32)) & 1

    return min(candidates, key=key)


def check_scale(scale: Any) -> CheckedScale:
    """Check ``scale`` against the rules above on its exact value, then round it to float32.

    The range is checked on the user's value, before any rounding; the result
    keeps that value beside the float32 one and says whether they differ.

    Raises:
        TypeError: for a non-real scale (bool, str, complex, array of many).
        ValueError: naming the value and the rule it breaks.
    """
    given = _exact(scale)
    if given <= 0:
        raise ValueError(f"scale {scale!r} is not positive; it must be > 0")
    if given < Fraction(float(MIN_SCALE)):
        raise ValueError(
            f"scale {scale!r} is below the smallest normal float32 {MIN_SCALE!r}; "
            "its reciprocal would be infinite (and 0 * inf = NaN)"
        )
    if given > Fraction(float(MAX_SCALE)):
        raise ValueError(
            f"scale {scale!r} is above 2**126; its float32 reciprocal would be subnormal"
        )
    return CheckedScale(given, _nearest_float32(given))


def validate_scale(scale: Any) -> np.float32:
    """Return ``scale`` as a float32 after :func:`check_scale`.

    Raises:
        TypeError: for a non-real scale (bool, str, complex, array of many).
        ValueError: naming the value and the rule it breaks.
    """
    return check_scale(scale).value


def reciprocal(scale: Any) -> np.float32:
    """``float32(1) / float32(scale)``, formed once, after validation."""
    return np.float32(1.0) / validate_scale(scale)


def collapse_shard_scales(scales: Any) -> np.float32:
    """Collapse per-shard static scales to one with ``.max()``, each validated first.

    Each shard keeps its own type (a bool shard is refused, as by
    :func:`validate_scale`).

    Raises:
        TypeError: for a shard that is not one real number.
        ValueError: for an empty list or any invalid shard scale.
    """
    if isinstance(scales, np.ndarray):
        values = list(scales.reshape(-1))
    else:
        values = list(np.asarray(scales, dtype=object).reshape(-1))
    if not values:
        raise ValueError("no shard scales to collapse")
    checked = [validate_scale(v) for v in values]
    return max(checked)


def static_scale(scale: Any) -> np.float32:
    """The per-tensor scale: one number as is, several per-shard scales collapsed.

    Raises:
        TypeError, ValueError: as :func:`validate_scale` and :func:`collapse_shard_scales`.
    """
    if np.ndim(scale) == 1 and np.size(scale) != 1:
        return collapse_shard_scales(scale)
    return validate_scale(scale)
