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

The kernel lives in the package (:mod:`fp8lab.kernels.library.torchao_nvfp4`); this
file names it here, so ``--kernel torchao_nvfp4:quantize`` works from this folder.
"""

from fp8lab.kernels.library.torchao_nvfp4 import quantize

__all__ = ["quantize"]
