"""Branch-free round-to-nearest-even on float32 bits (the ``bits`` engine).

The arithmetic of the array twin (:mod:`fp8lab.codecs.rne_array`) on 32-bit
lanes. A magnitude's linear index is ``(q - minexp) * 2**M + n``, where ``n``
rounds the value to the quantum ``2**(q - M)`` of its binade ``q =
max(e - 127, minexp)`` (OFP8 §4.2, IEEE 754 §4.3.1). Every shift is a constant:

- from ``2**(minexp + 1)`` up the quantum is the float32 binade's, so the index
  is the float32 bits rounded by ``23 - M`` bits, less a constant;
- below it, down to 2**-126, there is one quantum, ``2**(minexp - M)``: adding
  ``2**(minexp - M + 23)``, whose ulp that quantum is, rounds to it in the
  float unit (both operands and the sum are normal, so flush-to-zero and
  denormals-are-zero modes change nothing);
- a float32 subnormal is ``a * 2**-149``: rounded by a constant shift, or 0.

Zero, overflow, ±inf, NaN and an unsigned format's negatives are selects on the
resolved policy codes, never branches, so LLVM vectorises the loop; codes are
computed as 32-bit lanes into a block that stays in L1 and narrowed to bytes in
a loop of their own, which AVX2 does with saturating packs (narrowing in the
first loop narrows every select's mask too, each with its own shuffles). Every
constant is read off the format's fields and the policy; nothing depends on a
format's name.
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


def _f32_bits(f: Any) -> Any:
    """The bits of float32 ``f`` as an int32."""
    return np.float32(f).view(np.int32)


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
    def _f32_bits(typingctx: Any, f: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbtypes.int32(_nbtypes.float32)
        return sig, lambda ctx, builder, sg, args: builder.bitcast(args[0], ir.IntType(32))

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def _shr(a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        return _shr_i32(a, s)

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def _shl(a: Any, s: Any) -> Any:  # pragma: no cover - compiled
        return _shl_i32(a, s)


def _round_step(sig: Any, shift: Any) -> Any:
    """RNE of ``sig / 2**shift`` for ``1 <= shift < 32``, ``0 <= sig < 2**31 - 2**shift``.

    Adds half - 1 + the kept lsb, then shifts.
    """
    i32 = np.int32
    half_less = i32(_shl(i32(1), i32(shift - i32(1))) - i32(1))
    odd = i32(_shr(sig, shift) & i32(1))
    return _shr(i32(sig + half_less + odd), shift)


if numba is not None:
    _round_step = numba.njit(inline="always")(_round_step)


_BLOCK = 1024  # int32 codes of one block: 4 KiB, in L1


def _make_kernel(params: BitsParams) -> Callable[[np.ndarray, np.ndarray], None]:
    """The loop with ``params`` as constants; plain Python (compiled by :func:`_kernel`)."""
    i32 = np.int32
    mant, minexp, index_offset, max_code, sign_bit = (i32(p) for p in params[:5])
    zero_by_index, unsigned, negative = bool(params[5]), bool(params[6]), i32(params[7])
    zero, overflow, inf, nan = (
        (i32(pos), i32(pos ^ neg)) for pos, neg in zip(params[8::2], params[9::2], strict=True)
    )
    m, e_min, offset = int(mant), int(minexp), int(index_offset)
    if not (0 <= m <= 22 and m - 148 <= e_min <= 100):
        raise ValueError(
            f"the bits engine covers M <= 22 and minexp in [M - 148, 100], not {m}, {e_min}"
        )
    # a >= above (2**(minexp + 1), at least 2**-126): the bits rounded by 23 - M, less a bias
    shift = i32(23 - m)
    above = i32(max((e_min + 128) << 23, 0x800000))
    normal_bias = i32(((127 + e_min) << m) - (1 << m) + offset)
    ties_up = m == 0  # the kept bit is the implicit 1, always odd: a tie goes up
    # 2**-126 <= x < above: x + magic rounds to the quantum 2**(minexp - M)
    magic = np.float32(2.0 ** (e_min - m + 23))
    magic_low = i32(int(magic.view(np.int32)) + offset)
    # a float32 subnormal a * 2**-149: RNE(a / 2**tiny_shift), 0 from a shift of 24 on
    tiny_shift = i32(e_min - m + 149)
    tiny_exact = tiny_shift < 24
    # a negative input's code is the positive one xor a per-class constant;
    # an unsigned format's negatives are one code, chosen below
    signed_xor = i32(0) if unsigned else sign_bit

    # One function, its closure plain numbers only: numba keys its disk cache on a pickle of
    # the closure, and a nested dispatcher pickles differently in every process (a miss each time).
    def kernel(bits: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
        block = np.empty(_BLOCK, np.int32)
        for lo in range(0, bits.size, _BLOCK):
            n = min(_BLOCK, bits.size - lo)
            chunk = bits[lo : lo + n]
            x = chunk.view(np.float32)
            # numba widens int32 arithmetic to int64: each step is cast back to 32 bits.
            for i in range(n):
                b = chunk[i]
                a = i32(b & i32(0x7FFFFFFF))
                clamped = min(a, i32(0x7F800000))
                if ties_up:
                    wide = i32(_shr(i32(clamped + i32(0x400000)), shift) - normal_bias)
                else:
                    wide = i32(_round_step(clamped, shift) - normal_bias)
                f = abs(x[i]) if a >= i32(0x800000) else np.float32(0)
                low = i32(_f32_bits(f + magic) - magic_low)
                if tiny_exact:
                    low = (
                        i32(_round_step(a, tiny_shift) - index_offset) if a < i32(0x800000) else low
                    )
                index = low if a < above else wide
                index = max(index, i32(0)) if index_offset else index
                is_zero = (index == 0) if zero_by_index else (a == 0)
                code = (negative if b < 0 else index) if unsigned else index
                code, flip = (zero[0], zero[1]) if is_zero else (code, signed_xor)
                code, flip = (overflow[0], overflow[1]) if index > max_code else (code, flip)
                code, flip = (inf[0], inf[1]) if a == i32(0x7F800000) else (code, flip)
                code, flip = (nan[0], nan[1]) if a > i32(0x7F800000) else (code, flip)
                block[i] = i32(code ^ (flip & _shr(b, i32(31))))
            narrow = out[lo : lo + n]
            for i in range(n):  # codes are 0..255: the clamp only lets LLVM use packs
                narrow[i] = np.uint8(min(max(block[i], i32(0)), i32(255)))

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
