"""The compiled twin of the amax split: two scale rules' scale steps and their compare, one loop.

:func:`fp8lab.studies.ecosystem.amax_split` counts, over float32 amax
patterns, where two rules store different scales and where they scale some
``x`` differently. Its numpy twin runs each rule's scale step through
:func:`fp8lab.kernels.scheme.amax_scales` on arrays; this module runs the same
steps one pattern at a time in a numba loop, from a rule's fields read once
into plain values compiled into the loop (:func:`rule_program`), and gives the same per-pattern
verdicts: ``tests/studies/test_amax_split_compiled.py`` compares the two
pattern by pattern, and a full sweep must find the published counts
(:data:`fp8lab.studies.ecosystem.FULL_SPLITS`).

Every field the scale step reads on float32 input is covered: the amax's NaN
handling, floor and upper bound, a float32 or float64 quotient, divisor or
multiplier, divide or reciprocal, minimum and zero scales, the power-of-two
steps (exponent bits or ``log2``), and the e8m0 byte's zero, infinity and
NaN. A signalling NaN amax is a NaN like any other: ``fmax`` gives the other
operand, as numpy's vector loop does (its scalar loop, for an array's last few
elements, gives NaN: counts are compared over lengths that are multiples of 16).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from fp8lab.specs.formats import get_format
from fp8lab.specs.scale_rules import (
    AmaxNan,
    Apply,
    E8m0Exponent,
    E8m0Inf,
    E8m0Nan,
    E8m0NanBlock,
    E8m0Zero,
    Pow2,
    Quotient,
    ScaleRule,
    Storage,
)

__all__ = [
    "COMPILED",
    "ScaleProgram",
    "rule_program",
    "split_counts_compiled",
    "split_verdicts_compiled",
]

numba: ModuleType | None
try:
    import numba
except ImportError:  # pragma: no cover - numba is a pinned dependency
    numba = None

COMPILED = numba is not None  # whether the compiled loop runs here


class ScaleProgram(NamedTuple):
    """One rule's scale step on a float32 amax, every field it reads, as plain values.

    Flags are bools, constants floats (float32 ones exact in float64): the loop
    is compiled with them as constants, so numba folds every branch on them.
    """

    e8m0: bool  # the rule stores an e8m0 byte (OCP_FLOOR or RCEIL), else a float32 scale
    skip: bool  # amax NaN skipped (fmax, fmin), else propagated (maximum, minimum)
    wide: bool  # the quotient in float64
    has_floor: bool
    floor: float  # the amax floor, in the quotient's type
    has_ub: bool
    ub: float  # the amax upper bound, in the quotient's type
    ceil_bits: bool  # a float scale rounded up to a power of two by its bits
    ocp_floor: bool  # e8m0: the amax's exponent less the format's, else the quotient's, up
    log2: bool  # the e8m0 exponent from float log2, else from the exponent bits
    recip_from: bool  # the quotient as amax * (1 / M), else by dividing
    multiplier: bool  # stored as a multiplier M / amax, else as a divisor amax / M
    top: float  # the element format's largest finite value M (a float32)
    emax: int  # floor(log2(M))
    has_min: bool
    min_scale: float  # a float32
    has_zero: bool
    zero_scale: float  # a float32
    nan_byte: int
    inf_max: bool  # an infinite amax or quotient gives byte 254
    inf_bits: bool  # ... its exponent bits (else byte 255)
    divide: bool  # x / scale
    reciprocal: bool  # x * (1 / scale), else x * scale (when not divide)
    byte0: float  # the factor of e8m0 byte 0
    byte255: float  # the factor of e8m0 byte 255: 0 or NaN
    exact: bool = True  # log2 taken where the bits do not settle the exponent, else such an
    # amax is left to a second pass (its byte -1): see _make_pair


_BYTE0 = {E8m0Zero.OCP: 2.0**127, E8m0Zero.MIN_NORMAL: 2.0**126, E8m0Zero.ONE: 1.0}


def rule_program(rule: ScaleRule) -> ScaleProgram:
    """``rule``'s scale step on a float32 amax as the loop reads it.

    An e8m0 rule's quotient is float32 (the rule type refuses a float64 one), so
    ``wide`` is read by float scales only.
    """
    wide = np.float64 if rule.quotient is Quotient.FLOAT64 else np.float32
    top = np.float32(float(get_format(rule.element).max))
    return ScaleProgram(
        e8m0=rule.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL),
        skip=rule.amax_nan is AmaxNan.SKIP,
        wide=wide is np.float64,
        has_floor=rule.amax_floor is not None,
        floor=float(wide(rule.amax_floor or 0.0)),
        has_ub=rule.scale_ub is not None,
        ub=float(wide(rule.scale_ub or 0.0)),
        ceil_bits=rule.pow2 is Pow2.CEIL_BITS,
        ocp_floor=rule.pow2 is Pow2.OCP_FLOOR,
        log2=rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32,
        recip_from=rule.scale_from is Apply.RECIPROCAL,
        multiplier=rule.storage is Storage.MULTIPLIER,
        top=float(top),
        emax=int(np.floor(np.log2(top))),
        has_min=rule.min_scale is not None,
        min_scale=float(np.float32(rule.min_scale or 0.0)),
        has_zero=rule.zero_scale is not None,
        zero_scale=float(np.float32(rule.zero_scale or 0.0)),
        nan_byte=0 if rule.e8m0_nan is E8m0Nan.ZERO_BYTE else 255,
        inf_max=rule.e8m0_inf is E8m0Inf.MAX_BYTE,
        inf_bits=rule.e8m0_inf is E8m0Inf.EXPONENT_BITS,
        divide=rule.apply is Apply.DIVIDE,
        reciprocal=rule.apply is Apply.RECIPROCAL,
        byte0=_BYTE0[rule.e8m0_zero],
        byte255=0.0 if rule.e8m0_nan_block is E8m0NanBlock.FINITE_TO_ZERO else math.nan,
    )


_BLOCK = 1 << 18  # patterns per block counted


def _jit(fn: Callable[..., Any]) -> Any:
    return numba.njit(cache=True, error_model="numpy")(fn)  # type: ignore[union-attr]


if numba is not None:

    @_jit
    def _pick(a: Any, b: Any, skip: bool, high: bool) -> Any:  # pragma: no cover - compiled
        """np.fmax, np.fmin (skip: a NaN gives the other) or np.maximum, np.minimum (high, low)."""
        if a != a:
            return b if skip else a
        if b != b:
            return a if skip else b
        return a if (a >= b if high else a <= b) else b

    @_jit
    def _clip_int(v: Any, lo: int, hi: int) -> int:  # pragma: no cover - compiled
        """np.clip(np.nan_to_num(v, nan=0), lo, hi) of a float, as an integer."""
        if v != v:
            return 0
        if v <= lo:
            return lo
        if v >= hi:
            return hi
        return int(v)

    @_jit
    def _log2_f32(v: np.float32) -> np.float32:  # pragma: no cover - compiled
        """np.log2(v.astype(float64)).astype(float32) of one non-negative float32 or NaN."""
        if v != v:
            return np.float32(np.nan)
        if v == 0:
            return np.float32(-np.inf)
        return np.float32(math.log2(np.float64(v)))

    @_jit
    def _f32_bits(v: Any) -> Any:  # pragma: no cover - compiled
        return np.float32(v).view(np.uint32)

    @_jit
    def _f64_bits(v: Any) -> Any:  # pragma: no cover - compiled
        return np.float64(v).view(np.uint64)

    @_jit
    def _factor(byte: int, p: ScaleProgram) -> float:  # pragma: no cover - compiled
        """The float64 factor of an e8m0 byte (fp8lab.studies.ecosystem._e8m0_factor)."""
        if byte == 0:
            return p.byte0
        if byte == 255:
            return p.byte255
        return np.uint64(np.uint64(1150 - byte) << np.uint64(52)).view(np.float64)  # 2**(127-b)

    @_jit
    def _bound(w: Any, floor: Any, ub: Any, p: ScaleProgram) -> Any:  # pragma: no cover - compiled
        """The amax floored and bounded in its own type (fp8lab.kernels.scheme._bounded)."""
        if p.has_floor:
            w = _pick(w, floor, p.skip, True)
        if p.has_ub:
            w = _pick(w, ub, p.skip, False)
        return w

    @_jit
    def _quotient(  # pragma: no cover - compiled
        w: Any, top: Any, one: Any, p: ScaleProgram
    ) -> Any:
        """A divisor ``amax / M`` or a multiplier ``M / amax``, in w's type (scheme._scale)."""
        num, den = (top, w) if p.multiplier else (w, top)
        return num * (one / den) if p.recip_from else num / den

    @_jit
    def _byte(x: np.float32, p: ScaleProgram) -> int:  # pragma: no cover - compiled
        """An e8m0 rule's byte for one amax (fp8lab.kernels.scheme._bounded, then _e8m0)."""
        a = _bound(x, np.float32(p.floor), np.float32(p.ub), p)
        if p.ocp_floor:  # the amax's exponent less the format's
            ref = a
            bits = _f32_bits(a)
            biased = int((bits >> 23) & 0xFF)
            if p.log2 and 1 <= biased <= 254 and (bits & np.uint32(0x7FFFFF)) < 0x7FF000:
                # log2(a) lies in [b - 127, b - 126 - 3e-4]; float32 rounding (at most
                # 2**-18 here) keeps it there, and log2 of a power of two is exact: the
                # floor is b - 127, as by the bits
                exp = biased - 127
            elif p.log2 and not p.exact:
                return -1
            elif p.log2:
                exp = _clip_int(np.floor(_log2_f32(a)), -200, 200)
            else:
                exp = biased - 127
            byte = min(max(exp - p.emax, -127), 128) + 127
        else:  # rceil: the quotient's exponent, rounded up
            top = np.float32(p.top)
            d = a * (np.float32(1) / top) if p.recip_from else a / top
            ref = d
            bits = _f32_bits(d)
            e = np.int32((bits >> 23) & 0xFF)
            mant = bits & np.uint32(0x7FFFFF)
            if p.log2 and 1 <= e <= 254 and mant > np.uint32(4096):
                # log2(d) lies in (e - 127, e - 126), more than 7e-4 inside it; float32
                # rounding (at most 2**-18 here) keeps it inside: its ceiling is e - 126
                byte = min(int(e) - 126, 127) + 127
            elif p.log2 and not p.exact:
                return -1
            elif p.log2:
                byte = _clip_int(np.ceil(_log2_f32(d)), -127, 127) + 127
            else:
                up = (mant > np.uint32(0x400000)) if e == 0 else (mant != 0)
                byte = int(e) + int(up)
        if ref != ref:
            return p.nan_byte
        if not p.inf_bits and np.isinf(ref):
            return 254 if p.inf_max else 255
        return int(byte) & 0xFF

    @_jit
    def _scale(x: np.float32, p: ScaleProgram) -> np.float32:  # pragma: no cover - compiled
        """A float rule's scale for one amax (fp8lab.kernels.scheme._bounded, _scale, after)."""
        if p.wide:
            w = _bound(np.float64(x), np.float64(p.floor), np.float64(p.ub), p)
            s = np.float32(_quotient(w, np.float64(p.top), np.float64(1), p))
        else:
            w32 = _bound(x, np.float32(p.floor), np.float32(p.ub), p)
            s = _quotient(w32, np.float32(p.top), np.float32(1), p)
        if p.has_min:
            s = _pick(s, np.float32(p.min_scale), p.skip, True)
        if p.has_zero and s == 0:
            s = np.float32(p.zero_scale)
        if p.ceil_bits:  # fmax(|s|, 1e-10), rounded up to a power of two by its bits
            bits = _f32_bits(_pick(abs(s), np.float32(1e-10), True, True))
            up = ((bits >> 23) & np.uint32(0xFF)) + np.uint32((bits & np.uint32(0x7FFFFF)) != 0)
            s = np.uint32(up << np.uint32(23)).view(np.float32)
        return np.float32(s)

    @_jit
    def _verdict(  # pragma: no cover - compiled
        x: np.float32, pa: ScaleProgram, pb: ScaleProgram
    ) -> tuple[bool, bool, bool]:
        """``(stored scales differ, some x scaled apart, left to the exact pass)`` for one amax.

        ecosystem._differs on ecosystem._stored, and ecosystem._applied_differs
        on ecosystem._applied. The third is True only where a program that is
        not ``exact`` needs log2 (the first two are then False).
        """
        if pa.e8m0 != pb.e8m0:
            return True, True, False
        if pa.e8m0:
            ba, bb = _byte(x, pa), _byte(x, pb)
            if ba < 0 or bb < 0:
                return False, False, True
            same = _f64_bits(_factor(ba, pa)) == _f64_bits(_factor(bb, pb))
            return ba != bb, not same, False
        sa, sb = _scale(x, pa), _scale(x, pb)
        if pa.multiplier == pb.multiplier:
            split = _f32_bits(sa) != _f32_bits(sb)
        else:
            split = np.float64(sa) * np.float64(sb) != 1.0  # a NaN product too
        va = np.float32(1) / sa if pa.reciprocal else sa
        vb = np.float32(1) / sb if pb.reciprocal else sb
        if pa.divide == pb.divide:
            return split, _f32_bits(va) != _f32_bits(vb), False
        d, m = (va, vb) if pa.divide else (vb, va)
        bits = _f32_bits(d)
        e = (bits >> 23) & np.uint32(0xFF)
        pow2 = (bits & np.uint32(0x7FFFFF)) == 0 and e >= 1 and e <= 254
        return split, not (pow2 and np.float64(d) * np.float64(m) == 1.0), False


