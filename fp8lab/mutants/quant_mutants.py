"""Builders of the static-quant mutants: each is the built-in arithmetic with one bug.

Each builder returns a :class:`~fp8lab.kernels.QuantKernel`. Builders that
change the production encoder do it through the AST (:mod:`.source`), so the
port itself is what is mutated.
"""

from __future__ import annotations

import ast
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.codecs import decode, encode
from fp8lab.gates.g1 import G1_SHARD_SCALES, run_g1
from fp8lab.gates.records import GateResult
from fp8lab.kernels import (
    BUILTIN_KERNELS,
    FunctionKernel,
    QuantKernel,
    StaticQuantKernel,
    reciprocal,
    static_scale,
)
from fp8lab.kernels.planted import divide, no_saturation, scale_ignored, truncation
from fp8lab.kernels.quant_inputs import widen_activation
from fp8lab.mutants.source import compile_module, parse_module

__all__ = ["QUANT_BUILDERS", "g1_runner"]

Codes = npt.NDArray[np.uint8]
_MAGNITUDES = decode(np.arange(0x7F, dtype=np.uint8), "e4m3fn", np.float64)


def _scaled(x: np.ndarray, scale: Any) -> npt.NDArray[np.float32]:
    return widen_activation(x) * reciprocal(static_scale(scale))


def _kernel(name: str, encoder: Any) -> QuantKernel:
    return FunctionKernel(name, lambda x, s: encoder(_scaled(x, s)))


def _round_by_rule(y: npt.NDArray[np.float32], tie_up: Any) -> Codes:
    """Nearest e4m3fn magnitude (clamped to 448); ``tie_up(lo_index)`` decides ties."""
    with np.errstate(invalid="ignore"):
        a = np.minimum(np.abs(y.astype(np.float64)), 448.0)
    lo = np.clip(np.searchsorted(_MAGNITUDES, a, side="right") - 1, 0, 0x7E)
    hi = np.minimum(lo + 1, 0x7E)
    d_lo, d_hi = a - _MAGNITUDES[lo], _MAGNITUDES[hi] - a
    up = (d_hi < d_lo) | ((d_hi == d_lo) & tie_up(lo) & (hi != lo))
    index = np.where(up, hi, lo)
    out = (index | np.where(np.signbit(y), 0x80, 0)).astype(np.uint8)
    out[np.isnan(y)] = 0x7F
    return out


def half_away_from_zero(y: npt.NDArray[np.float32]) -> Codes:
    """Ties round up in magnitude (round half away from zero)."""
    return _round_by_rule(y, lambda lo: np.ones(lo.shape, np.bool_))


def ties_to_odd(y: npt.NDArray[np.float32]) -> Codes:
    """Ties go to the odd significand."""
    return _round_by_rule(y, lambda lo: lo % 2 == 0)


def nan_keeps_sign(y: npt.NDArray[np.float32]) -> Codes:
    """-NaN gives 0xFF; vllm.cpp drops the sign."""
    return encode(y, saturate=True, nan="keep-sign")


def nan_to_max(y: npt.NDArray[np.float32]) -> Codes:
    """NaN gives 0x7E (the upstream clamp's result) on the vllm.cpp kernel."""
    out = encode(y)
    out[np.isnan(y)] = 0x7E
    return out


def negative_zero_dropped(y: npt.NDArray[np.float32]) -> Codes:
    """-0 (and negative values rounding to zero) give +0."""
    out = encode(y)
    out[out == 0x80] = 0x00
    return out


def subnormals_flushed(y: npt.NDArray[np.float32]) -> Codes:
    """Results below the smallest normal flush to (signed) zero."""
    out = encode(y)
    out[(out & 0x7F) < 0x08] &= 0x80
    return out


def via_float16(y: npt.NDArray[np.float32]) -> Codes:
    """Double rounding: float32 -> float16 -> e4m3fn."""
    with np.errstate(over="ignore"):
        return encode(y.astype(np.float16))


def via_bfloat16(y: npt.NDArray[np.float32]) -> Codes:
    """Double rounding: float32 -> bfloat16 -> e4m3fn."""
    return encode(y.astype(ml_dtypes.bfloat16))


