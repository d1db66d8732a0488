"""A toy gate, GZ, written as a new gate is: this one module, then one registry entry.

GZ hands a quant kernel every finite e4m3fn value at scale 1 and wants each
value's own code back (a round trip), bitwise. Its bundle holds that one call.
``tests/specs/test_gate_registry.py`` registers it and runs it from the command
line, from a bundle and through ``fp8lab.testing.assert_gate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fp8lab.bundle.cases import BundleCase, sha256
from fp8lab.bundle.files import input_fault, read_output
from fp8lab.bundle.format import BundleFormat
from fp8lab.codecs import decode
from fp8lab.gates.records import CaseResult, GateResult, GateStatus, screen
from fp8lab.kernels import BUILTIN_KERNELS
from fp8lab.runtime.guard import KernelFaultError, call_kernel
from fp8lab.specs.gates import Gate

CODES = np.array([c for c in range(256) if c not in (0x7F, 0xFF)], np.uint8)  # no NaN codes
GATE = Gate(
    "GZ",
    "quant",
    "quantize(x, scale) -> uint8 codes, handed each finite e4m3fn value at scale 1",
    f"{__name__}:run_gz",
    f"{__name__}:BUILTINS",
    bundle=f"{__name__}:BUNDLE",
    adds="nothing",
)
BUILTINS = {"vllm_cpp": BUILTIN_KERNELS["vllm_cpp"]}


def _inputs() -> np.ndarray:
    return decode(CODES, "e4m3fn", np.float32)


def run_gz(kernel: Any) -> GateResult:
    """GZ on ``kernel``: every finite e4m3fn value must come back as its own code."""
    x = _inputs()
    try:
        got, error = call_kernel(lambda k, v: k.quantize(v, np.float32(1.0)), kernel, x), ""
    except KernelFaultError as exc:
        got, error = None, exc.reason
    wrong = len(CODES) if got is None else int(np.count_nonzero(np.asarray(got) != CODES))
    case = CaseResult("roundtrip", len(CODES), 1, int(wrong > 0), wrong, 0, 1.0, error)
    early = screen([case], vacuous=[], what="")
    status, reason = early or (
        (GateStatus.FAIL, f"{wrong} codes do not come back") if wrong else (GateStatus.PASS, "")
    )
    return GateResult.from_cases("GZ", kernel.name, status, reason, [case])


def _cases() -> list[BundleCase]:
    x = _inputs()
    entry = {
        "name": "roundtrip",
        "count": len(CODES),
        "input": "inputs/00.f32",
        "input_sha256": sha256(x.tobytes()),
        "output": "outputs/00.u8",
    }
    return [BundleCase(entry, {"input": x}, len(CODES))]


class _Replayed:
    """The codes the bundle's runner wrote, served to GZ's one call."""

    def __init__(self, name: str, root: Path, case: BundleCase) -> None:
        self.name, self._root, self._case = name, root, case

    def quantize(self, x: np.ndarray, scale: Any) -> np.ndarray:
        fault = input_fault(self._root, self._case)
        if fault:
            raise ValueError(fault)
        data = read_output(self._root, self._case, "output", self._case.output_bytes)
        return np.frombuffer(data, np.uint8).copy()


def _replay(
    name: str, root: Path, cases: list[BundleCase], named: Mapping[str, str], nan_policy: str
) -> tuple[Any, dict[str, Any]]:
    return _Replayed(name, root, cases[0]), {}


BUNDLE = BundleFormat(
    _cases, lambda e: f"{e['count']} {e['input']} {e['output']} {e['name']}", _replay
)
