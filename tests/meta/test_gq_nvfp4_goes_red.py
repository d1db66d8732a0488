"""GQ's nvfp4 scheme goes red on planted defects of an NVFP4 kernel; it passes the right one.

Each defect is one change to a production-style NVFP4 kernel written here
(TE ``quantize_transpose_nvfp4.cuh`` 433b1dbc, rowwise): NaN to 0 instead of
+6, the global amax ignored, elements divided by the decode scale, ties away
from zero (microxcaling's default), a NaN-propagating block amax, a kernel
that recomputes the global amax instead of reading its argument, and one that
takes no global scale. Each rule's port with another rule's block formula fails
too (float32 inputs), and only on the two designed cases.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fp8lab.cli.main import main
from fp8lab.codecs import decode, encode
from fp8lab.gates import GateStatus, run_gq
from fp8lab.kernels.scheme import SCHEME_PORTS, nvfp4_block_scales, nvfp4_quant
from fp8lab.populations.schemes import NVFP4_FUSED_SPLIT_AMAX_BITS, NVFP4_SPLIT_AMAX_BITS
from fp8lab.specs.nvfp4_rules import NVFP4_RULES, Nvfp4Inverse, Nvfp4Order

pytestmark = pytest.mark.process

F32 = np.float32
RULE = "te-nvfp4-divide"
_MIDS = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], F32)  # e2m1 midpoints


def nvfp4_kernel(defect: str = "") -> Callable[[np.ndarray, np.ndarray], Any]:
    """An NVFP4 kernel, right unless ``defect`` names one change."""

    def kernel(x: np.ndarray, global_amax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blocks = np.asarray(x, F32).reshape(-1, 16)
        g = F32(np.asarray(global_amax).reshape(-1)[0])
        if defect == "no-global":
            g = F32(0)
        elif defect == "own-amax":  # ignores its argument, recomputes the tensor's amax
            g = np.fmax.reduce(np.abs(np.asarray(x, F32)).reshape(-1), initial=F32(0))
        with np.errstate(all="ignore"):
            if defect == "amax-nan":
                amax = np.max(np.abs(blocks), axis=1)
            else:
                amax = np.fmax.reduce(np.abs(blocks), axis=1, initial=F32(0))
            # TE's other kernel's block formula, amax * (1/6) * S_enc, instead of amax/6 * S_enc
            block_rule = "te-nvfp4-reciprocal" if defect == "block-reciprocal" else RULE
            scale = nvfp4_block_scales(amax, float(g), NVFP4_RULES[block_rule])
            s_enc = np.fmin(F32(2688) / g, np.finfo(F32).max)
            s_enc = F32(1) if g == 0 or s_enc == 0 else s_enc
            dec = decode(scale, "e4m3fn").astype(F32) * F32(1.0 / float(s_enc))
            if defect == "element-divide":
                q = blocks / dec[:, None]
            else:
                q = blocks * np.fmin(F32(1) / dec, np.finfo(F32).max)[:, None]
        nan = np.isnan(q)
        codes = encode(np.where(nan, F32(0), q), "e2m1fn", saturate=True, nan="canonical")
        if defect == "ties-away":  # a tie between magnitude codes i and i+1 goes to i+1
            tie = np.isin(np.abs(q), _MIDS)
            away = np.searchsorted(_MIDS, np.abs(q[tie])) + 1
            codes[tie] = (codes[tie] & 0x8) | away.astype(np.uint8)
        codes[nan] = 0x00 if defect == "nan-zero" else 0x07
        return codes.reshape(np.shape(x)), scale.reshape(np.shape(x)[0], -1)

    return kernel


def test_the_harness_passes_the_right_kernel() -> None:
    result = run_gq(nvfp4_kernel(), scheme="nvfp4", rule=RULE, input_dtypes=["float32"])
    assert result.status is GateStatus.PASS, result.reason
    assert result.cases == 2 * 99 and result.words > 40_000  # own and 1.5x global amax


@pytest.mark.parametrize(
    ("defect", "where"),
    [
        ("nan-zero", {"nan", "neg-nan"}),
        ("no-global", {"ties", "random", "pow2-amax"}),
        ("element-divide", {"zero", "near-ties"}),
        ("ties-away", {"ties", "near-ties"}),
        ("amax-nan", {"nan", "neg-nan"}),
        ("own-amax", {"ties", "random", "pow2-amax"}),
    ],
)
def test_a_planted_defect_fails_gq(defect: str, where: set[str]) -> None:
    result = run_gq(nvfp4_kernel(defect), scheme="nvfp4", rule=RULE, input_dtypes=["float32"])
    assert result.status is GateStatus.FAIL and result.mismatches > 0, defect
    assert where <= {k for k, v in result.mismatches_by_class.items() if v}, (
        result.mismatches_by_class
    )
    assert result.first_offenders


def test_an_element_offender_gives_each_input_in_hex() -> None:
    """An nvfp4 call has two inputs: input_hex names each, x's word and the global scale."""
    result = run_gq(
        nvfp4_kernel("element-divide"), scheme="nvfp4", rule=RULE, input_dtypes=["bfloat16"]
    )
    assert result.status is GateStatus.FAIL and result.first_offenders
    for o in result.first_offenders:
        assert re.fullmatch(r"x=0x[0-9a-f]{4} global_scale=0x[0-9a-f]{8}", o.input_hex), o


