r"""compressed-tensors' dynamic FP8 activation quantizers as GQ kernels, called as it calls them.

Each computes the scale with the library's ``compute_dynamic_scales_and_zp``
(symmetric float8_e4m3fn ``QuantizationArgs``, ``dynamic=True``) and
quantizes with its ``quantize``, the two steps of its ``forward_quantize``,
and returns the codes and the library's float32 scale (a divisor, amax / 448).
Per token, the activation goes in as ``[batch, tokens, hidden]`` = ``[1, M, K]``:
on a 2-D tensor the library's TOKEN strategy reduces over no dimension and
makes one scale for the whole tensor. A bfloat16 activation is handed over as
it is: the library then computes the scale and the quotient in bfloat16 (its
zero-scale eps 2^-7), which the rules state (``arithmetic = "input"``); the
bfloat16 scale is returned widened to float32 (exact). They pass GQ under the
rules fp8lab names after the library and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-tensor --rule compressed-tensors-0.20-tensor \
        --kernel compressed_tensors_fp8:tensor --arrays torch       # PASS
    fp8lab gates --gate GQ --scheme per-token --rule compressed-tensors-0.20-token \
        --kernel compressed_tensors_fp8:token --arrays torch        # PASS
    fp8lab gates --gate GQ --scheme per-group --rule compressed-tensors-0.20-group-128 \
        --kernel compressed_tensors_fp8:group_128 --arrays torch    # PASS
    fp8lab gates --gate GQ --scheme per-token --rule compressed-tensors-0.20-channel \
        --kernel compressed_tensors_fp8:channel --arrays torch      # PASS
    fp8lab gates --gate GQ --scheme per-token --rule vllm-native-per-token \
        --kernel compressed_tensors_fp8:token --arrays torch        # FAIL

Per channel (``strategy="channel"``) is a static, weight-only strategy:
``dynamic=True`` is refused, and the scale is the library's
``calculate_qparams`` on a per-row min and max, which an observer computes
(compressed-tensors has no reduction of its own for it). A weight
``[out, in]`` gets one scale per output channel, ``[out, 1]``: GQ's per-token
layout, one scale per row. The weight is widened to float32 first (the
observer's dtype is not compressed-tensors'), so its rule is float32 arithmetic.
"""

import torch
from compressed_tensors.quantization import QuantizationArgs
from compressed_tensors.quantization.lifecycle.forward import quantize
from compressed_tensors.quantization.utils import calculate_qparams, compute_dynamic_scales_and_zp


def _args(strategy: str, group_size: int | None = None) -> QuantizationArgs:
    return QuantizationArgs(
        num_bits=8,
        type="float",
        symmetric=True,
        strategy=strategy,
        group_size=group_size,
        dynamic=True,
    )


def _quantize(x: torch.Tensor, args: QuantizationArgs) -> tuple[torch.Tensor, torch.Tensor]:
    scale, zero_point = compute_dynamic_scales_and_zp(x, args, module=None)
    codes = quantize(x, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    return codes, scale.to(torch.float32)


def tensor(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and the float32 scale [1] of ``x`` under one scale."""
    codes, scale = _quantize(x, _args("tensor"))
    return codes, scale.reshape(-1)


def token(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and one float32 scale per token (row) [M]."""
    codes, scale = _quantize(x[None], _args("token"))
    return codes[0], scale.reshape(-1)


def group_128(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and one float32 scale per 128 elements of a row [M, K/128]."""
    codes, scale = _quantize(x, _args("group", 128))
    return codes, scale.reshape(x.shape[0], -1)


def channel(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and one float32 scale per output channel (row) [M] of a weight ``w``."""
    args = QuantizationArgs(num_bits=8, type="float", symmetric=True, strategy="channel")
    w32 = w.to(torch.float32)
    low = torch.amin(w32, dim=-1, keepdim=True)  # the observer's per-channel min and max
    high = torch.amax(w32, dim=-1, keepdim=True)
    scale, zero_point = calculate_qparams(low, high, args)
    codes = quantize(w32, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    return codes, scale.reshape(-1)
