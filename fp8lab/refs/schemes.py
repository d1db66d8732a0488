"""Exact reference for the scale rules of :mod:`fp8lab.specs.scale_rules`, in exact integers.

Written from the sources each rule cites, one float32 rounding per operation
(:mod:`fp8lab.refs.float32_exact`), power-of-two steps from exact comparisons
with ``2**k`` (never a floating ``log2``), and the element cast by the scan
reference (SATFINITE, NaN to the canonical code). Each block's scale is found
one block at a time; its elements are multiplied or divided by it on whole
arrays in integers (:mod:`fp8lab.refs.float32_exact_ndarray`), or, with
``method="scalar"``, one exact ratio at a time, its twin. It reads the rule's
fields and shares no code with the numpy port it checks.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cache

import numpy as np
import numpy.typing as npt

from fp8lab.refs.float32_exact import (
    f32,
    f32_div,
    f32_mul,
    f64_div,
    f64_mul,
    fmaxf,
    fminf,
    round_bf16,
)
from fp8lab.refs.float32_exact_ndarray import METHODS, scale_rows
from fp8lab.refs.log2_exact import ceil_log2, ceil_log2_float32, floor_log2, floor_log2_float32
from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import Nvfp4Order, Nvfp4ScaleRule, Nvfp4TensorScale
from fp8lab.specs.scale_rules import (
    AmaxNan,
    Apply,
    Arithmetic,
    Clamp,
    E8m0Exponent,
    E8m0Inf,
    E8m0Nan,
    E8m0NanBlock,
    E8m0Zero,
    ElementRounding,
    Granularity,
    Pow2,
    Quotient,
    ScaleRule,
    SignedZero,
    Storage,
)

__all__ = [
    "reference_encode_scale",
    "reference_nvfp4_block_scales",
    "reference_scheme_quant",
    "ties_away_table",
]

_FLT_MAX = float(np.finfo(np.float32).max)

_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)
_E8M0_NAN = 255


def _max(a: float, b: float, rule: ScaleRule) -> float:
    """The rule's scale-side max: ``fmaxf``, or NaN-propagating (torch)."""
    if rule.amax_nan is AmaxNan.PROPAGATE and (math.isnan(a) or math.isnan(b)):
        return math.nan
    return fmaxf(a, b)


def _min(a: float, b: float, rule: ScaleRule) -> float:
    if rule.amax_nan is AmaxNan.PROPAGATE and (math.isnan(a) or math.isnan(b)):
        return math.nan
    return fminf(a, b)


def _lanes_amax(block: list[float], lanes: int, init: float) -> float:
    """A vectorised amax: the largest value of the NaN-free lanes (``init`` if none).

    Lane ``i % lanes`` takes element ``i``; a lane that holds a NaN is NaN, and dropped.
    """
    amax = init
    for lane in range(lanes):
        values = [abs(v) for v in block[lane::lanes]]
        if not any(math.isnan(v) for v in values):
            amax = max([amax, *values])
    return amax


def _amax(block: list[float], rule: ScaleRule) -> float:
    """The block's amax, floored and bounded (in float64 when the rule's quotient is)."""
    amax = f32(rule.amax_init)
    if rule.amax_lanes is not None:
        amax = _lanes_amax(block, rule.amax_lanes, amax)
    else:
        for v in block:
            amax = _max(amax, abs(v), rule)
    wide = rule.quotient is Quotient.FLOAT64  # the bounds as float64 values, not float32 ones
    if rule.amax_floor is not None:
        amax = _max(amax, rule.amax_floor if wide else f32(rule.amax_floor), rule)
    if rule.scale_ub is not None:
        amax = _min(amax, rule.scale_ub if wide else f32(rule.scale_ub), rule)
    return amax


def _ceil_pow2_float32(s: float) -> float:
    """VLLM UE8M0: fmaxf(|s|, 1e-10f), then the least power of two >= it (inf stays inf)."""
    s = fmaxf(abs(s), f32(1e-10))
    if math.isinf(s):
        return s
    k = ceil_log2(Fraction(s))
    return math.inf if k > 127 else float(Fraction(2) ** k)


