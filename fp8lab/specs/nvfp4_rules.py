"""NVFP4 rules as data: the block-scale expression, and the element path of the kernel that uses it.

NVFP4 stores e2m1 elements with one e4m3 scale per 16 elements and a float32
per-tensor encode scale ``S_enc = fminf(2688 / global_amax, FLT_MAX)`` (1 when
``global_amax == 0`` or ``S_enc == 0``; TransformerEngine ``core_nvfp4.cuh``
``compute_global_encode_scaling_factor_FP4``). TE computes the block scale byte
``e4m3_satfinite(S_dec_b)`` with three float32 expressions over its history
(``transformer_engine/common/cast/nvfp4/core_nvfp4.cuh``):

* ``divide`` (433b1dbc, ``quantization_and_transposition_SF``):
  ``fminf((block_amax / 6) * S_enc, FLT_MAX)``;
* ``reciprocal`` (433b1dbc, ``quantization_SF``): ``(block_amax * fl(1/6)) * S_enc``;
* ``fused`` (523801df7, ``quantization_and_transposition_SF``):
  ``fminf(block_amax * (S_enc * fl(1/6)), FLT_MAX)``.

Each rule names the kernel that uses its block formula and how that kernel
turns the decoded block byte into the element multiplier (:class:`Nvfp4Inverse`):

* ``te-nvfp4-divide``: ``quantize_transpose_nvfp4.cuh`` (433b1dbc), rowwise;
* ``te-nvfp4-reciprocal``: ``quantize_nvfp4.cuh`` ``quantize_nvfp4_kernel``
  (433b1dbc), rowwise: ``S_enc / float(S_dec_b)`` by ``__fdiv_rn``, no clamp.
  No dispatch ever called this kernel (``cast/dispatch/quantize.cuh`` at
  433b1dbc and ``util/cast_kernels.cuh`` at 3f5b47549 route NVFP4 to
  ``quantize_transpose`` or ``quantize_transpose_vector_blockwise_fp4``), and
  TE removed it as unused in 7e8bc98b2 (PR #2946). Its own ``S_enc`` is
  ``1.0f / *output->scale``, a tensor no NVFP4 caller sets; fp8lab hands it the
  ``S_enc`` of the global amax, as for the other rules.
* ``te-nvfp4-fused``: ``specialized/quantize_transpose_nvfp4_tuned_1D.cuh``
  ``rowwise_scaling`` with ``compute_nvfp4_scaling_coefficient<float>``
  (523801df7: the route of a bf16 1D cast through ``quantize_transpose``) and
  ``quantize_transpose_nvfp4.cuh`` (523801df7, float32 or 2D), whose element
  path is ``te-nvfp4-divide``'s.

Every kernel casts with ``cvt.rn.satfinite.e2m1x2.f32`` (``ptx.cuh``
``mul_cvt_*_to_fp4_*x``; ``quantize_nvfp4_kernel`` through CUDA
``cuda_fp4.hpp`` ``__nv_fp4x4_e2m1(float4)`` -> ``__nv_cvt_float2_to_fp4x2(...,
cudaRoundNearest)``, the same instruction on sm_100), and a NaN becomes +6
(0x7): ``cuda_fp4.hpp``, "NaN converts to positive FP4_MAXNORM".

torchao 0.18.0 (``torchao/prototype/mx_formats/nvfp4_tensor.py``
``per_tensor_amax_to_scale``, ``nvfp4_quantize``; reached from
``NVFP4Tensor.to_nvfp4``) makes other choices, each a field of the rule:

* a divisor per-tensor scale ``S = fl(global_amax / 2688)``, with no special
  case for 0 or inf (:attr:`Nvfp4TensorScale.DIVISOR`); the element path's
  ``S_enc`` is then ``fl(1 / S)``;
* the block scale ``fl(fl(block_amax / 6) / S)`` (:attr:`Nvfp4Order.DIVIDE_DECODE`);
* ``torch.clamp`` of it to ``[finfo(e4m3fn).tiny, 448] = [2**-6, 448]`` before the
  e4m3 cast (``block_bounds``), so a zero block gets byte 0x08, not 0x00;
* the element multiplier ``fl(fl(1 / S) / d)``, i.e. ``ENCODE_QUOTIENT`` with
  that ``S_enc``;
* a block amax by ``torch.amax``, where a NaN wins (``amax_nan``);
* the e2m1 cast ``f32_to_f4_unpacked`` (``kernels.py``): RNE on the float32 bits
  after ``torch.clamp(., -6, 6)``, with a NaN coded from its bits
  (:attr:`Nvfp4NanCode.TORCH_BITS`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

from fp8lab.specs.rule_axes import AmaxNan

__all__ = [
    "NVFP4_RULES",
    "Nvfp4Inverse",
    "Nvfp4NanCode",
    "Nvfp4Order",
    "Nvfp4ScaleRule",
    "Nvfp4TensorScale",
]


class Nvfp4Order(enum.Enum):
    """The float32 expression of ``S_dec_b``; see the module docstring."""

    DIVIDE = "divide"
    RECIPROCAL = "reciprocal"
    FUSED = "fused"
    #: ``fl(fl(block_amax / 6) / S_dec)``: a divisor per-tensor scale divides (torchao)
    DIVIDE_DECODE = "divide-decode"


class Nvfp4TensorScale(enum.Enum):
    """How the per-tensor scale comes from the global amax ``g``.

    ``ENCODE``: TE's multiplier ``S_enc = fminf(2688 / g, FLT_MAX)`` (1 where
    that or ``g`` is 0), ``S_dec = float(1.0 / S_enc)``. ``DIVISOR``: torchao's
    ``S_dec = fl(g / 2688)``, no special case (``g = 0`` gives 0), and ``S_enc =
    fl(1 / S_dec)`` (inf where ``S_dec`` is 0).
    """

    ENCODE = "encode"
    DIVISOR = "divisor"


class Nvfp4NanCode(enum.Enum):
    """The e2m1 code of a NaN product ``x * multiplier``.

    ``MAXNORM``: +6 (0x7), the PTX cast's. ``TORCH_BITS``: torchao's bitwise
    cast on the float32 NaN as torch on x86 CPU forms it: a NaN decoded from the
    e4m3 byte 0x7F/0xFF (``0x7FF00000``/``0xFFF00000``) codes 0x4/0xC; the
    default NaN of an invalid operation (``0 * inf``, ``0xFFC00000``) codes 0xB,
    and an input NaN its own sign with 0x3. A NaN the scale side makes (``0 / 0``,
    ``inf / inf``) is the negative default NaN, so its block byte is 0xFF.
    """

    MAXNORM = "maxnorm"
    TORCH_BITS = "torch-bits"


class Nvfp4Inverse(enum.Enum):
    """The element multiplier a kernel derives from the decoded block byte ``d``.

    ``DECODE_PRODUCT``: ``fminf(1 / (d * S_dec), FLT_MAX)`` with ``S_dec =
    float(1 / S_enc)`` (a zero block gets FLT_MAX, so its zeros stay 0).
    ``ENCODE_QUOTIENT``: ``S_enc / d``, unclamped (a zero block gets +inf, and
    0 * inf = NaN codes +6).
    """

    DECODE_PRODUCT = "decode-product"
    ENCODE_QUOTIENT = "encode-quotient"


@dataclass(frozen=True)
class Nvfp4ScaleRule:
    """One NVFP4 rule: block-scale formula and element path.

    Args:
        name: the fixed rule name.
        source: file, function and commit of the block formula.
        order: the float32 expression of the block decode scale.
        clamp_block: whether ``fminf(., FLT_MAX)`` wraps it (only a NaN tells).
        block: elements per scale.
        element_source: where the element path was read, or None if it was not
            (then the rule models the block-scale byte only, and GQ refuses it).
        inverse: how the element multiplier is formed.
        tensor_scale: how the per-tensor scale comes from the global amax.
        block_bounds: ``(lo, hi)`` the block scale is clamped to before its e4m3
            cast (NaN kept), or None (TE: the SATFINITE cast alone).
        amax_nan: whether a NaN is skipped (``fmaxf``) or wins in the block amax.
        nan_code: the e2m1 code of a NaN product.
    """

    name: str
    source: str
    order: Nvfp4Order
    clamp_block: bool
    block: int = 16
    element_source: str | None = None
    inverse: Nvfp4Inverse = Nvfp4Inverse.DECODE_PRODUCT
    tensor_scale: Nvfp4TensorScale = Nvfp4TensorScale.ENCODE
    block_bounds: tuple[float, float] | None = None
    amax_nan: AmaxNan = AmaxNan.SKIP
    nan_code: Nvfp4NanCode = Nvfp4NanCode.MAXNORM


_TE = "TransformerEngine transformer_engine/common/cast/nvfp4/"
_CORE = _TE + "core_nvfp4.cuh "
_CVT = "cvt.rn.satfinite.e2m1x2.f32, NaN -> +6"
_TORCHAO = "torchao 0.18.0 torchao/prototype/mx_formats/"
#: torch.finfo(torch.float8_e4m3fn).tiny, torchao's E4M3_EPS: the smallest normal e4m3
E4M3_TINY = 2.0**-6

NVFP4_RULES: MappingProxyType[str, Nvfp4ScaleRule] = MappingProxyType(
    {
        r.name: r
        for r in (
            Nvfp4ScaleRule(
                "te-nvfp4-divide",
                _CORE + "quantization_and_transposition_SF::compute_decoding_scaling_factor "
                "(433b1dbc): e4m3(fminf(block_amax / 6.0f * S_enc, FLT_MAX))",
                Nvfp4Order.DIVIDE,
                clamp_block=True,
                element_source=_TE + "quantize_transpose_nvfp4.cuh "
                "quantize_transpose_nvfp4_kernel, rowwise "
                "(433b1dbc): block_amax by fmaxf(|x|) from 0, S_dec = 1.0 / S_enc, "
                "x * fminf(1.0f / (float(S_dec_b_fp8) * S_dec), FLT_MAX), "
                "ptx mul_cvt_*_to_fp4_4x (" + _CVT + ")",
            ),
            Nvfp4ScaleRule(
                "te-nvfp4-reciprocal",
                _CORE + "quantization_SF::compute_decoding_scaling_factor (433b1dbc): "
                "e4m3(block_amax * rcp_6f * S_enc)",
                Nvfp4Order.RECIPROCAL,
                clamp_block=False,
                element_source=_TE + "quantize_nvfp4.cuh quantize_nvfp4_kernel, rowwise "
                "(433b1dbc; never dispatched, removed in 7e8bc98b2): block_amax by "
                "fmaxf(|x|) from 0, block_scale_inverse = __fdiv_rn(S_enc, "
                "float(S_dec_b_fp8)), ptx::mul_cvt_4x: float(x) * inverse, "
                "fp4e2m1x4(float4) (" + _CVT + "); S_enc of the global amax (the "
                "kernel's own is 1.0f / *output->scale)",
                inverse=Nvfp4Inverse.ENCODE_QUOTIENT,
            ),
            Nvfp4ScaleRule(
                "te-nvfp4-fused",
                _CORE + "quantization_and_transposition_SF::compute_decoding_scaling_factor "
                "(523801df7): e4m3(fminf(block_amax * (S_enc * fp4_max_inv), FLT_MAX))",
                Nvfp4Order.FUSED,
                clamp_block=True,
                element_source=_TE + "specialized/quantize_transpose_nvfp4_tuned_1D.cuh "
                "rowwise_scaling, compute_nvfp4_scaling_coefficient<float> (523801df7; "
                "USE_FAST_MATH off): block_amax by abs_max_2x from 0, S_dec = 1.0f / "
                "S_enc, fminf(1.0f / (float(S_dec_b_fp8) * S_dec), FLT_MAX), "
                "mul_cvt_bf16_to_fp4_8x_round_to_nearest (" + _CVT + "); the same "
                "element path in quantize_transpose_nvfp4.cuh (523801df7)",
            ),
            Nvfp4ScaleRule(
                "torchao-0.18-nvfp4",
                _TORCHAO + "nvfp4_tensor.py per_tensor_amax_to_scale: S = "
                "amax.float() / (448 * 6); nvfp4_quantize (from NVFP4Tensor.to_nvfp4, "
                "per_tensor_scale given): e4m3(torch.clamp(torch.amax(|x|) / 6 / S, "
                "E4M3_EPS = 2**-6, 448))",
                Nvfp4Order.DIVIDE_DECODE,
                clamp_block=False,
                element_source=_TORCHAO + "nvfp4_tensor.py nvfp4_quantize: x * ((1.0 / S) "
                "/ float(block_byte)), torch.clamp(., -6, 6), kernels.py "
                "f32_to_f4_unpacked (RNE on the float32 bits; a NaN coded from its "
                "bits, as torch on x86 CPU forms it), pack_uint4 (even element in "
                "the low nibble)",
                inverse=Nvfp4Inverse.ENCODE_QUOTIENT,
                tensor_scale=Nvfp4TensorScale.DIVISOR,
                block_bounds=(E4M3_TINY, 448.0),
                amax_nan=AmaxNan.PROPAGATE,
                nan_code=Nvfp4NanCode.TORCH_BITS,
            ),
        )
    }
)
