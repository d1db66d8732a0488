"""torch's CPU ``_scaled_mm`` as a MatmulKernel (torch optional: imported on first call).

torch 2.13 on CPU takes one of two paths (aten/src/ATen/native/Blas.cpp,
``_scaled_mm_out_cpu``): oneDNN's fp8 matmul when mkldnn is enabled and the
CPU has AMX-INT8, else ``_scaled_mm_out_cpu_emulated``, which scales the
operands first, ``A' = f32(A)·s_a``, ``B' = f32(Bᵀ contiguous)·s_b``, then
``at::matmul`` in float32 (sgemm) and one cast to the output dtype.
:func:`torch_scaled_mm` forces the emulated path (mkldnn off for the call)
so the path does not depend on the machine; :func:`torch_scaled_mm_onednn`
leaves torch's choice alone. :func:`torch_matmul` is torch's float32
``A @ Bᵀ`` on CPU (its sgemm; the order depends on the shape, the CPU and
torch's thread count).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec, validate_matmul_args

__all__ = [
    "TORCH_SCALED_MM",
    "torch_available",
    "torch_matmul",
    "torch_scaled_mm",
    "torch_scaled_mm_onednn",
    "torch_threads",
    "torch_version",
]


def torch_available() -> bool:
    """Whether ``import torch`` works here."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def torch_threads() -> int:
    """The intra-op thread count of torch (the trees depend on it)."""
    import torch

    return int(torch.get_num_threads())


def torch_version() -> str:
    """``torch.__version__``."""
    import torch

    return str(torch.__version__)


def torch_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``torch.from_numpy(a) @ torch.from_numpy(b).T`` in float32 on CPU."""
    import torch

    ta = torch.from_numpy(np.array(a, np.float32))  # private writable copies
    tb = torch.from_numpy(np.array(b, np.float32))
    return np.asarray((ta @ tb.T).numpy()).copy()


def _scaled_mm(
    a_codes: Any, b_codes: Any, s_in: Any, s_w: Any, out_dtype: str, onednn: bool
) -> Any:
    import torch

    a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
    ta = torch.from_numpy(np.array(a)).view(torch.float8_e4m3fn)  # private writable copies
    tb = torch.from_numpy(np.array(b)).view(torch.float8_e4m3fn)
    dtype = torch.float32 if out == "f32" else torch.bfloat16
    was = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(onednn)  # mkldnn.flags() would also warn about TF32
    try:
        got = torch._scaled_mm(
            ta, tb.t(), scale_a=torch.tensor(float(si)), scale_b=torch.tensor(float(sw)),
            out_dtype=dtype,
        )  # fmt: skip
    finally:
        torch._C._set_mkldnn_enabled(was)
    if out == "f32":
        return got.numpy().copy()
    return got.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()


def torch_scaled_mm(
    a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
) -> np.ndarray:
    """``torch._scaled_mm(A, Bᵀ, s_in, s_w)`` on CPU, emulated path (mkldnn off)."""
    out: np.ndarray = _scaled_mm(a_codes, b_codes, s_in, s_w, out_dtype, onednn=False)
    return out


def torch_scaled_mm_onednn(
    a_codes: np.ndarray, b_codes: np.ndarray, s_in: Any, s_w: Any, out_dtype: str
) -> np.ndarray:
    """The same call with torch's own choice (oneDNN where the CPU has AMX-INT8)."""
    out: np.ndarray = _scaled_mm(a_codes, b_codes, s_in, s_w, out_dtype, onednn=True)
    return out


for _func in (torch_matmul, torch_scaled_mm, torch_scaled_mm_onednn):
    setattr(_func, "library", "torch")  # noqa: B010 - read by fp8lab.kernels.sources.library_facts

# What it claims before inference: operands scaled first; the sum is inferred per shape
# (fp8lab.order.inferred_spec), products fused into the adds (sgemm's FMA chain).
TORCH_SCALED_MM = FunctionMatmulKernel(
    "torch_scaled_mm_cpu", torch_scaled_mm, MatmulSpec(epilogue="prescaled")
)
