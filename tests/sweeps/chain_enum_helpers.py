"""Shared by the enumeration tests: brute reference rows and planted silu tables."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fp8lab.refs.chain_ref import reference_chain
from fp8lab.specs.chain_catalogue import RECIPES
from fp8lab.sweeps import chain_enumeration as en
from fp8lab.sweeps import silu_mul_tables

CPP = "vllm-cpp-standalone-silu-mul-fp8"
CUDA = "vllm-cuda-silu-and-mul-quant-fp8"
EXPF = "expf-silu-mul-fp8"
FAST = "fast-exp-silu-mul-fp8"
SEED = 20261203
SPECIAL_G = (
    0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F,  # zeros, subnormals
    0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81,  # infinities, NaNs
    0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x4300,  # max, min, +-1, 128 (silu exact in bf16)
    0x3FDB, 0xC11D, 0xC170, 0xC1B0, 0xC216, 0xC1B9,  # gates whose silu the fast exp moves
)  # fmt: skip


def _gates() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    return np.array([*SPECIAL_G, *rng.integers(0, 1 << 16, 6)], np.uint16)


GATES = _gates()
BRUTE_CACHE: dict[tuple[str, float], tuple[np.ndarray, np.ndarray]] = {}


def brute(recipe: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Every u for every gate of GATES through reference_chain: codes and pre-quant y."""
    if (recipe, scale) not in BRUTE_CACHE:
        up = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        x = np.concatenate(
            [np.repeat(GATES[:, None], 1 << 16, axis=1), np.tile(up, (len(GATES), 1))], 1
        )
        inputs: dict[str, Any] = {"x_gate_up": x.view(ml_dtypes.bfloat16), "scale": scale}
        out = reference_chain(RECIPES[recipe], inputs)
        with np.errstate(over="ignore", invalid="ignore"):
            inv = np.float32(1) / np.float32(scale)
            y = np.multiply(out["mul_up"], inv, dtype=np.float32)
        BRUTE_CACHE[recipe, scale] = out["quant"], y
    return BRUTE_CACHE[recipe, scale]


def brute_classes(ya: np.ndarray, yb: np.ndarray) -> np.ndarray:
    """CLASSES index of each pair, from the reference's two pre-quant values."""
    na, nb = np.isnan(ya), np.isnan(yb)
    with np.errstate(invalid="ignore"):
        beyond = (np.abs(ya) > 448) | (np.abs(yb) > 448)
    out = np.zeros(ya.shape, np.uint8)
    out[beyond] = en.CLASSES.index("saturated")
    out[na ^ nb] = en.CLASSES.index("nan")
    out[na & nb] = en.CLASSES.index("nan-code")
    return out


def mismatches(a: str, b: str, scale: float) -> int:
    """(g, u) of GATES where the enumeration's rows disagree with brute evaluation."""
    diff, codes_a, codes_b, classes = en.silu_mul_row_differences(a, b, scale, GATES)
    (ref_a, ya), (ref_b, yb) = brute(a, scale), brute(b, scale)
    wrong = diff != (ref_a != ref_b)
    wrong |= (codes_a != ref_a) | (codes_b != ref_b)
    wrong |= diff & (classes != brute_classes(ya, yb))
    return int(wrong.sum())


def plant_tables(monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    """Silu tables planted for EXPF and FAST: equal except on five gates (10% apart)."""
    rng = np.random.default_rng(SEED)
    base = (rng.standard_normal(1 << 16) * 4).astype(np.float32)
    moved = base.copy()
    rows = np.array([3, 700, 0x3FDB, 0x9000, 0xFFF0])
    moved[rows] *= np.float32(1.1)
    tables = {EXPF: base, FAST: moved}
    for name, table in tables.items():
        key = silu_mul_tables._silu_key(RECIPES[name].steps[0])
        monkeypatch.setitem(silu_mul_tables._SILU_TABLES, key, table)
    return tables
