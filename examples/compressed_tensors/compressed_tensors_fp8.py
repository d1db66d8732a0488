r"""compressed-tensors' dynamic FP8 activation quantizers as GQ kernels, called as it calls them.

Each computes the scale with the library's ``compute_dynamic_scales_and_zp``
(symmetric float8_e4m3fn ``QuantizationArgs``, ``dynamic=True``) and
quantizes with its ``quantize``, the two steps of its ``forward_quantize``,
and returns the codes and the library's float32 scale (a divisor, amax / 448).
Per token, the activation goes in as ``[batch, tokens, hidden]`` = ``[1, M, K]``:
on a 2-D tensor the library's TOKEN strategy reduces over no dimension and
makes one scale for the whole tensor. A bfloat16 activation is handed over as
float32: on bfloat16 the library computes the scale and the quotient in
bfloat16 (its zero-scale eps then 2^-7), which no rule states. They pass GQ
under the rules fp8lab names after the library and fail vLLM's:

    fp8lab gates --gate GQ --scheme per-tensor --rule compressed-tensors-0.20-tensor \
        --kernel compressed_tensors_fp8:tensor --arrays torch       # PASS
    fp8lab gates --gate GQ --scheme per-token --rule compressed-tensors-0.20-token \
        --kernel compressed_tensors_fp8:token --arrays torch        # PASS
    fp8lab gates --gate GQ --scheme per-group --rule compressed-tensors-0.20-group-128 \
        --kernel compressed_tensors_fp8:group_128 --arrays torch    # PASS
    fp8lab gates --gate GQ --scheme per-token --rule vllm-native-per-token \
        --kernel compressed_tensors_fp8:token --arrays torch        # FAIL

The kernels live in the package (:mod:`fp8lab.kernels.library.compressed_tensors_fp8`);
this file names them here, so ``--kernel compressed_tensors_fp8:token`` works from this folder.
"""

from fp8lab.kernels.library.compressed_tensors_fp8 import group_128, tensor, token

__all__ = ["group_128", "tensor", "token"]
