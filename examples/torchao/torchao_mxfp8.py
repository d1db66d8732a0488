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
"""

import torch
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.mx_tensor import to_mx


def _run(x: torch.Tensor, mode: ScaleCalculationMode) -> tuple[torch.Tensor, torch.Tensor]:
    scale, codes = to_mx(x.contiguous(), torch.float8_e4m3fn, 32, scaling_mode=mode)
    return codes, scale.view(torch.uint8)


def floor(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """FLOOR mode of torchao (exponent bits of amax, less emax of e4m3)."""
    return _run(x, ScaleCalculationMode.FLOOR)


def rceil(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """RCEIL mode of torchao (ceil(log2(amax / 448)) in float32)."""
    return _run(x, ScaleCalculationMode.RCEIL)
