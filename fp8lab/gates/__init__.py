"""Gates as records: G1 (bitwise static quant), G2 (CPU vs CUDA, pending), G3 (GEMM).

G1 and G2 take a quant kernel; the gates in ``MATMUL_GATES`` take a matmul kernel.
GQ (``run_gq``, Python API only for now) takes ``FUNC(x) -> (codes, scales)``.
"""

from collections.abc import Callable

from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
from fp8lab.gates.g2 import run_g2
from fp8lab.gates.g3 import G3CaseStats, G3Report, run_g3, run_g3_report
from fp8lab.gates.gq import GQ_INPUT_DTYPES, GQ_SCHEMES, run_gq
from fp8lab.gates.records import (
    EXIT_CODES,
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    exit_code,
)

GATES: dict[str, Callable[..., GateResult]] = {"G1": run_g1, "G2": run_g2, "G3": run_g3}
MATMUL_GATES = frozenset({"G3"})

__all__ = [
    "EXIT_CODES",
    "G1_INPUT_DTYPES",
    "G1_SCALES",
    "GQ_INPUT_DTYPES",
    "GQ_SCHEMES",
    "GATES",
    "MATMUL_GATES",
    "G3CaseStats",
    "G3Report",
    "CaseResult",
    "GateResult",
    "GateStatus",
    "Offender",
    "exit_code",
    "run_g1",
    "run_g2",
    "run_g3",
    "run_g3_report",
    "run_gq",
]
