r"""torchao's MXFP8 quantizer (``prototype.mx_formats.mx_tensor.to_mx``) as GQ kernels.

``floor`` and ``rceil`` call ``to_mx(x, torch.float8_e4m3fn, 32, scaling_mode=...)``
on the CPU and return the element codes [M, K] and the e8m0 scale bytes
[M, K // 32]. They pass GQ under ``torchao-0.18-mxfp8-floor`` and
``torchao-0.18-mxfp8-rceil`` and fail ``ocp-floor`` and ``rceil`` in the
special-value cases only (a block whose scale byte is 0, an inf amax and, for
FLOOR, a NaN block; for RCEIL also a float32 ``log2`` that rounds down):

    fp8lab gates --gate GQ --scheme mxfp8 --rule torchao-0.18-mxfp8-floor \
        --kernel fp8lab.kernels.library.torchao_mxfp8:floor --arrays torch   # PASS

torch and torchao (the ``ecosystem`` extra) are imported when a kernel is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["floor", "rceil"]


def _run(x: Any, mode: str) -> tuple[Any, Any]:
    import torch
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    how = getattr(ScaleCalculationMode, mode)
    scale, codes = to_mx(x.contiguous(), torch.float8_e4m3fn, 32, scaling_mode=how)
    return codes, scale.view(torch.uint8)


def floor(x: Any) -> tuple[Any, Any]:
    """FLOOR mode of torchao (exponent bits of amax, less emax of e4m3)."""
    return _run(x, "FLOOR")


def rceil(x: Any) -> tuple[Any, Any]:
    """RCEIL mode of torchao (ceil(log2(amax / 448)) in float32)."""
    return _run(x, "RCEIL")
