"""Scale lists: parsing, validation and log-spaced grids."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.kernels import validate_scale

__all__ = ["as_scales", "distinct_scales", "log_scales", "parse_scales"]


def as_scales(values: Iterable[float] | npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Validate every scale and return them as a 1-D float32 array.

    Raises:
        ValueError: for an empty list or any invalid scale (the message names it).
        TypeError: for a non-real scale.
    """
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values)).reshape(-1)
    if arr.size == 0:
        raise ValueError("no scales given; an analysis over nothing is refused")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"scales must be real numbers, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):
        out = arr.astype(np.float32)
    wide = arr.astype(np.float64)  # the range is checked on the user's value, not its rounding
    bad = ~np.isfinite(wide) | (wide < 2.0**-126) | (wide > 2.0**126)
    if bad.any():
        validate_scale(arr[int(np.flatnonzero(bad)[0])].item())  # raises with the rule
    return out


def distinct_scales(values: Iterable[float] | npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """:func:`as_scales`, refusing two values that are the same float32.

    Raises:
        ValueError: as :func:`as_scales`, or naming the first pair that collides.
    """
    raw = np.asarray(values if isinstance(values, np.ndarray) else list(values)).reshape(-1)
    out = as_scales(raw)
    first: dict[float, int] = {}
    for i, s in enumerate(out.tolist()):
        if s in first:
            a, b = raw[first[s]].item(), raw[i].item()
            raise ValueError(f"scales {a!r} and {b!r} are the same float32 {s!r}")
        first[s] = i
    return out


def parse_scales(text: str) -> npt.NDArray[np.float32]:
    """Parse ``"S1,S2,..."`` (decimal or ``float.hex``) into validated float32 scales.

    Raises:
        ValueError: for an empty list, an unparsable item or an invalid scale.
    """
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"no scales in {text!r}")
    values = []
    for item in items:
        try:
            values.append(float.fromhex(item) if "0x" in item.lower() else float(item))
        except ValueError:
            raise ValueError(f"scale {item!r} is not a number") from None
    return as_scales(values)


def log_scales(n: int, lo: float = 2.0**-20, hi: float = 2.0**20) -> npt.NDArray[np.float32]:
    """``n`` log-spaced float32 scales from ``lo`` to ``hi`` inclusive, distinct.

    Raises:
        ValueError: for n < 1, lo > hi, an invalid bound, or float32 collisions.
    """
    if n < 1 or lo > hi:
        raise ValueError(f"need n >= 1 and lo <= hi, got n={n}, lo={lo!r}, hi={hi!r}")
    scales = as_scales(np.geomspace(lo, hi, n))
    if np.unique(scales).size != n:
        raise ValueError(f"{n} log-spaced scales in [{lo!r}, {hi!r}] collide in float32")
    return scales
