"""Production-style numpy port of every scale rule: float32 array arithmetic, bit tricks.

Written the way the kernels are (vLLM CUDA, torchao eager): ``np.fmax``
reductions (``fmaxf``), ``np.max`` (``torch.amax``, NaN-propagating), float32
division or reciprocal multiplication, exponent bits through ``view(uint32)``,
torchao's e8m0 reciprocal by ``254 - byte`` bits, and the fast codec as the
SATFINITE ``cvt``. It is checked bit for bit against :mod:`fp8lab.refs.schemes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode, encode
from fp8lab.specs.format_dtypes import bfloat16_dtype, is_bfloat16
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import (
    NVFP4_RULES,
    Nvfp4Inverse,
    Nvfp4NanCode,
    Nvfp4Order,
    Nvfp4ScaleRule,
    Nvfp4TensorScale,
)
from fp8lab.specs.scale_rules import (
    RULES,
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
    get_rule,
)

__all__ = [
    "SCHEME_PORTS",
    "Nvfp4Port",
    "SchemePort",
    "amax_scales",
    "nvfp4_block_scales",
    "nvfp4_multipliers",
    "nvfp4_quant",
    "nvfp4_stored_scales",
    "scheme_quant",
    "scheme_scales",
]

_F32 = np.float32


def _grouped(x: npt.NDArray[np.float32], rule: ScaleRule) -> npt.NDArray[np.float32]:
    m, k = x.shape
    if rule.granularity is Granularity.TENSOR:
        return x.reshape(1, m * k)
    if rule.granularity is Granularity.ROW:
        return x
    assert rule.block is not None
    if k % rule.block:
        raise ValueError(f"{rule.name}: K={k} is not a multiple of the block size {rule.block}")
    return x.reshape(m * k // rule.block, rule.block)


def _amax(blocks: npt.NDArray[np.float32], rule: ScaleRule) -> npt.NDArray[np.float32]:
    """Per block, the float32 amax the reduction gives (from ``amax_init``)."""
    a = np.abs(blocks)
    init = _F32(rule.amax_init)
    if rule.amax_lanes is not None:  # a vector max per lane (NaN kept), lanes by fmaxf
        lanes = rule.amax_lanes
        padded = np.pad(a, ((0, 0), (0, -a.shape[1] % lanes)), constant_values=init)
        per_lane = np.maximum.reduce(padded.reshape(len(a), -1, lanes), axis=1, initial=init)
        return np.asarray(np.fmax.reduce(per_lane, axis=1, initial=init), _F32)
    if rule.amax_nan is AmaxNan.SKIP:
        return np.asarray(np.fmax.reduce(a, axis=1, initial=init), _F32)
    return np.asarray(np.maximum(a.max(axis=1), init), _F32)


def _bounded(amax: npt.NDArray[np.float32], rule: ScaleRule) -> np.ndarray:
    """The amax floored and bounded: float32, or float64 for a float64 quotient."""
    big, small = (np.fmax, np.fmin) if rule.amax_nan is AmaxNan.SKIP else (np.maximum, np.minimum)
    wide = np.float64 if rule.quotient is Quotient.FLOAT64 else _F32  # torchao: amax.to(float64)
    out = np.asarray(amax, wide)
    if rule.amax_floor is not None:
        out = big(out, wide(rule.amax_floor))
    if rule.scale_ub is not None:
        out = small(out, wide(rule.scale_ub))
    return np.asarray(out, wide)


def _scale(amax: np.ndarray, rule: ScaleRule, top: np.float32) -> npt.NDArray[np.float32]:
    """The float32 scale from the amax: a divisor ``amax / M``, or a multiplier ``M / amax``."""
    m = amax.dtype.type(top)
    num, den = (m, amax) if rule.storage is Storage.MULTIPLIER else (amax, m)
    s = num / den if rule.scale_from is Apply.DIVIDE else num * (amax.dtype.type(1) / den)
    return np.asarray(s, _F32)


def _e8m0(amax: npt.NDArray[np.float32], rule: ScaleRule, top: np.float32) -> np.ndarray:
    if rule.pow2 is Pow2.OCP_FLOOR:
        exp = ((amax.view(np.uint32) >> 23) & 0xFF).astype(np.int32) - 127
        if rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32:  # floorf(log2f(amax))
            lg = np.floor(np.log2(amax.astype(np.float64)).astype(_F32))
            exp = np.clip(np.nan_to_num(lg, nan=0.0), -200, 200).astype(np.int32)
        emax = int(np.floor(np.log2(top)))
        byte = np.clip(exp - emax, -127, 128) + 127
    else:
        d = amax * (_F32(1) / top) if rule.scale_from is Apply.RECIPROCAL else amax / top
        bits = d.view(np.uint32)
        exp = ((bits >> 23) & 0xFF).astype(np.int32)
        mant = bits & 0x7F_FFFF
        byte = exp + np.where(exp == 0, mant > 0x40_0000, mant != 0)
        if rule.e8m0_exponent is E8m0Exponent.LOG2_FLOAT32:  # torch.ceil(torch.log2(d))
            lg = np.log2(d.astype(np.float64)).astype(_F32)
            byte = np.clip(np.nan_to_num(np.ceil(lg), nan=0.0), -127, 127).astype(np.int32) + 127
        amax = d
    nan_byte = 0 if rule.e8m0_nan is E8m0Nan.ZERO_BYTE else 255
    if rule.e8m0_inf is E8m0Inf.EXPONENT_BITS:  # field 255 read like any other
        return np.where(np.isnan(amax), nan_byte, byte).astype(np.uint8)
    if rule.e8m0_inf is E8m0Inf.MAX_BYTE:
        byte = np.where(np.isinf(amax), 254, byte)
        return np.where(np.isnan(amax), nan_byte, byte).astype(np.uint8)
    byte = np.where(np.isinf(amax), 255, byte)
    return np.where(np.isnan(amax), nan_byte, byte).astype(np.uint8)


def _e8m0_reciprocal(byte: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Torchao ``_e8m0_scale_to_reciprocal_fp32``: 2**(127 - byte) from the bits."""
    rb = (254 - byte.astype(np.int32)).astype(np.uint8).astype(np.uint32)
    bits = np.where(rb == 0, np.uint32(0x0040_0000), rb << 23)
    bits = np.where(rb == 255, np.uint32(0x7F80_0001), bits)
    return bits.astype(np.uint32).view(_F32)