def _e8m0_byte(amax: float, rule: ScaleRule, elem_max: float) -> int:
    """OCP MX FLOOR or RCEIL scale byte (bias 127; NaN and inf amaxes as the rule's e8m0 keys)."""
    elem = get_format(rule.element)
    nan_byte = 0 if rule.e8m0_nan is E8m0Nan.ZERO_BYTE else _E8M0_NAN
    if math.isnan(amax):  # a NaN amax, or (RCEIL) its NaN quotient
        return nan_byte
    if rule.pow2 is Pow2.OCP_FLOOR:
        if math.isinf(amax) and rule.e8m0_inf is E8m0Inf.NAN_BYTE:
            return _E8M0_NAN
        if math.isinf(amax) and rule.e8m0_inf is E8m0Inf.MAX_BYTE:
            return _E8M0_NAN - 1
        # A zero (or float32-subnormal) amax reads exponent field 0, i.e. -127 (torchao FLOOR);
        # an infinite one reads field 255, i.e. 128.
        if math.isinf(amax):
            e = 128
        elif rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32:  # floor(log2f(amax))
            e = floor_log2_float32(Fraction(amax)) if amax > 0 else -128
        else:
            e = floor_log2(Fraction(amax)) if amax >= 2.0**-126 else -127
        return min(max(e - (elem.maxexp - 1), -127), 128) + 127
    d = _scale_from(amax, elem_max, rule)
    if math.isinf(d) and rule.e8m0_inf is E8m0Inf.MAX_BYTE:
        return _E8M0_NAN - 1
    if not math.isfinite(d):
        return _E8M0_NAN
    if rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32:
        if d == 0:  # log2(0) = -inf, clamped
            return 0
        return min(max(ceil_log2_float32(Fraction(d)), -127), 127) + 127
    if d <= 2.0**-127:
        return 0
    return ceil_log2(Fraction(d)) + 127


def _e8m0_multiplier(byte: int, rule: ScaleRule) -> float:
    """The power of two a block's elements are multiplied by under e8m0 ``byte`` (not 0xFF)."""
    if byte == 0 and rule.e8m0_zero is E8m0Zero.MIN_NORMAL:
        return float(Fraction(2) ** 126)  # v / 2**-126
    if byte == 0 and rule.e8m0_zero is E8m0Zero.ONE:
        return 1.0
    return float(Fraction(2) ** (127 - byte))


def _nan_block(block: npt.NDArray[np.float32], rule: ScaleRule) -> npt.NDArray[np.float32]:
    """The elements of a block whose e8m0 byte is NaN (0xFF), before the cast."""
    if rule.e8m0_nan_block is E8m0NanBlock.FINITE_TO_ZERO:  # v / +inf
        zero = np.where(np.signbit(block), np.float32(-0.0), np.float32(0.0))
        return np.where(np.isfinite(block), zero, np.float32(np.nan))
    return np.full(block.shape, np.nan, np.float32)


def _scale_from(amax: float, elem_max: float, rule: ScaleRule) -> float:
    """The float32 scale: ``amax`` over ``elem_max`` (its inverse for a multiplier)."""
    num, den = (elem_max, amax) if rule.storage is Storage.MULTIPLIER else (amax, elem_max)
    if rule.quotient is Quotient.FLOAT64:
        if rule.scale_from is Apply.DIVIDE:
            return f32(f64_div(num, den))
        return f32(f64_mul(num, f64_div(1.0, den)))
    if rule.scale_from is Apply.DIVIDE:
        return f32_div(num, den)
    return f32_mul(num, f32_div(1.0, den))


def _blocks(shape: tuple[int, int], rule: ScaleRule) -> tuple[int, int]:
    """(blocks, elements per block) of a C-order [M, K] array under ``rule``."""
    m, k = shape
    if rule.granularity is Granularity.TENSOR:
        return 1, m * k
    if rule.granularity is Granularity.ROW:
        return m, k
    assert rule.block is not None
    if k % rule.block:
        raise ValueError(f"{rule.name}: K={k} is not a multiple of the block size {rule.block}")
    return m * k // rule.block, rule.block


