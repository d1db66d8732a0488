"""Branch-free round-to-nearest-even on float32 bits (the ``bits`` engine).

The arithmetic of the array twin (:mod:`fp8lab.codecs.rne_array`) on 32-bit
integers: for a finite float32 ``sig * 2**(e - 150)`` the quantum exponent is
``q = max(e - 127, minexp) - M``, ``n = RNE(sig / 2**(q - e + 150))`` by shifts
(the shift is at least ``23 - M`` and capped at 25, where every ``sig < 2**24``
is below half a quantum), and the magnitude's linear index is
``(q - qmin) * 2**M + n`` (OFP8 §4.2, IEEE 754 §4.3.1). Zero, overflow, ±inf,
NaN and an unsigned format's negatives are selects on the resolved policy
codes, never branches, so LLVM vectorises the loop. Every constant is read off
the format's fields and the policy; nothing depends on a format's name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from fp8lab.codecs.policy import SpecialCodes
from fp8lab.specs.format import FormatSpec

__all__ = ["BitsParams", "bits_available", "bits_params", "encode_float32_bits_rne"]

numba: ModuleType | None
try:
    import numba
except ImportError:  # pragma: no cover - numba is a pinned dependency
    numba = None


class BitsParams(NamedTuple):
    """The integer constants of one format and policy, as the kernel takes them."""

    mant: int  # M, mantissa bits
    minexp: int  # exponent of the smallest normal
    index_offset: int  # 2**M without subnormals (codes start at n = 2**M), else 0
    max_code: int
    sign_bit: int
    zero_by_index: int  # 1: zero is index 0; 0: zero is a float32 ±0 (no zero code)
    unsigned: int  # 1: every negative nonzero finite is ``negative``
    negative: int
    zero_pos: int
    zero_neg: int
    overflow_pos: int
    overflow_neg: int
    inf_pos: int
    inf_neg: int
    nan_pos: int
    nan_neg: int


def bits_params(fmt: FormatSpec, codes: SpecialCodes) -> BitsParams:
    """The kernel's constants for ``fmt`` under the resolved policy ``codes``."""
    return BitsParams(
        mant=fmt.mantissa_bits,
        minexp=fmt.minexp,
        index_offset=0 if fmt.has_subnormals else 1 << fmt.mantissa_bits,
        max_code=fmt.max_code,
        sign_bit=fmt.sign_bit,
        zero_by_index=int(fmt.has_zero),
        unsigned=int(codes.negative is not None),
        negative=codes.negative or 0,
        zero_pos=codes.zero[0],
        zero_neg=codes.zero[1],
        overflow_pos=codes.overflow[0],
        overflow_neg=codes.overflow[1],
        inf_pos=codes.inf[0],
        inf_neg=codes.inf[1],
        nan_pos=codes.nan[0],
        nan_neg=codes.nan[1],
    )


def bits_available() -> bool:
    """Whether the ``bits`` engine can run here (it needs numba)."""
    return numba is not None


def _shr(a: Any, s: Any) -> Any:
    """``a >> s`` in 32 bits, for ``0 <= s < 32``."""
    return np.int32(a >> s)


def _shl(a: Any, s: Any) -> Any:
    """``a << s`` in 32 bits, for ``0 <= s < 32``."""
    return np.int32(a << s)


def _clz(a: Any) -> Any:
    """Leading zero bits of a 32-bit ``a >= 0`` (32 for 0)."""
    return np.int32(32 - int(a).bit_length())