def _scales_of(
    amax: npt.NDArray[np.float32], rule: ScaleRule, top: np.float32, narrow: bool = False
) -> np.ndarray:
    """The scale of each block amax: float32, or e8m0 bytes (uint8).

    ``narrow``: the rule computes in its bfloat16 input (``arithmetic = "input"``).
    """
    wide = _bounded(amax, rule)
    if rule.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL):
        return _e8m0(wide, rule, top)
    s = _scale(wide, rule, top)
    if narrow:  # torch on bfloat16: amax / 448 is a bfloat16 tensor
        s = s.astype(bfloat16_dtype()).astype(_F32)
    if rule.min_scale is not None:
        big = np.fmax if rule.amax_nan is AmaxNan.SKIP else np.maximum
        s = big(s, _F32(rule.min_scale))
    if rule.zero_scale is not None and narrow:
        s = np.where(s == 0, _F32(rule.input_zero_scale), s)  # bfloat16's own eps
    if rule.zero_scale is not None:
        s = np.where(s == 0, _F32(rule.zero_scale), s)
    if rule.pow2 is Pow2.CEIL_BITS:
        s = np.fmax(np.abs(s), _F32(1e-10))
        bits = s.view(np.uint32)
        up = ((bits >> 23) & 0xFF) + ((bits & 0x7F_FFFF) != 0)
        s = (up.astype(np.uint32) << 23).view(_F32)
    return np.asarray(s, _F32)


