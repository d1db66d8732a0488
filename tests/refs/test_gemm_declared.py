"""G3's declared model: every new choice against a scalar twin in exact fractions, and the
named declarations against the model they were before."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates.g3_spec import declaration_of
from fp8lab.kernels.matmul import MATMUL_VARIANTS
from fp8lab.refs.gemm_declared import declared_output_bits, round_add
from fp8lab.refs.gemm_model import decode_e4m3fn, model_output_bits
from fp8lab.specs.gemm_decl import GEMMS, GemmDeclaration, TreeClass

BITS = {"float32": (24, -126), "bfloat16": (8, -126), "float16": (11, -14)}


def rn(x: Fraction, output: str) -> Fraction:
    """``x`` rounded to nearest even in ``output`` (no overflow in these tests)."""
    if x == 0:
        return Fraction(0)
    p, emin = BITS[output]
    e = max(abs(x.numerator).bit_length() - abs(x.denominator).bit_length(), emin)
    while abs(x) >= Fraction(2) ** (e + 1):
        e += 1
    while e > emin and abs(x) < Fraction(2) ** e:
        e -= 1
    ulp = Fraction(2) ** (e - p + 1)
    q = x / ulp
    n = q.numerator // q.denominator
    rest = q - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2):
        n += 1
    return n * ulp


def codes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    c = rng.integers(0, 0x7F, shape, dtype=np.uint8)
    return c | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)


def twin(a_codes, b_codes, s_a, s_b, decl: GemmDeclaration) -> np.ndarray:
    """Sequential sums in fractions, each choice of ``decl`` spelt out (float32 values)."""
    a, b = decode_e4m3fn(a_codes), decode_e4m3fn(b_codes)
    m, n = a.shape[0], b.shape[0]
    sa = np.broadcast_to(np.asarray(s_a, np.float32).reshape(-1, 1), (m, 1))
    sb = np.broadcast_to(np.asarray(s_b, np.float32).reshape(1, -1), (1, n))
    add_to = decl.output if decl.output_rounding == "per-add" else "float32"
    out = np.zeros((m, n), np.float32)
    for i in range(m):
        for j in range(n):
            fa, fb = Fraction(float(sa[i, 0])), Fraction(float(sb[0, j]))
            first, second = (fa, fb) if decl.scale_order == "a-first" else (fb, fa)
            acc = Fraction(0)
            for k in range(a.shape[1]):
                p = Fraction(float(a[i, k])) * Fraction(float(b[j, k]))
                if decl.scales == "product":
                    p = rn(rn(p * first, "float32") * second, "float32")
                acc = rn(acc + p, add_to)
            if decl.scales == "folded":
                acc = rn(rn(fa * fb, "float32") * acc, "float32")
            out[i, j] = float(rn(acc, decl.output))
    return out


@pytest.mark.parametrize("order", ["a-first", "b-first"])
@pytest.mark.parametrize("grain", [("tensor", "tensor"), ("row", "column")])
def test_product_scaled_sums_equal_their_twin(order: str, grain: tuple[str, str]) -> None:
    rng = np.random.default_rng(3)
    a, b = codes(rng, (3, 24)), codes(rng, (5, 24))
    decl = dataclasses.replace(
        GEMMS["product_scaled"], scale_order=order, a_scale=grain[0], b_scale=grain[1]
    )
    s_a = rng.uniform(0.01, 0.05, 3).astype(np.float32) if grain[0] == "row" else 0.035
    s_b = rng.uniform(0.01, 0.05, 5).astype(np.float32) if grain[1] == "column" else 0.017
    got = declared_output_bits(a, b, s_a, s_b, "f32", decl)
    assert np.array_equal(got, twin(a, b, s_a, s_b, decl).view(np.uint32))


@pytest.mark.parametrize("output", ["bfloat16", "float16"])
@pytest.mark.parametrize("rounding", ["once", "per-add"])
def test_narrow_outputs_equal_their_twin(output: str, rounding: str) -> None:
    rng = np.random.default_rng(4)
    a, b = codes(rng, (2, 40)), codes(rng, (3, 40)) & np.uint8(0xBF)  # |b| <= 1.875
    decl = GemmDeclaration("n", scales="none", output=output, output_rounding=rounding,
                           outputs=("f32", "bf16", "f16"))  # fmt: skip
    want = twin(a, b, 1.0, 1.0, decl)
    assert np.array_equal(declared_output_bits(a, b, 1.0, 1.0, "f32", decl), want.view(np.uint32))
    narrow = {"bfloat16": ("bf16", ml_dtypes.bfloat16), "float16": ("f16", np.float16)}[output]
    got = declared_output_bits(a, b, 1.0, 1.0, narrow[0], decl)
    assert np.array_equal(got, want.astype(narrow[1]).view(np.uint16))


def test_round_add_rounds_the_exact_sum_once() -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(4000) * 2.0 ** rng.integers(-20, 20, 4000)).astype(np.float32)
    y = (rng.standard_normal(4000) * 2.0 ** rng.integers(-20, 20, 4000)).astype(np.float32)
    for output in ("bfloat16", "float16", "float32"):
        got = round_add(x, y, output)
        want = [
            float(rn(Fraction(float(u)) + Fraction(float(v)), output))
            for u, v in zip(x, y, strict=True)
        ]
        finite = np.abs(np.asarray(want)) < 60000
        assert np.array_equal(got[finite], np.asarray(want, np.float32)[finite])


def test_every_named_spec_is_the_model_it_was() -> None:
    rng = np.random.default_rng(6)
    for m, n, k in ((3, 16, 64), (65, 32, 32)):
        a, b = codes(rng, (m, k)), codes(rng, (n, k))
        for name, kernel in MATMUL_VARIANTS.items():
            s = kernel.spec
            for out in ("f32", "bf16"):
                want = model_output_bits(
                    a, b, 0.035, 0.017, out, accumulation=s.accumulation, epilogue=s.epilogue,
                    bf16_epilogue=s.bf16_epilogue, intermediate=s.intermediate,
                    swap_max_m=s.swap_max_m,
                )  # fmt: skip
                assert np.array_equal(
                    declared_output_bits(a, b, 0.035, 0.017, out, declaration_of(s)), want
                )
                if name in GEMMS:
                    got = declared_output_bits(a, b, 0.035, 0.017, out, GEMMS[name])
                    assert np.array_equal(got, want), name


def test_classes_pick_their_outputs_and_a_missing_shape_is_refused() -> None:
    rng = np.random.default_rng(7)
    a, b = codes(rng, (2, 4)), codes(rng, (2, 4))
    rev = ((3, 2), (4, 1), (5, 0))
    decl = GemmDeclaration(
        "c",
        accumulation="inferred",
        classes=(
            TreeClass((2, 2, 4), "0:*", ((0, 1), (4, 2), (5, 3))),
            TreeClass((2, 2, 4), "1:*", rev),
        ),
    )
    got = declared_output_bits(a, b, 1.0, 1.0, "f32", decl).view(np.float32)
    x, y = decode_e4m3fn(a), decode_e4m3fn(b)
    seq = np.float32(0)
    for k in range(4):
        seq = np.float32(seq + x[0, k] * y[1, k])
    back = np.float32(0)
    for k in reversed(range(4)):
        back = np.float32(back + x[1, k] * y[0, k])
    assert got[0, 1] == seq and got[1, 0] == back
    with pytest.raises(ValueError, match=r"no tree for \(M, N, K\) = \(3, 2, 4\)"):
        declared_output_bits(codes(rng, (3, 4)), b, 1.0, 1.0, "f32", decl)
    with pytest.raises(ValueError, match="want"):
        declared_output_bits(
            a,
            b,
            np.ones(3, np.float32),
            1.0,
            "f32",
            dataclasses.replace(GEMMS["upstream"], a_scale="row"),
        )
