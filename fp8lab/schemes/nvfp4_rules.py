"""NVFP4 block-scale rules as data: which float32 expression feeds the e4m3 cast.

NVFP4 stores e2m1 elements with one e4m3 scale per 16 elements and a float32
per-tensor encode scale ``S_enc = fminf(2688 / global_amax, FLT_MAX)`` (1 when
``global_amax == 0`` or ``S_enc == 0``). TransformerEngine's
``transformer_engine/common/cast/nvfp4/core_nvfp4.cuh`` computes the block
scale byte ``e4m3_satfinite(S_dec_b)`` with three float32 expressions over its
history, read in this session:

* ``divide`` (433b1dbc, transpose path): ``(block_amax / 6) * S_enc``, then ``fminf(., FLT_MAX)``;
* ``reciprocal`` (433b1dbc, non-transpose path): ``(block_amax * fl(1/6)) * S_enc``;
* ``fused`` (0718c016, both paths): ``block_amax * (S_enc * fl(1/6))``.

The element path is modelled where it was read: ``te-nvfp4-divide`` is the
block scale of ``quantize_transpose_nvfp4.cuh`` (433b1dbc, which uses
``quantization_and_transposition_SF``), whose elements are
``cvt.rn.satfinite.e2m1x2.f32(x * fminf(1 / (float(S_dec_b) * S_dec), FLT_MAX))``
with ``S_dec = float(1.0 / S_enc)``; a NaN becomes +6 (0x7), CUDA
``cuda_fp4.h`` "NaN input values result in positive MAXNORM". The other two
rules model the block-scale byte only (``element_source`` is None): their
kernels' element paths were not read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["NVFP4_RULES", "Nvfp4Order", "Nvfp4ScaleRule"]


class Nvfp4Order(enum.Enum):
    """The float32 expression of ``S_dec_b``; see the module docstring."""

    DIVIDE = "divide"
    RECIPROCAL = "reciprocal"
    FUSED = "fused"


@dataclass(frozen=True)
class Nvfp4ScaleRule:
    """One NVFP4 block-scale formula.

    Args:
        name: the fixed rule name.
        source: file, function and commit.
        order: the float32 expression of the block decode scale.
        block: elements per scale.
        element_source: where the element path was read, or None if it was not
            (then the rule models the block-scale byte only, and GQ refuses it).
    """

    name: str
    source: str
    order: Nvfp4Order
    block: int = 16
    element_source: str | None = None


_TE = "TransformerEngine transformer_engine/common/cast/nvfp4/core_nvfp4.cuh "

NVFP4_RULES: MappingProxyType[str, Nvfp4ScaleRule] = MappingProxyType(
    {
        r.name: r
        for r in (
            Nvfp4ScaleRule(
                "te-nvfp4-divide",
                _TE + "quantization_and_transposition_SF::compute_decoding_scaling_factor "
                "(433b1dbc): e4m3(fminf(block_amax / 6.0f * S_enc, FLT_MAX))",
                Nvfp4Order.DIVIDE,
                element_source="TransformerEngine transformer_engine/common/cast/nvfp4/"
                "quantize_transpose_nvfp4.cuh quantize_transpose_nvfp4_kernel, rowwise "
                "(433b1dbc): block_amax by fmaxf(|x|) from 0, S_dec = 1.0 / S_enc, "
                "x * fminf(1.0f / (float(S_dec_b_fp8) * S_dec), FLT_MAX), "
                "ptx mul_cvt_*_to_fp4_4x (cvt.rn.satfinite.e2m1x2.f32)",
            ),
            Nvfp4ScaleRule(
                "te-nvfp4-reciprocal",
                _TE + "quantization_SF::compute_decoding_scaling_factor (433b1dbc): "
                "e4m3(block_amax * rcp_6f * S_enc)",
                Nvfp4Order.RECIPROCAL,
            ),
            Nvfp4ScaleRule(
                "te-nvfp4-fused",
                _TE + "both compute_decoding_scaling_factor (0718c016): "
                "e4m3(block_amax * (S_enc * fp4_max_inv))",
                Nvfp4Order.FUSED,
            ),
        )
    }
)