if numba is not None:
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import types as _nbtypes

    # numba widens int32 shifts to int64, which halves the vector lanes; these
    # emit the 32-bit instruction (the callers keep 0 <= s < 32).
    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _shr_i32(typingctx: Any, a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbtypes.int32(_nbtypes.int32, _nbtypes.int32)
        return sig, lambda ctx, builder, sg, args: builder.ashr(args[0], args[1])

    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _shl_i32(typingctx: Any, a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbtypes.int32(_nbtypes.int32, _nbtypes.int32)
        return sig, lambda ctx, builder, sg, args: builder.shl(args[0], args[1])

    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _clz_i32(typingctx: Any, a: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbtypes.int32(_nbtypes.int32)
        zero_defined = ir.Constant(ir.IntType(1), 0)
        return sig, lambda ctx, builder, sg, args: builder.ctlz(args[0], zero_defined)

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def _clz(a: Any) -> Any:  # pragma: no cover - compiled
        return _clz_i32(a)

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def _shr(a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        return _shr_i32(a, s)

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def _shl(a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        return _shl_i32(a, s)


def _round_step(sig: Any, shift: Any) -> Any:
    """RNE of ``sig / 2**shift`` for ``1 <= shift < 32``, ``sig < 2**30``: add half - 1 + lsb."""
    i32 = np.int32
    half_less = i32(_shl(i32(1), i32(shift - i32(1))) - i32(1))
    odd = i32(_shr(sig, shift) & i32(1))
    return _shr(i32(sig + half_less + odd), shift)


if numba is not None:
    _round_step = numba.njit(inline="always")(_round_step)


def _make_kernel(params: BitsParams) -> Callable[[np.ndarray, np.ndarray], None]:
    """The loop with ``params`` as constants; plain Python (compiled by :func:`_kernel`)."""
    i32 = np.int32
    mant, minexp, index_offset, max_code, sign_bit = (i32(p) for p in params[:5])
    zero_by_index, unsigned, negative = bool(params[5]), bool(params[6]), i32(params[7])
    zero, overflow, inf, nan = (
        (i32(pos), i32(pos ^ neg)) for pos, neg in zip(params[8::2], params[9::2], strict=True)
    )
    # below half the smallest subnormal, 2**-126 and every float32 subnormal round to zero
    exact_tiny = minexp - mant - 1 <= -126
    # a negative input's code is the positive one xor a per-class constant;
    # an unsigned format's negatives are one code, chosen below
    signed_xor = i32(0) if unsigned else sign_bit

    def kernel(bits: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
        # numba widens int32 arithmetic to int64: each step is cast back to 32 bits.
        for i in range(bits.size):
            b = bits[i]
            a = i32(b & i32(0x7FFFFFFF))
            e = _shr(a, i32(23))
            if exact_tiny:  # float32 subnormals can round to a nonzero code
                ee = max(e, i32(1))
                sig = i32((a & i32(0x7FFFFF)) | (i32(0x800000) if e > 0 else i32(0)))
                # the exponent of the leading bit: ee - 127, less the zeros of a subnormal
                q = max(i32(ee - i32(119) - _clz(sig)), minexp)
            else:  # they round to zero even read as 1.m * 2**-127: skip the cases
                ee = e
                sig = i32((a & i32(0x7FFFFF)) | i32(0x800000))
                q = max(i32(e - i32(127)), minexp)
            shift = min(i32(q - ee + i32(150) - mant), i32(25))
            n = _round_step(sig, shift)
            index = i32(_shl(i32(q - minexp), mant) + n - index_offset)
            index = max(index, i32(0)) if index_offset else index
            is_zero = (index == 0) if zero_by_index else (a == 0)
            code = (negative if b < 0 else index) if unsigned else index
            code, flip = (zero[0], zero[1]) if is_zero else (code, signed_xor)
            code, flip = (overflow[0], overflow[1]) if index > max_code else (code, flip)
            code, flip = (inf[0], inf[1]) if a == i32(0x7F800000) else (code, flip)
            code, flip = (nan[0], nan[1]) if a > i32(0x7F800000) else (code, flip)
            out[i] = np.uint8(code ^ (flip & _shr(b, i32(31))))

    return kernel


@cache
def _kernel(params: BitsParams) -> Callable[[np.ndarray, np.ndarray], None]:
    """:func:`_make_kernel` compiled once per format and policy (numba caches it on disk)."""
    return numba.njit(cache=True, nogil=True, boundscheck=False)(_make_kernel(params))  # type: ignore[no-any-return, union-attr]


def encode_float32_bits_rne(
    bits: npt.NDArray[np.uint32], params: BitsParams
) -> npt.NDArray[np.uint8]:
    """Encode C-contiguous float32 bit patterns with the branch-free kernel.

    Raises:
        ValueError: if numba is absent (the ``bits`` engine needs it).
    """
    if numba is None:  # pragma: no cover - numba is a pinned dependency
        raise ValueError("engine 'bits' needs numba")
    flat = bits.reshape(-1)
    out = np.empty(flat.size, np.uint8)
    _kernel(params)(flat.view(np.int32), out)
    return out.reshape(bits.shape)
