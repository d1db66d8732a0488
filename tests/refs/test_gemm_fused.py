"""The fused (MMA-Sim Hopper fp8) accumulation model: vector and exact scalar twins agree
bit for bit, the spec's rules are transcribed as cases, and G3 can check a kernel against it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fp8lab.codecs import decode
from fp8lab.gates import run_g3_report
from fp8lab.gates.compare import assert_bitexact
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_protocol import FunctionMatmulKernel, MatmulSpec, validate_matmul_args
from fp8lab.populations.gemm import SEED_CASES
from fp8lab.refs.gemm_fused import fused
from fp8lab.refs.gemm_fused_scalar import fused_scalar
from fp8lab.refs.gemm_model import decode_e4m3fn

OPTIONS = [
    {},
    {"interval": 64},
    {"group": 16, "term_bits": 10, "result_bits": 10},
    {"term_bits": 25, "result_bits": 23},
    {"group": 5},
]


def fp8_values(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 0x7F, (m, k), dtype=np.uint8) | (rng.integers(0, 2, (m, k)) << 7)
    b = rng.integers(0, 0x7F, (n, k), dtype=np.uint8)
    return decode_e4m3fn(a.astype(np.uint8)), decode_e4m3fn(b)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize(("m", "n", "k"), [(1, 1, 1), (2, 3, 32), (3, 2, 100), (2, 2, 200)])
def test_vector_model_equals_its_exact_scalar_twin(
    options: dict[str, Any], m: int, n: int, k: int
) -> None:
    a, b = fp8_values(m * 1000 + k, m, n, k)
    if "interval" in options and options["interval"] % options.get("group", 32):
        pytest.skip("interval must be a multiple of group")  # never drawn: OPTIONS fit
    assert assert_bitexact(fused(a, b, **options), fused_scalar(a, b, **options)) == m * n


def test_twins_agree_on_subnormal_terms_and_float32_operands() -> None:
    rng = np.random.default_rng(7)
    tiny = decode_e4m3fn(rng.integers(0, 8, (2, 64), dtype=np.uint8))  # subnormals
    assert_bitexact(fused(tiny, tiny), fused_scalar(tiny, tiny))
    a = rng.standard_normal((2, 70)).astype(np.float32)
    b = rng.standard_normal((3, 70)).astype(np.float32)
    assert_bitexact(fused(a, b), fused_scalar(a, b))


def test_terms_truncate_toward_zero_below_the_largest_exponent() -> None:
    # 1 + 2**-14: the small term sits below 2**(0-13) and is dropped (RZ), not rounded
    a = np.array([[1.0, 2.0**-7]], np.float32)
    b = np.array([[1.0, 2.0**-7]], np.float32)
    assert fused(a, b)[0, 0] == 1.0
    # 1 + 3·2**-14 = 1 + 2**-13 + 2**-14: keeps 2**-13
    b3 = np.array([[1.0, 3 * 2.0**-7]], np.float32)
    assert fused(a, b3)[0, 0] == np.float32(1 + 2.0**-13)
    # the result is truncated to 13 fractional bits: 2**14 + 1 + ... stays 2**14
    big = np.array([[128.0, 1.0, 0.5]], np.float32)
    assert fused(big, np.array([[128.0, 1.0, 1.0]], np.float32))[0, 0] == 2.0**14
    # negative terms truncate toward zero too: -1·2**-14 vanishes
    assert fused(a, -b)[0, 0] == -1.0


def test_nan_is_canonical_and_overflow_is_inf() -> None:
    a = np.array([[np.nan, 1.0]], np.float32)
    out = fused(a, np.ones((1, 2), np.float32))
    assert out.view(np.uint32)[0, 0] == 0x7FFFFFFF
    big = np.full((1, 2), 2.0**127, np.float32)
    assert fused(big, np.full((1, 2), 2.0, np.float32))[0, 0] == np.inf


def test_options_are_checked() -> None:
    a = np.ones((1, 4), np.float32)
    with pytest.raises(ValueError, match="multiple of group"):
        fused(a, a, interval=40)
    with pytest.raises(ValueError, match="term_bits"):
        fused(a, a, term_bits=0)


def _fused_kernel(a_codes: Any, b_codes: Any, s_in: Any, s_w: Any, out_dtype: str) -> Any:
    """A kernel-side fused matmul: codec decode, the exact scalar twin, the kernel epilogue."""
    a, b, si, sw, out = validate_matmul_args(a_codes, b_codes, s_in, s_w, out_dtype)
    acc = fused_scalar(decode(a, "e4m3fn", dtype=np.float32), decode(b, "e4m3fn", np.float32))
    return apply_epilogue(acc, si, sw, out, MatmulSpec(accumulation="fused_32_e8m13"))


@pytest.mark.slow
def test_g3_checks_a_kernel_bitwise_against_the_fused_model() -> None:
    spec = MatmulSpec(accumulation="fused_32_e8m13")
    kernel = FunctionMatmulKernel("fused_scalar_kernel", _fused_kernel, spec)
    cases = [c for c in SEED_CASES if c.m * c.n <= 128]
    report = run_g3_report(kernel, cases=cases)
    assert len(report.cases) == len(cases) >= 2
    assert sum(c.outputs for c in report.cases) > 0
    assert sum(c.bit_mismatches for c in report.cases) == 0
    assert "fused_32_e8m13 accumulation" in report.model
