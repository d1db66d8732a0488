"""Every fast path has a slow twin: each vectorised accumulator model equals a
pure-Python loop of float32 scalars, bit for bit; one test body runs both."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial

import numpy as np
import pytest

from fp8lab.gates.compare import assert_bitexact
from fp8lab.kernels import matmul_models as models
from fp8lab.kernels.matmul_model import decode_operands
from fp8lab.populations.gemm import remap_nan_bytes
from fp8lab.refs import gemm_accumulators
from fp8lab.refs import gemm_scalar as scalar
from fp8lab.refs.gemm_scalar import round_fraction_f32

Model = Callable[[np.ndarray, np.ndarray], np.ndarray]
TWINS: dict[str, tuple[Model, Model]] = {
    "sequential": (models.sequential, scalar.sequential_scalar),
    "sequential_numpy": (gemm_accumulators.sequential, scalar.sequential_scalar),
    "sequential_fma": (models.sequential_fma, scalar.sequential_fma_scalar),
    "pairwise": (models.pairwise, scalar.pairwise_scalar),
    "split_k_8": (partial(models.split_k, block=8), partial(scalar.split_k_scalar, block=8)),
    "split_k_5": (partial(models.split_k, block=5), partial(scalar.split_k_scalar, block=5)),
    "fast_accum_trunc_16": (
        partial(models.fast_accum, interval=16),
        partial(scalar.fast_accum_scalar, interval=16),
    ),
    "fast_accum_rne_never": (
        partial(models.fast_accum, mantissa_bits=10, rounding="rne", interval=None),
        partial(scalar.fast_accum_scalar, mantissa_bits=10, rounding="rne", interval=None),
    ),
}


def fp8_operands(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = remap_nan_bytes(rng.integers(0, 256, (m, k), dtype=np.uint8))
    b = remap_nan_bytes(rng.integers(0, 256, (n, k), dtype=np.uint8))
    return decode_operands(a, b)


def f32_operands(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    return a, rng.standard_normal((n, k)).astype(np.float32)


@pytest.mark.parametrize("name", sorted(TWINS))
@pytest.mark.parametrize("make", [fp8_operands, f32_operands])
@pytest.mark.parametrize(("m", "n", "k"), [(1, 1, 1), (3, 4, 37), (2, 5, 64), (2, 3, 300)])
def test_vectorised_model_equals_its_scalar_twin(
    name: str, make: Callable[..., tuple[np.ndarray, np.ndarray]], m: int, n: int, k: int
) -> None:
    a, b = make(m * 100 + k, m, n, k)
    results = [method(a, b) for method in TWINS[name]]
    assert all(r.dtype == np.float32 and r.shape == (m, n) for r in results)
    assert assert_bitexact(results[0], results[1]) == m * n


@pytest.mark.parametrize("make", [fp8_operands, f32_operands])
@pytest.mark.parametrize(("m", "n", "k"), [(600, 64, 40), (3, 40000, 3), (17, 48, 300)])
def test_compiled_sequential_equals_the_numpy_model_over_row_blocks(
    make: Callable[..., tuple[np.ndarray, np.ndarray]], m: int, n: int, k: int
) -> None:
    a, b = make(m + n + k, m, n, k)
    want = gemm_accumulators.sequential(a, b)
    assert assert_bitexact(models.sequential(a, b), want) == m * n
    assert models.MODELS is gemm_accumulators.MODELS


def test_fma_equals_sequential_for_fp8_and_differs_for_float32() -> None:
    a, b = fp8_operands(1, 8, 16, 512)
    assert_bitexact(models.sequential_fma(a, b), models.sequential(a, b))
    a, b = f32_operands(1, 8, 16, 512)
    assert (models.sequential_fma(a, b) != models.sequential(a, b)).any()


def test_fast_accum_with_24_bits_and_rne_is_float32_sequential() -> None:
    a, b = fp8_operands(2, 4, 8, 300)
    wide = models.fast_accum(a, b, mantissa_bits=23, rounding="rne", interval=None)
    assert_bitexact(wide, models.sequential(a, b))


def test_split_k_with_one_block_is_sequential_and_orders_differ() -> None:
    a, b = fp8_operands(3, 4, 16, 1024)
    seq = models.sequential(a, b)
    assert_bitexact(models.split_k(a, b, block=1024), seq)
    assert (models.pairwise(a, b) != seq).any()


def test_fma_emulation_avoids_double_rounding() -> None:
    # acc = 1 + 2**-23 (odd); then fma(x, y, acc) with x*y = 2**-24 - 2**-70 exactly.
    # The exact sum sits just below the midpoint, so the float32 answer is acc;
    # float64 first rounds onto the midpoint and then ties to even, one ulp up.
    x = np.float32(1 + 2.0**-23)
    y = np.float32(2.0**-24 * (1 - 2.0**-23))
    a = np.array([[x, x]], np.float32)
    b = np.array([[1.0, y]], np.float32)
    want = np.array([[x]], np.float32)
    assert_bitexact(models.sequential_fma(a, b), want)
    assert_bitexact(scalar.sequential_fma_scalar(a, b), want)
    naive = np.float32(np.float64(x) * np.float64(y) + np.float64(x))
    assert naive == np.float32(1 + 2.0**-22)


def test_round_fraction_f32_ties_to_even_and_subnormals() -> None:
    assert round_fraction_f32(Fraction(1) + Fraction(1, 2**24)) == np.float32(1.0)
    assert round_fraction_f32(Fraction(1) + Fraction(3, 2**25)) == np.float32(1 + 2.0**-23)
    assert round_fraction_f32(Fraction(-1, 2**160)) == np.float32(0.0)
    assert round_fraction_f32(Fraction(3, 2**150)) == np.float32(2.0**-148)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rounding": "floor"}, "rounding"),
        ({"mantissa_bits": 0}, "rounding"),
        ({"interval": 0}, "interval"),
    ],
)
def test_fast_accum_refuses_bad_parameters(kwargs: dict[str, object], message: str) -> None:
    a, b = f32_operands(0, 1, 1, 4)
    with pytest.raises(ValueError, match=message):
        models.fast_accum(a, b, **kwargs)  # type: ignore[arg-type]


def test_models_refuse_mismatched_operands() -> None:
    with pytest.raises(ValueError, match=r"\[M,K\]"):
        models.sequential(np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="block"):
        models.split_k(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), block=0)