def test_only_the_designed_case_catches_the_other_te_block_formula() -> None:
    # amax/6*S and amax*(1/6)*S split on 15 amax patterns: the
    # nvfp4-formula-split tensors hold each at S_enc = 1; no other case has one.
    result = run_gq(
        nvfp4_kernel("block-reciprocal"), scheme="nvfp4", rule=RULE, input_dtypes=["float32"]
    )
    assert result.status is GateStatus.FAIL
    moved = {k: v for k, v in result.mismatches_by_class.items() if v}
    assert set(moved) == {"nvfp4-formula-split", "nvfp4-fused-split"}
    assert moved["nvfp4-formula-split"] >= 15
    assert result.assertions_failed >= 3  # its three tensors, each a call of its own


def test_the_designed_amaxes_are_exactly_where_the_formulas_split() -> None:
    amax = np.array(NVFP4_SPLIT_AMAX_BITS, np.uint32).view(F32)
    near = np.concatenate([np.nextafter(amax, F32(0)), np.nextafter(amax, F32(np.inf))])
    a = nvfp4_block_scales(amax, 2688.0, NVFP4_RULES[RULE])
    b = nvfp4_block_scales(amax, 2688.0, NVFP4_RULES["te-nvfp4-reciprocal"])
    assert (a != b).all()
    assert (
        nvfp4_block_scales(near, 2688.0, NVFP4_RULES[RULE])
        == nvfp4_block_scales(near, 2688.0, NVFP4_RULES["te-nvfp4-reciprocal"])
    ).all()


def test_a_kernel_without_the_global_scale_argument_fails_every_call() -> None:
    result = run_gq(lambda x: SCHEME_PORTS[RULE](x, np.ones(1, F32)), scheme="nvfp4", rule=RULE)
    assert result.status is GateStatus.FAIL and result.assertions_failed == result.cases


NVK = """
import numpy as np
from fp8lab.kernels.scheme import SCHEME_PORTS

def nan_zero(x, global_amax):
    codes, scales = SCHEME_PORTS["te-nvfp4-divide"](x, global_amax)
    codes[np.isnan(np.asarray(x, np.float32))] = 0
    return codes, scales
"""


def test_the_command_fails_a_defective_nvfp4_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nvk.py").write_text(NVK)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "nvk.json"
    argv = ["gates", "--gate", "GQ", "--scheme", "nvfp4", "--rule", RULE, "--json", str(out)]
    assert main([*argv, "--kernel", "nvk:nan_zero"]) == 1
    (row,) = json.loads(out.read_text())
    # the child called it with (x, global_scale) and compared: only the NaN words differ
    assert row["kernel"] == "nvk:nan_zero" and row["reason"].startswith("mismatches in")
    assert {k for k, v in row["mismatches_by_class"].items() if v} == {"nan", "neg-nan"}
    assert "GQ    nvk:nan_zero" in capsys.readouterr().out


DESIGNED = {"nvfp4-formula-split", "nvfp4-fused-split"}


