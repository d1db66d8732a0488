"""Divergence counts between two recipes of one chain, by row kind.

Both sides are the exact references (``fp8lab.refs.chain_ref``), so a count is
a property of the two recipes, not of any port. For each row kind of GF's
population (designed kinds, ``realistic``) and for a wide realistic case
(:data:`WIDE_ROWS` rows of :data:`WIDE_HIDDEN` Student-t activations, weights
``N(1, 0.1)``), it reports how many output words there are, how many e4m3fn
bytes differ and how many pre-quant bf16 values (the step before ``quant``)
differ bitwise.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.populations.chains import CHAIN_EPS, CHAIN_SEED, ChainCase, chain_population
from fp8lab.refs.chain_ref import reference_chain
from fp8lab.specs.chain_catalogue import RECIPES

__all__ = ["WIDE_HIDDEN", "WIDE_ROWS", "DivergenceRow", "divergence"]

WIDE_HIDDEN = 4096
WIDE_ROWS = 16
_BF16 = np.dtype(ml_dtypes.bfloat16)


@dataclass(frozen=True)
class DivergenceRow:
    """One row kind: words, differing fp8 bytes, differing pre-quant values."""

    kind: str
    words: int
    bytes_differ: int
    prequant_differ: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _wide_case(chain: str, seed: int) -> ChainCase:
    rng = np.random.default_rng(seed + 1)
    cols = 2 * WIDE_HIDDEN if chain == "silu-mul" else WIDE_HIDDEN
    x = rng.standard_t(3, size=(WIDE_ROWS, cols)) * 0.5
    x[:, rng.choice(cols, size=8, replace=False)] *= 30
    inputs: dict[str, Any] = {"scale": 0.0625, "eps": CHAIN_EPS}
    if chain == "silu-mul":
        inputs["x_gate_up"] = x.astype(np.float32).astype(_BF16)
    else:
        inputs["x"] = x.astype(np.float32).astype(_BF16)
        inputs["weight"] = rng.normal(1.0, 0.1, WIDE_HIDDEN).astype(np.float32).astype(_BF16)
        r = rng.standard_t(3, size=(WIDE_ROWS, WIDE_HIDDEN)) * 0.5
        inputs["residual"] = r.astype(np.float32).astype(_BF16)
        inputs["gate"] = r.astype(np.float32).astype(_BF16)
    return ChainCase("wide", inputs, ("realistic-wide",) * WIDE_ROWS)


def _prequant(chain_name: str, out: dict[str, np.ndarray]) -> np.ndarray:
    ops = RECIPES[chain_name].ops()
    last = [o for o in ops if o != "quant" and o in out][-1]
    return np.asarray(out[last], np.float32)


def divergence(a: str, b: str, *, seed: int = CHAIN_SEED) -> list[DivergenceRow]:
    """How recipes ``a`` and ``b`` differ on GF's population and a wide realistic case.

    Raises:
        ValueError: for an unknown recipe, two recipes of different chains, or a Gemma
            recipe against a plain one (different functions, so no divergence to count).
    """
    for name in (a, b):
        if name not in RECIPES:
            raise ValueError(f"unknown recipe {name!r}; choose from {', '.join(RECIPES)}")
    chain = RECIPES[a].chain
    if RECIPES[b].chain != chain:
        raise ValueError(f"{a} is a {chain} recipe, {b} a {RECIPES[b].chain} one")
    if RECIPES[a].gemma() != RECIPES[b].gemma():
        raise ValueError(f"{a} and {b} compute different functions: one weights by w + 1 (Gemma)")
    counts: dict[str, list[int]] = {}
    for case in [*chain_population(chain, seed=seed), _wide_case(chain, seed)]:
        out_a = reference_chain(RECIPES[a], case.inputs)
        out_b = reference_chain(RECIPES[b], case.inputs)
        q = out_a["quant"] != out_b["quant"]
        pa, pb = _prequant(a, out_a), _prequant(b, out_b)
        same = (pa.view(np.uint32) == pb.view(np.uint32)) | (np.isnan(pa) & np.isnan(pb))
        for row, kind in enumerate(case.labels):
            c = counts.setdefault(kind, [0, 0, 0])
            c[0] += q.shape[-1]
            c[1] += int(q[row].sum())
            c[2] += int((~same[row]).sum())
    return [DivergenceRow(k, *v) for k, v in counts.items()]
