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

__all__ = [
    "MISMATCH_CLASSES",
    "classify_mismatches",
    "is_midpoint",
    "nan_code_lut",
    "nan_code_mask",
]

MISMATCH_CLASSES = ("nan_code", "nan_input", "inf", "overflow", "tie", "subnormal", "other")


@cache
def nan_code_lut(fmt: FormatSpec) -> npt.NDArray[np.bool_]:
    """True at every NaN code of ``fmt``."""
    return np.array([fmt.is_nan_code(c) for c in range(256)], np.bool_)


@cache
def _nan_code_range(fmt: FormatSpec) -> tuple[int, int, int] | None:
    """``(mask, lo, width)``: a code c is a NaN code iff ``(c & mask) - lo`` (mod 256) <= width.

    None when no such test holds for all 256 codes.
    """
    lut = nan_code_lut(fmt)
    for mask in (0xFF, fmt.magnitude_mask):
        kept = sorted({c & mask for c in range(256) if lut[c]})
        if not kept or kept != list(range(kept[0], kept[-1] + 1)):
            continue
        test = [((c & mask) - kept[0]) % 256 <= kept[-1] - kept[0] for c in range(256)]
        if test == lut.tolist():
            return mask, kept[0], kept[-1] - kept[0]
    return None


def nan_code_mask(codes: npt.NDArray[np.uint8], fmt: FormatSpec) -> npt.NDArray[np.bool_]:
    """True where ``codes`` holds a NaN code of ``fmt`` (:func:`nan_code_lut` of each code).

    By two or three whole-array integer operations where the NaN codes form one
    range (of codes or of magnitudes), else by the table.
    """
    test = _nan_code_range(fmt)
    if test is None:
        lut = nan_code_lut(fmt)
        return lut[codes] if lut.any() else np.zeros(codes.shape, np.bool_)
    mask, lo, width = test
    return (codes & np.uint8(mask)) - np.uint8(lo) <= np.uint8(width)


@cache
def _midpoints(fmt: FormatSpec) -> npt.NDArray[np.float64]:
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]
    return np.array([float((lo + hi) / 2) for lo, hi in itertools.pairwise(mags)], np.float64)


def is_midpoint(wide: npt.NDArray[np.float64], fmt: FormatSpec) -> npt.NDArray[np.bool_]:
    """True where ``wide`` is exactly halfway between two neighbouring magnitudes of ``fmt``.

    One binary search of the sorted midpoints per element (``np.isin`` would sort the
    whole array first); NaN sorts past every midpoint and equals none.
    """
    mids = _midpoints(fmt)
    at = np.searchsorted(mids, wide)
    np.minimum(at, mids.size - 1, out=at)
    hit: npt.NDArray[np.bool_] = mids[at] == wide
    return hit


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
        is_midpoint(wide, fmt),
        wide < float(fmt.smallest_normal),
    )
    out = np.full(x.shape, len(rules), np.int8)
    for i in reversed(range(len(rules))):
        out[rules[i]] = i
    return out
