"""NVFP4 quantization: the numpy port against the exact reference, and pinned facts.

Facts from TransformerEngine ``quantize_transpose_nvfp4.cuh`` and ``quantize_nvfp4.cuh``
(433b1dbc), ``quantize_transpose_nvfp4_tuned_1D.cuh`` (523801df7) and CUDA
``cuda_fp4.hpp`` (NaN to +MAXNORM); see :mod:`fp8lab.refs.nvfp4`.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from fp8lab.kernels.scheme import nvfp4_quant
from fp8lab.populations.schemes import scheme_population
from fp8lab.refs import NVFP4_NAN_CODE, reference_nvfp4_quant
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4ScaleRule

RULE = NVFP4_RULES["te-nvfp4-divide"]
F32 = np.float32


def _both(x: np.ndarray, g: float, rule: Nvfp4ScaleRule = RULE) -> tuple[np.ndarray, np.ndarray]:
    codes, scales = reference_nvfp4_quant(x, g, rule)
    port_codes, port_scales = nvfp4_quant(x, np.array([g], F32), rule)
    assert codes.tobytes() == port_codes.tobytes() and scales.tobytes() == port_scales.tobytes()
    return codes, scales


@pytest.mark.parametrize("name", sorted(NVFP4_RULES))
@pytest.mark.parametrize("seed", [0, 1])
def test_port_equals_reference_bytewise_at_several_global_amaxes(seed: int, name: str) -> None:
    """Own amax, a power of two off it, a non-power-of-two multiple, zero and inf."""
    compared = 0
    for _label, words in scheme_population("e2m1fn", seed):
        for row in words[:3]:
            x = row.reshape(1, -1)
            own = float(np.fmax.reduce(np.abs(x).reshape(-1), initial=F32(0)))
            for g in (own, own * 2.0**-3, float(F32(own * 1.5)), 0.0, float("inf")):
                _both(x, float(F32(g)), NVFP4_RULES[name])
                compared += x.size
    assert compared > 30_000


@pytest.mark.parametrize("name", sorted(NVFP4_RULES))
def test_bfloat16_inputs_match_too(name: str) -> None:
    for _label, words in scheme_population("e2m1fn", 2)[:4]:
        x = words[:2].astype(ml_dtypes.bfloat16)
        x32 = x.astype(F32)
        g = float(np.fmax.reduce(np.abs(x32).reshape(-1), initial=F32(0)))
        want = reference_nvfp4_quant(x32, g, NVFP4_RULES[name])
        got = nvfp4_quant(x, np.array([g], F32), name)
        assert want[0].tobytes() == got[0].tobytes() and want[1].tobytes() == got[1].tobytes()


def test_pinned_facts() -> None:
    block = [6.0, 3.0, -1.5, 0.25, 0.75, -5.0, 0.0, -0.0] * 2
    codes, scales = _both(np.array([block], F32), 6.0)
    assert scales.tolist() == [[0x7E]]  # e4m3(6/6 * 2688/6) = 448
    # 6, 3, -1.5, 0.25 (tie -> 0), 0.75 (tie -> 1.0), -5 (tie -> -4), 0, -0
    assert codes[0, :8].tolist() == [0x07, 0x05, 0x0B, 0x00, 0x02, 0x0E, 0x00, 0x08]
    zero, zero_scales = _both(np.zeros((1, 16), F32), 0.0)
    assert not zero.any() and zero_scales.tolist() == [[0]]
    nan = np.array([[np.nan, -np.nan, np.inf, -np.inf] + [1.0] * 12], F32)
    nan_codes, _ = _both(nan, float("inf"))
    assert nan_codes[0, :4].tolist() == [NVFP4_NAN_CODE, NVFP4_NAN_CODE, 0x07, 0x0F]
    # a block whose scale underflows to byte 0: inv = FLT_MAX, so nonzero elements hit +-6
    tiny = np.array([[6.0] * 16, [1e-6, -1e-6] + [0.0] * 14], F32)
    tiny_codes, tiny_scales = _both(tiny, 6.0)
    assert tiny_scales[1, 0] == 0 and tiny_codes[1, :3].tolist() == [0x07, 0x0F, 0x00]


def test_reciprocal_pinned_facts() -> None:
    """quantize_nvfp4_kernel: inverse = S_enc / S_dec_b, unclamped (433b1dbc)."""
    rcp = NVFP4_RULES["te-nvfp4-reciprocal"]
    # a zero block: byte 0, inverse S_enc / 0 = +inf, 0 * inf = NaN -> +6 (0x07), not 0
    zero, zero_scales = _both(np.zeros((1, 16), F32), 0.0, rcp)
    assert zero_scales.tolist() == [[0]] and set(zero.reshape(-1).tolist()) == {NVFP4_NAN_CODE}
    # byte 0 with nonzero elements: x * inf = +-inf, saturated to +-6; its zeros +6 too
    tiny = np.array([[6.0] * 16, [1e-6, -1e-6] + [0.0] * 14], F32)
    tiny_codes, tiny_scales = _both(tiny, 6.0, rcp)
    assert tiny_scales[1, 0] == 0 and tiny_codes[1, :3].tolist() == [0x07, 0x0F, 0x07]
    # the divide rule's kernel keeps those zeros 0 (inverse fminf(1/0, FLT_MAX) = FLT_MAX)
    assert _both(tiny, 6.0)[0][1, :3].tolist() == [0x07, 0x0F, 0x00]


def test_the_element_paths_split_where_the_inverse_rounds() -> None:
    """S_enc / d and fminf(1 / (d * fl(1/S_enc)), FLT_MAX) differ by an ulp at some S_enc."""
    rcp, fused = NVFP4_RULES["te-nvfp4-reciprocal"], NVFP4_RULES["te-nvfp4-fused"]
    differ = 0
    for _label, words in scheme_population("e2m1fn", 0)[:4]:
        for row in words[:4]:
            x = row.reshape(1, -1)
            g = float(F32(np.fmax.reduce(np.abs(x).reshape(-1), initial=F32(0)) * F32(1.5)))
            a, sa = _both(x, g, rcp)
            b, sb = _both(x, g, fused)
            differ += int((a != b).sum()) if sa.tobytes() == sb.tobytes() else 0
    assert differ > 0


def test_refusals() -> None:
    x = np.zeros((1, 16), F32)
    unread = dataclasses.replace(RULE, name="unread", element_source=None)
    with pytest.raises(ValueError, match="element path is not modelled"):
        reference_nvfp4_quant(x, 1.0, unread)
    with pytest.raises(ValueError, match="element path is not modelled"):
        nvfp4_quant(x, np.ones(1, F32), unread)
    with pytest.raises(ValueError, match="multiple of 16"):
        reference_nvfp4_quant(np.zeros((1, 8), F32), 1.0, RULE)
    with pytest.raises(ValueError, match="multiple of 16"):
        nvfp4_quant(np.zeros(16, F32), np.ones(1, F32), RULE)
