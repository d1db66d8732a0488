"""G3 goes red when a kernel's intermediate rounding or swap cut is not the declared one."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import run_g3_report
from fp8lab.gates.g3_spec import declared_spec
from fp8lab.kernels.matmul import PortedMatmulKernel
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec
from fp8lab.populations.gemm import G3Case


def mismatches(kernel: PortedMatmulKernel, declared: MatmulSpec, cases: list[G3Case]) -> int:
    liar = FunctionMatmulKernel("liar", kernel.matmul, declared)
    report = run_g3_report(liar, cases=cases)
    assert sum(c.outputs for c in report.cases) > 0
    bad = sum(c.bit_mismatches for c in report.cases)
    assert (report.result.status.name == "FAIL") == (bad > 0)
    return bad


@pytest.mark.parametrize(("does", "claims"), [("f32", "exact"), ("exact", "f32")])
def test_a_wrong_intermediate_goes_red(does: str, claims: str) -> None:
    cases = [G3Case(4, 32, 256, 102, 0.035, 0.017, "f32")]
    kernel = PortedMatmulKernel("k", MatmulSpec(epilogue="folded", intermediate=does))
    assert mismatches(kernel, MatmulSpec(epilogue="folded", intermediate=claims), cases) > 0


def test_a_wrong_swap_cut_goes_red_only_where_it_bites() -> None:
    kernel = PortedMatmulKernel("k", MatmulSpec(epilogue="vllm_cutlass", swap_max_m=128))
    claims = MatmulSpec(epilogue="vllm_cutlass")  # cut at 64
    assert mismatches(kernel, claims, [G3Case(96, 32, 64, 501, 0.035, 0.017, "f32")]) > 0
    assert mismatches(kernel, claims, [G3Case(16, 32, 64, 502, 0.035, 0.017, "f32")]) == 0


@pytest.mark.parametrize(
    "spec",
    [
        MatmulSpec(intermediate="bf16"),
        MatmulSpec(epilogue="prescaled", intermediate="exact"),
        MatmulSpec(epilogue="vllm_cutlass", swap_max_m=-1),
    ],
)
def test_unreadable_epilogue_parameters_are_refused(spec: MatmulSpec) -> None:
    with pytest.raises(ValueError, match="names no known model"):
        declared_spec(FunctionMatmulKernel("k", PortedMatmulKernel("k", spec).matmul, spec))


def test_the_kernel_side_refuses_an_unknown_intermediate() -> None:
    acc = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="unknown intermediate"):
        apply_epilogue(acc, np.float32(1), np.float32(1), "f32", MatmulSpec(intermediate="x"))