@pytest.mark.parametrize(
    ("rule", "order", "failed"),
    [
        ("te-nvfp4-divide", Nvfp4Order.RECIPROCAL, 6),
        ("te-nvfp4-divide", Nvfp4Order.FUSED, 9),
        ("te-nvfp4-reciprocal", Nvfp4Order.DIVIDE, 6),
        ("te-nvfp4-reciprocal", Nvfp4Order.FUSED, 6),
        ("te-nvfp4-fused", Nvfp4Order.DIVIDE, 9),
        ("te-nvfp4-fused", Nvfp4Order.RECIPROCAL, 6),
    ],
)
def test_a_port_with_another_rules_block_formula_fails(
    rule: str, order: Nvfp4Order, failed: int
) -> None:
    """The port of ``rule``, its block byte by ``order``'s formula: only the designed cases fail.

    Reciprocal and fused are one expression at S_enc = 1, so ``nvfp4-formula-split``
    cannot tell them apart; ``nvfp4-fused-split`` (S_enc 2688 and 1792) can.
    """
    planted = dataclasses.replace(NVFP4_RULES[rule], order=order)
    kernel = partial(nvfp4_quant, rule=planted)
    result = run_gq(kernel, scheme="nvfp4", rule=rule, input_dtypes=["float32"])
    assert result.status is GateStatus.FAIL and result.assertions_failed == failed
    moved = {k for k, v in result.mismatches_by_class.items() if v}
    assert "nvfp4-fused-split" in moved and moved <= DESIGNED


@pytest.mark.parametrize("rule", ["te-nvfp4-reciprocal", "te-nvfp4-fused"])
def test_a_port_with_the_other_element_multiplier_fails(rule: str) -> None:
    """S_enc / d for fminf(1 / (d * S_dec), FLT_MAX) or back: zero blocks and rounding move."""
    true = NVFP4_RULES[rule]
    other = next(i for i in Nvfp4Inverse if i is not true.inverse)
    planted = dataclasses.replace(true, inverse=other)
    kernel = partial(nvfp4_quant, rule=planted)
    result = run_gq(kernel, scheme="nvfp4", rule=rule, input_dtypes=["float32"])
    assert result.status is GateStatus.FAIL and result.assertions_failed >= 3
    assert {"zero", "subnormal"} <= {k for k, v in result.mismatches_by_class.items() if v}


def test_the_fused_split_amaxes_split_and_their_neighbours_do_not() -> None:
    rcp, fused = NVFP4_RULES["te-nvfp4-reciprocal"], NVFP4_RULES["te-nvfp4-fused"]
    for s_enc, bits in NVFP4_FUSED_SPLIT_AMAX_BITS.items():
        g = 2688.0 / s_enc  # the global amax whose S_enc this is: 1.0 and 1.5
        amax = np.array(bits, np.uint32).view(F32)
        near = np.concatenate([np.nextafter(amax, F32(0)), np.nextafter(amax, F32(np.inf))])
        assert (nvfp4_block_scales(amax, g, rcp) != nvfp4_block_scales(amax, g, fused)).all()
        assert (nvfp4_block_scales(near, g, rcp) == nvfp4_block_scales(near, g, fused)).all()


@pytest.mark.slow  # 2 x 150 million patterns through the numpy port
def test_the_fused_split_amaxes_are_every_split_in_0_1() -> None:
    """From 2**-19 (below it both bytes are 0) to 1.0, nothing else splits."""
    rcp, fused = NVFP4_RULES["te-nvfp4-reciprocal"], NVFP4_RULES["te-nvfp4-fused"]
    lo, hi = int(F32(2.0**-19).view(np.uint32)), int(F32(1.0).view(np.uint32)) + 1
    for s_enc, want in NVFP4_FUSED_SPLIT_AMAX_BITS.items():
        g, found = 2688.0 / s_enc, []
        for start in range(lo, hi, 1 << 23):
            bits = np.arange(start, min(start + (1 << 23), hi), dtype=np.uint32)
            a = bits.view(F32)
            found += bits[nvfp4_block_scales(a, g, rcp) != nvfp4_block_scales(a, g, fused)].tolist()
        assert found == sorted(want), s_enc
        below = np.arange(0, lo, 1 << 10, dtype=np.uint32).view(F32)
        assert not nvfp4_block_scales(below, g, rcp).any()
