"""Gates as records: G1 (static quant), G2, G2h (CPU vs CUDA), G3 (GEMM), GF (chains), GQ (schemes).

G2 runs fp8lab's CUDA source on a device, G2h the same source built for the host.
What each gate's kernel computes, how it is called, its options and where its
bundle and mutation parts live are its record in :mod:`fp8lab.specs.gates`; the
functions here run them.

The records load with the package; each gate's names load on first use (PEP
562), so a process that only reads records (a sweep, a proof, a test suite's
``fp8lab.testing``) does not pay for the gates' populations, references and
their imports (numba, ml_dtypes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8lab.gates.records import (
    EXIT_CODES,
    CaseResult,
    GateResult,
    GateStatus,
    Offender,
    exit_code,
)
from fp8lab.runtime.lazy_names import lazy_names

if TYPE_CHECKING:
    from fp8lab.gates.g1 import G1_INPUT_DTYPES, G1_SCALES, run_g1
    from fp8lab.gates.g2 import run_g2
    from fp8lab.gates.g2h import run_g2h
    from fp8lab.gates.g3 import G3CaseStats, G3Report, run_g3, run_g3_report
    from fp8lab.gates.gf import GF_CHAINS, run_gf
    from fp8lab.gates.gq import GQ_INPUT_DTYPES, GQ_RULES, GQ_SCHEMES, run_gq

_HOMES = {
    "G1_INPUT_DTYPES": "fp8lab.gates.g1",
    "G1_SCALES": "fp8lab.gates.g1",
    "run_g1": "fp8lab.gates.g1",
    "run_g2": "fp8lab.gates.g2",
    "run_g2h": "fp8lab.gates.g2h",
    "G3CaseStats": "fp8lab.gates.g3",
    "G3Report": "fp8lab.gates.g3",
    "run_g3": "fp8lab.gates.g3",
    "run_g3_report": "fp8lab.gates.g3",
    "GF_CHAINS": "fp8lab.gates.gf",
    "run_gf": "fp8lab.gates.gf",
    "GQ_INPUT_DTYPES": "fp8lab.gates.gq",
    "GQ_RULES": "fp8lab.gates.gq",
    "GQ_SCHEMES": "fp8lab.gates.gq",
    "run_gq": "fp8lab.gates.gq",
}

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


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
