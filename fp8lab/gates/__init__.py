"""Gates: G1 (bitwise static quant), G2 (CPU vs CUDA, pending), as records."""

from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
from fp8lab.gates.g2 import run_g2
from fp8lab.gates.records import (
    EXIT_CODES,
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    exit_code,
)

GATES = {"G1": run_g1, "G2": run_g2}

__all__ = [
    "EXIT_CODES",
    "G1_INPUT_DTYPES",
    "G1_SCALES",
    "GATES",
    "CaseResult",
    "GateResult",
    "GateStatus",
    "Offender",
    "exit_code",
    "run_g1",
    "run_g2",
]
