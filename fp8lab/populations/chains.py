"""Seeded input populations built for fused chains.

Every population is a list of :class:`ChainCase`: bf16 inputs, a static
scale and eps, and per-row labels. The row kinds:

* ``residual-tie``: ``x + residual`` lands exactly on a bf16 midpoint
  (``residual = +-(2j+1) ulp(x) / 2``), so a bf16 round before the variance
  moves the sum.
* ``e4m3-tie``: rows of equal magnitude ``2**3`` (mean ``64``, eps absorbed, so
  ``x * r = +-1`` exactly) against weights ``bf16(m * s)`` for e4m3 midpoints
  ``m``: after the weight and the scale the value is an e4m3 tie (exactly, for
  a power-of-two scale).
* ``tiny`` / ``huge`` / ``zero``: squares that underflow, a sum that
  overflows, an all-zero row; ``eps-scale``: a mean square near eps (1e-6),
  where eps inside or outside the square root matters.
* ``reduction-order`` (one extra case per scale, ``ORDER_HIDDEN`` columns): a large
  first element, then elements whose squares are each below half an ulp of the
  running float32 sum, so a sequential sum drops them and a pairwise one does not.
* ``nonfinite``: a NaN, a +inf or a -inf in the row.
* ``realistic``: Student-t (3 degrees of freedom) activations with outlier
  channels 30x larger (the heavy-tailed shape of LLM activations).

For silu-mul the rows are: ``silu-sweep`` (every bf16 gate with
``2**-8 <= |g| < 2**8``), ``e4m3-tie`` (gate 32, where silu is exactly 32 in
float32, times ``up = bf16(m * s / 32)``), ``nonfinite`` and ``realistic``;
plus one case per designed scale of ``fp8lab.populations.exp_design`` whose
``fast-exp-split`` row holds (gate, up) pairs on which a fast exp moves the
fp8 byte of a float32-product chain or of a bf16-stored one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from fp8lab.populations.exp_design import FAST_EXP_BF16_SPLITS, FAST_EXP_SPLITS

__all__ = [
    "CHAIN_SCALES",
    "CHAIN_SEED",
    "ChainCase",
    "chain_population",
    "e4m3_midpoints",
]

CHAIN_SEED = 20261203
CHAIN_SCALES = (1.0, 0.0625, 0.13, 0.77)
CHAIN_EPS = 1e-6
HIDDEN = 256
ORDER_HIDDEN = 4096
BF16 = np.dtype(ml_dtypes.bfloat16)


@dataclass(frozen=True)
class ChainCase:
    """One GF case: its inputs (bf16 arrays, ``scale``, ``eps``) and row labels."""

    name: str
    inputs: dict[str, Any] = field(hash=False)
    labels: tuple[str, ...] = ()


def e4m3_midpoints() -> npt.NDArray[np.float64]:
    """The positive midpoints between consecutive finite e4m3fn values (ml_dtypes decode)."""
    vals = np.arange(0x00, 0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    mids: npt.NDArray[np.float64] = (vals[:-1] + vals[1:]) / 2
    return mids


def _bf(a: Any) -> npt.NDArray[Any]:
    return np.asarray(a, np.float32).astype(BF16)


def _ulp_bf16(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    e = np.floor(np.log2(np.abs(x)))
    ulp: npt.NDArray[np.float32] = np.exp2(e - 7).astype(np.float32)
    return ulp


def _realistic(rng: np.random.Generator, rows: int, h: int) -> npt.NDArray[np.float32]:
    x = rng.standard_t(3, size=(rows, h)) * 0.5
    x[:, rng.choice(h, size=4, replace=False)] *= 30
    return x.astype(np.float32)


def _rms_rows(rng: np.random.Generator, h: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rows: list[np.ndarray] = []
    res: list[np.ndarray] = []
    labels: list[str] = []

    def add(label: str, x: Any, r: Any) -> None:
        rows.append(np.asarray(x, np.float32))
        res.append(np.asarray(r, np.float32))
        labels.append(label)

    for _ in range(8):
        x = _bf(rng.standard_normal(h) * 2).astype(np.float32)
        x[x == 0] = 1.0
        odd = rng.choice([1, 3, 5, 7], size=h) * rng.choice([-1, 1], size=h)
        add("residual-tie", x, odd * _ulp_bf16(x) / 2)
    for _ in range(4):
        add("e4m3-tie", rng.choice([-8.0, 8.0], size=h), np.zeros(h))
    add("tiny", np.full(h, 2.0**-120) * rng.choice([-1, 1], size=h), np.zeros(h))
    for _ in range(4):
        add("eps-scale", rng.standard_normal(h) * 1e-3, np.zeros(h))
    add("huge", np.full(h, 2.0**100), np.zeros(h))
    add("huge", rng.standard_normal(h) * 2.0**62, rng.standard_normal(h) * 2.0**60)
    add("zero", np.zeros(h), np.zeros(h))
    for special in (np.nan, np.inf, -np.inf):
        row = rng.standard_normal(h)
        row[rng.integers(h)] = special
        add("nonfinite", row, rng.standard_normal(h))
    real = _realistic(rng, 12, h)
    real_r = _realistic(rng, 12, h)
    for i in range(12):
        add("realistic", real[i], real_r[i])
    return np.stack(rows), np.stack(res), labels


def _tie_weights(rng: np.random.Generator, h: int, scale: float) -> npt.NDArray[Any]:
    mids = e4m3_midpoints()
    w = rng.normal(1.0, 0.1, size=h)
    half = h // 2
    w[:half] = rng.choice(mids[mids <= 64], size=half) * scale
    return _bf(w)


def _silu_rows(rng: np.random.Generator, scale: float) -> tuple[np.ndarray, list[str]]:
    mags = np.arange(0x3B80, 0x4380, dtype=np.uint16)  # bf16 2**-8 .. just below 2**8
    sweep = np.concatenate([mags, mags | 0x8000]).view(BF16).astype(np.float32)
    d = HIDDEN
    sweep = np.concatenate([sweep, np.ones((-sweep.size) % d, np.float32)])
    gates = [sweep.reshape(-1, d)]
    ups = [np.ones_like(gates[0])]
    labels = ["silu-sweep"] * gates[0].shape[0]
    mids = e4m3_midpoints()
    for _ in range(4):
        gates.append(np.full((1, d), 32.0, np.float32))
        ups.append(_bf(rng.choice(mids[mids <= 64], size=(1, d)) * scale / 32).astype(np.float32))
        labels.append("e4m3-tie")
    for special in (np.nan, np.inf, -np.inf):
        g, u = rng.standard_normal((1, d)), rng.standard_normal((1, d))
        g[0, rng.integers(d)] = special
        u[0, rng.integers(d)] = special
        gates.append(g.astype(np.float32))
        ups.append(u.astype(np.float32))
        labels.append("nonfinite")
    gates.append(_realistic(rng, 8, d))
    ups.append(_realistic(rng, 8, d))
    labels += ["realistic"] * 8
    return np.concatenate([np.concatenate(gates), np.concatenate(ups)], axis=1), labels


def chain_population(
    chain: str, *, seed: int = CHAIN_SEED, scales: tuple[float, ...] = CHAIN_SCALES
) -> list[ChainCase]:
    """GF's cases for ``chain``: one or two per scale (rmsnorm: with and without residual).

    Raises:
        ValueError: for an unknown chain.
    """
    rng = np.random.default_rng(seed)
    cases: list[ChainCase] = []
    if chain in ("rmsnorm", "rmsnorm-gated"):
        x, r, labels = _rms_rows(rng, HIDDEN)
        gate = _bf(_realistic(rng, x.shape[0], HIDDEN))
        for s in scales:
            base = {"x": _bf(x), "weight": _tie_weights(rng, HIDDEN, s), "scale": s}
            base["eps"] = CHAIN_EPS
            if chain == "rmsnorm-gated":
                cases.append(ChainCase(f"s={s!r}", {**base, "gate": gate}, tuple(labels)))
                continue
            cases.append(
                ChainCase(f"s={s!r}/residual", {**base, "residual": _bf(r)}, tuple(labels))
            )
            cases.append(ChainCase(f"s={s!r}/none", {**base, "residual": None}, tuple(labels)))
        order = _bf(_order_rows(rng, 8, ORDER_HIDDEN))
        gate_o = _bf(_realistic(rng, 8, ORDER_HIDDEN))
        w_o = _bf(rng.normal(1.0, 0.1, ORDER_HIDDEN))
        tags = ("reduction-order",) * 8
        for s in scales:  # normalised values are about 0.01: scale by s / 64
            base = {"x": order, "weight": w_o, "scale": s / 64, "eps": CHAIN_EPS}
            extra = {"gate": gate_o} if chain == "rmsnorm-gated" else {"residual": None}
            cases.append(ChainCase(f"s={s / 64!r}/order", {**base, **extra}, tags))
        return cases
    if chain == "silu-mul":
        for s in scales:
            xgu, labels = _silu_rows(rng, s)
            cases.append(ChainCase(f"s={s!r}", {"x_gate_up": _bf(xgu), "scale": s}, tuple(labels)))
        if scales:
            cases += _fast_exp_cases(rng)
        return cases
    raise ValueError(f"unknown chain {chain!r}")


def _fast_exp_cases(rng: np.random.Generator) -> list[ChainCase]:
    """One case per designed scale (float32- and bf16-product splits): the pairs, then realistic."""
    cases = []
    d = HIDDEN
    for scale_hex, pairs in FAST_EXP_SPLITS + FAST_EXP_BF16_SPLITS:
        s = float.fromhex(scale_hex)
        rows = np.concatenate([_realistic(rng, 4, d), _realistic(rng, 4, d)], axis=1)
        bits = np.array(pairs, np.uint16)
        rows[0, : len(pairs)] = bits[:, 0].view(BF16).astype(np.float32)
        rows[0, d : d + len(pairs)] = bits[:, 1].view(BF16).astype(np.float32)
        labels = ("fast-exp-split", "realistic", "realistic", "realistic")
        cases.append(ChainCase(f"s={s!r}/fast-exp", {"x_gate_up": _bf(rows), "scale": s}, labels))
    return cases


def _order_rows(rng: np.random.Generator, rows: int, h: int) -> npt.NDArray[np.float32]:
    big = 2.0**8
    x = rng.uniform(0.5, 1.0, size=(rows, h)) * big * 2.0**-13
    x *= rng.choice([-1, 1], size=(rows, h))
    x[:, 0] = big
    return x.astype(np.float32)
