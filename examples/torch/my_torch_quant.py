"""A static per-tensor fp8 quant kernel written in torch, as it is, and its divide twin.

``quant(x, scale)`` takes torch tensors (``x`` float32 or bfloat16, ``scale`` a
0-d float32 tensor) and returns a ``torch.float8_e4m3fn`` tensor: the input
widened to float32, multiplied by the reciprocal of the scale formed once,
clamped to ±448 and cast (ties to even). torch's cast keeps a NaN's sign.
``quant_divide`` divides by the scale instead: wrong on the rounding ties.

    fp8lab gates --gate G1 --kernel my_torch_quant:quant --arrays torch --nan-policy keep-sign
    fp8lab gates --gate G1 --kernel my_torch_quant:quant_divide   # FAIL (it declares both)

Computing in the input's bfloat16 (``x * (1 / scale)`` without ``.float()``)
rounds twice and fails too.
"""

import torch


def quant(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """e4m3fn of ``x * float32(1/scale)``, clamped to ±448."""
    return (x.float() * (1 / scale)).clamp(-448, 448).to(torch.float8_e4m3fn)


def quant_divide(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """e4m3fn of ``x / scale``: the divide twin."""
    return (x.float() / scale).clamp(-448, 448).to(torch.float8_e4m3fn)


for _kernel in (quant, quant_divide):
    _kernel.arrays = "torch"  # type: ignore[attr-defined]
    _kernel.nan_policy = "keep-sign"  # type: ignore[attr-defined]
