"""Static per-tensor scale: validation and the per-shard collapse.

A scale is usable when it is a finite, positive float32 whose float32
reciprocal is finite and normal. A subnormal scale gives ``inv = inf`` and
then ``0 * inf = NaN``; a scale above 2**126 gives a subnormal reciprocal that
flushes on devices with FTZ. Upstream collapses per-shard input scales with
``.max()`` (vLLM modelopt.py:528 at 5559679); a kernel handed several shard
scales collapses them itself (:func:`static_scale`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "MAX_SCALE",
    "MIN_SCALE",
    "collapse_shard_scales",
    "reciprocal",
    "static_scale",
    "validate_scale",
]

MIN_SCALE = np.float32(np.finfo(np.float32).smallest_normal)
MAX_SCALE = np.float32(2.0**126)


def validate_scale(scale: Any) -> np.float32:
    """Return ``scale`` as a float32 after checking the rules above.

    Raises:
        TypeError: for a non-real scale (bool, str, complex, array of many).
        ValueError: naming the value and the rule it breaks.
    """
    if isinstance(scale, bool | np.bool_) or (np.ndim(scale) != 0 and np.size(scale) != 1):
        raise TypeError(f"scale must be one real number, got {scale!r}")
    arr = np.asarray(scale)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"scale must be a real number, got {scale!r} ({arr.dtype})")
    with np.errstate(over="ignore"):
        s = np.float32(arr.reshape(()))
    if not np.isfinite(s):
        raise ValueError(f"scale {scale!r} is not finite in float32; it must be finite")
    if s <= 0:
        raise ValueError(f"scale {scale!r} is not positive; it must be > 0")
    if s < MIN_SCALE:
        raise ValueError(
            f"scale {scale!r} is below the smallest normal float32 {MIN_SCALE!r}; "
            "its reciprocal would be infinite (and 0 * inf = NaN)"
        )
    if s > MAX_SCALE:
        raise ValueError(
            f"scale {scale!r} is above 2**126; its float32 reciprocal would be subnormal"
        )
    return s


def reciprocal(scale: Any) -> np.float32:
    """``float32(1) / float32(scale)``, formed once, after validation."""
    return np.float32(1.0) / validate_scale(scale)


def collapse_shard_scales(scales: Any) -> np.float32:
    """Collapse per-shard static scales to one with ``.max()``, each validated first.

    Raises:
        ValueError: for an empty list or any invalid shard scale.
    """
    values = np.asarray(scales).reshape(-1)
    if values.size == 0:
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
