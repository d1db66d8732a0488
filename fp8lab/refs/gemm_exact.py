"""References for A·Bᵀ on e4m3fn codes: exact dot products and the seed's double one.

Independent of the kernels and models they check: imports only numpy,
``fp8lab.specs`` and the standard library, and decodes codes from the
format's exact values.

Exactness: a finite e4m3fn value is n·2**-9 with |n| < 2**18
(|v| <= 448 < 2**9), so a product is an integer number of 2**-18 units below
2**36 units, and every partial sum of K products, in any order, is an
integer below K·2**36 units. float64 holds every integer up to 2**53, so
float64 BLAS is exact whatever its order while K·2**36 <= 2**53, i.e.
K <= 2**17. Beyond, int64 products in units are exact while
K·2**36 <= 2**62 (K <= 2**26), then Python integers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.specs.formats import FORMATS

__all__ = [
    "ACC_EPSILON",
    "EXACT_F64_MAX_K",
    "FLT_EPSILON",
    "INT64_MAX_K",
    "K_BLOCK_ELEMENTS",
    "OUT_RELATIVE",
    "SeedReference",
    "exact_acc",
    "exact_acc_units",
    "seed_reference",
]

EXACT_F64_MAX_K = 2**17  # K * 2**36 <= 2**53
INT64_MAX_K = 2**26  # K * 2**36 <= 2**62
K_BLOCK_ELEMENTS = 2**17  # codes per operand per block: 1 MiB of int64 units
UNIT_EXP = -18  # products are integers times 2**-18
FLT_EPSILON = 2.0**-23
_FMT = FORMATS["e4m3fn"]


@cache
def _units() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Every code's value in 2**-9 units, and which codes are NaN."""
    nan = np.array([_FMT.is_nan_code(c) for c in range(256)], np.bool_)
    units = np.zeros(256, np.int64)
    for c in range(256):
        if not nan[c]:
            q = _FMT.exact_value(c) * 512
            assert q.denominator == 1  # every e4m3fn value is a multiple of 2**-9
            units[c] = q.numerator
    units.setflags(write=False)
    return units, nan


def _checked_units(codes: np.ndarray, label: str) -> npt.NDArray[np.int64]:
    codes = np.asarray(codes)
    if codes.dtype != np.uint8 or codes.ndim != 2:
        raise ValueError(f"{label} must be a rank-2 uint8 array, got {codes.dtype}{codes.shape}")
    units, nan = _units()
    if nan[codes].any():
        raise ValueError(f"{label} holds NaN codes; the exact reference is defined on finite codes")
    out: npt.NDArray[np.int64] = units[codes]
    return out


def _check_k(a: np.ndarray, b: np.ndarray) -> int:
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"K differs: {a.shape} against {b.shape} (want [M,K] and [N,K])")
    return int(a.shape[1])


def _checked_codes(codes: np.ndarray, label: str) -> npt.NDArray[np.uint8]:
    codes = np.asarray(codes)
    if codes.dtype != np.uint8 or codes.ndim != 2:
        raise ValueError(f"{label} must be a rank-2 uint8 array, got {codes.dtype}{codes.shape}")
    return codes


