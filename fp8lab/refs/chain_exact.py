"""The exact value of a chain, rounded once to e4m3fn: what rounding choices are measured against.

A recipe (``fp8lab.specs.chain_recipe``) rounds after most steps. The exact value
runs the same mathematics with no rounding at all,
``q = v / scale`` where ``v`` is the real-number chain output:

* rmsnorm: ``z = x (+ residual)``, ``v = z * w' / sqrt(sum(z**2) / H + eps)``,
  ``w' = w + 1`` for a Gemma weight;
* rmsnorm-gated: that times ``silu(gate)`` (``z = x``);
* silu-mul: ``v = silu(g) * up``, ``silu(g) = g / (1 + exp(-g))``;

and rounds ``q`` once, to nearest with ties to even, SATFINITE (magnitudes
above 448 give 448; OFP8 §4). The sign of a zero is the IEEE sign of the same
expression. Every element is first evaluated in float64 (at most about 20
roundings, and ``exp`` within 1 ulp: a relative error below 1e-14); an element
whose float64 ``|q|`` lies within a relative 1e-9 of a rounding midpoint is
decided again in ``decimal`` at 80 digits, then at 1000 (correctly rounded
``sqrt`` and ``exp``, General Decimal Arithmetic; a result within a relative
``10**(10 - digits)`` of the midpoint is undecided). A non-gated rmsnorm
element is then decided exactly, by comparing ``q**2`` with the midpoint's
square in Fractions (a tie goes to the even code). A gated or SiLU element
left undecided raises: its ``q`` is irrational unless 0, never a silent guess.
Rows with a non-finite input have no exact value and are marked undefined.
"""

from __future__ import annotations

import decimal
import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.exact_float import widen_bf16
from fp8lab.specs.chain_recipe import Chain
from fp8lab.specs.formats import FORMATS

__all__ = ["NEAR_MIDPOINT", "exact_chain_codes"]

NEAR_MIDPOINT = 1e-9  # relative distance below which float64 does not decide
_E4M3 = FORMATS["e4m3fn"]
_MAGS = [_E4M3.magnitude_value(i) for i in range(_E4M3.max_code + 1)]
_MIDS = [(a + b) / 2 for a, b in itertools.pairwise(_MAGS)]
_MIDS64 = np.array([float(m) for m in _MIDS], np.float64)  # dyadic: exact in float64
_CTX = decimal.Context(prec=80, Emax=10**9, Emin=-(10**9))
_PRECISIONS = (80, 1000)  # digits; undecided within 10 digits of the precision


def _f64(a: Any) -> npt.NDArray[np.float64]:
    arr = np.asarray(a)
    if arr.dtype.name != "bfloat16" or arr.dtype.itemsize != 2:
        raise TypeError(f"want a bfloat16 array, got {arr.dtype}")
    return widen_bf16(arr.view(np.uint16)).astype(np.float64)


def _dec(v: Fraction | float) -> decimal.Decimal:
    """``v`` rounded to the current context (exact when it is a float)."""
    f = Fraction(v)
    return decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)


