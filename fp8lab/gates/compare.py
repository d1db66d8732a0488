"""Comparators named for their metric; each returns what it measured.

``compare_codes`` splits fp8 code disagreements into real mismatches and
NaN-code disagreements (both sides NaN, different code), which are a policy
difference and are never counted as mismatches.
``assert_bitexact`` compares bytes with zero tolerance; ``assert_max_ulp``
measures the worst ulp distance. Both fail when they examined nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fp8lab.specs.format import FormatSpec

__all__ = [
    "CodeComparison",
    "as_codes",
    "assert_bitexact",
    "assert_max_ulp",
    "compare_codes",
    "nan_code_mask",
]


def nan_code_mask(codes: npt.NDArray[np.uint8], fmt: FormatSpec) -> npt.NDArray[np.bool_]:
    """True where a code is one of the format's NaN codes."""
    lut = np.zeros(256, np.bool_)
    lut[sorted(fmt.nan_codes)] = True
    return lut[codes]


@dataclass(frozen=True, eq=False)
class CodeComparison:
    """Result of comparing two code arrays element by element."""

    examined: int
    mismatch: npt.NDArray[np.bool_]
    nan_code: npt.NDArray[np.bool_]

    @property
    def mismatches(self) -> int:
        """Disagreements that are not both-NaN."""
        return int(self.mismatch.sum())

    @property
    def nan_code_mismatches(self) -> int:
        """Disagreements where both codes are NaN codes."""
        return int(self.nan_code.sum())


def compare_codes(
    got: npt.NDArray[np.uint8], want: npt.NDArray[np.uint8], fmt: FormatSpec
) -> CodeComparison:
    """Compare codes of the same shape; NaN-code disagreements are kept apart.

    Raises:
        ValueError: on a shape or dtype difference.
    """
    if got.shape != want.shape or got.dtype != np.uint8 or want.dtype != np.uint8:
        raise ValueError(
            f"cannot compare codes {got.dtype}{got.shape} with {want.dtype}{want.shape}"
        )
    differ = got != want
    both_nan = differ & nan_code_mask(got, fmt) & nan_code_mask(want, fmt)
    return CodeComparison(int(got.size), differ & ~both_nan, both_nan)


def as_codes(got: object, fmt: FormatSpec) -> object:
    """``got`` with an ml_dtypes array of ``fmt`` (``float8_e4m3fn``, ...) as its uint8 codes.

    Anything else is returned as it is, for the caller's own form check: a
    kernel may hand back its codes as bytes or as a float8 array of the format.

    Raises:
        ValueError: for an array of another one-byte ml_dtypes format (one line naming both).
    """
    if not isinstance(got, np.ndarray) or got.dtype.itemsize != 1:
        return got
    name = got.dtype.name  # numpy has no one-byte float: a float8 here is ml_dtypes'
    if not name.startswith("float"):
        return got
    mine = f"float{fmt.bits}_{fmt.name}"
    if name != mine:
        raise ValueError(f"kernel returned {name} codes; the rule's format is {fmt.name} ({mine})")
    return got.view(np.uint8)


def _first_offence(got: np.ndarray, want: np.ndarray, bad: np.ndarray) -> str:
    flat = np.flatnonzero(bad.reshape(-1))
    i = int(flat[0])
    g, w = got.reshape(-1)[i], want.reshape(-1)[i]
    raw_g = g.tobytes()[::-1].hex()
    raw_w = w.tobytes()[::-1].hex()
    return (
        f"{flat.size} of {bad.size} differ; first at flat index {i}: "
        f"got {g!r} (0x{raw_g}), want {w!r} (0x{raw_w})"
    )


def assert_bitexact(got: np.ndarray, want: np.ndarray) -> int:
    """Assert byte-for-byte equality (so -0 != +0 and NaN payloads count).

    Returns:
        The number of elements examined.

    Raises:
        AssertionError: on any differing element, a dtype or shape difference,
            or when there is nothing to examine.
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError(f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}")
    if got.size == 0:
        raise AssertionError("assert_bitexact examined nothing")
    width = got.dtype.itemsize
    as_bytes = np.ascontiguousarray(got).view(np.uint8).reshape(-1, width)
    want_bytes = np.ascontiguousarray(want).view(np.uint8).reshape(-1, width)
    bad = (as_bytes != want_bytes).any(axis=1)
    if bad.any():
        raise AssertionError("not bit-exact: " + _first_offence(got, want, bad))
    return int(got.size)


_ORDERED = {4: (np.int32, np.uint32), 8: (np.int64, np.uint64), 2: (np.int16, np.uint16)}


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map floats to integers whose difference counts ulps; -0 sits one below +0."""
    signed, _ = _ORDERED[x.dtype.itemsize]
    bits = np.ascontiguousarray(x).view(signed).astype(np.int64)
    magnitude = bits & ((1 << (8 * x.dtype.itemsize - 1)) - 1)
    return np.where(bits < 0, -magnitude - 1, magnitude)


def assert_max_ulp(got: np.ndarray, want: np.ndarray, max_ulp: int) -> int:
    """Assert every element is within ``max_ulp`` ulps; NaN must meet NaN.

    Returns:
        The worst ulp distance measured.

    Raises:
        AssertionError: past the bound, for NaN against a number, for a dtype
            or shape difference, or when there is nothing to examine.
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape or got.dtype.kind != "f":
        raise AssertionError(f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}")
    if got.size == 0:
        raise AssertionError("assert_max_ulp examined nothing")
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if (nan_g != nan_w).any():
        raise AssertionError("NaN against a number: " + _first_offence(got, want, nan_g != nan_w))
    finite = ~nan_g
    distance = np.abs(_ordered(got[finite]) - _ordered(want[finite]))
    worst = int(distance.max()) if distance.size else 0
    if worst > max_ulp:
        bad = np.zeros(got.shape, np.bool_)
        bad[finite] = distance > max_ulp
        raise AssertionError(f"{worst} ulp > {max_ulp}: " + _first_offence(got, want, bad))
    return worst