def amax_scales(amax: np.ndarray, rule: str | ScaleRule) -> np.ndarray:
    """The scale ``rule`` stores for blocks whose float32 amax is ``amax`` (any shape, flattened).

    The scale step of :func:`scheme_quant` alone, on float32 input: float32
    scales, or e8m0 bytes (uint8) for an OCP_FLOOR/RCEIL rule.

    Raises:
        ValueError: for an unknown rule.
    """
    spec = get_rule(rule)
    top = _F32(float(get_format(spec.element).max))
    a = np.ascontiguousarray(np.asarray(amax, _F32).reshape(-1))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _scales_of(a, spec, top)


def scheme_scales(x: np.ndarray, rule: ScaleRule) -> np.ndarray:
    """The scales :func:`scheme_quant` gives ``x`` [M, K] under ``rule``, flattened, no codes."""
    arr = np.asarray(x)
    blocks = _grouped(np.ascontiguousarray(arr, _F32), rule)
    narrow = rule.arithmetic is Arithmetic.INPUT and is_bfloat16(arr.dtype)
    top = _F32(float(get_format(rule.element).max))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _scales_of(_amax(blocks, rule), rule, top, narrow)


def _ties_away(q: npt.NDArray[np.float32], mbits: int, emin: int) -> npt.NDArray[np.float32]:
    """Each tie between element values moved one float32 ulp away from zero, for the RNE cast.

    The element step at ``|q|`` is ``2**(max(exp, emin) - mbits)`` (exponent
    from the bits); ``|q|`` is a tie when ``|q| / step`` (exact: a power of
    two) has fraction 0.5. Nudged past the midpoint, the cast rounds it away.
    """
    a = np.abs(q)
    exp = ((a.view(np.uint32) >> 23) & 0xFF).astype(np.int32) - 127
    step = np.ldexp(_F32(1), np.maximum(exp, emin) - mbits).astype(_F32)
    tie = np.isfinite(a) & (np.mod(a / step, _F32(1)) == _F32(0.5))
    return np.where(tie, np.nextafter(q, q * _F32(2)), q)