def bias_off_by_one(y: npt.NDArray[np.float32]) -> Codes:
    """The exponent field is computed with bias 8 instead of 7 (values halve)."""
    with np.errstate(over="ignore"):
        return encode(y * np.float32(0.5))


def clamp_after_round(y: npt.NDArray[np.float32]) -> Codes:
    """The clamp after the rounding: round without saturation, then clamp.

    Rounding first sends |y| >= 464 (and ±inf) to NaN; the upstream clamp
    ``fmaxf(-448, fminf(v, 448))`` then returns its non-NaN operand, 448. So
    negative overflow, -inf and NaN all give +448 (0x7E); in range nothing moves.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = decode(encode(y, saturate=False), "e4m3fn", np.float32)
    clamped = np.fmax(np.float32(-448.0), np.fmin(rounded, np.float32(448.0)))
    return encode(clamped.astype(np.float32))


def _shards_collapsed_with_min() -> QuantKernel:
    """K12: ``collapse_shard_scales`` with ``max`` swapped for ``min``, through its AST.

    The vllm.cpp kernel otherwise: the mutated scale module collapses the shard
    scales it is handed (G1's shard case), then forms the reciprocal.
    """
    tree, _ = parse_module("fp8lab.kernels.scale")
    collapse = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name == "collapse_shard_scales"
    )
    (site,) = [n for n in ast.walk(collapse) if isinstance(n, ast.Name) and n.id == "max"]
    site.id = "min"
    scale = compile_module(tree, "fp8lab_mutant_scale_shards_min")
    encoder = BUILTIN_KERNELS["vllm_cpp"].encoder
    return FunctionKernel(
        "shards_min",
        lambda x, s: encoder(widen_activation(x) * scale.reciprocal(scale.static_scale(s))),
    )


def _missing(x: np.ndarray, scale: Any) -> Codes:
    raise NotImplementedError("QuantFp8Static has no CPU registration (M0)")


def _f32tofp8_without_saturation() -> QuantKernel:
    """M3: both saturation points of the F32ToFp8 port removed, through its AST."""
    tree, _ = parse_module("fp8lab.kernels.f32tofp8")
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [st for st in body if not _is_saturation(st)]  # type: ignore[attr-defined]
    module = compile_module(tree, "fp8lab_mutant_f32tofp8_without_saturation")
    return StaticQuantKernel("M3", module.f32_to_fp8)


def _is_saturation(stmt: ast.stmt) -> bool:
    """``settle(..., sign | 0x7E)``: the early and the late saturation of F32ToFp8."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    args = stmt.value.args
    return len(args) == 2 and ast.unparse(args[1]) == "sign | 126"


QUANT_BUILDERS = {
    "M0": lambda: FunctionKernel("M0", _missing),
    "M1": lambda: FunctionKernel("M1", scale_ignored),
    "M2": lambda: FunctionKernel("M2", divide),
    "M3": _f32tofp8_without_saturation,
    "M4": lambda: FunctionKernel("M4", truncation),
    "half_away_from_zero": lambda: _kernel("half_away_from_zero", half_away_from_zero),
    "ties_to_odd": lambda: _kernel("ties_to_odd", ties_to_odd),
    "nan_keeps_sign": lambda: _kernel("nan_keeps_sign", nan_keeps_sign),
    "nan_to_max": lambda: _kernel("nan_to_max", nan_to_max),
    "negative_zero_dropped": lambda: _kernel("negative_zero_dropped", negative_zero_dropped),
    "subnormals_flushed": lambda: _kernel("subnormals_flushed", subnormals_flushed),
    "via_float16": lambda: _kernel("via_float16", via_float16),
    "via_bfloat16": lambda: _kernel("via_bfloat16", via_bfloat16),
    "bias_off_by_one": lambda: _kernel("bias_off_by_one", bias_off_by_one),
    "overflow_to_nan": lambda: FunctionKernel("overflow_to_nan", no_saturation),
    "clamp_after_round": lambda: _kernel("clamp_after_round", clamp_after_round),
    "shards_min": _shards_collapsed_with_min,
}


def g1_runner(kernel: QuantKernel, *, special_words: bool = True) -> GateResult:
    """G1 on a quant mutant: with the specials and the shard case, or the seed's G1 (neither)."""
    shards = G1_SHARD_SCALES if special_words else ()
    return run_g1(kernel, special_words=special_words, shard_scales=shards)
