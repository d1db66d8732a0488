"""Fused-chain kernels with one planted defect each, and the recipe each one claims.

Each is a production-style port (``fp8lab.kernels.chain``) with one statement
changed; each exposes ``trace`` so GF can localise the defect to its step.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.kernels.chain import ChainPort, exp_f64, rsqrt_f64, sumsq_sequential
from fp8lab.kernels.quant import quant_static, quant_static_upstream

__all__ = ["DEFECTS", "eps_outside_rmsnorm", "ordinary_rmsnorm", "ordinary_silu_mul"]

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32
Arr = Any


def _cpp_rms(eps_outside: bool = False, pairwise: bool = False) -> Any:
    def body(x: Arr, residual: Arr, w: Arr, scale: Any, eps: float, t: dict[str, Arr]) -> Arr:
        v = x.astype(F32)
        if residual is not None:
            t["residual_out"] = vb = (v + residual.astype(F32)).astype(BF16)
            t["add_residual"] = v = vb.astype(F32)
        if pairwise:  # numpy's pairwise summation, not the declared sequential order
            t["square_reduce"] = sumsq = np.sum((v * v).astype(F32), axis=-1, dtype=F32)
        else:
            t["square_reduce"] = sumsq = sumsq_sequential(v)
        if eps_outside:  # 1 / (sqrt(mean) + eps)
            t["mean_eps"] = mean = (sumsq / F32(v.shape[-1])).astype(F32)
            t["rsqrt"] = inv = (F32(1) / (np.sqrt(mean) + F32(eps))).astype(F32)
        else:
            t["mean_eps"] = m = (sumsq / F32(v.shape[-1]) + F32(eps)).astype(F32)
            t["rsqrt"] = inv = (F32(1) / np.sqrt(m)).astype(F32)
        t["normalize"] = n = (v * inv[..., None]).astype(F32)
        t["weight"] = out = (n * w.astype(F32)).astype(BF16)
        return quant_static(out, scale)

    return body


def _native(bf16_variance: bool = False, f32_weight: bool = False) -> Any:
    def body(x: Arr, residual: Arr, w: Arr, scale: Any, eps: float, t: dict[str, Arr]) -> Arr:
        z = x.astype(F32)
        if residual is not None:
            t["add_residual"] = z = (z + residual.astype(F32)).astype(F32)
            t["residual_out"] = z.astype(BF16)
        zv = z.astype(BF16).astype(F32) if bf16_variance else z  # vLLM issue #52104
        t["square_reduce"] = var = sumsq_sequential(zv)
        t["mean_eps"] = m = (var / F32(z.shape[-1]) + F32(eps)).astype(F32)
        t["rsqrt"] = r = rsqrt_f64(m)
        n = (z * r[..., None]).astype(F32)
        t["normalize"] = n if f32_weight else (n := n.astype(BF16).astype(F32))  # vLLM issue #49616
        t["weight"] = out = (n * w.astype(F32)).astype(BF16)
        return quant_static(out, scale)

    return body


def _cuda_moved_round(x: Arr, residual: Arr, w: Arr, scale: Any, eps: float, t: dict) -> Arr:
    z = x.astype(F32)
    if residual is not None:
        t["residual_out"] = zb = (z + residual.astype(F32)).astype(BF16)
        t["add_residual"] = z = zb.astype(F32)
    t["square_reduce"] = var = sumsq_sequential(z)
    t["mean_eps"] = m = (var / F32(z.shape[-1]) + F32(eps)).astype(F32)
    t["rsqrt"] = s = rsqrt_f64(m)
    t["normalize"] = n = (z * s[..., None]).astype(F32)  # moved: no bf16 store here
    t["weight"] = out = (n * w.astype(F32)).astype(BF16)
    return quant_static_upstream(out, scale)


def _gated_before(
    x: Arr, residual: Arr, w: Arr, gate: Arr, scale: Any, eps: float, t: dict[str, Arr]
) -> Arr:
    g = gate.astype(F32)
    act = (g / (F32(1) + exp_f64(-g))).astype(F32)
    v = (x.astype(F32) * act).astype(F32)  # the gate before the norm
    t["square_reduce"] = sumsq = sumsq_sequential(v)
    t["mean_eps"] = m = (sumsq / F32(v.shape[-1]) + F32(eps)).astype(F32)
    t["rsqrt"] = inv = (F32(1) / np.sqrt(m)).astype(F32)
    t["normalize"] = n = (v * inv[..., None]).astype(F32)
    t["weight"] = out = (n * w.astype(F32)).astype(BF16)
    return quant_static(out, scale)


def _silu(
    fast_exp: bool = False, drop_bf16: bool = False, cuda: bool = False, f32_product: bool = False
) -> Any:
    def body(x: Arr, scale: Any, t: dict[str, Arr]) -> Arr:
        d = x.shape[-1] // 2
        g, up = x[..., :d].astype(F32), x[..., d:].astype(F32)
        if fast_exp:  # __expf's structure: ex2(fl32(-g * log2e))
            arg = ((-g) * F32(1.4426950408889634)).astype(F32).astype(np.float64)
            with np.errstate(over="ignore"):
                e = np.exp2(arg).astype(F32)
        else:
            e = exp_f64(-g)
        a = (g / (F32(1) + e)).astype(F32)
        if cuda and not drop_bf16:
            a = a.astype(BF16).astype(F32)
        t["silu"] = a
        t["mul_up"] = p = (a * up).astype(F32 if f32_product else BF16)
        return (quant_static_upstream if cuda or f32_product else quant_static)(p, scale)

    return body


CPP_RMS = "vllm-cpp-standalone-rmsnorm-fp8"
NATIVE = "vllm-native-rmsnorm-fp8"
CUDA_RMS = "vllm-cuda-fused-add-rmsnorm-static-fp8"
CPP_SILU = "vllm-cpp-standalone-silu-mul-fp8"
CUDA_SILU = "vllm-cuda-silu-and-mul-quant-fp8"
GATED = "vllm-cpp-standalone-rmsnorm-gated-fp8"

# name -> (kernel, declared recipe, the step GF must name first)
DEFECTS: dict[str, tuple[ChainPort, str, str]] = {
    "rounding-point-moved": (
        ChainPort("moved", "rmsnorm", _cuda_moved_round),
        CUDA_RMS,
        "normalize",
    ),
    "eps-outside-sqrt": (ChainPort("eps", "rmsnorm", _cpp_rms(eps_outside=True)), CPP_RMS, "rsqrt"),
    "variance-over-bf16": (
        ChainPort("bf16var", "rmsnorm", _native(bf16_variance=True)),
        NATIVE,
        "square_reduce",
    ),
    "weight-in-f32": (ChainPort("f32w", "rmsnorm", _native(f32_weight=True)), NATIVE, "normalize"),
    "gate-before-norm": (
        ChainPort("gatefirst", "rmsnorm-gated", _gated_before),
        GATED,
        "square_reduce",
    ),
    "fast-exp-declared-expf": (
        ChainPort("fastexp", "silu-mul", _silu(fast_exp=True)),
        CPP_SILU,
        "silu",
    ),
    "fast-exp-in-f32-product-chain": (
        ChainPort("fastexp-f32", "silu-mul", _silu(fast_exp=True, f32_product=True)),
        "expf-silu-mul-fp8",
        "silu",
    ),
    "silu-bf16-round-dropped": (
        ChainPort("nosilubf16", "silu-mul", _silu(cuda=True, drop_bf16=True)),
        CUDA_SILU,
        "silu",
    ),
    "pairwise-reduction": (
        ChainPort("pairwise", "rmsnorm", _cpp_rms(pairwise=True)),
        CPP_RMS,
        "square_reduce",
    ),
}


def ordinary_rmsnorm(x: Arr, residual: Arr, w: Arr, scale: Any, eps: float) -> Any:
    """vllm.cpp's standalone sequence as a plain function (no trace), for the CLI tests."""
    t: dict[str, Arr] = {}
    codes = _cpp_rms()(x, residual, w, scale, eps, t)
    return codes, t.get("residual_out")