def reference_scheme_quant(
    x: np.ndarray, rule: ScaleRule, *, method: str = "array"
) -> tuple[npt.NDArray[np.uint8], np.ndarray]:
    """Codes and scales of ``x`` [M, K] under ``rule``, exactly.

    Args:
        x: the input, [M, K].
        rule: the scale rule.
        method: how each element is multiplied or divided by its block's
            scale, exactly either way: ``"array"`` (integer arithmetic on whole
            arrays, :mod:`fp8lab.refs.float32_exact_ndarray`) or ``"scalar"``
            (one exact ratio per element, :mod:`fp8lab.refs.float32_exact`, its slow twin).

    Returns:
        ``(codes, scales)``: uint8 codes [M, K]; float32 scales of shape [1]
        (tensor), [M] (row) or [M, K/block], or e8m0 bytes (uint8) [M, K/block].

    Raises:
        ValueError: for a non-2-D input, a K the block does not divide, or an
            unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    if x.ndim != 2:
        raise ValueError(f"{rule.name}: x must be [M, K], got shape {x.shape}")
    elem = get_format(rule.element)
    elem_max = float(elem.max)
    bf16 = np.asarray(x).dtype.name == "bfloat16"
    narrow = rule.arithmetic is Arithmetic.INPUT and bf16  # the scale in bfloat16
    n_blocks, size = _blocks(x.shape, rule)
    blocks = np.asarray(x, np.float32).reshape(n_blocks, size)
    byte_scale = rule.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL)
    scales = np.empty(n_blocks, np.uint8 if byte_scale else np.float32)
    by = np.empty(n_blocks, np.float32)  # what each block's elements are multiplied or divided by
    for b, block in enumerate(blocks.tolist()):
        amax = _amax(block, rule)
        if byte_scale:
            scales[b] = byte = _e8m0_byte(amax, rule, elem_max)
            by[b] = 1.0 if byte == _E8M0_NAN else _e8m0_multiplier(byte, rule)
            continue
        s = _scale_from(amax, elem_max, rule)
        if narrow:
            s = round_bf16(s)
        if rule.min_scale is not None:
            s = _max(s, f32(rule.min_scale), rule)
        if rule.zero_scale is not None and s == 0:  # torch.where(s == 0, eps, s)
            s = f32(rule.input_zero_scale if narrow else rule.zero_scale)  # type: ignore[arg-type]
        if rule.pow2 is Pow2.CEIL_BITS:
            s = _ceil_pow2_float32(s)
        scales[b] = s
        by[b] = f32_div(1.0, s) if rule.apply is Apply.RECIPROCAL else s
    divide = rule.apply is Apply.DIVIDE and not byte_scale
    q = scale_rows(blocks, by, divide=divide, method=method)
    if byte_scale:
        for nan_byte in np.flatnonzero(scales == _E8M0_NAN):
            q[nan_byte] = _nan_block(blocks[nan_byte], rule)
    else:
        q = _after_the_scale(q, rule, elem_max, bf16)
    if rule.element_rounding is ElementRounding.TIES_AWAY:
        away = ties_away_table(rule.element)
        q = np.array(
            [[math.copysign(away.get(abs(v), abs(v)), v) for v in row] for row in q.tolist()],
            np.float32,
        )
    policy = ScanPolicy(saturate=rule.saturate, keep_nan_sign=False)
    codes = scan_encode(q.reshape(x.shape), elem, policy)
    m, k = x.shape
    shape = {Granularity.TENSOR: (1,), Granularity.ROW: (m,)}.get(
        rule.granularity, (m, k // (rule.block or 1))
    )
    return codes, scales.reshape(shape)


def _after_the_scale(
    q: npt.NDArray[np.float32], rule: ScaleRule, elem_max: float, bf16: bool
) -> npt.NDArray[np.float32]:
    """The quotients rounded to bfloat16 where the rule computes there, zero's sign, the clamp."""
    rows = q.tolist()
    if rule.arithmetic is not Arithmetic.FLOAT32 and bf16:
        rows = [[round_bf16(v) for v in row] for row in rows]
    if rule.signed_zero is SignedZero.PLUS_ZERO:  # -0 + 0 is +0 (IEEE 754 §6.3)
        rows = [[0.0 if v == 0 else v for v in row] for row in rows]
    return np.array([[_clamp(v, elem_max, rule.clamp) for v in row] for row in rows], np.float32)


