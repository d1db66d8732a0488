"""The exact chain value rounded once: ties, near-midpoint decisions, independent checks."""

from __future__ import annotations

import decimal
import itertools
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fp8lab.refs.chain_exact import exact_chain_codes
from fp8lab.specs.chain_catalogue import RECIPES
from fp8lab.specs.formats import FORMATS

BF16 = ml_dtypes.bfloat16
E4M3 = FORMATS["e4m3fn"]
MAGS = [E4M3.magnitude_value(i) for i in range(E4M3.max_code + 1)]
RMS = RECIPES["vllm-cpp-standalone-rmsnorm-fp8"]
GEMMA = RECIPES["vllm-cpp-standalone-gemma-rmsnorm-fp8"]
SILU = RECIPES["vllm-cpp-standalone-silu-mul-fp8"]
GATED = RECIPES["vllm-cpp-standalone-rmsnorm-gated-fp8"]


def rms_inputs(x: np.ndarray, w: np.ndarray, scale: float, eps: float, **extra: object) -> dict:
    return {"x": x.astype(BF16), "weight": w.astype(BF16), "scale": scale, "eps": eps, **extra}


def index_of_square(q2: Fraction) -> int:
    """RNE, SATFINITE e4m3fn index of sqrt(q2), by exact squares (written here, independently)."""
    for i in range(len(MAGS) - 1):
        mid = (MAGS[i] + MAGS[i + 1]) / 2
        if q2 < mid**2 or (q2 == mid**2 and i % 2 == 0):
            return i
    return len(MAGS) - 1


def test_exact_ties_go_to_the_even_code() -> None:
    x = np.array([[3.0] * 8, [-3.0] * 8], np.float32)
    # z * w / sqrt(z**2) = +-w: 1.0625 is the midpoint of 1.0 (0x38) and 1.125 (0x39)
    codes, defined = exact_chain_codes(RMS, rms_inputs(x, np.full(8, 1.0625), 1.0, 0.0))
    assert defined.all() and set(codes[0]) == {0x38} and set(codes[1]) == {0xB8}
    # 1.1875: the midpoint of 1.125 (0x39) and 1.25 (0x3A)
    codes, _ = exact_chain_codes(RMS, rms_inputs(x, np.full(8, 1.1875), 1.0, 0.0))
    assert set(codes[0]) == {0x3A}
    # Gemma: w + 1 = 1.0625
    codes, _ = exact_chain_codes(GEMMA, rms_inputs(x, np.full(8, 0.0625), 1.0, 0.0))
    assert set(codes[0]) == {0x38}


def test_rmsnorm_equals_an_exact_squares_computation() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 16)).astype(BF16)
    r = rng.standard_normal((6, 16)).astype(BF16)
    w = rng.normal(1.0, 0.3, 16).astype(BF16)
    scale, eps = 0.0625, 1e-6
    inputs = {"x": x, "residual": r, "weight": w, "scale": scale, "eps": eps}
    codes, defined = exact_chain_codes(RMS, inputs)
    assert defined.all()
    for i in range(6):
        z = [Fraction(float(a)) + Fraction(float(b)) for a, b in zip(x[i], r[i], strict=True)]
        m = sum(v * v for v in z) / 16 + Fraction(eps)
        for j in range(16):
            num = z[j] * Fraction(float(w[j]))
            want = index_of_square(num**2 / (m * Fraction(scale) ** 2))
            sign = 0x80 if num < 0 else 0
            assert codes[i, j] == want | sign, (i, j)


def test_silu_mul_agrees_with_ml_dtypes_away_from_midpoints() -> None:
    rng = np.random.default_rng(6)
    xgu = (rng.standard_normal((8, 512)) * 4).astype(BF16)
    codes, defined = exact_chain_codes(SILU, {"x_gate_up": xgu, "scale": 0.25})
    g, u = xgu[:, :256].astype(np.float64), xgu[:, 256:].astype(np.float64)
    q = g / (1 + np.exp(-g)) * u / 0.25
    keep = np.abs(q) <= 448
    want = q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert defined.all() and keep.mean() > 0.99
    assert np.array_equal(codes[keep], want[keep])


def silu_index(g: float, u: float, scale: float, digits: int) -> int:
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        q = decimal.Decimal(g) / (1 + (-decimal.Decimal(g)).exp()) * decimal.Decimal(u)
        q = abs(q / decimal.Decimal(scale))
        return sum(1 for a, b in itertools.pairwise(MAGS) if q > _dec((a + b) / 2))


def _dec(f: Fraction) -> decimal.Decimal:
    return decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)


@pytest.mark.parametrize(("g", "u"), [(68.0, 1.0), (256.0, 0.265625), (3.0, 1.0)])
def test_silu_near_a_midpoint_is_decided_in_decimal(g: float, u: float) -> None:
    # g * u = 68, the midpoint of 64 and 72: q sits 68 * exp(-g) below it
    xgu = np.array([[g, u]], np.float32).astype(BF16)
    codes, _ = exact_chain_codes(SILU, {"x_gate_up": xgu, "scale": 1.0})
    assert codes[0, 0] == silu_index(g, u, 1.0, 1500)
    if g * u == 68.0:
        assert float(MAGS[codes[0, 0]]) == 64.0


def test_an_undecidable_silu_element_raises() -> None:
    xgu = np.array([[4096.0, 68.0 / 4096]], np.float32).astype(BF16)  # 68 - 68 * exp(-4096)
    with pytest.raises(ArithmeticError, match="undecided"):
        exact_chain_codes(SILU, {"x_gate_up": xgu, "scale": 1.0})


def test_gated_rows_and_non_finite_rows() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    x[1, 2] = np.inf
    gate = rng.standard_normal((3, 8)).astype(BF16)
    inputs = rms_inputs(x, np.ones(8), 0.125, 1e-6, gate=gate)
    codes, defined = exact_chain_codes(GATED, inputs)
    assert defined[0].all() and not defined[1].any() and defined[2].all()
    assert not codes[1].any()
    z = x[0].astype(np.float64)
    gf = gate[0].astype(np.float64)
    q = z / math.sqrt(float(np.mean(z * z)) + 1e-6) * gf / (1 + np.exp(-gf)) / 0.125
    want = q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert np.array_equal(codes[0], want)


def test_refuses_inputs_that_are_not_bfloat16() -> None:
    with pytest.raises(TypeError, match="bfloat16"):
        exact_chain_codes(SILU, {"x_gate_up": np.zeros((1, 4), np.float32), "scale": 1.0})
