"""The ecosystem table's NVFP4 amax split against the exact reference, on boundary samples.

Per block amax, the split says whether torchao's and TransformerEngine's
stored block bytes differ and whether their element multipliers differ; here
both come from :mod:`fp8lab.refs` (the block byte of
:func:`~fp8lab.refs.schemes.reference_nvfp4_block_scales` for that amax, a
scale-made NaN signed as :func:`~fp8lab.refs.nvfp4.reference_nvfp4_quant` signs
it, and the multiplier by exact float32 operations from that byte).
"""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

import numpy as np
import pytest

from fp8lab.refs.float32_exact import f32_div, f32_mul, fminf, from_bits
from fp8lab.refs.schemes import reference_nvfp4_block_scales, reference_nvfp4_tensor_scales
from fp8lab.specs.formats import get_format
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4Inverse, Nvfp4NanCode, Nvfp4ScaleRule
from fp8lab.studies import ecosystem_nvfp4 as nv
from fp8lab.studies.ecosystem import ECOSYSTEM_ROWS, FULL_SPLITS, amax_split
from fp8lab.sweeps.range_run import RangeRun

OWN, SPEC = "torchao-0.18-nvfp4", "te-nvfp4-divide"
_FLT_MAX = float(np.finfo(np.float32).max)


def _samples(seed: int) -> list[int]:
    """Patterns on, and within 3 ulps of, the block amaxes where a byte or a clamp turns.

    ``6 * v * 2**k`` for ``v`` an e4m3 value and its midpoints (the block byte
    turns there at S = 1), 2688 (448 * 6) and 0.09375 (6 * 2**-6, torchao's
    lower clamp) times powers of two, plus seeded patterns and 0, inf and NaN.
    """
    rng = np.random.default_rng(seed)
    anchors = []
    for k in range(-149, 128, 5):
        for base in (1.0, 6.0, 0.09375, 2688.0, 6.0 * 1.0625, 6.0 * 1.125):
            v = base * 2.0**k
            if 0 < v < 3.4e38:
                p = int(np.array([v], np.float32).view(np.uint32)[0])
                anchors += [p + d for d in range(-3, 4) if 0 <= p + d < 0x7F80_0000]
    anchors += rng.integers(0, 0x7F80_0000, 200).tolist()
    return [*sorted(set(anchors)), 0, 0x7F80_0000, 0x7F80_0001, 0x7FC0_0000, 0x7FFF_FFFF]


def _reference(rule: Nvfp4ScaleRule, p: int, global_amax: float) -> tuple[int, int]:
    """``(block byte, multiplier bits)`` of block amax pattern ``p`` under ``rule``, exactly.

    The pattern is the amax the rule's block formula receives (a NaN too); a
    NaN multiplier is 0x7FC00000.
    """
    amax = from_bits(p)
    byte = int(reference_nvfp4_block_scales(np.array([amax], np.float32), global_amax, rule)[0])
    fmt = get_format("e4m3fn")
    if fmt.is_nan_code(byte) and rule.nan_code is Nvfp4NanCode.TORCH_BITS and amax == amax:
        byte = 0xFF  # the scale side's NaN (0 / 0, inf / inf): x86's negative default NaN
    d = math.nan if fmt.is_nan_code(byte) else float(fmt.exact_value(byte))
    s_enc, s_dec = reference_nvfp4_tensor_scales(float(np.float32(global_amax)), rule)
    if rule.inverse is Nvfp4Inverse.ENCODE_QUOTIENT:
        m = f32_div(s_enc, d)
    else:
        m = fminf(f32_div(1.0, f32_mul(d, s_dec)), _FLT_MAX)
    bits = 0x7FC0_0000 if math.isnan(m) else int(np.array([m], np.float32).view(np.uint32)[0])
    return byte, bits


def _check(own: str, spec: str, samples: list[int], global_amax: float) -> tuple[int, int]:
    amax = np.array(samples, np.uint32).view(np.float32)
    split, moved = nv.nvfp4_split_verdicts(amax, own, spec, global_amax)
    for i, p in enumerate(samples):
        a = _reference(nv.NVFP4_RULES[own], p, global_amax)
        b = _reference(nv.NVFP4_RULES[spec], p, global_amax)
        assert split[i] == (a[0] != b[0]), f"bytes at {p:#010x}: {a} {b}"
        assert moved[i] == (a[1] != b[1]), f"multipliers at {p:#010x}: {a} {b}"
    return int(split.sum()), int(moved.sum())


@pytest.mark.slow
@pytest.mark.parametrize("global_amax", [nv.NVFP4_GLOBAL_AMAX, 1.0])
def test_split_verdicts_match_the_exact_reference(global_amax: float) -> None:
    samples = _samples(7)
    samples = samples if global_amax == nv.NVFP4_GLOBAL_AMAX else samples[::3]
    split, moved = _check(OWN, SPEC, samples, global_amax)
    assert len(samples) > 300 and 0 < split < len(samples) and 0 < moved < len(samples)


def test_a_rule_against_itself_splits_nowhere() -> None:
    split = amax_split(OWN, OWN, RangeRun(start=0x3C00_0000, stop=0x3C00_0000 + (1 << 16)))
    assert (split.scale_differs, split.applied_differs, split.first_differ) == (0, 0, -1)


def test_a_planted_clamp_is_found_and_agrees_with_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torchao without its lower clamp 2**-6 splits from torchao below block amax 0.09375 only."""
    planted = dataclasses.replace(NVFP4_RULES[OWN], name="planted", block_bounds=(0.0, 448.0))
    monkeypatch.setattr(nv, "NVFP4_RULES", MappingProxyType({**NVFP4_RULES, "planted": planted}))
    low = nv.nvfp4_split_chunk(OWN, "planted", 0x3D00_0000, 0x3D00_0000 + (1 << 12))
    high = nv.nvfp4_split_chunk(OWN, "planted", 0x3E00_0000, 0x3E00_0000 + (1 << 12))
    assert low[:2] == (1 << 12, 1 << 12) and high[:2] == (0, 0)
    _check(OWN, "planted", _samples(3)[::4], nv.NVFP4_GLOBAL_AMAX)


def test_the_split_refuses_a_pair_it_cannot_count() -> None:
    with pytest.raises(ValueError, match="not an NVFP4 rule"):
        amax_split(OWN, "rceil", RangeRun(start=0, stop=16))
    with pytest.raises(ValueError, match="not an NVFP4 rule"):
        amax_split(OWN, "te-nvfp4-not-here", RangeRun(start=0, stop=16))


def test_the_nvfp4_row_names_its_rules_and_its_published_split() -> None:
    (row,) = [r for r in ECOSYSTEM_ROWS if r.scheme == "nvfp4"]
    assert (row.own_rule, row.spec_rule) == (OWN, SPEC)
    assert FULL_SPLITS[(OWN, SPEC)] == nv.NVFP4_FULL_SPLITS[(OWN, SPEC)]