def scheme_quant(
    x: np.ndarray, rule: str | ScaleRule, scales: np.ndarray | None = None
) -> tuple[npt.NDArray[np.uint8], np.ndarray]:
    """Quantize ``x`` [M, K] (float32 or bfloat16) under ``rule``: ``(codes, scales)``.

    ``scales``: given scales (one per tensor, row or block, in that order):
    a static rule's float32 ones, or any rule's to run its element path on
    them (e8m0 bytes for an OCP_FLOOR/RCEIL rule); None computes them from
    the amax.

    Raises:
        ValueError: for an unknown rule, a non-2-D input, a K the block does not
            divide, or given scales of the wrong size.
    """
    spec = get_rule(rule)
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"{spec.name}: x must be [M, K], got shape {arr.shape}")
    m, k = arr.shape
    x32 = np.ascontiguousarray(arr, _F32)
    elem = get_format(spec.element)
    top = _F32(float(elem.max))
    blocks = _grouped(x32, spec)
    narrow = spec.arithmetic is Arithmetic.INPUT and is_bfloat16(arr.dtype)
    narrow_q = spec.arithmetic is not Arithmetic.FLOAT32 and is_bfloat16(arr.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if scales is None:
            scales = _scales_of(_amax(blocks, spec), spec, top, narrow)
        else:  # a static rule's given float32 scales
            scales = np.asarray(_given(scales, spec, blocks.shape[0], narrow))
        if spec.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL):
            inv = _e8m0_reciprocal(scales)
            if spec.e8m0_zero is E8m0Zero.MIN_NORMAL:
                inv = np.where(scales == 0, _F32(2.0**126), inv)
            elif spec.e8m0_zero is E8m0Zero.ONE:
                inv = np.where(scales == 0, _F32(1), inv)
            q = blocks * inv[:, None]
            if spec.e8m0_nan_block is E8m0NanBlock.FINITE_TO_ZERO:
                q = np.where((scales == 255)[:, None], blocks / _F32(np.inf), q)
        else:
            col = scales[:, None]
            if spec.apply is Apply.DIVIDE:
                q = blocks / col
            elif spec.apply is Apply.MULTIPLY:
                q = blocks * col
            else:
                q = blocks * (_F32(1) / col)
            if narrow_q:  # the quotient in the input's dtype
                q = q.astype(bfloat16_dtype()).astype(_F32)
            if spec.signed_zero is SignedZero.PLUS_ZERO:
                q = q + _F32(0)  # the symmetric zero point
        if spec.clamp is Clamp.MIN_THEN_MAX:
            q = np.fmax(-top, np.fmin(q, top))
        elif spec.clamp is Clamp.MAX_THEN_MIN:
            q = np.fmin(np.fmax(q, -top), top)
        elif spec.clamp is Clamp.TORCH:
            q = np.clip(q, -top, top)
        if spec.element_rounding is ElementRounding.TIES_AWAY:
            q = _ties_away(np.asarray(q, _F32), elem.mantissa_bits, elem.minexp)
    codes = encode(np.asarray(q, _F32).reshape(m, k), elem, saturate=spec.saturate, nan="canonical")
    shape = {Granularity.TENSOR: (1,), Granularity.ROW: (m,)}.get(
        spec.granularity, (m, k // (spec.block or 1))
    )
    return codes, scales.reshape(shape)


def _given(scales: np.ndarray, rule: ScaleRule, n: int, narrow: bool) -> np.ndarray:
    """The ``n`` given scales, one per block: float32 (``narrow``: bfloat16), or e8m0 bytes.

    An OCP_FLOOR/RCEIL rule's given scales are its bytes.
    """
    if rule.pow2 in (Pow2.OCP_FLOOR, Pow2.RCEIL):
        s = np.ascontiguousarray(np.asarray(scales).reshape(-1)).view(np.uint8)
    else:
        s = np.ascontiguousarray(np.asarray(scales, _F32).reshape(-1))
    if s.size != n:
        raise ValueError(f"{rule.name}: {n} scales wanted, {s.size} given")
    return s.astype(bfloat16_dtype()).astype(_F32) if narrow else s


@dataclass(frozen=True)
class SchemePort:
    """The port of one rule as a GQ kernel: ``port(x) -> (codes, scales)``, named after the rule."""

    name: str

    def __call__(self, x: np.ndarray) -> tuple[npt.NDArray[np.uint8], np.ndarray]:
        """:func:`scheme_quant` under this port's rule."""
        return scheme_quant(x, self.name)


def _encode_scale(g: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """TE's S_enc: ``fminf(6 * 448 / global_amax, FLT_MAX)``, 1 where that or the amax is 0."""
    s_enc = np.fmin(_F32(448.0 * 6.0) / g, np.finfo(_F32).max)
    return np.where((g == 0) | (s_enc == 0), _F32(1.0), s_enc).astype(_F32)


def _tensor_scales(g: np.ndarray, rule: Nvfp4ScaleRule) -> tuple[np.ndarray, np.ndarray]:
    """``(S_enc, S_dec)`` of the global amax ``g`` (a scalar or one per block) under the rule."""
    g = np.asarray(g, _F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if rule.tensor_scale is Nvfp4TensorScale.DIVISOR:
            s_dec = (g / _F32(2688.0)).astype(_F32)  # torchao: amax.float() / (448 * 6)
            return (_F32(1.0) / s_dec).astype(_F32), s_dec
        s_enc = _encode_scale(g)
        # TE: float(1.0 / S_enc), a double quotient rounded to float32
        return s_enc, (1.0 / s_enc.astype(np.float64)).astype(_F32)


def nvfp4_block_scales(
    block_amax: np.ndarray, global_amax: float | np.ndarray, rule: Nvfp4ScaleRule
) -> npt.NDArray[np.uint8]:
    """e4m3fn block-scale bytes of float32 ``block_amax``, as the rule's kernel computes them.

    ``global_amax`` is one float32 for every block, or one per block.

    A NaN block scale is byte 0x7F here; :func:`nvfp4_quant` signs the one a
    ``TORCH_BITS`` rule's scale side makes (0xFF).
    """
    amax = np.asarray(block_amax, _F32)
    g = np.asarray(global_amax, _F32)
    flt_max = np.finfo(_F32).max
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s_enc, s_dec = _tensor_scales(g, rule)
        rcp6 = _F32(1.0) / _F32(6.0)
        if rule.order is Nvfp4Order.DIVIDE:
            s = amax / _F32(6.0) * s_enc
        elif rule.order is Nvfp4Order.RECIPROCAL:
            s = amax * rcp6 * s_enc
        elif rule.order is Nvfp4Order.DIVIDE_DECODE:
            s = amax / _F32(6.0) / s_dec
        else:
            s = amax * (s_enc * rcp6)
        if rule.clamp_block:
            s = np.fmin(s, flt_max)
        if rule.block_bounds is not None:  # torch.clamp: a NaN stays NaN
            s = np.minimum(np.maximum(s, _F32(rule.block_bounds[0])), _F32(rule.block_bounds[1]))
    return encode(np.asarray(s, _F32), "e4m3fn", saturate=True, nan="canonical")


def nvfp4_stored_scales(
    block_amax: np.ndarray, global_amax: float | np.ndarray, rule: Nvfp4ScaleRule
) -> npt.NDArray[np.uint8]:
    """The block-scale bytes the rule's kernel stores: :func:`nvfp4_block_scales`, NaN signed.

    A ``TORCH_BITS`` rule stores the NaN its scale side makes (``0 / 0``, ``inf /
    inf``, from a block amax that is not NaN) as 0xFF, x86's negative default NaN.
    """
    scale = nvfp4_block_scales(block_amax, global_amax, rule)
    if rule.nan_code is Nvfp4NanCode.TORCH_BITS:
        made = np.isnan(decode(scale, "e4m3fn")) & ~np.isnan(np.asarray(block_amax, _F32))
        scale = np.where(made, scale | np.uint8(0x80), scale).astype(np.uint8)
    return scale


def nvfp4_multipliers(
    scale: npt.NDArray[np.uint8], global_amax: float | np.ndarray, rule: Nvfp4ScaleRule
) -> npt.NDArray[np.float32]:
    """The float32 element multiplier of each block-scale byte under the rule's ``inverse``.

    ``S_enc / S_dec_b`` (``__fdiv_rn``, unclamped) or ``fminf(1 / (S_dec_b *
    S_dec), FLT_MAX)``; ``global_amax`` is one float32, or one per byte.
    """
    g = np.asarray(global_amax, _F32)
    dec_b = decode(scale, "e4m3fn").astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s_enc, s_dec = _tensor_scales(g, rule)
        if rule.inverse is Nvfp4Inverse.ENCODE_QUOTIENT:
            return np.asarray(s_enc / dec_b, _F32)
        return np.asarray(np.fmin(_F32(1.0) / (dec_b * s_dec), np.finfo(_F32).max), _F32)


def nvfp4_quant(
    x: np.ndarray, global_amax: np.ndarray, rule: str | Nvfp4ScaleRule
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """NVFP4 as TE's rowwise kernels compute it: e2m1fn codes (low nibble) and e4m3fn scale bytes.

    ``np.fmax`` block amax (``fmaxf``), the block byte by
    :func:`nvfp4_block_scales`, the element multiplier ``fminf(1 / (S_dec_b *
    S_dec), FLT_MAX)`` or ``S_enc / S_dec_b`` (the rule's ``inverse``), and the
    SATFINITE cast with NaN to +6 (``cvt.rn.satfinite.e2m1x2.f32``).
    ``global_amax`` is float32 [1], or [M]: each row then is a tensor of its own.

    Raises:
        ValueError: for a rule whose element path is not modelled, or a bad shape.
    """
    spec = NVFP4_RULES[rule] if isinstance(rule, str) else rule
    if spec.element_source is None:
        raise ValueError(f"{spec.name}: its element path is not modelled")
    x32 = np.asarray(x, _F32)
    if x32.ndim != 2 or x32.shape[1] % spec.block:
        raise ValueError(f"{spec.name}: x must be [M, K] with K a multiple of {spec.block}")
    g = np.asarray(global_amax, _F32).reshape(-1)
    if g.size not in (1, x32.shape[0]):
        raise ValueError(f"{spec.name}: global_amax must be [1] or one per row of x")
    g = np.repeat(g, x32.size // spec.block // g.size)  # one per block
    blocks = x32.reshape(-1, spec.block)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        amax = np.fmax.reduce(np.abs(blocks), axis=1, initial=_F32(0))
        if spec.amax_nan is AmaxNan.PROPAGATE:  # torch.amax: a NaN wins
            amax = np.where(np.isnan(blocks).any(axis=1), _F32(np.nan), amax)
        scale = nvfp4_stored_scales(amax, g, spec)
        q = blocks * nvfp4_multipliers(scale, g, spec)[:, None]
    nan = np.isnan(q)
    codes = encode(np.where(nan, _F32(0), q), "e2m1fn", saturate=True, nan="canonical")
    codes[nan] = 0x07
    if spec.nan_code is Nvfp4NanCode.TORCH_BITS:
        codes[nan] = _torch_nan_codes(blocks, scale)[nan]
    return codes.reshape(x32.shape), scale.reshape(x32.shape[0], -1)


def _torch_nan_codes(blocks: np.ndarray, scale: np.ndarray) -> npt.NDArray[np.uint8]:
    """The e2m1 code torchao gives each product were it NaN (:class:`Nvfp4NanCode` ``TORCH_BITS``).

    A NaN byte's decoded NaN (0x7FF00000, signed as the byte) codes 0x4 with that
    sign; else an input NaN codes 0x3 with its sign, and ``0 * inf`` (the
    negative default NaN) 0xB.
    """
    byte_nan = np.isnan(decode(scale, "e4m3fn"))[:, None]
    byte_sign = ((scale & np.uint8(0x80)) >> np.uint8(4))[:, None]
    x_sign = np.signbit(blocks).astype(np.uint8) << np.uint8(3)
    own = np.where(np.isnan(blocks), np.uint8(0x3) | x_sign, np.uint8(0xB))
    return np.where(byte_nan, np.uint8(0x4) | byte_sign, own).astype(np.uint8)


@dataclass(frozen=True)
class Nvfp4Port:
    """The NVFP4 port of one rule as a GQ kernel: ``port(x, global_amax) -> (codes, scales)``."""

    name: str

    def __call__(
        self, x: np.ndarray, global_amax: np.ndarray
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """:func:`nvfp4_quant` under this port's rule."""
        return nvfp4_quant(x, global_amax, self.name)


# rule name -> its port: the built-in kernels ``fp8lab gates --gate GQ`` runs without --kernel
# (NVFP4: the rules whose element path is modelled)
SCHEME_PORTS: MappingProxyType[str, SchemePort | Nvfp4Port] = MappingProxyType(
    {
        **{name: SchemePort(name) for name in RULES},
        **{n: Nvfp4Port(n) for n, r in NVFP4_RULES.items() if r.element_source is not None},
    }
)
