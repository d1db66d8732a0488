"""Epilogue order as a spec parameter: the kernel-side epilogue and G3's model agree for
every order, vLLM's CUTLASS order flips at M = 64, and G3 checks a kernel against each."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import run_g3_report
from fp8lab.kernels.matmul import MATMUL_VARIANTS, PortedMatmulKernel
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_protocol import MatmulSpec
from fp8lab.populations.gemm import SEED_CASES, G3Case
from fp8lab.refs.gemm_model import EPILOGUES, VLLM_SWAP_AB_MAX_M, model_output_bits

M_CUT = VLLM_SWAP_AB_MAX_M


def codes(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        rng.integers(0, 0x7E, (m, k), dtype=np.uint8),
        rng.integers(0, 0x7E, (n, k), dtype=np.uint8),
    )


@pytest.mark.parametrize("epilogue", EPILOGUES)
@pytest.mark.parametrize("m", [1, M_CUT, M_CUT + 1])
def test_kernel_side_and_model_agree_for_every_order(epilogue: str, m: int) -> None:
    kernel = PortedMatmulKernel("k", MatmulSpec(epilogue=epilogue))
    a, b = codes(m, m, 16, 64)
    got = kernel.matmul(a, b, 0.035, 0.017, "f32").view(np.uint32)
    want = model_output_bits(a, b, 0.035, 0.017, "f32", epilogue=epilogue)
    assert np.array_equal(got, want)


def test_vllm_cutlass_is_swapped_up_to_m_64_then_two_scalar() -> None:
    def bits(m: int, epilogue: str) -> np.ndarray:
        a, b = codes(7, m, 32, 128)
        return model_output_bits(a, b, 0.035, 0.017, "f32", epilogue=epilogue)

    assert np.array_equal(bits(M_CUT, "vllm_cutlass"), bits(M_CUT, "two_scalar_swapped"))
    assert np.array_equal(bits(M_CUT + 1, "vllm_cutlass"), bits(M_CUT + 1, "two_scalar"))
    # the two orders really differ on these operands, so the flip is visible
    assert not np.array_equal(bits(M_CUT, "two_scalar"), bits(M_CUT, "two_scalar_swapped"))


def test_kernel_side_epilogue_refuses_unknown_orders() -> None:
    acc = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="unknown epilogue"):
        apply_epilogue(acc, np.float32(1), np.float32(1), "f32", MatmulSpec(epilogue="x"))


def test_g3_passes_the_cutlass_order_kernel_on_both_sides_of_the_cut() -> None:
    kernel = MATMUL_VARIANTS["vllm_cutlass_epilogue"]
    cases = [SEED_CASES[1], G3Case(96, 32, 64, 501, 0.035, 0.017, "f32")]
    report = run_g3_report(kernel, cases=cases)
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0
    assert "vllm_cutlass epilogue" in report.model


def test_prescaled_scales_operands_before_the_product() -> None:
    a, b = codes(9, 4, 16, 128)
    s_in, s_w = np.float32(0.035), np.float32(0.017)
    pre = model_output_bits(a, b, s_in, s_w, "f32", epilogue="prescaled").view(np.float32)
    from fp8lab.refs.gemm_accumulators import sequential
    from fp8lab.refs.gemm_model import decode_e4m3fn

    a32 = (decode_e4m3fn(a).astype(np.float64) * np.float64(s_in)).astype(np.float32)
    b32 = (decode_e4m3fn(b).astype(np.float64) * np.float64(s_w)).astype(np.float32)
    assert np.array_equal(pre.view(np.uint32), sequential(a32, b32).view(np.uint32))
    folded = model_output_bits(a, b, s_in, s_w, "f32").view(np.float32)
    assert (pre != folded).any()  # its products are no longer exact


def test_g3_passes_the_prescaled_kernel_and_fails_a_folded_one_claiming_it() -> None:
    from fp8lab.kernels.matmul import matmul_vllm_cpp
    from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel

    report = run_g3_report(MATMUL_VARIANTS["operands_prescaled"], cases=SEED_CASES[:2])
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0
    liar = FunctionMatmulKernel("folded", matmul_vllm_cpp, MatmulSpec(epilogue="prescaled"))
    bad = run_g3_report(liar, cases=SEED_CASES[:2])
    assert sum(c.bit_mismatches for c in bad.cases) > 0
