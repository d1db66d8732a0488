r"""compressed-tensors' dynamic FP8 activation quantizers as GQ kernels, called as it calls them.

Each computes the scale with the library's ``compute_dynamic_scales_and_zp``
(symmetric float8_e4m3fn ``QuantizationArgs``, ``dynamic=True``) and
quantizes with its ``quantize`` (compressed_tensors/quantization/utils/helpers.py,
lifecycle/forward.py: the two steps of ``forward_quantize``), and returns the
codes and the library's float32 scale (a divisor, amax / 448). Per token, the
activation goes in as ``[batch, tokens, hidden]`` = ``[1, M, K]``: on a 2-D
tensor the library's TOKEN strategy reduces over no dimension and makes one
scale for the whole tensor. A bfloat16 activation is handed over as float32:
on bfloat16 the library computes the scale and the quotient in bfloat16 (its
zero-scale eps then 2^-7), which no rule states. They pass GQ under the rules
fp8lab names after the library and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-token --rule compressed-tensors-0.20-token \
        --kernel fp8lab.kernels.library.compressed_tensors_fp8:token --arrays torch   # PASS

torch and compressed-tensors (the ``ecosystem`` extra) are imported when a kernel is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["group_128", "tensor", "token"]


def _quantize(x: Any, strategy: str, group_size: int | None = None) -> tuple[Any, Any]:
    import torch
    from compressed_tensors.quantization import QuantizationArgs
    from compressed_tensors.quantization.lifecycle.forward import quantize
    from compressed_tensors.quantization.utils import compute_dynamic_scales_and_zp

    args = QuantizationArgs(
        num_bits=8,
        type="float",
        symmetric=True,
        strategy=strategy,
        group_size=group_size,
        dynamic=True,
    )
    scale, zero_point = compute_dynamic_scales_and_zp(x, args, module=None)
    codes = quantize(x, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    return codes, scale


def tensor(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and the float32 scale [1] of ``x`` under one scale."""
    import torch

    codes, scale = _quantize(x.to(torch.float32), "tensor")
    return codes, scale.reshape(-1)


def token(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 scale per token (row) [M]."""
    import torch

    codes, scale = _quantize(x.to(torch.float32)[None], "token")
    return codes[0], scale.reshape(-1)


def group_128(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 scale per 128 elements of a row [M, K/128]."""
    import torch

    codes, scale = _quantize(x.to(torch.float32), "group", 128)
    return codes, scale.reshape(x.shape[0], -1)
