r"""compressed-tensors' FP8 quantizers as GQ kernels, called as it calls them.

Each dynamic one computes the scale with the library's
``compute_dynamic_scales_and_zp`` (symmetric float8_e4m3fn ``QuantizationArgs``,
``dynamic=True``) and quantizes with its ``quantize``
(compressed_tensors/quantization/utils/helpers.py, lifecycle/forward.py: the two
steps of ``forward_quantize``), and returns the codes and the library's scale (a
divisor, amax / 448) widened to float32 (exact). Per token, the activation goes
in as ``[batch, tokens, hidden]`` = ``[1, M, K]``: on a 2-D tensor the library's
TOKEN strategy reduces over no dimension and makes one scale for the whole
tensor. A bfloat16 activation is handed over as it is: the library then
computes the scale and the quotient in bfloat16 (its zero-scale eps 2^-7),
which the rules state (``arithmetic = "input"``). They pass GQ under the rules
fp8lab names after the library and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-token --rule compressed-tensors-0.20-token \
        --kernel fp8lab.kernels.library.compressed_tensors_fp8:token --arrays torch   # PASS

Per channel (``strategy="channel"``) is a static, weight-only strategy:
``dynamic=True`` is refused, and the scale is the library's
``calculate_qparams`` on a per-row min and max, which an observer computes
(compressed-tensors has no reduction of its own for it). A weight ``[out, in]``
gets one scale per output channel, ``[out, 1]``: GQ's per-token layout, one
scale per row. The weight is widened to float32 first (the observer's dtype is
not compressed-tensors'), so its rule is float32 arithmetic.

torch and compressed-tensors (the ``ecosystem`` extra) are imported when a kernel is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["channel", "group_128", "tensor", "token"]


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
    return codes, scale.to(torch.float32)


def tensor(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and the float32 scale [1] of ``x`` under one scale."""
    codes, scale = _quantize(x, "tensor")
    return codes, scale.reshape(-1)


def token(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 scale per token (row) [M]."""
    codes, scale = _quantize(x[None], "token")
    return codes[0], scale.reshape(-1)


def group_128(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 scale per 128 elements of a row [M, K/128]."""
    codes, scale = _quantize(x, "group", 128)
    return codes, scale.reshape(x.shape[0], -1)


def channel(w: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 scale per output channel (row) [M] of a weight ``w``."""
    import torch
    from compressed_tensors.quantization import QuantizationArgs
    from compressed_tensors.quantization.lifecycle.forward import quantize
    from compressed_tensors.quantization.utils import calculate_qparams

    args = QuantizationArgs(num_bits=8, type="float", symmetric=True, strategy="channel")
    w32 = w.to(torch.float32)
    low = torch.amin(w32, dim=-1, keepdim=True)  # the observer's per-channel min and max
    high = torch.amax(w32, dim=-1, keepdim=True)
    scale, zero_point = calculate_qparams(low, high, args)
    codes = quantize(w32, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    return codes, scale.reshape(-1)
