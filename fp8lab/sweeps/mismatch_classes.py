"""Mismatch classes for float32 inputs, from the format's fields alone.

Precedence, first match wins: ``nan_code`` (both outputs NaN codes; a
failure unless a fixed-policy side explains it, see
:mod:`fp8lab.sweeps.exhaustive_chunks`), ``nan_input``, ``inf``, ``overflow``
(finite |x| > max), ``tie`` (|x| exactly halfway between neighbouring
magnitudes, the overflow candidate included), ``subnormal`` (|x| below the
smallest normal), ``other``.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec

__all__ = ["MISMATCH_CLASSES", "classify_mismatches", "nan_code_lut"]

MISMATCH_CLASSES = ("nan_code", "nan_input", "inf", "overflow", "tie", "subnormal", "other")


@cache
def nan_code_lut(fmt: FormatSpec) -> npt.NDArray[np.bool_]:
    """True at every NaN code of ``fmt``."""
    return np.array([fmt.is_nan_code(c) for c in range(256)], np.bool_)


@cache
def _midpoints(fmt: FormatSpec) -> npt.NDArray[np.float64]:
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]
    return np.array([float((lo + hi) / 2) for lo, hi in itertools.pairwise(mags)], np.float64)


def classify_mismatches(
    x: npt.NDArray[np.float32],
    a: npt.NDArray[np.uint8],
    b: npt.NDArray[np.uint8],
    fmt: FormatSpec,
) -> npt.NDArray[np.int8]:
    """Index into :data:`MISMATCH_CLASSES` for each disagreeing element."""
    with np.errstate(invalid="ignore"):  # signalling NaN patterns stay NaN
        wide = np.abs(x.astype(np.float64))
    lut = nan_code_lut(fmt)
    rules = (
        lut[a] & lut[b],
        np.isnan(wide),
        np.isinf(wide),
        wide > float(fmt.max),
        np.isin(wide, _midpoints(fmt)),
        wide < float(fmt.smallest_normal),
    )
    out = np.full(x.shape, len(rules), np.int8)
    for i in reversed(range(len(rules))):
        out[rules[i]] = i
    return out
