"""The float32 fast path: a 2**17-entry table keyed on the top 16 bits plus a sticky bit.

Why the key decides the result: every catalogue format keeps at most 3
mantissa bits, so RNE of a float32 needs its sign, exponent, the kept bits, the
guard bit (all inside the top 16 bits, which hold 7 mantissa bits) and whether
any lower bit is set (the sticky bit). Subnormal targets move the rounding
point up, never down, so the argument holds there too; float32 subnormals all
round to ±0, except in e8m0fnu, whose smallest value 2**-127 is one (its
rounding bits sit in the top 16 bits as well). The table is filled by the
array twin on one representative per key, and the exhaustive proof checks
the claim on all 2**32 inputs.

The lookup has two engines with one contract: a numba loop (fast) and plain
numpy (its twin, used when numba is absent or ``engine="numpy"``).
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.policy import special_codes
from fp8lab.codecs.rne_array import encode_float32
from fp8lab.specs.format import FormatSpec
from fp8lab.specs.nan import NanPolicy

__all__ = ["ENGINES", "encode_bfloat16_bits", "encode_float32_bits", "float32_table"]

numba: ModuleType | None
try:
    import numba
except ImportError:  # pragma: no cover - numba is a pinned dependency
    numba = None

ENGINES = ("numba", "numpy") if numba is not None else ("numpy",)
_NUMPY_BLOCK = 1 << 16


@cache
def float32_table(fmt: FormatSpec, saturate: bool, nan: NanPolicy) -> npt.NDArray[np.uint8]:
    """The code for every key ``(bits >> 16) << 1 | (bits & 0xFFFF != 0)``; read-only."""
    keys = np.arange(1 << 17, dtype=np.uint32)
    representatives = ((keys >> 1) << 16) | (keys & 1)
    codes = special_codes(fmt, saturate=saturate, nan=nan)
    table = encode_float32(representatives.view(np.float32), fmt, codes)
    table.setflags(write=False)
    return table


def _lookup_numpy(bits: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    key = np.empty(min(bits.size, _NUMPY_BLOCK), np.uint32)
    sticky = np.empty(key.size, np.bool_)
    for start in range(0, bits.size, _NUMPY_BLOCK):
        block = bits[start : start + _NUMPY_BLOCK]
        k, s = key[: block.size], sticky[: block.size]
        np.right_shift(block, 16, out=k)
        np.left_shift(k, 1, out=k)
        np.not_equal(block & np.uint32(0xFFFF), 0, out=s)
        np.bitwise_or(k, s, out=k)
        np.take(table, k, out=out[start : start + block.size])


if numba is not None:

    @numba.njit(cache=True, nogil=True, boundscheck=False)  # type: ignore[untyped-decorator]
    def _lookup_numba(
        bits: np.ndarray, table: np.ndarray, out: np.ndarray
    ) -> None:  # pragma: no cover - compiled
        for i in range(bits.size):
            b = bits[i]
            out[i] = table[((b >> 16) << 1) | (1 if (b & 0xFFFF) != 0 else 0)]


def encode_float32_bits(
    bits: npt.NDArray[np.uint32], table: npt.NDArray[np.uint8], engine: str = ENGINES[0]
) -> npt.NDArray[np.uint8]:
    """Encode C-contiguous float32 bit patterns through ``table``.

    Raises:
        ValueError: for an engine that is not available here.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r} not available; choose from {ENGINES}")
    flat = bits.reshape(-1)
    out = np.empty(flat.size, np.uint8)
    if engine == "numba":
        _lookup_numba(flat, table, out)
    else:
        _lookup_numpy(flat, table, out)
    return out.reshape(bits.shape)


def encode_bfloat16_bits(
    bits: npt.NDArray[np.uint16], table: npt.NDArray[np.uint8]
) -> npt.NDArray[np.uint8]:
    """Encode bfloat16 bit patterns: a bfloat16 is a float32 whose low 16 bits are zero."""
    return np.take(table, bits.astype(np.uint32) << 1)
