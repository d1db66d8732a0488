"""The fused brute-force pass: both built-in kernels and the compare in one compiled loop.

The built-in ``reciprocal`` and ``divide`` kernels (:mod:`fp8lab.detect.pair`)
scale in float32 (``q = fl(x * fl(1/s))``, ``d = fl(x / s)``) and encode with
saturating RNE and the canonical NaN through the float32 table
(:func:`fp8lab.codecs.table.float32_table`), whose code is a function of the
key ``(bits >> 16) << 1 | sticky``. So two scaled values whose keys are equal
get the same code, and only inputs with differing keys need a table lookup.
The loop scales a block of patterns, counts differing keys (a vectorisable
reduction) and looks up both codes only in blocks that have one.

Most blocks are not scaled at all. Rounding and the table are monotone: within
a block of one sign and no NaN, ``|x|`` grows with the pattern, so every scaled
value lies between the block's first and last one, and where each code's keys
form one run per sign (:func:`runs_per_sign`, checked once per table) a block
whose two ends scale to one code both ways scales to it everywhere. Only the
blocks that straddle a rounding boundary are computed: about one in eight at a
scale near 1, which also keeps float32-subnormal operands and results (slow
on CPUs that take a microcode assist for them) out of the vector loop. The result is
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


def runs_per_sign(table: npt.NDArray[np.uint8]) -> bool:
    """Whether each code's non-NaN keys of each sign form one run, in key (magnitude) order.

    Keys below ``0xFF00`` of a sign half are its finite values, 0xFF00 its inf.
    Where this holds, a block of one sign whose ends scale to keys of one code
    scales, value by value, to that code: the fused loop skips such blocks.
    """
    for half in (table[:0xFF01], table[0x10000:0x1FF01]):
        runs = 1 + int(np.count_nonzero(half[1:] != half[:-1]))
        if runs != np.unique(half).size:
            return False
    return True


_RUNS: dict[int, tuple[npt.NDArray[np.uint8], bool]] = {}


def _runs_per_sign(table: npt.NDArray[np.uint8]) -> bool:
    """:func:`runs_per_sign`, once per table object (the cached tables are read-only)."""
    known = _RUNS.get(id(table))
    if known is not None and known[0] is table and not table.flags.writeable:
        return known[1]
    if len(_RUNS) > 64:
        _RUNS.clear()
    _RUNS[id(table)] = (table, runs_per_sign(table))
    return _RUNS[id(table)][1]


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
        skip: bool,
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
        ends = np.empty(2, np.uint32)
        ends_x = ends.view(np.float32)
        eq = np.empty(2, np.float32)
        ed = np.empty(2, np.float32)
        eqb, edb = eq.view(np.uint32), ed.view(np.uint32)
        for lo in range(start, stop, _BLOCK):
            m = min(_BLOCK, stop - lo)
            base = np.uint32(lo)
            last = np.uint32(lo + m - 1)
            if skip and (base >> 31) == (last >> 31) and (last & 0x7FFFFFFF) <= 0x7F800000:
                # one sign, no NaN: every scaled value lies between those of the block's
                # ends, so where the four end codes agree every code of the block does
                ends[0], ends[1] = base, last
                for j in range(2):
                    eq[j] = ends_x[j] * r
                    ed[j] = ends_x[j] / s
                kq0 = ((eqb[0] >> 16) << 1) | ((eqb[0] & 0xFFFF) != 0)
                kq1 = ((eqb[1] >> 16) << 1) | ((eqb[1] & 0xFFFF) != 0)
                kd0 = ((edb[0] >> 16) << 1) | ((edb[0] & 0xFFFF) != 0)
                kd1 = ((edb[1] >> 16) << 1) | ((edb[1] & 0xFFFF) != 0)
                finite = max(kq0 & 0xFFFF, kq1 & 0xFFFF, kd0 & 0xFFFF, kd1 & 0xFFFF) <= 0xFF00
                c = table[kq0]
                if finite and table[kq1] == c and table[kd0] == c and table[kd1] == c:
                    continue
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
    table = fused_table(fmt)
    found: npt.NDArray[np.uint32] = _fused_loop(
        start, stop, r, s, a == "divide", b == "divide", table, _runs_per_sign(table)
    )
    return found
