"""The cases of a bundle: exactly the kernel calls G1, G3 and GQ make, with their inputs.

A bundle (schema ``fp8lab.bundle/1``, docs/bundles.md) lists one case
per kernel call of the gate, in the gate's order. G1: every scale x input
dtype, each call with one float32 scale as G1 makes it by default. G3: the default
cases (not ``--large``), A quantized by the built-in ``quant_static`` as G3
does, then the five NaN placements of the nan-propagation case.

``population_sha256`` is the sha256 over, for each case in order, its
canonical JSON (keys sorted, no spaces) and a newline, then the raw bytes of
its inputs (G1 ``input``; G3 ``a`` then ``b``). GQ's cases are
:mod:`fp8lab.bundle.gq`'s; its hash starts with the line ``scheme rule``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES
from fp8lab.gates.g3 import g3_cases
from fp8lab.gates.g3_nan import NAN_PLACEMENTS, NAN_SCALES, placement_operands
from fp8lab.kernels import quant_static
from fp8lab.populations import G1_SEED, g1_population
from fp8lab.populations.gemm import g3_operands

__all__ = [
    "DTYPE_EXT",
    "OUT_DTYPES",
    "SCHEMA",
    "BundleCase",
    "g1_bundle_cases",
    "g1_sidecar_line",
    "g3_bundle_cases",
    "g3_sidecar_line",
    "f32_hex",
    "population_sha256",
    "sha256",
]

SCHEMA = "fp8lab.bundle/1"
_INPUT = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
OUT_DTYPES = {"f32": "float32", "bf16": "bfloat16"}  # G3's names -> the bundle's
DTYPE_EXT = {"float32": "f32", "bfloat16": "bf16"}  # an input or output file's extension


@dataclass(frozen=True)
class BundleCase:
    """One case: its ``bundle.json`` entry, its input arrays by field, its output size."""

    entry: dict[str, Any]
    inputs: dict[str, np.ndarray]
    output_bytes: int

    @property
    def name(self) -> str:
        """The gate's case name."""
        return str(self.entry["name"])


def sha256(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def f32_hex(value: Any) -> str:
    """The float32 bits of ``value`` as ``0x%08x``."""
    return f"0x{int(np.float32(value).view(np.uint32)):08x}"


def _g1_case(i: int, scale: float, dtype: str, name: str) -> BundleCase:
    np_dtype, ext = _INPUT[dtype], DTYPE_EXT[dtype]
    x = g1_population(scale, seed=G1_SEED, special=True).words.astype(np_dtype)
    s = np.float32(scale)
    entry = {
        "name": name,
        "scale": float(s),
        "scale_hex": f32_hex(s),
        "input_dtype": dtype,
        "count": int(x.size),
        "input": f"inputs/{i:02d}.{ext}",
        "input_sha256": sha256(x.tobytes()),
        "output": f"outputs/{i:02d}.u8",
    }
    return BundleCase(entry, {"input": x}, int(x.size))


def g1_bundle_cases() -> list[BundleCase]:
    """G1's cases, in the gate's order."""
    calls = [(s, d, f"s={s!r}/{d}") for s in G1_SCALES for d in G1_INPUT_DTYPES]
    return [_g1_case(i, s, d, name) for i, (s, d, name) in enumerate(calls)]


def g1_sidecar_line(entry: dict[str, Any]) -> str:
    """A G1 case's ``bundle.txt`` line: ``scale_hex input_dtype count input output name``."""
    fields = [entry[f] for f in ("scale_hex", "input_dtype", "count", "input", "output")]
    return " ".join(str(f) for f in [*fields, entry["name"]])


def _g3_case(
    i: int, name: str, a: np.ndarray, b: np.ndarray, s: tuple[float, float], out: str
) -> BundleCase:
    dtype = OUT_DTYPES[out]
    (m, k), n = a.shape, b.shape[0]
    entry = {
        "name": name,
        "m": m,
        "n": n,
        "k": k,
        "a": f"inputs/{i:02d}.a.e4m3",
        "b": f"inputs/{i:02d}.b.e4m3",
        "s_in": float(np.float32(s[0])),
        "s_w": float(np.float32(s[1])),
        "out_dtype": dtype,
        "output": f"outputs/{i:02d}.{DTYPE_EXT[dtype]}",
    }
    size = m * n * (4 if dtype == "float32" else 2)
    return BundleCase(entry, {"a": a, "b": b}, size)


def g3_bundle_cases() -> list[BundleCase]:
    """G3's cases, in the gate's order."""
    cases: list[BundleCase] = []
    for c in g3_cases():
        a, b = g3_operands(c, quant_static)
        cases.append(_g3_case(len(cases), c.name, a, b, (c.s_in, c.s_w), c.out))
    for operand, row, code, out in NAN_PLACEMENTS:
        a, b, _ = placement_operands(operand, row, code)
        name = f"nan-propagation/{operand}{row}={code:#04x}/{out}"
        cases.append(_g3_case(len(cases), name, a, b, NAN_SCALES, out))
    return cases


def g3_sidecar_line(entry: dict[str, Any]) -> str:
    """A G3 case's ``bundle.txt`` line: ``m n k a b s_in_hex s_w_hex out_dtype output name``."""
    fields = [entry[f] for f in ("m", "n", "k", "a", "b")]
    fields += [f32_hex(entry["s_in"]), f32_hex(entry["s_w"]), entry["out_dtype"], entry["output"]]
    return " ".join(str(f) for f in [*fields, entry["name"]])


def population_sha256(cases: list[BundleCase], head: str = "") -> str:
    """sha256 over ``head``, then each case's canonical JSON line and its input bytes.

    ``head`` is empty for G1 and G3, the line ``scheme rule`` for GQ.
    """
    digest = hashlib.sha256(head.encode())
    for case in cases:
        digest.update(json.dumps(case.entry, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
        for field in ("input", "a", "b"):
            if field in case.inputs:
                digest.update(np.ascontiguousarray(case.inputs[field]).tobytes())
    return digest.hexdigest()
