r"""A per-token-group FP8 quant kernel in Triton, in the style of vLLM's Triton kernel.

Each program quantizes one group of 128 consecutive elements of a row: the
group's absolute maximum (at least ``eps``), the scale ``absmax / 448``, then
``clamp(x / scale, -448, 448)`` converted to float8 e4m3fn. This is the rule
fp8lab calls ``vllm-per-group``, whose CUDA kernel divides exactly, so the
divisions here are ``tl.math.div_rn``: Triton compiles ``/`` on float32 to
``div.full.f32``, an approximation, and written with ``/`` this kernel gives
scales one ulp off in 21 of GQ's 28 calls on an H200 (``scripts/gpu-check``).
Check it on a CPU, in Triton's interpreter with the GPU's float8 rounding:

    fp8lab gates --gate GQ --scheme per-group --rule vllm-per-group --arrays triton \
        --kernel my_triton_quant:quant             # PASS
    fp8lab gates --gate GQ --scheme per-group --rule vllm-per-group --arrays triton \
        --kernel my_triton_quant:quant_reciprocal  # FAIL

``quant_reciprocal`` multiplies by ``1 / scale`` where the rule divides: a
defect of one rounding that GQ's designed rows expose.
"""

import torch
import triton
import triton.language as tl

GROUP = 128
FP8_MAX = 448.0
EPS = 1e-10


@triton.jit
def _group_quant(x_ptr, q_ptr, s_ptr, eps, fp8_max, GROUP: tl.constexpr, DIVIDE: tl.constexpr):  # noqa: N803
    g = tl.program_id(0)
    cols = tl.arange(0, GROUP)
    x = tl.load(x_ptr + g * GROUP + cols).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), eps)
    scale = tl.math.div_rn(absmax, fp8_max)
    y = tl.math.div_rn(x, scale) if DIVIDE else x * tl.math.div_rn(1.0, scale)
    y = tl.clamp(y, -fp8_max, fp8_max)
    tl.store(q_ptr + g * GROUP + cols, y.to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + g, scale)


def _launch(x: torch.Tensor, divide: bool) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    x = x.contiguous()
    q = torch.empty((m, k), dtype=torch.float8_e4m3fn, device=x.device)
    s = torch.empty((m, k // GROUP), dtype=torch.float32, device=x.device)
    _group_quant[(m * k // GROUP,)](x, q, s, EPS, FP8_MAX, GROUP=GROUP, DIVIDE=divide)
    return q, s


def quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes [M, K] and float32 scales [M, K/128] of ``x`` (float32 or bfloat16)."""
    return _launch(x, divide=True)


def quant_reciprocal(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same, multiplying by the scale's reciprocal: not the rule."""
    return _launch(x, divide=False)
