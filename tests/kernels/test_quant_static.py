from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fp8lab import collapse_shard_scales, quant_static, validate_scale
from fp8lab.kernels import (
    BUILTIN_KERNELS,
    FunctionKernel,
    QuantKernel,
    quant_static_f32tofp8,
    quant_static_upstream,
    reciprocal,
)
from fp8lab.refs import reference_quant_static

VARIANTS = [quant_static, quant_static_upstream, quant_static_f32tofp8]


@pytest.mark.parametrize("kernel", VARIANTS)
def test_variants_multiply_by_the_reciprocal(kernel: object) -> None:
    x = np.array([0.7 * 0.0092, 1.0, -3.0, 500.0], np.float32)
    s = np.float32(0.0092)
    want = reference_quant_static(x, s)
    assert np.array_equal(kernel(x, s), want)  # type: ignore[operator]


def test_variants_differ_only_in_nan() -> None:
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 1.5], np.float32)
    assert quant_static(x, 1.0).tolist() == [0x7F, 0x7F, 0x7E, 0xFE, 0x80, 0x3C]
    assert quant_static_upstream(x, 1.0).tolist() == [0x7E, 0x7E, 0x7E, 0xFE, 0x80, 0x3C]
    assert quant_static_f32tofp8(x, 1.0).tolist() == quant_static(x, 1.0).tolist()


def test_bfloat16_input_is_widened_exactly() -> None:
    x = np.linspace(-3, 3, 101).astype(ml_dtypes.bfloat16)
    assert np.array_equal(quant_static(x, 0.13), quant_static(x.astype(np.float32), 0.13))


@pytest.mark.parametrize("bad", [np.ones(3), np.ones(3, np.float16), np.arange(3), [1.0, 2.0]])
def test_wrong_activation_dtype_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match=r"float32 or bfloat16|numpy array"):
        quant_static(bad, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scale", "rule"),
    [
        (0.0, "positive"),
        (-1.0, "positive"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (1e-40, "smallest normal"),
        (1e-50, "smallest normal"),  # checked on the exact value, not its float32 zero
        (2.0**127, "subnormal"),
        (1e39, "above 2\\*\\*126"),  # checked on the exact value, not its float32 inf
    ],
)
def test_bad_scales_name_value_and_rule(scale: float, rule: str) -> None:
    with pytest.raises(ValueError, match=rule) as info:
        quant_static(np.ones(2, np.float32), scale)
    assert repr(scale) in str(info.value)


@pytest.mark.parametrize("scale", [True, "1.0", 1 + 1j, np.ones(3), None])
def test_non_real_scales_are_type_errors(scale: object) -> None:
    with pytest.raises(TypeError, match="scale"):
        validate_scale(scale)


def test_scale_edges_and_reciprocal() -> None:
    tiny = np.finfo(np.float32).smallest_normal
    assert validate_scale(tiny) == tiny
    assert validate_scale(2.0**126) == np.float32(2.0**126)
    assert validate_scale(np.array([0.5], np.float32)) == np.float32(0.5)
    assert reciprocal(0.13) == np.float32(1) / np.float32(0.13)
    assert reciprocal(0.13).dtype == np.float32


def test_collapse_shard_scales_takes_the_max_after_validation() -> None:
    assert collapse_shard_scales([0.1, 0.3, 0.2]) == np.float32(0.3)
    with pytest.raises(ValueError, match="no shard"):
        collapse_shard_scales([])
    with pytest.raises(ValueError, match="positive"):
        collapse_shard_scales([0.1, -0.3])


def test_empty_and_non_contiguous_inputs() -> None:
    assert quant_static(np.zeros((0,), np.float32), 1.0).shape == (0,)
    base = np.linspace(-2, 2, 40, dtype=np.float32).reshape(4, 10)
    before = base.copy()
    view = base[::2, 1::3]
    assert np.array_equal(quant_static(view, 0.5), quant_static(view.copy(), 0.5))
    assert np.array_equal(base, before)


def test_builtins_and_function_kernels_implement_the_protocol() -> None:
    for kernel in BUILTIN_KERNELS.values():
        assert isinstance(kernel, QuantKernel)
        y = np.array([1.0625, -300.0], np.float32)
        assert np.array_equal(kernel.encode(y), kernel.quantize(y, 1.0))
    wrapped = FunctionKernel("mine", quant_static)
    assert isinstance(wrapped, QuantKernel)
    assert wrapped.encode(np.array([2.0], np.float32)).tolist() == [0x40]