def _k_blocks(
    a_codes: np.ndarray, b_codes: np.ndarray
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """Both operands' units, K_BLOCK_ELEMENTS per operand at a time (NaN codes refused)."""
    a = _checked_codes(a_codes, "a_codes")
    b = _checked_codes(b_codes, "b_codes")
    k = _check_k(a, b)
    step = max(1, K_BLOCK_ELEMENTS // max(a.shape[0], b.shape[0], 1))
    for lo in range(0, k, step):
        yield (
            _checked_units(a[:, lo : lo + step], "a_codes"),
            _checked_units(b[:, lo : lo + step], "b_codes"),
        )


def exact_acc_units(a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """A·Bᵀ exactly, as integers in 2**-18 units: int64, or object beyond K = 2**26.

    Works over K in blocks of at most K_BLOCK_ELEMENTS codes per operand, so
    extra memory is O(M·N + block) for any K; each block's int64 sum is exact
    (a block has at most 2**17 <= 2**26 columns).

    Raises:
        ValueError: for non-uint8 or non-2-D codes, NaN codes, or differing K.
    """
    k = _check_k(_checked_codes(a_codes, "a_codes"), _checked_codes(b_codes, "b_codes"))
    shape = (np.shape(a_codes)[0], np.shape(b_codes)[0])
    acc: np.ndarray = np.zeros(shape, np.int64 if k <= INT64_MAX_K else object)
    for a, b in _k_blocks(a_codes, b_codes):
        part = a @ b.T
        acc += part if acc.dtype == np.int64 else part.astype(object)
    return acc


def exact_acc(a_codes: np.ndarray, b_codes: np.ndarray) -> npt.NDArray[np.float64]:
    """A·Bᵀ in float64: exact for K <= 2**17 (float64 BLAS, any order).

    Beyond 2**17 the exact integer sum is rounded once to float64 (RNE). Both
    paths work over K in blocks, so memory does not grow with K.

    Raises:
        ValueError: for non-uint8 or non-2-D codes, NaN codes, or differing K.
    """
    k = _check_k(_checked_codes(a_codes, "a_codes"), _checked_codes(b_codes, "b_codes"))
    if k <= EXACT_F64_MAX_K:
        scale = 2.0**-9  # values n * 2**-9 are exact in float64, and so is every partial sum
        exact = np.zeros((np.shape(a_codes)[0], np.shape(b_codes)[0]), np.float64)
        for a, b in _k_blocks(a_codes, b_codes):
            exact += (a * scale) @ (b * scale).T
        return exact
    units = exact_acc_units(a_codes, b_codes)
    return np.ldexp(units.astype(np.float64), UNIT_EXP)


@dataclass(frozen=True, eq=False)
class SeedReference:
    """The seed's lossy double reference for one product (G3)."""

    want: npt.NDArray[np.float64]
    abs_sum: npt.NDArray[np.float64]
    tolerance: npt.NDArray[np.float64]
    alpha: Any  # float, or [M,N] float64 for one scale per row of A or column of B


ACC_EPSILON = {"float32": FLT_EPSILON, "bfloat16": 2.0**-7, "float16": 2.0**-10}
OUT_RELATIVE = {"f32": 0.0, "bf16": 0.004, "f16": 2.0**-10}  # about two units of the last place


def seed_reference(
    a_codes: np.ndarray,
    b_codes: np.ndarray,
    s_in: Any,
    s_w: Any,
    out_dtype: str,
    accumulator: str = "float32",
) -> SeedReference:
    """``want = alpha * acc`` in double, ``Σ|terms|`` and the seed's tolerance.

    Tolerance ``4·K·eps·|alpha|·Σ|terms|`` (eps = FLT_EPSILON, or the
    epsilon of a bfloat16 or float16 ``accumulator``), plus ``0.004·|want|``
    for bf16 output and ``2**-10·|want|`` for f16; ``alpha = f32(s_in * s_w)``,
    per output when ``s_in`` has one scale per row of A and ``s_w`` one per
    row of B.

    Raises:
        ValueError: as :func:`exact_acc`, or for an unknown ``out_dtype`` or accumulator.
    """
    if out_dtype not in OUT_RELATIVE or accumulator not in ACC_EPSILON:
        raise ValueError(f"out_dtype {out_dtype!r}, accumulator {accumulator!r}: unknown")
    acc = exact_acc(a_codes, b_codes)
    a = np.abs(_checked_units(a_codes, "a_codes") * 2.0**-9)
    b = np.abs(_checked_units(b_codes, "b_codes") * 2.0**-9)
    abs_sum = a @ b.T
    si, sw = np.asarray(s_in, np.float32), np.asarray(s_w, np.float32)
    if si.ndim == sw.ndim == 0:
        alpha: Any = float(np.float32(si * sw))
    else:
        alpha = (si.reshape(-1, 1) * sw.reshape(1, -1)).astype(np.float64)
    want = alpha * acc
    k = a.shape[1]
    tol = 4.0 * k * ACC_EPSILON[accumulator] * np.abs(alpha) * abs_sum
    if OUT_RELATIVE[out_dtype]:
        tol = tol + OUT_RELATIVE[out_dtype] * np.abs(want)
    return SeedReference(want, abs_sum, tol, alpha)
