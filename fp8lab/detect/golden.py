"""Golden vectors: a designed detector as versioned JSON (hex floats) and .npz.

Schema ``fp8lab.golden/1``: format, reference and mutant names, margin, and one
entry per scale with the scale (float and ``float.hex``), the inputs as
``float.hex`` and as ``0x%08x`` patterns, and the reference kernel's bytes.
The .npz holds ``inputs`` (float32, N), ``scales`` (float32, S) and
``expected`` (uint8, S x N).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fp8lab.detect.design import Detector
from fp8lab.detect.pair import quantize_codes
from fp8lab.gates.compare import compare_codes
from fp8lab.kernels import QuantKernel
from fp8lab.runtime.atomic import write_atomic
from fp8lab.specs.formats import get_format

__all__ = ["SCHEMA", "GoldenVectors", "check_golden", "golden_json", "load_golden", "write_golden"]

SCHEMA = "fp8lab.golden/1"


def golden_json(detector: Detector) -> dict[str, Any]:
    """The JSON form of ``detector``."""
    bits = detector.inputs.view(np.uint32)
    return {
        "schema": SCHEMA,
        "format": detector.format,
        "reference": detector.reference,
        "mutant": detector.mutant,
        "margin": detector.margin,
        "entries": [
            {
                "scale": float(s),
                "scale_hex": float(s).hex(),
                "inputs_hex": [float(v).hex() for v in detector.inputs],
                "inputs_bits": [f"0x{int(v):08x}" for v in bits],
                "expected": [int(c) for c in codes],
                "mutant_failures": int(f),
            }
            for s, codes, f in zip(
                detector.scales, detector.expected, detector.failing, strict=True
            )
        ],
    }


def write_golden(detector: Detector, stem: Path) -> tuple[Path, Path]:
    """Write ``stem.json`` and ``stem.npz``; never overwrite.

    Raises:
        FileExistsError: if either file exists.
    """
    buf = io.BytesIO()
    np.savez(buf, inputs=detector.inputs, scales=detector.scales, expected=detector.expected)
    text = json.dumps(golden_json(detector), indent=2, sort_keys=True) + "\n"
    json_path, npz_path = stem.with_suffix(".json"), stem.with_suffix(".npz")
    for p in (json_path, npz_path):
        if p.exists():
            raise FileExistsError(f"{p} exists; golden vectors are never overwritten")
    return write_atomic(json_path, text.encode()), write_atomic(npz_path, buf.getvalue())


@dataclass(frozen=True, eq=False)
class GoldenVectors:
    """Loaded golden vectors."""

    inputs: npt.NDArray[np.float32]
    scales: npt.NDArray[np.float32]
    expected: npt.NDArray[np.uint8]


def load_golden(npz_path: Path) -> GoldenVectors:
    """Load the .npz form.

    Raises:
        ValueError: for missing arrays, wrong dtypes or shapes, or no vectors.
    """
    with np.load(npz_path) as data:
        inputs, scales, expected = data["inputs"], data["scales"], data["expected"]
    if inputs.dtype != np.float32 or scales.dtype != np.float32 or expected.dtype != np.uint8:
        raise ValueError(f"{npz_path}: wrong dtypes")
    if expected.shape != (scales.size, inputs.size) or expected.size == 0:
        raise ValueError(f"{npz_path}: expected has shape {expected.shape}, or nothing to check")
    return GoldenVectors(inputs, scales, expected)


def check_golden(kernel: QuantKernel, golden: GoldenVectors, fmt: str = "e4m3fn") -> list[int]:
    """Bytewise G1-style check: mismatching words per scale (NaN codes kept apart).

    Raises:
        ValueError: for golden vectors with nothing to check.
        KernelFaultError: if the kernel misbehaves (:func:`fp8lab.detect.pair.quantize_codes`).
    """
    if golden.expected.size == 0:
        raise ValueError("golden vectors hold nothing to check")
    spec = get_format(fmt)
    return [
        compare_codes(quantize_codes(kernel, golden.inputs, s), want, spec).mismatches
        for s, want in zip(golden.scales, golden.expected, strict=True)
    ]
