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

The kernels live in the package (:mod:`fp8lab.kernels.library.torchao_float8`); this
file names them here, so ``--kernel torchao_float8:rowwise`` works from this folder.
"""

from fp8lab.kernels.library.torchao_float8 import rowwise, tensorwise

__all__ = ["rowwise", "tensorwise"]
