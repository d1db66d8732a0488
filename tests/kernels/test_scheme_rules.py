"""The scale rules: the numpy port against the exact reference, bit for bit, and the facts."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

from fp8lab.kernels.scheme import nvfp4_block_scales, scheme_quant
from fp8lab.populations.schemes import case_labels, scheme_population
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_scheme_quant
from fp8lab.specs.formats import FORMATS
from fp8lab.specs.nvfp4_rules import NVFP4_RULES
from fp8lab.specs.scale_rules import RULES, Arithmetic, Granularity, ScaleRule, get_rule

FIXED_NAMES = {
    "vllm-per-tensor",
    "vllm-per-token",
    "vllm-native-per-token",
    "vllm-per-group",
    "vllm-per-group-ue8m0",
    "ocp-floor",
    "rceil",
    "te-nvfp4-divide",
    "te-nvfp4-reciprocal",
}


def disagreements(x: np.ndarray, rule: ScaleRule) -> int:
    """Codes plus scale words on which the port and the reference differ (bytewise)."""
    codes, scales = scheme_quant(x, rule)
    ref_codes, ref_scales = reference_scheme_quant(x, rule)
    assert codes.shape == ref_codes.shape and scales.shape == ref_scales.shape
    assert scales.dtype == ref_scales.dtype
    words = scales.view(np.uint8).reshape(scales.size, -1)
    ref_words = ref_scales.view(np.uint8).reshape(ref_scales.size, -1)
    return int((codes != ref_codes).sum() + (words != ref_words).any(axis=1).sum())


def test_the_fixed_names_are_declared() -> None:
    assert set(RULES) | set(NVFP4_RULES) >= FIXED_NAMES
    assert get_rule("rceil") is RULES["rceil"]
    with pytest.raises(ValueError, match="known: vllm-per-tensor"):
        get_rule("floor")


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("seed", [0, 1])
def test_port_agrees_with_reference_on_every_case(name: str, seed: int) -> None:
    rule = RULES[name]
    population = scheme_population(rule.element, seed)
    assert [label for label, _ in population] == list(case_labels(rule.element))
    examined = 0
    for label, x in population:
        assert disagreements(x, rule) == 0, label
        examined += x.size
    assert examined > 10_000


@pytest.mark.parametrize("name", sorted(RULES))
def test_bfloat16_input_widens_exactly(name: str) -> None:
    x = scheme_population(RULES[name].element, 3)[0][1].astype(ml_dtypes.bfloat16)
    codes, scales = scheme_quant(x, name)
    ref_codes, ref_scales = reference_scheme_quant(x, RULES[name])
    assert np.array_equal(codes, ref_codes)
    assert np.array_equal(scales.view(np.uint8), ref_scales.view(np.uint8))
    if RULES[name].arithmetic is Arithmetic.FLOAT32:  # "input" rounds to bfloat16 on purpose
        wide_codes, wide_scales = reference_scheme_quant(x.astype(np.float32), RULES[name])
        assert np.array_equal(codes, wide_codes)
        assert np.array_equal(scales.view(np.uint8), wide_scales.view(np.uint8))


def test_ties_case_lands_on_element_ties() -> None:
    """``ties``: after an exact power-of-two scale, elements sit on e4m3fn midpoints."""
    x = dict(scheme_population("e4m3fn", 0))["ties"]
    _, scales = reference_scheme_quant(x, RULES["vllm-per-group"])
    q = x.reshape(-1, 128) / scales.reshape(-1, 1)
    fmt = FORMATS["e4m3fn"]
    mags = [fmt.magnitude_value(i) for i in range(fmt.max_code + 1)]
    mids = {float((a + b) / 2) for a, b in itertools.pairwise(mags)}
    assert sum(abs(v) in mids for v in q.reshape(-1).tolist()) > 100


def test_vllm_per_tensor_all_zero_gives_scale_0_and_0x7e() -> None:
    codes, scales = scheme_quant(np.zeros((2, 128), np.float32), "vllm-per-tensor")
    assert scales.tolist() == [0.0] and set(codes.reshape(-1).tolist()) == {0x7E}


def test_vllm_per_token_floors_the_scale_and_native_reciprocal_differs() -> None:
    _, scales = scheme_quant(np.zeros((1, 128), np.float32), "vllm-per-token")
    assert scales.tolist() == [float(np.float32(1.0 / 229376.0))]
    nan_row = np.full((1, 128), 1.0, np.float32)
    nan_row[0, 3] = np.nan
    cuda, _ = scheme_quant(nan_row, "vllm-per-token")
    _, native_scale = scheme_quant(nan_row, "vllm-native-per-token")
    assert cuda[0, 3] == 0x7E and math.isnan(native_scale[0])  # fmaxf skips NaN; torch.amax not


def test_vllm_per_group_sends_nan_to_minus_448() -> None:
    x = np.ones((1, 128), np.float32)
    x[0, 0] = np.nan
    codes, _ = scheme_quant(x, "vllm-per-group")
    assert codes[0, 0] == 0xFE


def test_mx_rules_at_zero_nan_and_the_floor_rceil_split() -> None:
    x = np.zeros((1, 64), np.float32)
    x[0, 32] = np.nan
    for name in ("ocp-floor", "rceil"):
        assert scheme_quant(x, name)[1].tolist() == [[0, 255]]
    x = np.full((1, 32), 448.0, np.float32)  # FLOOR: 2**(8-8) = 1; RCEIL: 448/448 = 1
    assert (
        scheme_quant(x, "ocp-floor")[1].tolist() == [[127]] == scheme_quant(x, "rceil")[1].tolist()
    )
    x[0, 0] = np.nextafter(np.float32(448.0), np.float32(np.inf))
    assert scheme_quant(x, "ocp-floor")[1].tolist() == [[127]]
    assert scheme_quant(x, "rceil")[1].tolist() == [[128]]


def test_rules_refuse_bad_shapes() -> None:
    with pytest.raises(ValueError, match="multiple of the block size"):
        scheme_quant(np.zeros((1, 100), np.float32), "vllm-per-group")
    with pytest.raises(ValueError, match=r"\[M, K\]"):
        reference_scheme_quant(np.zeros(8, np.float32), RULES["rceil"])
    with pytest.raises(ValueError, match="block size goes with BLOCK"):
        ScaleRule(**{**RULES["rceil"].__dict__, "granularity": Granularity.ROW})


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NVFP4_RULES))
def test_nvfp4_block_scales_port_agrees_with_reference(name: str) -> None:
    rule = NVFP4_RULES[name]
    rng = np.random.default_rng(11)
    amax = np.abs(rng.standard_normal(4000) * rng.choice([1e-4, 1.0, 1e3], 4000))
    specials = [0.0, np.inf, np.nan, 1e-40, 3e38, 6.0, 2688.0, 6.0 * 2.0**-9]
    amax = np.concatenate([amax, specials]).astype(np.float32)
    for global_amax in (0.0, 1.0, 37.5, 1e-30, 3e38, np.inf):
        got = nvfp4_block_scales(amax, global_amax, rule)
        assert np.array_equal(got, reference_nvfp4_block_scales(amax, global_amax, rule))


def test_nvfp4_divide_and_reciprocal_split_on_nan_amax() -> None:
    """fminf(NaN, FLT_MAX) is FLT_MAX: the divide path saturates a NaN amax, the others keep NaN."""
    amax = np.array([np.nan], np.float32)
    assert nvfp4_block_scales(amax, 1.0, NVFP4_RULES["te-nvfp4-divide"]).tolist() == [0x7E]
    assert nvfp4_block_scales(amax, 1.0, NVFP4_RULES["te-nvfp4-reciprocal"]).tolist() == [0x7F]


@pytest.mark.slow(reason="the exact reference on every rule's rule-split calls")
@pytest.mark.parametrize("name", sorted(RULES))
def test_port_agrees_with_reference_on_the_rule_split_calls(name: str) -> None:
    from fp8lab.populations.rule_splits import split_cases
    from fp8lab.populations.split_cache import cached_split_table

    rule = RULES[name]
    table = cached_split_table(rule)
    examined = 0
    for dtype in (np.float32, ml_dtypes.bfloat16):
        for x in split_cases(table, rule.element, np.dtype(dtype).name):
            with np.errstate(invalid="ignore"):  # a signalling NaN amax, quieted
                x = x.astype(dtype)
            rows = list(x) if rule.granularity is Granularity.TENSOR else [x]
            for part in rows:
                assert disagreements(part.reshape(-1, x.shape[1]), rule) == 0, (name, dtype)
                examined += part.size
    assert examined > 0


def test_ocp_floor_by_float32_log2_turns_where_the_log2_model_says() -> None:
    """``floorf(log2f(amax))``: port and reference agree at, below and above each binade's
    threshold (:func:`fp8lab.sweeps.log2_model.floor_thresholds`), and leave the bits there."""
    from fp8lab.kernels.scheme import amax_scales
    from fp8lab.sweeps.log2_model import floor_thresholds

    rule = get_rule("ocp-floor[e8m0_exponent=log2-float32]")
    first = floor_thresholds()
    bits = [
        (e << 23) | m
        for e in range(12, 255, 7)  # above the bytes clamped to 0
        if first[e] < 1 << 23
        for m in (int(first[e]) - 1, int(first[e]))
    ]
    amax = np.array(bits, np.uint32).view(np.float32)
    port = amax_scales(amax, rule)
    _, ref = reference_scheme_quant(np.repeat(amax, 32).reshape(-1, 32), rule)
    assert np.array_equal(port, ref.reshape(-1))
    assert (port[1::2] == port[::2] + 1).all()  # the threshold pattern is one byte up
    assert (amax_scales(amax[1::2], "ocp-floor") == port[::2]).all()  # the bits' byte is not
