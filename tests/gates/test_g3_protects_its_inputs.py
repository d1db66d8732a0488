"""Test the testers: a GEMM kernel that writes into its operands cannot change G3's verdict.

G3 computes its model, exact reference and tolerances before it calls the
kernel, and hands the kernel private read-only copies. A kernel that flushes
subnormal operand codes in place (of A or of B, before or after it
computes) either meets a read-only error, a FAIL with the reason, or is
checked against expectations built from the operands it was meant to get.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from fp8lab.gates import GateStatus, run_g3
from fp8lab.kernels.matmul import matmul_vllm_cpp
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel

MatmulFn = Callable[[np.ndarray, np.ndarray, Any, Any, str], np.ndarray]


def flush_subnormal_codes(codes: np.ndarray) -> None:
    """e4m3fn codes with a zero exponent field become signed zero, in place."""
    codes[(codes & 0x78) == 0] &= 0x80


def in_place_kernel(operand: int, first: bool, reenable: bool) -> MatmulFn:
    """vllm.cpp's matmul that flushes operand 0 (A) or 1 (B) before or after it computes."""

    def kernel(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        target = (a, b)[operand]
        if reenable and not target.flags.writeable:
            target.setflags(write=True)  # legal on an array that owns its data
        if first:
            flush_subnormal_codes(target)
        got = matmul_vllm_cpp(a, b, s_in, s_w, out)
        if not first:
            flush_subnormal_codes(target)
        return got

    return kernel


@pytest.mark.parametrize("operand", [0, 1], ids=["A", "B"])
@pytest.mark.parametrize("first", [True, False], ids=["flush-then-compute", "compute-then-flush"])
@pytest.mark.parametrize("reenable", [False, True], ids=["as-given", "write-reenabled"])
def test_g3_is_red_for_a_kernel_that_flushes_its_operands_in_place(
    operand: int, first: bool, reenable: bool
) -> None:
    kernel = FunctionMatmulKernel("flushes", in_place_kernel(operand, first, reenable))
    result = run_g3(kernel)
    if reenable and not first:
        # It computed on what it was given, then spoilt only its private copy.
        assert result.status is GateStatus.PASS, result.reason
        return
    assert result.status is GateStatus.FAIL, result.reason
    if not reenable:
        assert "read-only" in result.reason
    else:
        assert result.mismatches_by_class["bitwise"] > 0


def test_operands_handed_to_the_kernel_are_read_only_copies() -> None:
    seen: list[np.ndarray] = []

    def keeps(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        seen.extend((a, b))
        return matmul_vllm_cpp(a, b, s_in, s_w, out)

    assert run_g3(FunctionMatmulKernel("keeps", keeps)).status is GateStatus.PASS
    assert seen and not any(x.flags.writeable for x in seen)
    assert len({id(x) for x in seen}) == len(seen)


@pytest.mark.parametrize("exc", [SystemExit(0), SystemExit(1), GeneratorExit(), MemoryError()])
def test_any_kernel_exit_is_a_fail_with_its_reason(exc: BaseException) -> None:
    def exits(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        raise exc

    result = run_g3(FunctionMatmulKernel("exits", exits))
    assert result.status is GateStatus.FAIL
    assert type(exc).__name__ in result.reason
    assert all(type(exc).__name__ in c.error for c in result.case_results)


def test_keyboard_interrupt_still_stops_g3() -> None:
    def interrupted(a: np.ndarray, b: np.ndarray, s_in: Any, s_w: Any, out: str) -> np.ndarray:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_g3(FunctionMatmulKernel("interrupted", interrupted))
