"""G3's whole-kernel model: its own decode, epilogue and bfloat16 rounding, checked.

The model shares no code with the kernels; these tests hold its parts to the
codec, to IEEE float32 arithmetic and to ml_dtypes' bfloat16 cast, bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab.codecs import decode
from fp8lab.refs.gemm_accumulators import MODELS
from fp8lab.refs.gemm_model import (
    _bf16_bits,
    _epilogue_f32,
    decode_e4m3fn,
    model_output_bits,
)

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_decode_equals_the_codec_on_all_256_codes() -> None:
    codes = np.arange(256, dtype=np.uint8)
    got, want = decode_e4m3fn(codes), decode(codes, "e4m3fn", dtype=np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan) and nan.sum() == 2
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))  # -0 too
    with pytest.raises(ValueError, match="uint8"):
        decode_e4m3fn(codes.astype(np.int16))


def _patterns() -> np.ndarray:
    rng = np.random.default_rng(20261202)
    drawn = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    # ties and their neighbours: low 16 bits 0x7FFF, 0x8000, 0x8001, both lsb parities
    hi = rng.integers(0, 1 << 16, 4096, dtype=np.uint64).astype(np.uint32) << 16
    ties = (hi[:, None] | np.array([0x7FFF, 0x8000, 0x8001, 0xFFFF, 0], np.uint32)).ravel()
    special = np.array(
        [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x7F7F8000, 0x7FC00000, 0xFFFFFFFF,
         0x7F800001, 0x00000001, 0x007FFFFF, 0x00008000],
        np.uint32,
    )  # fmt: skip
    return np.concatenate([drawn, ties, special])


def test_bf16_rounding_equals_ml_dtypes_bit_for_bit() -> None:
    bits = _patterns()
    with np.errstate(invalid="ignore", over="ignore"):
        want = bits.view(np.float32).astype(BF16).view(np.uint16)
    assert np.array_equal(_bf16_bits(bits), want)


@pytest.mark.parametrize("epilogue", ["folded", "two_scalar"])
def test_epilogue_equals_float32_arithmetic(epilogue: str) -> None:
    rng = np.random.default_rng(7)
    acc = (rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-140, 120, 1 << 16)).astype(
        np.float32
    )
    for s_in, s_w in [(0.035, 0.017), (0.041, 0.0092), (1.0, 1.0), (3e-39, 0.5), (1e30, 1e10)]:
        si, sw = np.float32(s_in), np.float32(s_w)
        with np.errstate(over="ignore", under="ignore"):
            want = np.float32(si * sw) * acc if epilogue == "folded" else si * (sw * acc)
            got = np.asarray(_epilogue_f32(acc, si, sw, epilogue), np.float32)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (s_in, s_w)


def test_the_exact_intermediate_rounds_once() -> None:
    from fractions import Fraction

    from fp8lab.refs.gemm_scalar import round_fraction_f32

    rng = np.random.default_rng(8)
    acc = (rng.standard_normal(1 << 12) * 2.0 ** rng.integers(-140, 120, 1 << 12)).astype(
        np.float32
    )
    for s_in, s_w in [(0.035, 0.017), (3e-39, 0.5), (1e30, 1e10), (0.13, 0.77)]:
        si, sw = np.float32(s_in), np.float32(s_w)
        scale = Fraction(float(si)) * Fraction(float(sw))
        with np.errstate(over="ignore", under="ignore"):
            want = np.array([round_fraction_f32(scale * Fraction(float(v))) for v in acc])
            got = np.asarray(_epilogue_f32(acc, si, sw, "two_scalar", "exact"), np.float32)
        assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))


def test_output_bits_widths_and_the_bf16_epilogue() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 0x7E, (3, 32), dtype=np.uint8)
    b = rng.integers(0, 0x7E, (16, 32), dtype=np.uint8)
    f32 = model_output_bits(a, b, 0.5, 0.25, "f32")
    bf16 = model_output_bits(a, b, 0.5, 0.25, "bf16")
    wide = model_output_bits(a, b, 0.5, 0.25, "f32", bf16_epilogue=True)
    assert f32.dtype == np.uint32 and bf16.dtype == np.uint16 and f32.shape == (3, 16)
    assert np.array_equal(wide, bf16.astype(np.uint32) << 16)
    for name in MODELS:
        assert model_output_bits(a, b, 0.5, 0.25, "f32", accumulation=name).shape == (3, 16)


@pytest.mark.parametrize(
    "options",
    [{"accumulation": "kahan"}, {"epilogue": "three"}, {"out_dtype": "f16"}],
)
def test_unknown_names_are_refused(options: dict[str, str]) -> None:
    a = np.zeros((1, 16), np.uint8)
    kwargs = {"out_dtype": "f32", **options}
    out = kwargs.pop("out_dtype")
    with pytest.raises(ValueError, match=r"want|unknown"):
        model_output_bits(a, a, 1.0, 1.0, out, **kwargs)
