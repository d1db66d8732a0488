"""Production-style numpy ports of each recipe, written from the source code, not the refs.

Each port mirrors its implementation's statement order with ml_dtypes bf16
stores and float32 numpy arithmetic: ``np.cumsum(..., dtype=float32)`` is the
sequential row reduction, exp and 1/sqrt are evaluated in float64 and stored
to float32 (the correctly rounded value wherever float64 is not within about
2**-29 of a float32 midpoint; GF checks them bitwise against the exact
references), and the fp8 terminal is ``fp8lab.kernels`` static quant.

Signatures are GF's (docs/gates/gf.md):

* rmsnorm: ``port(x, residual_or_None, weight, scale, eps) -> (codes, residual_out_or_None)``
* rmsnorm-gated: ``port(x, residual_or_None, weight, gate, scale, eps) -> (codes, None)``
* silu-mul: ``port(x_gate_up, scale) -> codes``

Every port also has ``trace(...)``: the same arguments, returning each step's
output by step name, which GF checks as the chain's prefixes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.kernels.quant import quant_static, quant_static_upstream

__all__ = ["PORTS", "ChainPort", "exp_f64", "rsqrt_f64", "sumsq_sequential"]

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32
Arr = npt.NDArray[Any]
Trace = dict[str, Arr]


def exp_f64(v: Arr) -> Arr:
    """float32(exp(float64(v)))."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(v, np.float64)).astype(F32)


