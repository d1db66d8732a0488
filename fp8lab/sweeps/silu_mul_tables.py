"""Silu-mul recipes evaluated by table: each gate's silu value, and the mul_up-then-quant tail."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.refs.chain_ref import reference_chain
from fp8lab.refs.scan import ScanPolicy, scan_encode
from fp8lab.specs.chain_catalogue import RECIPES
from fp8lab.specs.chain_recipe import Chain, Step
from fp8lab.specs.formats import FORMATS

__all__ = ["silu_table"]

_ROW = 1 << 16
_E4M3FN = FORMATS["e4m3fn"]
_SATFINITE = ScanPolicy(saturate=True, keep_nan_sign=False)
_F = np.float32
_ALL16 = np.arange(_ROW, dtype=np.uint32).astype(np.uint16)
_U = (_ALL16.astype(np.uint32) << 16).view(np.float32)  # every bf16 u, widened exactly


def _bf16_array(bits: npt.NDArray[np.uint16]) -> Any:
    import ml_dtypes

    return np.asarray(bits, np.uint16).view(ml_dtypes.bfloat16)


def _check_pair(a: str, b: str) -> tuple[Chain, Chain]:
    for name in (a, b):
        if name not in RECIPES:
            raise ValueError(f"unknown recipe {name!r}; choose from {', '.join(RECIPES)}")
    ca, cb = RECIPES[a], RECIPES[b]
    for c in (ca, cb):
        if c.chain != "silu-mul":
            raise ValueError(f"{c.name} is a {c.chain} recipe; enumeration covers silu-mul only")
        if c.ops() != ("silu", "mul_up", "quant"):
            raise ValueError(f"{c.name}: enumeration needs the steps silu, mul_up, quant")
    return ca, cb


def _inverse(scale: float) -> np.float32:
    s = _F(scale)
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"scale must be a finite number > 0 in float32, got {scale!r}")
    with np.errstate(over="ignore"):
        return _F(_F(1) / s)


_SILU_TABLES: dict[tuple[Any, ...], npt.NDArray[np.float32]] = {}


def _silu_key(step: Step) -> tuple[Any, ...]:
    return (step.inputs, step.output, step.rounds, step.variant)


def _silu_by_reference(chain: Chain, g_bits: npt.NDArray[np.uint16]) -> npt.NDArray[np.float32]:
    """The ``silu`` step's output for each gate, by ``reference_chain``."""
    x = np.concatenate([g_bits, np.zeros_like(g_bits)])[None, :]
    out = reference_chain(chain, {"x_gate_up": _bf16_array(x), "scale": 1.0})
    return np.asarray(out["silu"][0], np.float32)


def silu_table(name: str) -> npt.NDArray[np.float32]:
    """Recipe ``name``'s silu value for every bf16 gate pattern (index = pattern).

    Computed once per process per silu step declaration (minutes for the
    correctly rounded exp); a copy is returned.
    """
    chain = _check_pair(name, name)[0]
    step = chain.steps[0]
    key = _silu_key(step)
    if key not in _SILU_TABLES:
        _SILU_TABLES[key] = _silu_by_reference(chain, _ALL16)
    return _SILU_TABLES[key].copy()


def _silu_values(chain: Chain, g_bits: npt.NDArray[np.uint16]) -> npt.NDArray[np.float32]:
    table = _SILU_TABLES.get(_silu_key(chain.steps[0]))
    return table[g_bits] if table is not None else _silu_by_reference(chain, g_bits)


class _Tail:
    """``mul_up`` then ``quant`` of one recipe at one scale, over every u for each s."""

    def __init__(self, chain: Chain, inv: np.float32) -> None:
        mul, quant = chain.steps[1], chain.steps[2]
        if mul.rounds not in (("f32",), ("f32", "bf16")) or quant.rounds != ("f32",):
            raise ValueError(f"{chain.name}: unsupported roundings {mul.rounds}, {quant.rounds}")
        self.bf16 = mul.rounds[-1] == "bf16"
        self.nan_code = quant.nan_code
        self.inv = inv
        if self.bf16:
            self.table_y = self._y(_U)
            self.table_code = self._encode(self.table_y)

    def _y(self, p: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return np.multiply(p, self.inv, dtype=_F)

    def _encode(self, y: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        codes = scan_encode(y, _E4M3FN, _SATFINITE)
        codes[np.isnan(y)] = self.nan_code
        return codes

    def key(self, s: npt.NDArray[np.float32]) -> npt.NDArray[Any]:
        """Rows of ``p`` for every u: bf16 patterns (uint16) or float32 values."""
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            prod = np.multiply(s[:, None], _U[None, :], dtype=_F)
        if not self.bf16:
            return prod
        bits = prod.view(np.uint32)
        # RNE to bf16 by bits; a NaN product is set to a NaN pattern (its low
        # bits could otherwise carry past the exponent).
        rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(
            np.uint16
        )
        rounded[np.isnan(prod)] = 0x7FC0
        return rounded

    def codes(self, key: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
        """The fp8 byte of each ``p``."""
        if self.bf16:
            return np.asarray(self.table_code[key], np.uint8)
        return self._encode(self._y(key).reshape(-1)).reshape(key.shape)

    def y(self, key: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
        """The pre-quant scaled value of each ``p``."""
        return self.table_y[key] if self.bf16 else self._y(key)


def _tails(ca: Chain, cb: Chain, scale: float) -> tuple[_Tail, _Tail]:
    inv = _inverse(scale)
    return _Tail(ca, inv), _Tail(cb, inv)
