r"""compressed-tensors' FP8 quantizers as GQ kernels, called as it calls them.

Each dynamic one computes the scale with the library's
``compute_dynamic_scales_and_zp`` and quantizes with its ``quantize``, the two
steps of its ``forward_quantize``; a bfloat16 activation goes in as it is, and
the library computes in bfloat16, as the rules state (``arithmetic = "input"``).
``channel`` is the static per-channel weight scale, ``calculate_qparams`` on
each row's min and max. They pass GQ under the rules fp8lab names after the
library and fail vLLM's:

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

The kernels live in the package (:mod:`fp8lab.kernels.library.compressed_tensors_fp8`);
this file names them here, so ``--kernel compressed_tensors_fp8:token`` works from this folder.
"""

from fp8lab.kernels.library.compressed_tensors_fp8 import channel, group_128, tensor, token

__all__ = ["channel", "group_128", "tensor", "token"]
