r"""torchao's MXFP8 quantizer (``prototype.mx_formats.mx_tensor.to_mx``) as GQ kernels.

``floor`` and ``rceil`` call ``to_mx(x, torch.float8_e4m3fn, 32, scaling_mode=...)``
on CPU and return the element codes [M, K] and the e8m0 scale bytes [M, K // 32].
Both fail the closest mxfp8 rule, in the special-value cases only (a block whose
scale byte is 0, an inf amax and, for FLOOR, a NaN block):

    fp8lab gates --gate GQ --scheme mxfp8 --rule ocp-floor \
        --kernel torchao_mxfp8:floor --arrays torch      # FAIL
    fp8lab gates --gate GQ --scheme mxfp8 --rule rceil \
        --kernel torchao_mxfp8:rceil --arrays torch      # FAIL

The rules ``torchao-0.18-mxfp8-floor`` and ``torchao-0.18-mxfp8-rceil`` name
those choices (``e8m0_zero``, ``e8m0_inf``, ``e8m0_nan_block``,
``e8m0_exponent``), and each mode PASSes GQ under its own.

The kernels live in the package (:mod:`fp8lab.kernels.library.torchao_mxfp8`);
this file names them here, so ``--kernel torchao_mxfp8:floor`` works from this folder.
"""

from fp8lab.kernels.library.torchao_mxfp8 import floor, rceil

__all__ = ["floor", "rceil"]
