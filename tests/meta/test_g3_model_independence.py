"""Test the testers: G3's bitwise model shares no code with the kernel it checks.

A regression planted in the kernel-side epilogue (the function the built-in
``vllm_cpp`` kernel calls, edited in place as a source change would be) must
turn G3 red. While the model called the same ``apply_epilogue``, both sides
moved together and G3 stayed green with 0 bitwise mismatches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from fp8lab.codecs import decode
from fp8lab.gates import GateStatus, run_g3
from fp8lab.gates.ulp import bits_differ
from fp8lab.kernels import matmul as kernel_port
from fp8lab.kernels import matmul_epilogue as kernel_epilogue
from fp8lab.kernels.matmul import BUILTIN_MATMUL_KERNELS
from fp8lab.kernels.matmul_epilogue import BF16
from fp8lab.populations.gemm import SEED_CASES, g3_operands

# The planted bodies run in the globals of the module they are planted in.
__all__ = ["BF16", "decode"]


def two_scalars_instead_of_folded(
    acc: np.ndarray, s_in: Any, s_w: Any, out_dtype: str, spec: Any
) -> np.ndarray:
    """Regression: the folded epilogue applies the two scalars one at a time."""
    acc = np.asarray(acc, np.float32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = (np.float32(s_in) * (np.float32(s_w) * acc)).astype(np.float32)
        if out_dtype == "bf16":
            return out.astype(BF16)
        if spec.bf16_epilogue:
            return out.astype(BF16).astype(np.float32)
        return out


def alpha_kept_in_float64(
    acc: np.ndarray, s_in: Any, s_w: Any, out_dtype: str, spec: Any
) -> np.ndarray:
    """Regression: alpha = s_in * s_w is never rounded to float32."""
    acc = np.asarray(acc, np.float32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        alpha = np.float64(s_in) * np.float64(s_w)
        out = (alpha * acc.astype(np.float64)).astype(np.float32)
        if out_dtype == "bf16":
            return out.astype(BF16)
        if spec.bf16_epilogue:
            return out.astype(BF16).astype(np.float32)
        return out


REGRESSIONS: dict[str, Callable[..., np.ndarray]] = {
    "two_scalars_instead_of_folded": two_scalars_instead_of_folded,
    "alpha_kept_in_float64": alpha_kept_in_float64,
}


def decode_flushing_subnormals(a_codes: np.ndarray, b_codes: np.ndarray) -> tuple[Any, Any]:
    """Regression: the kernel's operand decode flushes subnormal values to zero."""
    a = decode(a_codes, "e4m3fn", dtype=np.float32)
    b = decode(b_codes, "e4m3fn", dtype=np.float32)
    tiny = np.float32(2.0**-6)
    return np.where(np.abs(a) < tiny, np.float32(0), a), np.where(
        np.abs(b) < tiny, np.float32(0), b
    )


def _kernel_output() -> np.ndarray:
    case = SEED_CASES[1]
    a, b = g3_operands(case)
    kernel = BUILTIN_MATMUL_KERNELS["vllm_cpp"]
    return kernel.matmul(a, b, np.float32(case.s_in), np.float32(case.s_w), case.out)


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_g3_goes_red_on_a_regression_in_the_kernel_epilogue(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _kernel_output()
    assert run_g3(BUILTIN_MATMUL_KERNELS["vllm_cpp"]).status is GateStatus.PASS
    # Edit the kernel's epilogue in place: every module holding it sees the change.
    monkeypatch.setattr(kernel_epilogue.apply_epilogue, "__code__", REGRESSIONS[name].__code__)
    assert bits_differ(_kernel_output(), before).any(), "the plant must reach the kernel"
    result = run_g3(BUILTIN_MATMUL_KERNELS["vllm_cpp"])
    assert result.status is GateStatus.FAIL, result.reason
    assert result.mismatches_by_class["bitwise"] > 0
    assert any(o.word_class == "bitwise" for o in result.first_offenders)


def test_g3_goes_red_on_a_regression_in_the_kernel_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _kernel_output()
    monkeypatch.setattr(
        kernel_port.decode_operands, "__code__", decode_flushing_subnormals.__code__
    )
    assert bits_differ(_kernel_output(), before).any(), "the plant must reach the kernel"
    result = run_g3(BUILTIN_MATMUL_KERNELS["vllm_cpp"])
    assert result.status is GateStatus.FAIL, result.reason
    assert result.mismatches_by_class["bitwise"] > 0
