"""The ``quotient`` axis, proved moot: float32 and float64-then-float32 quotients agree everywhere.

A rule's ``quotient = "float64"`` forms its scale in float64 and rounds it to
float32 once (torchao's ``amax_to_scale``); ``"float32"`` divides in float32.
For one division of two float32 operands the two are the same float32
(float64 carries 53 >= 2 * 24 + 2 bits, so rounding the float64 quotient to
float32 is innocuous), so flipping the axis moves no byte and no mutant of it
can be killed. This module checks that claim exhaustively instead: for a
bound ``M``, on every non-negative float32 amax pattern, the divisor
``amax / M`` and the multiplier ``M / amax`` (NaN results compared as NaN).
:func:`quotient_splits` is a compiled loop; :func:`quotient_splits_numpy`
is its slow twin on a range (``tests/sweeps/test_quotient.py`` checks them
against each other and sweeps every bound the rules use).
"""

from __future__ import annotations

import numba
import numpy as np

from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES

__all__ = ["ALL_POSITIVE", "FORMS", "quotient_bounds", "quotient_splits", "quotient_splits_numpy"]

ALL_POSITIVE = 1 << 31  # +0 up to the last +NaN pattern
FORMS = ("divisor", "multiplier")  # amax / M and M / amax
_CHUNK = 1 << 20


def quotient_bounds() -> tuple[float, ...]:
    """Every bound ``M`` a rule divides by or into: each element format's max.

    The scale rules' element maxes, and NVFP4's: e2m1's 6, e4m3's 448 and
    their product 2688 (TE's ``S_enc = 2688 / amax``, torchao's ``amax / 2688``).
    """
    bounds = {float(get_format(r.element).max) for r in RULES.values()}
    if NVFP4_RULES:
        e2m1, e4m3 = (float(get_format(f).max) for f in ("e2m1fn", "e4m3fn"))
        bounds |= {e2m1, e4m3, e2m1 * e4m3}
    return tuple(sorted(bounds))


@numba.njit(cache=True, error_model="numpy")  # x / 0 is IEEE inf or NaN, never an error
def _chunk_splits(
    bound: np.float32, wide_bound: np.float64, multiplier: bool, lo: int, hi: int
) -> tuple[int, int]:  # pragma: no cover - compiled
    """(count, first) in ``[lo, hi)``: whole-array loops, so the divisions run as vectors."""
    n = hi - lo
    bits = np.empty(n, np.uint32)
    for i in range(n):
        bits[i] = np.uint32(lo + i)
    amax = bits.view(np.float32)
    narrow = np.empty(n, np.float32)
    wide = np.empty(n, np.float32)
    if multiplier:
        for i in range(n):
            narrow[i] = bound / amax[i]
            wide[i] = np.float32(wide_bound / np.float64(amax[i]))
    else:
        for i in range(n):
            narrow[i] = amax[i] / bound
            wide[i] = np.float32(np.float64(amax[i]) / wide_bound)
    nb, wb = narrow.view(np.uint32), wide.view(np.uint32)
    differ = 0
    first = -1
    for i in range(n):
        if nb[i] != wb[i] and not (narrow[i] != narrow[i] and wide[i] != wide[i]):
            differ += 1
            if first < 0:
                first = lo + i
    return differ, first


@numba.njit(parallel=True, cache=True)
def _splits(
    bound: np.float32, wide_bound: np.float64, multiplier: bool, start: int, stop: int
) -> np.ndarray:  # pragma: no cover - compiled
    """Per chunk of ``[start, stop)``: (count, first) where the two quotients differ.

    ``bound`` divides in float32, ``wide_bound`` in float64: the same number but
    in the test that plants a bound float32 cannot hold.
    """
    n_chunks = (stop - start + _CHUNK - 1) // _CHUNK
    out = np.zeros((n_chunks, 2), np.int64)
    for c in numba.prange(n_chunks):
        lo = start + c * _CHUNK
        differ, first = _chunk_splits(bound, wide_bound, multiplier, lo, min(lo + _CHUNK, stop))
        out[c, 0] = differ
        out[c, 1] = first
    return out


def _check(form: str, start: int, stop: int) -> None:
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")
    if not 0 <= start <= stop <= ALL_POSITIVE:
        raise ValueError(f"range [{start}, {stop}) is outside [0, 2**31]")


def quotient_splits(
    bound: float, form: str, start: int = 0, stop: int = ALL_POSITIVE
) -> tuple[int, int]:
    """(count, first) of the amax patterns in ``[start, stop)`` where the two quotients differ.

    ``first`` is the lowest such pattern, or -1. ``bound`` must be a float32.

    Raises:
        ValueError: for an unknown form, a range outside ``[0, 2**31]`` or a
            bound that is not a float32.
    """
    _check(form, start, stop)
    if float(np.float32(bound)) != bound:
        raise ValueError(f"bound {bound!r} is not a float32")
    rows = _splits(np.float32(bound), np.float64(bound), form == "multiplier", start, stop)
    firsts = rows[:, 1][rows[:, 1] >= 0]
    return int(rows[:, 0].sum()), int(firsts.min()) if firsts.size else -1


def quotient_splits_numpy(bound: float, form: str, start: int, stop: int) -> tuple[int, int]:
    """:func:`quotient_splits` in numpy, one array over ``[start, stop)`` (keep it small)."""
    _check(form, start, stop)
    amax = np.arange(start, stop, dtype=np.uint32).view(np.float32)
    m32, m64 = np.float32(bound), np.float64(bound)
    with np.errstate(all="ignore"):
        if form == "multiplier":
            narrow, wide = m32 / amax, (m64 / amax.astype(np.float64)).astype(np.float32)
        else:
            narrow, wide = amax / m32, (amax.astype(np.float64) / m64).astype(np.float32)
    same = (narrow.view(np.uint32) == wide.view(np.uint32)) | (np.isnan(narrow) & np.isnan(wide))
    bad = np.flatnonzero(~same)
    return int(bad.size), int(bad[0]) + start if bad.size else -1
