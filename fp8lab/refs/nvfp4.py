"""Exact reference for NVFP4 quantization: e2m1fn elements, an e4m3fn scale per 16, a global amax.

Written from the TransformerEngine kernels each rule names
(:mod:`fp8lab.specs.nvfp4_rules`: ``quantize_transpose_nvfp4.cuh`` 433b1dbc,
``quantize_nvfp4.cuh`` 433b1dbc, ``quantize_transpose_nvfp4_tuned_1D.cuh``
523801df7; rowwise), one float32 rounding per operation
(:mod:`fp8lab.refs.float32_exact`):

* ``block_amax = fmaxf(... fmaxf(0, |x_0|) ..., |x_15|)`` (NaN skipped);
* the block byte by :func:`fp8lab.refs.schemes.reference_nvfp4_block_scales`;
* the element multiplier by the rule's ``inverse``: ``DECODE_PRODUCT`` is
  ``fminf(1 / (decode(byte) * S_dec), FLT_MAX)`` with ``S_dec = float(1.0 /
  S_enc)``, a double quotient rounded to float32 that equals the float32
  quotient (53 >= 2*24 + 2: double rounding of a quotient is innocuous,
  Figueroa 1995); ``ENCODE_QUOTIENT`` is ``S_enc / decode(byte)``, unclamped;
* ``q = x * inv``; the cast is RNE, SATFINITE (the scan reference), and NaN
  becomes +6 (0x07): CUDA ``cuda_fp4.hpp``, "NaN converts to positive
  FP4_MAXNORM" (so under ``ENCODE_QUOTIENT`` a zero in a byte-0 block, 0 * inf,
  codes +6).

The torchao rule's choices (:class:`fp8lab.specs.nvfp4_rules.Nvfp4TensorScale`
``DIVISOR``, ``Nvfp4Order.DIVIDE_DECODE``, ``block_bounds``, ``amax_nan``,
``Nvfp4NanCode.TORCH_BITS``) are written out here from torchao's
``nvfp4_quantize``: ``S_dec = g / 2688`` and ``S_enc = 1 / S_dec`` (IEEE: ``1 /
0 = inf``), the block value ``(amax / 6) / S_dec``, a clamp that keeps NaN, a
block amax a NaN wins, and the NaN codes of torchao's bitwise cast.

The e4m3fn byte is decoded here from the format's fields. Nothing is shared
with the numpy port, :func:`fp8lab.kernels.scheme.nvfp4_quant`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from fp8lab.refs.float32_exact import f32, f32_div, f32_mul, fmaxf, fminf
from fp8lab.refs.float32_exact_ndarray import METHODS, scale_rows
from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_nvfp4_tensor_scales
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import (
    Nvfp4Inverse,
    Nvfp4NanCode,
    Nvfp4ScaleRule,
)
from fp8lab.specs.rule_axes import AmaxNan

__all__ = ["NVFP4_NAN_CODE", "reference_nvfp4_quant"]

NVFP4_NAN_CODE = 0x07  # +MAXNORM (+6): cuda_fp4.h, "NaN input values result in positive MAXNORM"
_FLT_MAX = float(np.finfo(np.float32).max)
_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)


def _decode_scale(byte: int) -> float:
    """The value of an e4m3fn byte, from the format's fields (NaN for 0x7F/0xFF)."""
    fmt = get_format("e4m3fn")
    man = fmt.mantissa_bits
    if byte & 0x7F == 0x7F:
        return math.nan
    e, m = (byte >> man) & ((1 << fmt.exponent_bits) - 1), byte & ((1 << man) - 1)
    value = Fraction(m, 1 << man) * Fraction(2) ** (1 - fmt.bias)
    if e:
        value = (1 + Fraction(m, 1 << man)) * Fraction(2) ** (e - fmt.bias)
    return -float(value) if byte & 0x80 else float(value)


def reference_nvfp4_quant(
    x: np.ndarray, global_amax: float, rule: Nvfp4ScaleRule, *, method: str = "array"
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """NVFP4 codes (one e2m1fn code per byte, low nibble) [M, K] and e4m3fn scale bytes [M, K/16].

    ``method`` is how the elements are multiplied, exactly either way:
    ``"array"`` (integer arithmetic on whole arrays) or ``"scalar"`` (one
    exact ratio per element, its slow twin).

    Raises:
        ValueError: for a non-2-D ``x``, a K that 16 does not divide, a rule
            whose element path is not modelled, or an unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    if rule.element_source is None:
        raise ValueError(f"{rule.name}: its element path is not modelled")
    if x.ndim != 2 or x.shape[1] % rule.block:
        raise ValueError(f"{rule.name}: x must be [M, K] with K a multiple of {rule.block}")
    m, k = x.shape
    g = f32(float(np.float32(global_amax)))
    blocks = np.asarray(x, np.float32).reshape(-1, rule.block).tolist()
    amaxes = []
    for block in blocks:
        amax = 0.0
        for v in block:
            amax = fmaxf(amax, abs(v))
        if rule.amax_nan is AmaxNan.PROPAGATE and any(math.isnan(v) for v in block):
            amax = math.nan
        amaxes.append(amax)
    scale_bytes = reference_nvfp4_block_scales(np.array(amaxes, np.float32), g, rule)
    s_enc, s_dec = reference_nvfp4_tensor_scales(g, rule)
    if rule.nan_code is Nvfp4NanCode.TORCH_BITS:  # 0/0, inf/inf: x86's negative default NaN
        for b, amax in enumerate(amaxes):
            if math.isnan(_decode_scale(int(scale_bytes[b]))) and not math.isnan(amax):
                scale_bytes[b] = 0xFF
    inv = np.empty(len(blocks), np.float32)
    nan_codes = np.full((len(blocks), rule.block), NVFP4_NAN_CODE, np.uint8)
    for b, block in enumerate(blocks):
        byte = int(scale_bytes[b])
        d = _decode_scale(byte)
        if rule.inverse is Nvfp4Inverse.ENCODE_QUOTIENT:
            inv[b] = f32_div(s_enc, d)
        else:
            inv[b] = fminf(f32_div(1.0, f32_mul(d, s_dec)), _FLT_MAX)
        if rule.nan_code is Nvfp4NanCode.TORCH_BITS:
            nan_codes[b] = [_torch_nan_code(v, byte, math.isnan(d)) for v in block]
    q = scale_rows(np.asarray(blocks, np.float32), inv, divide=False, method=method)
    nan = np.isnan(q)
    q[nan] = 0.0
    codes = scan_encode(q, get_format("e2m1fn"), _SATFINITE)
    codes[nan] = nan_codes[nan]
    return codes.reshape(m, k), scale_bytes.reshape(m, k // rule.block)


def _torch_nan_code(v: float, byte: int, byte_nan: bool) -> int:
    """The e2m1 code torchao gives ``v * multiplier`` were it NaN (the NaN torch forms on x86).

    A NaN byte decodes to 0x7FF00000 (signed as the byte), which wins the
    product and codes 0x4 (sign in bit 3); else a NaN ``v`` keeps its own NaN
    (0x7FC00000: 0x3, with its sign); else the product is ``0 * inf``, the default
    NaN 0xFFC00000, code 0xB.
    """
    if byte_nan:
        return 0x4 | (0x8 if byte & 0x80 else 0)
    if math.isnan(v):
        return 0x3 | (0x8 if math.copysign(1.0, v) < 0 else 0)
    return 0xB
