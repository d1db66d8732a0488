"""Gates as records: G1 (static quant), G2, G2h (CPU vs CUDA), G3 (GEMM), GF (chains), GQ (schemes).

G2 runs fp8lab's CUDA source on a device, G2h the same source built for the host.
G1, G2 and G2h take a quant kernel; the gates in ``MATMUL_GATES`` take a matmul
kernel; those in ``CHAIN_GATES`` a fused-chain kernel and the options ``chain``
and ``recipe``. G2 and G2h compare a CPU kernel with fp8lab's CUDA upstream
quant, so their built-in CPU kernel is the ``upstream`` port (``CUDA_GATE_CPU_KERNEL``).
The gates in ``SCHEME_GATES`` (GQ) take ``FUNC(x) -> (codes, scales)`` and the
options ``scheme`` and ``rule``.
"""

from collections.abc import Callable

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

GATES: dict[str, Callable[..., GateResult]] = {
    "G1": run_g1,
    "G2": run_g2,
    "G2h": run_g2h,
    "G3": run_g3,
    "GF": run_gf,
    "GQ": run_gq,
}
MATMUL_GATES = frozenset({"G3"})
CHAIN_GATES = frozenset({"GF"})
SCHEME_GATES = frozenset({"GQ"})
CUDA_GATES = frozenset({"G2", "G2h"})
CUDA_GATE_CPU_KERNEL = "upstream"

__all__ = [
    "CHAIN_GATES",
    "CUDA_GATES",
    "CUDA_GATE_CPU_KERNEL",
    "EXIT_CODES",
    "G1_INPUT_DTYPES",
    "G1_SCALES",
    "GF_CHAINS",
    "GQ_INPUT_DTYPES",
    "GQ_RULES",
    "GQ_SCHEMES",
    "GATES",
    "MATMUL_GATES",
    "SCHEME_GATES",
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
