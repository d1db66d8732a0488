r"""torchao's NVFP4 quantizer as a GQ kernel, called the way ``NVFP4Tensor.to_nvfp4`` calls it.

``quantize`` turns GQ's global amax into torchao's per-tensor scale with
``per_tensor_amax_to_scale`` and quantizes with ``nvfp4_quantize``; it hands
back one e2m1 code per byte (torchao packs two: element ``2i`` in the low
nibble, ``2i + 1`` in the high) and the e4m3fn block-scale bytes. It passes
GQ under the rule fp8lab names after it and fails TransformerEngine's:

    fp8lab gates --gate GQ --scheme nvfp4 --rule torchao-0.18-nvfp4 \
        --kernel torchao_nvfp4:quantize --arrays torch      # PASS
    fp8lab gates --gate GQ --scheme nvfp4 --rule te-nvfp4-divide \
        --kernel torchao_nvfp4:quantize --arrays torch      # FAIL
"""

import torch
from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale


def quantize(x: torch.Tensor, global_amax: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """e2m1 codes [M, K] (low nibble) and e4m3fn block-scale bytes [M, K/16] of ``x``."""
    per_tensor_scale = per_tensor_amax_to_scale(global_amax.reshape(()))
    scales, packed = nvfp4_quantize(x.contiguous(), 16, per_tensor_scale)
    codes = torch.stack([packed & 0x0F, packed >> 4], dim=-1).reshape(x.shape)
    return codes, scales.view(torch.uint8).reshape(x.shape[0], -1)
