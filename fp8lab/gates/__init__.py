"""Gates as records: G1 (static quant), G2 (CPU vs CUDA, pending), G3 (GEMM), GF (fused chains).

G1 and G2 take a quant kernel; the gates in ``MATMUL_GATES`` take a matmul kernel;
those in ``CHAIN_GATES`` a fused-chain kernel and the options ``chain`` and ``recipe``.
"""

from collections.abc import Callable

from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
from fp8lab.gates.g2 import run_g2
from fp8lab.gates.g3 import G3CaseStats, G3Report, run_g3, run_g3_report
from fp8lab.gates.gf import GF_CHAINS, run_gf
from fp8lab.gates.records import (
    EXIT_CODES,
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    exit_code,
)

GATES: dict[str, Callable[..., GateResult]] = {
    "G1": run_g1,
    "G2": run_g2,
    "G3": run_g3,
    "GF": run_gf,
}
MATMUL_GATES = frozenset({"G3"})
CHAIN_GATES = frozenset({"GF"})

__all__ = [
    "CHAIN_GATES",
    "EXIT_CODES",
    "G1_INPUT_DTYPES",
    "G1_SCALES",
    "GF_CHAINS",
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
    "run_gf",
]
