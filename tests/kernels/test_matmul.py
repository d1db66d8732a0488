"""Kernels under test: validation, NaN policy, epilogues, and their models."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates.compare import assert_bitexact
from fp8lab.gates.ulp import bits_differ, ulp_distance
from fp8lab.kernels.matmul import MATMUL_VARIANTS, matmul_upstream, matmul_vllm_cpp
from fp8lab.kernels.matmul_epilogue import apply_epilogue
from fp8lab.kernels.matmul_model import model_matmul
from fp8lab.kernels.matmul_protocol import (
    FunctionMatmulKernel,
    MatmulKernel,
    MatmulSpec,
    validate_matmul_args,
)
from fp8lab.populations.gemm import remap_nan_bytes

BF16 = np.dtype(ml_dtypes.bfloat16)


def codes(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = remap_nan_bytes(rng.integers(0, 256, (m, k), dtype=np.uint8))
    return a, remap_nan_bytes(rng.integers(0, 256, (n, k), dtype=np.uint8))


@pytest.mark.parametrize("name", sorted(MATMUL_VARIANTS))
@pytest.mark.parametrize("out", ["f32", "bf16"])
def test_each_kernel_equals_the_model_it_claims(name: str, out: str) -> None:
    kernel = MATMUL_VARIANTS[name]
    assert isinstance(kernel, MatmulKernel)
    a, b = codes(7, 5, 32, 272)
    got = kernel.matmul(a, b, 0.041, 0.0092, out)
    assert got.dtype == (BF16 if out == "bf16" else np.float32) and got.shape == (5, 32)
    want = model_matmul(a, b, 0.041, 0.0092, out, kernel.spec)
    assert not bits_differ(got, want).any()


def test_epilogues_do_what_they_say() -> None:
    acc = np.array([[3.0, -7.25, 1e-3]], np.float32)
    si, sw = np.float32(0.041), np.float32(0.0092)
    folded = apply_epilogue(acc, si, sw, "f32", MatmulSpec())
    assert_bitexact(folded, np.float32(si * sw) * acc)
    two = apply_epilogue(acc, si, sw, "f32", MatmulSpec(epilogue="two_scalar"))
    assert_bitexact(two, si * (sw * acc))
    bf = apply_epilogue(acc, si, sw, "bf16", MatmulSpec())
    assert bf.dtype == BF16 and not bits_differ(bf, folded.astype(BF16)).any()
    widened = apply_epilogue(acc, si, sw, "f32", MatmulSpec(bf16_epilogue=True))
    assert_bitexact(widened, folded.astype(BF16).astype(np.float32))
    with pytest.raises(ValueError, match="epilogue"):
        apply_epilogue(acc, si, sw, "f32", MatmulSpec(epilogue="three"))


def test_plain_functions_and_the_callable_wrapper() -> None:
    a, b = codes(8, 2, 16, 64)
    wrapped = FunctionMatmulKernel("mine", matmul_vllm_cpp)
    assert_bitexact(wrapped.matmul(a, b, 1.0, 1.0, "f32"), matmul_vllm_cpp(a, b, 1.0, 1.0, "f32"))
    assert matmul_upstream(a, b, 0.5, 0.25, "f32").dtype == np.float32


def test_nan_codes_propagate_to_their_row_and_column() -> None:
    a, b = codes(9, 3, 16, 32)
    a[1, 4] = 0x7F
    b[2, 0] = 0xFF
    out = matmul_vllm_cpp(a, b, 1.0, 1.0, "f32")
    nan = np.isnan(out)
    assert nan[1].all() and nan[:, 2].all() and nan.sum() == 16 + 3 - 1


OK = np.zeros((2, 16), np.uint8)
B = np.zeros((16, 16), np.uint8)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((OK.astype(np.int8), B, 1.0, 1.0, "f32"), "uint8"),
        ((OK.tolist(), B, 1.0, 1.0, "f32"), "uint8"),
        ((OK[0], B, 1.0, 1.0, "f32"), "rank 2"),
        ((OK, B[:, :8], 1.0, 1.0, "f32"), "K differs"),
        ((OK[:, :8], B[:, :8], 1.0, 1.0, "f32"), "multiples of 16"),
        ((OK, np.zeros((8, 16), np.uint8), 1.0, 1.0, "f32"), "multiples of 16"),
        ((OK[:0], B, 1.0, 1.0, "f32"), "empty"),
        ((OK, B, float("nan"), 1.0, "f32"), "s_in"),
        ((OK, B, 1.0, float("inf"), "f32"), "s_w"),
        ((OK, B, 1.0, 1e39, "f32"), "s_w"),
        ((OK, B, -1.0, 1.0, "f32"), "s_in"),
        ((OK, B, "1", 1.0, "f32"), "s_in"),
        ((OK, B, True, 1.0, "f32"), "s_in"),
        ((OK, B, np.ones(2), 1.0, "f32"), "s_in"),
        ((OK, B, 1.0, 1.0, "f16"), "out_dtype"),
    ],
)
def test_validation_names_the_broken_rule(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_matmul_args(*args)
    with pytest.raises(ValueError, match=message):
        matmul_vllm_cpp(*args)


def test_ulp_distance_and_bits() -> None:
    x = np.array([1.0, 0.0, -0.0, 2.0], np.float32)
    y = np.array([np.nextafter(np.float32(1), np.float32(2)), -0.0, -0.0, 2.0], np.float32)
    assert ulp_distance(x, y).tolist() == [1, 1, 0, 0]
    assert bits_differ(x, y).tolist() == [True, True, False, False]
    xb, yb = x.astype(BF16), y.astype(BF16)
    assert ulp_distance(xb, yb).tolist() == [0, 1, 0, 0]
    with pytest.raises(ValueError, match="want"):
        bits_differ(x, xb)
    with pytest.raises(ValueError, match="float32 or bfloat16"):
        ulp_distance(x.astype(np.float64), y.astype(np.float64))
