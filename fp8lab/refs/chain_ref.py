"""Reference fused chains, step by step, from a recipe's declaration.

Each IEEE step (add, multiply, divide, sqrt in float32) is one numpy float32
operation, which IEEE 754 rounds once; a bf16 store is
:func:`~fp8lab.refs.exact_float.round_f32_to_bf16`; ``rsqrt`` and ``exp`` are
correctly rounded (:mod:`fp8lab.refs.exact_float`) unless the step names the
``div-sqrt`` or ``exp2-f32-product`` variant; the sequential reduction is an
explicit loop over columns; the fp8 terminal is the scan encoder
(SATFINITE) of ``fl32(v * fl32(1/s))`` with NaN given the step's ``nan_code``.
It reads the recipe (``fp8lab.specs.chain_recipe``, standard-library data) and
never imports a kernel or a port.

:func:`reference_chain` returns every step's output, keyed by step name, so a
gate can check each prefix of the chain.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.exact_float import exp2_cr, exp_cr, round_f32_to_bf16, rsqrt_cr, widen_bf16
from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.specs.chain_recipe import Chain, Step
from fp8lab.specs.formats import FORMATS

__all__ = ["ChainInputs", "reference_chain"]

_E4M3FN = FORMATS["e4m3fn"]
_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)
_F = np.float32
_LOG2E = _F(1.4426950408889634)  # fl32(log2 e)

ChainInputs = dict[str, Any]


def _bf16(a: Any) -> npt.NDArray[np.float32]:
    arr = np.asarray(a)
    if arr.dtype.name != "bfloat16" or arr.dtype.itemsize != 2:
        raise TypeError(f"want a bfloat16 array, got {arr.dtype}")
    return widen_bf16(arr.view(np.uint16))


def _round(v: npt.NDArray[np.float32], step: Step) -> npt.NDArray[np.float32]:
    """The roundings after the float32 one (which numpy already did)."""
    if not step.rounds or step.rounds[0] != "f32" or set(step.rounds[1:]) - {"bf16"}:
        raise ValueError(f"{step.op}: unsupported rounding sequence {step.rounds}")
    return round_f32_to_bf16(v) if step.rounds[-1] == "bf16" else v.astype(_F)


def _elementwise(func: Any, v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    flat = v.reshape(-1)
    uniq, where = np.unique(flat.view(np.uint32), return_inverse=True)
    table = np.array([func(float(u)) for u in uniq.view(np.float32)], dtype=_F)
    return table[where].reshape(v.shape)


def _exp(v: npt.NDArray[np.float32], variant: str) -> npt.NDArray[np.float32]:
    if variant == "cr":
        return _elementwise(exp_cr, v)
    if variant == "exp2-f32-product":
        with np.errstate(over="ignore", invalid="ignore"):
            return _elementwise(exp2_cr, (v * _LOG2E).astype(_F))
    raise ValueError(f"unknown exp variant {variant!r}")


def _silu(g: npt.NDArray[np.float32], variant: str) -> npt.NDArray[np.float32]:
    e = _exp((-g).astype(_F), variant)
    return (g / (_F(1) + e)).astype(_F)


def _rsqrt(m: npt.NDArray[np.float32], variant: str) -> npt.NDArray[np.float32]:
    if variant == "cr":
        return _elementwise(rsqrt_cr, m)
    if variant == "div-sqrt":
        return (_F(1) / np.sqrt(m)).astype(_F)
    raise ValueError(f"unknown rsqrt variant {variant!r}")


def _quant(v: npt.NDArray[np.float32], scale: float, step: Step) -> npt.NDArray[np.uint8]:
    inv = _F(1) / _F(scale)
    y = (v * inv).astype(_F)
    codes = scan_encode(y, _E4M3FN, _SATFINITE)
    codes[np.isnan(y)] = step.nan_code
    return codes


def _run(chain: Chain, inp: ChainInputs) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    if chain.chain == "silu-mul":
        xg = _bf16(inp["x_gate_up"])
        d = xg.shape[-1] // 2
        cur, up = xg[..., :d], xg[..., d:]
    else:
        cur = _bf16(inp["x"])
    z = cur
    r: npt.NDArray[np.float32] = np.zeros(0, _F)
    for step in chain.steps:
        if step.op == "add_residual":
            if inp.get("residual") is None:
                continue
            s = (cur + _bf16(inp["residual"])).astype(_F)
            out["residual_out"] = round_f32_to_bf16(s)
            z = cur = _round(s, step)
        elif step.op == "square_reduce":
            if step.order != "sequential":
                raise ValueError(f"unknown reduction order {step.order!r}")
            acc = np.zeros(z.shape[:-1], _F)
            for j in range(z.shape[-1]):
                acc = (acc + (z[..., j] * z[..., j]).astype(_F)).astype(_F)
            cur = acc
        elif step.op == "mean_eps":
            cur = ((cur / _F(z.shape[-1])).astype(_F) + _F(inp["eps"])).astype(_F)
        elif step.op == "rsqrt":
            cur = r = _rsqrt(cur, step.variant)
        elif step.op == "normalize":
            cur = _round((z * r[..., None]).astype(_F), step)
        elif step.op == "weight":
            w = _bf16(inp["weight"])
            if step.gemma:
                w = (w + _F(1)).astype(_F)
            cur = _round((cur * w).astype(_F), step)
        elif step.op == "gate_silu":
            cur = _round((cur * _silu(_bf16(inp["gate"]), step.variant)).astype(_F), step)
        elif step.op == "silu":
            cur = _round(_silu(cur, step.variant), step)
        elif step.op == "mul_up":
            cur = _round((cur * up).astype(_F), step)
        elif step.op == "quant":
            out["quant"] = _quant(cur, inp["scale"], step)
            continue
        else:
            raise ValueError(f"unknown step {step.op!r}")
        out[step.op] = cur
    return out


def reference_chain(chain: Chain, inputs: ChainInputs) -> dict[str, np.ndarray]:
    """Every step's output of ``chain`` on ``inputs``.

    Args:
        chain: the recipe.
        inputs: bf16 arrays ``x``, ``residual`` (or None), ``weight``, ``gate``
            (rmsnorm-gated) or ``x_gate_up`` (silu-mul), and floats ``scale`` and ``eps``.

    Returns:
        Step name -> float32 values (``quant``: uint8 codes), plus
        ``residual_out`` (float32 holding bf16 values) when a residual was added.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _run(chain, inputs)