def rsqrt_f64(m: Arr) -> Arr:
    """float32(1 / sqrt(float64(m)))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(np.asarray(m, np.float64))).astype(F32)


def sumsq_sequential(z: Arr) -> Arr:
    """sum_j fl32(z_j * z_j), j = 0..H-1, one float32 accumulator per row."""
    return np.cumsum((z * z).astype(F32), axis=-1, dtype=F32)[..., -1]


def _mean_eps(sumsq: Arr, h: int, eps: float) -> Arr:
    return (sumsq / F32(h) + F32(eps)).astype(F32)


def _cuda_fused_add(x: Arr, residual: Arr | None, w: Arr, scale: Any, eps: float, t: Trace) -> Arr:
    # csrc/layernorm_quant_kernels.cu: scalar_t z = input; z += residual; x = (float)z
    z = x.astype(F32)
    if residual is not None:
        t["residual_out"] = zb = (z + residual.astype(F32)).astype(BF16)
        t["add_residual"] = z = zb.astype(F32)
    t["square_reduce"] = var = sumsq_sequential(z)
    t["mean_eps"] = m = _mean_eps(var, z.shape[-1], eps)
    t["rsqrt"] = s = rsqrt_f64(m)
    t["normalize"] = n = (z * s[..., None]).astype(BF16).astype(F32)
    t["weight"] = out = (n * w.astype(F32)).astype(BF16)
    return quant_static_upstream(out, scale)


def _native(f32_weight: bool) -> Callable[..., Arr]:
    def port(x: Arr, residual: Arr | None, w: Arr, scale: Any, eps: float, t: Trace) -> Arr:
        # layernorm.py forward_static: x = x.float() + residual; residual = x.to(dtype)
        z = x.astype(F32)
        if residual is not None:
            t["add_residual"] = z = (z + residual.astype(F32)).astype(F32)
            t["residual_out"] = z.astype(BF16)
        t["square_reduce"] = var = sumsq_sequential(z)
        t["mean_eps"] = m = _mean_eps(var, z.shape[-1], eps)
        t["rsqrt"] = r = rsqrt_f64(m)
        n = (z * r[..., None]).astype(F32)
        t["normalize"] = n if f32_weight else (n := n.astype(BF16).astype(F32))
        t["weight"] = out = (n * w.astype(F32)).astype(BF16)
        return quant_static(out, scale)

    return port


def _vllm_cpp(gemma: bool) -> Callable[..., Arr]:
    def port(x: Arr, residual: Arr | None, w: Arr, scale: Any, eps: float, t: Trace) -> Arr:
        # cpu_ops.cpp RmsNormKernel: v += residual (f32); StoreF32(residual, v); re-read
        v = x.astype(F32)
        if residual is not None:
            t["residual_out"] = vb = (v + residual.astype(F32)).astype(BF16)
            t["add_residual"] = v = vb.astype(F32)
        t["square_reduce"] = sumsq = sumsq_sequential(v)
        t["mean_eps"] = m = _mean_eps(sumsq, v.shape[-1], eps)
        t["rsqrt"] = inv = (F32(1) / np.sqrt(m)).astype(F32)
        wj = w.astype(F32)
        if gemma:
            wj = (wj + F32(1)).astype(F32)
        t["normalize"] = n = (v * inv[..., None]).astype(F32)
        t["weight"] = out = (n * wj).astype(BF16)
        return quant_static(out, scale)

    return port


def _silu_f32(g: Arr) -> Arr:
    return (g / (F32(1) + exp_f64(-g))).astype(F32)


def _vllm_cpp_gated(
    x: Arr, residual: Arr | None, w: Arr, gate: Arr, scale: Any, eps: float, t: Trace
) -> Arr:
    # cpu_ops.cpp RmsNormGatedKernel: x * inv * w * Silu(z), stored to bf16
    v = x.astype(F32)
    t["square_reduce"] = sumsq = sumsq_sequential(v)
    t["mean_eps"] = m = _mean_eps(sumsq, v.shape[-1], eps)
    t["rsqrt"] = inv = (F32(1) / np.sqrt(m)).astype(F32)
    t["normalize"] = n = (v * inv[..., None]).astype(F32)
    t["weight"] = nw = (n * w.astype(F32)).astype(F32)
    t["gate_silu"] = out = (nw * _silu_f32(gate.astype(F32))).astype(BF16)
    return quant_static(out, scale)


def _split(x: Arr) -> tuple[Arr, Arr]:
    d = x.shape[-1] // 2
    return x[..., :d].astype(F32), x[..., d:].astype(F32)


def _cuda_silu_mul(x: Arr, scale: Any, t: Trace) -> Arr:
    # activation_kernels.cu: (T)(x / (1 + expf(-x))) * y in scalar_t
    g, up = _split(x)
    t["silu"] = a = _silu_f32(g).astype(BF16).astype(F32)
    t["mul_up"] = p = (a * up).astype(BF16)
    return quant_static_upstream(p, scale)


def _cpp_silu_mul(x: Arr, scale: Any, t: Trace) -> Arr:
    # cpu_ops.cpp MoeSiluMulKernel: silu = g / (1 + exp(-g)); StoreF32(out, silu * up)
    g, up = _split(x)
    t["silu"] = a = _silu_f32(g)
    t["mul_up"] = p = (a * up).astype(BF16)
    return quant_static(p, scale)


def _fast_exp_silu_mul(x: Arr, scale: Any, t: Trace) -> Arr:
    # __expf(-g) = ex2(fl32(-g * log2e)); ex2 modelled correctly rounded (float64 here)
    g, up = _split(x)
    with np.errstate(over="ignore"):
        e = np.exp2(((-g) * F32(1.4426950408889634)).astype(F32).astype(np.float64)).astype(F32)
    t["silu"] = a = (g / (F32(1) + e)).astype(F32)
    t["mul_up"] = p = (a * up).astype(F32)
    return quant_static_upstream(p, scale)


def _expf_silu_mul(x: Arr, scale: Any, t: Trace) -> Arr:
    # the fast-exp chain with expf: silu and the product kept in float32
    g, up = _split(x)
    t["silu"] = a = _silu_f32(g)
    t["mul_up"] = p = (a * up).astype(F32)
    return quant_static_upstream(p, scale)


@dataclass(frozen=True)
class ChainPort:
    """A port as a GF kernel: call it with GF's signature, or ``trace`` it."""

    name: str
    chain: str
    body: Callable[..., Arr]

    def trace(self, *args: Any) -> Trace:
        """Each step's output by step name (``quant``: the codes)."""
        t: Trace = {}
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t["quant"] = self.body(*args, t)
        return t

    def __call__(self, *args: Any) -> Any:
        """GF's signature for ``self.chain``."""
        t = self.trace(*args)
        if self.chain == "silu-mul":
            return t["quant"]
        return t["quant"], t.get("residual_out")


PORTS: dict[str, ChainPort] = {
    p.name: p
    for p in (
        ChainPort("vllm-cuda-fused-add-rmsnorm-static-fp8", "rmsnorm", _cuda_fused_add),
        ChainPort("vllm-native-rmsnorm-fp8", "rmsnorm", _native(False)),
        ChainPort("vllm-native-rmsnorm-f32-weight-fp8", "rmsnorm", _native(True)),
        ChainPort("vllm-cpp-standalone-rmsnorm-fp8", "rmsnorm", _vllm_cpp(False)),
        ChainPort("vllm-cpp-standalone-gemma-rmsnorm-fp8", "rmsnorm", _vllm_cpp(True)),
        ChainPort("vllm-cpp-standalone-rmsnorm-gated-fp8", "rmsnorm-gated", _vllm_cpp_gated),
        ChainPort("vllm-cuda-silu-and-mul-quant-fp8", "silu-mul", _cuda_silu_mul),
        ChainPort("vllm-cpp-standalone-silu-mul-fp8", "silu-mul", _cpp_silu_mul),
        ChainPort("fast-exp-silu-mul-fp8", "silu-mul", _fast_exp_silu_mul),
        ChainPort("expf-silu-mul-fp8", "silu-mul", _expf_silu_mul),
    )
}
