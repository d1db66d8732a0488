"""bfloat16 inputs: which widened bf16 values expose divide vs reciprocal.

A bf16 value widens exactly to the float32 with the same top 16 bits and zero
low bits (x is f32, or bf16 widened to f32). The bf16 inputs are
therefore a subset of the float32 inputs, and the enumeration's candidate set
is complete for every float32 input (:mod:`fp8lab.detect.windows`), so the
candidates with zero low 16 bits are complete for bf16.

Why bf16 almost never exposes: an exposing x lies within 4 float32 ulps of
m*s, so s lies within about 4 ulps of x/m, a ratio of an 8-bit and a 5-bit
significand. Per binade there are only about 2**12 such ratios, each with a
window of a few ulps out of 2**23, and landing in one is necessary, not
sufficient. If s equals x/m exactly (s = 3, x = 3m), x/s = m exactly and
x*r = m(1 + e*2**-24) rounds to m as well whenever |e|*M <= 1, with M in
[1, 2) the significand of m (e = 1/2 at s = 3; a tie goes to m, whose last
float32 bit is even). The 10**5-scale sweep finds
bf16 exposure at 5 scales (64 inputs), none of them the seed's scales.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fp8lab.detect.brute import Kernel
from fp8lab.detect.enumeration import candidate_inputs
from fp8lab.detect.pair import quantize_codes, resolve_kernel
from fp8lab.kernels import validate_scale
from fp8lab.specs.format_dtypes import bfloat16_dtype

__all__ = ["BF16_LOW_MASK", "all_bf16_exposing", "bf16_exposing"]

BF16_LOW_MASK = np.uint32(0xFFFF)


def _exposing(
    bits: npt.NDArray[np.uint32], scale: float, a: Kernel, b: Kernel, fmt: str
) -> npt.NDArray[np.uint32]:
    s = validate_scale(scale)
    if bits.size == 0:
        return bits
    x = (bits >> np.uint32(16)).astype(np.uint16).view(bfloat16_dtype())
    ka, kb = resolve_kernel(a, fmt), resolve_kernel(b, fmt)
    out: npt.NDArray[np.uint32] = bits[quantize_codes(ka, x, s) != quantize_codes(kb, x, s)]
    return out


def bf16_exposing(
    scale: float, a: Kernel = "reciprocal", b: Kernel = "divide", *, fmt: str = "e4m3fn"
) -> npt.NDArray[np.uint32]:
    """Widened bf16 inputs (as float32 patterns) that expose the pair, by enumeration.

    Raises:
        ValueError: for an invalid scale.
    """
    cands = candidate_inputs(scale, fmt)
    return _exposing(cands[(cands & BF16_LOW_MASK) == 0], scale, a, b, fmt)


def all_bf16_exposing(
    scale: float, a: Kernel = "reciprocal", b: Kernel = "divide", *, fmt: str = "e4m3fn"
) -> npt.NDArray[np.uint32]:
    """The same by brute force over all 65536 bf16 patterns (the slow twin).

    Raises:
        ValueError: for an invalid scale.
    """
    bits = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    return _exposing(bits, scale, a, b, fmt)
