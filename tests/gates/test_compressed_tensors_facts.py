"""The facts the compressed-tensors rules are read from, on the library itself (docs/rules.md).

Each designed input goes through compressed-tensors 0.20.1's own
``compute_dynamic_scales_and_zp`` and ``quantize``; the codes and scales are
pinned, and the exact reference of the rule gives the same bytes. Skipped,
with the reason, without torch and compressed-tensors (the ``ecosystem`` extra).
"""

from __future__ import annotations

import numpy as np

from fp8lab.refs import reference_scheme_quant
from fp8lab.specs.scale_rules import RULES
from tests.conftest import LazyModule, needs

torch = LazyModule("torch")
ct = LazyModule("compressed_tensors.quantization")
forward = LazyModule("compressed_tensors.quantization.lifecycle.forward")
helpers = LazyModule("compressed_tensors.quantization.utils")
pytestmark = needs("torch", "compressed_tensors", extra="ecosystem")

EPS = 2.0**-23


def _library(x: np.ndarray, strategy: str, x3d: bool = False) -> tuple[np.ndarray, np.ndarray]:
    args = ct.QuantizationArgs(
        num_bits=8, type="float", symmetric=True, strategy=strategy, dynamic=True
    )
    t = torch.from_numpy(np.ascontiguousarray(x, np.float32))
    t = t[None] if x3d else t
    scale, zero_point = helpers.compute_dynamic_scales_and_zp(t, args, module=None)
    q = forward.quantize(t, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    codes = q.view(torch.uint8).numpy().reshape(x.shape)
    return codes, scale.numpy().reshape(-1)


def _tensor(values: list[float]) -> tuple[list[int], list[float]]:
    x = np.float32([values])
    codes, scales = _library(x, "tensor")
    want_codes, want_scales = reference_scheme_quant(x, RULES["compressed-tensors-0.20-tensor"])
    nan = np.isnan(scales)
    assert np.array_equal(scales[~nan].view(np.uint32), want_scales[~nan].view(np.uint32))
    both_nan = ((codes & 0x7F) == 0x7F) & ((want_codes & 0x7F) == 0x7F)  # nan_code = "any"
    assert np.array_equal(codes[~both_nan], want_codes[~both_nan])
    return codes[0].tolist(), scales.tolist()


def test_the_scale_is_amax_over_448_in_float32() -> None:
    codes, scales = _tensor([1.0, -3.0, 2.5])
    assert scales == [np.float32(3.0) / np.float32(448.0)] and codes == [0x71, 0xFE, 0x7C]


def test_only_a_zero_scale_becomes_float32_eps() -> None:
    assert _tensor([0.0, 0.0]) == ([0x00, 0x00], [EPS])
    assert _tensor([2.0**-149, 0.0]) == ([0x00, 0x00], [EPS])  # 2**-149 / 448 is 0
    _, scales = _tensor([1e-5, 0.0])
    assert scales == [np.float32(1e-5) / np.float32(448.0)] and scales[0] < EPS


def test_minus_zero_becomes_plus_zero() -> None:
    # s = 2: -0, and -2**-149 / 2 (a quotient that underflows to -0), become 0x00; -2**-140 / 2
    # is a nonzero quotient (the zero point leaves it) that the cast rounds to -0: 0x80
    assert _tensor([896.0, -0.0, -(2.0**-149), -(2.0**-140)])[0] == [0x7E, 0x00, 0x00, 0x80]


def test_ties_go_to_even_and_the_clamp_saturates() -> None:
    # at the scale 1: two ties between e4m3fn codes, then past 448 and the 464 tie
    x = np.float32([[1.0625, 1.1875, 464.0, -464.0, 500.0]])
    args = ct.QuantizationArgs(num_bits=8, type="float", symmetric=True, strategy="tensor")
    one = torch.ones(1)
    q = forward.quantize(torch.from_numpy(x), one, torch.zeros(1), args, torch.float8_e4m3fn)
    assert q.view(torch.uint8).tolist() == [[0x38, 0x3A, 0x7E, 0xFE, 0x7E]]


def test_nan_and_inf() -> None:
    codes, scales = _tensor([1.0, float("nan"), 2.0])
    assert np.isnan(scales[0]) and codes == [0x7F, 0x7F, 0x7F]
    neg = np.float32([1.0, 0.0, 2.0])
    neg[1] = -np.float32("nan")
    codes, _ = _tensor(neg.tolist())
    assert codes[1] in (0x7F, 0xFF)  # the sign of a CPU NaN: any NaN code
    codes, scales = _tensor([1.0, float("inf"), -2.0])
    assert scales == [float("inf")] and codes[0] == codes[2] == 0x00 and codes[1] in (0x7F, 0xFF)


def test_token_needs_a_batch_dimension() -> None:
    x = np.float32([[1.0, 2.0], [100.0, 4.0]])
    _, flat = _library(x, "token")
    _, per_token = _library(x, "token", x3d=True)
    assert flat.tolist() == [np.float32(100.0) / np.float32(448.0)]  # one scale for it all
    assert per_token.tolist() == (np.float32([2.0, 100.0]) / np.float32(448.0)).tolist()


def _library_bf16(x: np.ndarray, strategy: str) -> tuple[np.ndarray, object]:
    args = ct.QuantizationArgs(
        num_bits=8, type="float", symmetric=True, strategy=strategy, dynamic=True
    )
    t = torch.from_numpy(np.ascontiguousarray(x, np.float32)).to(torch.bfloat16)
    scale, zero_point = helpers.compute_dynamic_scales_and_zp(t, args, module=None)
    q = forward.quantize(t, scale, zero_point, args, dtype=torch.float8_e4m3fn)
    return q.view(torch.uint8).numpy().reshape(x.shape), scale


def test_on_bfloat16_the_scale_and_the_quotient_are_bfloat16() -> None:
    """``arithmetic = "input"``: a bfloat16 scale tensor, 2^-7 for a zero one, x / s rounded."""
    import dataclasses

    import ml_dtypes

    from fp8lab.specs.scale_rules import Arithmetic

    _, scale = _library_bf16(np.zeros((1, 4), np.float32), "tensor")
    assert scale.dtype == torch.bfloat16 and scale.float().tolist() == [2.0**-7]
    _, scale = _library_bf16(np.float32([[3.0, 1.0]]), "tensor")
    assert scale.float().item() != np.float32(3.0) / np.float32(448.0)  # rounded to bfloat16
    rule = RULES["compressed-tensors-0.20-tensor"]
    twin = dataclasses.replace(
        rule, name="float32-twin", arithmetic=Arithmetic.FLOAT32, input_zero_scale=None
    )
    x = (np.random.default_rng(11).standard_normal((8, 64)) * 5).astype(ml_dtypes.bfloat16)
    codes, scale = _library_bf16(x.astype(np.float32), "tensor")
    want, want_scale = reference_scheme_quant(x, rule)
    assert np.array_equal(codes, want)
    assert scale.float().numpy().tobytes() == want_scale.tobytes()
    wide, _ = reference_scheme_quant(x, twin)
    assert (wide != codes).sum() > 0  # float32 arithmetic is not what the library does
