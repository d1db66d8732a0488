r"""torchao's NVFP4 quantizer (``prototype.mx_formats.nvfp4_tensor.nvfp4_quantize``) as a GQ kernel.

``quantize`` is called as ``NVFP4Tensor.to_nvfp4`` calls it: GQ's global amax
becomes torchao's per-tensor scale by ``per_tensor_amax_to_scale``, then
``nvfp4_quantize(x, 16, per_tensor_scale)``. It returns one e2m1 code per byte
[M, K] (torchao packs element ``2i`` in the low nibble, ``2i + 1`` in the high)
and the e4m3fn block-scale bytes [M, K // 16]. It passes GQ under
``torchao-0.18-nvfp4`` and fails ``te-nvfp4-divide``:

    fp8lab gates --gate GQ --scheme nvfp4 --rule torchao-0.18-nvfp4 \
        --kernel fp8lab.kernels.library.torchao_nvfp4:quantize --arrays torch   # PASS

torch and torchao (the ``ecosystem`` extra) are imported when the kernel is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["quantize"]


def quantize(x: Any, global_amax: Any) -> tuple[Any, Any]:
    """e2m1 codes [M, K] (low nibble) and e4m3fn block-scale bytes [M, K // 16] of ``x``."""
    import torch
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale

    per_tensor_scale = per_tensor_amax_to_scale(global_amax.reshape(()))
    scales, packed = nvfp4_quantize(x.contiguous(), 16, per_tensor_scale)
    codes = torch.stack([packed & 0x0F, packed >> 4], dim=-1).reshape(x.shape)
    return codes, scales.view(torch.uint8).reshape(x.shape[0], -1)
