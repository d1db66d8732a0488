"""G3's NaN-propagation case: NaN operand codes must reach the outputs they touch.

The matmul contract (fp8lab.kernels.matmul_protocol) decodes 0x7F and 0xFF to NaN and
lets IEEE arithmetic carry it, so every output whose A row or B row holds a
NaN code is NaN and every other output is finite. The seed's operands never
hold a NaN code (the quant saturates; B's NaN bytes are remapped), so without
this case a kernel that decodes 0x7F as 480 passes. One assertion per
placement: 0x7F in A and in B for f32 and bf16 output, and 0xFF in B. The
expected NaN mask is built before the kernel is called, and the kernel gets
private read-only operands (:func:`fp8lab.runtime.guard.call_kernel`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fp8lab.gates.records import CaseResult
from fp8lab.kernels.matmul_protocol import MatmulKernel
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.gemm_decl import GemmDeclaration

__all__ = ["NAN_PLACEMENTS", "NAN_SCALES", "nan_propagation_case", "placement_operands"]

# (operand, row, code, out_dtype)
NAN_PLACEMENTS = (
    ("a", 1, 0x7F, "f32"),
    ("b", 2, 0x7F, "f32"),
    ("b", 5, 0xFF, "f32"),
    ("a", 0, 0x7F, "bf16"),
    ("b", 7, 0x7F, "bf16"),
)
_M, _N, _K = 3, 16, 16
NAN_SCALES = (0.5, 0.25)  # s_in, s_w of every placement


def placement_operands(
    operand: str, row: int, code: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A [3,16] and B [16,16] codes with ``code`` placed, and where the output must be NaN."""
    rng = np.random.default_rng(7)  # fixed: finite codes 0x01..0x5F, both signs
    a = (rng.integers(1, 0x60, (_M, _K)) | rng.integers(0, 2, (_M, _K)) * 0x80).astype(np.uint8)
    b = (rng.integers(1, 0x60, (_N, _K)) | rng.integers(0, 2, (_N, _K)) * 0x80).astype(np.uint8)
    nan = np.zeros((_M, _N), np.bool_)
    if operand == "a":
        a[row, row] = code
        nan[row, :] = True
    else:
        b[row, row] = code
        nan[:, row] = True
    return a, b, nan


def _matmul(kernel: MatmulKernel, *args: Any) -> Any:
    with np.errstate(invalid="ignore", over="ignore"):
        return kernel.matmul(*args)


_DTYPE_NAMES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def _scales(decl: GemmDeclaration | None) -> tuple[Any, Any]:
    s_in, s_w = (np.float32(s) for s in NAN_SCALES)
    if decl is None:
        return s_in, s_w
    if decl.scales == "none":
        return np.float32(1), np.float32(1)
    a = np.full(_M, s_in, np.float32) if decl.a_scale == "row" else s_in
    return a, np.full(_N, s_w, np.float32) if decl.b_scale == "column" else s_w


def nan_propagation_case(kernel: MatmulKernel, decl: GemmDeclaration | None = None) -> CaseResult:
    """Run every placement; an assertion fails unless NaN is exactly where it belongs.

    With ``decl``, the scales and out dtypes are those it takes (an out dtype it
    does not take becomes its first).
    """
    failed, error = 0, ""
    for operand, row, code, asked in NAN_PLACEMENTS:
        a, b, nan = placement_operands(operand, row, code)
        out = asked if decl is None or asked in decl.outputs else decl.outputs[0]
        try:
            s_in, s_w = _scales(decl)
            got = call_kernel(_matmul, kernel, a, b, s_in, s_w, out)
        except KernelFaultError as exc:
            error, failed = exc.reason, failed + 1
            continue
        want = _DTYPE_NAMES[out]
        if not isinstance(got, np.ndarray) or got.dtype.name != want or got.shape != nan.shape:
            error = f"kernel returned {getattr(got, 'dtype', type(got))}, want {want}{nan.shape}"
            failed += 1
            continue
        failed += not np.array_equal(np.isnan(got.astype(np.float32)), nan)
    words = len(NAN_PLACEMENTS) * _M * _N
    return CaseResult("nan-propagation", words, len(NAN_PLACEMENTS), failed, 0, failed, 1.0, error)
