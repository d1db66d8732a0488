"""The epilogue's intermediate rounding and the swap cut as spec parameters."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.gates import run_g3_report
from fp8lab.kernels.matmul import PortedMatmulKernel
from fp8lab.kernels.matmul_protocol import MatmulSpec
from fp8lab.populations.gemm import G3Case
from fp8lab.refs.gemm_model import ACC_EPILOGUES, INTERMEDIATES, model_output_bits

CASES = [G3Case(4, 32, 256, 102, 0.035, 0.017, "f32"), G3Case(8, 48, 128, 103, 0.13, 0.77, "bf16")]


def codes(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 0x7E, (m, k), np.uint8), rng.integers(0, 0x7E, (n, k), np.uint8)


@pytest.mark.parametrize("epilogue", ACC_EPILOGUES)
@pytest.mark.parametrize("intermediate", INTERMEDIATES)
def test_kernel_side_and_model_agree_for_every_intermediate(
    epilogue: str, intermediate: str
) -> None:
    spec = MatmulSpec(epilogue=epilogue, intermediate=intermediate)
    a, b = codes(3, 5, 16, 64)
    got = PortedMatmulKernel("k", spec).matmul(a, b, 0.035, 0.017, "f32").view(np.uint32)
    want = model_output_bits(
        a, b, 0.035, 0.017, "f32", epilogue=epilogue, intermediate=intermediate
    )
    assert np.array_equal(got, want)


def test_an_exact_intermediate_makes_every_order_one() -> None:
    a, b = codes(4, 6, 16, 128)
    outs = {
        e: model_output_bits(a, b, 0.035, 0.017, "f32", epilogue=e, intermediate="exact").tobytes()
        for e in ACC_EPILOGUES
    }
    assert len(set(outs.values())) == 1
    rounded = model_output_bits(a, b, 0.035, 0.017, "f32", epilogue="folded")
    assert rounded.tobytes() != outs["folded"]  # alpha's rounding shows on these operands


@pytest.mark.parametrize("cut", [0, 3, 200])
def test_the_swap_cut_is_a_parameter(cut: int) -> None:
    a, b = codes(5, 8, 32, 128)
    got = model_output_bits(a, b, 0.035, 0.017, "f32", epilogue="vllm_cutlass", swap_max_m=cut)
    order = "two_scalar_swapped" if cut >= 8 else "two_scalar"
    assert np.array_equal(got, model_output_bits(a, b, 0.035, 0.017, "f32", epilogue=order))
    kernel = PortedMatmulKernel("k", MatmulSpec(epilogue="vllm_cutlass", swap_max_m=cut))
    assert np.array_equal(kernel.matmul(a, b, 0.035, 0.017, "f32").view(np.uint32), got)


@pytest.mark.parametrize("intermediate", INTERMEDIATES)
def test_g3_passes_kernels_declaring_each_intermediate(intermediate: str) -> None:
    spec = MatmulSpec(epilogue="two_scalar", intermediate=intermediate)
    report = run_g3_report(PortedMatmulKernel("k", spec), cases=CASES)
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0
    assert report.result.status.name == "PASS"
    assert (intermediate == "exact") == ("exact intermediate" in report.model)


def test_kernel_side_exact_scaling_rounds_once_across_the_range() -> None:
    from fractions import Fraction

    from fp8lab.refs.gemm_epilogue import scaled_exactly
    from fp8lab.refs.gemm_scalar import round_fraction_f32

    rng = np.random.default_rng(9)
    acc = (rng.standard_normal(1 << 11) * 2.0 ** rng.integers(-140, 120, 1 << 11)).astype(
        np.float32
    )
    for s_in, s_w in [(0.035, 0.017), (3e-39, 0.5), (1e30, 1e10)]:
        si, sw = np.float32(s_in), np.float32(s_w)
        scale = Fraction(float(si)) * Fraction(float(sw))
        with np.errstate(over="ignore", under="ignore"):
            want = np.array([round_fraction_f32(scale * Fraction(float(v))) for v in acc])
            got = scaled_exactly(acc, si, sw)
        assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))
