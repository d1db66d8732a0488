"""``rules infer`` recovers kernels written here from their behaviour (numpy, no library port),
and the rule it writes then passes its kernel under the gate.

Static: one that divides, one that computes in its input's dtype (bfloat16).
Dynamic: an MX (OCP FLOOR) quantizer that rounds ties away from zero, a
per-token one whose amax is floored at 1e-6 (torch-like: a NaN propagates,
the clamp lets NaN through, NaN codes keep their sign), a per-token one whose
float32 scale divides the input and rounds the quotient to the input's dtype,
and a per-group one whose amax is a vector max of 8 lanes (a lane that holds a
NaN is lost when the lanes are combined by ``fmaxf``).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.gates.g1 import run_g1
from fp8lab.gates.gq import GQ_RULES, gq_calls, run_gq
from fp8lab.gates.records import GateStatus
from fp8lab.gates.rule_inference import Inference, infer_rule, record_outputs
from fp8lab.gates.static_inference import infer_static_rule, record_static_outputs, static_calls
from fp8lab.kernels.protocols import FunctionKernel
from fp8lab.specs.scale_rules import parse_rules, rule_text

F32 = np.float32
E4M3 = ml_dtypes.float8_e4m3fn
_MAGS = np.arange(127, dtype=np.uint8).view(E4M3).astype(F32)  # e4m3fn's finite magnitudes


def static_divide(x: np.ndarray, scale: Any) -> np.ndarray:
    """x / s in float32, clipped to +-448, cast to nearest even."""
    with np.errstate(all="ignore"):
        q = np.clip(x.astype(F32) / F32(scale), -448, 448)
    return q.astype(E4M3).view(np.uint8)


def static_bf16(x: np.ndarray, scale: Any) -> np.ndarray:
    """x / s in x's own dtype: bfloat16 input, a bfloat16 scale and quotient."""
    with np.errstate(all="ignore"):
        q = (x / np.asarray(scale).astype(x.dtype)).astype(F32)
    return np.clip(q, -448, 448).astype(E4M3).view(np.uint8)


def _ties_away_codes(q: np.ndarray) -> np.ndarray:
    """e4m3fn codes of q: nearest magnitude, a tie to the larger one, +-448 at most, NaN 0x7F."""
    mag = np.abs(q)
    hi = np.clip(np.searchsorted(_MAGS, mag), 1, 126)
    lo = hi - 1
    up = (mag - _MAGS[lo]) >= (_MAGS[hi] - mag)
    index = np.where(mag >= 448, 126, np.where(up, hi, lo)).astype(np.uint8)
    codes = index | np.where(np.signbit(q), 0x80, 0).astype(np.uint8)
    return np.where(np.isnan(q), 0x7F, codes).astype(np.uint8)


