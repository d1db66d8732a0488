r"""torchao's float8 training quantizers as GQ kernels, called the way torchao calls them.

``tensorwise`` and ``rowwise`` compute the scale with torchao's own
``tensor_to_scale`` and quantize with ``hp_tensor_and_scale_to_float8``
(torchao/float8/float8_utils.py, float8_training_tensor.py), and return the
codes and torchao's stored scale (a multiplier, 448 / amax). They pass GQ
under the rules fp8lab names after them and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-tensor --rule torchao-0.18-float8-tensorwise \
        --kernel fp8lab.kernels.library.torchao_float8:tensorwise --arrays torch   # PASS
    fp8lab gates --gate GQ --scheme per-token --rule vllm-native-per-token \
        --kernel fp8lab.kernels.library.torchao_float8:rowwise --arrays torch      # FAIL

torch and torchao (the ``ecosystem`` extra) are imported when a kernel is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["rowwise", "tensorwise"]


def tensorwise(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and the float32 multiplier [1] of ``x`` under one scale."""
    import torch
    from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8
    from torchao.float8.float8_utils import tensor_to_scale

    s = tensor_to_scale(x, torch.float8_e4m3fn)
    t = hp_tensor_and_scale_to_float8(x, s, torch.float8_e4m3fn)
    return t._data, t._scale.reshape(-1)


def rowwise(x: Any) -> tuple[Any, Any]:
    """Codes [M, K] and one float32 multiplier per row [M]."""
    import torch
    from torchao.float8.config import ScalingGranularity
    from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8
    from torchao.float8.float8_utils import tensor_to_scale

    axiswise = {"scaling_granularity": ScalingGranularity.AXISWISE, "axiswise_dim": -1}
    s = tensor_to_scale(x, torch.float8_e4m3fn, **axiswise)
    t = hp_tensor_and_scale_to_float8(x, s, torch.float8_e4m3fn, axiswise_dim=-1)
    return t._data, t._scale.reshape(-1)
