r"""torchao's float8 training quantizers as GQ kernels, called the way torchao calls them.

``tensorwise`` and ``rowwise`` compute the scale with torchao's own
``tensor_to_scale`` and quantize with ``hp_tensor_and_scale_to_float8``, and
return the codes and torchao's stored scale (a multiplier, 448 / amax). They
pass GQ under the rules fp8lab names after them and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-tensor --rule torchao-0.18-float8-tensorwise \
        --kernel torchao_float8:tensorwise --arrays torch      # PASS
    fp8lab gates --gate GQ --scheme per-token --rule torchao-0.18-float8-rowwise \
        --kernel torchao_float8:rowwise --arrays torch         # PASS
    fp8lab gates --gate GQ --scheme per-token --rule vllm-native-per-token \
        --kernel torchao_float8:rowwise --arrays torch         # FAIL
"""

import torch
from torchao.float8.config import ScalingGranularity
from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8
from torchao.float8.float8_utils import tensor_to_scale


def tensorwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and the float32 multiplier [1] of ``x`` under one scale."""
    s = tensor_to_scale(x, torch.float8_e4m3fn)
    t = hp_tensor_and_scale_to_float8(x, s, torch.float8_e4m3fn)
    return t._data, t._scale.reshape(-1)


def rowwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and one float32 multiplier per row [M]."""
    axiswise = {"scaling_granularity": ScalingGranularity.AXISWISE, "axiswise_dim": -1}
    s = tensor_to_scale(x, torch.float8_e4m3fn, **axiswise)
    t = hp_tensor_and_scale_to_float8(x, s, torch.float8_e4m3fn, axiswise_dim=-1)
    return t._data, t._scale.reshape(-1)