def mx_ties_away(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OCP MX FLOOR: byte 127 + floor(log2 amax) - 8 from the bits, a NaN or inf amax 0xFF,
    elements x / 2**(byte - 127), rounded to e4m3fn with ties away from zero."""
    blocks = x.astype(F32).reshape(-1, 32)
    with np.errstate(all="ignore"):
        amax = np.max(np.abs(blocks), axis=1)  # NaN wins
        exp = ((amax.view(np.uint32) >> 23) & 0xFF).astype(np.int32) - 127
        byte = (np.clip(exp - 8, -127, 128) + 127).astype(np.int32)
        byte = np.where(np.isfinite(amax), byte, 255)
        q = blocks * np.ldexp(F32(1), 127 - np.minimum(byte, 254))[:, None].astype(F32)
        q = np.where((byte == 255)[:, None], np.nan, q).astype(F32)
    codes = _ties_away_codes(q).reshape(x.shape)
    return codes, byte.astype(np.uint8).reshape(x.shape[0], -1)


def per_token_eps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max(|x| row max, 1e-6) / 448 per row (NaN propagates), x / s clipped, NaN keeps its sign."""
    x32 = x.astype(F32)
    with np.errstate(all="ignore"):
        amax = np.maximum(np.max(np.abs(x32), axis=1), F32(1e-6))
        s = (amax / F32(448)).astype(F32)
        q = np.clip(x32 / s[:, None], -448, 448)
    return q.astype(E4M3).view(np.uint8), s


def per_token_bf16_quotient(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max(fmaxf row amax / 448, 1/229376) in float32; x / s rounded to x's dtype; NaN -> 448."""
    x32 = x.astype(F32)
    with np.errstate(all="ignore"):
        amax = np.fmax.reduce(np.abs(x32), axis=1, initial=F32(0))
        s = np.fmax(amax / F32(448), F32(1 / 229376)).astype(F32)
        q = x32 / s[:, None]
    q = q.astype(x.dtype).astype(F32)  # bfloat16 input: a bfloat16 quotient
    q = np.fmax(F32(-448), np.fmin(q, F32(448)))
    return q.astype(E4M3).view(np.uint8), s


def per_group_lanes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of 128: an 8-lane max that keeps NaN, lanes by fmaxf; floor 1e-10; NaN -> -448."""
    blocks = x.astype(F32).reshape(-1, 128)
    with np.errstate(all="ignore"):
        lanes = np.maximum(np.abs(blocks).reshape(-1, 16, 8).max(axis=1), F32(0))  # lane i % 8
        amax = np.fmax(np.fmax.reduce(lanes, axis=1, initial=F32(0)), F32(1e-10))
        s = (amax / F32(448)).astype(F32)
        q = blocks / s[:, None]
    q = np.fmin(np.fmax(q, F32(-448)), F32(448)).reshape(x.shape)
    return q.astype(E4M3).view(np.uint8), s.reshape(x.shape[0], -1)


def _written(found: Inference) -> Any:
    """The rule ``--write-rule`` writes, read back as a rule file."""
    assert found.chosen is not None
    (rule,) = parse_rules(rule_text(found.chosen))
    return rule


@pytest.mark.parametrize(
    ("kernel", "axes"),
    [
        (static_divide, {"apply": "divide"}),
        (static_bf16, {"apply": "divide", "arithmetic": "input"}),
    ],
)
def test_a_written_static_kernel_is_named_and_its_rule_passes_g1(
    kernel: Any, axes: dict[str, str]
) -> None:
    calls = static_calls()
    codes, element = record_static_outputs(kernel, calls)
    found = infer_static_rule(kernel.__name__, calls, codes, element)
    assert found.status == "reproduced", found.to_dict()
    assert found.chosen is not None
    assert {a: getattr(found.chosen, a).value for a in axes} == axes
    result = run_g1(FunctionKernel(kernel.__name__, kernel), rule=_written(found))
    assert result.status is GateStatus.PASS, result.reason


@pytest.mark.parametrize(
    ("scheme", "kernel", "axes"),
    [
        ("mxfp8", mx_ties_away, {"element_rounding": "ties-away", "pow2": "ocp-floor"}),
        ("per-token", per_token_eps, {"amax_floor": 1e-6, "amax_nan": "propagate"}),
        ("per-token", per_token_bf16_quotient, {"arithmetic": "input-quotient"}),
        pytest.param(
            "per-group",
            per_group_lanes,
            {"amax_lanes": 8, "amax_nan": "skip"},
            marks=pytest.mark.slow(reason="GQ's exact reference on 42 per-group calls: 6 s"),
        ),
    ],
)
def test_a_written_dynamic_kernel_is_found_and_its_rule_passes_gq(
    scheme: str, kernel: Any, axes: dict[str, object]
) -> None:
    calls = gq_calls(scheme, GQ_RULES[scheme][0])
    found = infer_rule(scheme, kernel.__name__, calls, record_outputs(kernel, calls, scheme))
    assert found.status == "reproduced", found.to_dict()
    assert found.chosen is not None
    got = {a: getattr(getattr(found.chosen, a), "value", getattr(found.chosen, a)) for a in axes}
    assert got == axes
    result = run_gq(kernel, scheme=scheme, rule=_written(found))
    assert result.status is GateStatus.PASS, result.reason
