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

Only the block scale is modelled; the element path is not (it is not in that
file at 433b1dbc).
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
    """

    name: str
    source: str
    order: Nvfp4Order
    block: int = 16


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