def _make_pair(pa: ScaleProgram, pb: ScaleProgram) -> Any:
    """The verdict loop of one pair: a closure over plain values only.

    Where a program takes its e8m0 exponent from log2, the loop runs in two
    passes: the first with programs that leave to the second the few amaxes whose
    exponent the bits do not settle, the second takes log2 for those alone. In one
    pass the compiler evaluates log2 for every amax (it may, log2 having no side
    effects, and does so to vectorise the loop): some six times the work.
    """
    qa, qb = pa._replace(exact=not pa.log2), pb._replace(exact=not pb.log2)
    two_pass = pa.log2 or pb.log2

    def verdicts(  # pragma: no cover - compiled
        lo: int, split: np.ndarray, moved: np.ndarray
    ) -> None:
        n = split.size
        rare = np.empty(n, np.bool_)
        for i in range(n):
            split[i], moved[i], rare[i] = _verdict(np.uint32(lo + i).view(np.float32), qa, qb)
        if two_pass:
            for j in np.flatnonzero(rare):
                split[j], moved[j], _ = _verdict(np.uint32(lo + j).view(np.float32), pa, pb)

    return verdicts


@cache
def _pair(pa: ScaleProgram, pb: ScaleProgram) -> Any:
    """:func:`_make_pair` compiled once per pair of programs (numba caches it on disk)."""
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")  # type: ignore[union-attr]
    return jit(_make_pair(pa, pb))


