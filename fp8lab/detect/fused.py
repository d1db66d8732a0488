"""The fused brute-force pass: both built-in kernels and the compare in one compiled loop.

The built-in ``reciprocal`` and ``divide`` kernels (:mod:`fp8lab.detect.pair`)
scale in float32 (``q = fl(x * fl(1/s))``, ``d = fl(x / s)``) and encode with
saturating RNE and the canonical NaN through the float32 table
(:func:`fp8lab.codecs.table.float32_table`), whose code is a function of the
key ``(bits >> 16) << 1 | sticky``. So two scaled values whose keys are equal
get the same code, and only inputs with differing keys need a table lookup.
The loop scales a block of patterns, counts differing keys (a vectorisable
reduction) and looks up both codes only in blocks that have one. The result is
the same set of patterns as :func:`fp8lab.detect.brute.exposing_in_chunk` (its
numpy twin); tests/detect/test_brute_fused.py compares the two bit for bit.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.table import float32_table
from fp8lab.detect.pair import BUILTIN_PAIR_KERNELS
from fp8lab.kernels import validate_scale
from fp8lab.specs.formats import get_format
from fp8lab.specs.nan import NAN_POLICIES

__all__ = ["BRUTE_ENGINES", "exposing_fused", "fused_applies", "fused_table"]

BRUTE_ENGINES = ("auto", "fused", "numpy")

numba: ModuleType | None
try:
    import numba
except ImportError:  # pragma: no cover - numba is a pinned dependency
    numba = None

_BLOCK = 512  # four float32 buffers of this size stay in L1


def fused_applies(a: object, b: object) -> bool:
    """Whether the fused pass computes ``a`` vs ``b``: both built-in kernels, by name."""
    return all(isinstance(k, str) and k in BUILTIN_PAIR_KERNELS for k in (a, b))


def fused_table(fmt: str) -> npt.NDArray[np.uint8]:
    """The table the built-in kernels encode through: saturating RNE, canonical NaN."""
    return float32_table(get_format(fmt), True, NAN_POLICIES["canonical"])


if numba is not None:

    @numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")  # type: ignore[untyped-decorator]
    def _fused_loop(
        start: int,
        stop: int,
        r: np.float32,
        s: np.float32,
        a_div: bool,
        b_div: bool,
        table: np.ndarray,
    ) -> np.ndarray:  # pragma: no cover - compiled
        bits = np.empty(_BLOCK, np.uint32)
        x = bits.view(np.float32)
        q = np.empty(_BLOCK, np.float32)
        d = np.empty(_BLOCK, np.float32)
        qb, db = q.view(np.uint32), d.view(np.uint32)
        ab = db if a_div else qb
        bb = db if b_div else qb
        out = np.empty(256, np.uint32)
        found = 0
        for lo in range(start, stop, _BLOCK):
            m = min(_BLOCK, stop - lo)
            base = np.uint32(lo)
            for i in range(m):
                bits[i] = base + np.uint32(i)
            for i in range(m):
                q[i] = x[i] * r
                d[i] = x[i] / s
            differ = 0
            for i in range(m):
                ka = ((ab[i] >> 16) << 1) | ((ab[i] & 0xFFFF) != 0)
                kb = ((bb[i] >> 16) << 1) | ((bb[i] & 0xFFFF) != 0)
                differ += ka != kb
            if differ == 0:
                continue
            for i in range(m):
                ka = ((ab[i] >> 16) << 1) | ((ab[i] & 0xFFFF) != 0)
                kb = ((bb[i] >> 16) << 1) | ((bb[i] & 0xFFFF) != 0)
                if ka != kb and table[ka] != table[kb]:
                    if found == out.size:
                        grown = np.empty(2 * out.size, np.uint32)
                        grown[:found] = out[:found]
                        out = grown
                    out[found] = bits[i]
                    found += 1
        return out[:found].copy()


def exposing_fused(
    a: object, b: object, fmt: str, scale: float, start: int, stop: int
) -> npt.NDArray[np.uint32]:
    """Patterns in ``[start, stop)`` where built-in kernels ``a`` and ``b`` emit different bytes.

    Same contract and result as :func:`fp8lab.detect.brute.exposing_in_chunk`
    for the built-in pair, ascending.

    Raises:
        ValueError: for a kernel that is not built in, an invalid scale, or no numba.
    """
    if not fused_applies(a, b):
        raise ValueError(
            f"the fused engine runs only the built-in kernels "
            f"{', '.join(BUILTIN_PAIR_KERNELS)}, got {a!r}, {b!r}"
        )
    if numba is None:  # pragma: no cover - numba is a pinned dependency
        raise ValueError("the fused engine needs numba")
    s = validate_scale(scale)
    r = np.float32(np.float32(1.0) / s)
    found: npt.NDArray[np.uint32] = _fused_loop(
        start, stop, r, s, a == "divide", b == "divide", fused_table(fmt)
    )
    return found