def ordinary_silu_mul(x: Arr, scale: Any) -> Any:
    """vllm.cpp's silu-mul standalone sequence as a plain function."""
    return _silu()(x, scale, {})


def eps_outside_rmsnorm(x: Arr, residual: Arr, w: Arr, scale: Any, eps: float) -> Any:
    """The eps-outside-sqrt defect as a plain function (no trace), for the CLI tests."""
    t: dict[str, Arr] = {}
    codes = _cpp_rms(eps_outside=True)(x, residual, w, scale, eps, t)
    return codes, t.get("residual_out")


def defect_table() -> str:
    """The README's planted-defect table: each defect with and without its trace."""
    from fp8lab.gates.gf import run_gf

    rows = []
    for name, (kernel, recipe, _) in DEFECTS.items():
        traced = run_gf(kernel, chain=kernel.chain, recipe=recipe)

        def plain(*args: Any, _k: Any = kernel) -> Any:
            return _k(*args)

        bare = run_gf(plain, chain=kernel.chain, recipe=recipe)
        rows.append(
            f"| {name} | `{recipe}` | {traced.assertions_failed} of {traced.assertions} | "
            f"{traced.measured['first_failing_step']} | {bare.assertions_failed} of "
            f"{bare.assertions} ({bare.mismatches} bytes) |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(defect_table())