def split_verdicts_compiled(
    own: ScaleRule, spec: ScaleRule, lo: int, hi: int
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per amax pattern of ``[lo, hi)``: ``(stored scales differ, applied scales differ)``."""
    split = np.empty(hi - lo, np.bool_)
    moved = np.empty(hi - lo, np.bool_)
    _pair(rule_program(own), rule_program(spec))(lo, split, moved)
    return split, moved


def split_counts_compiled(
    own: ScaleRule, spec: ScaleRule, lo: int, hi: int
) -> tuple[int, int, int, int]:
    """``(scale splits, applied splits, splits at a NaN amax, first split or -1)``, ``[lo, hi)``.

    The verdicts of one block of patterns at a time, counted.
    """
    verdicts = _pair(rule_program(own), rule_program(spec))
    split, moved = np.empty(_BLOCK, np.bool_), np.empty(_BLOCK, np.bool_)
    n_split, n_moved, n_nan, first = 0, 0, 0, -1
    for a in range(lo, hi, _BLOCK):
        n = min(_BLOCK, hi - a)
        verdicts(a, split[:n], moved[:n])
        n_moved += int(np.count_nonzero(moved[:n]))
        at = np.flatnonzero(split[:n])
        if at.size:
            n_split += at.size
            first = a + int(at[0]) if first < 0 else first
            n_nan += int(np.count_nonzero(((a + at) & 0x7FFFFFFF) > 0x7F800000))
    return n_split, n_moved, n_nan, first