def _silu64(g: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(over="ignore"):
        return g / (1.0 + np.exp(-g))


def _silu_dec(g: float) -> decimal.Decimal:
    d = _dec(g)
    return d / (1 + (-d).exp())


class _Rms:
    """The rmsnorm quantities of one case: float64 arrays, exact row means on demand."""

    def __init__(self, chain: Chain, inp: dict[str, Any]) -> None:
        self.x = _f64(inp["x"])
        add = chain.step("add_residual") is not None and inp.get("residual") is not None
        self.r = _f64(inp["residual"]) if add else None
        self.z = self.x + self.r if self.r is not None else self.x
        weight = chain.step("weight")
        self.gemma = weight is not None and weight.gemma
        self.w_raw = _f64(inp["weight"])
        self.w = self.w_raw + (1.0 if self.gemma else 0.0)
        self.eps = float(inp["eps"])
        self.h = self.z.shape[-1]
        self._m: dict[int, Fraction] = {}

    def v64(self) -> npt.NDArray[np.float64]:
        sumsq = np.array([math.fsum(row) for row in self.z * self.z]).reshape(-1, 1)
        v: npt.NDArray[np.float64] = self.z * self.w / np.sqrt(sumsq / self.h + self.eps)
        return v

    def z_exact(self, i: int, j: int) -> Fraction:
        z = Fraction(float(self.x[i, j]))
        return z + Fraction(float(self.r[i, j])) if self.r is not None else z

    def w_exact(self, j: int) -> Fraction:
        return Fraction(float(self.w_raw[j])) + (1 if self.gemma else 0)

    def mean(self, i: int) -> Fraction:
        if i not in self._m:
            total = sum(self.z_exact(i, j) ** 2 for j in range(self.h))
            self._m[i] = total / self.h + Fraction(self.eps)
        return self._m[i]


def _round_exact(q: decimal.Decimal, tie_square: Fraction | None) -> int:
    """The e4m3fn magnitude index of ``|q|`` (context precision), or of ``sqrt(tie_square)``."""
    a = abs(q)
    undecided = decimal.Decimal(10) ** (10 - decimal.getcontext().prec)
    k = int(np.searchsorted(_MIDS64, float(a)))
    for m in (k - 1, k, k + 1):  # the float rounding of a may sit next to the midpoint
        if 0 <= m < len(_MIDS) and abs(a - _dec(_MIDS[m])) <= undecided * a:
            if tie_square is None:
                raise ArithmeticError(f"|q| = {a} is undecided at midpoint {_MIDS[m]}")
            diff = tie_square - _MIDS[m] ** 2
            return m + 1 if diff > 0 or (diff == 0 and m % 2 == 1) else m
    return sum(1 for mid in _MIDS if _dec(mid) < a)


def exact_chain_codes(
    chain: Chain, inputs: dict[str, Any]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """The e4m3fn codes of the exact ``v / scale`` for ``chain`` on ``inputs``, rounded once.

    Args:
        chain: the recipe; only its chain kind, residual step and Gemma weight matter.
        inputs: as :func:`fp8lab.refs.chain_ref.reference_chain` takes them.

    Returns:
        The codes and, per output word, whether the exact value is defined
        (every input of its row finite).

    Raises:
        ArithmeticError: if a gated or SiLU element cannot be decided at 1000 digits.
    """
    scale = float(inputs["scale"])
    rms = None
    arrays: dict[str, npt.NDArray[np.float64]] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        if chain.chain == "silu-mul":
            xgu = _f64(inputs["x_gate_up"])
            d = xgu.shape[-1] // 2
            g = arrays["g"] = xgu[..., :d]
            up = arrays["up"] = xgu[..., d:]
            q = _silu64(g) * up / scale
            defined = np.isfinite(xgu).all(axis=-1, keepdims=True) & np.ones(q.shape, bool)
        else:
            rms = _Rms(chain, inputs)
            q = rms.v64() / scale
            parts = [rms.x, *([rms.r] if rms.r is not None else [])]
            if chain.chain == "rmsnorm-gated":
                gate = arrays["gate"] = _f64(inputs["gate"])
                q = q * _silu64(gate)
                parts.append(gate)
            ok = np.logical_and.reduce([np.isfinite(p).all(axis=-1) for p in parts])
            defined = ok[:, None] & np.isfinite(rms.w).all() & np.ones(q.shape, bool)
    defined &= np.isfinite(q) & math.isfinite(scale)
    a = np.where(defined, np.abs(q), 0.0)
    index = np.searchsorted(_MIDS64, a)
    lo = np.abs(a - _MIDS64[np.maximum(index - 1, 0)])
    hi = np.abs(_MIDS64[np.minimum(index, len(_MIDS) - 1)] - a)
    near = defined & (np.minimum(lo, hi) <= NEAR_MIDPOINT * a)
    for i, j in zip(*np.nonzero(near), strict=True):
        index[i, j] = _decide(chain, arrays, rms, int(i), int(j), scale)
    codes = index.astype(np.uint8) | np.where(np.signbit(q), 0x80, 0).astype(np.uint8)
    return np.where(defined, codes, 0).astype(np.uint8), defined


def _decide(
    chain: Chain,
    arrays: dict[str, npt.NDArray[np.float64]],
    rms: _Rms | None,
    i: int,
    j: int,
    scale: float,
) -> int:
    """One element near a midpoint: at 80 digits, then 1000; rmsnorm ties exactly."""
    for prec in _PRECISIONS:
        with decimal.localcontext(_CTX) as ctx:
            ctx.prec = prec
            try:
                return _decide_at(chain, arrays, rms, i, j, scale)
            except ArithmeticError:
                if prec == _PRECISIONS[-1]:
                    raise
    raise AssertionError("unreachable")


def _decide_at(
    chain: Chain,
    arrays: dict[str, npt.NDArray[np.float64]],
    rms: _Rms | None,
    i: int,
    j: int,
    scale: float,
) -> int:
    s = _dec(scale)
    if rms is None:
        g, up = float(arrays["g"][i, j]), float(arrays["up"][i, j])
        return _round_exact(_silu_dec(g) * _dec(up) / s, None)
    z, w, m = rms.z_exact(i, j), rms.w_exact(j), rms.mean(i)
    v = _dec(z * w) / _dec(m).sqrt()
    if chain.chain == "rmsnorm-gated":
        return _round_exact(v * _silu_dec(float(arrays["gate"][i, j])) / s, None)
    return _round_exact(v / s, (z * w) ** 2 / (m * Fraction(scale) ** 2))