@cache
def ties_away_table(element: str) -> dict[float, float]:
    """Each midpoint between neighbouring magnitudes of ``element`` -> the larger of the two.

    The last is the midpoint between the largest finite magnitude and the
    overflow candidate, which a SATFINITE cast then saturates (and a
    non-saturating one sends to inf or NaN). Every
    midpoint and magnitude is exact in float32 (checked), so a quotient
    is a tie exactly when it is a key.
    """
    fmt = get_format(element)
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 2)]
    table = {}
    for lo, hi in itertools.pairwise(mags):
        mid = (lo + hi) / 2
        if Fraction(f32(float(mid))) != mid or Fraction(f32(float(hi))) != hi:
            raise AssertionError(f"{element}: a midpoint is not exact in float32")
        table[float(mid)] = float(hi)
    return table


def _clamp(v: float, top: float, clamp: Clamp) -> float:
    if clamp is Clamp.MIN_THEN_MAX:
        return fmaxf(-top, fminf(v, top))
    if clamp is Clamp.MAX_THEN_MIN:
        return fminf(fmaxf(v, -top), top)
    if clamp is Clamp.TORCH and not math.isnan(v):
        return min(max(v, -top), top)
    return v


def reference_encode_scale(global_amax: float) -> float:
    """NVFP4's S_enc, exactly (TransformerEngine core_nvfp4.cuh).

    ``fminf(2688 / global_amax, FLT_MAX)`` rounded to float32; 1 where the
    global amax or that quotient is 0.
    """
    g = f32(global_amax)
    s_enc = fminf(f32_div(2688.0, g), _FLT_MAX)
    return 1.0 if g == 0 or s_enc == 0 else s_enc


def reference_nvfp4_tensor_scales(global_amax: float, rule: Nvfp4ScaleRule) -> tuple[float, float]:
    """``(S_enc, S_dec)`` of the global amax under the rule's per-tensor scale, exactly.

    TE (``ENCODE``): :func:`reference_encode_scale` and ``1 / S_enc``; torchao
    (``DIVISOR``): ``S_dec = g / 2688`` and ``S_enc = 1 / S_dec`` (``1 / 0 = inf``).
    """
    if rule.tensor_scale is Nvfp4TensorScale.DIVISOR:
        s_dec = f32_div(global_amax, 2688.0)
        return f32_div(1.0, s_dec), s_dec
    s_enc = reference_encode_scale(global_amax)
    return s_enc, f32_div(1.0, s_enc)


def reference_nvfp4_block_scales(
    block_amax: np.ndarray, global_amax: float, rule: Nvfp4ScaleRule
) -> npt.NDArray[np.uint8]:
    """e4m3fn block-scale bytes of float32 ``block_amax`` under an NVFP4 rule, exactly.

    ``block_bounds`` clamps as ``torch.clamp`` does (a NaN stays NaN); a NaN
    block scale is byte 0x7F here.
    """
    s_enc, s_dec = reference_nvfp4_tensor_scales(global_amax, rule)
    rcp6 = f32_div(1.0, 6.0)
    values = []
    for amax in np.asarray(block_amax, np.float32).reshape(-1).tolist():
        if rule.order is Nvfp4Order.DIVIDE:
            s = f32_mul(f32_div(amax, 6.0), s_enc)
        elif rule.order is Nvfp4Order.RECIPROCAL:
            s = f32_mul(f32_mul(amax, rcp6), s_enc)
        elif rule.order is Nvfp4Order.DIVIDE_DECODE:
            s = f32_div(f32_div(amax, 6.0), s_dec)
        else:
            s = f32_mul(amax, f32_mul(s_enc, rcp6))
        if rule.clamp_block:
            s = fminf(s, _FLT_MAX)
        if rule.block_bounds is not None and not math.isnan(s):
            s = min(max(s, rule.block_bounds[0]), rule.block_bounds[1])
        values.append(s)
    wide = np.array(values, np.float32).reshape(np.shape(block_amax))
    return scan_encode(wide, get_format("e4m3fn"), _SATFINITE)
