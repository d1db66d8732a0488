"""Gates as records: G1 (static quant), G2, G2h (CPU vs CUDA), G3 (GEMM), GF (chains), GQ (schemes).

G2 runs fp8lab's CUDA source on a device, G2h the same source built for the host.
What each gate's kernel computes, how it is called, its options and where its
bundle and mutation parts live are its record in :mod:`fp8lab.specs.gates`; the
functions here run them.
"""

from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
from fp8lab.gates.g2 import run_g2
from fp8lab.gates.g2h import run_g2h
from fp8lab.gates.g3 import G3CaseStats, G3Report, run_g3, run_g3_report
from fp8lab.gates.gf import GF_CHAINS, run_gf
from fp8lab.gates.gq import GQ_INPUT_DTYPES, GQ_RULES, GQ_SCHEMES, run_gq
from fp8lab.gates.records import (
    EXIT_CODES,
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    exit_code,
)

__all__ = [
    "EXIT_CODES",
    "G1_INPUT_DTYPES",
    "G1_SCALES",
    "GF_CHAINS",
    "GQ_INPUT_DTYPES",
    "GQ_RULES",
    "GQ_SCHEMES",
    "G3CaseStats",
    "G3Report",
    "CaseResult",
    "GateResult",
    "GateStatus",
    "Offender",
    "exit_code",
    "run_g1",
    "run_g2",
    "run_g2h",
    "run_g3",
    "run_g3_report",
    "run_gf",
    "run_gq",
]
